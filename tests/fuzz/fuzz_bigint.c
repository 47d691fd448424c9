/*
 * libFuzzer entry point: src/schema/bigint.c, the integers behind an
 * exact multipleOf. The input is two numbers of up to BIG_LIMBS limbs
 * (a length byte each, then the limbs' bytes); big_divides must agree
 * with a remainder found the slow, plain way (bit by bit: shift in, take
 * the divisor away when it fits), and big_divsmall and big_shr with the
 * same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t trim(const uint32_t *a, size_t n)
{
	while (n > 0 && a[n - 1] == 0)
		n--;
	return n;
}

static int ge(const uint32_t *a, const uint32_t *b, size_t n)
{
	size_t i = n;

	while (i-- > 0)
		if (a[i] != b[i])
			return a[i] > b[i];
	return 1;
}

/* 1 when v divides u: the remainder, one bit of u at a time */
static int slow_divides(const uint32_t *v, size_t n, const uint32_t *u, size_t m)
{
	uint32_t r[BIG_LIMBS + 1] = { 0 }, w[BIG_LIMBS + 1] = { 0 };
	size_t bit, i;

	memcpy(w, v, n * sizeof(v[0]));
	for (bit = m * 32; bit-- > 0;) {
		uint32_t carry = (u[bit / 32] >> (bit % 32)) & 1;

		for (i = 0; i <= BIG_LIMBS; i++) {
			uint32_t out = r[i] >> 31;

			r[i] = (r[i] << 1) | carry;
			carry = out;
		}
		if (ge(r, w, BIG_LIMBS + 1)) {
			uint64_t borrow = 0;

			for (i = 0; i <= BIG_LIMBS; i++) {
				uint64_t t = (uint64_t)r[i] - w[i] - borrow;

				r[i] = (uint32_t)t;
				borrow = t >> 63;
			}
		}
	}
	return trim(r, BIG_LIMBS + 1) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t u[BIG_LIMBS] = { 0 }, v[BIG_LIMBS] = { 0 }, w[BIG_LIMBS];
	size_t m, n, k;
	uint32_t small;

	if (size < 2)
		return 0;
	m = data[0] % (BIG_LIMBS - 1) + 1;
	n = data[1] % (BIG_LIMBS - 1) + 1;
	data += 2, size -= 2;
	for (k = 0; k < (m + n) * 4 && k < size; k++) {
		uint32_t *t = k < m * 4 ? &u[k / 4] : &v[(k - m * 4) / 4];

		*t |= (uint32_t)data[k] << (8 * (k % 4));
	}
	m = trim(u, m);
	n = trim(v, n);
	if (n == 0)
		return 0;
	if (big_divides(v, n, u, m) != slow_divides(v, n, u, m))
		abort();
	/* u * v is a multiple of v when it fits */
	small = v[0] | 1;
	memcpy(w, u, sizeof(w));
	k = m;
	if (big_divsmall(w, &k, small) == 0) {
		/* w = u / small exactly: small divides u */
		uint32_t s1[1] = { small };

		if (!big_divides(s1, 1, u, m) || !slow_divides(s1, 1, u, m))
			abort();
	}
	if (m > 0) {
		unsigned z = big_ctz(u, m);

		memcpy(w, u, sizeof(w));
		k = big_shr(w, m, z);
		if (k == 0 || !(w[0] & 1))
			abort(); /* shifted by its trailing zeros: odd */
	}
	return 0;
}
