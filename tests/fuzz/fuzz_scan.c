/*
 * libFuzzer entry point: scanning what a model reads of a tool
 * (src/catalog/scan.c), on arbitrary bytes (invalid UTF-8, NULs, escapes,
 * tag characters). Never a crash; every finding within the text, with a
 * rule and a printable excerpt; the count the same whether or not there
 * is room for the findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_scan_finding f[8];
	size_t n = tg_scan_text((const char *)data, size, "fuzz", f, 8), i, k;

	if (tg_scan_text((const char *)data, size, "fuzz", NULL, 0) != n)
		abort();
	for (i = 0; i < n && i < 8; i++) {
		if (!f[i].rule || (f[i].offset > size && strcmp(f[i].rule, "not_scanned") != 0))
			abort();
		for (k = 0; f[i].excerpt[k]; k++)
			if ((unsigned char)f[i].excerpt[k] < 0x20 || (unsigned char)f[i].excerpt[k] > 0x7e)
				abort();
	}
	return 0;
}
