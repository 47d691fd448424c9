/*
 * The MCP server object: what every session of every transport shares
 * (the gate, the configured principal for stdio, the instructions).
 */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "util/file.h"

/* The key that seals MRTR requestStates: from a file of 64 hex digits,
 * so that every instance behind one load balancer opens the others'
 * states; without one, random for this process (a state then only
 * works on the instance that issued it). */
static int state_key(struct tg_mcp *m, const char *path, struct tg_error *err)
{
	size_t len, bin_len;
	char *text;
	int rc = 0;

	if (!path) {
		randombytes_buf(m->state_key, sizeof(m->state_key));
		return 0;
	}
	text = file_read_all(path, 4096, 1, &len);
	if (!text)
		return tg_error_set(err, TG_ERR_INVALID, "state key %s: %s", path, strerror(errno));
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = '\0';
	if (len != 2 * sizeof(m->state_key) ||
	    sodium_hex2bin(m->state_key, sizeof(m->state_key), text, len, NULL, &bin_len, NULL) != 0 ||
	    bin_len != sizeof(m->state_key))
		rc = tg_error_set(err, TG_ERR_INVALID,
				  "state key %s: want one line of 64 hex digits (32 random bytes; "
				  "e.g. head -c 32 /dev/urandom | xxd -p -c 64)", path);
	sodium_memzero(text, len);
	free(text);
	return rc;
}

int tg_mcp_new(struct tg_gate *gate, const struct tg_mcp_options *opts, struct tg_mcp **out,
	       struct tg_error *err)
{
	struct tg_mcp *m = calloc(1, sizeof(*m));

	tg_error_clear(err);
	*out = NULL;
	if (!m)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (opts && opts->principal && !mcp_principal_valid(opts->principal)) {
		free(m);
		return tg_error_set(err, TG_ERR_INVALID,
				    "principal '%.64s': 1 to %d of A-Z a-z 0-9 . _ @ -",
				    opts->principal, MCP_MAX_PRINCIPAL - 1);
	}
	if (sodium_init() < 0) {
		free(m);
		return tg_error_set(err, TG_ERR_NOMEM, "libsodium cannot start");
	}
	m->gate = gate;
	m->principal = strdup(opts && opts->principal ? opts->principal : "local");
	m->instructions = opts && opts->instructions ? strdup(opts->instructions) : NULL;
	m->max_inflight = opts && opts->max_inflight ? opts->max_inflight : 16;
	if (state_key(m, opts ? opts->state_key_file : NULL, err) < 0 ||
	    (opts && opts->http_tokens && mcp_tokens_load(opts->http_tokens, &m->tokens, err) < 0)) {
		tg_mcp_free(m);
		return -1;
	}
	if (!m->principal || (opts && opts->instructions && !m->instructions)) {
		tg_mcp_free(m);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	*out = m;
	return 0;
}

void tg_mcp_free(struct tg_mcp *m)
{
	if (!m)
		return;
	free(m->principal);
	free(m->instructions);
	mcp_tokens_free(m->tokens);
	sodium_memzero(m->state_key, sizeof(m->state_key));
	free(m);
}
