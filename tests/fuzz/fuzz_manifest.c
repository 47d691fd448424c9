/*
 * libFuzzer entry point: what a skill's publisher and an operator hand
 * toolgate besides the skill itself: a manifest (SHA256SUMS,
 * src/skills/manifest.c) and a trust store (src/skills/trust.c), on
 * arbitrary bytes. Never a crash; an accepted manifest is canonical (its
 * paths sorted, each once, none leaving the folder), and an accepted
 * store written and read again is the same store.
 *
 * Run with a corpus directory of its own first (libFuzzer writes there):
 *   build-fuzz/fuzz_manifest CORPUS tests/fuzz/seeds/fuzz_manifest
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/skill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void manifest(const char *text, size_t size)
{
	struct tg_skill_entry *e;
	struct tg_error err;
	size_t n;

	if (tg_skill_manifest_parse(text, size, &e, &n, &err) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (e[i].path[0] == '/' || strstr(e[i].path, "//") ||
		    strcmp(e[i].path, "..") == 0 || strncmp(e[i].path, "../", 3) == 0 ||
		    strstr(e[i].path, "/../") ||
		    (i > 0 && strcmp(e[i - 1].path, e[i].path) >= 0))
			abort();
	}
	tg_skill_entries_free(e, n);
}

static void trust(const char *text, size_t size)
{
	struct tg_trust *t, *again;
	struct tg_error err;
	char *out;

	if (tg_trust_parse(text, size, "fuzz", &t, &err) < 0)
		return;
	out = tg_trust_format(t);
	if (!out || tg_trust_parse(out, strlen(out), "fuzz", &again, &err) < 0 || again->n != t->n)
		abort();
	for (size_t i = 0; i < t->n; i++)
		if (memcmp(&t->keys[i].key, &again->keys[i].key, sizeof(t->keys[i].key)) != 0 ||
		    strcmp(t->keys[i].publisher, again->keys[i].publisher) != 0 ||
		    t->keys[i].revoked != again->keys[i].revoked)
			abort();
	free(out);
	tg_trust_free(again);
	tg_trust_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	manifest((const char *)data, size);
	trust((const char *)data, size);
	return 0;
}
