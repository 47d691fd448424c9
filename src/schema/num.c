/*
 * Numbers as the validator compares them: exactly.
 *
 * What a JSON number means here (docs/SCHEMA.md, "Numbers"):
 *  - an integer literal that fits 64 bits: that integer (JV_INT);
 *  - any other literal of at most 17 significant digits: an IEEE double
 *    (JV_REAL), whose value is the shortest decimal that reads back as
 *    that double, as ECMAScript prints it (so 0.1 is one tenth, and a
 *    double written with 17 digits, as jansson writes one, means what
 *    the shorter literal meant);
 *  - a literal of more significant digits: that decimal exactly
 *    (JV_DEC), up to NUM_MAX_DIGITS digits.
 *
 * Comparisons, equality and multipleOf are exact on those values. The
 * common cases take a shortcut that gives the same answer: two integers,
 * two doubles, an integer and a double within 2^53, a decimal whose
 * nearest double already decides. The rest goes through struct dnum, a
 * sign, digits and an exponent, and for multipleOf the integers of
 * bigint.c (32-bit limbs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

#define TWO53 9007199254740992.0

/* value = (neg ? -1 : 1) * 0.D[0]D[1]...D[n-1] * 10^exp; n == 0: zero.
 * D has no leading or trailing '0'. */
struct dnum {
	int neg;
	int exp;
	uint32_t n;
	const char *d;
};

static const double p10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
};

static unsigned long long uabs(long long v)
{
	return v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
}

/* The digits of u into buf (at least 21 bytes) as a dnum scaled by
 * 10^scale (value = u * 10^scale). */
static void from_u64(unsigned long long u, int neg, int scale, char *buf, struct dnum *out)
{
	char tmp[24];
	int len = 0, i;

	out->neg = neg;
	out->d = buf;
	if (u == 0) {
		out->n = 0, out->exp = 0, out->neg = 0;
		return;
	}
	while (u) {
		tmp[len++] = (char)('0' + u % 10);
		u /= 10;
	}
	for (i = 0; i < len; i++)
		buf[i] = tmp[len - 1 - i];
	out->exp = len + scale;
	while (len > 0 && buf[len - 1] == '0')
		len--;
	out->n = (uint32_t)len;
}

/* A double with at most 17 fractional digits as N / 10^k: 1 and OUT. */
static int small_fraction(double d, long long *n, int *k)
{
	static const double off[] = { 0, -1, 1 };
	double a = fabs(d);
	int i, j;

	if (!(a < TWO53))
		return 0;
	for (i = 0; i <= 17; i++) {
		double c = nearbyint(a * p10[i]), t;

		if (c >= TWO53)
			return 0;
		/* c, nearly always; its neighbours when a * 10^i rounded. c
		 * first: when c and a neighbour both read back, c is nearer */
		for (j = 0; j < 3; j++) {
			t = c + off[j];
			if (t >= 0 && t / p10[i] == a) {
				*n = d < 0 ? -(long long)t : (long long)t;
				*k = i;
				return 1;
			}
		}
	}
	return 0;
}

/* buf, "D.DDDe+X" as printf wrote it, one unit of its last digit up
 * (in place; 9.99e+X becomes 1e+X+1). 1. */
static int next_up(char *buf)
{
	char *e = strchr(buf, 'e'), *s;
	int ex;

	if (!e)
		return 0;
	for (s = e - 1; s >= buf; s--) {
		if (*s == '.')
			continue;
		if (*s != '9') {
			(*s)++;
			return 1;
		}
		*s = '0';
	}
	ex = (int)strtol(e + 1, NULL, 10);
	snprintf(buf, 32, "1e%+d", ex + 1);
	return 1;
}

/* The shortest decimal that reads back as d (buf: at least 32 bytes). */
static void from_double(double d, char *buf, struct dnum *out)
{
	double a = fabs(d);
	int neg = d < 0, k, p;
	long long nk;

	if (a == 0) {
		from_u64(0, 0, 0, buf, out);
		return;
	}
	/* k fractional digits: N / 10^k, N < 2^53 (small_fraction: when two
	 * neighbours read back, the nearer one, as the shortest decimal is) */
	if (small_fraction(d, &nk, &k)) {
		from_u64(uabs(nk), neg, -k, buf, out);
		return;
	}
	/* the rest: printf's digits (glibc prints exactly), p of them for
	 * the fewest p that read back. The nearest decimal of p + 1 digits
	 * is no farther than that of p, so when a's neighbours are as far
	 * below as above, the p that read back are those from some on: a
	 * binary search. A power of two's neighbour below is twice nearer:
	 * there the decimal just above the nearest may read back when the
	 * nearest does not, and p goes one by one */
	if (frexp(a, &p) != 0.5) {
		int lo = 2, hi = 17, mid, last = 1;

		snprintf(buf, 32, "%.0e", a); /* 1e300, 5e-324: one digit */
		if (strtod(buf, NULL) == a)
			lo = hi = 1;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			snprintf(buf, 32, "%.*e", mid - 1, a);
			last = mid;
			if (strtod(buf, NULL) == a)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (last != hi)
			snprintf(buf, 32, "%.*e", hi - 1, a);
	} else {
		for (p = 1; p <= 17; p++) {
			snprintf(buf, 32, "%.*e", p - 1, a);
			if (strtod(buf, NULL) == a || (next_up(buf) && strtod(buf, NULL) == a))
				break;
		}
	}
	{
		char *e = strchr(buf, 'e');
		int ex = e ? (int)strtol(e + 1, NULL, 10) : 0, n = 0; /* printf wrote it: -324..308 */
		const char *s;

		/* "D.DDDe+XX" -> "DDDD", exp = XX + 1 */
		for (s = buf; s < e; s++)
			if (*s != '.')
				buf[n++] = *s;
		while (n > 0 && buf[n - 1] == '0')
			n--;
		out->neg = neg;
		out->d = buf;
		out->n = (uint32_t)n;
		out->exp = ex + 1;
	}
}

/* v as a dnum; buf (32 bytes) holds the digits of an integer or double. */
static void to_dnum(const struct jv *v, char *buf, struct dnum *out)
{
	if (v->kind == JV_INT) {
		from_u64(uabs(v->u.i), v->u.i < 0, 0, buf, out);
	} else if (v->kind == JV_DEC) {
		out->neg = v->u.dec->neg;
		out->exp = v->u.dec->exp;
		out->n = v->u.dec->ndig;
		out->d = v->u.dec->dig;
	} else {
		from_double(v->u.d, buf, out);
	}
}

static int cmp_dnum(const struct dnum *a, const struct dnum *b)
{
	int sa = a->n == 0 ? 0 : a->neg ? -1 : 1, sb = b->n == 0 ? 0 : b->neg ? -1 : 1, m = 0;
	uint32_t n;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa == 0)
		return 0;
	if (a->exp != b->exp)
		m = a->exp < b->exp ? -1 : 1;
	else {
		n = a->n < b->n ? a->n : b->n;
		m = memcmp(a->d, b->d, n);
		if (m == 0 && a->n != b->n)
			m = a->n < b->n ? -1 : 1; /* the longer one: a nonzero digit more */
		m = m < 0 ? -1 : m > 0;
	}
	return sa < 0 ? -m : m;
}

static int cmp_d(double a, double b)
{
	return a < b ? -1 : a > b;
}

int num_cmp_exact(const struct jv *a, const struct jv *b)
{
	char ba[32], bb[32];
	struct dnum x, y;

	/* num_cmp took two integers and two doubles. Rounding is monotonic:
	 * different nearest doubles decide (an integer's nearest double is
	 * (double)i, correctly rounded) */
	if (jv_number(a) != jv_number(b))
		return cmp_d(jv_number(a), jv_number(b));
	if (a->kind != JV_DEC && b->kind != JV_DEC) {
		/* an integer and a double alike: within 2^53 the integer is
		 * that double exactly */
		const struct jv *i = a->kind == JV_INT ? a : b;

		if (i->u.i <= (long long)TWO53 && i->u.i >= -(long long)TWO53)
			return 0;
	}
	to_dnum(a, ba, &x);
	to_dnum(b, bb, &y);
	return cmp_dnum(&x, &y);
}

/* v as N / 10^k with |N| < 2^63 and k <= 17, when it is one. */
static int as_fraction(const struct jv *v, long long *n, int *k)
{
	if (v->kind == JV_INT) {
		*n = v->u.i;
		*k = 0;
		return 1;
	}
	return v->kind == JV_REAL && small_fraction(v->u.d, n, k);
}

void num_divisor(struct num_div *d)
{
	uint32_t copy[BIG_LIMBS];
	char buf[32];
	struct dnum b;
	size_t n;

	d->frac = as_fraction(&d->v, &d->n, &d->k);
	/* m = B * 10^last, B = 2^p2 * 5^p5 * B' with B' prime to 10: B'
	 * and the two powers are checked apart (num_multiple), so that no
	 * exponent gap costs a division step */
	to_dnum(&d->v, buf, &b);
	d->last = b.exp - (int)b.n;
	d->nrest = big_from_digits(b.d, b.n, d->rest);
	d->p2 = big_ctz(d->rest, d->nrest);
	d->nrest = big_shr(d->rest, d->nrest, d->p2);
	for (d->p5 = 0;; d->p5++) {
		memcpy(copy, d->rest, d->nrest * sizeof(copy[0]));
		n = d->nrest;
		if (n == 0 || big_divsmall(copy, &n, 5) != 0)
			break;
		memcpy(d->rest, copy, n * sizeof(copy[0]));
		d->nrest = n;
	}
}

/* a divides b, in 64 bits when the scaled values fit, else 128 */
static int divides_scaled(unsigned long long x, int xk, unsigned long long m, int mk)
{
	unsigned long long s = (unsigned long long)p10[mk >= xk ? mk - xk : xk - mk], r;

	if (mk >= xk ? !__builtin_mul_overflow(x, s, &r) : !__builtin_mul_overflow(m, s, &r))
		return mk >= xk ? r % m == 0 : x % r == 0;
	if (mk >= xk)
		return ((unsigned __int128)x * s) % m == 0;
	return x % ((unsigned __int128)m * s) == 0;
}

int num_multiple(const struct jv *x, const struct num_div *d)
{
	const struct jv *m = &d->v;
	char bx[32];
	struct dnum a;
	long long xn;
	int xk;

	if (x->kind == JV_INT && m->kind == JV_INT)
		return x->u.i % m->u.i == 0;
	if (d->frac && d->n != 0 && as_fraction(x, &xn, &xk))
		/* x / m = (xn * 10^mk) / (mn * 10^xk) */
		return divides_scaled(uabs(xn), xk, uabs(d->n), d->k);
	to_dnum(x, bx, &a);
	if (a.n == 0)
		return 1;
	{
		/* x = A * 10^(a.exp - a.n), m = B * 10^last: x / m is A * 10^s / B
		 * with s = (a.exp - a.n) - last. With s < 0, B * 10^-s would
		 * divide A, which ends in a nonzero digit. Else B = 2^p2 5^p5 B'
		 * divides A * 10^s exactly when B' divides A and A * 10^s has
		 * the twos and fives: v2(A) + s >= p2, v5(A) + s >= p5 */
		long long s = ((long long)a.exp - a.n) - d->last, need;
		uint32_t av[BIG_LIMBS];
		size_t an = big_from_digits(a.d, a.n, av);

		if (s < 0)
			return 0;
		if ((long long)d->p2 > s && (long long)big_ctz(av, an) < (long long)d->p2 - s)
			return 0;
		/* A's fives divided out, 5^13 a step (B' | A iff B' | A / 5^k) */
		for (need = (long long)d->p5 - s; need > 0; need -= 13) {
			uint32_t pw = 1;
			int i;

			for (i = 0; i < 13 && i < need; i++)
				pw *= 5;
			if (big_divsmall(av, &an, pw) != 0)
				return 0;
		}
		return big_divides(d->rest, d->nrest, av, an);
	}
}

int num_equal(const struct jv *a, const struct jv *b)
{
	if (a->kind == JV_DEC && b->kind == JV_DEC)
		return a->u.dec->neg == b->u.dec->neg && a->u.dec->exp == b->u.dec->exp &&
		       a->u.dec->ndig == b->u.dec->ndig &&
		       memcmp(a->u.dec->dig, b->u.dec->dig, a->u.dec->ndig) == 0;
	return num_cmp(a, b) == 0;
}

const char *num_text(const struct jv *v, char *buf, size_t size)
{
	char db[32];
	struct dnum x;
	uint32_t show;
	const char *sign;

	if (v->kind == JV_INT) {
		snprintf(buf, size, "%lld", v->u.i);
		return buf;
	}
	to_dnum(v, db, &x);
	sign = x.neg ? "-" : "";
	if (x.n == 0) {
		snprintf(buf, size, "0");
	} else if (x.n <= 40 && x.exp >= -5 && x.exp <= 40) {
		/* as written by hand: 12.5, 0.001, 18446744073709551616 */
		static const char zeros[] = "0000000000000000000000000000000000000000";

		if (x.exp <= 0)
			snprintf(buf, size, "%s0.%.*s%.*s", sign, -x.exp, zeros, (int)x.n, x.d);
		else if ((uint32_t)x.exp >= x.n)
			snprintf(buf, size, "%s%.*s%.*s", sign, (int)x.n, x.d, x.exp - (int)x.n, zeros);
		else
			snprintf(buf, size, "%s%.*s.%.*s", sign, x.exp, x.d, (int)x.n - x.exp,
				 x.d + x.exp);
	} else {
		/* d.ddd...e+X, at most 40 digits shown (a longer one ends "...") */
		show = x.n > 40 ? 40 : x.n;
		snprintf(buf, size, "%s%c%s%.*s%se%+d", sign, x.d[0], show > 1 ? "." : "",
			 (int)show - 1, x.d + 1, show < x.n ? "..." : "", x.exp - 1);
	}
	return buf;
}

void num_literal(const char *t, size_t len, char *dig, size_t cap, struct num_lit *o)
{
	size_t i = 0, k = 0, first = SIZE_MAX, last = 0, ni = SIZE_MAX;
	long long e = 0;
	int eneg = 0;

	o->neg = len > 0 && t[0] == '-';
	i = (size_t)o->neg;
	/* D: every digit of the mantissa, k its index; ni: those before the point */
	for (; i < len && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.'); i++) {
		if (t[i] == '.') {
			ni = k;
			continue;
		}
		if (t[i] != '0') {
			if (first == SIZE_MAX)
				first = k;
			last = k;
		}
		if (first != SIZE_MAX && dig && k - first < cap)
			dig[k - first] = t[i];
		k++;
	}
	if (ni == SIZE_MAX)
		ni = k;
	if (i < len && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < len && (t[i] == '+' || t[i] == '-'))
			eneg = t[i++] == '-';
		for (; i < len && t[i] >= '0' && t[i] <= '9'; i++)
			if (e < 1000000000)
				e = e * 10 + (t[i] - '0');
	}
	if (first == SIZE_MAX) {
		o->nsig = 0, o->exp = 0, o->neg = 0;
		return;
	}
	o->nsig = last - first + 1;
	o->exp = (long long)ni - (long long)first + (eneg ? -e : e);
}
