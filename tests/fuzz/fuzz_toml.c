/*
 * libFuzzer entry point: the strict TOML reader (src/util/toml.c) on
 * arbitrary bytes, an operator's .gitleaks.toml being input from outside.
 * Never a crash or a hang; a refusal names the file and a line; what is
 * accepted is a JSON object that dumps.
 *
 * Run with a corpus directory of its own first (libFuzzer writes there):
 *   build-fuzz/fuzz_toml CORPUS tests/fuzz/seeds/fuzz_toml
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	json_t *doc;
	char *text;

	if (toml_parse((const char *)data, size, "f.toml", &doc, &err) < 0) {
		if (strncmp(err.msg, "f.toml: ", 8) != 0 && strcmp(err.msg, "out of memory") != 0)
			abort();
		return 0;
	}
	text = json_dumps(doc, JSON_COMPACT);
	if (!json_is_object(doc) || !text)
		abort();
	free(text);
	json_decref(doc);
	return 0;
}
