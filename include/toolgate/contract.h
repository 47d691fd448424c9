/*
 * toolgate contracts: one JSON file per tool version, saying what the tool
 * takes, returns, may fail with, who owns it, whether it reads or writes,
 * how it runs, and how a write is previewed and undone. The format is
 * documented field by field in docs/contracts.md.
 *
 *     struct tg_contract *c;
 *     if (tg_contract_load(path, NULL, &c, &err) < 0)
 *             fprintf(stderr, "%s\n", err.msg); // names file, field and reason
 */
#ifndef TOOLGATE_CONTRACT_H
#define TOOLGATE_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"
#include "toolgate/sandbox.h"
#include "toolgate/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tg_authority { TG_AUTHORITY_READ = 1, TG_AUTHORITY_WRITE = 2 };
enum tg_risk { TG_RISK_LOW = 1, TG_RISK_MEDIUM, TG_RISK_HIGH, TG_RISK_CRITICAL };
/* How a tool runs (docs/contracts.md, "executor"): a builtin in the
 * gateway, a command in a sandbox, or a plan ("plan") or a plan's undoing
 * ("plan.undo"), which the gate runs itself as a saga of other tools'
 * calls (docs/PIPELINE.md, "Sagas"). */
enum tg_executor_kind {
	TG_EXEC_BUILTIN = 1,
	TG_EXEC_COMMAND = 2,
	TG_EXEC_PLAN = 3,
	TG_EXEC_PLAN_UNDO = 4,
	TG_EXEC_UPSTREAM = 5,        /* a tool of an upstream MCP server: never in a
				      * contract file, made by the gate from the
				      * server's listing (tg_catalog_upstream_tool) */
};
/* What a command tool is given of the gateway's --workspace, at
 * /workspace (executor.workspace): nothing (the default), a read-only
 * bind, or a writable one (a write tool's approved run; read-only in a
 * dry run). */
enum tg_workspace { TG_WORKSPACE_NONE = 0, TG_WORKSPACE_READ, TG_WORKSPACE_WRITE };

struct tg_semver {
	unsigned major, minor, patch;
	char pre[64];                /* pre-release, "" if none */
};

struct tg_contract_error {           /* one typed error the tool may return */
	char *code;
	char *meaning;
	int retryable;
};

struct tg_contract_mount {
	char *host, *inside;
	int writable;
};

/* An input property mirrored into an HTTP header (MCP 2026-07-28,
 * "x-mcp-header"): the property's value travels as Mcp-Param-{name}. */
enum tg_param_type { TG_PARAM_STRING = 1, TG_PARAM_INTEGER, TG_PARAM_BOOLEAN };

#define TG_MAX_PARAM_HEADERS 32      /* annotations in one input schema */
#define TG_MAX_PARAM_DEPTH 16        /* properties from the root to one */

struct tg_param_header {
	char *name;                  /* "Region": the header Mcp-Param-Region */
	char **path;                 /* the properties keys from the root */
	size_t depth;                /* how many (1 for a top-level property) */
	enum tg_param_type type;
};

/* dry_run "overlay": the tool has no dry run of its own; the gate runs
 * it with its writable mounts on overlays and reports the changed files
 * (docs/PIPELINE.md, "Dry run"). */
#define TG_DRY_RUN_OVERLAY 2

/* Whether a call may run as an MCP task (tools/list's
 * execution.taskSupport): a write's default is optional (a call held for
 * approval becomes a task that ends when a person decides), a read's
 * forbidden. */
enum tg_task_support {
	TG_TASKS_FORBIDDEN,
	TG_TASKS_OPTIONAL,
	TG_TASKS_REQUIRED,
};

struct tg_contract {
	char *file;                  /* where it was loaded from */
	char *name;                  /* MCP tool-name rules: [A-Za-z0-9_.-]{1,128} */
	struct tg_semver version;
	char version_text[80];
	char *title, *description;
	char *owner_team, *owner_contact;
	enum tg_authority authority;
	enum tg_risk risk;
	int idempotent;
	int open_world;              /* reaches outside the host (annotations) */
	struct tg_schema *input_schema, *output_schema; /* output may be NULL */
	char *input_schema_text, *output_schema_text;   /* as written, for MCP */
	void *input_schema_doc;      /* the library's own: the input schema parsed, for
				      * the anomaly rules' walk (src/catalog/contract_doc.h) */
	struct tg_contract_error *errors;
	size_t nerrors;
	enum tg_executor_kind executor;
	char *builtin;               /* TG_EXEC_BUILTIN: its name; NULL otherwise */
	char *upstream;              /* TG_EXEC_UPSTREAM: the upstream's name (its namespace) */
	char *upstream_tool;         /* TG_EXEC_UPSTREAM: the server's own name of the tool */
	char *upstream_declaration;  /* TG_EXEC_UPSTREAM: the declaration's file's SHA-256 (hex):
				      * a call runs on the server declared so, never another */
	char *upstream_definition;   /* TG_EXEC_UPSTREAM: the SHA-256 (hex) of the tool's
				      * definition as listed (tg_upstream_definition) */
	char *dry_run_argument;      /* TG_EXEC_UPSTREAM with dry_run 1: the boolean argument
				      * set true to ask the server for a dry run */
	char **argv;                 /* TG_EXEC_COMMAND: NULL-terminated */
	enum tg_tier tier;           /* TG_EXEC_COMMAND: the sandbox's */
	int output_mcp;              /* TG_EXEC_COMMAND: stdout is an MCP tool result */
	int interactive;             /* TG_EXEC_COMMAND: stdin stays open for answers */
	int prestart;                /* TG_EXEC_COMMAND: a warm sandbox starts the
				      * command before its call (docs/SANDBOX.md) */
	enum tg_workspace workspace; /* TG_EXEC_COMMAND: none, read or write (a write tool) */
	int state;                   /* TG_EXEC_COMMAND, a write tool: its family's state
				      * directory at /state (docs/contracts.md) */
	uint64_t memory, timeout_ms; /* 0: the tier's defaults */
	uint64_t output;             /* limits.output: what it may print; 0: 4 MiB */
	unsigned millicpus, pids;
	struct tg_contract_mount *mounts;
	size_t nmounts;
	char **env;                  /* "NAME=VALUE", NULL-terminated */
	char **egress;               /* "host:port", NULL-terminated */
	uint64_t call_timeout_ms;    /* "timeout": the whole call */
	int dry_run;                 /* 1 supported, 0 unsupported, -1 not stated,
				      * TG_DRY_RUN_OVERLAY: the gate's, on an overlay */
	char *compensation_tool;     /* "tool@version" that undoes a write */
	char *compensation_args;     /* its argument mapping, JSON text */
	char *irreversible;          /* reason, when nothing undoes it */
	int resumable;               /* a write rerun under its call id replays (after a crash) */
	enum tg_task_support tasks;  /* may a call run as an MCP task (docs/MCP.md) */
	char *deprecated_since, *sunset, *replacement; /* YYYY-MM-DD, tool@ver */
	char **tags;                 /* NULL-terminated */
	struct tg_param_header *param_headers; /* the input schema's x-mcp-header */
	size_t nparam_headers;
};

/* The base URI of a catalogue: a contract file F's schemas have the base
 * TG_CATALOG_BASE "F", so "$ref": "schemas/money.json" names the shared
 * schema file schemas/money.json beside the contract. ".invalid" never
 * resolves: nothing is ever fetched. */
#define TG_CATALOG_BASE "https://catalog.toolgate.invalid/"

/* Load and check one contract file (at most 1 MiB). opts configure its
 * schemas (NULL: defaults); unless they set remote_base, references to
 * TG_CATALOG_BASE "schemas/..." resolve to the files of the schemas/
 * folder beside the contract file. OUT *out. -1 with err naming the file, the
 * field and the reason: unknown fields, a missing authority, a write tool
 * without both a dry-run statement and a compensation or an
 * irreversibility, an invalid schema, a bad name or version, a read
 * tool that would write (a writable mount, executor.workspace write) or be
 * given the gateway's state (executor.state), an
 * x-mcp-header annotation that breaks a rule of MCP 2026-07-28 (not an
 * HTTP token, on a type other than integer, string or boolean, reached
 * through anything but properties, a name given twice), a plan's executor
 * with a field besides its kind. The older spelling of a plan's executor,
 * a builtin named "saga" or "saga.undo", loads as TG_EXEC_PLAN or
 * TG_EXEC_PLAN_UNDO (c->builtin NULL). */
TG_API int tg_contract_load(const char *path, const struct tg_schema_options *opts,
			    struct tg_contract **out, struct tg_error *err);
/* The same from text; origin names it in errors. */
TG_API int tg_contract_parse(const char *text, size_t len, const char *origin,
			     const struct tg_schema_options *opts,
			     struct tg_contract **out, struct tg_error *err);
TG_API void tg_contract_free(struct tg_contract *contract);

/* Semantic versions: parse "1.2.3" or "1.2.3-rc.1"; compare (-1, 0, 1). */
TG_API int tg_semver_parse(const char *text, struct tg_semver *out);
TG_API int tg_semver_compare(const struct tg_semver *a, const struct tg_semver *b);

#ifdef __cplusplus
}
#endif
#endif
