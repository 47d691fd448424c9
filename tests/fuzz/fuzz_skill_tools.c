/*
 * libFuzzer entry point: a skill's toolgate.json (src/skills/tools.c,
 * docs/SKILLS.md, "Scripts as tools") on arbitrary bytes, in a skill that
 * ships one script. Never a crash; every tool accepted is named in the
 * skill's namespace, runs the skill's script, is given the skill's files
 * at /skill read-only and nothing else of the host, never the state; its
 * contract text parses or is refused with a message.
 *
 * Run with a corpus directory of its own first (libFuzzer writes there):
 *   build-fuzz/fuzz_skill_tools CORPUS tests/fuzz/seeds/fuzz_skill_tools
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/contract.h"
#include "toolgate/skill.h"

#define HOST "/tmp/fuzz-skill-copy/demo"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The completed contract of tool t kept what a skill may not change. */
static void judge(const struct tg_skill_tool *t)
{
	json_t *o = json_loads(t->contract, 0, NULL), *e = json_object_get(o, "executor");
	json_t *m = json_array_get(json_object_get(e, "mounts"), 0);
	const char *name = json_string_value(json_object_get(o, "name"));
	struct tg_contract *c;
	struct tg_error err;

	if (!o || !name || strncmp(name, "demo.", 5) != 0 || !name[5] ||
	    strcmp(json_string_value(json_object_get(e, "kind")), "command") != 0 ||
	    json_array_size(json_object_get(e, "mounts")) != 1 ||
	    strcmp(json_string_value(json_object_get(m, "host")), HOST) != 0 ||
	    strcmp(json_string_value(json_object_get(m, "inside")), TG_SKILL_MOUNT) != 0 ||
	    !json_is_false(json_object_get(m, "writable")) || json_object_get(e, "state"))
		abort();
	if (tg_contract_parse(t->contract, strlen(t->contract), t->origin, NULL, &c, &err) == 0) {
		if (c->executor != TG_EXEC_COMMAND || c->nmounts != 1 || c->mounts[0].writable ||
		    c->state)
			abort();
		tg_contract_free(c);
	} else if (!err.msg[0]) {
		abort();
	}
	json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char script[] = "import json, sys\nprint(json.dumps({}))\n";
	struct tg_skill_file files[2];
	struct tg_skill s;
	struct tg_skill_tool *t;
	struct tg_error err;
	char *text = malloc(size + 1);
	size_t n;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&s, 0, sizeof(s));
	memset(files, 0, sizeof(files));
	/* sorted by path, as tg_skill_load leaves them */
	files[0] = (struct tg_skill_file){ .path = "scripts/run.py", .data = script,
					   .size = sizeof(script) - 1, .executable = 1 };
	files[1] = (struct tg_skill_file){ .path = TG_SKILL_TOOLS_FILE, .data = text,
					   .size = size };
	s.dir = "fuzz";
	memcpy(s.meta.name, "demo", 5);
	s.files = files;
	s.n_files = 2;
	if (tg_skill_tools(&s, HOST, &t, &n, &err) == 0) {
		for (size_t i = 0; i < n; i++)
			judge(&t[i]);
		tg_skill_tools_free(t, n);
	} else if (!err.msg[0]) {
		abort();
	}
	free(text);
	return 0;
}
