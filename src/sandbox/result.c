/*
 * Names of reasons and layers, and the result as JSON (jansson). Output
 * that is valid UTF-8 is kept as a string; anything else is base64 so the
 * bytes survive exactly, with "stdout_encoding" saying which.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox_int.h"

static const char *const reason_names[] = {
	[TG_REASON_OK] = "ok",
	[TG_REASON_TIMEOUT] = "timeout",
	[TG_REASON_MEMORY_LIMIT] = "memory_limit",
	[TG_REASON_PIDS_LIMIT] = "pids_limit",
	[TG_REASON_SECCOMP_VIOLATION] = "seccomp_violation",
	[TG_REASON_OUTPUT_TRUNCATED] = "output_truncated",
	[TG_REASON_SETUP_FAILED] = "setup_failed",
	[TG_REASON_CANCELLED] = "cancelled",
};

static const char *const layer_names[TG_LAYER_COUNT] = {
	"user_namespace", "mount_namespace", "pid_namespace", "network_namespace",
	"ipc_namespace", "uts_namespace", "cgroup_namespace", "rootfs",
	"no_new_privs", "capabilities_dropped", "seccomp", "landlock_fs",
	"landlock_net", "landlock_scope", "cgroup_limits", "rlimits",
	"nested_userns_limit", "new_session", "clean_environment",
	"inherited_fds_closed", "wall_clock_kill", "egress_proxy",
};

const char *tg_sandbox_reason_name(enum tg_sandbox_reason reason)
{
	if ((unsigned)reason >= sizeof(reason_names) / sizeof(reason_names[0]))
		return "unknown";
	return reason_names[reason];
}

const char *tg_sandbox_layer_name(unsigned layer)
{
	unsigned i;

	for (i = 0; i < TG_LAYER_COUNT; i++)
		if (layer == 1u << i)
			return layer_names[i];
	return NULL;
}

static char *base64(const char *in, size_t len)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	if (!in)
		len = 0;
	for (i = 0; i + 2 < len; i += 3) {
		unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 |
			     (unsigned char)in[i + 2];
		*o++ = tbl[v >> 18];
		*o++ = tbl[(v >> 12) & 63];
		*o++ = tbl[(v >> 6) & 63];
		*o++ = tbl[v & 63];
	}
	if (i < len) {
		unsigned v = (unsigned char)in[i] << 16;

		if (i + 1 < len)
			v |= (unsigned char)in[i + 1] << 8;
		*o++ = tbl[v >> 18];
		*o++ = tbl[(v >> 12) & 63];
		*o++ = i + 1 < len ? tbl[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int put_output(json_t *o, const char *key, const struct tg_sandbox_output *out)
{
	char k[64];
	json_t *s;

	s = json_stringn(out->data ? out->data : "", out->len);
	snprintf(k, sizeof(k), "%s_encoding", key);
	if (s) {
		json_object_set_new(o, k, json_string("utf-8"));
	} else {
		char *b = base64(out->data, out->len);

		if (!b)
			return -1;
		s = json_string(b);
		free(b);
		json_object_set_new(o, k, json_string("base64"));
	}
	if (!s)
		return -1;
	json_object_set_new(o, key, s);
	snprintf(k, sizeof(k), "%s_bytes", key);
	json_object_set_new(o, k, json_integer((json_int_t)out->len));
	snprintf(k, sizeof(k), "%s_truncated", key);
	json_object_set_new(o, k, json_boolean(out->truncated));
	return 0;
}

char *tg_sandbox_result_json(const struct tg_sandbox_result *r, struct tg_error *err)
{
	static const char *const limit_names[] = { "timeout", "memory", "pids", "output" };
	json_t *o = json_object(), *layers = json_array(), *limits = json_array();
	char *text = NULL;
	unsigned i;

	if (!o || !layers || !limits)
		goto fail;
	json_object_set_new(o, "reason", json_string(tg_sandbox_reason_name(r->reason)));
	json_object_set_new(o, "exit_code", r->exited ? json_integer(r->exit_code) : json_null());
	json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
	json_object_set_new(o, "message", json_string(r->message));
	json_object_set_new(o, "seccomp_syscall", r->seccomp_syscall >= 0
			    ? json_string(r->seccomp_syscall_name) : json_null());
	json_object_set_new(o, "exec_errno", r->exec_errno ? json_integer(r->exec_errno)
							   : json_null());
	for (i = 0; i < 4; i++)
		if (r->limits_hit & (1u << i))
			json_array_append_new(limits, json_string(limit_names[i]));
	json_object_set_new(o, "limits_hit", limits);
	limits = NULL;
	for (i = 0; i < TG_LAYER_COUNT; i++)
		if (r->layers & (1u << i))
			json_array_append_new(layers, json_string(layer_names[i]));
	json_object_set_new(o, "layers", layers);
	layers = NULL;
	json_object_set_new(o, "wall_ms", json_real((double)r->wall_us / 1000.0));
	json_object_set_new(o, "cpu_user_ms", json_real((double)r->cpu_user_us / 1000.0));
	json_object_set_new(o, "cpu_system_ms", json_real((double)r->cpu_system_us / 1000.0));
	json_object_set_new(o, "peak_memory", json_integer((json_int_t)r->peak_memory));
	if (put_output(o, "stdout", &r->out) < 0 || put_output(o, "stderr", &r->err) < 0)
		goto fail;
	text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
	if (!text)
		goto fail;
	json_decref(o);
	return text;
fail:
	json_decref(o);
	json_decref(layers);
	json_decref(limits);
	tg_error_set(err, TG_ERR_NOMEM, "out of memory building the result");
	return NULL;
}
