/*
 * toolgate upstream accept NAME [TOOL...] --state DIR --policy FILE
 *                          (--token-file FILE | --token TOKEN | --token -) [--public-url URL]
 *                          [--audit FILE] [--store URL]
 *
 * The definitions of upstream NAME's tools that await review
 * (docs/UPSTREAMS.md, "Pins") accepted: each review ticket of NAME still
 * pending (or only TOOL's, by the server's name or the exposed one)
 * approved by the principal the token names, as `toolgate approvals
 * approve` would (tg_gate_decide: the approve scope over the tool, the
 * decision recorded), and carried out (tg_gate_pin_accept: the definition
 * the ticket holds pinned as the approver's). A gateway that serves NAME
 * serves the tools within a second; one started later serves them.
 *
 * It accepts only what a ticket holds: what the server lists now is never
 * pinned here (`toolgate upstream diff NAME` shows it, `toolgate upstream
 * pin NAME` pins it).
 *
 * The tickets and pins are the store's: the state directory's, or with
 * --store URL a PostgreSQL database's. --state DIR is needed either way:
 * its key checks the token, and its audit.log is the default log.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "toolgate/audit.h"
#include "toolgate/auth.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate upstream accept NAME [TOOL...] --state DIR --policy FILE\n"
		   "                (--token-file FILE | --token TOKEN | --token -)\n"
		   "                [--public-url URL] [--audit FILE] [--store URL]\n"
		   "\n"
		   "Accept the definitions of upstream NAME's tools that await review (each\n"
		   "pending review ticket of NAME, or only those of the TOOLs named): approved\n"
		   "by the token's principal, who needs NAME.tool:approve, and pinned.\n"
		   "--store URL: the store is this PostgreSQL database (postgres://HOST/DB, no\n"
		   "password in it: docs/STORE.md), not DIR's; DIR's key checks the token.\n"
		   "\n"
		   "Exit status: 0 accepted, 1 nothing to accept or refused, 2 usage, 3 the\n"
		   "state directory, store or audit log.\n");
}

static const struct option options[] = {
	CLI_OPTION_STATE,
	CLI_OPTION_STORE,
	CLI_OPTION_POLICY,
	{ "token", required_argument, NULL, 't' },
	{ "token-file", required_argument, NULL, 'k' },
	{ "public-url", required_argument, NULL, 'u' },
	{ "audit", required_argument, NULL, 'A' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

struct accept_args {
	const char *state, *policy, *token, *token_file, *public_url, *record, *name;
	const char *store; /* --store URL, else the store is --state's */
	char **tools;
	int ntools;
};

/* 1 if ticket t asks to accept a definition of upstream a->name's tool
 * that a->tools names (any, when none is named). */
static int wanted(const struct accept_args *a, const struct tg_ticket *t)
{
	char principal[128];
	const char *tool;
	size_t n = strlen(t->tool), k;
	json_t *args;
	int i, yes;

	snprintf(principal, sizeof(principal), "upstream %s", a->name);
	if (strcmp(t->principal, principal) != 0 || n < 11 ||
	    strcmp(t->tool + n - 11, "@definition") != 0)
		return 0;
	if (!a->ntools)
		return 1;
	args = json_loads(t->arguments ? t->arguments : "", 0, NULL);
	tool = json_string_value(json_object_get(args, "tool"));
	k = n - 11; /* the exposed name */
	for (i = 0, yes = 0; i < a->ntools && !yes; i++)
		yes = (tool && strcmp(a->tools[i], tool) == 0) ||
		      (strlen(a->tools[i]) == k && strncmp(a->tools[i], t->tool, k) == 0);
	json_decref(args);
	return yes;
}

/* Ticket t accepted by who (scopes): 0, or -1 having said why. */
static int accept_one(struct tg_store *st, struct tg_audit *audit, const char *who,
		      const char *scopes, const struct tg_ticket *t)
{
	struct tg_error err;
	int rc = 0;

	if (t->state == TG_TICKET_PENDING)
		rc = tg_gate_decide(st, audit, who, scopes, t->id, TG_DECISION_APPROVE, NULL, &err);
	if (rc >= 0 && tg_gate_pin_accept(st, audit, t->id, &err) >= 0) {
		printf("%s  %.*s  accepted by %s\n", t->id, (int)(strlen(t->tool) - 11), t->tool,
		       t->approver[0] ? t->approver : who);
		return 0;
	}
	cli_say(stderr, "upstream accept", err.msg);
	if (rc < 0)
		tg_record_event(audit, who, t->id, "refused", err.msg);
	return -1;
}

/* 1 if ticket t is a pending review ticket of an upstream's definition. */
static int pending_definition(const struct tg_ticket *t)
{
	size_t k = strlen(t->tool);

	return t->state == TG_TICKET_PENDING && strncmp(t->principal, "upstream ", 9) == 0 &&
	       k >= 11 && strcmp(t->tool + k - 11, "@definition") == 0;
}

/* Nothing of a->name awaits review: said, with the upstreams whose
 * definitions do (a misspelt NAME), each named once. */
static void nothing_awaits(const struct accept_args *a, const struct tg_ticket *list, size_t n)
{
	char others[512] = "";
	size_t i, j, len = 0;

	for (i = 0; i < n; i++) {
		const char *up = list[i].principal + 9;

		if (!pending_definition(&list[i]))
			continue;
		for (j = 0; j < i; j++)
			if (pending_definition(&list[j]) &&
			    strcmp(list[j].principal, list[i].principal) == 0)
				break;
		if (j < i)
			continue;
		len += (size_t)snprintf(others + len, len < sizeof(others) ? sizeof(others) - len : 0,
					"%s%s", len ? ", " : "", up);
		if (len >= sizeof(others))
			break;
	}
	fprintf(stderr, "toolgate upstream accept: no definition of upstream %s%s awaits review"
		"%s%s\n", a->name, a->ntools ? "'s tools named" : "",
		others[0] ? "; awaiting review: " : " (toolgate approvals list)", others);
}

/* The tickets that may be accepted: pending ones, then those approved
 * that no gateway carried out (two lists: one of every state would be
 * capped, with the oldest, executed ones, first). */
static int open_tickets(struct tg_store *st, struct tg_ticket **out, size_t *n,
			struct tg_error *err)
{
	struct tg_ticket *pending = NULL, *approved = NULL, *all;
	size_t np = 0, na = 0, i;
	int64_t now = (int64_t)time(NULL);

	*out = NULL;
	*n = 0;
	if (tg_store_ticket_list(st, TG_TICKET_PENDING, now, &pending, &np, err) < 0)
		return -1;
	all = NULL;
	if (tg_store_ticket_list(st, TG_TICKET_APPROVED, now, &approved, &na, err) == 0 &&
	    !(all = realloc(pending, (np + na + 1) * sizeof(*all))))
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (!all) {
		for (i = 0; i < np; i++)
			tg_ticket_release(&pending[i]);
		for (i = 0; i < na; i++)
			tg_ticket_release(&approved[i]);
		free(pending);
		free(approved);
		return -1;
	}
	if (na)
		memcpy(all + np, approved, na * sizeof(*all));
	free(approved);
	*out = all;
	*n = np + na;
	return 0;
}

static int parse(int argc, char **argv, struct accept_args *a)
{
	const struct cli_bind binds[] = {
		{ 's', &a->state }, { 'p', &a->policy }, { 't', &a->token }, { 'A', &a->record },
		{ 'k', &a->token_file }, { 'u', &a->public_url }, { CLI_STORE, &a->store },
		{ 0, NULL },
	};
	int rc = cli_parse("upstream accept", argc, argv, ":h", options, usage, binds, NULL, NULL);

	if (rc >= 0)
		return rc;
	if (optind < argc)
		a->name = argv[optind++];
	a->tools = argv + optind;
	a->ntools = argc - optind;
	if (cli_store_url("upstream accept", a->store) < 0)
		return EXIT_USAGE;
	if (!a->name || !a->state || !a->policy || !a->token == !a->token_file) {
		fprintf(stderr, "toolgate upstream accept: %s\n",
			!a->name ? "which upstream? its NAME is needed"
			: !a->state ? "--state DIR is needed"
			: a->token && a->token_file
				? "--token or --token-file, not both"
				: "--policy FILE and --token-file FILE (or --token) are needed (who "
				  "accepts)");
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

int cli_upstream_accept(int argc, char **argv)
{
	struct accept_args a = { 0 };
	struct tg_audit *audit = NULL;
	struct tg_store *st = NULL;
	struct tg_ticket *list = NULL;
	char who[128], *scopes = NULL;
	struct tg_error err;
	size_t n = 0, i, done = 0, failed = 0;
	int rc;

	rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (cli_state_exists("upstream accept", a.state) < 0)
		return EXIT_DATA;
	if (!(audit = cli_audit_open(a.record, a.state, "upstream accept")))
		return EXIT_DATA;
	rc = EXIT_DATA;
	if (!cli_has_store(cli_store_at(a.store, a.state))) {
		fprintf(stderr, "toolgate upstream accept: %s has no store: no definition awaits "
			"review there (serve --policy keeps one)\n", a.state);
		rc = EXIT_NO;
		goto out;
	}
	if (tg_store_open(cli_store_at(a.store, a.state), &st, &err) < 0 ||
	    open_tickets(st, &list, &n, &err) < 0)
		goto fail;
	rc = EXIT_NO;
	{
		struct cli_decider d = { a.state, a.policy, NULL, a.public_url };
		char *tok = NULL;

		rc = cli_token_read("upstream accept", a.token, a.token_file, &tok);
		if (rc)
			goto out;
		d.token = tok;
		rc = cli_identify(&d, st, who, sizeof(who), &scopes, &err);
		cli_token_free(tok);
		if (rc < 0) {
			rc = EXIT_NO;
			goto fail;
		}
	}
	for (i = 0; i < n; i++) {
		/* pending ones, and those approved that no gateway carried out */
		if ((list[i].state != TG_TICKET_PENDING && list[i].state != TG_TICKET_APPROVED) ||
		    !wanted(&a, &list[i]))
			continue;
		if (accept_one(st, audit, who, scopes, &list[i]) < 0)
			failed++;
		else
			done++;
	}
	if (!done && !failed)
		nothing_awaits(&a, list, n);
	rc = done && !failed ? 0 : EXIT_NO;
	goto out;
fail:
	cli_say(stderr, "upstream accept", err.msg);
out:
	free(scopes);
	for (i = 0; i < n; i++)
		tg_ticket_release(&list[i]);
	free(list);
	tg_store_close(st);
	tg_audit_close(audit);
	return rc;
}
