/*
 * toolgate approvals list [--status STATE | --all] [--tool PATTERN] [--json]
 *                          (--state DIR | --store URL)
 * toolgate approvals show ID [--catalog DIR] [--full] [--json] (--state DIR | --store URL)
 * toolgate approvals approve ID --state DIR --policy FILE --token-file FILE
 *                               [--store URL] [--reason TEXT] [--public-url URL] [--audit FILE]
 * toolgate approvals reject ID  ... --reason TEXT
 * toolgate approvals cancel ID  ...
 *
 * The approval tickets of the store (docs/STORE.md). A decision is made
 * by whoever the token names, taken as the gateway takes it (cli_identify:
 * one the policy's key signed, docs/AUTH.md, or one of the policy's
 * identity providers'), and only with an approve scope covering the
 * ticket's tool; the requester never decides its own ticket; the
 * requester alone may cancel it while it is pending. This file verifies
 * the token; tg_gate_decide (src/gate/decide.c) takes the decision, as for
 * the admin API. The token comes from a file of the user's own, or stdin,
 * so that it never sits on a command line (--token TOKEN still works).
 *
 * list and show print for a person by default (approvals_show.c: a table
 * newest first, a ticket with its preview rendered, every string others
 * chose in its display form), and with --json what the admin API
 * answers: the tickets, oldest first, without their arguments and
 * previews; a ticket whole, with what a terminal would reorder or obey
 * written as JSON escapes (tg_ticket_to_json, docs/ADMIN.md). An ID is a
 * ticket's 32 hex digits or, when no other ticket starts so, its first 8
 * or more (the table shows the shortest that names each of its tickets).
 *
 * A decision, and its refusal, goes into the audit log (the state
 * directory's audit.log, or --audit FILE; docs/AUDIT.md). Nothing here
 * creates the state directory or the store: a directory that is not
 * there is an error (exit 3, docs/CLI.md), one without a store yet has
 * no tickets. --store URL: the store is a PostgreSQL database instead of
 * the state directory's; list and show then need no state directory, a
 * decision still does (the signing key its tokens are checked with, the
 * default audit log).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/approvals_int.h"
#include "cli/cli.h"
#include "cli/config.h"
#include "toolgate/audit.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"

#define SHORT_ID 8 /* hex digits of an id, at least, that may name a ticket */

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate approvals list [--status STATE | --all] [--tool PATTERN] [--json]\n"
		   "                               (--state DIR | --store URL)\n"
		   "       toolgate approvals show ID [--catalog DIR] [--full] [--json]\n"
		   "                               (--state DIR | --store URL)\n"
		   "       toolgate approvals approve ID --state DIR --policy FILE --token-file FILE\n"
		   "       toolgate approvals reject ID --state DIR --policy FILE --token-file FILE "
		   "--reason TEXT\n"
		   "       toolgate approvals cancel ID --state DIR --policy FILE --token-file FILE\n"
		   "\n"
		   "list: pending tickets, newest first (--status pending, approved, rejected,\n"
		   "  expired, cancelled, executed, failed, compensated or all; --all: every\n"
		   "  one); --tool: a name, name@version or a pattern (sql.*).\n"
		   "show: a ticket for a person (--catalog DIR: its tool's owner and\n"
		   "  description; --full: long values unfolded). --json: the admin API's JSON.\n"
		   "ID: 32 hex digits, or the first 8 or more when no other ticket starts so.\n"
		   "approve, reject, cancel: the token, the gateway's own or one of the policy's\n"
		   "  identity providers', from --token-file FILE (mode 0600) or --token - (stdin);\n"
		   "  --token TOKEN shows it to every user of the machine (ps). --public-url URL:\n"
		   "  the audience of a provider that names none (as serve's). The decision, with\n"
		   "  its --reason TEXT of at most 1000 bytes, or its refusal, goes into the\n"
		   "  audit log: DIR/audit.log, or --audit FILE (--record FILE, its old name).\n"
		   "--store URL: the store is this PostgreSQL database (postgres://HOST/DB, no\n"
		   "  password in it: docs/STORE.md), not DIR's: list and show need no --state\n"
		   "  then; approve, reject and cancel take it too, and still --state DIR (its\n"
		   "  key checks the token).\n"
		   "\n"
		   "Exit status: 0 done, 1 refused or no such ticket, 2 usage, 3 the state\n"
		   "directory, store, token file, catalogue or audit log missing or failing\n"
		   "(docs/CLI.md).\n");
}

/* ---- who decides -------------------------------------------------------------- */

int cli_identify(const struct cli_decider *d, struct tg_store *st, char *who, size_t len,
		 char **scopes, struct tg_error *err)
{
	struct tg_policy *p = NULL;
	struct tg_signer *s = NULL;
	struct tg_idps *idps = NULL;
	size_t n = strlen(d->token);
	char iss[600];
	int rc = -1;

	*scopes = NULL;
	if (tg_policy_load(d->policy, &p, err) < 0 || tg_signer_open(d->state, 0, &s, err) < 0)
		goto out;
	/* a provider's keys are fetched only for a token that may be its:
	 * the gateway's own tokens wait for no provider */
	if (tg_token_issuer(d->token, n, iss, sizeof(iss)) == 0 &&
	    strcmp(iss, tg_policy_issuer(p)) != 0 && tg_idps_new(p, d->public_url, &idps, err) < 0)
		goto out;
	rc = tg_token_identify(s, p, st, idps, d->token, n, (int64_t)time(NULL), who, len, scopes,
			       err);
out:
	tg_idps_free(idps);
	tg_signer_close(s);
	tg_policy_free(p);
	return rc;
}

int cli_approver_of(const struct cli_decider *d, struct tg_store *st, const struct tg_ticket *t,
		    char *who, size_t len, struct tg_error *err)
{
	char need[200], *scopes;
	int ok;

	if (cli_identify(d, st, who, len, &scopes, err) < 0)
		return -1;
	ok = tg_ticket_approvable(t, scopes, need, sizeof(need));
	free(scopes);
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

/* ---- the command line ----------------------------------------------------------- */

enum { OPT_ALL = 'a', OPT_JSON = 'j', OPT_FULL = 'F', OPT_STATUS = 'S', OPT_TOOL = 'T',
       OPT_TOKEN = 't', OPT_TOKEN_FILE = 'k', OPT_URL = 'u', OPT_REASON = 'r', OPT_AUDIT = 'A' };

static const struct option options[] = {
	{ "all", no_argument, NULL, OPT_ALL },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "tool", required_argument, NULL, OPT_TOOL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "full", no_argument, NULL, OPT_FULL },
	CLI_OPTION_CATALOG,
	CLI_OPTION_STATE,
	CLI_OPTION_STORE,
	CLI_OPTION_POLICY,
	{ "token", required_argument, NULL, OPT_TOKEN },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "public-url", required_argument, NULL, OPT_URL },
	{ "reason", required_argument, NULL, OPT_REASON },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "record", required_argument, NULL, OPT_AUDIT },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* What approvals was asked. */
struct approvals_args {
	const char *state, *policy, *token, *token_file, *public_url, *reason, *id, *record;
	const char *status, *tool, *catalog, *store;
	int all, json, full;
	enum tg_ticket_state filter;
};

static int set_flag(int opt, const char *arg, void *ctx)
{
	struct approvals_args *a = ctx;

	(void)arg;
	*(opt == OPT_ALL ? &a->all : opt == OPT_JSON ? &a->json : &a->full) = 1;
	return 0;
}

/* --status NAME into a->filter: 0, or -1 having said what it takes. */
static int status_filter(const char *who, struct approvals_args *a)
{
	int i;

	a->filter = TG_TICKET_PENDING;
	if (a->all && a->status && strcmp(a->status, "all") != 0) {
		fprintf(stderr, "toolgate %s: --all or --status %s, not both\n", who, a->status);
		return -1;
	}
	if (a->all || (a->status && strcmp(a->status, "all") == 0)) {
		a->filter = TG_TICKET_ANY;
		return 0;
	}
	if (!a->status)
		return 0;
	for (i = TG_TICKET_PENDING; i <= TG_TICKET_COMPENSATED; i++)
		if (strcmp(a->status, tg_ticket_state_name((enum tg_ticket_state)i)) == 0) {
			a->filter = (enum tg_ticket_state)i;
			return 0;
		}
	fprintf(stderr, "toolgate %s: --status '%s': one of pending, approved, rejected, expired, "
		"cancelled, executed, failed, compensated or all\n", who, a->status);
	return -1;
}

/* An option given to a verb it means nothing to: its name, or NULL. */
static const char *misplaced(const struct approvals_args *a, int decide, int listing)
{
	if (!listing && (a->all || a->status || a->tool))
		return a->all ? "--all" : a->status ? "--status" : "--tool";
	if (decide && (a->json || a->full || a->catalog))
		return a->json ? "--json" : a->full ? "--full" : "--catalog";
	if (listing && (a->full || a->catalog))
		return a->full ? "--full" : "--catalog";
	if (!decide && (a->token || a->token_file || a->public_url || a->reason || a->record))
		return a->token ? "--token" : a->token_file ? "--token-file" : a->public_url ?
			"--public-url" : a->reason ? "--reason" : "--audit";
	return NULL;
}

/* argv (argv[0] the verb) into *a: -1, or the exit status (--help: 0;
 * a usage error, said: 2). */
static int approvals_parse(int argc, char **argv, int decide, int listing,
			   struct approvals_args *a)
{
	const struct cli_bind binds[] = {
		{ 's', &a->state }, { 'p', &a->policy }, { OPT_TOKEN, &a->token },
		{ OPT_TOKEN_FILE, &a->token_file }, { OPT_URL, &a->public_url },
		{ OPT_REASON, &a->reason }, { OPT_AUDIT, &a->record }, { OPT_STATUS, &a->status },
		{ OPT_TOOL, &a->tool }, { 'c', &a->catalog }, { CLI_STORE, &a->store },
		{ 0, NULL },
	};
	const char *wrong;
	char who[48];
	int rc;

	snprintf(who, sizeof(who), "approvals %.20s", argv[0]);
	rc = cli_parse(who, argc, argv, ":h", options, usage, binds, set_flag, a);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		a->id = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "toolgate %s: one ID only ('%s', then '%s')\n", who, a->id,
			argv[optind]);
		return EXIT_USAGE;
	}
	/* the configuration file's values count only where the verb has a
	 * use for them (catalog: show's; public-url and audit: deciding's) */
	if (cli_config_gave(a->catalog) && (decide || listing))
		a->catalog = NULL;
	if (!decide && cli_config_gave(a->public_url))
		a->public_url = NULL;
	if (!decide && cli_config_gave(a->record))
		a->record = NULL;
	if ((wrong = misplaced(a, decide, listing))) {
		fprintf(stderr, "toolgate %s: %s is not an option of %s\n", who, wrong, argv[0]);
		return EXIT_USAGE;
	}
	if (cli_store_url(who, a->store) < 0)
		return EXIT_USAGE;
	/* reading needs a store; deciding the state directory's key too */
	if ((!a->state && (decide || !a->store)) || (!listing && !a->id) || (listing && a->id) ||
	    (decide && (!a->policy || !a->token == !a->token_file))) {
		fprintf(stderr, "toolgate %s: %s\n", who,
			!a->state && decide ? "--state DIR is needed (its key checks the token)"
			: !a->state ? "--state DIR is needed (or --store URL)"
			: listing && a->id ? "list takes no ID"
			: !a->id ? "which ticket? an ID is needed"
			: !a->policy ? "--policy FILE is needed (whose principals decide)"
			: a->token ? "--token or --token-file, not both"
				   : "--token-file FILE (or --token -, read from stdin) is needed: "
				     "who decides");
		usage(stderr);
		return EXIT_USAGE;
	}
	return status_filter(who, a) < 0 ? EXIT_USAGE : -1;
}

/* ---- tickets -------------------------------------------------------------------- */

/* Every ticket of the store (none without one): 0 and OUT *list, *n. */
static int all_tickets(struct tg_store *st, struct tg_ticket **list, size_t *n,
		       struct tg_error *err)
{
	*list = NULL, *n = 0;
	return st ? tg_store_ticket_list(st, TG_TICKET_ANY, TG_STORE_NOW, list, n, err) : 0;
}

static void free_tickets(struct tg_ticket *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tg_ticket_release(&list[i]);
	free(list);
}

/* The id given, or the one ticket whose id it begins (at least SHORT_ID
 * hex digits): into full. -1 and err (TG_ERR_INVALID) when none does,
 * or more than one. */
static int resolve_id(struct tg_store *st, const char *given, char full[33], struct tg_error *err)
{
	struct tg_ticket *list;
	size_t n, i, len = strlen(given), found = 0, at = 0;
	char lower[33];

	for (i = 0; i < len && i < 32 && isxdigit((unsigned char)given[i]); i++)
		lower[i] = (char)tolower((unsigned char)given[i]);
	lower[i] = '\0';
	if (len == 32 || i != len || len < SHORT_ID) {
		/* a whole id, or what the store says is none */
		snprintf(full, 33, "%s", len == 32 && i == len ? lower : given);
		if (len < SHORT_ID || i != len)
			return tg_error_set(err, TG_ERR_INVALID, "ticket %s: no such ticket (an id "
					    "is 32 hex digits, or its first %d or more)", given,
					    SHORT_ID);
		return 0;
	}
	if (all_tickets(st, &list, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(list[i].id, lower, len) == 0 && found++ == 0)
			at = i;
	if (found == 1)
		snprintf(full, 33, "%s", list[at].id);
	free_tickets(list, n);
	if (found == 1)
		return 0;
	return tg_error_set(err, TG_ERR_INVALID, found ? "ticket %s: %zu tickets begin so: give "
			    "more of its id" : "ticket %s: no such ticket", given, found);
}

static int by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Hex digits of an id that tell each of the n tickets shown apart from
 * every ticket of all (sorted ids compared with their neighbours). */
static size_t id_width(const struct tg_ticket *all, size_t nall)
{
	const char **ids = malloc((nall ? nall : 1) * sizeof(*ids));
	size_t i, k, w = SHORT_ID;

	if (!ids)
		return 32;
	for (i = 0; i < nall; i++)
		ids[i] = all[i].id;
	qsort(ids, nall, sizeof(*ids), by_id);
	for (i = 1; i < nall; i++) {
		for (k = 0; k < 32 && ids[i][k] == ids[i - 1][k]; k++)
			;
		if (k + 1 > w)
			w = k + 1 > 32 ? 32 : k + 1;
	}
	free(ids);
	return w;
}

/* 1 if ticket t's tool matches pattern: its name or name@version, or a
 * glob of either (sql.*). */
static int tool_matches(const struct tg_ticket *t, const char *pattern)
{
	char name[sizeof(t->tool)];

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(t->tool, "@"), t->tool);
	return fnmatch(pattern, name, 0) == 0 || fnmatch(pattern, t->tool, 0) == 0;
}

/* The admin API's list (docs/ADMIN.md): {"tickets": [...]}, oldest first,
 * each without its arguments and preview. */
static int list_json(struct tg_ticket **shown, size_t n)
{
	struct tg_ticket brief;
	size_t i;
	char *one;

	fputs("{\"tickets\":[", stdout);
	for (i = n; i-- > 0;) {
		brief = *shown[i];
		brief.arguments = brief.preview = NULL;
		one = tg_ticket_to_json(&brief, 0);
		if (!one)
			return -1;
		printf("%s%s", i + 1 < n ? "," : "", one);
		free(one);
	}
	puts("]}");
	return 0;
}

static int list(const struct approvals_args *a, struct tg_store *st, struct tg_error *err)
{
	struct approvals_view v = { approvals_color(stdout), 0, (int64_t)time(NULL), NULL };
	struct tg_ticket *all, **shown, *rows;
	size_t n, i, k = 0;
	int rc = 0;

	if (all_tickets(st, &all, &n, err) < 0)
		return -1;
	shown = malloc((n ? n : 1) * sizeof(*shown));
	rows = malloc((n ? n : 1) * sizeof(*rows));
	if (!shown || !rows) {
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	/* newest first: the store's are oldest first */
	for (i = n; i-- > 0;)
		if ((a->filter == TG_TICKET_ANY || all[i].state == a->filter) &&
		    (!a->tool || tool_matches(&all[i], a->tool))) {
			shown[k] = &all[i];
			rows[k++] = all[i]; /* borrowed: all is released */
		}
	if (a->json)
		rc = list_json(shown, k) < 0 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
	else
		approvals_table(stdout, &v, rows, k, id_width(all, n));
out:
	free(rows);
	free(shown);
	free_tickets(all, n);
	return rc;
}

static int show(const struct approvals_args *a, struct tg_store *st, const char *id,
		struct tg_error *err)
{
	struct approvals_view v = { approvals_color(stdout), a->full, (int64_t)time(NULL), NULL };
	struct tg_catalog *cat = NULL;
	struct tg_ticket t;
	char *text;

	if (tg_store_ticket_get(st, id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	if (a->json) {
		text = tg_ticket_to_json(&t, 1);
		if (text)
			puts(text);
		free(text);
		tg_ticket_release(&t);
		return text ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (a->catalog && tg_catalog_load_dir(a->catalog, NULL, &cat, err) < 0) {
		tg_ticket_release(&t);
		err->code = TG_ERR_SYSTEM; /* the catalogue, not the ticket: exit 3 */
		return -1;
	}
	v.catalog = cat;
	approvals_ticket(stdout, &v, &t);
	tg_catalog_free(cat);
	tg_ticket_release(&t);
	return 0;
}

/* approve, reject or cancel ticket id, by the token's principal. */
static int decide(const struct approvals_args *a, const char *verb, struct tg_store *st,
		  struct tg_audit *audit, const char *id, char *who, size_t len,
		  struct tg_error *err)
{
	struct cli_decider d = { a->state, a->policy, NULL, a->public_url };
	enum tg_decision dn;
	char *token = NULL, *scopes = NULL, wverb[32];
	int rc;

	snprintf(wverb, sizeof(wverb), "approvals %.16s", verb);
	rc = cli_token_read(wverb, a->token, a->token_file, &token);
	if (rc)
		return rc;
	d.token = token;
	/* who decides: the principal the token names, with its scopes */
	rc = cli_identify(&d, st, who, len, &scopes, err);
	cli_token_free(token);
	if (rc < 0)
		return -1;
	dn = strcmp(verb, "approve") == 0 ? TG_DECISION_APPROVE
	     : strcmp(verb, "reject") == 0 ? TG_DECISION_REJECT
					   : TG_DECISION_CANCEL;
	rc = tg_gate_decide(st, audit, who, scopes, id, dn, a->reason, err);
	free(scopes);
	if (rc < 0)
		return -1;
	printf("%s %s by %s\n", id, dn == TG_DECISION_APPROVE ? "approved"
				    : dn == TG_DECISION_REJECT ? "rejected" : "cancelled", who);
	return unrecorded(rc);
}

int cmd_approvals(int argc, char **argv)
{
	struct approvals_args args = { 0 };
	struct tg_audit *audit = NULL;
	struct tg_store *st = NULL;
	struct tg_error err;
	const char *verb, *where;
	char who[128] = "", who_verb[32], id[33] = "";
	int rc, decide_it, listing;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	verb = argv[1];
	decide_it = strcmp(verb, "approve") == 0 || strcmp(verb, "reject") == 0 ||
		    strcmp(verb, "cancel") == 0;
	listing = strcmp(verb, "list") == 0;
	if (!decide_it && !listing && strcmp(verb, "show") != 0) {
		fprintf(stderr, "toolgate approvals: unknown command '%s' (list, show, approve, "
			"reject or cancel)\n", verb);
		return EXIT_USAGE;
	}
	rc = approvals_parse(argc - 1, argv + 1, decide_it, listing, &args);
	if (rc >= 0)
		return rc;
	snprintf(who_verb, sizeof(who_verb), "approvals %.16s", verb);
	/* nothing here makes a state directory or a store: a typo is said */
	if (args.state && cli_state_exists(who_verb, args.state) < 0)
		return EXIT_DATA;
	where = cli_store_at(args.store, args.state);
	/* a person's decision, and its refusal, in the log serve writes */
	if (decide_it && !(audit = cli_audit_open(args.record, args.state, "approvals")))
		return EXIT_DATA;
	if (args.id)
		snprintf(id, sizeof(id), "%.32s", args.id);
	if (!cli_has_store(where) && !listing) {
		/* no write call was ever held here */
		tg_error_set(&err, TG_ERR_INVALID, "ticket %s: no such ticket", args.id);
		goto fail;
	}
	if (cli_has_store(where) && tg_store_open(where, &st, &err) < 0) {
		err.code = TG_ERR_SYSTEM; /* the store, not the ticket: exit 3 */
		goto fail;
	}
	if (listing) {
		rc = list(&args, st, &err) < 0 ? -1 : 0;
	} else if (resolve_id(st, args.id, id, &err) < 0) {
		goto fail;
	} else {
		rc = decide_it ? decide(&args, verb, st, audit, id, who, sizeof(who), &err)
			       : show(&args, st, id, &err);
	}
	if (rc >= 0)
		goto out;
fail:
	cli_say(stderr, who_verb, err.msg);
	if (decide_it)
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
