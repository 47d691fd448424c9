/* Unit tests: src/sandbox/result.c, names and JSON. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/sandbox.h"
#include "unit.h"

static int names(void)
{
	CHECK(strcmp(tg_sandbox_reason_name(TG_REASON_SECCOMP_VIOLATION), "seccomp_violation") == 0);
	CHECK(strcmp(tg_sandbox_reason_name((enum tg_sandbox_reason)99), "unknown") == 0);
	CHECK(strcmp(tg_sandbox_layer_name(TG_LAYER_LANDLOCK_NET), "landlock_net") == 0);
	CHECK(tg_sandbox_layer_name(3) == NULL);
	CHECK(tg_tier_parse("strict") == TG_TIER_STRICT && tg_tier_parse("x") == -1);
	return 0;
}

static int json_shape(void)
{
	struct tg_sandbox_result r;
	struct tg_error err;
	char bin[] = { 'a', (char)0xff, 0, 'b' };
	json_t *o;
	char *text;

	memset(&r, 0, sizeof(r));
	r.reason = TG_REASON_TIMEOUT;
	r.signal = 9;
	r.seccomp_syscall = -1;
	r.layers = TG_LAYER_SECCOMP | TG_LAYER_PIDNS;
	r.limits_hit = TG_LIMIT_TIMEOUT;
	r.out.data = "h\xc3\xa9llo\n";
	r.out.len = strlen(r.out.data);
	r.err.data = bin;
	r.err.len = sizeof(bin);
	r.err.truncated = 1;
	text = tg_sandbox_result_json(&r, &err);
	CHECK(text);
	o = json_loads(text, 0, NULL);
	free(text);
	CHECK(o);
	CHECK(strcmp(json_string_value(json_object_get(o, "reason")), "timeout") == 0);
	CHECK(json_is_null(json_object_get(o, "exit_code")));
	CHECK(json_integer_value(json_object_get(o, "signal")) == 9);
	CHECK(json_is_null(json_object_get(o, "seccomp_syscall")));
	CHECK(json_array_size(json_object_get(o, "layers")) == 2);
	CHECK(strcmp(json_string_value(json_array_get(json_object_get(o, "layers"), 0)),
		     "pid_namespace") == 0);
	CHECK(strcmp(json_string_value(json_array_get(json_object_get(o, "limits_hit"), 0)),
		     "timeout") == 0);
	CHECK(strcmp(json_string_value(json_object_get(o, "stdout")), "h\xc3\xa9llo\n") == 0);
	CHECK(strcmp(json_string_value(json_object_get(o, "stdout_encoding")), "utf-8") == 0);
	/* invalid UTF-8 with a NUL: base64 of exactly those 4 bytes */
	CHECK(strcmp(json_string_value(json_object_get(o, "stderr_encoding")), "base64") == 0);
	CHECK(strcmp(json_string_value(json_object_get(o, "stderr")), "Yf8AYg==") == 0);
	CHECK(json_is_true(json_object_get(o, "stderr_truncated")));
	CHECK(json_integer_value(json_object_get(o, "stderr_bytes")) == 4);
	json_decref(o);
	return 0;
}

const struct unit_test result_tests[] = {
	{ "result/names", names },
	{ "result/json_shape", json_shape },
	UNIT_TESTS_END,
};
