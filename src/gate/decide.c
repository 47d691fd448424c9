/*
 * A person's decision on a held write (docs/PIPELINE.md, "Write calls"):
 * approve, reject or cancel a ticket, the one way both the admin API
 * (admin.c) and `toolgate approvals` (src/cli/approvals.c) take it. It
 * owns the order of the checks, who may decide what, the reason's
 * ceiling, and the decision's record (docs/AUDIT.md, "decision").
 *
 * It never decides what the log cannot keep, nor lets anyone but its
 * requester cancel a call or anyone without an approve scope over each
 * tool a ticket covers approve or reject it. Who is deciding is the
 * caller's to establish (a verified token); refusals are the caller's to
 * record, the admin API's at a bounded rate (docs/AUDIT.md).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "toolgate/audit.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"

#define REASON_MAX 1000 /* docs/ADMIN.md; a record stays small */

static const char *outcome_of(enum tg_decision d)
{
	return d == TG_DECISION_APPROVE ? "approved"
	       : d == TG_DECISION_REJECT ? "rejected"
					 : "cancelled";
}

/* 0 if who may take decision d on t; else -1 and err (TG_ERR_FORBIDDEN)
 * naming the requester, or the scope missing. */
static int may_decide(const struct tg_ticket *t, const char *who, const char *scopes,
		      enum tg_decision d, struct tg_error *err)
{
	char need[200];

	if (d == TG_DECISION_CANCEL) {
		/* the requester's own, while pending (the store checks that) */
		if (strcmp(who, t->principal) != 0)
			return tg_error_set(err, TG_ERR_FORBIDDEN, "%s did not ask for this call: "
					    "only %s may cancel it", who, t->principal);
		return 0;
	}
	if (!tg_ticket_approvable(t, scopes, need, sizeof(need)))
		return tg_error_set(err, TG_ERR_FORBIDDEN, "%s may not approve %s (it needs the "
				    "scope %s)", who, t->tool, need);
	return 0;
}

/* What comes before the store: the log writing, the right, the reason. */
static int decide_checks(const struct tg_ticket *t, struct tg_audit *audit, const char *who,
			 const char *scopes, enum tg_decision d, const char *reason,
			 struct tg_error *err)
{
	struct tg_error aerr;

	/* no decision the log cannot keep; UNAVAILABLE, not the log's own
	 * SYSTEM: the approval surfaces answer it as "try later" (admin.c) */
	if (audit && tg_audit_ok(audit, &aerr) < 0)
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "%s", aerr.msg);
	if (may_decide(t, who, scopes, d, err) < 0)
		return -1;
	if (reason && strlen(reason) > REASON_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "reason: at most %d bytes", REASON_MAX);
	return 0;
}

int tg_gate_decide(struct tg_store *st, struct tg_audit *audit, const char *who,
		   const char *scopes, const char *id, enum tg_decision d, const char *reason,
		   struct tg_error *err)
{
	struct tg_ticket t;
	int rc;

	tg_error_clear(err);
	if (d != TG_DECISION_APPROVE && d != TG_DECISION_REJECT && d != TG_DECISION_CANCEL)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s: %d is not a decision",
				    id ? id : "", (int)d);
	who = who ? who : "";
	scopes = scopes ? scopes : "";
	/* what is decided on: its tool, its requester, its arguments' hash */
	if (tg_store_ticket_get(st, id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	rc = decide_checks(&t, audit, who, scopes, d, reason, err);
	if (rc == 0 && d == TG_DECISION_CANCEL)
		rc = tg_store_ticket_move(st, id, TG_TICKET_PENDING, TG_TICKET_CANCELLED, err);
	else if (rc == 0)
		rc = tg_store_ticket_decide(st, id, who, d == TG_DECISION_APPROVE, reason,
					    TG_STORE_NOW, err);
	/* who decided what, on which arguments' hash: on the record. Should
	 * that fail, the decision stands in the store, but the log has
	 * stopped: nothing runs on it until the log writes again. */
	if (rc == 0 && tg_record_decision(audit, who, &t, outcome_of(d), reason) < 0) {
		tg_error_set(err, TG_ERR_UNAVAILABLE, "ticket %s: the decision was taken, but its "
			     "record could not be written to the audit log", t.id);
		rc = 1;
	}
	tg_ticket_release(&t);
	return rc;
}
