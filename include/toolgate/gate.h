/*
 * toolgate gate: the pipeline every tool call goes through, whatever
 * transport brought it (docs/PIPELINE.md).
 *
 *   1 identify   the principal the transport authenticated (a token: tg_gate_identify)
 *   2 resolve    name[@version] -> contract; deprecation and sunset
 *   3 validate   arguments against the input schema
 *   4 authorize  the caller's scopes allow the tool, within its rate (docs/AUTH.md);
 *                the arguments' anomalies (docs/ANOMALIES.md)
 *   5 dedupe     a write's idempotency key: one run per key, retries replay it
 *   6 approve    a write held in a ticket, with its dry run, until a person decides
 *   7 execute    builtin, a command in the sandbox, or a plan of other calls
 *   8 check      the output against the output schema; secrets redacted; caps
 *   9 record     one record per call in the hash-chained audit log, a span, metrics
 *
 * A stage ends the call either with a protocol error (the call itself is
 * wrong: an unknown tool, malformed arguments' container) or with a tool
 * result marked as an error (the tool was called and refused or failed:
 * arguments that do not match the schema, a failed run), as MCP separates
 * them.
 *
 *     struct tg_gate *g;
 *     tg_gate_new(catalog, &opts, &g, &err);
 *     struct tg_call call = { .principal = "alice", .tool = "fs.read", .arguments = "{...}" };
 *     struct tg_call_result r;
 *     if (tg_gate_call(g, &call, &r, &err) < 0) ... // protocol error, err says why
 *     ... r.content_json, r.structured_json, r.is_error ...
 *     tg_call_result_release(&r);
 */
#ifndef TOOLGATE_GATE_H
#define TOOLGATE_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/anomaly.h"
#include "toolgate/catalog.h"
#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tg_gate;
struct tg_audit;
struct tg_tracer;
struct tg_trace_ctx;
struct tg_store;
struct tg_policy;
struct tg_signer;

struct tg_gate_options {
	/* The audit log (toolgate/audit.h) the record stage appends every
	 * call and decision to, borrowed; NULL: nowhere. A call's answer
	 * waits for its record to be written and synced, and once the log
	 * has failed every call is refused. */
	struct tg_audit *audit;
	/* The host directory that appears as /workspace to the command
	 * tools whose contracts ask for it (executor.workspace: read-only,
	 * or writable in a write tool's approved run), or NULL. */
	const char *workspace;
	/* The state directory (serve --state), or NULL: a write tool whose
	 * contract says executor.state is given its family's part of it,
	 * STATE/tools/FAMILY, at /state (docs/contracts.md); no other tool
	 * is given any of it. Made 0700 when missing. tg_gate_new refuses a
	 * workspace that overlaps it or still holds .toolgate/undo, and a
	 * catalogue that mounts it (docs/PIPELINE.md, "Command tools"). */
	const char *state_dir;
	/* Directory command tools' relative argv[0] and mounts resolve
	 * against (the catalogue's directory); NULL: as given. No tool is
	 * given it to write, nor as its workspace: its contracts and
	 * programs are what the gateway loads. */
	const char *tools_dir;
	/* A verified copy of tools_dir (serve --catalog-trust, docs/SKILLS.md,
	 * "Signed catalogues"), or NULL: a relative mount source that stays
	 * inside the catalogue is given from the copy, so a script changed in
	 * tools_dir after the catalogue was verified never runs; one outside
	 * it (../data) from tools_dir, as without one. */
	const char *tools_copy;
	/* The gateway's own files outside the state directory (serve's
	 * --record, --policy, --tokens, --state-key), NULL-terminated, or
	 * NULL: tg_gate_new refuses a workspace or a contract mount that
	 * holds one. "-" and what is not a regular file (/dev/null) are
	 * passed over. */
	const char *const *own_files;
	/* Warm sandboxes kept ready for each command tool once it has been
	 * called (docs/SANDBOX.md, "Warm pool"); 0: every run cold. */
	unsigned warm;
	/* Command tools running at once, from every transport (docs/PIPELINE.md,
	 * "Sandboxes at once"): at most max_runs (0: 32), at most
	 * max_runs_per_principal of them one principal's (0: a quarter of
	 * max_runs); a call past its share waits up to 10 s, then is
	 * answered busy. */
	unsigned max_runs, max_runs_per_principal;
	/* Spans for each call (docs/TRACING.md), borrowed; NULL: none. */
	struct tg_tracer *tracer;
	/* What a catalogue whose tools' descriptions speak to the model
	 * (toolgate/scan.h, docs/SCANNING.md) gets, on load and reload: each
	 * finding is recorded, and the catalogue is refused (the default) or
	 * loaded all the same. */
	enum tg_descriptions {
		TG_DESCRIPTIONS_REFUSE = 0,
		TG_DESCRIPTIONS_WARN,
		TG_DESCRIPTIONS_OFF,
	} descriptions;
	/* What a call with anomalous arguments (toolgate/anomaly.h,
	 * docs/ANOMALIES.md) gets, over what the configuration says for
	 * each tool: TG_ANOMALY_DEFAULT leaves it to the configuration. */
	enum tg_anomaly_action anomalies;
	/* Write tools run through store (toolgate/store.h), borrowed: a
	 * write call under its idempotency key (the client's, or one the
	 * gate derives: tg_call.idempotency_key) is held in a ticket (expiring
	 * after the policy's tickets.lifetime(s) for its tool with a policy,
	 * else after ticket_ttl s, 0: an hour) until a person approves its exact
	 * arguments, then runs once, and every retry under its key replays
	 * the outcome. NULL: write tools are refused. */
	struct tg_store *store;
	int64_t ticket_ttl;
	/* The policy (toolgate/auth.h, docs/AUTH.md), borrowed, and the
	 * signer whose key checks its tokens (tg_gate_identify; revoked in
	 * store, which a policy needs): its principals' scopes and rates,
	 * the approvers' queue's bounds and the store's collection (its
	 * "tickets": a thread of the gate's, signals blocked, collects what
	 * expired every collect_every), and the anomaly rules' configuration.
	 * Both must outlive the gate. NULL: no policy, no scope checked, no
	 * rate, the defaults. */
	const struct tg_policy *policy;
	struct tg_signer *signer;
	/* This server's URL as its clients reach it (RFC 8707's resource,
	 * such as "https://gw.example/mcp"): the audience an identity
	 * provider's token must name when the policy's provider sets none
	 * (docs/AUTH.md, "External identity providers"). NULL: none, and
	 * such a provider's tokens are refused. Copied. */
	const char *resource;
	/* The skills served (docs/SKILLS.md, "Serving"): the folder whose
	 * every subfolder is a skill, or NULL for none; the trust store of
	 * the keys that may sign them (NULL: none is trusted); an operator's
	 * scanner rules (NULL: the built-in ones); and what a skill that
	 * fails a check gets: refused (enforce, the default) or served with
	 * what was found recorded (warn). Read by tg_gate_new and again at
	 * each tg_gate_reload. */
	const char *skills_dir, *skills_trust, *skills_rules;
	enum tg_skills_mode {
		TG_SKILLS_ENFORCE = 0,
		TG_SKILLS_WARN,
	} skills_mode;
	/* skills_dir may be missing, or not a folder (a catalogue's own
	 * skills/, which a reload may add or remove): no skill is served
	 * then, rather than the start or the reload refused. */
	int skills_optional;
};

/* The gate over a catalogue (borrowed: it must outlive the gate). OUT
 * *out. Thread-safe once made: calls may run from several threads. -1
 * and err for a policy without a signer or a store, when the store's
 * collection cannot start, when the catalogue names a builtin that does not exist, or
 * mounts a directory that is, holds or lies in the state directory or the
 * workspace, one that holds /tmp (where overlay dry runs keep their
 * layers), one of own_files or .toolgate/undo, or a writable one that
 * overlaps tools_dir (a mount that does not exist yet is judged by where
 * it will be); or when the workspace does not exist, overlaps the state
 * directory or tools_dir, holds one of own_files, or holds .toolgate/undo
 * (the undo records of an earlier toolgate: err says how to move them);
 * or when an upstream's credential file lies where a sandbox is given it
 * (the workspace, the catalogue, a command tool's or another upstream's
 * mount), is one of own_files or lies in the state directory; or when an
 * upstream's runner refuses its mounts or credentials (docs/UPSTREAMS.md).
 * Each run checks its mounts and the workspace again (docs/contracts.md,
 * "What a command tool is given"). */
TG_API int tg_gate_new(const struct tg_catalog *catalog, const struct tg_gate_options *opts,
		       struct tg_gate **out, struct tg_error *err);
TG_API void tg_gate_free(struct tg_gate *gate);
/* A deployment problem tg_gate_preflight found: where (a file and its
 * field: "catalog/fs.write-1.0.0.json: executor.workspace"), what is
 * wrong, and how to fix it. */
typedef void (*tg_problem_fn)(void *ctx, const char *where, const char *what, const char *fix);
/* The gateway's deployment, looked at before it serves (docs/CLI.md,
 * "Checked at start"): every command tool's program found in its
 * sandbox's view, the path arguments in its mounts existing, its mounts
 * and the workspace existing and readable by the sandbox's user, and
 * writable by it where a write tool writes them (with a store), a
 * workspace for the tools that ask for one; the sandbox's tiers the
 * catalogue uses guaranteed on this host for this user (cgroups it may
 * create among them); and each scope of the policy's principals
 * matching some tool of the catalogue or an upstream's namespace.
 * policy_file names the policy in the problems (NULL: "the policy").
 * Each problem goes to fn; the number of them (0: nothing found). */
TG_API unsigned tg_gate_preflight(struct tg_gate *gate, const char *policy_file, tg_problem_fn fn,
				  void *ctx);
/* A load refused by the caller's own check (a catalogue whose signature
 * does not verify): counted in toolgate_blocked_loads_total{kind,reason}
 * and recorded as an event (subject, outcome load_refused, detail). 0, or
 * -1 when the audit log could not take it. */
TG_API int tg_gate_record_blocked(struct tg_gate *gate, const char *kind, const char *reason,
				  const char *subject, const char *detail);
/* The skills served (those that passed their checks, or all in warn mode). */
TG_API size_t tg_gate_skill_count(struct tg_gate *gate);
/* The skills tg_gate_new read pinned in the store (docs/SKILLS.md,
 * "Pinned"), once the caller serves them (not for a check that only
 * looks): 0 (also without skills or a store), or -1 and err. A reload
 * pins the skills it serves itself. */
TG_API int tg_gate_skills_pin(struct tg_gate *gate, struct tg_error *err);
/* The tracer the gate was given (NULL: none), for the transports' spans. */
TG_API struct tg_tracer *tg_gate_tracer(struct tg_gate *gate);
/* The gateway's counters in Prometheus's text format (docs/METRICS.md),
 * malloc'd; NULL out of memory. */
TG_API char *tg_gate_metrics(struct tg_gate *gate);
/* Whether the gateway can serve a call as it should (its readiness,
 * /readyz: docs/MCP.md, "Health"): 1 when it has a catalogue, and its
 * audit log (tg_audit_check) and store (tg_store_check), those it has,
 * can take writes as far as looking tells; else 0 and, in why (len
 * bytes), one line saying what is not. Cheap enough for every probe:
 * a few stats, no write, no lock held across a file. */
TG_API int tg_gate_ready(struct tg_gate *gate, char *why, size_t len);
/* The warm pools' counts, summed over the tools (zeros without --warm). */
struct tg_sandbox_pool_stats;
TG_API void tg_gate_get_warm_stats(struct tg_gate *gate, struct tg_sandbox_pool_stats *sum);

/* A call's arguments, as JSON text, at most (stage 3 refuses more). */
#define TG_MAX_ARGUMENTS (4u << 20)

struct tg_call {
	const char *principal;       /* who, as the transport authenticated it */
	const char *tool;            /* name or name@version */
	const char *arguments;       /* JSON text of an object; NULL: {} */
	size_t arguments_len;
	int cancel_fd;               /* readable: the caller gave up; -1: none */
	const char *today;           /* "YYYY-MM-DD" for sunsets; NULL: now (UTC) */
	/* What the tool reports while it runs, JSON text: {"progress":
	 * {"progress", "total"?, "message"?}} or {"log": {"level", "data",
	 * "logger"?}}. Called from the call's thread; NULL: dropped. */
	void (*notify)(void *ctx, const char *event);
	void *notify_ctx;
	/* An interactive tool's request to the client (JSON text
	 * {"request": {"method", "params"}, "key"?, "more"?}): the answer as
	 * JSON text {"result": ...} or {"error": {"code", "message"}},
	 * malloc'd; "" writes nothing (the answer comes on a rerun of the
	 * call). Called from a helper thread of the call, with notify_ctx;
	 * may block until the client answers, and must return soon after
	 * *stop becomes non-zero. NULL: the tool's requests get an error. */
	char *(*ask)(void *ctx, const char *request, const volatile int *stop);
	/* Non-zero once the caller stopped the run to ask its client first
	 * (MCP's multi round-trip requests): recorded as input_required, not
	 * as the tool's failure. NULL: never. */
	const volatile int *input_required;
	/* The scopes the caller holds (space-separated PATTERN:ACTION,
	 * docs/AUTH.md): the authorize stage refuses a tool none of them
	 * allows. NULL: none, with the gate's policy (every tool refused);
	 * without a policy nothing is checked. */
	const char *scopes;
	/* A write call's idempotency key (1 to 255 printable bytes), or NULL:
	 * the gate derives one (tg_call_result.derived_key), unless the
	 * policy's writes.client_key names the tool (the call is refused). */
	const char *idempotency_key;
	/* Non-zero: show what the call would do, do nothing (the tool must
	 * support it; docs/PIPELINE.md). A dry run needs no key and no
	 * approval: every mount of its sandbox is read-only. */
	int dry_run;
	/* A call held for approval (a write, a read held for its
	 * anomalies) waits this long (ms, at most TG_MAX_APPROVAL_WAIT_MS)
	 * for the decision: approved in time, it runs and the caller gets
	 * its result; 0: answered at once; TG_APPROVAL_WAIT_POLICY: the
	 * caller asked nothing (a stock agent host), the policy's
	 * writes.wait (toolgate/auth.h; TG_WRITES_WAIT_DEFAULT_MS without a
	 * policy); TG_APPROVAL_WAIT_DECIDED: until a person decides or the
	 * ticket expires (an MCP task's call, which nobody waits on). While
	 * it waits, notify hears a progress event every 5 s; the wait holds
	 * no lock and ends when cancel_fd becomes readable. */
	unsigned approval_wait_ms;
	/* Read when a cancellation ends the approval wait: non-NULL and
	 * non-zero, the caller withdrew its request (an MCP task's client
	 * cancelled it) and the pending ticket is cancelled; else the ticket
	 * stays pending for a retry (a server that stops, a dropped request). */
	const volatile int *withdraw;
	/* The span the call's execute_tool span is a child of (the MCP
	 * request's: toolgate/trace.h), or NULL: a new trace, if traced. */
	const struct tg_trace_ctx *trace;
	/* Read while the call waits for its approval as the policy says
	 * (TG_APPROVAL_WAIT_POLICY): non-NULL and non-zero, its session ends
	 * (stdin closed): the wait ends within 100 ms and the call is
	 * answered awaiting_approval, its ticket still pending. A wait the
	 * caller asked for, and a tool that runs, are not ended by it. */
	const volatile int *end_wait;
};

#define TG_MAX_APPROVAL_WAIT_MS 120000
#define TG_APPROVAL_WAIT_DECIDED 0xffffffffu
#define TG_APPROVAL_WAIT_POLICY 0xfffffffeu

/* A tool result as MCP carries it. */
struct tg_call_result {
	char *content_json;          /* JSON array of content blocks */
	char *structured_json;       /* JSON object, or NULL */
	int is_error;                /* the tool failed or refused the call */
	char tool[160];              /* the resolved name@version */
	/* The idempotency key the gate derived for a write call that came
	 * without one (from its principal, tool, version and canonical
	 * arguments), which the same call again finds (docs/PIPELINE.md,
	 * "Write calls"); "" when the client sent its own, or for a read. */
	char derived_key[80];
};

/* Run one call through the pipeline. 0 and OUT *r (a tool result,
 * successful or not; release it); -1 and err for a protocol error: an
 * unknown or retired tool (TG_ERR_INVALID, TG_ERR_UNAVAILABLE), arguments
 * that are not a JSON object (TG_ERR_INVALID), out of memory. */
TG_API int tg_gate_call(struct tg_gate *gate, const struct tg_call *call,
			struct tg_call_result *r, struct tg_error *err);
TG_API void tg_call_result_release(struct tg_call_result *r);

/* Who calls (docs/AUTH.md), for a transport, which never checks a
 * signed token or a call's scope itself. tg_gate_has_policy: 1 if the gate has a
 * policy (every caller then presents a token it signed, or one of the
 * policy's identity providers). tg_gate_identify: the bearer token (len
 * bytes) checked (signature, issuer, audience, lifetime, revocation for
 * the gate's own; an identity provider's by that provider's keys and the
 * policy's mapping, when its iss is not the policy's issuer but a
 * provider's): 0 and its principal (into principal, plen bytes)
 * and OUT *scopes (malloc'd); -1 and err, which says why, without a
 * policy too. tg_gate_principal_scopes: a configured principal's scopes
 * (stdio's): 1 and OUT *scopes (malloc'd), 0 and "" when the policy does
 * not name it (it holds none), -1 without a policy or out of memory. */
TG_API int tg_gate_has_policy(const struct tg_gate *gate);
TG_API int tg_gate_identify(struct tg_gate *gate, const char *token, size_t len,
			    char *principal, size_t plen, char **scopes, struct tg_error *err);
TG_API int tg_gate_principal_scopes(struct tg_gate *gate, const char *principal,
				    char **scopes);
/* Whether scopes (space-separated; NULL: none, with a policy; without
 * one anything goes) allow a call of tool (name or name@version) as the
 * pipeline's stage 4 decides it: 1 yes (or the tool does not resolve: the call answers that); 0 and,
 * in need (len bytes), the scope it needs, TOOL:read or TOOL:write. */
TG_API int tg_gate_authorize(struct tg_gate *gate, const char *scopes, const char *tool,
			     char *need, size_t len);
/* 1 if scopes may read the gateway's counters (tg_gate_metrics): without
 * a policy anyone, with one only a holder of an approve scope (they show
 * every principal's calls by tool). */
TG_API int tg_gate_may_observe(const struct tg_gate *gate, const char *scopes);
/* The OAuth 2.0 Protected Resource Metadata (RFC 9728) of the server at
 * resource (its URL, as clients use it): the policy's identity providers
 * as authorization_servers, the scope each tool's calls need as
 * scopes_supported, bearer tokens in the header. JSON text, malloc'd;
 * NULL when out of memory. */
TG_API char *tg_gate_resource_metadata(struct tg_gate *gate, const char *resource);
/* The approval console's sign-in with the policy's identity providers
 * (docs/CONSOLE.md): {"providers": [{"id": N, "issuer": ...}]} of those
 * with a "console" client (malloc'd JSON; NULL out of memory); the
 * authorization request's URL for provider id; the code it sends back
 * (with its iss, NULL when none) exchanged for an access token
 * (tg_idps_login_*). The token is then
 * checked by tg_gate_identify as any other. -1 and err. */
TG_API char *tg_gate_login_providers(struct tg_gate *gate);
TG_API int tg_gate_login_url(struct tg_gate *gate, size_t id, const char *redirect_uri,
			     const char *state, const char *verifier, char **url,
			     struct tg_error *err);
TG_API int tg_gate_login_token(struct tg_gate *gate, size_t id, const char *code,
			       const char *iss, const char *verifier, const char *redirect_uri,
			       char **token, struct tg_error *err);

/* Roll back the executed write call call_id (its ticket's id) with its
 * contract's compensation, on behalf of who (a person with approve rights
 * over the tool: the caller checks them). The attempt is logged before
 * the compensation runs (a crash meanwhile leaves it to
 * tg_gate_resume_rollbacks); success marks the ticket compensated.
 * dry_run: what the compensation would restore, nothing logged. 0 and
 * OUT *r, the compensation's result (is_error: it failed, logged so; a
 * retry is allowed); 1 when it was rolled back already (*r empty); -1 and
 * err: no store, no such call, not executed, irreversible, its tool or
 * compensation gone from the catalogue. */
TG_API int tg_gate_rollback(struct tg_gate *gate, const char *call_id, const char *who,
			    int dry_run, struct tg_call_result *r, struct tg_error *err);
/* Drive on each plan (saga) a dead gateway left running or compensating
 * (docs/PIPELINE.md, "Sagas"): OUT *resumed, and *failed of them that
 * ended neither done nor compensated. */
TG_API int tg_gate_resume_sagas(struct tg_gate *gate, size_t *resumed, size_t *failed,
				struct tg_error *err);
/* The admin API (docs/ADMIN.md): one request, method (GET, POST) on path
 * (/admin/..., with its query) and its body (a JSON object, or empty), by
 * principal holding scopes (its token's): the HTTP status, and OUT *out,
 * the JSON answer (malloc'd; {"error": {code, message}} on failure). */
TG_API int tg_gate_admin(struct tg_gate *gate, const char *principal, const char *scopes,
			 const char *method, const char *path, const char *body, size_t len,
			 char **out);
/* tg_record_event (toolgate/audit.h) to the gate's audit log. */
TG_API int tg_gate_record_event(struct tg_gate *gate, const char *principal,
				const char *subject, const char *outcome, const char *detail);
/* A refusal before the pipeline (a request without a valid token, a
 * missing scope) or by a tool's egress proxy (egress_denied), recorded as
 * tg_gate_record_event does but neither waited for nor recorded without
 * bound: at most 20 a second (100 at once); those beyond are counted, and
 * the next one recorded says how many ("suppressed_before"). A flood of
 * bad requests cannot make the log sync for each, nor fill it, nor hold
 * up the thread that reports it (a run's supervision thread). */
TG_API int tg_gate_record_refusal(struct tg_gate *gate, const char *principal,
				  const char *subject, const char *outcome, const char *detail);
/* The store the gate's write calls use (its options'), or NULL. */
TG_API struct tg_store *tg_gate_store(const struct tg_gate *gate);
/* The tickets' events (toolgate/store.h, tg_store_ticket_events) as a
 * gate with a store watches them: a thread of the gate's reads the
 * latest event's number every 250 ms (a decision may come from another
 * process: `toolgate approvals` or `rollback`) and
 * sweeps the pending tickets past their expiry to expired, with their
 * events, every second. tg_gate_ticket_events_wait blocks until that
 * number passes after or timeout_ms pass (at most 60,000), and returns
 * the latest number seen: more than after, read the events after it with
 * tg_store_ticket_events; after or less, nothing new. An event is seen
 * within about 250 ms of its commit. 0 at once without a store. Cheap:
 * a waiter holds no store lock and is woken by the watch, so a console's
 * live list waits here rather than reading the store in a loop. Every
 * waiter must have returned before tg_gate_free (which wakes them). */
TG_API uint64_t tg_gate_ticket_events_wait(struct tg_gate *gate, uint64_t after,
					   unsigned timeout_ms);
/* A ticket as the admin API and `toolgate approvals show` print it: JSON
 * text (malloc'd; NULL out of memory), indented when pretty, its
 * arguments and preview as JSON, with arguments_display and
 * preview_display when they hold hidden characters, and every hidden
 * character of the text written as a JSON escape (docs/ADMIN.md). */
struct tg_ticket;
TG_API char *tg_ticket_to_json(const struct tg_ticket *ticket, int pretty);
/* 1 if scopes may decide ticket: an approve scope over its tool and over
 * each tool it covers (a plan's steps); else 0 and, in need (len bytes),
 * the first scope missing. */
TG_API int tg_ticket_approvable(const struct tg_ticket *ticket, const char *scopes, char *need,
				size_t len);

/* A person's decision on a held write ticket (docs/PIPELINE.md, "Write
 * calls"), the one way the admin API and `toolgate approvals` take it. */
enum tg_decision {
	TG_DECISION_APPROVE = 1,
	TG_DECISION_REJECT,   /* a reason of 1 to 1000 bytes is required */
	TG_DECISION_CANCEL,   /* withdrawn by its requester while pending */
};
/* Decision d on ticket id in store, by who (the principal its verified
 * token names) holding scopes (that token's), with reason (NULL: none;
 * at most 1000 bytes, recorded with any decision), recorded in audit
 * (borrowed; NULL: nowhere). In order: the ticket is read; the log must
 * be writing (no decision the log cannot keep); who may decide it
 * (cancel: the requester alone; approve, reject: an approve scope over
 * its tool and each tool it covers, tg_ticket_approvable); the reason
 * fits; the store takes it (only while pending; the requester never
 * approves itself); the log records it (docs/AUDIT.md, "decision").
 * 0 decided and recorded; 1 decided, but its record could not be written
 * (the decision stands in the store, the log has stopped: err says so);
 * -1 and err, nothing decided: TG_ERR_UNAVAILABLE the log has stopped,
 * TG_ERR_FORBIDDEN who may not (err names the requester, or the scope
 * missing), TG_ERR_LIMIT the reason is too long, else the store's
 * refusal (TG_ERR_INVALID: no such ticket, not pending, a rejection
 * without a reason, the requester approving itself) or failure.
 * Refusals are recorded by the caller, which knows how (a transport at a
 * bounded rate, docs/AUDIT.md). */
struct tg_store;
TG_API int tg_gate_decide(struct tg_store *store, struct tg_audit *audit, const char *who,
			  const char *scopes, const char *id, enum tg_decision d,
			  const char *reason, struct tg_error *err);

/* Approved ticket id of an upstream tool's definition (docs/UPSTREAMS.md,
 * "Pins") carried out: the definition it holds (checked against the hash
 * it was opened with, and that hash against its arguments) pinned in
 * store as its approver's, the ticket made executed, the acceptance
 * recorded in audit (NULL: nowhere). A gateway serving the upstream
 * serves the tool within a second. 0 done; 1 done before (executed);
 * -1 and err (TG_ERR_INVALID: no such ticket, not a definition's, not
 * approved, arguments that are not what it was opened for). */
TG_API int tg_gate_pin_accept(struct tg_store *store, struct tg_audit *audit, const char *id,
			      struct tg_error *err);

/* Resume each rollback a crash interrupted (logged as running): OUT
 * *resumed, and *failed of them whose compensation failed again. */
TG_API int tg_gate_resume_rollbacks(struct tg_gate *gate, size_t *resumed, size_t *failed,
				    struct tg_error *err);

/* The catalogue the gate serves now, held until tg_gate_release: a
 * reload meanwhile serves the new one to later callers, and frees the old
 * one when its last holder releases it. Thread-safe. */
TG_API const struct tg_catalog *tg_gate_acquire(struct tg_gate *gate);
TG_API void tg_gate_release(struct tg_gate *gate, const struct tg_catalog *catalog);
/* Serve catalog from now on (the gate takes it, and frees it when it is
 * replaced and released, or with the gate), with the skills read again
 * against it (tg_gate_options.skills_dir). Calls in flight finish on
 * the catalogue (and the skills' files) they started with. -1 and err
 * when the catalogue names a builtin that does not exist or mounts what
 * tg_gate_new refuses, or the skills folder (unless optional), their
 * trust store, rules file or the store cannot be read (the catalogue is
 * then still the caller's, and nothing served changed). */
TG_API int tg_gate_reload(struct tg_gate *gate, struct tg_catalog *catalog,
			  struct tg_error *err);
/* The catalogue the gate was given, or last reloaded with (borrowed),
 * without the tools of its upstreams, for a caller that never reloads
 * it; what is served (with them) is tg_gate_acquire's. */
TG_API const struct tg_catalog *tg_gate_catalog(const struct tg_gate *gate);

/* fn(ctx, old, now) is told, from a thread of the gate's, each time what
 * the gate serves changes without a reload: the tools (one more or less,
 * or a version: an upstream's names its definition), when an upstream's
 * server listed other tools or a definition held for review was
 * accepted (docs/UPSTREAMS.md, "Serving", "Pins"), or an upstream's
 * resources or prompts (tg_gate_lists_changed says which). old and now are held for the
 * call (borrowed). fn must not call tg_gate_reload nor tg_gate_on_change;
 * it may take its own
 * time (the next change waits). One hook: a second call replaces the
 * first; fn NULL removes it, and returns once no call of the old hook
 * runs. */
TG_API void tg_gate_on_change(struct tg_gate *gate,
			      void (*fn)(void *ctx, const struct tg_catalog *old,
					 const struct tg_catalog *now),
			      void *ctx);

/* The catalogue's tools as MCP lists them (JSON text of an array of tool
 * definitions, malloc'd): one per name, the version a bare name resolves
 * to on today ("YYYY-MM-DD"; NULL: now), retired tools left out. Of the
 * gate's current catalogue, or of catalog. */
TG_API char *tg_gate_tools_json(struct tg_gate *gate, const char *today, struct tg_error *err);
TG_API char *tg_gate_tools_json_of(const struct tg_catalog *catalog, const char *today,
				   struct tg_error *err);
/* tg_gate_tools_json as a caller holding scopes (as tg_call.scopes: NULL
 * holds none with a policy) may see it: only the tools the authorize
 * stage would let it call (TOOL:read for a read tool, TOOL:write for a
 * write tool), an upstream's NAME.tool too; without a policy, all. */
TG_API char *tg_gate_tools_json_for(struct tg_gate *gate, const char *scopes, const char *today,
				    struct tg_error *err);

/* Wait for the upstreams still making their first listing, so that a
 * client listing the tools as it connects, just after serve started, sees
 * theirs (docs/UPSTREAMS.md, "Serving"): returns once each upstream's tools
 * are served, its start failed (a call of its tools says why), or
 * TG_GATE_LIST_WAIT_MS passed since its server was first started (at
 * serve's start, or the reload that declared it). Past that, it returns
 * at once. Never fails. */
#define TG_GATE_LIST_WAIT_MS 2000
TG_API void tg_gate_await_upstreams(struct tg_gate *gate);

/* ---- resources, prompts and completion (docs/MCP.md, docs/UPSTREAMS.md) -- */

/* An upstream's resource is served under a URI the gateway owns:
 * TG_UPSTREAM_URI_PREFIX, the upstream's NAME, '/', then the server's
 * own URI as it is (a template's too: a client that expands the served
 * template gets the prefix and what the server's template expands to).
 * Its prompt p is served as NAME.p. */
#define TG_UPSTREAM_URI_PREFIX "toolgate://upstream/"

/* Who asks, for the calls below: principal (as a transport authenticated
 * it) holding scopes (as tg_call.scopes: NULL is none with a policy, and
 * anything goes without one). */
struct tg_reader {
	const char *principal;
	const char *scopes;
};

/* The resources (templates: the resource templates) a caller may list:
 * the catalogue's, then those of each upstream whose pseudo-tool
 * NAME.resources the caller's scopes allow it to read (docs/AUTH.md),
 * their URIs under TG_UPSTREAM_URI_PREFIX. JSON text of an array
 * (malloc'd), or NULL and err. */
TG_API char *tg_gate_resources_json(struct tg_gate *gate, const struct tg_reader *who,
				    int templates, struct tg_error *err);
/* resources/read of uri: the "contents" array, JSON text (malloc'd). An
 * upstream's URI is read from its server (its scope checked, the read
 * recorded in the audit log, the contents redacted, their URIs served
 * ones); any other from the catalogue. NULL and err: TG_ERR_INVALID no
 * such resource (or the server's error, shown safe), TG_ERR_FORBIDDEN
 * a scope missing (err names it), TG_ERR_UNAVAILABLE the server is down
 * or the audit log has stopped, TG_ERR_LIMIT it did not answer in time. */
TG_API char *tg_gate_resource_read(struct tg_gate *gate, const struct tg_reader *who,
				   const char *uri, struct tg_error *err);
/* The prompts a caller may list: the catalogue's, then those of each
 * upstream whose NAME.prompts it may read, named NAME.p. JSON text. */
TG_API char *tg_gate_prompts_json(struct tg_gate *gate, const struct tg_reader *who,
				  struct tg_error *err);
/* prompts/get of name with args_json (an object's text, or NULL): the
 * result {description?, messages}, JSON text (malloc'd). NAME.p of an
 * upstream NAME is its server's (scope NAME.prompts, recorded, redacted
 * as a read); any other the catalogue's. NULL and err as
 * tg_gate_resource_read. */
TG_API char *tg_gate_prompt_get(struct tg_gate *gate, const struct tg_reader *who,
				const char *name, const char *args_json, struct tg_error *err);
/* completion/complete: ref_type "ref/prompt" (ref a prompt's name) or
 * "ref/resource" (ref a template's URI), the argument's name and value,
 * and context_json (the request's "context" object's text, or NULL): the
 * "completion" object {values, total?, hasMore?}, JSON text (malloc'd).
 * An upstream's prompt or template asks its server (scope NAME.prompts
 * or NAME.resources; redacted, not recorded); any other the catalogue.
 * NULL and err as tg_gate_resource_read. */
TG_API char *tg_gate_complete(struct tg_gate *gate, const struct tg_reader *who,
			      const char *ref_type, const char *ref, const char *argument,
			      const char *value, const char *context_json, struct tg_error *err);
/* What of the upstreams' lists changed since the last time asked (the
 * change hook's fn asks it, tg_gate_on_change): *resources (resources or
 * templates) and *prompts, 1 or 0, cleared. */
TG_API void tg_gate_lists_changed(struct tg_gate *gate, int *resources, int *prompts);

/* ---- one upstream seen once (toolgate upstream test|pin|diff) ------------- */

/* What serving would make of one tool an upstream lists. */
enum tg_listed_verdict {
	TG_LISTED_SERVED = 0,        /* served, as contract says */
	TG_LISTED_HIDDEN,            /* its declaration hides it */
	TG_LISTED_REFUSED,           /* withdrawn: why says why */
};

struct tg_listed_tool {
	char *name;                  /* its "name" as listed, or NULL when that is not a
				      * string (malloc'd; text of the server's: show it safe) */
	char *definition;            /* the entry as listed, compact JSON (malloc'd) */
	enum tg_listed_verdict verdict;
	struct tg_contract *contract; /* SERVED: what would be served; else NULL */
	char *why;                   /* REFUSED: the reason, the server's text in it
				      * redacted and its hidden characters as '?' (malloc'd) */
};

struct tg_upstream_listing {
	struct tg_listed_tool *tools; /* in the server's order */
	size_t n;
	char protocol[16];            /* the revision its server agreed: 2026-07-28,
				       * 2025-11-25, 2025-06-18 or 2025-03-26 */
	/* what its declaration says that would not work as served, a line
	 * each (malloc'd; the declaration's names and a mount's host path,
	 * no server text but a listed tool name): each writable mount the sandbox's user cannot
	 * write (tg_upstream_check_mounts), then each declared tool the
	 * server does not list (tg_upstream_check_listing) */
	char **warnings;
	size_t nwarnings;
};

/* Upstream name of catalog (borrowed) started, or reached, as
 * tg_gate_new would start it with opts (its directories checked, the
 * catalogue's credentials checked against them; opts may be NULL), its
 * first listing waited for at most timeout_ms, each tool judged as the
 * gate judges it before serving it (tg_catalog_upstream_tool, an exposed
 * name served twice, its description scanned per opts->descriptions),
 * what would not work as served said in out->warnings, then the server
 * stopped: nothing is served, no store is written. The
 * server's stderr and log lines go to the library's log (tg_log_set) as
 * when serving. OUT *out (tg_upstream_listing_release). -1 and err:
 * TG_ERR_INVALID for a name the catalogue does not declare, or a mount or
 * credential refused (naming it); TG_ERR_UNAVAILABLE naming the upstream
 * and why when the server could not be started or reached (at its first
 * failure: no restart is waited for); TG_ERR_LIMIT when it had not listed
 * its tools within timeout_ms; TG_ERR_NOMEM. */
TG_API int tg_gate_upstream_probe(const struct tg_catalog *catalog, const char *name,
				  const struct tg_gate_options *opts, int timeout_ms,
				  struct tg_upstream_listing *out, struct tg_error *err);
/* Frees what l holds and clears it; a cleared one is a no-op. */
TG_API void tg_upstream_listing_release(struct tg_upstream_listing *l);

#ifdef __cplusplus
}
#endif
#endif
