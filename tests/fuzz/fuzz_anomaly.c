/*
 * libFuzzer entry point: the string rules of parameter anomalies
 * (src/auth/anomaly_rules.c, a file a rule), on arbitrary bytes (NULs, invalid UTF-8,
 * half a percent escape, unterminated quotes and comments). Never a
 * crash; at most one finding a rule, each rule's in order, its why
 * printable and NUL-terminated, its at left empty; the count the same
 * whether or not there is room for the findings, and each rule alone
 * finding what it finds among all. And the display form of the bytes
 * (src/util/hidden.c): UTF-8 with no hidden character left, its length
 * what was asked, a cut one a prefix of it; their JSON escapes the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/anomaly.h"
#include "util/hidden.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void display(const char *s, size_t size)
{
	size_t count, len;
	char *shown = hidden_display_new(s, size, &count), cut[17], *json;

	if (!shown)
		abort();
	len = strlen(shown);
	if (len != hidden_display(s, size, cut, sizeof(cut), NULL) || !utf8_valid(shown, len) ||
	    hidden_count(shown, len) || (count == 0) != (hidden_count(s, size) == 0) ||
	    strncmp(shown, cut, strlen(cut)) != 0 || strlen(cut) >= sizeof(cut))
		abort();
	json = hidden_json(s, size);
	if (!json || !utf8_valid(json, strlen(json)) || hidden_count(json, strlen(json)))
		abort();
	free(json);
	free(shown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_anomaly_finding f[TG_ANOMALY_RULES], one;
	size_t n = tg_anomaly_scan_string((const char *)data, size, ~0u, f, TG_ANOMALY_RULES), i, k;
	unsigned seen = 0;

	if (n > 5 || tg_anomaly_scan_string((const char *)data, size, ~0u, NULL, 0) != n)
		abort();
	for (i = 0; i < n; i++) {
		if (!(TG_ANOMALY_STRING_RULES & TG_ANOMALY_BIT(f[i].rule)) ||
		    (i > 0 && f[i].rule <= f[i - 1].rule) || f[i].at[0] ||
		    !memchr(f[i].why, '\0', sizeof(f[i].why)) || !f[i].why[0])
			abort();
		for (k = 0; f[i].why[k]; k++)
			if ((unsigned char)f[i].why[k] < 0x20 || (unsigned char)f[i].why[k] > 0x7e)
				abort();
		seen |= TG_ANOMALY_BIT(f[i].rule);
	}
	for (i = 0; i < TG_ANOMALY_RULES; i++) {
		size_t alone;

		if (!(TG_ANOMALY_STRING_RULES & TG_ANOMALY_BIT(i)))
			continue;
		alone = tg_anomaly_scan_string((const char *)data, size, TG_ANOMALY_BIT(i), &one, 1);
		if (alone != !!(seen & TG_ANOMALY_BIT(i)) || (alone && one.rule != (enum tg_anomaly_rule)i))
			abort();
	}
	display((const char *)data, size);
	return 0;
}
