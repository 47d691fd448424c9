/*
 * toolgate approvals list [--all]  --state DIR
 * toolgate approvals show ID       --state DIR
 * toolgate approvals approve ID    --state DIR --policy FILE --token TOKEN [--audit FILE]
 * toolgate approvals reject ID     --state DIR --policy FILE --token TOKEN --reason TEXT
 *                                  [--audit FILE]
 * toolgate approvals cancel ID     --state DIR --policy FILE --token TOKEN [--audit FILE]
 *
 * The approval tickets of the store (docs/STORE.md). A decision is made
 * by whoever the token (issued for the policy, docs/AUTH.md) names, and
 * only with an approve scope covering the ticket's tool; the requester
 * never decides its own ticket; the requester alone may cancel it while
 * it is pending. This file verifies the token; tg_gate_decide
 * (src/gate/decide.c) takes the decision, as for the admin API. list
 * shows the pending ones (--all:
 * every one); show prints one as JSON, its dry-run preview included,
 * with what a terminal would reorder or obey (bidi controls, escape
 * sequences) written as JSON escapes and the arguments' display form
 * beside them (tg_ticket_to_json, docs/ADMIN.md).
 * A decision, and its refusal, goes into the audit log (the state
 * directory's audit.log, or --audit FILE; docs/AUDIT.md). Nothing here
 * creates the state directory or the store: a directory that is not
 * there is an error (exit 3, docs/CLI.md), one without a store yet has
 * no tickets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "toolgate/audit.h"
#include "toolgate/auth.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate approvals list [--all] --state DIR\n"
		   "       toolgate approvals show ID --state DIR\n"
		   "       toolgate approvals approve ID --state DIR --policy FILE --token TOKEN\n"
		   "       toolgate approvals reject ID --state DIR --policy FILE --token TOKEN "
		   "--reason TEXT\n"
		   "       toolgate approvals cancel ID --state DIR --policy FILE --token TOKEN\n"
		   "       (approve, reject, cancel: the decision, with its --reason TEXT of at\n"
		   "        most 1000 bytes if given, or its refusal, goes into the audit log:\n"
		   "        DIR/audit.log, or --audit FILE)\n"
		   "\n"
		   "Exit status: 0 done, 1 refused, 2 usage, 3 the state directory, store or\n"
		   "audit log missing or failing (docs/CLI.md).\n");
}

static int print_ticket(const struct tg_ticket *t)
{
	char *text = tg_ticket_to_json(t, 1);

	if (!text) {
		fprintf(stderr, "toolgate approvals show: out of memory\n");
		return EXIT_DATA;
	}
	puts(text);
	free(text);
	return 0;
}

int cli_token_claims(const char *state, const char *policy_path, const char *token,
			struct tg_store *st, struct tg_claims *c, struct tg_error *err)
{
	struct tg_policy *p = NULL;
	struct tg_signer *s = NULL;
	int rc = -1;

	if (tg_policy_load(policy_path, &p, err) == 0 && tg_signer_open(state, 0, &s, err) == 0 &&
	    tg_token_verify(s, p, st, token, strlen(token), NULL, (int64_t)time(NULL), c, err) == 0)
		rc = 0;
	tg_signer_close(s);
	tg_policy_free(p);
	return rc;
}

/* The approver a token names, if its scopes may decide ticket t (its
 * tool, and each tool it covers). */
int cli_approver_of(const char *state, const char *policy_path, const char *token,
		    struct tg_store *st, const struct tg_ticket *t, char *who, size_t len,
		    struct tg_error *err)
{
	struct tg_claims c;
	char need[200];
	int ok;

	if (cli_token_claims(state, policy_path, token, st, &c, err) < 0)
		return -1;
	ok = tg_ticket_approvable(t, c.scope, need, sizeof(need));
	snprintf(who, len, "%s", c.sub);
	tg_claims_release(&c);
	if (!ok)
		return tg_error_set(err, TG_ERR_INVALID, "%s may not approve %s (it needs the scope "
				    "%s)", who, t->tool, need);
	return 0;
}

/* The decision stands in the store; its record did not make it (the log
 * said why on stderr; tg_gate_decide answered 1): the exit status says so. */
static int unrecorded(int decided)
{
	if (decided == 0)
		return 0;
	fprintf(stderr, "toolgate approvals: the decision was taken, but its record could not "
		"be written to the audit log\n");
	return EXIT_DATA;
}

static const struct option options[] = {
	{ "all", no_argument, NULL, 'a' },
	CLI_OPTION_STATE,
	CLI_OPTION_POLICY,
	{ "token", required_argument, NULL, 't' },
	{ "reason", required_argument, NULL, 'r' },
	{ "audit", required_argument, NULL, 'A' },
	{ "record", required_argument, NULL, 'A' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* What approvals was asked. */
struct approvals_args {
	const char *state, *policy, *token, *reason, *id, *record;
	int all;
};

/* argv (argv[0] the verb) into *a: -1, or the exit status (--help: 0;
 * a usage error, said: 2). */
static int approvals_parse(int argc, char **argv, int decide, int listing,
			   struct approvals_args *a)
{
	const struct cli_bind binds[] = {
		{ 's', &a->state }, { 'p', &a->policy }, { 't', &a->token },
		{ 'r', &a->reason }, { 'A', &a->record }, { 0, NULL },
	};
	char who[48];
	int rc;

	snprintf(who, sizeof(who), "approvals %.20s", argv[0]);
	rc = cli_parse(who, argc, argv, ":h", options, usage, binds, cli_set_flag, &a->all);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		a->id = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "toolgate %s: one ID only ('%s', then '%s')\n", who, a->id,
			argv[optind]);
		return EXIT_USAGE;
	}
	if (!a->state || (!listing && !a->id) || (listing && a->id) ||
	    (decide && (!a->policy || !a->token))) {
		fprintf(stderr, "toolgate %s: %s\n", who,
			!a->state ? "--state DIR is needed"
			: listing && a->id ? "list takes no ID"
			: !a->id ? "which ticket? an ID is needed"
				 : "--policy FILE and --token TOKEN are needed");
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_approvals(int argc, char **argv)
{
	const char *state, *policy, *token, *reason, *id, *verb;
	const char *record;
	struct approvals_args args = { 0 };
	struct tg_audit *audit = NULL;
	struct tg_store *st = NULL;
	struct tg_ticket t, *list;
	struct tg_claims c;
	struct tg_error err;
	enum tg_decision d;
	char who[128] = "", who_verb[32];
	size_t n, i;
	int all, rc = 1, decide, listing;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	verb = argv[1];
	decide = strcmp(verb, "approve") == 0 || strcmp(verb, "reject") == 0 ||
		 strcmp(verb, "cancel") == 0;
	listing = strcmp(verb, "list") == 0;
	if (!decide && !listing && strcmp(verb, "show") != 0) {
		fprintf(stderr, "toolgate approvals: unknown command '%s' (list, show, approve, "
			"reject or cancel)\n", verb);
		return EXIT_USAGE;
	}
	rc = approvals_parse(argc - 1, argv + 1, decide, listing, &args);
	if (rc >= 0)
		return rc;
	state = args.state, policy = args.policy, token = args.token, reason = args.reason;
	id = args.id, record = args.record, all = args.all;
	snprintf(who_verb, sizeof(who_verb), "approvals %.16s", verb);
	/* nothing here makes a state directory or a store: a typo is said */
	if (cli_state_exists(who_verb, state) < 0)
		return EXIT_DATA;
	/* a person's decision, and its refusal, in the log serve writes */
	if (decide && !(audit = cli_audit_open(record, state, "approvals")))
		return EXIT_DATA;
	if (!cli_has_store(state) && !listing) {
		/* no write call was ever held here */
		tg_error_set(&err, TG_ERR_INVALID, "ticket %s: no such ticket", id);
		goto fail;
	}
	if (cli_has_store(state) && tg_store_open(state, &st, &err) < 0)
		goto fail;
	if (listing) {
		list = NULL, n = 0;
		if (st && tg_store_ticket_list(st, all ? TG_TICKET_ANY : TG_TICKET_PENDING, (int64_t)time(NULL),
					       &list, &n, &err) < 0)
			goto fail;
		for (i = 0; i < n; i++) {
			printf("%s  %-9s  %-20s  %s%s\n", list[i].id,
			       tg_ticket_state_name(list[i].state), list[i].principal, list[i].tool,
			       list[i].findings ? "  (anomalous arguments)" : "");
			tg_ticket_release(&list[i]);
		}
		free(list);
		printf("%zu ticket%s\n", n, n == 1 ? "" : "s");
		rc = 0;
		goto out;
	}
	if (!decide) {
		if (tg_store_ticket_get(st, id, (int64_t)time(NULL), &t, &err) < 0)
			goto fail;
		rc = print_ticket(&t);
		tg_ticket_release(&t);
		goto out;
	}
	/* who decides: the principal the token names, with its scopes */
	if (cli_token_claims(state, policy, token, st, &c, &err) < 0)
		goto fail;
	snprintf(who, sizeof(who), "%s", c.sub);
	d = strcmp(verb, "approve") == 0 ? TG_DECISION_APPROVE
	    : strcmp(verb, "reject") == 0 ? TG_DECISION_REJECT
					  : TG_DECISION_CANCEL;
	rc = tg_gate_decide(st, audit, who, c.scope, id, d, reason, &err);
	tg_claims_release(&c);
	if (rc < 0)
		goto fail;
	printf("%s %s by %s\n", id, d == TG_DECISION_APPROVE ? "approved"
				    : d == TG_DECISION_REJECT ? "rejected" : "cancelled", who);
	rc = unrecorded(rc);
	goto out;
fail:
	cli_say(stderr, who_verb, err.msg);
	if (decide)
		tg_record_event(audit, who, id, "refused", err.msg);
	/* refused (by the policy, the requester, the ticket's state, the
	 * reason's ceiling), or a file, the store or the log failing */
	rc = err.code == TG_ERR_INVALID || err.code == TG_ERR_FORBIDDEN || err.code == TG_ERR_LIMIT
		     ? EXIT_NO
		     : EXIT_DATA;
out:
	tg_store_close(st);
	tg_audit_close(audit);
	return rc;
}
