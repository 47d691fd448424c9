/* Unit tests: src/gate/decide.c, a person's decision on a held write
 * (tg_gate_decide) over a real store and audit log in a temporary state
 * directory: who may approve, reject or cancel, the reason's ceiling, a
 * ticket decided already, a log that stopped. Each reads back the
 * ticket from the store and the log's records from its file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "toolgate/audit.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "unit.h"

static struct tg_error last; /* the last decision's */

#define HASH "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* A state directory with a store, an audit log and one pending ticket:
 * agent-1 asked for files.delete@1.0.0 (and, with covers, those tools). */
struct fixture {
	char dir[64], log[128], id[33];
	struct tg_store *st;
	struct tg_audit *a;
};

static int setup(struct fixture *f, const char *covers)
{
	struct tg_ticket req, t;
	struct tg_error err;

	memset(f, 0, sizeof(*f));
	if (unit_tmpdir(f->dir, "decide") < 0)
		return -1;
	snprintf(f->log, sizeof(f->log), "%s/audit.log", f->dir);
	if (tg_store_open(f->dir, &f->st, &err) < 0 ||
	    tg_audit_open(f->log, TG_AUDIT_NOSYNC, &f->a, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent-1");
	strcpy(req.tool, "files.delete@1.0.0");
	strcpy(req.args_sha256, HASH);
	req.preview = "would delete 2 files";
	req.covers = (char *)covers;
	if (tg_store_ticket_create(f->st, &req, (int64_t)time(NULL), 3600, &t, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	snprintf(f->id, sizeof(f->id), "%s", t.id);
	tg_ticket_release(&t);
	return 0;
}

static void teardown(struct fixture *f)
{
	tg_audit_close(f->a);
	tg_store_close(f->st);
	unit_rmtree(f->dir);
}

/* The log's records as they are in its file, in order (a JSON array;
 * NULL when a line is not JSON). Each decision waits for its record,
 * so the file holds it once tg_gate_decide returned. */
static json_t *records(const struct fixture *f)
{
	json_t *all = json_array(), *o;
	FILE *in = fopen(f->log, "re");
	char *line = NULL;
	size_t cap = 0;

	while (all && in && getline(&line, &cap, in) > 0) {
		o = json_loads(line, 0, NULL);
		if (!o) {
			json_decref(all);
			all = NULL;
			break;
		}
		json_array_append_new(all, o);
	}
	free(line);
	if (in)
		fclose(in);
	return all;
}

static const char *field(const json_t *rec, const char *name)
{
	return json_string_value(json_object_get(rec, name));
}

/* 1 if rec is the decision record of f's ticket by who, with outcome and
 * reason (NULL: none). */
static int is_decision(const struct fixture *f, const json_t *rec, const char *who,
		       const char *outcome, const char *reason)
{
	const char *r = field(rec, "reason");

	return rec && strcmp(field(rec, "kind"), "decision") == 0 &&
	       strcmp(field(rec, "principal"), who) == 0 &&
	       strcmp(field(rec, "subject"), f->id) == 0 &&
	       strcmp(field(rec, "outcome"), outcome) == 0 &&
	       strcmp(field(rec, "tool"), "files.delete@1.0.0") == 0 &&
	       strcmp(field(rec, "requester"), "agent-1") == 0 &&
	       strcmp(field(rec, "args_sha256"), HASH) == 0 &&
	       (reason ? r && strcmp(r, reason) == 0 : !r);
}

/* How many records the log holds (-1: unreadable). */
static long count(const struct fixture *f)
{
	json_t *all = records(f);
	long n = all ? (long)json_array_size(all) : -1;

	json_decref(all);
	return n;
}

/* The state of f's ticket in the store (-1: it could not be read). */
static int state_of(const struct fixture *f)
{
	struct tg_ticket t;
	struct tg_error err;
	int s;

	if (tg_store_ticket_get(f->st, f->id, (int64_t)time(NULL), &t, &err) < 0)
		return -1;
	s = (int)t.state;
	tg_ticket_release(&t);
	return s;
}

/* f's ticket decided by who holding scopes, recorded in f's log. */
static int decide(struct fixture *f, const char *who, const char *scopes, enum tg_decision d,
		  const char *reason)
{
	return tg_gate_decide(f->st, f->a, who, scopes, f->id, d, reason, &last);
}

static int approve(void)
{
	struct fixture f;
	struct tg_ticket t;
	struct tg_error err;
	json_t *all;

	CHECK(setup(&f, NULL) == 0);
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_APPROVE, NULL) == 0);
	CHECK(tg_store_ticket_get(f.st, f.id, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.state == TG_TICKET_APPROVED && strcmp(t.approver, "alice") == 0 && t.decided > 0);
	tg_ticket_release(&t);
	all = records(&f);
	CHECK(all && json_array_size(all) == 1);
	CHECK(is_decision(&f, json_array_get(all, 0), "alice", "approved", NULL));
	json_decref(all);
	teardown(&f);
	return 0;
}

static int reject(void)
{
	struct fixture f;
	struct tg_ticket t;
	struct tg_error err;
	json_t *all;

	CHECK(setup(&f, NULL) == 0);
	/* a rejection says why: the store refuses one without, unrecorded */
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_REJECT, NULL) < 0);
	CHECK(last.code == TG_ERR_INVALID && strstr(last.msg, "a rejection needs a reason"));
	CHECK(state_of(&f) == TG_TICKET_PENDING && count(&f) == 0);
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_REJECT, "not that file") == 0);
	CHECK(tg_store_ticket_get(f.st, f.id, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.state == TG_TICKET_REJECTED && strcmp(t.approver, "alice") == 0 && t.reason &&
	      strcmp(t.reason, "not that file") == 0);
	tg_ticket_release(&t);
	all = records(&f);
	CHECK(all && json_array_size(all) == 1);
	CHECK(is_decision(&f, json_array_get(all, 0), "alice", "rejected", "not that file"));
	json_decref(all);
	teardown(&f);
	return 0;
}

static int cancel_by_requester(void)
{
	struct fixture f;
	json_t *all;

	CHECK(setup(&f, NULL) == 0);
	/* its own call: no approve scope needed */
	CHECK(decide(&f, "agent-1", "files.*:write", TG_DECISION_CANCEL, "wrong file") == 0);
	CHECK(state_of(&f) == TG_TICKET_CANCELLED);
	all = records(&f);
	CHECK(all && json_array_size(all) == 1);
	CHECK(is_decision(&f, json_array_get(all, 0), "agent-1", "cancelled", "wrong file"));
	json_decref(all);
	teardown(&f);
	return 0;
}

static int cancel_by_another(void)
{
	struct fixture f;

	CHECK(setup(&f, NULL) == 0);
	/* an approver of the tool is not its requester */
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_CANCEL, NULL) < 0);
	CHECK(last.code == TG_ERR_FORBIDDEN &&
	      strcmp(last.msg, "alice did not ask for this call: only agent-1 may cancel it") == 0);
	CHECK(state_of(&f) == TG_TICKET_PENDING && count(&f) == 0);
	teardown(&f);
	return 0;
}

static int approve_without_scope(void)
{
	struct fixture f;

	CHECK(setup(&f, NULL) == 0);
	CHECK(decide(&f, "bob", "sql.*:approve", TG_DECISION_APPROVE, NULL) < 0);
	CHECK(last.code == TG_ERR_FORBIDDEN &&
	      strcmp(last.msg, "bob may not approve files.delete@1.0.0 (it needs the scope "
			       "files.delete:approve)") == 0);
	/* a rejection needs the same right */
	CHECK(decide(&f, "bob", "sql.*:approve", TG_DECISION_REJECT, "no") < 0 &&
	      last.code == TG_ERR_FORBIDDEN);
	/* the requester never approves its own call, whatever its scopes */
	CHECK(decide(&f, "agent-1", "files.*:approve", TG_DECISION_APPROVE, NULL) < 0);
	CHECK(last.code == TG_ERR_INVALID &&
	      strstr(last.msg, "agent-1 asked for this call and cannot approve it"));
	CHECK(state_of(&f) == TG_TICKET_PENDING && count(&f) == 0);
	teardown(&f);

	/* a plan's ticket: an approve scope over each tool it covers */
	CHECK(setup(&f, "files.delete sql.execute") == 0);
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_APPROVE, NULL) < 0);
	CHECK(last.code == TG_ERR_FORBIDDEN &&
	      strstr(last.msg, "(it needs the scope sql.execute:approve)"));
	CHECK(state_of(&f) == TG_TICKET_PENDING && count(&f) == 0);
	CHECK(decide(&f, "alice", "files.*:approve sql.*:approve", TG_DECISION_APPROVE, NULL) == 0);
	CHECK(state_of(&f) == TG_TICKET_APPROVED && count(&f) == 1);
	teardown(&f);
	return 0;
}

static int reason_too_long(void)
{
	struct fixture f;
	char reason[1002];
	json_t *all;

	memset(reason, 'r', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	CHECK(setup(&f, NULL) == 0);
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_REJECT, reason) < 0);
	CHECK(last.code == TG_ERR_LIMIT && strcmp(last.msg, "reason: at most 1000 bytes") == 0);
	CHECK(decide(&f, "agent-1", "", TG_DECISION_CANCEL, reason) < 0 &&
	      last.code == TG_ERR_LIMIT);
	CHECK(state_of(&f) == TG_TICKET_PENDING && count(&f) == 0);
	/* 1000 bytes is within */
	reason[1000] = '\0';
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_REJECT, reason) == 0);
	all = records(&f);
	CHECK(all && json_array_size(all) == 1);
	CHECK(is_decision(&f, json_array_get(all, 0), "alice", "rejected", reason));
	json_decref(all);
	CHECK(state_of(&f) == TG_TICKET_REJECTED);
	teardown(&f);
	return 0;
}

static int decided_already(void)
{
	struct fixture f;

	CHECK(setup(&f, NULL) == 0);
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_APPROVE, NULL) == 0);
	CHECK(decide(&f, "carol", "files.*:approve", TG_DECISION_APPROVE, NULL) < 0);
	CHECK(last.code == TG_ERR_INVALID && strstr(last.msg, "is approved, not pending"));
	CHECK(decide(&f, "carol", "files.*:approve", TG_DECISION_REJECT, "too late") < 0 &&
	      strstr(last.msg, "not pending"));
	CHECK(decide(&f, "agent-1", "", TG_DECISION_CANCEL, NULL) < 0);
	CHECK(last.code == TG_ERR_INVALID && strstr(last.msg, "is not pending"));
	/* the first decision stands, recorded once */
	CHECK(state_of(&f) == TG_TICKET_APPROVED && count(&f) == 1);
	/* no such ticket, no such decision */
	CHECK(tg_gate_decide(f.st, f.a, "alice", "files.*:approve",
			     "0123456789abcdef0123456789abcdef", TG_DECISION_APPROVE, NULL,
			     &last) < 0);
	CHECK(last.code == TG_ERR_INVALID && strstr(last.msg, "no such ticket"));
	CHECK(decide(&f, "alice", "files.*:approve", (enum tg_decision)0, NULL) < 0 &&
	      last.code == TG_ERR_INVALID);
	CHECK(count(&f) == 1);
	teardown(&f);
	return 0;
}

static int log_stopped(void)
{
	struct fixture f;

	CHECK(setup(&f, NULL) == 0);
	/* cut under its writer: the next record fails, and the log stops */
	CHECK(tg_record_event(f.a, "", "test", "written", NULL) == 0 && count(&f) == 1);
	CHECK(truncate(f.log, 0) == 0);
	CHECK(tg_record_event(f.a, "", "test", "lost", NULL) < 0);
	/* no decision the log cannot keep, of any kind */
	CHECK(decide(&f, "alice", "files.*:approve", TG_DECISION_APPROVE, NULL) < 0);
	CHECK(last.code == TG_ERR_UNAVAILABLE && strstr(last.msg, "something cut it"));
	CHECK(decide(&f, "agent-1", "", TG_DECISION_CANCEL, NULL) < 0 &&
	      last.code == TG_ERR_UNAVAILABLE);
	CHECK(state_of(&f) == TG_TICKET_PENDING && count(&f) == 0);
	teardown(&f);
	return 0;
}

/* Without a log (a gate given none), the decision is taken, recorded
 * nowhere. */
static int no_log(void)
{
	struct fixture f;
	struct tg_error err;

	CHECK(setup(&f, NULL) == 0);
	CHECK(tg_gate_decide(f.st, NULL, "alice", "files.*:approve", f.id, TG_DECISION_APPROVE,
			     NULL, &err) == 0);
	CHECK(state_of(&f) == TG_TICKET_APPROVED && count(&f) == 0);
	teardown(&f);
	return 0;
}

const struct unit_test decide_tests[] = {
	{ "decide/approve", approve },
	{ "decide/reject", reject },
	{ "decide/cancel_by_requester", cancel_by_requester },
	{ "decide/cancel_by_another", cancel_by_another },
	{ "decide/approve_without_scope", approve_without_scope },
	{ "decide/reason_too_long", reason_too_long },
	{ "decide/decided_already", decided_already },
	{ "decide/log_stopped", log_stopped },
	{ "decide/no_log", no_log },
	UNIT_TESTS_END,
};
