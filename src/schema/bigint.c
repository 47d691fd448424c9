/*
 * Unsigned integers of up to BIG_LIMBS 32-bit limbs (least significant
 * first) for num.c's multipleOf: enough for 400 decimal digits. Only what
 * a divisibility test needs: from decimal digits, trailing zero bits, a
 * shift, division by a small number, and whether one number divides
 * another (Knuth's algorithm D, The Art of Computer Programming vol. 2,
 * 4.3.1, keeping the remainder only).
 */
#include <string.h>

#include "schema/schema_int.h"

size_t big_from_digits(const char *d, size_t n, uint32_t *out)
{
	size_t len = 0, i, j;

	for (i = 0; i < n;) {
		uint64_t mul = 1, add = 0, carry;

		/* nine digits a step: out = out * 10^k + those digits */
		for (j = 0; j < 9 && i < n; j++, i++) {
			mul *= 10;
			add = add * 10 + (uint64_t)(d[i] - '0');
		}
		carry = add;
		for (j = 0; j < len; j++) {
			uint64_t t = (uint64_t)out[j] * mul + carry;

			out[j] = (uint32_t)t;
			carry = t >> 32;
		}
		if (carry && len < BIG_LIMBS)
			out[len++] = (uint32_t)carry;
	}
	return len;
}

unsigned big_ctz(const uint32_t *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i])
			return (unsigned)(i * 32 + (size_t)__builtin_ctz(a[i]));
	return 0;
}

size_t big_shr(uint32_t *a, size_t n, unsigned bits)
{
	size_t w = bits / 32, i;
	unsigned b = bits % 32;

	if (w >= n)
		return 0;
	for (i = 0; i + w < n; i++) {
		uint64_t lo = a[i + w], hi = i + w + 1 < n ? a[i + w + 1] : 0;

		a[i] = (uint32_t)(((hi << 32) | lo) >> b);
	}
	n -= w;
	while (n > 0 && a[n - 1] == 0)
		n--;
	return n;
}

uint32_t big_divsmall(uint32_t *a, size_t *n, uint32_t m)
{
	uint64_t r = 0;
	size_t i = *n;

	while (i-- > 0) {
		uint64_t t = (r << 32) | a[i];

		a[i] = (uint32_t)(t / m);
		r = t % m;
	}
	while (*n > 0 && a[*n - 1] == 0)
		(*n)--;
	return (uint32_t)r;
}

int big_divides(const uint32_t *v0, size_t n, const uint32_t *u0, size_t m)
{
	uint32_t vn[BIG_LIMBS], un[BIG_LIMBS + 1];
	const uint64_t b = 1ull << 32;
	unsigned s;
	size_t i, j;

	if (n == 0)
		return 0;
	if (m == 0)
		return 1; /* zero is a multiple of anything */
	if (n == 1) {
		uint64_t r = 0;

		for (i = m; i-- > 0;)
			r = ((r << 32) | u0[i]) % v0[0];
		return r == 0;
	}
	if (m < n)
		return 0; /* 0 < u < v */
	/* normalize: v's top limb gets its top bit set, u shifted alike */
	s = (unsigned)__builtin_clz(v0[n - 1]);
	for (i = n - 1; i > 0; i--)
		vn[i] = (v0[i] << s) | (s ? v0[i - 1] >> (32 - s) : 0);
	vn[0] = v0[0] << s;
	un[m] = s ? u0[m - 1] >> (32 - s) : 0;
	for (i = m - 1; i > 0; i--)
		un[i] = (u0[i] << s) | (s ? u0[i - 1] >> (32 - s) : 0);
	un[0] = u0[0] << s;
	for (j = m - n + 1; j-- > 0;) {
		uint64_t num = ((uint64_t)un[j + n] << 32) | un[j + n - 1], qhat, rhat, carry = 0;
		int64_t borrow = 0, t;

		/* the quotient digit, at most 2 too large (Knuth's D3) */
		if (un[j + n] >= vn[n - 1]) {
			qhat = b - 1;
			rhat = num - qhat * vn[n - 1];
		} else {
			qhat = num / vn[n - 1];
			rhat = num % vn[n - 1];
		}
		while (rhat < b && qhat * vn[n - 2] > ((rhat << 32) | un[j + n - 2])) {
			qhat--;
			rhat += vn[n - 1];
		}
		/* u -= qhat * v, at place j */
		for (i = 0; i < n; i++) {
			uint64_t p = qhat * vn[i] + carry;

			carry = p >> 32;
			t = (int64_t)un[i + j] - (int64_t)(p & 0xffffffffu) - borrow;
			un[i + j] = (uint32_t)t;
			borrow = t < 0;
		}
		t = (int64_t)un[j + n] - (int64_t)carry - borrow;
		un[j + n] = (uint32_t)t;
		if (t < 0) {
			/* qhat was one too large: add v back */
			carry = 0;
			for (i = 0; i < n; i++) {
				uint64_t sum = (uint64_t)un[i + j] + vn[i] + carry;

				un[i + j] = (uint32_t)sum;
				carry = sum >> 32;
			}
			un[j + n] += (uint32_t)carry;
		}
	}
	for (i = 0; i < n; i++)
		if (un[i])
			return 0;
	return 1;
}
