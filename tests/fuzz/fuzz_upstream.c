/*
 * libFuzzer entry point: the upstream declaration loader (src/upstream/).
 * Declarations come from operators, often copied from a server's README:
 * any input must load or be refused with a message naming the file, in
 * bounded time and memory, and what lint says of one that loads is one
 * line a finding. Mount and credential paths are looked at with stat(2)
 * only; nothing is read, written or started.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/upstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A lint line is the declaration's field and why: one line, never a
 * control character of the input. */
static void lint_line(const char *line, void *ctx)
{
	(void)ctx;
	for (; *line; line++)
		if ((unsigned char)*line < 0x20 || *line == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_upstream *u = NULL;
	struct tg_error err;
	size_t i, k;

	if (tg_upstream_parse((const char *)data, size, "upstreams/fuzz.json", &u, &err) < 0) {
		if (!strstr(err.msg, "upstreams/fuzz.json"))
			abort(); /* every refusal names the file */
		return 0;
	}
	/* a loaded declaration has what its transport needs, and nothing of
	 * the other's */
	if (strcmp(u->name, "fuzz") != 0)
		abort();
	if (u->transport == TG_UPSTREAM_STDIO &&
	    (!u->argv || !u->argv[0] || !u->argv[0][0] || u->url || u->url_rule))
		abort();
	if (u->transport == TG_UPSTREAM_HTTP &&
	    (!u->url || !u->url_rule || u->argv || u->env || u->nmounts || u->egress ||
	     u->per_call))
		abort();
	/* no userinfo: an '@' may stand in the path, never before it */
	if (u->url) {
		const char *auth = strstr(u->url, "://") + 3;
		size_t n = strcspn(auth, "/?#");

		if (memchr(auth, '@', n) || n == 0)
			abort();
	}
	/* every exposed name lies in the namespace, and is served once */
	for (i = 0; i < u->ntools; i++) {
		const struct tg_upstream_tool *t = &u->tools[i];

		if (strncmp(t->exposed, "fuzz.", 5) != 0 || strlen(t->exposed) > 128 ||
		    (t->authority == TG_UPSTREAM_READ && (t->compensation_tool || t->irreversible)))
			abort();
		for (k = 0; k < i; k++)
			if (!t->hide && !u->tools[k].hide && strcmp(t->exposed, u->tools[k].exposed) == 0)
				abort();
	}
	/* what lint says of it, and of a listing against it */
	tg_upstream_lint(u, lint_line, NULL);
	{
		const char *names[4] = { "echo", "get-env", NULL, "a\x1b[b" };

		tg_upstream_check_listing(u, names, 4, lint_line, NULL);
	}
	tg_upstream_free(u);
	return 0;
}
