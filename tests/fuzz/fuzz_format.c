/*
 * libFuzzer entry point: the "format" checkers that parse (src/schema/
 * format_uri.c, format_idn.c, format.c) on arbitrary strings. Never a
 * crash, a hang or a read past the string; and what the grammars say of
 * each other holds: every URI is a URI reference, an IRI and an IRI
 * reference; every IRI an IRI reference; every URI reference an IRI
 * reference. (A hostname need not be an idn-hostname: "ab--cd" is the
 * one and not the other.)
 *
 * Run with a corpus directory of its own first:
 *   build-fuzz/fuzz_format CORPUS tests/fuzz/seeds/fuzz_format
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const all[] = {
		"uri", "uri-reference", "iri", "iri-reference", "uri-template", "hostname",
		"idn-hostname", "email", "idn-email", "ipv4", "ipv6", "date-time", "duration",
		"json-pointer", "relative-json-pointer", "uuid",
	};
	const char *s = (const char *)data;
	int v[sizeof(all) / sizeof(all[0])];
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		v[i] = format_check(all[i], s, size);
	/* uri => uri-reference, iri; iri => iri-reference; uri-reference => iri-reference */
	if ((v[0] && (!v[1] || !v[2])) || (v[2] && !v[3]) || (v[1] && !v[3]))
		abort();
	return 0;
}
