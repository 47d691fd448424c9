/*
 * libFuzzer entry point: the canonical form of pinned tool definitions
 * (src/schema/jcs.c, src/upstream/pin.c) on arbitrary bytes. Never a
 * crash; text the canonicalizer accepts has one canonical form, so the
 * canonical text of its canonical text is itself (RFC 8785's forms are
 * fixed points); and a definition that loads hashes its canonical text.
 */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/jcs.h"
#include "toolgate/upstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_pin_definition d;
	struct tg_error err;
	char why[200], *once, *twice;
	unsigned char h[crypto_hash_sha256_BYTES];
	char hex[65];
	size_t n1, n2;

	if (jcs_text((const char *)data, size, 1 << 20, &once, &n1, why, sizeof(why)) == 0) {
		if (strlen(once) != n1)
			abort();
		if (jcs_text(once, n1, 1 << 20, &twice, &n2, why, sizeof(why)) != 0)
			abort(); /* its own output refused */
		if (n1 != n2 || memcmp(once, twice, n1) != 0)
			abort(); /* not a fixed point */
		free(twice);
		free(once);
	}
	if (tg_upstream_definition((const char *)data, size, &d, &err) == 0) {
		if (!tg_upstream_tool_name_ok(d.tool))
			abort();
		crypto_hash_sha256(h, (const unsigned char *)d.canonical, strlen(d.canonical));
		sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
		if (strcmp(hex, d.sha256) != 0)
			abort();
		tg_pin_definition_release(&d);
	} else if (!err.msg[0]) {
		abort(); /* every refusal says why */
	}
	return 0;
}
