/*
 * What the gate's files share (src/gate/): the pipeline runs plans
 * (saga.c) through the same stages as any call.
 */
#ifndef TG_GATE_INT_H
#define TG_GATE_INT_H

#include "exec/exec.h"
#include "toolgate/gate.h"
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "auth/anomaly.h"
#include "toolgate/audit.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "toolgate/trace.h"

#define MAX_SCHEMA_ERRORS 8        /* reported to the caller per call */
#define IDEM_TTL (24 * 3600)       /* an idempotency key is kept a day */

/* A catalogue the gate was given (tg_gate_new's, or a reload's): the
 * snapshots made of it, and the upstreams declared in it, borrow from it
 * (snapshot.c). */
struct gate_base {
	const struct tg_catalog *catalog;
	struct tg_catalog *owned;     /* freed with it; NULL: the caller's */
	unsigned refs;                /* the gate's while current, each snapshot's and
				       * each upstream's of it (under the gate's lock) */
};

/* A catalogue the gate serves or served: its base's contracts and the
 * upstreams' tools as they were listed when it was made (snapshot.c).
 * Calls and readers hold it while they use it, so that neither a reload
 * nor a new listing ever frees one in use. */
/* A tool an upstream lists that is not served until a person accepts
 * its definition (pins.c): a call of it is refused with its ticket. */
struct gate_held {
	struct tg_contract *k;        /* as it would be served (owned) */
	char ticket[33];              /* its acceptance ticket, or "" */
	char why[400];                /* what the refusal says of it */
	int rejected;                 /* a person rejected this definition */
};

struct snapshot {
	const struct tg_catalog *catalog; /* the base's, or owned */
	struct tg_catalog *owned;     /* with the upstreams' tools (tg_catalog_derive), or NULL */
	struct gate_held *held;       /* the upstreams' tools held for review */
	size_t nheld;
	struct gate_base *base;       /* a reference */
	struct gate_skillset *skills; /* a reference to the set whose tools it
				       * serves (their /skill), or NULL */
	unsigned refs;                /* the gate's while current, and each user's */
	struct snapshot *next;
};

/* A count within the hour that began at since (pins.c). */
struct gate_pin_budget {
	int64_t since;
	unsigned n;
};

/* An upstream the gate serves (upstreams.c): its declaration, from the
 * base that declared it, and its server's runner. */
struct upstream_run;
struct gate_upstream {
	struct tg_gate *gate;
	const struct tg_upstream *u;  /* borrowed from base */
	struct gate_base *base;       /* a reference */
	struct upstream_run *run;
	unsigned refs;                /* the gate's while served, and each call's in it */
	uint64_t told;                /* the listing whose withdrawals were recorded
				       * (under rebuild_lock): each is said once */
	/* every definition of its tools judged this run (pins.c), under
	 * rebuild_lock: what was said of each, and its ticket */
	struct gate_pin_memo *seen;
	size_t nseen, seen_cap;
	uint64_t round;               /* the judgements of its listings, counted */
	int listed;                   /* a listing was judged: the next is not the first */
	/* its tools are in the current snapshot (a listing of its server's
	 * was installed: snapshot.c), under the gate's lock; and when its
	 * server was first started (CLOCK_MONOTONIC ms): what a call or a
	 * listing waits for while it starts (upstream_start.c) */
	int served;
	uint64_t made_ms;
	/* what its listings may cost, an hour: review tickets opened, and
	 * changes recorded one by one (the others counted, then said as one) */
	struct gate_pin_budget tickets, said;
	unsigned said_suppressed;
};


/* What the pins said of one definition of a tool (pins.c): kept for the
 * run, so that a change is said once and its ticket found again however
 * often the server goes back and forth. */
struct gate_pin_memo {
	char tool[129];               /* the upstream's own name */
	char sha256[65];              /* of the definition */
	int change;                   /* enum tg_pin_change, as last judged */
	int said;                     /* the change last said (TG_PIN_UNCHANGED: none) */
	char ticket[33];              /* its review ticket, or "" */
	char args[65];                /* that ticket's arguments' hash */
	int64_t opened;               /* when this gateway first opened one for it, in
				       * the hour it counts (0: never) */
	unsigned opens;               /* how many it opened within that hour */
	uint64_t round;               /* the judgement that last saw it */
	int pending;                  /* then, its ticket awaited a decision */
};

/* A pin kept in memory, when the gate has no store (pins.c). */
struct gate_mem_pin {
	char upstream[33];
	char tool[129];               /* "": the upstream's first listing was judged */
	char sha256[65];
};


/* refusals recorded: at most so many a second, in each bucket */
#define REFUSALS_PER_S 20.0
#define REFUSALS_BURST 100.0
/* a bucket for requests without a principal (401s), the others shared by
 * principals hashed: one principal's flood hides neither 401s nor, but
 * for a principal hashed with it, another principal's refusals */
#define REFUSAL_BUCKETS 64
/* The skills served, as one set (skill_load.c): its skills by name,
 * their scripts as tools (their contracts' text: each snapshot parses
 * its own), and the folder the skills with tools were written into, as
 * checked (the tools' /skill). Held by the gate and by each snapshot and
 * reader of it: the last reference frees it and removes the folder. */
struct tg_skill;
struct tg_skill_tool;
struct gate_skillset {
	unsigned refs;                /* under the gate's lock */
	struct tg_skill **v;          /* by name */
	size_t n;
	uint64_t bytes;               /* the skills' sizes summed */
	struct tg_skill **due;        /* of v: to be pinned once the set is served */
	size_t ndue;
	struct tg_skill_tool *tools;
	size_t ntools;
	char copy[4096];              /* "" or the skills' folder of copies */
};
/* The options' skills copied and read (at start): the set served (its
 * pins written by tg_gate_skills_pin once the caller serves it); 0 (also
 * without a skills folder), or -1 and err. */
int gate_skills_init(struct tg_gate *g, const struct tg_gate_options *o, struct tg_error *err);
void gate_skills_release(struct tg_gate *g);
/* A set read anew from the gate's skills folder, each skill's tools
 * checked against catalog: OUT *out (NULL without a skills folder); -1
 * and err when the folder, the trust store, the rules or the store
 * cannot be used. */
int gate_skillset_load(struct tg_gate *g, const struct tg_catalog *catalog,
		       struct gate_skillset **out, struct tg_error *err);
/* set's pins written (once it is served), each tried: 0, or -1 and err the
 * first failure. */
int gate_skillset_pin(struct tg_gate *g, struct gate_skillset *set, struct tg_error *err);
/* 1 when a and b serve other skills (names or files). */
int gate_skillset_differs(const struct gate_skillset *a, const struct gate_skillset *b);
/* The set served, held (NULL for none); given back. */
struct gate_skillset *gate_skillset_get(struct tg_gate *g);
void gate_skillset_put(struct tg_gate *g, struct gate_skillset *set);
/* Serving them (skills.c): own (a JSON array's text, taken) with the
 * skills' after them: resource templates, prompts or resources; NULL out
 * of memory. A skill's URI or prompt name, and reading it. */
char *gate_skills_list(struct tg_gate *g, char *own, int templates, int prompts);
int gate_skills_is_uri(const char *uri);
char *gate_skills_read(struct tg_gate *g, const char *uri, struct tg_error *err);
int gate_skills_is_prompt(const char *name);
char *gate_skills_prompt(struct tg_gate *g, const char *name, struct tg_error *err);
/* The scripts of skill s (served, every check passed) as tools of set
 * (skill_tools.c): its toolgate.json's contracts checked against catalog
 * and the gate's directories, each recorded as loaded,
 * its files written where the tools find them, the contracts kept; 0
 * (also when it has none), or -1 and err, and nothing kept. */
int gate_skill_tools_add(struct tg_gate *g, const struct tg_catalog *catalog,
			 struct gate_skillset *set, const struct tg_skill *s, struct tg_error *err);
/* set's tools parsed anew, appended to (*v)[0, *n) (realloc'd): 0, or -1
 * out of memory (*v as it was). */
int gate_skill_tools_make(const struct gate_skillset *set, struct tg_contract ***v, size_t *n);
/* The skills' tools: a snapshot made with them over the base, installed
 * (at start, once they are read). */
int gate_snapshot_skill_tools(struct tg_gate *g, struct tg_error *err);

/* what a catalogue refused for its descriptions says (and counts by) */
#define DESCRIPTION_REFUSED "a description speaks to the model, not its user"
/* an unknown tool's name in its record, at most */
#define TOOL_NAME_RECORDED 256

struct refusal_bucket {
	double tokens;          /* of REFUSALS_BURST, REFUSALS_PER_S added a second */
	struct timespec at;     /* when they were counted */
	uint64_t suppressed;    /* not recorded since the last that was */
	int used;
};

/* The sandboxes running at once (runs.c). */
#define GATE_RUNS_DEFAULT 32
struct gate_runner {
	char principal[160];
	unsigned n;                   /* 0: a free entry */
};
struct gate_runs {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned max, per_principal, total;
	struct gate_runner *by;       /* max entries: at most max principals run */
};

struct tg_gate {
	pthread_mutex_t lock;         /* the snapshots, bases and upstreams */
	struct snapshot *cur;         /* the current one, then retired ones in use */
	struct gate_base *base;       /* the current base (a reference) */
	/* the upstreams served, in their base's order: swapped under lock,
	 * only while rebuild_lock is held (which lets its holder read it) */
	struct gate_upstream **ups;
	size_t nups;
	/* a snapshot was installed (under lock): calls and listings waiting
	 * for an upstream's first listing look again (upstream_start.c) */
	pthread_cond_t installed;
	/* one change of what is served at a time: a reload, or a snapshot
	 * made anew after an upstream listed other tools (snapshot.c) */
	pthread_mutex_t rebuild_lock;
	/* the pins without a store (pins.c), under rebuild_lock */
	struct gate_mem_pin *mem;
	size_t nmem, mem_cap;
	/* the thread that makes that snapshot, woken by the runners */
	pthread_mutex_t ups_lock;
	pthread_cond_t ups_wake;
	pthread_t ups_thread;
	int ups_on, ups_stop, ups_dirty;
	unsigned lists_pending;       /* upstreams' lists changed, not yet asked for
				       * (tg_gate_lists_changed), under ups_lock */
	/* told of each such snapshot (tg_gate_on_change), under changed_lock */
	pthread_mutex_t changed_lock;
	void (*changed)(void *ctx, const struct tg_catalog *old, const struct tg_catalog *now);
	void *changed_ctx;
	struct exec_dirs *dirs;       /* what command tools may be given */
	struct tg_audit *audit;       /* borrowed, or NULL */
	struct tg_tracer *tracer;     /* borrowed, or NULL */
	enum tg_descriptions descriptions;
	struct gate_skillset *skillset; /* the skills served, or NULL (skill_load.c):
				       * swapped under rebuild_lock and lock */
	char *skills_dir, *skills_trust, *skills_rules; /* the options', or NULL */
	int skills_warn;              /* --skills-mode warn */
	int skills_optional;          /* skills_dir may be missing: none served */
	struct metrics *metrics;      /* the counters /metrics shows */
	pthread_mutex_t refusals_lock;
	struct refusal_bucket refusals[REFUSAL_BUCKETS];        /* auth, scope, rate, admin */
	struct refusal_bucket egress_refusals[REFUSAL_BUCKETS]; /* tools' egress proxies */
	struct tg_store *store;       /* write calls' keys and tickets, or NULL */
	int64_t ticket_ttl;
	unsigned warm;                /* sandboxes kept ready per tool */
	pthread_mutex_t pools_lock;
	struct warm_pool *pools;
	unsigned warm_total;          /* sandboxes the pools keep, together */
	/* parameter anomalies (docs/ANOMALIES.md) */
	const struct tg_anomaly_config *anomaly_config; /* borrowed; NULL: the defaults */
	enum tg_anomaly_action anomaly_action;          /* the operator's, over the config's */
	struct anomaly_baselines *baselines;
	/* the approvers' queue's bounds, and the store's collector (queue.c) */
	struct tg_ticket_policy tickets;
	pthread_mutex_t queue_lock;
	pthread_cond_t queue_wake;
	pthread_t collector;
	int collector_on, collector_stop;
	/* the tickets' watch (watch.c): the sweep of what expired, and the
	 * latest ticket event seen (under watch_lock), which readers wait on */
	pthread_mutex_t watch_lock;
	pthread_mutex_t watch_read_lock; /* watch_cursor, and the counting of what it passes */
	pthread_cond_t watch_wake;    /* the watch's own sleep: its stop */
	pthread_cond_t watch_seen;    /* watch_seq moved: tg_gate_ticket_events_wait */
	pthread_t watcher;
	int watch_on, watch_stop;
	uint64_t watch_seq;           /* the latest event's number seen */
	uint64_t watch_cursor;        /* events read and counted up to */
	uint64_t watch_logged;        /* a read's last failure logged, under watch_read_lock */
	uint64_t sweep_logged;        /* the watch thread's own: a sweep's last failure logged */
	uint64_t anchored;            /* the watch thread's own: the audit head last anchored, */
	uint64_t anchor_logged;       /* an anchor's last failure logged, */
	int anchor_off;               /* the store keeps no anchors (SQLite's), or the log
				       * does not reach the one it keeps */
	int anchor_checked;           /* the log checked against the store's anchor */
	int share_off;                /* the store counts no replicas (SQLite's) */
	struct gate_runs runs;        /* command tools running at once */
	/* who may call (identity.c): the policy and the key that checks its
	 * tokens, borrowed, or NULL; the principals' rates, the gate's own */
	const struct tg_policy *policy;
	struct tg_signer *signer;
	struct tg_limiter *limiter;
	struct tg_idps *idps;         /* the policy's identity providers, or NULL */
	char *resource;               /* the options' (copied), or NULL */
	/* the webhooks' threads (notify.c), one a webhook of the policy */
	pthread_mutex_t notify_lock;
	pthread_cond_t notify_wake;   /* their backoffs' sleep: the stop */
	int notify_stop;
	struct notify_hook *hooks;
	size_t nhooks;
	int notify_fd;                /* STATE/notify.lock, or -1 */
	int notify_held;              /* this process holds it: it delivers */
};

/* A command tool's warm pool, made at its first call that could use one
 * (tool@version; a pool that could not be made stays NULL: cold). */
struct warm_pool {
	char key[300];
	struct tg_sandbox_pool *pool;
	unsigned refs;                /* the gate's list, and calls running in it */
	struct warm_pool *next;
};


#define IDEM_TTL (24 * 3600)          /* an idempotency key is kept a day */

/* One call on its way through the stages. */
struct call_state {
	const struct tg_call *call;
	const struct tg_catalog *catalog; /* the call's snapshot */
	const struct tg_contract *k;
	const struct gate_held *held; /* k is held for review: refused after stage 4 */
	const char *args;
	size_t args_len;
	struct exec_out out;
	const char *outcome;       /* for the record: ok, tool_error, ... */
	struct timespec start;
	/* a write call that runs: its key, claimed; its approved ticket */
	int claimed;
	char fingerprint[65];
	char *canonical;           /* the arguments hashed (malloc'd), or NULL */
	char ticket[33];           /* the call's id once approved */
	int dry;                   /* execute as a dry run */
	int resumed;               /* rerun after its gateway died running it */
	int ran;                   /* it reached execution: its record is waited for */
	struct redaction {         /* secrets taken out of its result (stage 8b) */
		uint64_t count;
		const char *rules[8];  /* distinct rules, static names */
		uint64_t per[8];
		size_t nrules;
	} redacted;
	struct tg_span *span;      /* execute_tool, or NULL: not traced */
	/* its arguments' anomalies (stage 4c): what they lead to, and them */
	enum tg_anomaly_action anomalous;  /* TG_ANOMALY_DEFAULT: none found */
	struct anomaly_report *anomalies;  /* malloc'd, or NULL */
	struct {                           /* found nothing: learnt once it ran */
		double size, entropy;
		int has_entropy, due;
	} usual;
	const struct gate_run_env *run; /* a plan's step or a compensation: how; NULL: a call */
	const char *key;           /* the idempotency key: the caller's, or made for a held read */
	char made_key[80];
	int key_derived;           /* made_key is a write's, derived for a call without one */
	unsigned waited_ms;        /* it waited this long for its ticket's decision */
};

/* ---- the stages' shared parts (pipeline.c) ---- */

/* A tool result marked as an error, ending the call (1). */
int gate_refuse(struct call_state *st, const char *outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 1 if the caller gave up on the call: its cancel fd is readable (after
 * waiting up to ms for it). */
int gate_cancelled_within(int fd, int ms);
/* 7 execute (pipeline.c). */
int gate_stage_execute(struct tg_gate *g, struct call_state *st, struct tg_error *err);

/* ---- 5-6 the write path (write.c) ---- */

/* SHA-256 of the arguments' canonical form into st->fingerprint; -1 out of memory. */
int gate_args_fingerprint(struct call_state *st);
/* 5 dedupe and 6 approve: 0 the call runs (its key claimed, or a read
 * that need not be held), 1 answered, -1 and err. */
int gate_stage_write(struct tg_gate *g, struct call_state *st, struct tg_error *err);
/* The first of the call's findings, for its answer: "RULE at /AT: WHY". */
const char *gate_first_finding(const struct call_state *st, char *out, size_t len);
/* After a claimed write ran: its result is the key's for every retry. */
void gate_write_done(struct tg_gate *g, struct call_state *st);

/* A write call's answer that is not its run: a tool error with a code
 * (awaiting_approval, running, ...), the ticket when there is one (1). */
int gate_answer(struct call_state *st, const char *outcome, const char *code, const char *ticket,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- the approvers' queue (queue.c) ---- */

/* 0 if a new ticket of bytes (its arguments, and preview) fits the
 * policy's tickets.max_bytes, else 1 with the call's answer. */
int gate_queue_fits(struct tg_gate *g, struct call_state *st, size_t bytes);
/* 0 if the call's principal may have one more write ticket of bytes
 * awaiting a decision; 1 with the call's answer (too_large_to_hold,
 * too_many_pending); -1 and err (the store). */
int gate_queue_admit(struct tg_gate *g, struct call_state *st, size_t bytes, struct tg_error *err);
/* The answer too_many_pending (1), counted. */
int gate_queue_full(struct tg_gate *g, struct call_state *st);
/* The collector stopped (and joined), if it runs. */
void gate_collector_stop(struct tg_gate *g);

/* The store's collection of what expired, started on g->store by
 * the policy's tickets.collect_every; -1 and err when its thread cannot start. */
int gate_collector_start(struct tg_gate *g, struct tg_error *err);
/* How long a ticket for tool (name or name@version) lives, in seconds:
 * the policy's tickets.lifetime(s) with a policy, else the gate's
 * option (pipeline.c). */
int64_t gate_ticket_ttl(const struct tg_gate *g, const char *tool);
/* A thread of the gate's running fn(arg), every signal blocked in it
 * (they are the main thread's): pthread_create's return (queue.c). */
int gate_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/* The tickets' watch (watch.c), started with a store: the sweep of
 * pending tickets past their expiry, and the latest event's number. */
int gate_watch_start(struct tg_gate *g, struct tg_error *err);
void gate_watch_stop(struct tg_gate *g);
/* The webhooks of the policy (notify.c, docs/NOTIFY.md), with a store:
 * each one's secret read and its egress proxy and thread started; -1 and
 * err when one cannot be. Stopped (threads joined, secrets wiped) by
 * gate_notify_stop, which a gate that never started them may call. */
int gate_notify_start(struct tg_gate *g, struct tg_error *err);
void gate_notify_stop(struct tg_gate *g);
/* What a receiver is sent for event e: the JSON body (malloc'd; NULL out
 * of memory or past NOTIFY_BODY_MAX), with reason (a rejection's, or
 * NULL) and the console's link when resource (the MCP url) is known. */
#define NOTIFY_BODY_MAX 65536
char *notify_body(const struct tg_ticket_event *e, const char *reason, const char *resource);
/* The X-Toolgate-Signature of body (len bytes) at unix time t under key:
 * "t=T,v1=HEX(HMAC-SHA256(key, "T." body))" into out. 0, or -1. */
#define NOTIFY_SIGNATURE_MAX 96
int notify_signature(const unsigned char *key, size_t keylen, int64_t t, const char *body,
		     size_t len, char out[NOTIFY_SIGNATURE_MAX]);
/* The tickets' gauges for a scrape (watch.c): the decisions taken up to
 * now counted, the tickets pending by tool (the catalogue cat's names,
 * at most max of them in pend, "other" past them) and the oldest one's
 * age, into gg. Nothing without a store. */
struct metrics_gauges;
struct metrics_pending;
void gate_ticket_gauges(struct tg_gate *g, const struct tg_catalog *cat,
			struct metrics_gauges *gg, struct metrics_pending *pend, size_t max);

/* ---- who calls (identity.c) ---- */

/* The policy, signer and limiter of opts (none without a policy); -1 and
 * err for a policy without a signer or a store, or out of memory. */
int gate_identity_init(struct tg_gate *g, const struct tg_gate_options *opts,
		       struct tg_error *err);
void gate_identity_release(struct tg_gate *g);
/* The scopes of the gate's own calls (a plan a dead gateway left, driven
 * on as it was approved): by this pointer, never by its text, they pass
 * the authorize stage and spend no principal's rate. */
extern const char gate_own_scopes[];
/* 1 and the scope contract k needs in need (len bytes) when scopes (the
 * caller's) allow none of it, else 0: stage 4, a plan's steps and
 * tg_gate_authorize, one decision. With a policy, NULL scopes hold none
 * (fail closed); without one there is nothing to check. */
int gate_scope_missing(const struct tg_gate *g, const struct tg_contract *k, const char *scopes,
		       char *need, size_t len);
/* The same decision for a name that is not a contract's (an upstream's
 * pseudo-tools NAME.resources and NAME.prompts: read, write 0). */
int gate_scope_missing_for(const struct tg_gate *g, const char *name, int write,
			   const char *scopes, char *need, size_t len);

/* ---- snapshots and upstreams (snapshot.c, upstreams.c) ---- */

/* The gate's snapshots begun over catalog (borrowed), the caller's; -1
 * out of memory. */
int gate_snapshots_init(struct tg_gate *g, const struct tg_catalog *catalog,
			struct tg_error *err);
/* Every snapshot and base freed: nothing uses the gate any more. */
void gate_snapshots_release(struct tg_gate *g);
/* A reference on b given back; the last frees it. */
void gate_base_put(struct tg_gate *g, struct gate_base *b);
/* The upstreams' thread started, unless it runs (signals blocked); -1 and
 * err. Stopped and joined, if it runs. */
int gate_rebuilder_start(struct tg_gate *g, struct tg_error *err);
void gate_rebuilder_stop(struct tg_gate *g);
/* What a catalogue's descriptions say to the model, recorded and counted;
 * -1 and err when the policy refuses it (pipeline.c). */
int gate_scan_descriptions(struct tg_gate *g, const struct tg_catalog *catalog,
			   struct tg_error *err);
/* The same of catalog's tools, or (catalog NULL) of v[0, nv). */
int gate_scan_tools(struct tg_gate *g, const struct tg_catalog *catalog,
		    struct tg_contract *const *v, size_t nv, struct tg_error *err);

/* The upstreams of base, as they will be served (under rebuild_lock): v
 * in the base's order, a runner kept for each declared as before (the
 * same file), made for each new or changed one (made[i]). Nothing
 * changes until commit; abort ends those made. */
struct gate_ups_plan {
	struct gate_upstream **v;
	unsigned char *made;
	size_t n;
};
/* -1 and err naming the upstream when a runner cannot be made (a
 * refused mount or credential). */
int gate_upstreams_plan(struct tg_gate *g, struct gate_base *base, struct gate_ups_plan *p,
			struct tg_error *err);
/* Served from now on (p->v becomes g->ups); those no longer declared as
 * they were ended once no call uses them. */
void gate_upstreams_commit(struct tg_gate *g, struct gate_ups_plan *p);
void gate_upstreams_abort(struct tg_gate *g, struct gate_ups_plan *p);
/* Every upstream ended (the gate's end). */
void gate_upstreams_release(struct tg_gate *g);
/* The tools upstreams ups (nups of them) list now, as contracts
 * (tg_catalog_upstream_tool), under rebuild_lock: OUT *tools (malloc'd), *n. A tool that cannot be
 * served (its schema, a description the scanner refuses) is left out,
 * logged and recorded. -1 out of memory. */
int gate_upstream_tools(struct tg_gate *g, struct gate_upstream *const *ups, size_t nups,
			struct tg_contract ***tools, size_t *n, struct gate_held **held,
			size_t *nheld);

/* ---- pins (pins.c): a listing's definitions against those accepted ---- */

/* One listing of one upstream judged (under rebuild_lock). */
struct gate_pin_round {
	struct tg_gate *g;
	struct gate_upstream *e;
	int mode;                     /* enum tg_upstream_pin; -1: the pins are unreadable */
	struct tg_pin *pins;          /* the store's, or NULL */
	size_t npins;
	int first;                    /* nothing judged yet: the listing is trusted */
	int failed;                   /* out of memory */
};
/* What gate_pins_judge decided of a tool. */
enum { PIN_SERVE, PIN_HOLD, PIN_DROP };

int gate_pins_begin(struct tg_gate *g, struct gate_upstream *e, struct gate_pin_round *r);
/* k, made of the listing's entry def (len bytes), judged against its pin:
 * PIN_SERVE (k to be served), PIN_HOLD (k moved into *h, which the caller
 * gave, its ticket and why filled in) or PIN_DROP (k freed, the reason
 * said when r->tell); -1 out of memory (k freed). */
int gate_pins_judge(struct gate_pin_round *r, const char *def, size_t len, struct tg_contract *k,
		    struct gate_held *h);
/* The round ended: each pin no longer listed said once, the memo kept. */
void gate_pins_end(struct gate_pin_round *r);
/* 1 when a ticket of a held or reviewed definition was decided since it
 * was judged (a snapshot is due), under rebuild_lock; *waiting: whether
 * any still awaits a decision. */
int gate_pins_due(struct tg_gate *g, int *waiting);
struct tg_pin_definition;
/* The review tickets (pin_tickets.c). The ticket asking for definition d
 * of upstream's tool exposed as exposed, judged against the pin against
 * (its hash; NULL or "": none): OUT *t's principal, tool, arguments
 * (malloc'd) and their hash; -1 out of memory. */
int gate_pin_ticket_of(const char *upstream, const char *exposed,
		       const struct tg_pin_definition *d, const char *against, struct tg_ticket *t);
/* t (gate_pin_ticket_of's) opened for k, made of d; old the pinned
 * definition's canonical text (NULL: added): its id into id. */
int gate_pin_ticket_open(struct tg_gate *g, const struct tg_upstream *u,
			 const struct tg_contract *k, const struct tg_pin_definition *d,
			 const char *old, struct tg_ticket *t, char *id, struct tg_error *err);
/* How many findings the description scanner has in k. */
size_t gate_pin_findings(const struct tg_contract *k);
/* The pins kept in memory freed (the gate's end). */
void gate_pins_release(struct tg_gate *g);
/* A held tool of the call's snapshot named as the call names it, or NULL. */
const struct gate_held *gate_held_find(struct tg_gate *g, const struct tg_catalog *catalog,
				       const char *ref);
void gate_held_free(struct gate_held *held, size_t n);
/* Told by a runner: its server lists other tools; the snapshot is made
 * anew by the gate's thread (started when needed). */
void gate_upstreams_changed(void *ctx);
/* Told by a runner: its server lists other resources, templates or
 * prompts (which: bits of enum upstream_run_list); the change hook is
 * told as for tools (tg_gate_lists_changed). */
void gate_upstreams_lists_changed(void *ctx, unsigned which);
/* The upstreams served now, each with a reference (gate_upstream_put
 * each), into OUT *v (malloc'd, *n of them); -1 out of memory. */
int gate_upstreams_hold(struct tg_gate *g, struct gate_upstream ***v, size_t *n);
/* The upstream served as name, with a reference, or NULL. */
struct gate_upstream *gate_upstream_named(struct tg_gate *g, const char *name, size_t len);
void gate_upstream_put(struct tg_gate *g, struct gate_upstream *e);
/* Stage 2 for a name no snapshot resolves, under the namespace of an
 * upstream whose server has not listed its tools yet (upstream_start.c):
 * waits for that first listing (GATE_START_CALL_WAIT_MS at most, or the
 * upstream's limits.timeout if shorter). 0: resolve again, st->catalog
 * now the current snapshot; 1: answered (upstream_unavailable, retryable,
 * naming the upstream and why; or cancelled); -1: nothing to wait for
 * (no such upstream, or its tools are served): the name's error stands. */
int gate_resolve_starting(struct tg_gate *g, struct call_state *st);
/* The current time, CLOCK_MONOTONIC, in ms. */
uint64_t gate_now_ms(void);
/* 7 execute for TG_EXEC_UPSTREAM: 0 ran (or answered: the upstream is
 * down, timed out, failed), -1 and err. */
int gate_execute_upstream(struct tg_gate *g, struct call_state *st, struct tg_error *err);

/* ---- the sandboxes at once (runs.c) ---- */

/* At most max (0: GATE_RUNS_DEFAULT) at once, per_principal (0: a
 * quarter of them) for one principal; -1 out of memory. */
int gate_runs_init(struct gate_runs *r, unsigned max, unsigned per_principal);
void gate_runs_release(struct gate_runs *r);
/* A place for one of principal's runs: 0 taken (give it back), 1 none
 * within RUNS_WAIT_MS (forever: it waits as long as it takes), 2 the
 * caller gave up (cancel_fd readable). */
int gate_runs_take(struct gate_runs *r, const char *principal, int cancel_fd, int forever);
void gate_runs_give(struct gate_runs *r, const char *principal);
unsigned gate_runs_active(struct gate_runs *r);

/* ---- 8 the output check (output.c) ---- */

/* 8 check and 8b redact: 0, or 1 (refused: bad output). */
int gate_stage_check_redact(struct tg_gate *g, struct call_state *st);
/* An overlay dry run's changes appended to its content; -1 out of memory. */
int gate_overlay_summary(struct call_state *st);
/* Every string of v (v itself, when it is one) without its secrets, in place. */
void gate_redact_json(json_t *v, struct redaction *t);
/* The string at o[key] without its secrets, in place. */
void gate_redact_member(json_t *o, const char *key, struct redaction *t);
/* What a running tool reports (progress, its log lines), without secrets:
 * the log is a tool's output too. */
struct notify_redacting {
	const struct tg_call *call;
};

void gate_notify_redacted(void *ctx, const char *event);
/* The tool's requests to the client, passed on with the caller's context. */
char *gate_ask_through(void *ctx, const char *request, const volatile int *stop);
/* A record's free text (error, reason, subject) without secrets. */
void gate_redact_record(json_t *fields);

/* ---- 9 record (record.c) ---- */

/* A record of fields (a read's, upstream_reads.c; released) appended,
 * its free text redacted; with wait, until written and synced. 0, or -1
 * and err (the log failed). */
int gate_record_fields(struct tg_gate *g, json_t *fields, int wait, struct tg_error *err);
int gate_stage_record(struct tg_gate *g, struct call_state *st, const struct tg_error *cerr,
		      struct tg_error *err);
void gate_span_begin(struct tg_gate *g, struct call_state *st);
void gate_span_finish(struct call_state *st, const struct tg_error *err);
/* A call's answer is not given without its record: why it could not be
 * written in rerr, said in err (-1). */
int gate_unrecorded(const struct call_state *st, const struct tg_error *rerr,
		    struct tg_error *err);
/* Queued refusal records written out (the gate's end). */
void gate_flush_refusals(struct tg_gate *g);
/* A connection a tool's egress proxy refused (destination, why), by
 * principal's run of subject (TOOL@VERSION): recorded as
 * tg_gate_record_refusal records an egress_denied one, in buckets of
 * egress refusals only; a run's summary (destination TG_EGRESS_SUMMARY, one
 * a run) is recorded whatever the rate, so that the N refusals it counts
 * are never counted as one. Queued, never waited for. */
int gate_record_egress_refusal(struct tg_gate *g, const char *principal, const char *subject,
			       const char *destination, const char *why);
/* A tool name as a record keeps it (cut past TOOL_NAME_RECORDED). */
json_t *gate_tool_name_json(const char *name, int *cut);

/* ---- rollback (rollback.c) and the calls the gate makes itself ---- */

/* Stages 3, 7 and 8 for a call the gate makes itself. */
int gate_run_stages(struct tg_gate *g, struct call_state *st, struct tg_error *err);
/* What the tool produced, as the caller gets it (o released). */
int gate_call_result(struct exec_out *o, struct tg_call_result *r, struct tg_error *err);


/* How one tool of a plan runs: the plan's catalogue and call (its
 * principal, scopes, limits, cancellation), dry or not, under which call
 * id, and as which step of which plan (its record says so). */
struct gate_run_env {
	const struct tg_catalog *catalog;
	const struct tg_call *call;
	int dry_run;
	const char *call_id;        /* NULL: none (a dry run) */
	const char *plan;           /* the plan's call id; NULL: not known yet (its preview) */
	const char *plan_sha256;    /* the plan's arguments' hash, or NULL */
	size_t step;                /* 1 for the plan's first step; 0: not a plan's step */
	int undo;                   /* a compensation: never held, limited nor cut short */
	int approved;               /* the plan's approver saw this step: found anomalies
				     * are recorded, and do not hold it again */
};


/* 0 while the gate's audit log writes (or it has none); -1 and err (why
 * it stopped) once it failed: nothing is done unrecorded then. */
int gate_audit_ok(struct tg_gate *g, struct tg_error *err);

/* Contract k on args (JSON text), a step of a plan or a compensation,
 * through the stages a direct call takes: validate, authorize, limit,
 * anomalies (a step that would be held is not run: its answer is the
 * tool error anomalous_arguments with its findings, unless run->approved
 * or run->undo), execute, check, record (a call record of its own, tied
 * to its plan). 0 and OUT *out (is_error when it was refused or failed),
 * -1 and err when it could not run at all, or ran and could not be
 * recorded (TG_ERR_UNAVAILABLE). */
int gate_run(struct tg_gate *g, const struct gate_run_env *run, const struct tg_contract *k,
	     const char *args, struct exec_out *out, struct tg_error *err);
/* The compensation of contract k's call call_id made with call_args (JSON
 * text, or NULL): OUT *undo, *args (JSON text, malloc'd). TG_ERR_INVALID
 * for an irreversible tool or one with no compensation. */
int gate_compensation(const struct tg_catalog *cat, const struct tg_contract *k,
		      const char *call_id, const char *call_args, const struct tg_contract **undo,
		      char **args, struct tg_error *err);

/* The executors of a plan (TG_EXEC_PLAN) and of its undoing
 * (TG_EXEC_PLAN_UNDO), which the gate runs itself: their steps are calls
 * of other tools through gate_run. */
int saga_execute(struct tg_gate *g, const struct gate_run_env *run, const char *args, size_t len,
		 struct exec_out *out, struct tg_error *err);
int saga_undo(struct tg_gate *g, const struct gate_run_env *run, const char *args, size_t len,
	      struct exec_out *out, struct tg_error *err);

/* The findings of the steps a plan's preview (JSON text: content,
 * structured) did not run for them, their places within the plan's
 * arguments (/steps/N/arguments/...): a new array, or NULL for none. */
json_t *saga_preview_findings(const char *preview);

/* A plan's arguments (JSON text) without its steps' arguments, which are
 * looked at step by step: malloc'd, or NULL (not a plan's shape, or out
 * of memory: the whole is looked at then). */
char *saga_without_arguments(const char *args, size_t len);

/* The tools of a plan's steps (its arguments, JSON text), space-separated
 * names, for its ticket's approver to cover too; NULL if none. */
char *saga_covers(const char *args, size_t len);
/* The same for the undo of a plan (its arguments name the plan's call_id),
 * from the plan's log; NULL if there is none. */
char *saga_undo_covers(struct tg_gate *g, const char *args, size_t len);

#endif
