/*
 * toolgate upstreams: an MCP server people already run, declared to be put
 * behind the gate (docs/UPSTREAMS.md). One JSON file each,
 * upstreams/NAME.json in the catalogue directory, where NAME is the
 * namespace its tools are exposed under (NAME.tool). A declaration says how
 * the server is reached (a command over stdio, in a sandbox, or a URL over
 * Streamable HTTP), the secrets the gateway injects (paths to files, never
 * the secrets themselves), what each of its tools may do, and how its
 * definitions are pinned.
 *
 *     struct tg_upstream *u;
 *     if (tg_upstream_load("cat/upstreams/everything.json", &u, &err) < 0)
 *             fprintf(stderr, "%s\n", err.msg); // names file, field and reason
 *
 * Loading reads and checks the file; it starts nothing. The catalogue
 * (toolgate/catalog.h) loads every declaration of its upstreams/ folder.
 */
#ifndef TOOLGATE_UPSTREAM_H
#define TOOLGATE_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"
#include "toolgate/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the server is reached: a command started by the gateway, spoken to
 * on its stdin and stdout, or a URL (Streamable HTTP). */
enum tg_upstream_transport { TG_UPSTREAM_STDIO = 1, TG_UPSTREAM_HTTP = 2 };

/* What is done when a tool's definition changes under its name: refused
 * until a person accepts it (strict, the default), served while a ticket
 * is open (review), nothing (off). */
enum tg_upstream_pin { TG_UPSTREAM_PIN_STRICT = 0, TG_UPSTREAM_PIN_REVIEW, TG_UPSTREAM_PIN_OFF };

/* The protocol era the gateway speaks to the server ("protocol"): the
 * newest both speak (auto, the default: server/discover is tried, and a
 * server that does not answer it as a 2026-07-28 server is initialized
 * as a session-era one), or only the one named. */
enum tg_upstream_protocol {
	TG_UPSTREAM_PROTOCOL_AUTO = 0,     /* "auto" */
	TG_UPSTREAM_PROTOCOL_MODERN,       /* "2026-07-28": server/discover, no session */
	TG_UPSTREAM_PROTOCOL_SESSION,      /* "2025-11-25": initialize (down to 2025-03-26) */
};

/* A tool's authority. Write is the default: a tool whose declaration does
 * not say read is held for approval, whatever its readOnlyHint says. */
enum tg_upstream_authority { TG_UPSTREAM_WRITE = 0, TG_UPSTREAM_READ = 1 };

/* Whether a call may run as an MCP task, as a contract's "tasks" (the same
 * values as enum tg_task_support): a write's default is optional, a
 * read's forbidden. */
enum tg_upstream_tasks {
	TG_UPSTREAM_TASKS_FORBIDDEN = 0,
	TG_UPSTREAM_TASKS_OPTIONAL,
	TG_UPSTREAM_TASKS_REQUIRED,
};

/* What a server may ask the gateway's client during a call, passed on
 * to the client the call came from (bits of tg_upstream.relay; none by
 * default: every request of the server is refused). */
enum tg_upstream_relay {
	TG_UPSTREAM_RELAY_SAMPLING = 1,     /* "sampling": sampling/createMessage */
	TG_UPSTREAM_RELAY_ELICITATION = 2,  /* "elicitation": elicitation/create */
	TG_UPSTREAM_RELAY_ROOTS = 4,        /* "roots": roots/list */
};

/* Limits of the declaration itself (docs/UPSTREAMS.md, "Limits"). */
#define TG_UPSTREAM_MAX_BYTES (256u << 10) /* the file */
#define TG_UPSTREAM_MAX_TOOLS 1024         /* entries of "tools" */
#define TG_UPSTREAM_MAX_ARGV 64
#define TG_UPSTREAM_MAX_URL 2048

struct tg_upstream_mount {
	char *host;                  /* absolute, existed when the declaration loaded */
	char *inside;                /* absolute; the host path when not given */
	int writable;                /* read-only unless "writable": true */
};

/* A secret the gateway injects: an environment variable of a stdio
 * server, or a header of the requests to an HTTP one. Only the path of
 * the file is held: a regular file of the caller's, mode 0600 or stricter
 * when the declaration loaded, read by whatever starts the server. */
struct tg_upstream_credential {
	char *name;                  /* the variable's or the header's name */
	char *path;                  /* absolute */
};

struct tg_upstream_tool {
	char *name;                  /* the upstream's own name for it */
	char *exposed;               /* what agents call: NAME.name, or NAME.rename */
	enum tg_upstream_authority authority;
	int dry_run;                 /* 1: the server shows what a call would do when
				      * dry_run_argument is true; 0 unsupported (the default) */
	char *dry_run_argument;      /* the boolean argument that asks for it, or NULL */
	char *compensation_tool;     /* the tool that undoes a write, or NULL */
	char *compensation_args;     /* its argument mapping, JSON text, or NULL */
	char *irreversible;          /* the reason nothing undoes it, or NULL */
	enum tg_upstream_tasks tasks;
	int hide;                    /* never listed nor callable */
};

struct tg_upstream {
	char *file;                  /* where it was loaded from */
	char *name;                  /* the namespace: [a-z][a-z0-9-]{0,31}, the file's NAME */
	enum tg_upstream_transport transport;

	/* TG_UPSTREAM_STDIO */
	char **argv;                 /* NULL-terminated, 1 to 64 entries */
	char **env;                  /* "NAME=VALUE", NULL-terminated; NULL for none */
	char *workdir;               /* absolute, inside the sandbox; NULL: the default */
	enum tg_tier tier;           /* standard unless the declaration says strict */
	struct tg_upstream_mount *mounts;
	size_t nmounts;
	char **egress;               /* "host:port", NULL-terminated; NULL for none */
	uint64_t memory, timeout_ms; /* 0: the tier's defaults */
	uint64_t output;             /* limits.output; 0: 4 MiB */
	unsigned millicpus, pids;
	int per_call;                /* a fresh server for each call */

	/* TG_UPSTREAM_HTTP */
	char *url;                   /* http:// or https://, a host, no userinfo */
	char *url_rule;              /* "host:port" of url: the egress rule it is reached by */

	/* environment variables (stdio) or headers (http) */
	struct tg_upstream_credential *credentials;
	size_t ncredentials;

	struct tg_upstream_tool *tools; /* those declared; a tool not declared is a write */
	size_t ntools;
	enum tg_upstream_pin pin;
	enum tg_upstream_protocol protocol;
	unsigned relay;              /* enum tg_upstream_relay bits: what its requests may
				      * ask the caller's client; 0: nothing */
	char sha256[65];             /* of the file's bytes, hex: the same file, the same
				      * declaration (a reload keeps its server running) */
};

/* Load and check one declaration, path ending in NAME.json (at most
 * TG_UPSTREAM_MAX_BYTES). Nothing is started and no credential is read.
 * OUT *out. -1 with err naming the file, the field and the reason: an
 * unknown field (by its path: sandbox.mounts[1].hots), a NAME outside
 * [a-z][a-z0-9-]{0,31} or a "name" other than it, a missing argv or url,
 * a field of the other transport, a url with userinfo or without a host,
 * a mount whose host path does not exist, an egress rule without a port,
 * a credential file that is not a regular file of the caller's with mode
 * 0600 or stricter or that resolves under /proc or /dev, two tools exposed
 * under one name, a relay entry other than sampling, elicitation or roots
 * (or one named twice), a string over its bound. */
TG_API int tg_upstream_load(const char *path, struct tg_upstream **out, struct tg_error *err);
/* The same from text; origin is the file's path (its base name gives NAME)
 * and names it in errors. */
TG_API int tg_upstream_parse(const char *text, size_t len, const char *origin,
			     struct tg_upstream **out, struct tg_error *err);
TG_API void tg_upstream_free(struct tg_upstream *upstream);

TG_API const char *tg_upstream_transport_name(enum tg_upstream_transport transport);
TG_API const char *tg_upstream_pin_name(enum tg_upstream_pin pin);
/* name is an MCP tool name, as a declaration's tools and renames are: 1
 * to 128 of A-Z a-z 0-9 _ . - */
TG_API int tg_upstream_tool_name_ok(const char *name);

/* ---- what loads but would not work (docs/UPSTREAMS.md, "Commands") ---------- */

/* Each finds what a declaration that loads still gets wrong and calls
 * report with one line a finding, naming the field and why, never an
 * argv, env or url value of the declaration's (a mount's host path is
 * quoted) nor the file (the caller adds it); each returns the number of
 * findings. */

/* What `catalog lint` says of u: an argv that starts with a launcher
 * fetching its package at each start (npx, pnpx, uvx, bunx, pipx, npm
 * exec or x, pnpm dlx, yarn dlx, bun x, uv tool; after an env) while the sandbox has no network (no
 * sandbox.egress rule); an argv entry, an env value or the url in which
 * the redactor (toolgate/redact.h) finds a secret, named by its rule
 * ("env.GITHUB_TOKEN: holds what looks like a secret (github_token): put
 * it in a 0600 file and name it in credentials.env"). */
TG_API int tg_upstream_lint(const struct tg_upstream *u,
			    void (*report)(const char *line, void *ctx), void *ctx);
/* Each writable mount the sandbox's user cannot write now
 * (tg_sandbox_bind_writable with the runner's identity: the caller, or
 * nobody for a root caller): "sandbox.mounts[0]: writable, but /srv/x is
 * not writable by the sandbox's user (uid 65534: chown 65534:65534
 * /srv/x)". A mount gone since the declaration loaded is not said: the
 * server's start refuses it. */
TG_API int tg_upstream_check_mounts(const struct tg_upstream *u,
				    void (*report)(const char *line, void *ctx), void *ctx);
/* Each tool u declares that none of the n names of a listing is (an entry
 * may be NULL: a tool listed without a name): "tools.get_env: declared,
 * but the server lists no such tool (did you mean get-env?)", the nearest
 * listed name that is a tool name when it is at most 2 edits away and
 * those are at most a third of the declared name's length (asked for the
 * first 64 such tools only). */
TG_API int tg_upstream_check_listing(const struct tg_upstream *u, const char *const *listed,
				     size_t n, void (*report)(const char *line, void *ctx),
				     void *ctx);

/* ---- pins (docs/UPSTREAMS.md, "Pins") ------------------------------------------ */

/* A tool's definition as pinned: what an upstream's tools/list says of
 * it, reduced to the members that tell a model what the tool is and
 * does, {name, title, description, inputSchema, outputSchema,
 * annotations} (those absent are left out, nothing else is kept), in
 * RFC 8785 (JCS) canonical form, and that text's SHA-256. */
#define TG_UPSTREAM_MAX_DEFINITION (1u << 20) /* bytes of a definition, and of its canonical form */
#define TG_UPSTREAM_MAX_LISTED 1024           /* tools of one listing compared */

struct tg_pin_definition {
	char *tool;                  /* its "name" (malloc'd) */
	char *canonical;             /* the canonical text (malloc'd) */
	char sha256[65];             /* of canonical, lower-case hex */
};

/* The definition json (len bytes, one tools/list entry, at most
 * TG_UPSTREAM_MAX_DEFINITION) into OUT *out. -1 and err: TG_ERR_INVALID
 * for text that is not a JSON object, a member named twice, a "name" that
 * is not an MCP tool name (tg_upstream_tool_name_ok), a value canonical
 * JSON cannot hold (a NUL in a string, a number past a double's range);
 * TG_ERR_LIMIT past the bound; TG_ERR_NOMEM. Each message names the tool
 * when it is known. */
TG_API int tg_upstream_definition(const char *json, size_t len, struct tg_pin_definition *out,
				  struct tg_error *err);
/* Frees what d holds and clears it; a cleared one is a no-op. */
TG_API void tg_pin_definition_release(struct tg_pin_definition *d);

/* A pin the comparison is given: a tool's name and the SHA-256 (hex) of
 * its pinned definition, as the store keeps them (tg_store_pin_list). */
struct tg_pin_ref {
	const char *tool;
	const char *sha256;
};

/* What became of a tool between its pin and a listing. A definition is
 * compared as a whole: a renamed tool is one removed and one added. */
enum tg_pin_change {
	TG_PIN_UNCHANGED = 0,        /* listed with its pinned definition */
	TG_PIN_CHANGED,              /* listed with another definition */
	TG_PIN_ADDED,                /* listed, never pinned */
	TG_PIN_REMOVED,              /* pinned, not listed */
};

struct tg_pin_verdict {
	const char *tool;            /* borrowed from the listing or the pins */
	enum tg_pin_change change;
	size_t listed;               /* its index in the listing; SIZE_MAX when removed */
	size_t pin;                  /* its index in the pins; SIZE_MAX when added */
};

/* The n definitions listed against the npins pins: OUT *out (malloc'd;
 * free it, it borrows its names from both), *nout: one verdict for each
 * tool listed, in the listing's order, then one for each pin not listed,
 * in the pins' order. -1 and err: TG_ERR_LIMIT for more than
 * TG_UPSTREAM_MAX_LISTED of either, TG_ERR_INVALID for a tool listed or
 * pinned twice, TG_ERR_NOMEM. */
TG_API int tg_upstream_pins_compare(const struct tg_pin_definition *listed, size_t n,
				    const struct tg_pin_ref *pins, size_t npins,
				    struct tg_pin_verdict **out, size_t *nout,
				    struct tg_error *err);
TG_API const char *tg_pin_change_name(enum tg_pin_change change);

#ifdef __cplusplus
}
#endif
#endif
