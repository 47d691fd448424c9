/*
 * Stages 5 and 6, the write path (docs/PIPELINE.md, "Writes"): a write
 * call's idempotency key deduplicates it, its ticket holds it until a
 * person decides, and exactly one retry under the key runs it once
 * approved. A read whose arguments are anomalous is held here the same
 * way. Nothing here runs a tool except through stage_execute.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gate/gate_int.h"
#include "util/json_wide.h"
#include "util/log.h"
#include "util/sodium.h"

/* ---- 5-6 dedupe, approve: the write path (docs/PIPELINE.md) ------------------- */

/* SHA-256 of the arguments' canonical form (sorted keys, and the digits
 * of any number jansson would round: util/json_wide.h), hex; what the
 * ticket keeps of them: that form when jansson holds every number, else
 * the arguments as sent, so that a person sees the digits the tool gets.
 * Arguments jansson cannot read at all (a NUL in a name) are hashed as
 * sent. */
int gate_args_fingerprint(struct call_state *st)
{
	/* jansson's sorted form, and the digits of any number it would
	 * round: arguments that differ past a double's digits differ here */
	char *text = json_wide_canonical(st->args, st->args_len);
	unsigned char h[crypto_hash_sha256_BYTES];

	if (!text)
		text = strndup(st->args, st->args_len);
	if (!text)
		return -1;
	crypto_hash_sha256(h, (const unsigned char *)text, strlen(text));
	sodium_bin2hex(st->fingerprint, sizeof(st->fingerprint), h, sizeof(h));
	if (json_wide_has_long(st->args, st->args_len)) {
		free(text);
		text = strndup(st->args, st->args_len);
		if (!text)
			return -1;
	}
	free(st->canonical);
	st->canonical = text;
	return 0;
}

/* How a held call is found again, for its answers: a read held for its
 * anomalies without a key of the caller's by its arguments (the key
 * hold_read made of them), any other call by its idempotency key. */
static int keyless(const struct call_state *st)
{
	return st->key == st->made_key;
}

static const char *again_with(const struct call_state *st)
{
	return keyless(st) ? "the same arguments" : "the same idempotency key";
}

static const char *under(const struct call_state *st)
{
	return keyless(st) ? "with these arguments" : "under this idempotency key";
}

static const char *new_call(const struct call_state *st)
{
	if (st->key_derived)
		return "the same call again asks a person anew";
	return keyless(st) ? "a new call needs an idempotency key: without one, the same "
			     "arguments find this answer" : "a new call needs a new idempotency key";
}

/* 1 if ticket state s, under a key the gate derived, is not kept as the
 * key's answer: nobody decided (it expired, or its requester withdrew
 * it), and a stock host cannot send another key, so the same call again
 * asks anew rather than being told this for the key's 24 h. */
static int undecided_derived(const struct call_state *st, enum tg_ticket_state s)
{
	return st->key_derived && (s == TG_TICKET_EXPIRED || s == TG_TICKET_CANCELLED);
}

/* What a call without a key of its client's is told about the key the
 * gate derived for it; "" for a call with its own. */
static const char *key_note(const struct call_state *st)
{
	return st->key_derived ? " (no idempotency key was sent: one was derived from the "
				 "arguments, so the same call again finds this ticket)" : "";
}

static struct tg_idem_key idem_key(const struct call_state *st)
{
	struct tg_idem_key k = { st->call->principal, st->k->name, st->key, st->fingerprint };

	return k;
}

/* A write call's answer that is not its run: a tool error with a code
 * (awaiting_approval, running, ...), the ticket when there is one;
 * retryable unless it is the key's answer for good (a retry under the key
 * replays it: rejected, interrupted, ...) or no retry can pass it. */
int gate_answer(struct call_state *st, const char *outcome, const char *code, const char *ticket,
		  const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	gate_refuse(st, outcome, "%s", text);
	st->out.structured = json_pack("{s:{s:s,s:s,s:b}}", "error", "code", code, "message", text,
				       "retryable", strcmp(code, "rejected") != 0 &&
						    strcmp(code, "expired") != 0 &&
						    strcmp(code, "cancelled") != 0 &&
						    strcmp(code, "interrupted") != 0 &&
						    strcmp(code, "key_reused") != 0 &&
						    strcmp(code, "too_large_to_hold") != 0 &&
						    strcmp(code, "anomalous_arguments") != 0);
	if (st->out.structured && ticket)
		json_object_set_new(json_object_get(st->out.structured, "error"), "ticket",
				    json_string(ticket));
	return 1;
}

/* A held call's answer while its ticket is pending: which ticket, and
 * how to ask again. */
static int awaiting(struct call_state *st, const char *id)
{
	if (st->waited_ms >= 1000)
		return gate_answer(st, "held", "awaiting_approval", id, "%s@%s: awaiting approval: "
				   "ticket %s (toolgate approvals show %s); no decision came in the "
				   "%u s it waited: ask again later with %s%s", st->k->name,
				   st->k->version_text, id, id, st->waited_ms / 1000, again_with(st),
				   key_note(st));
	return gate_answer(st, "held", "awaiting_approval", id, "%s@%s awaits approval: ticket %s "
			   "(toolgate approvals show %s); call again with %s once it is decided%s",
			   st->k->name, st->k->version_text, id, id, again_with(st), key_note(st));
}

/* A result as the key keeps it, to replay byte for byte. */
static char *result_text(const struct exec_out *o)
{
	json_t *j = json_pack("{s:O,s:b}", "content", o->content, "isError", o->is_error);
	char *text;

	if (j && o->structured)
		json_object_set(j, "structured", o->structured);
	/* an overlay dry run's preview: what it would change */
	if (j && o->changes)
		json_object_set(j, "changes", o->changes);
	if (j && o->changes_truncated)
		json_object_set_new(j, "changes_truncated", json_true());
	/* in the order it was made: a replay answers byte for byte */
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return text;
}

static int replay(struct call_state *st, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	exec_out_release(&st->out);
	if (!j)
		return -1;
	st->out.content = json_incref(json_object_get(j, "content"));
	st->out.structured = json_incref(json_object_get(j, "structured"));
	st->out.is_error = json_is_true(json_object_get(j, "isError"));
	json_decref(j);
	st->outcome = "replayed";
	/* a derived key cannot tell two intended identical calls apart: the
	 * caller is told this answer is an earlier call's */
	if (st->key_derived && json_is_array(st->out.content))
		json_array_append_new(st->out.content, json_pack("{s:s,s:s}", "type", "text", "text",
			"This is the answer of an earlier call with the same arguments (no idempotency "
			"key was sent: the one derived from them found it); the call did not run "
			"again. To make the same call again, send an idempotency key of your own "
			"(_meta[\"dev.toolgate/idempotencyKey\"])."));
	return 1;
}

static int ticket_answer(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *kp,
			 const char *marker, const char *id, const struct tg_ticket *tp,
			 struct tg_error *err);

/* 1 if the caller gave up on the call: its cancel fd is readable (after
 * waiting up to ms for it). */
int gate_cancelled_within(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	if (fd < 0) {
		if (ms > 0)
			poll(NULL, 0, ms);
		return 0;
	}
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* Wait, within the call's budget, for a person to decide ticket id (the
 * decision may come from another process: the store is looked at every
 * 100 ms); OUT *t as it stands at the end. The caller hears progress, if
 * it asked for it, while it waits. */
static int wait_decision(struct tg_gate *g, struct call_state *st, const char *id,
			 unsigned budget, int forever, struct tg_ticket *t, struct tg_error *err);

/* How long the call waits for its ticket's decision (ms): what its
 * client asked (at most TG_MAX_APPROVAL_WAIT_MS), or, when it asked
 * nothing (a stock host's call), the policy's writes.wait (without a
 * policy its default); TG_APPROVAL_WAIT_DECIDED: until the decision. */
static unsigned wait_ms(const struct tg_gate *g, const struct call_state *st)
{
	unsigned ms = st->call->approval_wait_ms;
	uint64_t p;

	if (ms == TG_APPROVAL_WAIT_DECIDED)
		return ms;
	if (ms == TG_APPROVAL_WAIT_POLICY) {
		p = g->policy ? tg_policy_writes_wait_ms(g->policy) : TG_WRITES_WAIT_DEFAULT_MS;
		return p > TG_WRITES_WAIT_MAX_MS ? TG_WRITES_WAIT_MAX_MS : (unsigned)p;
	}
	return ms > TG_MAX_APPROVAL_WAIT_MS ? TG_MAX_APPROVAL_WAIT_MS : ms;
}

static int await_decision(struct tg_gate *g, struct call_state *st, const char *id,
			  struct tg_ticket *t, struct tg_error *err)
{
	unsigned budget = wait_ms(g, st);
	int forever = budget == TG_APPROVAL_WAIT_DECIDED, rc;
	struct tg_span *span;

	span = tg_span_start(g->tracer, "approval wait", TG_SPAN_INTERNAL, st->span, NULL);
	tg_span_set_str(span, "toolgate.ticket", id);
	rc = wait_decision(g, st, id, budget, forever, t, err);
	tg_span_set_str(span, "toolgate.ticket.state", rc == 0 ? tg_ticket_state_name(t->state)
								: "unknown");
	if (rc < 0)
		tg_span_error(span, "store", err->msg);
	tg_span_end(span);
	return rc;
}

#define WAIT_PROGRESS_MS 5000 /* a waiting call's progress, this often: a host's
			       * request timeout that progress resets does not lapse */

/* A waiting call's progress: the seconds waited, of how many. */
static void wait_progress(const struct call_state *st, const char *id, unsigned waited,
			  unsigned budget, int forever)
{
	char event[200], total[32] = "";

	if (!st->call->notify)
		return;
	if (!forever)
		snprintf(total, sizeof(total), ",\"total\":%u", budget / 1000);
	snprintf(event, sizeof(event), "{\"progress\":{\"progress\":%u%s,\"message\":"
		 "\"awaiting approval: ticket %s\"}}", waited / 1000, total, id);
	st->call->notify(st->call->notify_ctx, event);
}

static unsigned since_ms(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned)((now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000);
}

/* No lock is held while it waits: the store is asked, briefly, every
 * 100 ms, and the call's cancel fd polled in between. */
static int wait_decision(struct tg_gate *g, struct call_state *st, const char *id,
			 unsigned budget, int forever, struct tg_ticket *t, struct tg_error *err)
{
	unsigned waited = 0, told = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	wait_progress(st, id, 0, budget, forever);
	for (;;) {
		if (tg_store_ticket_get(g->store, id, TG_STORE_NOW, t, err) < 0)
			return -1;
		waited = since_ms(&t0);
		st->waited_ms = waited;
		if (t->state != TG_TICKET_PENDING || (!forever && waited >= budget))
			return 0;
		/* the session ends (stdin closed): a wait its client did not
		 * ask for (the policy's) is answered now, rather than holding
		 * the server's exit for writes.wait; one it asked for runs on,
		 * as a call in flight does (within 120 s) */
		if (st->call->approval_wait_ms == TG_APPROVAL_WAIT_POLICY && st->call->end_wait &&
		    *st->call->end_wait)
			return 0;
		if (gate_cancelled_within(st->call->cancel_fd, 100)) {
			/* the caller withdrew its request: nobody may approve it now */
			if (!st->call->withdraw || !*st->call->withdraw ||
			    tg_store_ticket_move(g->store, id, TG_TICKET_PENDING,
						 TG_TICKET_CANCELLED, NULL) < 0)
				return 0;
			tg_ticket_release(t);
			return tg_store_ticket_get(g->store, id, TG_STORE_NOW, t, err);
		}
		tg_ticket_release(t);
		if (waited / WAIT_PROGRESS_MS > told) {
			told = waited / WAIT_PROGRESS_MS;
			wait_progress(st, id, waited, budget, forever);
		}
	}
}

/* 1 if ticket t was made for the very tool@version the call resolved to. */
static int same_tool(const struct call_state *st, const struct tg_ticket *t)
{
	size_t n = strlen(st->k->name);

	return strncmp(t->tool, st->k->name, n) == 0 && t->tool[n] == '@' &&
	       strcmp(t->tool + n + 1, st->k->version_text) == 0;
}

/* The key's result is a ticket (held for approval): what it says now. */
static int ticket_step(struct tg_gate *g, struct call_state *st, const char *marker,
		       const char *id, struct tg_error *err)
{
	struct tg_idem_key key = idem_key(st);
	struct tg_ticket t;
	int rc;

	if (tg_store_ticket_get(g->store, id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	if (t.state == TG_TICKET_PENDING && wait_ms(g, st)) {
		tg_ticket_release(&t);
		if (await_decision(g, st, id, &t, err) < 0)
			return -1;
	}
	rc = ticket_answer(g, st, &key, marker, id, &t, err);
	tg_ticket_release(&t);
	return rc;
}

/* ticket_step's answer for ticket t, in the state it is. */
static int ticket_answer(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *kp,
			 const char *marker, const char *id, const struct tg_ticket *tp,
			 struct tg_error *err)
{
	struct tg_idem_key key = *kp;
	struct tg_ticket t = *tp;
	char *final;
	int rc;

	switch (t.state) {
	case TG_TICKET_PENDING:
		return awaiting(st, id);
	case TG_TICKET_APPROVED:
		/* what was approved is exactly this version: a retry that now
		 * resolves to another (a reload, another pin) does not run */
		if (!same_tool(st, &t))
			return gate_answer(st, "refused", "version_changed", id, "ticket %s approved %s; "
				      "this call resolves to %s@%s, which nobody approved: call %s with "
				      "%s, or make a new call", id, t.tool, st->k->name,
				      st->k->version_text, t.tool, again_with(st));
		/* exactly one retry runs it: the one that takes the key back */
		rc = tg_store_idem_reclaim(g->store, &key, marker, strlen(marker), err);
		if (rc < 0)
			return -1;
		if (rc > 0)
			return gate_answer(st, "refused", "running", id, "%s@%s: the approved call %s is "
				      "running; retry when it ends", st->k->name, st->k->version_text,
				      under(st));
		st->claimed = 1;
		snprintf(st->ticket, sizeof(st->ticket), "%s", id);
		return 0;
	default:
		/* decided against, or never: final, and kept as the key's answer */
		if (t.state == TG_TICKET_REJECTED)
			gate_answer(st, "rejected", "rejected", id, "%s@%s was rejected by %s: %s",
			       st->k->name, st->k->version_text, t.approver, t.reason ? t.reason : "");
		else if (t.state == TG_TICKET_CANCELLED)
			gate_answer(st, "cancelled", "cancelled", id, "%s@%s: ticket %s was withdrawn "
			       "before anyone decided; the call did not run (%s)", st->k->name,
			       st->k->version_text, id, new_call(st));
		else
			gate_answer(st, "expired", "expired", id, "%s@%s: ticket %s is %s; the call did not "
			       "run (%s)", st->k->name, st->k->version_text, id,
			       tg_ticket_state_name(t.state), new_call(st));
		if (undecided_derived(st, t.state))
			return 1; /* the key keeps the ticket: renew_undecided */
		final = result_text(&st->out);
		if (final)
			tg_store_idem_replace(g->store, &key, marker, strlen(marker), final,
					      strlen(final), err);
		free(final);
		return 1;
	}
}

/* Under a derived key whose ticket nobody decided (undecided_derived):
 * the key let go, so that this call holds a new ticket (2); 0 when the
 * key's answer stands (another ticket state, another retry took the key
 * first); -1 and err. */
static int renew_undecided(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *key,
			   const char *marker, const char *id, struct tg_error *err)
{
	struct tg_ticket t;
	int undecided, rc;

	if (!st->key_derived)
		return 0;
	if (tg_store_ticket_get(g->store, id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	undecided = undecided_derived(st, t.state);
	tg_ticket_release(&t);
	if (!undecided)
		return 0;
	/* taken back, then let go: exactly one retry does, the others are
	 * told it is running meanwhile */
	rc = tg_store_idem_reclaim(g->store, key, marker, strlen(marker), err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	return tg_store_idem_abandon(g->store, key, err) < 0 ? -1 : 2;
}


/* The dry run of a new write call, as its ticket keeps it: 0 and OUT
 * *text (JSON {content, isError, structured?}, malloc'd); 1 when the dry
 * run says the call would fail (st->out is its answer, and the call ends
 * there); -1 and err. */
static int preview(struct tg_gate *g, struct call_state *st, char **text, struct tg_error *err)
{
	int rc;

	*text = NULL;
	st->dry = 1;
	rc = gate_stage_execute(g, st, err);
	if (rc == 0)
		rc = gate_stage_check_redact(g, st);
	st->dry = 0;
	if (rc != 0)
		return rc;
	if (st->out.is_error) {
		/* busy or cancelled before it ran: said as such */
		if (strcmp(st->outcome, "busy") != 0 && strcmp(st->outcome, "cancelled") != 0)
			st->outcome = "dry_run_failed";
		return 1;
	}
	*text = result_text(&st->out);
	exec_out_release(&st->out);
	if (!*text)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (strlen(*text) > TG_IDEM_MAX_RESULT) {
		free(*text);
		*text = NULL;
		return gate_refuse(st, "refused", "%s@%s: its dry run printed more than %u bytes: too "
			      "much to show an approver", st->k->name, st->k->version_text,
			      TG_IDEM_MAX_RESULT);
	}
	return 0;
}

/* A call under this key is running: still, or its gateway died running it
 * (kill -9, a power cut). Then this one takes the key over: an approved
 * call of a resumable tool runs again under its call id (the tool replays
 * what it did); one of a tool that is not ends failed, as its effect is
 * unknown; 2 when the dead gateway had not made the ticket yet (the call
 * starts afresh). */
static int takeover(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *key,
		    struct tg_error *err)
{
	char *marker = NULL, *final;
	const char *id;
	struct tg_ticket t;
	json_t *j;
	int rc;

	rc = tg_store_idem_takeover(g->store, key, &marker, err);
	if (rc < 0)
		return -1;
	if (rc == 1)
		return gate_answer(st, "refused", "running", NULL, "%s: a call %s%.64s is running; "
			      "retry when it ends", st->k->name, keyless(st) ? "with these arguments"
			      : "under idempotency key ", keyless(st) ? "" : st->key);
	j = marker ? json_loads(marker, 0, NULL) : NULL;
	id = json_string_value(json_object_get(j, "ticket"));
	if (!id) {
		json_decref(j);
		free(marker);
		return 2;
	}
	snprintf(st->ticket, sizeof(st->ticket), "%s", id);
	json_decref(j);
	free(marker);
	if (tg_store_ticket_get(g->store, st->ticket, TG_STORE_NOW, &t, err) < 0)
		return -1;
	tg_ticket_release(&t);
	st->claimed = 1;
	/* a read changes nothing: running it again is safe */
	if (t.state == TG_TICKET_APPROVED && same_tool(st, &t) &&
	    (st->k->resumable || st->k->authority != TG_AUTHORITY_WRITE)) {
		st->resumed = 1;
		return 0;
	}
	/* not resumable: whether it took effect is for a person to find out */
	gate_answer(st, "interrupted", "interrupted", st->ticket, "%s@%s: the gateway stopped while "
	       "the approved call %s ran; whether it took effect is unknown (the tool cannot "
	       "rerun it safely), so it is marked failed: check before calling again with a new "
	       "idempotency key", st->k->name, st->k->version_text, st->ticket);
	final = result_text(&st->out);
	if (!final || tg_store_idem_finish_call(g->store, key, final, strlen(final), st->ticket,
						TG_TICKET_FAILED, err) < 0)
		tg_log(TG_LOG_ERROR, "write %s: interrupted call %s: %s", st->k->name, st->ticket,
		       final ? err->msg : "out of memory");
	free(final);
	st->claimed = 0;
	return 1;
}

/* 5 dedupe and 6 approve, for a write tool, and a read held for its
 * anomalies: the call runs (0, its key claimed) only once a person
 * approved these exact arguments; before that, and on every retry under
 * the same key, it is answered (1). A write's dry run (a tool that
 * supports one) runs at once: it changes nothing. */
static int hold_read(struct tg_gate *g, struct call_state *st, struct tg_error *err);
static int derive_key(struct call_state *st);
static int held(struct tg_gate *g, struct call_state *st, int64_t ttl, struct tg_error *err);

int gate_stage_write(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	if (st->call->dry_run && st->k->authority == TG_AUTHORITY_WRITE) {
		char first[320];

		/* a dry run shows what a call would touch: not before a person
		 * saw arguments that would hold it */
		if (st->anomalous == TG_ANOMALY_HOLD)
			return gate_answer(st, "anomalous", "anomalous_arguments", NULL, "%s@%s: its "
					   "arguments are anomalous (%s): its dry run is not shown; call "
					   "it for real to have it held for a person's review",
					   st->k->name, st->k->version_text,
					   gate_first_finding(st, first, sizeof(first)));
		if (st->k->dry_run < 1)
			return gate_answer(st, "refused", "dry_run_unsupported", NULL, "%s@%s cannot show "
				      "what it would do: its contract says dry_run unsupported",
				      st->k->name, st->k->version_text);
		st->dry = 1;
		return 0;
	}
	if (st->k->authority != TG_AUTHORITY_WRITE && st->anomalous != TG_ANOMALY_HOLD)
		return 0; /* a read changes nothing: its dry run is the call */
	if (st->k->authority != TG_AUTHORITY_WRITE)
		return hold_read(g, st, err);
	if (!g->store)
		return gate_refuse(st, "refused",
			      "%s@%s is a write tool: write tools run only through the approval "
			      "gate, which needs a policy and a state directory (serve --policy "
			      "--state)", st->k->name, st->k->version_text);
	if (!st->call->idempotency_key) {
		/* the policy may want the client's own key for this tool: a
		 * host that retries is then told to send one */
		if (g->policy && tg_policy_client_key(g->policy, st->k->name))
			return gate_refuse(st, "refused", "%s@%s is a write tool: it needs an "
					   "idempotency key (_meta[\"dev.toolgate/idempotencyKey\"], "
					   "or the HTTP Idempotency-Key header): the policy's "
					   "writes.client_key names it", st->k->name,
					   st->k->version_text);
		if (derive_key(st) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return held(g, st, IDEM_TTL, err);
	}
	st->key = st->call->idempotency_key;
	return held(g, st, IDEM_TTL, err);
}

/* A write call without a key of its client's (a stock agent host sends
 * none): one derived from who calls, what (tool and version) and the
 * canonical arguments' hash, so that the host's retry of the same call
 * finds the same ticket and the same answer (docs/PIPELINE.md, "Write
 * calls"). -1 out of memory. */
static int derive_key(struct call_state *st)
{
	crypto_hash_sha256_state h;
	unsigned char d[crypto_hash_sha256_BYTES];
	char hex[2 * 16 + 1];

	if (!st->fingerprint[0] && gate_args_fingerprint(st) < 0)
		return -1;
	crypto_hash_sha256_init(&h);
	/* each part ends with a NUL: no two calls' parts run together */
	crypto_hash_sha256_update(&h, (const unsigned char *)st->call->principal,
				  strlen(st->call->principal) + 1);
	crypto_hash_sha256_update(&h, (const unsigned char *)st->k->name, strlen(st->k->name) + 1);
	crypto_hash_sha256_update(&h, (const unsigned char *)st->k->version_text,
				  strlen(st->k->version_text) + 1);
	crypto_hash_sha256_update(&h, (const unsigned char *)st->fingerprint,
				  strlen(st->fingerprint) + 1);
	crypto_hash_sha256_final(&h, d);
	sodium_bin2hex(hex, sizeof(hex), d, 16);
	snprintf(st->made_key, sizeof(st->made_key), "derived:%s", hex);
	st->key = st->made_key;
	st->key_derived = 1;
	return 0;
}

/* A read whose arguments are anomalous, held as a write is: under the
 * caller's idempotency key, or one made of its arguments' hash, so that
 * the same call again finds its ticket. Its result is kept for a retry
 * until an hour after the ticket would have expired, no longer: a read's
 * answer goes stale. */
/* The first of the call's findings, for its answer: "RULE at /AT: WHY". */
const char *gate_first_finding(const struct call_state *st, char *out, size_t len)
{
	const struct tg_anomaly_finding *f = &st->anomalies->f[0];

	snprintf(out, len, "%s at %s: %s", tg_anomaly_rule_name(f->rule), f->at[0] ? f->at : "/",
		 f->why);
	return out;
}

static int hold_read(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	char first[320];

	if (!g->store)
		return gate_answer(st, "anomalous", "anomalous_arguments", NULL, "%s@%s: its arguments "
			      "are anomalous (%s) and such a call is held for a person's review, "
			      "which needs a policy and a state directory (serve --policy --state); "
			      "it did not run", st->k->name, st->k->version_text,
			      gate_first_finding(st, first, sizeof(first)));
	if (st->call->idempotency_key) {
		st->key = st->call->idempotency_key;
		return held(g, st, IDEM_TTL, err);
	}
	if (gate_args_fingerprint(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	snprintf(st->made_key, sizeof(st->made_key), "anomalous:%.32s", st->fingerprint);
	st->key = st->made_key;
	return held(g, st, gate_ticket_ttl(g, st->k->name) + 3600, err);
}

#define TICKET_FINDINGS_MAX 16000 /* the store keeps 16,384 bytes of them */

/* What holds the call, for its ticket: its own findings, and those of a
 * plan's steps its preview did not run, so that the approver sees what
 * the hold is about. OUT *text (JSON, malloc'd), NULL for none; -1 out of
 * memory. */
static int ticket_findings(const struct call_state *st, const char *preview, char **text)
{
	int plan = st->k->executor == TG_EXEC_PLAN;
	json_t *f = st->anomalies ? anomaly_findings_json(st->anomalies) : json_array();
	json_t *steps = plan ? saga_preview_findings(preview) : NULL;

	*text = NULL;
	if (f && steps)
		json_array_extend(f, steps);
	json_decref(steps);
	/* within what a ticket keeps of them (16 KiB): the first ones */
	while (f && json_array_size(f)) {
		*text = json_dumps(f, JSON_COMPACT);
		if (!*text || strlen(*text) <= TICKET_FINDINGS_MAX)
			break;
		free(*text);
		*text = NULL;
		json_array_remove(f, json_array_size(f) - 1);
	}
	json_decref(f);
	return (st->anomalies || steps) && !*text ? -1 : 0;
}

/* The call under its key st->key (kept ttl seconds): held for a ticket,
 * or answered as the ticket stands. */
static int held(struct tg_gate *g, struct call_state *st, int64_t ttl, struct tg_error *err)
{
	struct tg_queue_bounds bounds;
	struct tg_idem_record rec;
	struct tg_idem_key key;
	struct tg_ticket req, t;
	int rc, renewed = 0;

	if (!st->fingerprint[0] && gate_args_fingerprint(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	key = idem_key(st);
again:
	if (tg_store_idem_begin(g->store, &key, TG_STORE_NOW, ttl, &rec, err) < 0)
		return err->code == TG_ERR_INVALID ? gate_refuse(st, "refused", "%s", err->msg) : -1;
	if (rec.state == TG_IDEM_MISMATCH) {
		tg_idem_record_release(&rec);
		return gate_answer(st, "refused", "key_reused", NULL, "idempotency key %.64s was used with "
			      "other arguments of %s: a new call needs a new key", st->key,
			      st->k->name);
	}
	if (rec.state == TG_IDEM_RUNNING) {
		tg_idem_record_release(&rec);
		rc = takeover(g, st, &key, err);
		if (rc != 2)
			return rc;
		/* the dead gateway was still making the ticket: start afresh */
	} else if (rec.state == TG_IDEM_DONE) {
		json_t *j = json_loadb(rec.result, rec.result_len, 0, NULL);
		const char *id = json_string_value(json_object_get(j, "ticket"));

		rc = id && !renewed ? renew_undecided(g, st, &key, rec.result, id, err) : 0;
		if (rc == 0)
			rc = id ? ticket_step(g, st, rec.result, id, err) : replay(st, rec.result);
		json_decref(j);
		tg_idem_record_release(&rec);
		if (rc == 2) {
			renewed = 1;
			goto again;
		}
		return rc;
	}
	/* new: an anomalous read's principal may have only so many awaiting
	 * review (its read scope must not fill the approvers' queue) */
	if (st->k->authority != TG_AUTHORITY_WRITE) {
		uint64_t pending, cap = tg_anomaly_config_max_pending(g->anomaly_config);

		if (tg_store_tickets_anomalous(g->store, st->call->principal, TG_STORE_NOW,
					       &pending, err) < 0) {
			tg_store_idem_abandon(g->store, &key, NULL);
			return -1;
		}
		if (pending >= cap) {
			tg_store_idem_abandon(g->store, &key, NULL);
			char first[320];

			return gate_answer(st, "anomalous", "too_many_pending", NULL, "%s@%s: its "
				      "arguments are anomalous (%s), and %llu anomalous calls of %s "
				      "already await review (at most %llu): it did not run, and was not "
				      "held", st->k->name, st->k->version_text,
				      gate_first_finding(st, first, sizeof(first)),
				      (unsigned long long)pending, st->call->principal,
				      (unsigned long long)cap);
		}
	}
	/* new: within what the queue may hold (docs/PIPELINE.md, "Bounds of
	 * the queue"): a write's principal's tickets, any ticket's size */
	rc = st->k->authority == TG_AUTHORITY_WRITE
		     ? gate_queue_admit(g, st, strlen(st->canonical), err)
		     : gate_queue_fits(g, st, strlen(st->canonical));
	if (rc != 0) {
		tg_store_idem_abandon(g->store, &key, NULL);
		return rc;
	}
	/* new: the dry run's preview, for the approver and the caller */
	memset(&req, 0, sizeof(req));
	if (st->k->authority == TG_AUTHORITY_WRITE && st->k->dry_run >= 1) {
		rc = preview(g, st, &req.preview, err);
		if (rc == 0 && gate_queue_fits(g, st, strlen(st->canonical) + strlen(req.preview))) {
			free(req.preview);
			req.preview = NULL;
			rc = 1;
		}
		if (rc != 0) {
			/* it would fail, could not be shown, or is too much to
			 * hold: no ticket, and the key is free again */
			tg_store_idem_abandon(g->store, &key, NULL);
			return rc;
		}
	}
	/* a ticket for these exact arguments, the key holding it */
	snprintf(req.principal, sizeof(req.principal), "%s", st->call->principal);
	snprintf(req.tool, sizeof(req.tool), "%s@%s", st->k->name, st->k->version_text);
	memcpy(req.args_sha256, st->fingerprint, sizeof(req.args_sha256));
	req.arguments = st->canonical;
	if (ticket_findings(st, req.preview, &req.findings) < 0) {
		free(req.preview);
		tg_store_idem_abandon(g->store, &key, NULL);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* a plan's approver approves each of its steps' tools too */
	if (st->k->executor == TG_EXEC_PLAN)
		req.covers = saga_covers(st->args, st->args_len);
	else if (st->k->executor == TG_EXEC_PLAN_UNDO)
		req.covers = saga_undo_covers(g, st->args, st->args_len);
	/* the queue's bounds once more, where no other call can add to it */
	bounds.max_pending = g->tickets.max_pending;
	bounds.max_bytes = g->tickets.max_pending_bytes;
	rc = tg_store_idem_hold(g->store, &key, &req, TG_STORE_NOW,
				gate_ticket_ttl(g, st->k->name), &bounds, &t, err);
	free(req.covers);
	free(req.findings);
	if (rc != 0) {
		free(req.preview);
		tg_store_idem_abandon(g->store, &key, NULL);
		return rc < 0 ? -1 : gate_queue_full(g, st);
	}
	tg_ticket_release(&t);
	if (wait_ms(g, st)) {
		/* decided within the caller's budget: answered as its retry
		 * would be (run once approved, the rejection, ...) */
		char marker[64];

		snprintf(marker, sizeof(marker), "{\"ticket\":\"%s\"}", t.id);
		rc = ticket_step(g, st, marker, t.id, err);
		if (rc <= 0) {
			free(req.preview);
			return rc;
		}
	} else {
		awaiting(st, t.id);
	}
	/* the caller sees the preview of what it asked, unless what it asked
	 * is held for its anomalies: then only a person does */
	if (req.preview && !st->anomalies && st->out.structured && strcmp(st->outcome, "held") == 0)
		json_object_set_new(json_object_get(st->out.structured, "error"), "preview",
				    json_loads(req.preview, 0, NULL));
	free(req.preview);
	return 1;
}

#define KEEP_WAIT_MS 15000 /* how long a run's result waits for a store that is away */

/* After a claimed write ran: its result is the key's for every retry,
 * its ticket executed or failed. The caller hears the result only once
 * it is kept: a store away for a moment (a database restarted or failed
 * over) is waited for, KEEP_WAIT_MS at most, and past that the answer is
 * unrecorded, retryable: the call ran, and a retry under its key replays
 * its result once the store has it (a PostgreSQL store keeps trying,
 * docs/STORE.md, "Claims left behind"). */
void gate_write_done(struct tg_gate *g, struct call_state *st)
{
	struct tg_idem_key key = idem_key(st);
	struct tg_error err;
	char *final = result_text(&st->out);
	unsigned waited = 0, pause = 100;
	int rc = -1, have = final != NULL;

	while (final && (rc = tg_store_idem_finish_call(g->store, &key, final, strlen(final),
							st->ticket, st->out.is_error
							? TG_TICKET_FAILED : TG_TICKET_EXECUTED,
							&err)) < 0 &&
	       err.code == TG_ERR_SYSTEM && waited < KEEP_WAIT_MS) {
		usleep(pause * 1000);
		waited += pause;
		pause = pause < 500 ? pause * 2 : 1000;
	}
	if (rc < 0 && final && err.code == TG_ERR_LIMIT) {
		/* more than a key keeps: the caller has it now, a retry is told
		 * it ran and was too large to keep, never "running" for a day */
		char stand[256];

		snprintf(stand, sizeof(stand), "{\"content\":[{\"type\":\"text\",\"text\":"
			 "\"call %s ran; its result, %zu bytes, was more than an idempotency key "
			 "keeps (%u), so it is not replayed\"}],\"isError\":true}", st->ticket,
			 strlen(final), TG_IDEM_MAX_RESULT);
		rc = tg_store_idem_finish_call(g->store, &key, stand, strlen(stand), st->ticket,
					       st->out.is_error ? TG_TICKET_FAILED
								: TG_TICKET_EXECUTED, &err);
	}
	if (rc == 0) {
		free(final);
		return;
	}
	tg_log(TG_LOG_ERROR, "write %s: its result was not kept: %s", st->k->name,
	       have ? err.msg : "out of memory");
	free(final);
	/* never told a result the store does not have: asked again, the key
	 * answers what the store holds */
	if (have && err.code == TG_ERR_INVALID)
		gate_answer(st, "unrecorded", "unrecorded", st->ticket, "%s@%s ran as call %s, but "
			    "another gateway took its key over meanwhile (it judged this one gone: "
			    "%s): ask again under the same key for what the store holds",
			    st->k->name, st->k->version_text, st->ticket, err.msg);
	else
		gate_answer(st, "unrecorded", "unrecorded", st->ticket, "%s@%s ran as call %s, but "
			    "its result could not be kept yet (%s): ask again under the same key, "
			    "which replays it once the store has it", st->k->name,
			    st->k->version_text, st->ticket, have ? err.msg : "out of memory");
}
