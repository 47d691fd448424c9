/*
 * Unit tests: src/schema/, keyword by keyword, so a fresh clone without the
 * official test suite still checks them all; and the bad inputs the issue
 * names (malformed JSON, huge or deep instances, catastrophic patterns,
 * reference cycles, unknown dialects).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/schema_int.h"
#include "toolgate/schema.h"
#include "unit.h"

/* 1 valid, 0 invalid, -1 error; -2 the schema did not compile. */
static int check(const char *schema, const char *instance)
{
	struct tg_schema *s;
	struct tg_error err;
	int rc;

	if (tg_schema_compile(schema, strlen(schema), NULL, &s, &err) < 0)
		return -2; /* some tests expect it; a CHECK names the line otherwise */
	rc = tg_schema_validate(s, instance, strlen(instance), NULL, &err);
	tg_schema_free(s);
	return rc;
}

static int types_and_values(void)
{
	CHECK(check("{\"type\":\"integer\"}", "1.0") == 1);
	CHECK(check("{\"type\":\"integer\"}", "1.5") == 0);
	CHECK(check("{\"type\":[\"string\",\"null\"]}", "null") == 1);
	CHECK(check("{\"const\":1}", "1.0") == 1);
	CHECK(check("{\"enum\":[[1,{\"a\":2}]]}", "[1.0,{\"a\":2.0}]") == 1);
	CHECK(check("{\"enum\":[false]}", "0") == 0);
	CHECK(check("{\"multipleOf\":0.01}", "19.99") == 1);
	CHECK(check("{\"multipleOf\":0.01}", "19.995") == 0);
	CHECK(check("{\"minimum\":1,\"exclusiveMaximum\":3}", "3") == 0);
	CHECK(check("{\"maxLength\":2}", "\"\\u00e9\\u00e9\"") == 1); /* code points */
	CHECK(check("{\"pattern\":\"^a+$\"}", "\"aaa\"") == 1);
	CHECK(check("{\"pattern\":\"\\\\p{Letter}\"}", "\"\\u00e9\"") == 1);
	CHECK(check("{\"pattern\":\"^\\\\u0041+$\"}", "\"AAA\"") == 1); /* ECMA \uHHHH */
	CHECK(check("false", "1") == 0);
	/* patterns that cannot match are known early (regex_hint): the
	 * shortcut must never refuse what the pattern accepts */
	CHECK(check("{\"pattern\":\"^/[^\\\\u0000]*$\"}", "\"/srv\"") == 1);
	CHECK(check("{\"pattern\":\"^/[^\\\\u0000]*$\"}", "\"srv\"") == 0);
	CHECK(check("{\"pattern\":\"^/\"}", "\"\"") == 0);
	CHECK(check("{\"pattern\":\"^ab|c\"}", "\"xc\"") == 1);   /* alternation */
	CHECK(check("{\"pattern\":\"^a?b\"}", "\"b\"") == 1);      /* quantified */
	CHECK(check("{\"pattern\":\"^a{0,2}b\"}", "\"b\"") == 1);
	CHECK(check("{\"pattern\":\"^\\\\db\"}", "\"1b\"") == 1); /* an escape */
	CHECK(check("{\"pattern\":\"^(a)b\"}", "\"ab\"") == 1);
	CHECK(check("{\"pattern\":\"^[ab]c\"}", "\"bc\"") == 1);
	CHECK(check("{\"pattern\":\"^.c\"}", "\"\\u00e9c\"") == 1);
	CHECK(check("{\"pattern\":\"^\\u00e9\"}", "\"\\u00e9\"") == 1); /* not ASCII */
	CHECK(check("{\"pattern\":\"abc\"}", "\"ab\"") == 0);      /* minimum length */
	CHECK(check("{\"pattern\":\"^\\u00e9{2}$\"}", "\"\\u00e9\\u00e9\"") == 1);
	return 0;
}

static int objects_and_arrays(void)
{
	const char *obj = "{\"properties\":{\"a\":{\"type\":\"string\"}},"
			  "\"patternProperties\":{\"^x-\":{\"type\":\"integer\"}},"
			  "\"additionalProperties\":false,\"required\":[\"a\"],"
			  "\"dependentRequired\":{\"x-1\":[\"a\"]}}";

	CHECK(check(obj, "{\"a\":\"s\",\"x-1\":1}") == 1);
	CHECK(check(obj, "{\"a\":\"s\",\"b\":1}") == 0);
	CHECK(check(obj, "{\"x-1\":1}") == 0);
	CHECK(check("{\"prefixItems\":[{\"type\":\"integer\"}],\"items\":false}", "[1]") == 1);
	CHECK(check("{\"prefixItems\":[{\"type\":\"integer\"}],\"items\":false}", "[1,2]") == 0);
	CHECK(check("{\"contains\":{\"const\":2},\"minContains\":2}", "[2,1,2]") == 1);
	CHECK(check("{\"contains\":{\"const\":2},\"maxContains\":1}", "[2,1,2]") == 0);
	CHECK(check("{\"uniqueItems\":true}", "[1,1.0]") == 0);
	CHECK(check("{\"propertyNames\":{\"maxLength\":1}}", "{\"ab\":1}") == 0);
	/* draft-07's dependencies in 2020-12, unless its successors are there */
	CHECK(check("{\"dependencies\":{\"a\":[\"b\"]}}", "{\"a\":1}") == 0);
	CHECK(check("{\"dependencies\":{\"a\":{\"required\":[\"b\"]}}}", "{\"a\":1,\"b\":2}") == 1);
	CHECK(check("{\"dependencies\":{\"a\":{\"required\":[\"b\"]}}}", "{\"a\":1}") == 0);
	CHECK(check("{\"dependentRequired\":{},\"dependencies\":{\"a\":[\"b\"]}}", "{\"a\":1}") == 1);
	return 0;
}

static int applicators_and_annotations(void)
{
	const char *uneval = "{\"allOf\":[{\"properties\":{\"a\":true}}],"
			     "\"anyOf\":[{\"properties\":{\"b\":true}},{\"required\":[\"z\"]}],"
			     "\"unevaluatedProperties\":false}";

	CHECK(check(uneval, "{\"a\":1,\"b\":2}") == 1);
	CHECK(check(uneval, "{\"a\":1,\"c\":2}") == 0);
	CHECK(check("{\"prefixItems\":[true],\"contains\":{\"type\":\"string\"},"
		    "\"unevaluatedItems\":false}", "[1,\"s\"]") == 1);
	CHECK(check("{\"prefixItems\":[true],\"unevaluatedItems\":false}", "[1,2]") == 0);
	CHECK(check("{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"integer\"}]}", "1") == 0);
	CHECK(check("{\"if\":{\"type\":\"string\"},\"then\":{\"minLength\":2},"
		    "\"else\":{\"type\":\"null\"}}", "\"a\"") == 0);
	CHECK(check("{\"not\":{\"type\":\"null\"}}", "null") == 0);
	CHECK(check("{\"dependentSchemas\":{\"a\":{\"required\":[\"b\"]}}}", "{\"a\":1}") == 0);
	return 0;
}

static int references(void)
{
	/* $defs, $anchor, $id-relative, recursion, $dynamicRef */
	CHECK(check("{\"$defs\":{\"n\":{\"type\":\"number\"}},\"$ref\":\"#/$defs/n\"}", "\"x\"") == 0);
	CHECK(check("{\"$defs\":{\"n\":{\"$anchor\":\"num\",\"type\":\"number\"}},"
		    "\"$ref\":\"#num\"}", "2") == 1);
	CHECK(check("{\"$id\":\"https://example.test/root\",\"$defs\":{\"n\":{\"$id\":\"n\","
		    "\"type\":\"number\"}},\"$ref\":\"n\"}", "2") == 1);
	CHECK(check("{\"properties\":{\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}},"
		    "\"required\":[\"kids\"]}", "{\"kids\":[{\"kids\":[]},{\"kids\":[{}]}]}") == 0);
	CHECK(check("{\"$id\":\"https://example.test/tree\",\"$dynamicAnchor\":\"node\","
		    "\"type\":\"object\",\"properties\":{\"c\":{\"$dynamicRef\":\"#node\"}}}",
		    "{\"c\":{\"c\":1}}") == 0);
	CHECK(check("{\"$ref\":\"#/$defs/missing\"}", "1") == -2);
	CHECK(check("{\"$ref\":\"https://example.test/nowhere\"}", "1") == -2);
	return 0;
}

/* The schema is refused and the message contains want. */
static int refused(const char *schema, const char *want)
{
	struct tg_schema *s = NULL;
	struct tg_error err;

	if (tg_schema_compile(schema, strlen(schema), NULL, &s, &err) == 0) {
		tg_schema_free(s);
		return 0;
	}
	if (!strstr(err.msg, want)) {
		fprintf(stderr, "'%s' refused with '%s', not '%s'\n", schema, err.msg, want);
		return 0;
	}
	return 1;
}

static int bad_input(void)
{
	struct tg_schema *s;
	struct tg_error err;
	char *big, *deep;
	size_t i, n = 10000;
	clock_t t0;

	CHECK(refused("{\"type\":", "line"));
	CHECK(refused("{\"type\":\"int\"}", "unknown type"));
	CHECK(refused("{\"pattern\":\"(\"}", "pattern"));
	CHECK(refused("{\"$schema\":\"https://example.test/unknown\"}", "$schema"));
	CHECK(refused("{\"minLength\":-1}", "minLength"));
	CHECK(refused("{\"properties\":{\"a\":3}}", "/properties/a"));
	/* a $ref cycle ends in bounded time with an error */
	CHECK(check("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},"
		    "\"$ref\":\"#/$defs/a\"}", "1") == -1);
	/* 10,000-deep nesting: a clear error, not a crash */
	deep = malloc(2 * n + 1);
	CHECK(deep);
	for (i = 0; i < n; i++) {
		deep[i] = '[';
		deep[n + i] = ']';
	}
	deep[2 * n] = '\0';
	CHECK(check("{}", deep) == -1);
	free(deep);
	/* an instance over the size ceiling */
	CHECK(tg_schema_compile("{}", 2, NULL, &s, &err) == 0);
	big = malloc((17u << 20) + 3);
	CHECK(big);
	big[0] = '"';
	memset(big + 1, 'a', 17u << 20);
	strcpy(big + 1 + (17u << 20), "\"");
	CHECK(tg_schema_validate(s, big, strlen(big), NULL, &err) == -1 &&
	      strstr(err.msg, "larger than"));
	free(big);
	tg_schema_free(s);
	/* a catastrophic pattern stops at its match limit */
	t0 = clock();
	CHECK(check("{\"pattern\":\"^(a+)+$\"}",
		    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\"") == -1);
	CHECK((clock() - t0) / CLOCKS_PER_SEC < 10);
	return 0;
}

static int error_locations(void)
{
	const char *schema = "{\"properties\":{\"a\":{\"items\":{\"type\":\"integer\"}}}}";
	struct tg_schema_error ev[4];
	struct tg_schema_errors errors = { ev, 4, 0 };
	struct tg_schema *s;
	struct tg_error err;

	CHECK(tg_schema_compile(schema, strlen(schema), NULL, &s, &err) == 0);
	CHECK(tg_schema_validate(s, "{\"a\":[1,\"x\"]}", 13, &errors, &err) == 0);
	CHECK(errors.n == 1);
	CHECK(strcmp(ev[0].instance_location, "/a/1") == 0);
	CHECK(strcmp(ev[0].keyword_location, "/properties/a/items/type") == 0);
	tg_schema_free(s);
	return 0;
}

static int check7(const char *schema, const char *instance)
{
	struct tg_schema_options o = { .draft = TG_SCHEMA_DRAFT7 };
	struct tg_schema *s;
	struct tg_error err;
	int rc;

	if (tg_schema_compile(schema, strlen(schema), &o, &s, &err) < 0)
		return -2;
	rc = tg_schema_validate(s, instance, strlen(instance), NULL, &err);
	tg_schema_free(s);
	return rc;
}

static int draft7(void)
{
	/* "$ref" makes its siblings meaningless */
	CHECK(check7("{\"definitions\":{\"s\":{\"type\":\"string\"}},"
		     "\"properties\":{\"a\":{\"$ref\":\"#/definitions/s\",\"maxLength\":1}}}",
		     "{\"a\":\"long\"}") == 1);
	CHECK(check("{\"$defs\":{\"s\":{\"type\":\"string\"}},"
		    "\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\",\"maxLength\":1}}}",
		    "{\"a\":\"long\"}") == 0); /* 2020-12 applies both */
	/* "items" as an array, with "additionalItems" */
	CHECK(check7("{\"items\":[{\"type\":\"integer\"}],\"additionalItems\":false}", "[1]") == 1);
	CHECK(check7("{\"items\":[{\"type\":\"integer\"}],\"additionalItems\":false}", "[1,2]") == 0);
	/* "dependencies", both kinds */
	CHECK(check7("{\"dependencies\":{\"a\":[\"b\"]}}", "{\"a\":1}") == 0);
	CHECK(check7("{\"dependencies\":{\"a\":{\"required\":[\"c\"]}}}", "{\"a\":1,\"c\":2}") == 1);
	/* "$id": "#name" is an anchor */
	CHECK(check7("{\"definitions\":{\"n\":{\"$id\":\"#num\",\"type\":\"number\"}},"
		     "\"$ref\":\"#num\"}", "\"x\"") == 0);
	/* "$schema" selects the dialect whatever the options say */
	CHECK(check("{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
		    "\"items\":[{\"type\":\"integer\"}]}", "[\"x\"]") == 0);
	return 0;
}

static int formats(void)
{
	static const struct {
		const char *format, *value;
		int valid;
	} cases[] = {
		{ "date-time", "2026-11-29T18:00:00.5+01:00", 1 },
		{ "date-time", "2026-02-29T18:00:00Z", 0 },
		{ "time", "23:59:60Z", 1 },
		{ "time", "12:00:60Z", 0 },
		{ "date", "2024-02-29", 1 },
		{ "email", "a.b+c@example.test", 1 },
		{ "email", "a..b@example.test", 0 },
		{ "hostname", "api-1.example.test", 1 },
		{ "hostname", "-bad.example", 0 },
		{ "ipv4", "169.254.169.254", 1 },
		{ "ipv4", "010.0.0.1", 0 },
		{ "ipv6", "fd00:ec2::254", 1 },
		{ "ipv6", "12345::", 0 },
		{ "uri", "https://example.test/a?b#c", 1 },
		{ "uri", "/relative", 0 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", 1 },
		{ "uuid", "2eb8aa08aa9811eab4aa73b441d16380", 0 },
		{ "duration", "P1DT2H30M", 1 },
		{ "duration", "PT", 0 },
		{ "json-pointer", "/a~1b/0", 1 },
		{ "json-pointer", "/a~2", 0 },
		{ "regex", "^a+$", 1 },
		{ "regex", "(", 0 },
		{ "unknown-format", "anything", 1 },
		/* RFC 3986's grammar, not a pattern */
		{ "uri", "http://[fe80::1]:8080/p%20q?x=1#f", 1 },
		{ "uri", "http://2001:db8::1/", 0 },
		{ "uri", "http://a b/", 0 },
		{ "uri", "http://x/%zz", 0 },
		{ "uri", "urn:isbn:0451450523", 1 },
		{ "uri-reference", "../a/b?c", 1 },
		{ "uri-reference", "a:b:c/d", 1 },
		{ "uri-reference", "\\\\\\\\server\\\\share", 0 },
		{ "uri", "http://\u00e9.example/", 0 },
		/* RFC 3987: past ASCII, where it allows */
		{ "iri", "http://\u00e9.example/\u00fc?q=\ue000", 1 },
		{ "iri", "http://example.test/\ue000", 0 },
		{ "iri-reference", "//\u00e9.example/a", 1 },
		{ "iri", "/relative", 0 },
		/* RFC 6570 */
		{ "uri-template", "http://example.com/{term:1}/{term}{?q*,lang}", 1 },
		{ "uri-template", "http://example.com/{term:1}/{term", 0 },
		{ "uri-template", "{a:0}", 0 },
		{ "uri-template", "{a b}", 0 },
		{ "uri-template", "{var.name}{+path}{#frag}", 1 },
		/* IDNA 2008 */
		{ "idn-hostname", "\uc2e4\ub840.\ud14c\uc2a4\ud2b8", 1 },
		{ "idn-hostname", "l\u00b7l", 1 },
		{ "idn-hostname", "a\u00b7l", 0 },
		{ "idn-hostname", "\u03b1\u0375\u03b2", 1 },
		{ "idn-hostname", "\u05d0\u05f3\u05d1", 1 },
		{ "idn-hostname", "A\u05f3\u05d1", 0 },
		{ "idn-hostname", "a\u30fbl", 0 },
		{ "idn-hostname", "\u30a1\u30fb", 1 },
		{ "idn-hostname", "\u0628\u0660\u06f0", 0 },
		{ "idn-hostname", "xn--X", 0 },
		{ "idn-hostname", "XN--aa---o47jg78q", 0 },
		{ "idn-hostname", "ab--cd", 0 },
		{ "idn-hostname", "-> $1.00 <--", 0 },
		{ "idn-hostname", "\u0915\u094d\u200d\u0937", 1 },
		{ "idn-hostname", "\u0915\u200d\u0937", 0 },
		{ "idn-hostname", "example\u3002com", 1 },
		{ "hostname", "xn--X.example", 0 },
		{ "hostname", "xn--ihqwcrb4cv8a8dqg056pqjye.example", 1 },
		{ "idn-email", "\uc2e4\ub840@\uc2e4\ub840.\ud14c\uc2a4\ud2b8", 1 },
		{ "idn-email", "2962", 0 },
	};
	struct tg_schema_options o = { .format_assert = 1 };
	char schema[96], inst[160];
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tg_schema *s;
		struct tg_error err;
		int rc;

		snprintf(schema, sizeof(schema), "{\"format\":\"%s\"}", cases[i].format);
		snprintf(inst, sizeof(inst), "\"%s\"", cases[i].value);
		CHECK(tg_schema_compile(schema, strlen(schema), &o, &s, &err) == 0);
		rc = tg_schema_validate(s, inst, strlen(inst), NULL, &err);
		if (rc != cases[i].valid)
			fprintf(stderr, "%s '%s': %d\n", cases[i].format, cases[i].value, rc);
		CHECK(rc == cases[i].valid);
		tg_schema_free(s);
	}
	/* annotation only by default */
	CHECK(check("{\"format\":\"ipv4\"}", "\"not an address\"") == 1);
	return 0;
}

/* RFC 3986 section 5.4.1, the examples a $ref can meet (no queries). */
static int uri_resolution(void)
{
	static const char *const cases[][2] = {
		{ "g:h", "g:h" }, { "g", "http://a/b/c/g" }, { "./g", "http://a/b/c/g" },
		{ "g/", "http://a/b/c/g/" }, { "/g", "http://a/g" }, { "//g", "http://g" },
		{ "#s", "http://a/b/c/d;p?q#s" }, { "g#s", "http://a/b/c/g#s" },
		{ ";x", "http://a/b/c/;x" }, { ".", "http://a/b/c/" }, { "./", "http://a/b/c/" },
		{ "..", "http://a/b/" }, { "../", "http://a/b/" }, { "../g", "http://a/b/g" },
		{ "../..", "http://a/" }, { "../../", "http://a/" }, { "../../g", "http://a/g" },
		{ "../../../g", "http://a/g" }, { "/./g", "http://a/g" }, { "/../g", "http://a/g" },
		{ "g.", "http://a/b/c/g." }, { "..g", "http://a/b/c/..g" },
		{ "./../g", "http://a/b/g" }, { "g/./h", "http://a/b/c/g/h" },
		{ "g/../h", "http://a/b/c/h" },
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *r = uri_resolve("http://a/b/c/d;p?q", cases[i][0]);

		if (!r || strcmp(r, cases[i][1]) != 0)
			fprintf(stderr, "%s -> %s, want %s\n", cases[i][0], r ? r : "NULL",
				cases[i][1]);
		CHECK(r && strcmp(r, cases[i][1]) == 0);
		free(r);
	}
	/* a URN base has no path to merge with; fragments still attach */
	{
		char *r = uri_resolve("urn:uuid:deadbeef-1234", "#/$defs/a");

		CHECK(r && strcmp(r, "urn:uuid:deadbeef-1234#/$defs/a") == 0);
		free(r);
	}
	return 0;
}

/* The instance text refused, with want in the message. */
static int instance_refused(const char *instance, const char *want)
{
	struct tg_schema *s;
	struct tg_error err;
	int rc;

	if (tg_schema_compile("{}", 2, NULL, &s, &err) < 0)
		return 0;
	rc = tg_schema_validate(s, instance, strlen(instance), NULL, &err);
	tg_schema_free(s);
	if (rc != -1 || !strstr(err.msg, want)) {
		fprintf(stderr, "'%s': rc %d, '%s', want '%s'\n", instance, rc,
			rc == -1 ? err.msg : "", want);
		return 0;
	}
	return 1;
}

static int instance_parser(void)
{
	char many[2048];
	size_t o = 0;
	int i;

	CHECK(instance_refused("{\"a\":1,\"a\":2}", "duplicate member name"));
	/* more than 16 members: the hashed duplicate check */
	o += (size_t)snprintf(many + o, sizeof(many) - o, "{");
	for (i = 0; i < 40; i++)
		o += (size_t)snprintf(many + o, sizeof(many) - o, "\"k%d\":%d,", i, i);
	snprintf(many + o, sizeof(many) - o, "\"k7\":0}");
	CHECK(instance_refused(many, "duplicate member name"));
	many[o - 1] = '}';
	many[o] = '\0';
	CHECK(check("{\"minProperties\":40,\"maxProperties\":40}", many) == 1);
	CHECK(instance_refused("\"\\ud800\"", "surrogate"));
	CHECK(instance_refused("\"\\udc00x\"", "surrogate"));
	CHECK(instance_refused("\"\\ud800\\u0041\"", "surrogate"));
	CHECK(instance_refused("\"\xff\"", "UTF-8"));
	CHECK(instance_refused("\"\xc0\xaf\"", "UTF-8"));       /* overlong '/' */
	CHECK(instance_refused("\"\xed\xa0\x80\"", "UTF-8"));   /* encoded surrogate */
	CHECK(instance_refused("\"\xf4\x90\x80\x80\"", "UTF-8")); /* above U+10FFFF */
	CHECK(instance_refused("\"a\nb\"", "control character"));
	CHECK(instance_refused("\"\\x\"", "invalid escape"));
	CHECK(instance_refused("\"abc", "unterminated"));
	CHECK(instance_refused("1 2", "after the value"));
	CHECK(instance_refused("[1,]", "line 1, column 4"));
	CHECK(instance_refused("{\n  \"a\": tru }", "line 2, column 8: invalid literal"));
	CHECK(instance_refused("01", "after the value"));
	CHECK(instance_refused("1.", "digit must follow"));
	CHECK(instance_refused("1e", "digit must follow"));
	CHECK(instance_refused("-", "invalid number"));
	CHECK(instance_refused(".5", "invalid number"));
	CHECK(instance_refused("1e400", "out of range"));
	CHECK(instance_refused("", "end of input"));
	CHECK(instance_refused("{\"a\" 1}", "expected ':'"));
	/* what it accepts, and how it reads it */
	CHECK(check("{\"maxLength\":1}", "\"\\ud83d\\ude00\"") == 1); /* one code point */
	CHECK(check("{\"minLength\":2}", "\"\xf0\x9f\x98\x80\"") == 0);
	CHECK(check("{\"const\":\"a\\u0000b\"}", "\"a\\u0000b\"") == 1);
	CHECK(check("{\"const\":\"a\\u0000b\"}", "\"a\\u0000c\"") == 0);
	CHECK(check("{\"maxLength\":3}", "\"a\\u0000b\"") == 1);
	CHECK(check("{\"type\":\"integer\"}", "123456789012345678901234567890") == 1);
	CHECK(check("{\"minimum\":1e29}", "123456789012345678901234567890") == 1);
	CHECK(check("{\"type\":\"integer\"}", "-9223372036854775808") == 1);
	CHECK(check("{\"type\":\"integer\"}", "1e2") == 1);
	CHECK(check("{\"type\":\"integer\"}", "-0.0") == 1);
	CHECK(check("{\"const\":0}", "-0") == 1);
	/* exact for integers: as doubles, 2^53 + 1 and 2^53 + 3 round to
	 * 2^53 and 2^53 + 4, and the answers would flip */
	CHECK(check("{\"multipleOf\":3}", "9007199254740993") == 1);
	CHECK(check("{\"multipleOf\":3}", "9007199254740995") == 0);
	CHECK(check("{\"type\":\"array\"}", " \t\r\n[ 1 , \"\\/\\b\\f\\n\\r\\t\" ] \n") == 1);
	CHECK(check("{\"properties\":{\"\\u00e9\":{\"type\":\"string\"}}}",
		    "{\"\xc3\xa9\":1}") == 0); /* an escaped name is the same name */
	return 0;
}

/* Validation with and without an error list walks different paths (the
 * fast paths stop at the first failure): the answer must be the same. */
static int same_answer(const char *schema, const char *instance, int want)
{
	struct tg_schema_error ev[8];
	struct tg_schema_errors errors = { ev, 8, 0 };
	struct tg_schema *s;
	struct tg_error err;
	int quick, full;

	if (tg_schema_compile(schema, strlen(schema), NULL, &s, &err) < 0) {
		fprintf(stderr, "%s: %s\n", schema, err.msg);
		return 0;
	}
	quick = tg_schema_validate(s, instance, strlen(instance), NULL, &err);
	full = tg_schema_validate(s, instance, strlen(instance), &errors, &err);
	tg_schema_free(s);
	if (quick != want || full != want || (want == 0 && errors.n == 0)) {
		fprintf(stderr, "%s on %s: %d without errors, %d with (%zu), want %d\n", schema,
			instance, quick, full, errors.n, want);
		return 0;
	}
	return 1;
}

static int key_tables_and_fast_paths(void)
{
	const char *closed = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
			     "\"a_rather_long_property_name\":{\"type\":\"integer\"},"
			     "\"namf\":{},\"name_1234\":{\"enum\":[\"x\",\"y\"]}},"
			     "\"required\":[\"name\",\"id\"],\"additionalProperties\":false}";
	const char *chain = "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/c\"},"
			    "\"c\":{\"type\":\"string\"}},\"properties\":{\"x\":{\"$ref\":\"#/$defs/a\"}}}";
	char big_schema[8192], big_inst[4096];
	size_t o = 0, p = 0;
	int i;

	/* names shorter and longer than the 16-byte word compare, names
	 * that share a prefix, a required name that is not a property */
	CHECK(same_answer(closed, "{\"name\":\"n\",\"id\":1}", 0)); /* id: additional */
	CHECK(same_answer("{\"properties\":{\"id\":{}},\"required\":[\"name\",\"id\"],"
			  "\"additionalProperties\":false,\"patternProperties\":{\"^n\":{}}}",
			  "{\"name\":\"n\",\"id\":1}", 1));
	CHECK(same_answer(closed, "{\"name\":\"n\"}", 0));
	CHECK(same_answer(closed, "{\"nam\":\"n\",\"id\":1}", 0));
	CHECK(same_answer(closed, "{\"namf\":1,\"name\":\"n\"}", 0));
	CHECK(same_answer(closed, "{\"a_rather_long_property_name\":\"s\",\"name\":\"n\"}", 0));
	CHECK(same_answer(closed, "{\"a_rather_long_property_namf\":1,\"name\":\"n\"}", 0));
	CHECK(same_answer(closed, "{\"name_1234\":\"z\",\"name\":\"n\"}", 0));
	/* a NUL inside an instance's member name (jansson refuses one in a
	 * schema's): "a\0b" is not "a" */
	CHECK(same_answer("{\"properties\":{\"a\":{\"type\":\"string\"}}}",
			  "{\"a\\u0000b\":1,\"a\":\"s\"}", 1));
	CHECK(same_answer("{\"properties\":{\"a\":{\"type\":\"string\"}},"
			  "\"additionalProperties\":false}", "{\"a\\u0000b\":1,\"a\":\"s\"}", 0));
	/* 80 properties, all required: past the one-word fast path */
	o += (size_t)snprintf(big_schema + o, sizeof(big_schema) - o, "{\"properties\":{");
	for (i = 0; i < 80; i++)
		o += (size_t)snprintf(big_schema + o, sizeof(big_schema) - o,
				      "%s\"p%d\":{\"type\":\"integer\"}", i ? "," : "", i);
	o += (size_t)snprintf(big_schema + o, sizeof(big_schema) - o, "},\"required\":[");
	for (i = 0; i < 80; i++)
		o += (size_t)snprintf(big_schema + o, sizeof(big_schema) - o, "%s\"p%d\"",
				      i ? "," : "", i);
	snprintf(big_schema + o, sizeof(big_schema) - o,
		 "],\"unevaluatedProperties\":false}");
	p += (size_t)snprintf(big_inst + p, sizeof(big_inst) - p, "{");
	for (i = 79; i >= 0; i--)
		p += (size_t)snprintf(big_inst + p, sizeof(big_inst) - p, "\"p%d\":%d,", i, i);
	big_inst[p - 1] = '}';
	CHECK(same_answer(big_schema, big_inst, 1));
	big_inst[p - 1] = ',';
	snprintf(big_inst + p, sizeof(big_inst) - p, "\"extra\":1}");
	CHECK(same_answer(big_schema, big_inst, 0)); /* unevaluated, member 81 */
	memcpy(big_inst + 1, "\"q79\"", 5); /* "p79" renamed: a required name missing */
	CHECK(same_answer(big_schema, big_inst, 0));
	/* uniqueItems past 16 items (hashed), equality across spellings */
	CHECK(same_answer("{\"uniqueItems\":true}",
			  "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]", 1));
	CHECK(same_answer("{\"uniqueItems\":true}",
			  "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,7.0]", 0));
	CHECK(same_answer("{\"uniqueItems\":true}",
			  "[{\"a\":1,\"b\":[1]},0,0.5,\"s\",null,true,false,[],{},1,2,3,4,5,6,7,8,9,"
			  "{\"b\":[1.0],\"a\":1}]", 0));
	CHECK(same_answer("{\"uniqueItems\":true}",
			  "[{\"a\":1,\"b\":[1]},0,0.5,\"s\",null,true,false,[],{},1,2,3,4,5,6,7,8,9,"
			  "{\"b\":[1.5],\"a\":1},-0.0,[[]]]", 0)); /* -0.0 equals 0 */
	/* a chain of "$ref"s evaluates as its end; errors still name the way */
	CHECK(same_answer(chain, "{\"x\":\"s\"}", 1));
	CHECK(same_answer(chain, "{\"x\":1}", 0));
	{
		struct tg_schema_error ev[2];
		struct tg_schema_errors errors = { ev, 2, 0 };
		struct tg_schema *s;
		struct tg_error err;

		CHECK(tg_schema_compile(chain, strlen(chain), NULL, &s, &err) == 0);
		CHECK(tg_schema_validate(s, "{\"x\":1}", 7, &errors, &err) == 0 && errors.n == 1);
		/* inside a reference, the location is the target's */
		CHECK(strcmp(ev[0].keyword_location, "#/$defs/c/type") == 0);
		CHECK(strcmp(ev[0].instance_location, "/x") == 0);
		tg_schema_free(s);
	}
	/* a self-referencing "$ref" with nothing else still stops */
	CHECK(check("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}},\"properties\":{\"x\":"
		    "{\"$ref\":\"#/$defs/a\"}}}", "{\"x\":1}") == -1);
	return 0;
}

const struct unit_test schema_tests[] = {
	{ "schema/instance_parser", instance_parser },
	{ "schema/key_tables_and_fast_paths", key_tables_and_fast_paths },
	{ "schema/formats", formats },
	{ "schema/draft7", draft7 },
	{ "schema/uri_resolution", uri_resolution },
	{ "schema/types_and_values", types_and_values },
	{ "schema/objects_and_arrays", objects_and_arrays },
	{ "schema/applicators_and_annotations", applicators_and_annotations },
	{ "schema/references", references },
	{ "schema/bad_input", bad_input },
	{ "schema/error_locations", error_locations },
	UNIT_TESTS_END,
};
