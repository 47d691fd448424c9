/*
 * toolgate upstream list --catalog DIR [--state DIR] [--store URL]
 *                                     one line an upstream
 * toolgate upstream show NAME --catalog DIR [--state DIR] [--store URL]
 *                                     its declaration as the gateway reads it
 *                                     (credentials by name and file, never a
 *                                     value), and its pins
 * toolgate upstream test NAME --catalog DIR [--timeout S]
 *                                     its server started as serve starts it,
 *                                     each tool it lists: served, hidden or
 *                                     refused and why; what its declaration
 *                                     says that would not work (a writable
 *                                     mount, a declared tool not listed)
 * toolgate upstream pin NAME --catalog DIR (--state DIR | --store URL) [--as WHO]
 *                                     the definitions it lists that would be
 *                                     served, pinned in the store
 * toolgate upstream diff NAME --catalog DIR (--state DIR | --store URL)
 *                                     its listing against its pins: what
 *                                     changed, was added or removed, said as
 *                                     an approval ticket's preview says it
 *
 * The operator's commands of issue 18 (docs/UPSTREAMS.md, "Commands";
 * exit statuses docs/CLI.md). test, pin and diff see the server through
 * tg_gate_upstream_probe (src/gate/upstream_probe.c): started in its
 * sandbox, or reached over HTTP, as serve would, and stopped again. Every
 * text of a server's is printed as the gateway's log shows it
 * (cli_put_shown: redacted, hidden characters as '?').
 *
 * Never: print a credential's value (only its name and file), serve a
 * tool, or write anything but pin's pins; list, show and diff create
 * neither the state directory nor the store. The pins are the store's:
 * the state directory's, or with --store URL a PostgreSQL database's
 * (then --state DIR is not needed; given, it is also the state the
 * probed server is checked against, as serve's).
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "cli/serve_catalog.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "toolgate/upstream.h"

#define UPSTREAM_TIMEOUT_S 30 /* test, pin, diff: the listing waited for */

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate upstream list --catalog DIR [--state DIR] [--store URL]\n"
		   "       toolgate upstream show NAME --catalog DIR [--state DIR] [--store URL]\n"
		   "       toolgate upstream test NAME --catalog DIR [--timeout SECONDS]\n"
		   "       toolgate upstream pin NAME --catalog DIR (--state DIR | --store URL)\n"
		   "                                 [--as WHO] [--timeout SECONDS]\n"
		   "       toolgate upstream diff NAME --catalog DIR (--state DIR | --store URL)\n"
		   "                                 [--timeout SECONDS]\n"
		   "       toolgate upstream accept NAME [TOOL...] --state DIR --policy FILE\n"
		   "                                 (--token-file FILE | --token TOKEN | --token -)\n"
		   "                                 [--public-url URL] [--audit FILE]\n"
		   "                                 [--store URL]\n"
		   "\n"
		   "test, pin and diff start the upstream's server (in its sandbox, or reach it\n"
		   "over HTTP) as serve would, wait at most --timeout (default 30) seconds for\n"
		   "its tools, and stop it. --state: the store of its pins (pin makes it in an\n"
		   "existing directory); --store URL: the store of its pins is this PostgreSQL\n"
		   "database (postgres://HOST/DB, no password in it: docs/STORE.md) instead;\n"
		   "--as: who pins (default: operator LOGIN).\n"
		   "--catalog-trust FILE (list, show, test, pin, diff): read the catalogue only\n"
		   "when it is signed by a key of this trust store and unchanged since\n"
		   "(toolgate catalog sign), and start the server from the bytes verified, as\n"
		   "serve --catalog-trust. accept approves, as the token's principal, the\n"
		   "definitions that await review.\n"
		   "\n"
		   "Exit status: 0; 1 a tool refused or a warning (test), a change (diff), no\n"
		   "such upstream; 2 usage; 3 the catalogue, the state directory or store\n"
		   "missing or failing, or the server could not be started or reached\n"
		   "(docs/CLI.md).\n");
}

static const struct option options[] = {
	CLI_OPTION_CATALOG,
	CLI_OPTION_STATE,
	CLI_OPTION_STORE,
	{ "timeout", required_argument, NULL, 't' },
	{ "as", required_argument, NULL, 'a' },
	{ "catalog-trust", required_argument, NULL, 'T' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* What upstream was asked. */
struct up_args {
	const char *verb, *name, *catalog, *state, *timeout, *as, *catalog_trust;
	const char *store;           /* --store URL, else the store is --state's */
	struct catalog_copy *copy;   /* with catalog_trust: the verified copy */
	char who[32];                /* "upstream VERB" */
	int timeout_ms;
};

/* ---- what the commands share --------------------------------------------- */

/* The catalogue of DIR: NULL having said why (a directory that is not
 * there is named as such, not as a file error of the loader's). */
static struct tg_catalog *catalog_of(const struct up_args *a)
{
	struct tg_catalog *cat;
	struct tg_error err;
	struct stat sb;

	if (stat(a->catalog, &sb) < 0) {
		fprintf(stderr, "toolgate %s: --catalog %s: %s\n", a->who, a->catalog,
			errno == ENOENT ? "no such catalogue directory" : strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "toolgate %s: --catalog %s: not a directory\n", a->who, a->catalog);
		return NULL;
	}
	/* with --catalog-trust, the declarations and the files their servers
	 * are given are the bytes verified */
	if (catalog_open(a->catalog, a->catalog_trust, a->copy, &cat, &err) < 0) {
		cli_say(stderr, a->who, err.msg);
		return NULL;
	}
	return cat;
}

/* The upstream NAME of cat, or NULL having said which names there are. */
static const struct tg_upstream *upstream_find(const struct up_args *a,
					       const struct tg_catalog *cat)
{
	size_t i, n = tg_catalog_upstream_count(cat);

	for (i = 0; i < n; i++)
		if (strcmp(tg_catalog_upstream_at(cat, i)->name, a->name) == 0)
			return tg_catalog_upstream_at(cat, i);
	fprintf(stderr, "toolgate %s: no upstream '", a->who);
	cli_put_text(stderr, a->name);
	fprintf(stderr, "' in %s", a->catalog);
	if (!n)
		fprintf(stderr, ": it declares none (%s/upstreams/NAME.json)\n", a->catalog);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : " (declared: ", tg_catalog_upstream_at(cat, i)->name);
	fprintf(stderr, "%s", n ? ")\n" : "");
	return NULL;
}

/* The store of --store, else of --state: opened (pin: made when missing,
 * in a directory that exists). -1 having said why. */
static int store_open(const struct up_args *a, int make, struct tg_store **st)
{
	const char *where = cli_store_at(a->store, a->state);
	struct tg_error err;

	*st = NULL;
	if (a->state && cli_state_exists(a->who, a->state) < 0)
		return -1;
	if (!make && !cli_has_store(where)) {
		fprintf(stderr, "toolgate %s: --state %s holds no store yet (%s): nothing was "
			"pinned there (toolgate upstream pin NAME --state DIR pins)\n", a->who,
			a->state, CLI_STORE_FILE);
		return -1;
	}
	if (tg_store_open(where, st, &err) < 0) {
		cli_say(stderr, a->who, err.msg);
		return -1;
	}
	return 0;
}

/* The pins of upstream u: -1 having said why. */
static int pins_of(const struct up_args *a, struct tg_store *st, const struct tg_upstream *u,
		   struct tg_pin **pins, size_t *n)
{
	struct tg_error err;

	if (tg_store_pin_list(st, u->name, pins, n, &err) == 0)
		return 0;
	cli_say(stderr, a->who, err.msg);
	return -1;
}

static void pins_free(struct tg_pin *pins, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tg_pin_release(&pins[i]);
	free(pins);
}

/* t as UTC, "YYYY-MM-DDTHH:MM:SSZ". */
static const char *utc(int64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, len, "%lld", (long long)t);
	return out;
}

/* What a command over one upstream has open. */
struct up_open {
	struct tg_catalog *cat;
	const struct tg_upstream *u;  /* of cat */
	struct tg_store *st;          /* --store's or --state's, or NULL */
	struct tg_pin *pins;          /* u's, from st */
	size_t npins;
	struct tg_upstream_listing l; /* its server's tools (probe) */
};

/* Upstream a->name of cat started and its listing judged (*l). The exit
 * status when not: said. */
static int probe(const struct up_args *a, const struct tg_catalog *cat,
		 struct tg_upstream_listing *l)
{
	struct tg_gate_options o = { 0 };
	struct tg_error err;

	o.tools_dir = a->catalog;
	o.tools_copy = a->catalog_trust ? a->copy->live : NULL;
	o.state_dir = a->state;
	if (tg_gate_upstream_probe(cat, a->name, &o, a->timeout_ms, l, &err) == 0)
		return 0;
	if (err.code == TG_ERR_LIMIT)
		fprintf(stderr, "toolgate %s: upstream %s did not list its tools within %d s "
			"(--timeout)\n", a->who, a->name, a->timeout_ms / 1000);
	else
		cli_say(stderr, a->who, err.msg); /* names the upstream and why */
	return EXIT_DATA;
}

/* The catalogue, upstream a->name in it, with --state or --store its store (make:
 * made when missing) and u's pins, and with probing its server's listing,
 * into *o (up_close, also after a failure). 0, or the exit status, said. */
static int up_open(const struct up_args *a, int make, int probing, struct up_open *o)
{
	memset(o, 0, sizeof(*o));
	if (!(o->cat = catalog_of(a)))
		return EXIT_DATA;
	if (!(o->u = upstream_find(a, o->cat)))
		return EXIT_NO;
	if ((a->state || a->store) && (store_open(a, make, &o->st) < 0 ||
				       pins_of(a, o->st, o->u, &o->pins, &o->npins) < 0))
		return EXIT_DATA;
	return probing ? probe(a, o->cat, &o->l) : 0;
}

static void up_close(struct up_open *o)
{
	tg_upstream_listing_release(&o->l);
	pins_free(o->pins, o->npins);
	tg_store_close(o->st);
	tg_catalog_free(o->cat);
}

/* ---- list, show ---------------------------------------------------------- */

static int cmd_list(const struct up_args *a)
{
	struct tg_catalog *cat = catalog_of(a);
	struct tg_store *st = NULL;
	struct tg_pin *pins;
	size_t i, npins;
	char tools[24];
	int rc = EXIT_DATA;

	if (!cat)
		return EXIT_DATA;
	if ((a->state || a->store) && store_open(a, 0, &st) < 0)
		goto out;
	printf("%-32s %-9s %-6s %s\n", "UPSTREAM", "TRANSPORT", "PIN", st ? "TOOLS  PINS" : "TOOLS");
	for (i = 0; i < tg_catalog_upstream_count(cat); i++) {
		const struct tg_upstream *u = tg_catalog_upstream_at(cat, i);

		snprintf(tools, sizeof(tools), "%zu", u->ntools);
		printf("%-32s %-9s %-6s %-*s", u->name, tg_upstream_transport_name(u->transport),
		       tg_upstream_pin_name(u->pin), st ? 6 : 0, tools);
		if (st) {
			if (pins_of(a, st, u, &pins, &npins) < 0)
				goto out;
			pins_free(pins, npins);
			printf(" %zu\n", npins);
		} else {
			printf("\n");
		}
	}
	rc = 0;
out:
	tg_store_close(st);
	tg_catalog_free(cat);
	return rc;
}

static void show_strings(const char *label, char *const *v)
{
	size_t i;

	printf("%s", label);
	for (i = 0; v && v[i]; i++) {
		fputs(i ? " " : "", stdout);
		cli_put_shown(stdout, v[i]); /* redacted: a token on a command line */
	}
	putchar('\n');
}

/* A warning of show's (what the declaration says that would not work):
 * the declaration's own names, no value. */
static void show_warning(const char *line, void *ctx)
{
	(void)ctx;
	printf("warning:   %s\n", line);
}

/* The stdio fields of u: how it is started and where it runs. */
static void show_stdio(const struct tg_upstream *u)
{
	size_t i;

	show_strings("argv:      ", u->argv);
	for (i = 0; u->env && u->env[i]; i++) {
		/* the operator's own text, redacted all the same: a secret
		 * belongs in credentials, but may have been written here */
		printf("env:       ");
		cli_put_shown(stdout, u->env[i]);
		putchar('\n');
	}
	if (u->workdir)
		printf("workdir:   %s\n", u->workdir);
	printf("tier:      %s\n", u->tier == TG_TIER_STRICT ? "strict" : "standard");
	for (i = 0; i < u->nmounts; i++)
		printf("mount:     %s -> %s (%s)\n", u->mounts[i].host, u->mounts[i].inside,
		       u->mounts[i].writable ? "writable" : "read-only");
	tg_upstream_check_mounts(u, show_warning, NULL);
	if (u->egress)
		show_strings("egress:    ", u->egress);
	printf("limits:   ");
	if (u->memory)
		printf(" memory %llu bytes", (unsigned long long)u->memory);
	if (u->millicpus)
		printf(" cpus %u.%03u", u->millicpus / 1000, u->millicpus % 1000);
	if (u->pids)
		printf(" pids %u", u->pids);
	if (u->timeout_ms)
		printf(" timeout %llu ms", (unsigned long long)u->timeout_ms);
	if (u->output)
		printf(" output %llu bytes", (unsigned long long)u->output);
	printf("%s\n", u->memory || u->millicpus || u->pids || u->timeout_ms || u->output
			? " (the rest: the tier's defaults)" : " the tier's defaults");
	printf("per_call:  %s\n", u->per_call ? "yes: a server for each call" : "no");
}

static void show_tool(const struct tg_upstream_tool *t)
{
	printf("tool:      %s as %s: %s", t->name, t->exposed,
	       t->authority == TG_UPSTREAM_READ ? "read" : "write");
	if (t->dry_run_argument)
		printf(", dry_run argument %s", t->dry_run_argument);
	else if (t->authority == TG_UPSTREAM_WRITE)
		printf(", no dry_run");
	if (t->compensation_tool)
		printf(", compensated by %s", t->compensation_tool);
	if (t->irreversible) {
		printf(", irreversible: ");
		cli_put_text(stdout, t->irreversible);
	}
	if (t->hide)
		printf(", hidden");
	putchar('\n');
}

static int cmd_show(const struct up_args *a)
{
	struct up_open o;
	const struct tg_upstream *u;
	char when[32];
	size_t i;
	int rc = up_open(a, 0, 0, &o);

	if (rc)
		goto out;
	u = o.u;
	printf("upstream:  %s (%s)\ntransport: %s\n", u->name, u->file,
	       tg_upstream_transport_name(u->transport));
	if (u->transport == TG_UPSTREAM_STDIO)
		show_stdio(u);
	else
		printf("url:       %s (egress %s, through the proxy)\n", u->url, u->url_rule);
	/* a credential by its name and file: its value is never read here */
	for (i = 0; i < u->ncredentials; i++)
		printf("credential: %s %s from %s\n",
		       u->transport == TG_UPSTREAM_STDIO ? "env" : "header",
		       u->credentials[i].name, u->credentials[i].path);
	printf("pin:       %s\n", tg_upstream_pin_name(u->pin));
	printf("protocol:  %s\n", u->protocol == TG_UPSTREAM_PROTOCOL_MODERN ? "2026-07-28 only"
	       : u->protocol == TG_UPSTREAM_PROTOCOL_SESSION ? "2025-11-25 (initialize) only"
	       : "auto (server/discover, else initialize)");
	printf("relay:     %s%s%s%s\n", u->relay & TG_UPSTREAM_RELAY_SAMPLING ? " sampling" : "",
	       u->relay & TG_UPSTREAM_RELAY_ELICITATION ? " elicitation" : "",
	       u->relay & TG_UPSTREAM_RELAY_ROOTS ? " roots" : "",
	       u->relay ? "" : " nothing (every request of the server refused)");
	for (i = 0; i < u->ntools; i++)
		show_tool(&u->tools[i]);
	if (!u->ntools)
		printf("tool:      none declared (every tool listed is a write)\n");
	for (i = 0; i < o.npins; i++) {
		printf("pinned:    ");
		cli_put_text(stdout, o.pins[i].tool);
		printf(" sha256 %.12s at %s by ", o.pins[i].sha256,
		       utc(o.pins[i].pinned_at, when, sizeof(when)));
		cli_put_text(stdout, o.pins[i].pinned_by);
		putchar('\n');
	}
	if (o.st)
		printf("%zu pin%s\n", o.npins, o.npins == 1 ? "" : "s");
out:
	up_close(&o);
	return rc;
}

/* ---- test, pin, diff: the server seen once -------------------------------- */

/* The name a tool of u the server lists is exposed under (name NULL:
 * the server gave none). */
static void exposed_of(const struct tg_upstream *u, const char *name, char *out, size_t len)
{
	size_t i;

	for (i = 0; name && i < u->ntools; i++)
		if (strcmp(u->tools[i].name, name) == 0) {
			snprintf(out, len, "%s", u->tools[i].exposed);
			return;
		}
	snprintf(out, len, "%s.%s", u->name, name ? name : "?");
}

static int authority_read(const struct tg_upstream *u, const char *name)
{
	size_t i;

	for (i = 0; name && i < u->ntools; i++)
		if (strcmp(u->tools[i].name, name) == 0)
			return u->tools[i].authority == TG_UPSTREAM_READ;
	return 0;
}

/* One line of test: exposed name, authority, verdict. */
static void test_line(const struct tg_upstream *u, const struct tg_listed_tool *t)
{
	char exposed[300];

	exposed_of(u, t->name, exposed, sizeof(exposed));
	cli_put_shown(stdout, exposed);
	printf("  %s  ", (t->contract ? t->contract->authority == TG_AUTHORITY_READ
			  : authority_read(u, t->name)) ? "read " : "write");
	if (t->verdict == TG_LISTED_SERVED)
		printf("served\n");
	else if (t->verdict == TG_LISTED_HIDDEN)
		printf("hidden\n");
	else
		printf("refused: %s\n", t->why);
}

/* What the probe found the declaration says that would not work as
 * served (l->warnings: a writable mount, a declared tool not listed), a
 * line each: the declaration's names, and a listed tool name. */
static void warnings_print(const struct tg_upstream_listing *l)
{
	size_t i;

	for (i = 0; i < l->nwarnings; i++) {
		cli_put_shown(stdout, l->warnings[i]);
		putchar('\n');
	}
}

static int cmd_test(const struct up_args *a)
{
	struct up_open o;
	size_t i, served = 0, refused = 0;
	int rc = up_open(a, 0, 1, &o);

	for (i = 0; rc == 0 && i < o.l.n; i++) {
		test_line(o.u, &o.l.tools[i]);
		served += o.l.tools[i].verdict == TG_LISTED_SERVED;
		refused += o.l.tools[i].verdict == TG_LISTED_REFUSED;
	}
	if (rc == 0) {
		warnings_print(&o.l);
		printf("%zu tools listed, %zu served, %zu hidden, %zu refused (protocol %s)\n",
		       o.l.n, served, o.l.n - served - refused, refused, o.l.protocol);
		/* a warning too: what was declared would not work as meant */
		rc = refused || o.l.nwarnings ? EXIT_NO : 0;
	}
	up_close(&o);
	return rc;
}

/* Who pins: --as, else "operator LOGIN" of the effective user. */
static void pinner(const struct up_args *a, char *out, size_t len)
{
	struct passwd *pw;

	if (a->as) {
		snprintf(out, len, "%s", a->as);
		return;
	}
	pw = getpwuid(geteuid());
	if (pw && pw->pw_name)
		snprintf(out, len, "operator %s", pw->pw_name);
	else
		snprintf(out, len, "operator uid %u", (unsigned)geteuid());
}

/* Listed tool t pinned (it would be served): its line printed. npins:
 * how many pins the upstream had before (none: this is its first pin).
 * 1 when a pin was written, 0 when it was there already, -1 said. */
static int pin_one(const struct up_args *a, struct tg_store *st, const struct tg_upstream *u,
		   const struct tg_listed_tool *t, size_t npins, const char *by)
{
	struct tg_pin_definition d = { 0 };
	struct tg_pin old = { 0 }, p = { 0 };
	struct tg_error err;
	const char *said;
	int had, rc = -1;

	if (tg_upstream_definition(t->definition, strlen(t->definition), &d, &err) < 0 ||
	    (had = tg_store_pin_get(st, u->name, d.tool, &old, &err)) < 0)
		goto out;
	if (had == 0 && strcmp(old.sha256, d.sha256) == 0) {
		said = "unchanged";
		rc = 0;
	} else {
		snprintf(p.upstream, sizeof(p.upstream), "%s", u->name);
		snprintf(p.tool, sizeof(p.tool), "%s", d.tool);
		memcpy(p.sha256, d.sha256, sizeof(p.sha256));
		p.definition = d.canonical;
		p.pinned_at = (int64_t)time(NULL);
		snprintf(p.pinned_by, sizeof(p.pinned_by), "%s", by);
		if (tg_store_pin_set(st, &p, &err) < 0)
			goto out;
		said = had == 0 ? "changed (re-pinned)" : npins ? "added" : "pinned";
		rc = 1;
	}
	printf("%-20s %s %.12s\n", said, t->contract->name, d.sha256);
out:
	if (rc < 0) {
		fprintf(stderr, "toolgate %s: %s: ", a->who, t->contract->name);
		cli_put_shown(stderr, err.msg);
		fputc('\n', stderr);
	}
	tg_pin_release(&old);
	tg_pin_definition_release(&d);
	return rc;
}

static int cmd_pin(const struct up_args *a)
{
	struct up_open o;
	size_t i, j, listed, written = 0;
	char by[128], exposed[300];
	int rc, wrote;

	pinner(a, by, sizeof(by));
	if ((rc = up_open(a, 1, 1, &o)) != 0)
		goto out;
	for (i = 0; i < o.l.n; i++) {
		const struct tg_listed_tool *t = &o.l.tools[i];

		if (t->verdict == TG_LISTED_SERVED) {
			if ((wrote = pin_one(a, o.st, o.u, t, o.npins, by)) < 0) {
				rc = EXIT_DATA;
				goto out;
			}
			written += (size_t)wrote;
			continue;
		}
		exposed_of(o.u, t->name, exposed, sizeof(exposed));
		printf("%-20s ", "not pinned");
		cli_put_shown(stdout, exposed);
		printf(": %s\n", t->verdict == TG_LISTED_HIDDEN ? "hidden" : t->why);
	}
	/* a pin not listed now is kept: the tool, back unchanged, is served */
	for (j = 0; j < o.npins; j++) {
		for (i = 0, listed = 0; i < o.l.n && !listed; i++)
			listed = o.l.tools[i].name && strcmp(o.l.tools[i].name, o.pins[j].tool) == 0;
		if (listed)
			continue;
		exposed_of(o.u, o.pins[j].tool, exposed, sizeof(exposed));
		printf("%-20s %s (not listed now)\n", "kept", exposed);
	}
	warnings_print(&o.l);
	if (written)
		printf("%zu pinned by %s\n", written, by);
	else
		printf("nothing pinned anew\n");
out:
	up_close(&o);
	return rc;
}

/* ---- diff ----------------------------------------------------------------- */

/* What changed between a tool's pinned definition (canonical text; NULL
 * when it is added) and the one listed now (t), as an approval ticket's
 * preview says it (tg_catalog_upstream_diff: catalog diff's judgement,
 * the texts a model reads before and after), each line shown safe; and,
 * when it would not be served now, why. */
static void change_render(const struct tg_upstream *u, const char *pinned,
			  const struct tg_listed_tool *t)
{
	struct tg_error err;
	char *text = NULL, *line, *next;
	int breaking;

	if (tg_catalog_upstream_diff(u, pinned, pinned ? strlen(pinned) : 0, t->definition,
				     strlen(t->definition), &text, &breaking, &err) < 0) {
		printf("    not compared: ");
		cli_put_shown(stdout, err.msg);
		putchar('\n');
	}
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		printf("  ");
		cli_put_shown(stdout, line);
		putchar('\n');
	}
	free(text);
	if (t->verdict == TG_LISTED_REFUSED)
		printf("    refused now: %s\n", t->why);
}

/* The definitions of l's tools compared with the pins: those that would
 * be served, and those pinned (a tool hidden or refused since is
 * compared, not taken for removed). OUT defs (*ndefs) and from: the
 * listed tool of each. A definition the pins cannot hold is said and
 * left out. */
static void listed_defs(const struct tg_upstream *u, const struct tg_upstream_listing *l,
			const struct tg_pin *pins, size_t npins, struct tg_pin_definition *defs,
			size_t *from, size_t *ndefs)
{
	struct tg_error err;
	char exposed[300];
	size_t i, j;
	int pinned;

	*ndefs = 0;
	for (i = 0; i < l->n; i++) {
		const struct tg_listed_tool *t = &l->tools[i];

		for (j = 0, pinned = 0; t->name && j < npins && !pinned; j++)
			pinned = strcmp(pins[j].tool, t->name) == 0;
		if (t->verdict != TG_LISTED_SERVED && !pinned)
			continue;
		if (tg_upstream_definition(t->definition, strlen(t->definition), &defs[*ndefs],
					   &err) == 0) {
			from[(*ndefs)++] = i;
			continue;
		}
		exposed_of(u, t->name, exposed, sizeof(exposed));
		printf("%-8s ", "refused");
		cli_put_shown(stdout, exposed);
		printf(": ");
		cli_put_shown(stdout, err.msg);
		putchar('\n');
	}
}

/* The verdicts of the comparison printed; the number of changes. */
static size_t diff_print(const struct tg_upstream *u, const struct tg_upstream_listing *l,
			 const struct tg_pin *pins, const size_t *from,
			 const struct tg_pin_verdict *v, size_t nv)
{
	size_t i, changes = 0;
	char exposed[300];

	for (i = 0; i < nv; i++) {
		const struct tg_listed_tool *t = v[i].listed != SIZE_MAX ? &l->tools[from[v[i].listed]]
									 : NULL;

		if (v[i].change == TG_PIN_UNCHANGED)
			continue;
		changes++;
		exposed_of(u, v[i].tool, exposed, sizeof(exposed));
		printf("%-8s ", tg_pin_change_name(v[i].change));
		cli_put_shown(stdout, exposed);
		if (t && t->verdict == TG_LISTED_HIDDEN)
			printf(" (hidden by its declaration)");
		putchar('\n');
		if (t && t->verdict != TG_LISTED_HIDDEN)
			change_render(u, v[i].change == TG_PIN_CHANGED ? pins[v[i].pin].definition
				      : NULL, t);
	}
	return changes;
}

static int cmd_diff(const struct up_args *a)
{
	struct tg_pin_definition *defs = NULL;
	struct tg_pin_verdict *v = NULL;
	struct tg_pin_ref *refs = NULL;
	struct up_open o;
	size_t i, ndefs = 0, nv = 0, changes, *from = NULL;
	struct tg_error err;
	int rc;

	if ((rc = up_open(a, 0, 1, &o)) != 0)
		goto out;
	rc = EXIT_DATA;
	defs = calloc(o.l.n + 1, sizeof(*defs));
	from = calloc(o.l.n + 1, sizeof(*from));
	refs = calloc(o.npins + 1, sizeof(*refs));
	if (!defs || !from || !refs) {
		fprintf(stderr, "toolgate %s: out of memory\n", a->who);
		goto out;
	}
	for (i = 0; i < o.npins; i++)
		refs[i] = (struct tg_pin_ref){ o.pins[i].tool, o.pins[i].sha256 };
	listed_defs(o.u, &o.l, o.pins, o.npins, defs, from, &ndefs);
	if (tg_upstream_pins_compare(defs, ndefs, refs, o.npins, &v, &nv, &err) < 0) {
		cli_say(stderr, a->who, err.msg);
		goto out;
	}
	changes = diff_print(o.u, &o.l, o.pins, from, v, nv);
	warnings_print(&o.l);
	if (changes)
		printf("%zu change%s since the pins of %s\n", changes, changes == 1 ? "" : "s",
		       o.u->name);
	else
		printf("nothing changed since the %zu pin%s of %s\n", o.npins,
		       o.npins == 1 ? "" : "s", o.u->name);
	rc = changes ? EXIT_NO : 0;
out:
	free(v);
	for (i = 0; defs && i < ndefs; i++)
		tg_pin_definition_release(&defs[i]);
	free(defs);
	free(from);
	free(refs);
	up_close(&o);
	return rc;
}

/* ---- the command line ----------------------------------------------------- */

/* argv (argv[0] the verb) into *a: -1, or the exit status (--help: 0; a
 * usage error, said: 2). */
static int upstream_parse(int argc, char **argv, struct up_args *a)
{
	const struct cli_bind binds[] = {
		{ 'c', &a->catalog }, { 's', &a->state }, { 't', &a->timeout },
		{ 'a', &a->as }, { 'T', &a->catalog_trust }, { CLI_STORE, &a->store }, { 0, NULL },
	};
	int listing = strcmp(a->verb, "list") == 0, probing = strcmp(a->verb, "test") == 0 ||
			strcmp(a->verb, "pin") == 0 || strcmp(a->verb, "diff") == 0;
	unsigned long s = UPSTREAM_TIMEOUT_S;
	const char *missing = NULL;
	int rc;

	rc = cli_parse(a->who, argc, argv, ":h", options, usage, binds, NULL, NULL);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		a->name = argv[optind++];
	/* test writes nothing: the configuration file's state and store are
	 * not for it */
	if (strcmp(a->verb, "test") == 0 && cli_config_gave(a->state))
		a->state = NULL;
	if (strcmp(a->verb, "test") == 0 && cli_config_gave(a->store))
		a->store = NULL;
	if (optind < argc || (listing && a->name)) {
		struct stat st;

		/* a directory where a NAME was not wanted: the catalogue meant */
		fprintf(stderr, "toolgate %s: %s ('%s')%s\n", a->who,
			listing ? "takes no NAME" : "one NAME only", argv[optind - 1],
			stat(argv[optind - 1], &st) == 0 && S_ISDIR(st.st_mode)
			? ": the catalogue is given as --catalog DIR" : "");
		return EXIT_USAGE;
	}
	if (!a->catalog)
		missing = "--catalog DIR is needed";
	else if (!listing && !a->name)
		missing = "which upstream? a NAME is needed";
	else if (!a->state && !a->store &&
		 (strcmp(a->verb, "pin") == 0 || strcmp(a->verb, "diff") == 0))
		missing = "--state DIR is needed (or --store URL): the store its pins are kept in";
	else if (a->state && strcmp(a->verb, "test") == 0)
		missing = "test takes no --state: it writes nothing (pin and diff take one)";
	else if (a->store && strcmp(a->verb, "test") == 0)
		missing = "test takes no --store: it writes nothing (pin and diff take one)";
	else if (a->as && strcmp(a->verb, "pin") != 0)
		missing = "--as is pin's only";
	else if (a->timeout && !probing)
		missing = "--timeout is for test, pin and diff";
	if (missing) {
		fprintf(stderr, "toolgate %s: %s\n", a->who, missing);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_store_url(a->who, a->store) < 0)
		return EXIT_USAGE;
	if (a->as && (!a->as[0] || strlen(a->as) > 127)) {
		fprintf(stderr, "toolgate %s: --as takes 1 to 127 bytes\n", a->who);
		return EXIT_USAGE;
	}
	if (a->timeout && cli_count(a->who, "--timeout", a->timeout, 1, 3600, &s) < 0)
		return EXIT_USAGE;
	a->timeout_ms = (int)s * 1000;
	return -1;
}

int cmd_upstream(int argc, char **argv)
{
	static const char *const verbs[] = { "list", "show", "test", "pin", "diff" };
	struct catalog_copy copy = { "", "", "" };
	struct up_args a = { 0 };
	size_t v;
	int rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "accept") == 0)
		return cli_upstream_accept(argc - 1, argv + 1);
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (strcmp(argv[1], verbs[v]) == 0)
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0])) {
		fprintf(stderr, "toolgate upstream: unknown command '%s' (list, show, test, pin, "
			"diff or accept)\n", argv[1]);
		return EXIT_USAGE;
	}
	a.verb = verbs[v];
	a.copy = &copy;
	snprintf(a.who, sizeof(a.who), "upstream %s", a.verb);
	rc = upstream_parse(argc - 1, argv + 1, &a);
	if (rc >= 0)
		return rc;
	rc = v == 0   ? cmd_list(&a)
	     : v == 1 ? cmd_show(&a)
	     : v == 2 ? cmd_test(&a)
	     : v == 3 ? cmd_pin(&a)
		      : cmd_diff(&a);
	catalog_copy_remove(&copy);
	return rc;
}
