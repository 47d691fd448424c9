/*
 * The MCP server object: what every session of every transport shares
 * (the gate, the configured principal for stdio, the instructions).
 */
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"

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
	m->gate = gate;
	m->principal = strdup(opts && opts->principal ? opts->principal : "local");
	m->instructions = opts && opts->instructions ? strdup(opts->instructions) : NULL;
	m->max_inflight = opts && opts->max_inflight ? opts->max_inflight : 16;
	if (opts && opts->http_tokens && mcp_tokens_load(opts->http_tokens, &m->tokens, err) < 0) {
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
	free(m);
}
