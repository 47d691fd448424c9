/*
 * libFuzzer entry point: a call's arguments walked with an input schema
 * (src/auth/anomaly.c), both from the input: the bytes before the first
 * NUL are the schema, the rest the arguments (a call's arguments and a
 * contract's schema are both outside input). Never a crash, nor a walk
 * without end (references to themselves, deep nesting); every finding
 * kept has a rule, a pointer that is valid UTF-8 and a printable why; the
 * findings become JSON; a baseline judges the report and learns it.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/anomaly_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct anomaly_baselines *b;
	const uint8_t *nul = memchr(data, 0, size);
	size_t slen = nul ? (size_t)(nul - data) : 0, i, k;
	json_t *schema = nul ? json_loadb((const char *)data, slen, 0, NULL) : NULL;
	const char *args = nul ? (const char *)nul + 1 : (const char *)data;
	size_t alen = nul ? size - slen - 1 : size;
	json_t *a = json_loadb(args, alen, JSON_DECODE_ANY, NULL), *f;
	struct anomaly_report r;

	if (!b)
		b = anomaly_baselines_new();
	if (!a) {
		json_decref(schema);
		return 0;
	}
	anomaly_scan_arguments(schema, a, alen, TG_ANOMALY_ALL,
			       size & 1 ? TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS) : 0, &r);
	if (r.n > r.total || r.n > ANOMALY_MAX_FINDINGS)
		abort();
	for (i = 0; i < r.n; i++) {
		if ((unsigned)r.f[i].rule >= TG_ANOMALY_RULES || strlen(r.f[i].at) >= sizeof(r.f[i].at))
			abort();
		for (k = 0; r.f[i].why[k]; k++)
			if ((unsigned char)r.f[i].why[k] < 0x20 || (unsigned char)r.f[i].why[k] > 0x7e)
				abort();
	}
	f = anomaly_findings_json(&r);
	if (!f || json_array_size(f) != r.n) /* a pointer that is not UTF-8 is lost here */
		abort();
	json_decref(f);
	anomaly_judge(b, NULL, "fuzz", TG_ANOMALY_ALL, &r);
	if (!r.total)
		anomaly_learn(b, "fuzz", r.size, r.entropy, r.has_entropy);
	json_decref(a);
	json_decref(schema);
	return 0;
}
