/*
 * UTF-8 (util/utf8.h).
 */
#include "util/utf8.h"

size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		 : c >= 0xf0 && c <= 0xf4 ? 4 : 0, i;
	uint32_t v;

	if (!k || k > n)
		return 0;
	v = k == 1 ? c : c & (0x7fu >> k);
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3fu);
	}
	/* the shortest form only, no surrogate, nothing past U+10FFFF */
	if ((k == 3 && v < 0x800) || (k == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	if (cp)
		*cp = v;
	return k;
}

int utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_char(p + i, n - i, NULL);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

size_t utf8_cut(const char *s, size_t len, size_t n)
{
	if (len <= n)
		return len;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}
