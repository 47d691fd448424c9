/*
 * libFuzzer entry point: the strict TOML reader (src/util/toml.c) on
 * arbitrary bytes, an operator's .gitleaks.toml being input from outside.
 * Never a crash or a hang; a refusal is TG_ERR_INVALID naming the file,
 * the line and the column (or, for the whole text, its size or its
 * encoding), at a line and column the text has, never "out of memory"
 * (nothing fails allocations here: a jansson refusal misreported as one,
 * say); what is accepted is a JSON object that dumps.
 *
 * Run with a corpus directory of its own first (libFuzzer writes there):
 *   build-fuzz/fuzz_toml CORPUS tests/fuzz/seeds/fuzz_toml
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal's line and column within the text: 1 if line L exists and
 * has at least C - 1 characters (C may point just past its end). */
static int within(const uint8_t *data, size_t size, unsigned line, unsigned col)
{
	size_t k = 0, chars = 0;

	for (unsigned l = 1; l < line; l++) {
		const uint8_t *nl = memchr(data + k, '\n', size - k);

		if (!nl)
			return 0;
		k = (size_t)(nl - data) + 1;
	}
	for (; k < size && data[k] != '\n'; k++)
		chars += (data[k] & 0xC0) != 0x80;
	return line >= 1 && col >= 1 && col <= chars + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	json_t *doc;
	char *text;
	unsigned line, col;
	int at = 0;

	if (toml_parse((const char *)data, size, "f.toml", &doc, &err) < 0) {
		/* nothing fails allocations here: a NOMEM is a misreported refusal */
		if (doc || err.code == TG_ERR_NOMEM)
			abort();
		if (sscanf(err.msg, "f.toml: line %u, column %u: %n", &line, &col, &at) == 2 &&
		    at > 0) {
			if (err.code != TG_ERR_INVALID || !within(data, size, line, col))
				abort();
		} else if (err.code != TG_ERR_LIMIT &&
			   strcmp(err.msg, "f.toml: not UTF-8 text (or a NUL in it)") != 0) {
			abort();
		}
		return 0;
	}
	text = json_dumps(doc, JSON_COMPACT);
	if (!json_is_object(doc) || !text)
		abort();
	free(text);
	json_decref(doc);
	return 0;
}
