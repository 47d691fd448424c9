/* Unit tests: src/util/parse.c */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "util/parse.h"
#include "util/utf8.h"

static int sizes(void)
{
	struct tg_error err;
	uint64_t v;

	CHECK(parse_size("4096", &v, &err) == 0 && v == 4096);
	CHECK(parse_size("64K", &v, &err) == 0 && v == 65536);
	CHECK(parse_size("256M", &v, &err) == 0 && v == 256ull << 20);
	CHECK(parse_size("256MiB", &v, &err) == 0 && v == 256ull << 20);
	CHECK(parse_size("1.5G", &v, &err) == 0 && v == 3ull << 29);
	CHECK(parse_size("1g", &v, &err) == 0 && v == 1ull << 30);
	CHECK(parse_size("", &v, &err) < 0);
	CHECK(parse_size("-1M", &v, &err) < 0);
	CHECK(parse_size("12Q", &v, &err) < 0 && strstr(err.msg, "12Q"));
	CHECK(parse_size("1.", &v, &err) < 0);
	CHECK(parse_size(".5M", &v, &err) < 0);
	CHECK(parse_size("1.0001M", &v, &err) < 0);
	CHECK(parse_size("99999999999999999999", &v, &err) < 0);
	CHECK(parse_size("20000000T", &v, &err) < 0);
	CHECK(parse_size("1234567890123456789012345678901234567890", &v, &err) < 0);
	return 0;
}

static int durations(void)
{
	struct tg_error err;
	uint64_t v;

	CHECK(parse_duration("10s", &v, &err) == 0 && v == 10000);
	CHECK(parse_duration("250ms", &v, &err) == 0 && v == 250);
	CHECK(parse_duration("1.5", &v, &err) == 0 && v == 1500);
	CHECK(parse_duration("2m", &v, &err) == 0 && v == 120000);
	CHECK(parse_duration("1h", &v, &err) == 0 && v == 3600000);
	CHECK(parse_duration("10 s", &v, &err) < 0);
	CHECK(parse_duration("s", &v, &err) < 0);
	CHECK(parse_duration("10d", &v, &err) == 0 && v == 864000000); /* a keeping: days */
	CHECK(parse_duration("10w", &v, &err) < 0);
	return 0;
}

static int cpus_and_uints(void)
{
	struct tg_error err;
	unsigned m;
	uint64_t v;

	CHECK(parse_cpus("1", &m, &err) == 0 && m == 1000);
	CHECK(parse_cpus("0.5", &m, &err) == 0 && m == 500);
	CHECK(parse_cpus("0", &m, &err) < 0);
	CHECK(parse_cpus("1x", &m, &err) < 0);
	CHECK(parse_uint("64", 1, 100, &v, &err) == 0 && v == 64);
	CHECK(parse_uint("0", 1, 100, &v, &err) < 0);
	CHECK(parse_uint("101", 1, 100, &v, &err) < 0);
	CHECK(parse_uint("6a", 1, 100, &v, &err) < 0);
	return 0;
}

/* util/utf8.h: strict UTF-8, one place for every caller. */
static int utf8(void)
{
	static const struct {
		const char *s;
		size_t len;     /* of the first character, 0: not UTF-8 */
		uint32_t cp;
	} cases[] = {
		{ "A", 1, 0x41 },         { "\xc3\xa9", 2, 0xe9 },
		{ "\xe2\x82\xac", 3, 0x20ac }, { "\xf0\x9f\x98\x80", 4, 0x1f600 },
		{ "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
		{ "\xc0\xaf", 0, 0 },      /* overlong '/' */
		{ "\xc1\xbf", 0, 0 },      /* overlong */
		{ "\xe0\x80\xae", 0, 0 },  /* overlong '.' */
		{ "\xf0\x80\x80\xaf", 0, 0 }, /* overlong */
		{ "\xed\xa0\x80", 0, 0 },  /* a surrogate */
		{ "\xf4\x90\x80\x80", 0, 0 }, /* past U+10FFFF */
		{ "\xf5\x80\x80\x80", 0, 0 }, { "\x80", 0, 0 }, { "\xff", 0, 0 },
		{ "\xe2\x82", 0, 0 },       /* cut */
		{ "\xc3" "A", 0, 0 },          /* not a continuation */
	};
	size_t i;
	uint32_t cp;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].s);

		cp = 0;
		if (utf8_char((const unsigned char *)cases[i].s, n, &cp) != cases[i].len ||
		    (cases[i].len && cp != cases[i].cp) ||
		    utf8_valid(cases[i].s, n) != (cases[i].len == n)) {
			fprintf(stderr, "utf8 case %zu\n", i);
			return -1;
		}
	}
	CHECK(utf8_valid("", 0) && utf8_valid("a\0b", 3));
	/* a cut never splits a character, and cuts nothing short enough */
	CHECK(utf8_cut("ab\xc3\xa9", 4, 3) == 2 && utf8_cut("ab\xc3\xa9", 4, 4) == 4);
	CHECK(utf8_cut("\xe2\x82\xac\xe2\x82\xac", 6, 5) == 3 && utf8_cut("abc", 3, 10) == 3);
	CHECK(utf8_cut("\xc3\xa9", 2, 1) == 0);
	return 0;
}

const struct unit_test parse_tests[] = {
	{ "parse/sizes", sizes },
	{ "parse/durations", durations },
	{ "parse/cpus_and_uints", cpus_and_uints },
	{ "parse/utf8", utf8 },
	UNIT_TESTS_END,
};
