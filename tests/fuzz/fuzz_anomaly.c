/*
 * libFuzzer entry point: the string rules of parameter anomalies
 * (src/gate/anomaly_rules.c), on arbitrary bytes (NULs, invalid UTF-8,
 * half a percent escape, unterminated quotes and comments). Never a
 * crash; at most one finding a rule, each rule's in order, its why
 * printable and NUL-terminated, its at left empty; the count the same
 * whether or not there is room for the findings, and each rule alone
 * finding what it finds among all.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/anomaly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_anomaly_finding f[TG_ANOMALY_RULES], one;
	size_t n = tg_anomaly_scan_string((const char *)data, size, ~0u, f, TG_ANOMALY_RULES), i, k;
	unsigned seen = 0;

	if (n > 4 || tg_anomaly_scan_string((const char *)data, size, ~0u, NULL, 0) != n)
		abort();
	for (i = 0; i < n; i++) {
		if ((unsigned)f[i].rule >= TG_ANOMALY_SIZE || (i > 0 && f[i].rule <= f[i - 1].rule) ||
		    f[i].at[0] || !memchr(f[i].why, '\0', sizeof(f[i].why)) || !f[i].why[0])
			abort();
		for (k = 0; f[i].why[k]; k++)
			if ((unsigned char)f[i].why[k] < 0x20 || (unsigned char)f[i].why[k] > 0x7e)
				abort();
		seen |= TG_ANOMALY_BIT(f[i].rule);
	}
	for (i = 0; i < TG_ANOMALY_SIZE; i++) {
		size_t alone = tg_anomaly_scan_string((const char *)data, size, TG_ANOMALY_BIT(i), &one, 1);

		if (alone != !!(seen & TG_ANOMALY_BIT(i)) || (alone && one.rule != (enum tg_anomaly_rule)i))
			abort();
	}
	return 0;
}
