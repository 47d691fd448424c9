/*
 * libFuzzer entry point: SKILL.md's frontmatter (src/skills/frontmatter.c)
 * on arbitrary bytes: YAML of every shape, anchors, aliases, tags, deep
 * nesting, invalid UTF-8, NULs. Never a crash or a hang; an accepted text
 * has the standard's fields as the standard has them.
 *
 * Run with a corpus directory of its own first (libFuzzer writes there):
 *   build-fuzz/fuzz_frontmatter CORPUS tests/fuzz/seeds/fuzz_frontmatter
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/skill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_skill_meta m;
	struct tg_error err;
	size_t len;

	if (tg_skill_frontmatter_parse((const char *)data, size, &m, &err) < 0) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	len = strlen(m.name);
	if (len == 0 || len > 64 || m.name[0] == '-' || m.name[len - 1] == '-' ||
	    strspn(m.name, "abcdefghijklmnopqrstuvwxyz0123456789-") != len ||
	    !m.description || !m.description[0] || m.body > size ||
	    (m.n_metadata && !m.metadata))
		abort();
	tg_skill_meta_release(&m);
	return 0;
}
