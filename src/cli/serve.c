/*
 * toolgate serve --catalog DIR [--stdio] [--http ADDR:PORT [--tokens FILE]]
 *                [--header-timeout SECS] [--workspace DIR] [--principal NAME]
 *                [--audit FILE] [--state-key FILE] [--policy FILE --state DIR]
 *                [--warm N] [--otlp URL] [--descriptions refuse|warn|off]
 *                [--anomalies hold|warn|off]
 *
 * The gateway: an MCP server over the catalogue's tools, every call
 * through the pipeline. --stdio (the default without --http) serves one
 * client on stdin and stdout; --http serves Streamable HTTP on a loopback
 * address until SIGINT or SIGTERM (with --stdio as well: until stdin
 * closes); with --tokens, every HTTP request needs a bearer token of the
 * file, and its principal is the caller; --header-timeout is how long an
 * HTTP connection may take to send a request's headers (docs/MCP.md,
 * "Connections"). Every call and decision goes into the audit log
 * (docs/AUDIT.md): --audit FILE, else the state directory's audit.log,
 * else stderr. --state-key names the
 * key that seals 2026-07-28 multi round-trip states (docs/MCP.md), for
 * several instances behind one address. --policy names the principals and
 * their scopes (docs/AUTH.md): HTTP callers then present tokens signed
 * with the key in --state, and every call needs a scope for its tool.
 *
 * --otlp URL (or OpenTelemetry's environment: OTEL_EXPORTER_OTLP_ENDPOINT,
 * ..._TRACES_ENDPOINT, ..._HEADERS, OTEL_SERVICE_NAME) exports a span for
 * each request and each tool execution to a collector (docs/TRACING.md).
 *
 * --anomalies decides, for every tool, what a call whose arguments the
 * anomaly rules find something in gets (docs/ANOMALIES.md): held for a
 * person's review (the default, and what the policy's "anomalies" says
 * per tool when the flag is not given), run and recorded, or not looked at.
 *
 * SIGHUP reloads the catalogue from DIR: clients are told what changed,
 * calls in flight finish on the catalogue they started with; a catalogue
 * that does not load is reported on stderr and the old one stays.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/mcp.h"
#include "toolgate/trace.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate serve --catalog DIR [--stdio] [--http ADDR:PORT [--tokens FILE]]\n"
		   "                      [--header-timeout SECS] [--workspace DIR] [--principal NAME]\n"
		   "                      [--audit FILE] [--state-key FILE] [--policy FILE --state DIR]\n"
		   "                      [--warm N]\n"
		   "                      [--otlp URL] [--descriptions refuse|warn|off]\n"
		   "                      [--anomalies hold|warn|off] [--max-runs N]\n"
		   "                      [--max-runs-per-principal N]\n"
		   "\n"
		   "  --header-timeout SECS\n"
		   "             an HTTP connection that has not sent a request's headers\n"
		   "             SECS after it opened, or after its last answer, is closed,\n"
		   "             however slowly they come (1 to 300; default 10)\n"
		   "  --warm N   keep N sandboxes ready for each command tool once it has\n"
		   "             been called (0 to 64; default 0: every run starts cold)\n"
		   "  --max-runs N, --max-runs-per-principal N\n"
		   "             command tools running at once (1 to 4096; default 32),\n"
		   "             and one principal's share of them (default a quarter); a\n"
		   "             call past its share waits up to 10 s, then is busy\n"
		   "  --otlp URL export traces (OTLP/HTTP JSON) to URL, as\n"
		   "             http://127.0.0.1:4318/v1/traces; default: the environment's\n"
		   "             OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT\n"
		   "             with /v1/traces; none: no traces\n"
		   "  --descriptions refuse|warn|off\n"
		   "             a tool whose description or schema speaks to the model\n"
		   "             (hidden Unicode, escapes, instructions: docs/SCANNING.md)\n"
		   "             refuses the catalogue (default), or is recorded and loaded\n"
		   "  --anomalies hold|warn|off\n"
		   "             a call whose arguments look like an attack (SQL or shell\n"
		   "             injection, private addresses, path traversal, bidi controls\n"
		   "             or terminal escapes, far from the tool's usual:\n"
		   "             docs/ANOMALIES.md) is held for approval, or\n"
		   "             run and recorded, for every tool; default: the policy's\n"
		   "             \"anomalies\", else hold\n");
}

/* The tracer --otlp URL (else the OpenTelemetry environment) names: 0 and
 * *out (NULL: no traces), or -1 when it is malformed (said on stderr). */
static int tracer_open(const char *url, struct tg_tracer **out)
{
	struct tg_tracer_options o = { 0 };
	const char *base = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), *off = getenv("OTEL_SDK_DISABLED");
	const char *exporter = getenv("OTEL_TRACES_EXPORTER");
	const char *traces = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	char joined[2100];
	struct tg_error err;

	*out = NULL;
	if (!url && ((off && strcasecmp(off, "true") == 0) ||
		     (exporter && strcmp(exporter, "none") == 0)))
		return 0;
	if (!url && traces && *traces)
		url = traces;
	if (!url && base && *base) {
		/* the base URL: signals at their paths under it */
		snprintf(joined, sizeof(joined), "%.2000s%sv1/traces", base,
			 base[strlen(base) - 1] == '/' ? "" : "/");
		url = joined;
	}
	if (!url || !*url)
		return 0;
	o.endpoint = url;
	o.service_name = getenv("OTEL_SERVICE_NAME");
	o.headers = getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
	if (!o.headers)
		o.headers = getenv("OTEL_EXPORTER_OTLP_HEADERS");
	if (tg_tracer_new(&o, out, &err) < 0) {
		fprintf(stderr, "toolgate serve: traces: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Each contract of cat loaded, on the record: 0, or -1 when the log
 * failed (it said why). */
static int record_loads(struct tg_gate *gate, const struct tg_catalog *cat)
{
	size_t i;

	for (i = 0; i < tg_catalog_count(cat); i++) {
		const struct tg_contract *k = tg_catalog_at(cat, i);
		char subject[256];

		snprintf(subject, sizeof(subject), "%s@%s", k->name, k->version_text);
		if (tg_gate_record_event(gate, "", subject, "loaded", NULL) < 0)
			return -1;
	}
	return 0;
}

/* SIGHUP: load the catalogue again and serve it. */
static void reload(struct tg_mcp *mcp, struct tg_gate *gate, const char *dir)
{
	struct tg_catalog *cat = NULL;
	struct tg_error err;
	size_t n;

	if (tg_catalog_load_dir(dir, NULL, &cat, &err) < 0) {
		fprintf(stderr, "toolgate serve: reload: %s; still serving the catalogue as it "
			"was\n", err.msg);
		tg_gate_record_event(gate, "", dir, "load_refused", err.msg);
		return;
	}
	n = tg_catalog_count(cat);
	if (tg_mcp_reload(mcp, cat, &err) < 0) {
		fprintf(stderr, "toolgate serve: reload: %s; still serving the catalogue as it "
			"was\n", err.msg);
		tg_gate_record_event(gate, "", dir, "load_refused", err.msg);
		tg_catalog_free(cat);
		return;
	}
	record_loads(gate, cat);
	fprintf(stderr, "toolgate serve: reloaded %s: %zu contracts\n", dir, n);
}

/* The thread that waits for SIGHUP while stdio is served. */
struct reloader {
	struct tg_mcp *mcp;
	struct tg_gate *gate;
	const char *dir;
	volatile int quit;
};

static void *reloader_main(void *arg)
{
	struct reloader *r = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	for (;;) {
		if (sigwait(&set, &sig) != 0 || r->quit)
			return NULL;
		reload(r->mcp, r->gate, r->dir);
	}
}

/* An option's count from min to max, into *out; -1 (said) when it is not. */
static int count_option(const char *name, const char *v, unsigned long min, unsigned long max,
			unsigned *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (*end || end == v || *v == '-' || n < min || n > max) {
		fprintf(stderr, "toolgate serve: %s takes %lu to %lu\n", name, min, max);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

/* What serve was asked. */
struct serve_args {
	const char *catalog, *workspace, *principal, *record, *http, *tokens, *state_key, *policy;
	const char *state, *otlp;
	int stdio;
	struct tg_gate_options gopts;
	struct tg_mcp_options mopts;
};

/* argv into *a: 0, 1 (--help said: exit 0), or 2 (a usage error, said). */
static int serve_parse(int argc, char **argv, struct serve_args *a)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--stdio") == 0) {
			a->stdio = 1;
			continue;
		}
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		if (strcmp(o, "--catalog") == 0)
			a->catalog = v;
		else if (strcmp(o, "--workspace") == 0)
			a->workspace = v;
		else if (strcmp(o, "--principal") == 0)
			a->principal = v;
		else if (strcmp(o, "--audit") == 0 || strcmp(o, "--record") == 0)
			a->record = v;
		else if (strcmp(o, "--http") == 0)
			a->http = v;
		else if (strcmp(o, "--tokens") == 0)
			a->tokens = v;
		else if (strcmp(o, "--state-key") == 0)
			a->state_key = v;
		else if (strcmp(o, "--policy") == 0)
			a->policy = v;
		else if (strcmp(o, "--state") == 0)
			a->state = v;
		else if (strcmp(o, "--otlp") == 0)
			a->otlp = v;
		else if (strcmp(o, "--descriptions") == 0) {
			if (strcmp(v, "refuse") == 0)
				a->gopts.descriptions = TG_DESCRIPTIONS_REFUSE;
			else if (strcmp(v, "warn") == 0)
				a->gopts.descriptions = TG_DESCRIPTIONS_WARN;
			else if (strcmp(v, "off") == 0)
				a->gopts.descriptions = TG_DESCRIPTIONS_OFF;
			else {
				fprintf(stderr, "toolgate serve: --descriptions takes refuse, warn "
					"or off\n");
				return 2;
			}
		}
		else if (strcmp(o, "--anomalies") == 0) {
			int action = tg_anomaly_action_parse(v);

			if (action < 0) {
				fprintf(stderr, "toolgate serve: --anomalies takes hold, warn or off\n");
				return 2;
			}
			a->gopts.anomalies = (enum tg_anomaly_action)action;
		} else if (strcmp(o, "--header-timeout") == 0) {
			if (count_option(o, v, 1, 300, &a->mopts.http_header_timeout) < 0)
				return 2;
		} else if (strcmp(o, "--warm") == 0) {
			if (count_option(o, v, 0, 64, &a->gopts.warm) < 0)
				return 2;
		} else if (strcmp(o, "--max-runs") == 0) {
			if (count_option(o, v, 1, 4096, &a->gopts.max_runs) < 0)
				return 2;
		} else if (strcmp(o, "--max-runs-per-principal") == 0) {
			if (count_option(o, v, 1, 4096, &a->gopts.max_runs_per_principal) < 0)
				return 2;
		} else {
			fprintf(stderr, "toolgate serve: unknown option '%s'\n", o);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!a->catalog) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* A rollback a crash interrupted is finished before anything else runs
 * (its compensation is idempotent by the call's id), and so is a plan a
 * dead gateway left half-way, forward or back. */
static void resume_interrupted(struct tg_gate *gate)
{
	size_t resumed, failed;
	struct tg_error err;

	if (tg_gate_resume_rollbacks(gate, &resumed, &failed, &err) < 0)
		fprintf(stderr, "toolgate serve: resuming rollbacks: %s\n", err.msg);
	else if (resumed)
		fprintf(stderr, "toolgate serve: resumed %zu interrupted rollback%s, %zu "
			"failed again (toolgate rollback list)\n", resumed,
			resumed == 1 ? "" : "s", failed);
	if (tg_gate_resume_sagas(gate, &resumed, &failed, &err) < 0)
		fprintf(stderr, "toolgate serve: resuming plans: %s\n", err.msg);
	else if (resumed)
		fprintf(stderr, "toolgate serve: resumed %zu interrupted plan%s, %zu "
			"neither done nor compensated\n", resumed, resumed == 1 ? "" : "s",
			failed);
}

/* Every client, run, warm sandbox and proxied connection holds
 * descriptors: as many as the hard limit allows. */
static void raise_nofile(void)
{
	struct rlimit nf;

	if (getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur < nf.rlim_max) {
		nf.rlim_cur = nf.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nf);
	}
}

int cmd_serve(int argc, char **argv)
{
	const char *catalog = NULL, *workspace = NULL, *principal = NULL, *record = NULL;
	const char *http = NULL, *tokens = NULL, *state_key = NULL, *policy = NULL;
	const char *state = NULL, *otlp = NULL, *own[5] = { 0 };
	struct tg_mcp_http *server = NULL;
	int stdio = 0;
	struct tg_gate_options gopts = { 0 };
	struct tg_mcp_options mopts = { 0 };
	struct tg_catalog *cat = NULL;
	struct tg_gate *gate = NULL;
	struct tg_mcp *mcp = NULL;
	struct serve_args args = { 0 };
	struct tg_error err;
	int rc;

	rc = serve_parse(argc, argv, &args);
	if (rc)
		return rc == 1 ? 0 : 2;
	rc = EXIT_TOOLGATE;
	catalog = args.catalog, workspace = args.workspace, principal = args.principal;
	record = args.record, http = args.http, tokens = args.tokens;
	state_key = args.state_key, policy = args.policy, state = args.state, otlp = args.otlp;
	stdio = args.stdio, gopts = args.gopts, mopts = args.mopts;
	/* a client that goes away mid-answer must not kill the gateway */
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	/* the audit log: --audit FILE, the state directory's, or stderr */
	gopts.audit = cli_audit_open(record ? record : state ? NULL : "-", state, "serve");
	if (!gopts.audit)
		return EXIT_TOOLGATE;
	gopts.workspace = workspace;
	gopts.tools_dir = catalog;
	gopts.state_dir = state;
	{
		/* the files of its own it reads or writes: no tool is given them */
		const char *files[] = { record, policy, tokens, state_key };
		size_t f, n = 0;

		for (f = 0; f < 4; f++)
			if (files[f])
				own[n++] = files[f];
		gopts.own_files = own;
	}
	/* stdio's principal: named, or "local"; HTTP alone has none */
	mopts.principal = principal ? principal : http && !stdio ? NULL : "local";
	mopts.http_tokens = tokens;
	mopts.state_key_file = state_key;
	mopts.policy_file = policy;
	mopts.state_dir = state;
	if (tokens && policy) {
		fprintf(stderr, "toolgate serve: --tokens or --policy, not both (a policy's tokens "
			"are signed, docs/AUTH.md)\n");
		return 2;
	}
	if (tokens && !http) {
		fprintf(stderr, "toolgate serve: --tokens is for --http\n");
		return 2;
	}
	if (tracer_open(otlp, &gopts.tracer) < 0)
		goto out;
	if (tg_catalog_load_dir(catalog, NULL, &cat, &err) < 0 ||
	    tg_gate_new(cat, &gopts, &gate, &err) < 0 || tg_mcp_new(gate, &mopts, &mcp, &err) < 0) {
		fprintf(stderr, "toolgate serve: %s\n", err.msg);
		tg_record_event(gopts.audit, "", catalog, "load_refused", err.msg);
		goto out;
	}
	if (record_loads(gate, cat) < 0) {
		fprintf(stderr, "toolgate serve: the audit log cannot be written: not serving\n");
		goto out;
	}
	resume_interrupted(gate);
	{
		/* blocked before the server's threads start, so that they
		 * inherit the mask and sigwait gets the signals: SIGHUP
		 * always, SIGINT and SIGTERM when HTTP alone is served */
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGHUP);
		if (http && !stdio) {
			sigaddset(&set, SIGINT);
			sigaddset(&set, SIGTERM);
		}
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	if (http) {
		char addr[64];
		const char *colon = strrchr(http, ':');
		unsigned long port = colon ? strtoul(colon + 1, NULL, 10) : 0;

		if (!colon || (size_t)(colon - http) >= sizeof(addr) || port > 65535) {
			fprintf(stderr, "toolgate serve: --http wants ADDR:PORT, such as 127.0.0.1:8080\n");
			rc = 2;
			goto out;
		}
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - http), http);
		if (tg_mcp_http_start(mcp, addr, (unsigned)port, &server, &err) < 0) {
			fprintf(stderr, "toolgate serve: %s\n", err.msg);
			goto out;
		}
		fprintf(stderr, "toolgate serve: MCP on http://%s:%u/mcp\n", addr,
			tg_mcp_http_port(server));
	}
	if (!http || stdio) {
		struct reloader r = { mcp, gate, catalog, 0 };
		pthread_t t;
		int started = pthread_create(&t, NULL, reloader_main, &r) == 0;
		int served = tg_mcp_serve_stdio(mcp, 0, 1, &err);

		if (started) {
			r.quit = 1;
			pthread_kill(t, SIGHUP);
			pthread_join(t, NULL);
		}
		if (served < 0) {
			fprintf(stderr, "toolgate serve: %s\n", err.msg);
			goto out;
		}
	} else {
		sigset_t set;
		int sig = 0;

		/* HTTP alone: serve until told to stop, reloading on SIGHUP */
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGHUP);
		while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
			reload(mcp, gate, catalog);
	}
	rc = 0;
out:
	tg_mcp_http_stop(server);
	tg_mcp_free(mcp);
	tg_gate_free(gate);
	tg_tracer_free(gopts.tracer); /* what waits is exported */
	tg_catalog_free(cat);
	tg_audit_close(gopts.audit);
	return rc;
}
