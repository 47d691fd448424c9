/*
 * toolgate mcp: the Model Context Protocol server over the gate
 * (docs/MCP.md). A transport turns bytes into JSON-RPC messages and hands
 * them to a session; the session answers, and every tools/call goes
 * through the gate's pipeline.
 *
 *     struct tg_mcp *m;
 *     tg_mcp_new(gate, &opts, &m, &err);
 *     tg_mcp_serve_stdio(m, 0, 1, &err);   // until the client closes stdin
 *     tg_mcp_free(m);
 */
#ifndef TOOLGATE_MCP_H
#define TOOLGATE_MCP_H

#include <stddef.h>

#include "toolgate/error.h"
#include "toolgate/gate.h"
#include "toolgate/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol revisions a session can speak, newest first. */
#define TG_MCP_LATEST "2025-11-25"

struct tg_mcp_options {
	const char *principal;     /* who a stdio client is (configured, not claimed); NULL:
				    * "local", which with a policy that does not name it
				    * holds no scope. With the gate's policy (its
				    * tg_gate_options), one named must be the policy's, and
				    * has its scopes; HTTP callers then present tokens that
				    * `toolgate token issue` signed, and every call needs a
				    * scope for its tool. */
	const char *instructions;  /* for the client's model, or NULL */
	unsigned max_inflight;     /* concurrent tools/call per session; 0: 16 */
	/* Streamable HTTP: a file of bearer tokens' SHA-256 and the principals
	 * they stand for (docs/MCP.md); every request must then carry one.
	 * NULL: none required (without a policy, every HTTP request is the
	 * configured principal). */
	const char *http_tokens;
	/* A file of 64 hex digits: the key that seals the requestState of
	 * 2026-07-28 multi round-trip calls, shared by every instance that
	 * may see a retry. NULL: a random key of this process's own. */
	const char *state_key_file;
	/* Streamable HTTP: seconds a connection has to send a request's
	 * headers, from its start or the end of its last request (1 to 300;
	 * 0: 10), however slowly the bytes come (docs/MCP.md, "Connections"). */
	unsigned http_header_timeout;
};

struct tg_mcp;

/* A server over gate (borrowed: it must outlive the server), which it
 * asks who calls and what they may. OUT *out; -1 and err for a principal
 * that is not the gate's policy's, a bad state key or token file. */
TG_API int tg_mcp_new(struct tg_gate *gate, const struct tg_mcp_options *opts,
		      struct tg_mcp **out, struct tg_error *err);
TG_API void tg_mcp_free(struct tg_mcp *mcp);

/* Serve one client: newline-delimited JSON-RPC messages on in_fd, answers
 * on out_fd. Returns 0 when the client closes in_fd (calls in flight
 * finish first, within their time limits, and are answered), -1 and err
 * when out_fd fails (calls in flight are cancelled). */
TG_API int tg_mcp_serve_stdio(struct tg_mcp *mcp, int in_fd, int out_fd, struct tg_error *err);

/* Serve catalog from now on (the server's gate takes it; calls in flight
 * finish on the catalogue they started with), and tell the clients what
 * changed: list_changed notifications for the tools, prompts and
 * resources lists that differ, resources/updated for subscribed resources
 * whose contents differ. -1 and err if the gate refuses it (it is then
 * still the caller's). Thread-safe; one reload runs at a time. */
TG_API int tg_mcp_reload(struct tg_mcp *mcp, struct tg_catalog *catalog, struct tg_error *err);

/* Streamable HTTP on http://ADDR:PORT/mcp (docs/MCP.md), or https://,
 * served by threads of its own until tg_mcp_http_stop.
 *
 * A loopback address (127.0.0.0/8) needs nothing more. Any other needs
 * the server's callers authenticated (a token file or the gate's policy),
 * and either tls_cert and tls_key, or trust_proxy and public_url: bearer
 * tokens never cross a network in the clear. PORT 0 picks a free one
 * (tg_mcp_http_port says which). OUT *out; -1 and err naming the option
 * to add or fix, when it cannot listen, or out of memory or threads. */
struct tg_mcp_http_options {
	const char *tls_cert;    /* PEM chain, the server's first; with tls_key: HTTPS,
				  * TLS 1.2 and 1.3 only */
	const char *tls_key;     /* PEM private key, unencrypted, no access for others */
	const char *public_url;  /* the URL clients use, such as https://gw.example/mcp:
				  * requests must name it (Host, Origin). NULL:
				  * https://ADDR:PORT/mcp */
	const char *trust_proxy; /* comma-separated IPv4 addresses or networks of
				  * TLS-terminating reverse proxies, whose X-Forwarded-Host
				  * and X-Forwarded-Proto count; with it, no other
				  * non-loopback client is served. Needs public_url. */
	int no_console;          /* no approval console under /console/ (with a policy,
				  * it is served by default: docs/CONSOLE.md) */
};
struct tg_mcp_http;
TG_API int tg_mcp_http_start(struct tg_mcp *mcp, const char *addr, unsigned port,
			     const struct tg_mcp_http_options *opts, struct tg_mcp_http **out,
			     struct tg_error *err);
/* Read tls_cert and tls_key again (SIGHUP): handshakes from now on get
 * the new pair, connections made before keep theirs. 0 (also without
 * TLS); -1 and err, the old pair still served, when they do not load. */
TG_API int tg_mcp_http_reload_tls(struct tg_mcp_http *http, struct tg_error *err);
/* The URL clients will use for a server started with these arguments
 * (--public-url, normalised, else SCHEME://ADDR:PORT/mcp), into out (len
 * bytes): the resource OAuth tokens are for (RFC 8707). 0; 1 when it is
 * not known (port 0 and no public URL, or arguments tg_mcp_http_start
 * would refuse, saying why). Never fails otherwise. */
TG_API int tg_mcp_http_resource(const char *addr, unsigned port,
				const struct tg_mcp_http_options *opts, char *out, size_t len,
				struct tg_error *err);
/* The URL of the MCP endpoint clients use, into out (len bytes). */
TG_API void tg_mcp_http_url(const struct tg_mcp_http *http, char *out, size_t len);
/* The approval console's URL (docs/CONSOLE.md) into out: 1 when it is
 * served (a policy, and no no_console), else 0 and out empty. */
TG_API int tg_mcp_http_console_url(const struct tg_mcp_http *http, char *out, size_t len);
TG_API unsigned tg_mcp_http_port(const struct tg_mcp_http *http);
/* Stop listening, end every session (cancelling their calls), free. */
TG_API void tg_mcp_http_stop(struct tg_mcp_http *http);

#ifdef __cplusplus
}
#endif
#endif
