/* Unit tests: src/util/parse.c */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "util/parse.h"

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
	CHECK(parse_duration("10d", &v, &err) < 0);
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

const struct unit_test parse_tests[] = {
	{ "parse/sizes", sizes },
	{ "parse/durations", durations },
	{ "parse/cpus_and_uints", cpus_and_uints },
	UNIT_TESTS_END,
};
