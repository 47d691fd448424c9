/*
 * A gate composed as serve composes it (src/cli/serve.c), for the unit
 * tests of the pipeline, plans and the MCP dispatch: a catalogue of
 * contracts written into a temporary directory, a real store and a real
 * audit log there, and a policy with its signing key when one is given.
 * The log is read back as the records it holds once the gate is closed.
 */
#ifndef TG_TEST_GATEFIX_H
#define TG_TEST_GATEFIX_H

#include <jansson.h>

#include "toolgate/anomaly.h"
#include "toolgate/audit.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"

/* A contract's common members, and a builtin executor, for JSON texts. */
#define FIX_OWNER "\"description\":\"d\",\"owner\":{\"team\":\"t\",\"contact\":\"c\"}"
#define FIX_ECHO "\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}"

struct fix_spec {
	const char *name;                /* of the temporary directory */
	/* contracts' JSON texts, NULL-terminated, each written as cat/N.json;
	 * one that begins with '@' is a file to copy (examples/catalog/...) */
	const char *const *contracts;
	const char *policy;              /* JSON text, or NULL: no policy */
	enum tg_anomaly_action anomalies;
	/* upstream declarations: NAME, JSON text, NAME, JSON text...,
	 * NULL-terminated, each written as cat/upstreams/NAME.json, mode 0600;
	 * "@FAKE@" in a text becomes tests/upstream's absolute path */
	const char *const *upstreams;
};

struct fix {
	char dir[64];
	char log[96];                    /* DIR/audit.log */
	struct tg_policy *policy;
	struct tg_signer *signer;
	struct tg_store *store;          /* at where */
	char where[600];                 /* DIR/state, or a PostgreSQL URL (unit_on_pg) */
	char schema[64];                 /* that URL's schema, "" for none */
	struct tg_audit *audit;
	struct tg_catalog *cat;
	struct tg_gate *gate;
};

/* Compose f as spec says: 0, or -1 (said on stderr, f closed and removed). */
int fix_open(struct fix *f, const struct fix_spec *spec);
/* Close the gate, the log (every record written), the store: the
 * directory stays, for the log to be read. Again is a no-op. */
void fix_close(struct fix *f);
/* fix_close, and the directory removed. */
void fix_remove(struct fix *f);

/* One call: principal calls tool with args (JSON text, NULL: none) holding
 * scopes (NULL: no policy's), under key (NULL: none). tg_gate_call's
 * result: 0 and OUT *r, or -1 and err. */
struct fix_call {
	const char *principal, *tool, *args, *scopes, *key, *today;
	int dry_run;
};
int fix_call(struct fix *f, const struct fix_call *c, struct tg_call_result *r,
	     struct tg_error *err);

/* The code and the ticket of a tool error's structured answer ("" when
 * it has none), copied into code and ticket (64 bytes each). */
void fix_error_code(const struct tg_call_result *r, char *code, char *ticket);

/* The records of the log at path, a JSON array (one object a line), or
 * NULL when a line is not a JSON object. */
json_t *fix_records(const char *path);
/* How many records of recs have kind, tool and outcome (NULL: any);
 * OUT *last (borrowed; may be NULL) the last of them. */
size_t fix_count(json_t *recs, const char *kind, const char *tool, const char *outcome,
		 json_t **last);
/* 1 if the log at path holds the text what anywhere, 0 if not, -1. */
int fix_log_holds(const char *path, const char *what);

/* The gate's tools (tg_gate_tools_json) parsed, once one is named want
 * (waited for up to 15 s; NULL and said on stderr when none is). */
json_t *fix_tools_with(struct tg_gate *g, const char *want);
/* The tool named name of a parsed list (borrowed), or NULL. */
json_t *fix_tool(json_t *list, const char *name);
/* 1 if the gate lists a tool named name now. */
int fix_has_tool(struct tg_gate *g, const char *name);
/* 0 once name is listed (present 1) or not (0), waited for up to 15 s; -1. */
int fix_wait_tool(struct tg_gate *g, const char *name, int present);
/* One call by alice (no policy's scopes), under key (NULL: none): its
 * result as text ("ok " or "error ", the content, the structured answer;
 * malloc'd), or NULL on a protocol error (code "protocol"); its error's
 * code and ticket into code and ticket (64 bytes each, "" when none). */
char *fix_call_text(struct fix *f, const char *tool_name, const char *args, const char *key,
		    char *code, char *ticket);
#endif
