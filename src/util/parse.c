/*
 * Quantity parsers (see parse.h). They work on a fixed-point decimal with at
 * most three fractional digits so that "1.5G" and "0.25s" are exact, and
 * they never read past a length ceiling: a quantity is short.
 */
#include <string.h>

#include "util/parse.h"

#define QTY_MAX_LEN 32

/* Parse "123" or "123.456" at the start of s into thousandths; returns the
 * number of characters consumed, or -1. */
static int parse_milli(const char *s, uint64_t *milli)
{
	uint64_t whole = 0, frac = 0;
	int i = 0, digits = 0, fdigits = 0;

	while (s[i] >= '0' && s[i] <= '9') {
		if (whole > (UINT64_MAX / 1000 - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(s[i] - '0');
		i++;
		digits++;
	}
	if (s[i] == '.') {
		i++;
		while (s[i] >= '0' && s[i] <= '9') {
			if (fdigits == 3)
				return -1; /* more precision than we keep */
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			i++;
			fdigits++;
		}
		if (fdigits == 0)
			return -1;
	}
	if (digits == 0)
		return -1;
	while (fdigits < 3) {
		frac *= 10;
		fdigits++;
	}
	*milli = whole * 1000 + frac;
	return i;
}

static int check_len(const char *s, const char *what, struct tg_error *err)
{
	if (!s || !*s)
		return tg_error_set(err, TG_ERR_INVALID, "empty %s", what);
	if (strnlen(s, QTY_MAX_LEN + 1) > QTY_MAX_LEN)
		return tg_error_set(err, TG_ERR_INVALID, "%s too long", what);
	return 0;
}

/* milli/1000 * unit without overflow: OUT *out, or -1. unit <= 2^40, so
 * frac * unit cannot overflow. */
static int scale(uint64_t milli, uint64_t unit, uint64_t *out)
{
	uint64_t whole = milli / 1000, add = (milli % 1000) * unit / 1000;

	if (whole > UINT64_MAX / unit)
		return -1;
	whole *= unit;
	if (add > UINT64_MAX - whole)
		return -1;
	*out = whole + add;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes, struct tg_error *err)
{
	uint64_t milli, unit = 1;
	const char *p;
	int n;

	*bytes = 0;
	if (check_len(s, "size", err) < 0)
		return -1;
	n = parse_milli(s, &milli);
	if (n < 0)
		return tg_error_set(err, TG_ERR_INVALID, "invalid size '%s'", s);
	p = s + n;
	switch (*p) {
	case 'k': case 'K': unit = 1ull << 10; p++; break;
	case 'm': case 'M': unit = 1ull << 20; p++; break;
	case 'g': case 'G': unit = 1ull << 30; p++; break;
	case 't': case 'T': unit = 1ull << 40; p++; break;
	default: break;
	}
	if (unit > 1 && *p == 'i')
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p)
		return tg_error_set(err, TG_ERR_INVALID,
				    "invalid size '%s' (use e.g. 4096, 64K, 256M, 1G)", s);
	if (scale(milli, unit, bytes) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "size '%s' too large", s);
	return 0;
}

int parse_duration(const char *s, uint64_t *ms, struct tg_error *err)
{
	uint64_t milli, unit = 1000;
	const char *p;
	int n;

	*ms = 0;
	if (check_len(s, "duration", err) < 0)
		return -1;
	n = parse_milli(s, &milli);
	if (n < 0)
		return tg_error_set(err, TG_ERR_INVALID, "invalid duration '%s'", s);
	p = s + n;
	if (strcmp(p, "ms") == 0)
		unit = 1;
	else if (strcmp(p, "s") == 0 || *p == '\0')
		unit = 1000;
	else if (strcmp(p, "m") == 0 || strcmp(p, "min") == 0)
		unit = 60 * 1000;
	else if (strcmp(p, "h") == 0)
		unit = 3600 * 1000;
	else if (strcmp(p, "d") == 0)
		unit = 86400ull * 1000;
	else
		return tg_error_set(err, TG_ERR_INVALID,
				    "invalid duration '%s' (use e.g. 250ms, 10s, 2m, 1h, 30d)", s);
	if (scale(milli, unit, ms) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "duration '%s' too large", s);
	return 0;
}

int parse_cpus(const char *s, unsigned *millicpus, struct tg_error *err)
{
	uint64_t milli;
	int n;

	*millicpus = 0;
	if (check_len(s, "CPU count", err) < 0)
		return -1;
	n = parse_milli(s, &milli);
	if (n < 0 || s[n] != '\0')
		return tg_error_set(err, TG_ERR_INVALID, "invalid CPU count '%s'", s);
	if (milli == 0 || milli > 1024 * 1000)
		return tg_error_set(err, TG_ERR_INVALID,
				    "CPU count '%s' out of range (0.001 to 1024)", s);
	*millicpus = (unsigned)milli;
	return 0;
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *v,
	       struct tg_error *err)
{
	uint64_t x = 0;
	const char *p;

	*v = 0;
	if (check_len(s, "number", err) < 0)
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return tg_error_set(err, TG_ERR_INVALID, "invalid number '%s'", s);
		if (x > (UINT64_MAX - 9) / 10)
			return tg_error_set(err, TG_ERR_INVALID, "number '%s' too large", s);
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (x < min || x > max)
		return tg_error_set(err, TG_ERR_INVALID,
				    "%s out of range (%llu to %llu)", s,
				    (unsigned long long)min, (unsigned long long)max);
	*v = x;
	return 0;
}
