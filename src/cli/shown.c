/*
 * What the toolgate command prints that others chose: a tool's result, an
 * agent's tool name or argument quoted by an error, the audit log's lines.
 * Each is printed with the characters a terminal would obey or reorder
 * (bidi controls, escape sequences, tag, zero-width characters and
 * variation selectors: util/hidden.h) escaped, JSON as JSON escapes (the
 * same JSON), words in their display form; a server's text as the log
 * shows it (redacted, hidden characters as '?'). It must never print them
 * raw, not even out of memory: then it says so instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "toolgate/redact.h"
#include "util/hidden.h"

void cli_put_json(FILE *f, const char *json)
{
	char *safe = hidden_json(json, strlen(json));

	fputs(safe ? safe : "{\"error\":\"out of memory: not shown\"}\n", f);
	free(safe);
}

void cli_put_text(FILE *f, const char *text)
{
	char *shown = hidden_display_new(text, strlen(text), NULL);

	fputs(shown ? shown : "(out of memory: not shown)", f);
	free(shown);
}

void cli_say(FILE *f, const char *who, const char *text)
{
	fprintf(f, "toolgate %s: ", who);
	cli_put_text(f, text);
	fputc('\n', f);
}

void cli_put_shown(FILE *f, const char *text)
{
	size_t n = strlen(text), cap = n * 3 + 64;
	char *shown = malloc(cap);

	/* a redaction's marker may be longer than what it hides */
	if (!shown) {
		fputs("(out of memory: not shown)", f);
		return;
	}
	tg_redact_shown(text, n, shown, cap);
	fputs(shown, f);
	free(shown);
}
