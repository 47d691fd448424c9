/*
 * libFuzzer entry point: the skill scanner (src/skills/scan.c, deps.c,
 * the built-in rules) over one file of arbitrary bytes, as a script, as a
 * requirements file, as package.json and as prose. Never a crash or a
 * hang; every finding inside the file, its excerpt printable, its line
 * within the file's.
 *
 * Run with a corpus directory of its own first (libFuzzer writes there):
 *   build-fuzz/fuzz_skill_scan CORPUS tests/fuzz/seeds/fuzz_skill_scan
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/skill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tg_skill_rules *rules;

static void scan_as(const char *path, const uint8_t *data, size_t size)
{
	struct tg_skill_file f = { 0 };
	struct tg_skill s = { 0 };
	struct tg_skill_report r;
	struct tg_error err;
	size_t lines = 1;

	f.path = (char *)path;
	f.data = malloc(size + 1);
	if (!f.data)
		return;
	memcpy(f.data, data, size);
	f.data[size] = '\0';
	f.size = size;
	s.dir = (char *)"fuzz";
	s.files = &f;
	s.n_files = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (tg_skill_scan(&s, rules, &r, &err) < 0)
		abort();
	for (size_t i = 0; i < r.n; i++) {
		if (r.findings[i].line < 1 || r.findings[i].line > lines || !r.findings[i].rule)
			abort();
		for (const char *c = r.findings[i].excerpt; *c; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				abort();
	}
	tg_skill_report_release(&r);
	free(f.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;

	if (!rules && tg_skill_rules_new(NULL, &rules, &err) < 0)
		abort();
	scan_as("scripts/run.sh", data, size);
	scan_as("requirements.txt", data, size);
	scan_as("SKILL.md", data, size);
	scan_as("assets/package.json", data, size);
	return 0;
}
