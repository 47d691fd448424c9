/*
 * libFuzzer entry point: the configuration file (src/cli/config.c), what
 * an operator writes in /etc/toolgate/toolgate.conf. Whatever the bytes,
 * the reader keeps them or refuses them with a reason naming the file and
 * a line, never crashes; and what it keeps is what the table allows: a
 * known key, a value without control characters, a path made absolute.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const options[] = { "catalog", "state", "http", "no-console", "stdio",
						"public-url", "warm" };
	char *text = malloc(size + 1), why[600];
	const struct cli_config_value *v;
	size_t i;
	int rc;

	if (!text || size > CLI_CONFIG_MAX_BYTES) {
		free(text);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	rc = cli_config_parse("fuzz.conf", text, size, why, sizeof(why));
	if (rc < 0 && strncmp(why, "fuzz.conf", 9) != 0 && strcmp(why, "out of memory") != 0)
		abort(); /* a refusal names the file */
	for (i = 0; rc == 0 && i < sizeof(options) / sizeof(options[0]); i++) {
		v = cli_config_for("serve", options[i]);
		if (!v)
			continue;
		if (!*v->value || strpbrk(v->value, "\n\r\t"))
			abort();
		if ((strcmp(options[i], "catalog") == 0 || strcmp(options[i], "state") == 0) &&
		    v->value[0] != '/')
			abort();
	}
	cli_config_free();
	free(text);
	return 0;
}
