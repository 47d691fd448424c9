/*
 * toolgate rollback CALL-ID --catalog DIR --state DIR --policy FILE
 *                  (--token-file FILE | --token TOKEN | --token -) [--public-url URL]
 *                           [--workspace DIR] [--audit FILE] [--dry-run] [--store URL]
 * toolgate rollback list (--state DIR | --store URL)
 *
 * Undo an executed write call (its id is its ticket's) with its contract's
 * compensation (docs/PIPELINE.md, "Rollback"). The token's principal needs
 * an approve scope over the call's tool: undoing a write is a person's
 * decision like approving it. --dry-run shows what the compensation would
 * restore. list shows every rollback, its attempts and outcome, and the
 * success rate. What the compensation answered, and an error, are printed
 * with the characters a terminal would obey or reorder escaped. Nothing
 * here creates the state directory or the store (docs/CLI.md). --store
 * URL: the store is a PostgreSQL database; list then needs no state
 * directory, a rollback still does (the key its token is checked with,
 * the audit log, the state its tools are given).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/serve_catalog.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate rollback CALL-ID --catalog DIR --state DIR --policy FILE\n"
		   "                (--token-file FILE | --token TOKEN | --token -)\n"
		   "                [--public-url URL] [--workspace DIR] [--audit FILE] [--dry-run]\n"
		   "                [--catalog-trust FILE] [--store URL]\n"
		   "       toolgate rollback list (--state DIR | --store URL)\n"
		   "\n"
		   "--store URL: the store is this PostgreSQL database (postgres://HOST/DB, no\n"
		   "password in it: docs/STORE.md), not DIR's; list needs no --state then.\n"
		   "--audit FILE (or --record FILE, its old name): the audit log the attempt\n"
		   "goes into; default DIR/audit.log. --catalog-trust FILE: run the\n"
		   "compensation only from a catalogue signed by a key of this trust store\n"
		   "and unchanged since (toolgate catalog sign), as serve --catalog-trust.\n"
		   "\n"
		   "Exit status: 0 done, 1 refused or the compensation failed, 2 usage, 3 the\n"
		   "state directory, store, catalogue or audit log missing or failing\n"
		   "(docs/CLI.md).\n");
}

static int list(struct tg_store *st, struct tg_error *err)
{
	struct tg_rollback *r = NULL;
	size_t n = 0, i, ok = 0, done = 0;

	/* no store: no write call was ever made here, so nothing to list */
	if (st && tg_store_rollback_list(st, TG_ROLLBACK_ANY, &r, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		printf("%s  %-9s  %-20s  attempts %d\n", r[i].call_id,
		       tg_rollback_state_name(r[i].state), r[i].requested_by, r[i].attempts);
		ok += r[i].state == TG_ROLLBACK_SUCCEEDED;
		done += r[i].state != TG_ROLLBACK_RUNNING;
		tg_rollback_release(&r[i]);
	}
	free(r);
	printf("%zu rollback%s, %zu succeeded", n, n == 1 ? "" : "s", ok);
	if (done)
		printf(" (%.0f%% of those that ended)", 100.0 * (double)ok / (double)done);
	printf("\n");
	return 0;
}

/* The compensation's result, as the operator reads it: what the tool
 * wrote, with what a terminal would obey or reorder as JSON escapes. */
static void print_result(const struct tg_call_result *r)
{
	json_t *j = json_loads(r->structured_json ? r->structured_json : r->content_json, 0, NULL);
	char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;

	cli_put_json(stdout, text ? text : r->content_json ? r->content_json : "null");
	putchar('\n');
	free(text);
	json_decref(j);
}

static const struct option options[] = {
	{ "dry-run", no_argument, NULL, 'n' },
	CLI_OPTION_STATE,
	CLI_OPTION_STORE,
	CLI_OPTION_POLICY,
	CLI_OPTION_CATALOG,
	{ "token", required_argument, NULL, 't' },
	{ "token-file", required_argument, NULL, 'k' },
	{ "public-url", required_argument, NULL, 'u' },
	{ "workspace", required_argument, NULL, 'w' },
	{ "audit", required_argument, NULL, 'A' },
	{ "record", required_argument, NULL, 'A' },
	{ "catalog-trust", required_argument, NULL, 'T' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* What rollback was asked. */
struct rollback_args {
	const char *state, *policy, *token, *token_file, *public_url, *catalog, *workspace, *id;
	const char *catalog_trust;
	const char *record, *store;
	int dry;
};

/* argv into *a: -1, or the exit status (--help: 0; a usage error, said: 2). */
static int rollback_parse(int argc, char **argv, struct rollback_args *a)
{
	const struct cli_bind binds[] = {
		{ 's', &a->state }, { 'p', &a->policy }, { 't', &a->token }, { 'c', &a->catalog },
		{ 'w', &a->workspace }, { 'A', &a->record }, { 'k', &a->token_file },
		{ 'u', &a->public_url }, { 'T', &a->catalog_trust }, { CLI_STORE, &a->store },
		{ 0, NULL },
	};
	int rc = cli_parse("rollback", argc, argv, ":h", options, usage, binds, cli_set_flag, &a->dry);
	int listing;

	if (rc >= 0)
		return rc;
	if (optind < argc)
		a->id = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "toolgate rollback: one CALL-ID only ('%s', then '%s')\n", a->id,
			argv[optind]);
		return EXIT_USAGE;
	}
	listing = a->id && strcmp(a->id, "list") == 0;
	if (cli_store_url(listing ? "rollback list" : "rollback", a->store) < 0)
		return EXIT_USAGE;
	/* list needs a store; a rollback the state directory (its key) too */
	if (!a->id || (!a->state && (!listing || !a->store)) ||
	    (!listing && (!a->policy || !a->token == !a->token_file || !a->catalog))) {
		fprintf(stderr, "toolgate rollback: %s\n",
			!a->id ? "which call? a CALL-ID, or list, is needed"
			: !a->state && listing ? "--state DIR is needed (or --store URL)"
			: !a->state ? "--state DIR is needed (its key checks the token)"
			: a->token && a->token_file
				? "--token or --token-file, not both"
				: "--catalog DIR, --policy FILE and --token-file FILE (or --token) "
				  "are needed");
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_rollback(int argc, char **argv)
{
	const char *state, *policy, *token, *catalog, *workspace, *id, *record;
	struct rollback_args args = { 0 };
	struct tg_gate_options gopts = { 0 };
	const char *own[3] = { 0 };
	struct tg_catalog *cat = NULL;
	struct catalog_copy copy = { "", "", "" };
	struct tg_store *st = NULL;
	struct tg_gate *gate = NULL;
	struct tg_call_result r;
	struct tg_ticket t;
	struct tg_error err;
	char who[128] = "";
	int dry, rc;

	rc = rollback_parse(argc, argv, &args);
	if (rc >= 0)
		return rc;
	state = args.state, policy = args.policy, token = args.token, catalog = args.catalog;
	workspace = args.workspace, id = args.id, record = args.record, dry = args.dry;
	/* nothing here makes a state directory or a store: a typo is said */
	if (state && cli_state_exists(strcmp(id, "list") == 0 ? "rollback list" : "rollback",
				      state) < 0)
		return EXIT_DATA;
	if (cli_has_store(cli_store_at(args.store, state)) &&
	    tg_store_open(cli_store_at(args.store, state), &st, &err) < 0) {
		err.code = TG_ERR_SYSTEM; /* the store, not the call: exit 3 */
		goto fail;
	}
	if (strcmp(id, "list") == 0) {
		rc = list(st, &err) < 0 ? -1 : 0;
		if (rc < 0)
			goto fail;
		goto out;
	}
	/* the compensation's record, in the log serve writes, and a
	 * refusal's: nothing is done unrecorded */
	gopts.audit = cli_audit_open(record, state, "rollback");
	if (!gopts.audit) {
		rc = EXIT_DATA;
		goto out;
	}
	/* the catalogue first, a deployment's mistake before a ticket's; with
	 * --catalog-trust, the compensation runs from the bytes verified */
	if (catalog_open(catalog, args.catalog_trust, &copy, &cat, &err) < 0) {
		err.code = TG_ERR_SYSTEM; /* the catalogue, not the call: exit 3 */
		goto fail;
	}
	if (!st) {
		/* no write call was ever made here */
		tg_error_set(&err, TG_ERR_INVALID, "ticket %s: no such ticket", id);
		goto fail;
	}
	if (tg_store_ticket_get(st, id, TG_STORE_NOW, &t, &err) < 0)
		goto fail;
	{
		struct cli_decider d = { state, policy, NULL, args.public_url };
		char *tok = NULL;

		rc = cli_token_read("rollback", token, args.token_file, &tok);
		if (rc) {
			tg_ticket_release(&t);
			goto out;
		}
		d.token = tok;
		rc = cli_approver_of(&d, st, &t, who, sizeof(who), &err);
		cli_token_free(tok);
	}
	tg_ticket_release(&t);
	if (rc < 0)
		goto fail;
	gopts.workspace = workspace;
	gopts.tools_dir = catalog;
	gopts.state_dir = state;
	own[0] = policy; /* the files of its own it reads or writes: no tool is given them */
	own[1] = record;
	gopts.own_files = own;
	gopts.store = st;
	gopts.tools_copy = args.catalog_trust ? copy.live : NULL;
	if (tg_gate_new(cat, &gopts, &gate, &err) < 0)
		goto fail;
	rc = tg_gate_rollback(gate, id, who, dry, &r, &err);
	if (rc < 0)
		goto fail;
	if (rc == 1) {
		printf("%s was rolled back already\n", id);
		rc = 0;
		goto out;
	}
	print_result(&r);
	if (r.is_error)
		fprintf(stderr, "toolgate rollback: %s: %s failed; the call stays executed (try "
			"again once the cause is fixed)\n", id, r.tool);
	else
		printf("%s %s by %s (%s)\n", id, dry ? "would be rolled back" : "rolled back", who,
		       r.tool);
	rc = r.is_error ? 1 : 0;
	tg_call_result_release(&r);
	goto out;
fail:
	cli_say(stderr, "rollback", err.msg);
	tg_record_event(gopts.audit, who, id, "rollback_refused", err.msg);
	rc = err.code == TG_ERR_INVALID ? EXIT_NO : EXIT_DATA;
out:
	tg_gate_free(gate);
	tg_catalog_free(cat);
	catalog_copy_remove(&copy);
	tg_store_close(st);
	tg_audit_close(gopts.audit);
	return rc;
}
