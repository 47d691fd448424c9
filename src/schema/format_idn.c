/*
 * Internationalised host names for "format" (docs/SCHEMA.md, "Formats"):
 * "idn-hostname" by IDNA 2008 (RFC 5890-5893: each label a valid U-label
 * or A-label, its code points PVALID or allowed by their context rules,
 * the Bidi rule, NFC), for itself and for "idn-email" (format.c), and
 * the A-labels ("xn--...") of a plain "hostname", which must decode to a
 * valid U-label. IDNA 2008's tables
 * are libidn2's (Debian's libidn2-0), loaded the first time one of these
 * formats is asserted (src/util/dl.c); where it cannot be loaded such a
 * string is not valid: a format that cannot be checked is not assumed.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "util/dl.h"
#include "util/utf8.h"

#define LIBIDN2 "libidn2.so.0"

/* libidn2's flags (idn2.h, stable since 2.0) */
#define IDN2_NFC_INPUT 1
#define IDN2_ALABEL_ROUNDTRIP 2
#define IDN2_NO_TR46 64

struct idn2_api {
	int (*lookup_u8)(const uint8_t *src, uint8_t **lookupname, int flags);
	int (*to_unicode_8z8z)(const char *input, char **output, int flags);
	void (*free_)(void *ptr);
};

static struct idn2_api idn2;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300];

static void load(void)
{
	static const struct dl_sym syms[] = {
		{ "idn2_lookup_u8", offsetof(struct idn2_api, lookup_u8) },
		{ "idn2_to_unicode_8z8z", offsetof(struct idn2_api, to_unicode_8z8z) },
		{ "idn2_free", offsetof(struct idn2_api, free_) },
	};
	struct idn2_api api = { 0 };

	if (DL_TABLE(LIBIDN2, syms, api, failed))
		idn2 = api;
}

/* The labels of buf[0, n) that are all ASCII lowercased: DNS compares
 * them so, and libidn2's round trip of an A-label ("xn--BCHER-KVA")
 * compares bytes. A U-label keeps its case (an upper-case letter in one
 * is DISALLOWED). */
static void ascii_labels_lower(char *buf, size_t n)
{
	size_t i = 0, e, j;

	while (i < n) {
		int ascii = 1;

		for (e = i; e < n && buf[e] != '.'; e++)
			ascii &= (unsigned char)buf[e] < 0x80;
		if (ascii)
			for (j = i; j < e; j++)
				if (buf[j] >= 'A' && buf[j] <= 'Z')
					buf[j] += 'a' - 'A';
		i = e + 1;
	}
}

/* The host name s[0, n) (no NUL in it) as IDNA 2008 looks it up, without
 * UTS #46's mapping: its A-label form's length in *alen; 0 when it is no
 * valid IDN (or libidn2 is missing). */
static int lookup(const char *s, size_t n, size_t *alen)
{
	char buf[1024];
	uint8_t *out = NULL;
	int rc;

	pthread_once(&once, load);
	if (failed[0] || n == 0 || n >= sizeof(buf) || memchr(s, 0, n))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	ascii_labels_lower(buf, n);
	rc = idn2.lookup_u8((const uint8_t *)buf, &out, IDN2_NO_TR46 | IDN2_ALABEL_ROUNDTRIP);
	if (rc != 0 || !out)
		return 0;
	*alen = strlen((const char *)out);
	idn2.free_(out);
	return 1;
}

static int greek(uint32_t c)
{
	return (c >= 0x370 && c <= 0x3FF) || (c >= 0x1F00 && c <= 0x1FFF);
}

static int hebrew(uint32_t c)
{
	return (c >= 0x590 && c <= 0x5FF) || (c >= 0xFB1D && c <= 0xFB4F);
}

static int kana_han(uint32_t c)
{
	return (c >= 0x3040 && c <= 0x30FF && c != 0x30FB) || (c >= 0x31F0 && c <= 0x31FF) ||
	       (c >= 0xFF66 && c <= 0xFF9F) || (c >= 0x3400 && c <= 0x4DBF) ||
	       (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
	       (c >= 0x20000 && c <= 0x2FA1F);
}

static int label_ok(const char *l, size_t n);

/* An A-label: its U-label (libidn2 decodes it) must be one, by the same
 * rules (a U-label with "--" in the third and fourth places is none). */
static int alabel_ok(const char *l, size_t n)
{
	char buf[256], *u = NULL;
	int ok;

	pthread_once(&once, load);
	if (failed[0] || n >= sizeof(buf))
		return 0;
	memcpy(buf, l, n);
	buf[n] = '\0';
	ascii_labels_lower(buf, n);
	if (idn2.to_unicode_8z8z(buf, &u, 0) != 0 || !u)
		return 0;
	ok = strncasecmp(u, "xn--", 4) != 0 && label_ok(u, strlen(u));
	idn2.free_(u);
	return ok;
}

/* One label l[0, n), before libidn2 sees it: RFC 5891 4.2.3.1's hyphen
 * rules, the letters-digits-hyphen rule of an ASCII label, and RFC
 * 5892's CONTEXTO rules (appendix A.3 to A.9), which libidn2 leaves. */
static int label_ok(const char *l, size_t n)
{
	uint32_t cp[256];
	size_t k = 0, i = 0, len;
	int ascii = 1, kana = 0, arabic = 0, extended = 0;

	if (n == 0 || n > 255 || l[0] == '-' || l[n - 1] == '-')
		return 0;
	while (i < n) {
		if (k == sizeof(cp) / sizeof(cp[0]) ||
		    (len = utf8_char((const unsigned char *)l + i, n - i, &cp[k])) == 0)
			return 0;
		ascii &= cp[k] < 0x80;
		kana |= kana_han(cp[k]);
		arabic |= cp[k] >= 0x660 && cp[k] <= 0x669;
		extended |= cp[k] >= 0x6F0 && cp[k] <= 0x6F9;
		i += len;
		k++;
	}
	/* "--" in the third and fourth places: an A-label's only */
	if (k >= 4 && cp[2] == '-' && cp[3] == '-' &&
	    !(ascii && (cp[0] | 0x20) == 'x' && (cp[1] | 0x20) == 'n'))
		return 0;
	if (ascii && k > 4 && (cp[0] | 0x20) == 'x' && (cp[1] | 0x20) == 'n' && cp[2] == '-' &&
	    cp[3] == '-')
		return alabel_ok(l, n);
	if (ascii) {
		for (i = 0; i < k; i++)
			if (!((cp[i] | 0x20) >= 'a' && (cp[i] | 0x20) <= 'z') &&
			    !(cp[i] >= '0' && cp[i] <= '9') && cp[i] != '-')
				return 0;
		return 1;
	}
	if (arabic && extended)
		return 0;
	for (i = 0; i < k; i++) {
		switch (cp[i]) {
		case 0xB7: /* MIDDLE DOT: between two l's */
			if (i == 0 || i + 1 == k || cp[i - 1] != 'l' || cp[i + 1] != 'l')
				return 0;
			break;
		case 0x375: /* GREEK KERAIA: before Greek */
			if (i + 1 == k || !greek(cp[i + 1]))
				return 0;
			break;
		case 0x5F3:
		case 0x5F4: /* HEBREW GERESH, GERSHAYIM: after Hebrew */
			if (i == 0 || !hebrew(cp[i - 1]))
				return 0;
			break;
		case 0x30FB: /* KATAKANA MIDDLE DOT: in a label of kana or Han */
			if (!kana)
				return 0;
			break;
		default:
			break;
		}
	}
	return 1;
}

/* U+3002 IDEOGRAPHIC FULL STOP, U+FF0E FULLWIDTH FULL STOP, U+FF61
 * HALFWIDTH IDEOGRAPHIC FULL STOP at s (three bytes each). */
static int full_stop(const unsigned char *s, size_t n)
{
	return n >= 3 && ((s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x82) ||
			  (s[0] == 0xEF && s[1] == 0xBC && s[2] == 0x8E) ||
			  (s[0] == 0xEF && s[1] == 0xBD && s[2] == 0xA1));
}

/* Labels separated by the dots IDNA 2008 accepts (U+002E, and U+3002,
 * U+FF0E, U+FF61, which RFC 3490 named and JSON Schema's tests keep),
 * each 1 to 63 octets once an A-label, 253 in all, a trailing dot allowed. */
int format_idn_hostname(const char *s, size_t n)
{
	char norm[1024];
	size_t i, k = 0, alen;

	if (n == 0 || n >= sizeof(norm))
		return 0;
	for (i = 0; i < n; i++) {
		if (full_stop((const unsigned char *)s + i, n - i)) {
			norm[k++] = '.';
			i += 2;
		} else {
			norm[k++] = s[i];
		}
	}
	if (norm[0] == '.' || (k > 1 && norm[k - 1] == '.' && norm[k - 2] == '.'))
		return 0;
	if (norm[k - 1] == '.')
		k--;
	for (i = 0; i < k;) {
		size_t e = i;

		while (e < k && norm[e] != '.')
			e++;
		if (!label_ok(norm + i, e - i))
			return 0;
		i = e + 1;
	}
	if (!lookup(norm, k, &alen) || alen > 253)
		return 0;
	/* each label's A-label form within 63 octets: libidn2 checks it */
	return 1;
}

int format_alabels_ok(const char *s, size_t n)
{
	size_t i = 0, alen;

	while (i < n) {
		size_t e = i;

		while (e < n && s[e] != '.')
			e++;
		/* libidn2 leaves the CONTEXTO rules: alabel_ok checks them */
		if (e - i >= 4 && strncasecmp(s + i, "xn--", 4) == 0 &&
		    (!alabel_ok(s + i, e - i) || !lookup(s + i, e - i, &alen)))
			return 0;
		i = e + 1;
	}
	return 1;
}
