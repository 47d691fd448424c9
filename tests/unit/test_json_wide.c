/* Unit tests: src/util/json_wide.c, numbers past what jansson holds
 * exactly: which literals are long, a message with an integer past 64
 * bits read (its error's place still the text's), and the canonical text
 * that tells apart values whose numbers differ past a double's digits
 * while it stays jansson's own form for every other value, and a text
 * written as jansson writes it but for its numbers. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "util/json_wide.h"

static int has_long(const char *t)
{
	return json_wide_has_long(t, strlen(t));
}

static int which_are_long(void)
{
	CHECK(!has_long("{\"a\":1,\"b\":-9223372036854775808,\"c\":9223372036854775807}"));
	CHECK(has_long("{\"a\":9223372036854775808}"));
	CHECK(has_long("[-9223372036854775809]"));
	CHECK(has_long("[100000000000000000000]"));
	/* 17 significant digits are a double's; leading and trailing zeros
	 * are not significant */
	CHECK(!has_long("[0.12345678901234567, 1.2345678901234567e300, 0.000001500000000000000000]"));
	CHECK(has_long("[0.123456789012345678]"));
	CHECK(has_long("{\"x\":[{\"y\":1.00000000000000000001e-5}]}"));
	/* digits inside strings, escaped quotes included, are not numbers */
	CHECK(!has_long("{\"a\\\"12345678901234567890\":\"123456789012345678901234\"}"));
	CHECK(!has_long(""));
	CHECK(!has_long("\"unterminated 123456789012345678901234"));
	return 0;
}

static int loads_long_integers(void)
{
	static const char t[] = "{\"id\":1,\"n\":123456789012345678901234,\"m\":[-99999999999999999999]}";
	json_error_t e;
	json_t *v = json_wide_load(t, strlen(t), JSON_REJECT_DUPLICATES, &e);

	CHECK(v);
	CHECK(json_is_integer(json_object_get(v, "id")));
	CHECK(json_is_real(json_object_get(v, "n")));
	CHECK(json_real_value(json_object_get(v, "n")) == 123456789012345678901234.0);
	CHECK(json_real_value(json_array_get(json_object_get(v, "m"), 0)) == -99999999999999999999.0);
	json_decref(v);
	return 0;
}

static int errors_keep_their_place(void)
{
	/* the error comes after two widened literals on its line: its
	 * position and column are the text's, not the widened copy's */
	static const char t[] = "[\n123456789012345678901234, 123456789012345678901234, x]";
	static const char dup[] = "{\"a\":123456789012345678901234,\"a\":1}";
	static const char inf[] = "[1e400, 123456789012345678901234]";
	json_error_t e;

	CHECK(!json_wide_load(t, strlen(t), 0, &e));
	CHECK(e.position == (int)(strchr(t, 'x') - t) + 1);
	CHECK(e.line == 2);
	CHECK(e.column == (int)(strchr(t, 'x') - strchr(t, '\n')));
	CHECK(!json_wide_load(dup, strlen(dup), JSON_REJECT_DUPLICATES, &e));
	CHECK(strstr(e.text, "duplicate"));
	/* a real past a double's range stays refused */
	CHECK(!json_wide_load(inf, strlen(inf), 0, &e));
	CHECK(json_error_code(&e) == json_error_numeric_overflow);
	return 0;
}

static char *canon(const char *t)
{
	return json_wide_canonical(t, strlen(t));
}

static int canonical_is_jansson_form(void)
{
	static const char *const texts[] = {
		"{\"b\":[1,2.5,\"x\"],\"a\":{\"d\":null,\"c\":true}}",
		"{ \"s\" : \"\\u00e9\\n\" , \"n\": 1.50, \"i\": -7 }",
		"[0.1, 12345678901234567, 1e10]",
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		json_t *v = json_loadb(texts[i], strlen(texts[i]), JSON_ALLOW_NUL, NULL);
		char *want = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS), *got = canon(texts[i]);

		CHECK(want && got && strcmp(want, got) == 0);
		free(want);
		free(got);
		json_decref(v);
	}
	return 0;
}

/* a and b have different canonical texts */
static int apart(const char *a, const char *b)
{
	char *x = canon(a), *y = canon(b);
	int differ = x && y && strcmp(x, y) != 0;

	if (!differ)
		fprintf(stderr, "same: %s\n  and %s\n  as %s\n", a, b, x ? x : "(null)");
	free(x);
	free(y);
	return differ;
}

static int canonical_keeps_digits(void)
{
	char *x, *y;

	/* numbers that round to one double are still told apart */
	CHECK(apart("{\"amount\":0.10000000000000000001}", "{\"amount\":0.10000000000000000002}"));
	CHECK(apart("{\"amount\":0.10000000000000000001}", "{\"amount\":0.1}"));
	CHECK(apart("[123456789012345678901234]", "[123456789012345678901235]"));
	/* the same long number in another place */
	CHECK(apart("{\"a\":0.10000000000000000001,\"b\":0.1}",
		    "{\"a\":0.1,\"b\":0.10000000000000000001}"));
	/* beside a long number (the arguments then go on as written), numbers
	 * that share a double are told apart too */
	CHECK(apart("{\"big\":100000000000000000001,\"a\":9007199254740992.0}",
		    "{\"big\":100000000000000000001,\"a\":9007199254740993.0}"));
	CHECK(apart("[123456789012345678901234, 0.1]", "[123456789012345678901234, 0.10000000000000001]"));
	CHECK(apart("[123456789012345678901234, 0.0]", "[123456789012345678901234, 1e-400]"));
	/* member order and whitespace do not count */
	x = canon("{\"b\":123456789012345678901234,\"a\":[0.10000000000000000001]}");
	y = canon("{ \"a\" : [ 0.10000000000000000001 ], \"b\" : 123456789012345678901234 }");
	CHECK(x && y && strcmp(x, y) == 0);
	/* every number's literal follows the form, in its order */
	CHECK(strstr(x, "\n0:0.10000000000000000001\n1:123456789012345678901234"));
	free(x);
	free(y);
	/* not one value, or a name twice beside a long number: none */
	CHECK(!canon("{\"a\":123456789012345678901234,\"a\":1}"));
	CHECK(!canon("{\"a\":"));
	return 0;
}

static int text_as_jansson_writes_it(void)
{
	/* whitespace gone, escapes decoded ("\u0072\u006d" is "rm", "\/" is
	 * "/") and written again where JSON needs them; numbers as written */
	static const char t[] = " { \"a b\" : [ 1.50 , \"x \\\" \\n \\u0072\\u006d \\/ \\u00e9\" ] ,\n\t"
				"\"n\" : 123456789012345678901234 } ";
	static const char want[] = "{\"a b\":[1.50,\"x \\\" \\n rm / \xc3\xa9\"],"
				   "\"n\":123456789012345678901234}";
	size_t len;
	char *c = json_wide_text(t, strlen(t), &len);

	CHECK(c && len == strlen(want) && strcmp(c, want) == 0);
	free(c);
	return 0;
}

const struct unit_test json_wide_tests[] = {
	{ "json_wide/which_are_long", which_are_long },
	{ "json_wide/loads_long_integers", loads_long_integers },
	{ "json_wide/errors_keep_their_place", errors_keep_their_place },
	{ "json_wide/canonical_is_jansson_form", canonical_is_jansson_form },
	{ "json_wide/canonical_keeps_digits", canonical_keeps_digits },
	{ "json_wide/text_as_jansson_writes_it", text_as_jansson_writes_it },
	UNIT_TESTS_END,
};
