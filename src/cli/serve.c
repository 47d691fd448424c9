/*
 * toolgate serve --catalog DIR [--stdio] [--http ADDR:PORT [--tokens FILE]]
 *                [--tls-cert FILE --tls-key FILE] [--public-url URL]
 *                [--trust-proxy ADDRS] [--no-console] [--header-timeout SECS] [--workspace DIR]
 *                [--principal NAME]
 *                [--audit FILE] [--state-key FILE] [--policy FILE --state DIR]
 *                [--store URL]
 *                [--warm N] [--otlp URL] [--descriptions refuse|warn|off]
 *                [--anomalies hold|warn|off]
 *
 * The gateway: an MCP server over the catalogue's tools, every call
 * through the pipeline. --stdio (the default without --http) serves one
 * client on stdin and stdout; --http serves Streamable HTTP until SIGINT
 * or SIGTERM (with --stdio as well: until stdin closes), on a loopback
 * address, or on any other with authentication and either HTTPS
 * (--tls-cert, --tls-key) or a TLS-terminating proxy (--trust-proxy,
 * --public-url: docs/MCP.md, "Serving beyond loopback"); with --tokens, every HTTP request needs a bearer token of the
 * file, and its principal is the caller; --header-timeout is how long an
 * HTTP connection may take to send a request's headers (docs/MCP.md,
 * "Connections"); /healthz and /readyz answer a load balancer's probes,
 * without a token (docs/MCP.md, "Health"). Every call and decision goes
 * into the audit log
 * (docs/AUDIT.md): --audit FILE, else the state directory's audit.log,
 * else stderr. --state-key names the
 * key that seals 2026-07-28 multi round-trip states (docs/MCP.md), for
 * several instances behind one address. --policy names the principals and
 * their scopes (docs/AUTH.md): HTTP callers then present tokens signed
 * with the key in --state, or by one of the policy's identity providers
 * (whose tokens must name this server, http://ADDR:PORT/mcp from --http,
 * unless the provider sets its audience), and every call needs a scope
 * for its tool.
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
 * One gateway that serves HTTP a state directory: a second on the same
 * --state is refused at start (exit 3), before it writes anything there,
 * naming the pid that holds the directory's serve.lock (docs/CLI.md);
 * stdio gateways, a host's sessions, share it (docs/HOSTS.md).
 *
 * SIGHUP reloads the catalogue from DIR, and the skills of --skills:
 * clients are told what changed, calls in flight finish on the catalogue
 * (and the skills' files) they started with; a catalogue that does not
 * load is reported on stderr and the old one stays, with the skills as
 * they were. It reloads --tls-cert and --tls-key too, the same way, and
 * --redact-gitleaks's rules (serve_redact.c).
 *
 * Under a service manager ($NOTIFY_SOCKET: systemd's Type=notify,
 * dist/toolgate.service) it says READY=1 once it listens, RELOADING=1 and
 * READY=1 around each reload, STOPPING=1 at shutdown, and WATCHDOG=1
 * while the HTTP listener answers and the store reads (sd_notify.c,
 * docs/SYSTEMD.md).
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "cli/log.h"
#include "cli/sd_notify.h"
#include "cli/serve_catalog.h"
#include "util/file.h"
#include "toolgate/audit.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/mcp.h"
#include "toolgate/sandbox.h"
#include "toolgate/skill.h"
#include "toolgate/store.h"
#include "toolgate/trace.h"
#include "toolgate/version.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate serve --catalog DIR [--stdio] [--http ADDR:PORT [--tokens FILE]]\n"
		   "                      [--tls-cert FILE --tls-key FILE] [--public-url URL]\n"
		   "                      [--trust-proxy ADDRS] [--no-console]\n"
		   "                      [--header-timeout SECS] [--workspace DIR] [--principal NAME]\n"
		   "                      [--audit FILE] [--state-key FILE] [--policy FILE --state DIR]\n"
		   "                      [--store URL [--replica NAME]] [--warm N]\n"
		   "                      [--otlp URL] [--descriptions refuse|warn|off]\n"
		   "                      [--catalog-trust FILE]\n"
		   "                      [--skills DIR [--skills-trust FILE] [--skills-rules FILE]\n"
		   "                       [--skills-mode enforce|warn]] [--redact-gitleaks FILE]\n"
		   "                      [--anomalies hold|warn|off] [--max-runs N]\n"
		   "                      [--max-runs-per-principal N] [--log-format text|json]\n"
		   "                      [--log-level error|warning|info|debug]\n"
		   "\n"
		   "  --audit FILE (or --record FILE, its old name)\n"
		   "             the audit log; default DIR/audit.log with --state, else\n"
		   "             stderr; /dev/null: none (docs/AUDIT.md)\n"
		   "  --store URL\n"
		   "             keep the store (write calls' keys, tickets, revocations...)\n"
		   "             in PostgreSQL, postgres://HOST/DB, shared by every replica;\n"
		   "             default the state directory's SQLite (docs/STORE.md)\n"
		   "  --replica NAME\n"
		   "             this gateway's name among those of one store: in each\n"
		   "             audit record, and its log's head anchored in the store\n"
		   "             every 2 s (docs/AUDIT.md); default the host's name\n"
		   "  --http ADDR:PORT\n"
		   "             Streamable HTTP on ADDR (IPv4): a loopback address, or any\n"
		   "             other with --policy or --tokens, and HTTPS or a proxy;\n"
		   "             GET /healthz and /readyz answer probes, no token\n"
		   "  --tls-cert FILE, --tls-key FILE\n"
		   "             serve HTTPS (TLS 1.2 and 1.3) with this PEM certificate\n"
		   "             chain and private key; SIGHUP reads them again\n"
		   "  --public-url URL\n"
		   "             the URL clients use (https://gw.example.com/mcp): requests\n"
		   "             must name it; default https://ADDR:PORT/mcp\n"
		   "  --trust-proxy ADDRS\n"
		   "             the TLS-terminating reverse proxies (IPv4 addresses or\n"
		   "             networks, comma-separated) whose X-Forwarded-Host and\n"
		   "             X-Forwarded-Proto count; needs --public-url\n"
		   "  --no-console\n"
		   "             no approval console under /console/ (with --policy and\n"
		   "             --http it is served by default: docs/CONSOLE.md)\n"
		   "  --header-timeout SECS\n"
		   "             an HTTP connection that has not sent a request's headers\n"
		   "             SECS after it opened, or after its last answer, is closed,\n"
		   "             however slowly they come (1 to 300; default 10)\n"
		   "  --warm N   keep N sandboxes ready for each command tool once it has\n"
		   "             been called (0 to 64; default 2; 0: every run starts cold)\n"
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
		   "  --catalog-trust FILE\n"
		   "             serve the catalogue only when its folder is signed by a key\n"
		   "             of this trust store and unchanged since (toolgate catalog\n"
		   "             sign): at start and at each reload\n"
		   "  --skills DIR, --skills-trust FILE, --skills-rules FILE\n"
		   "             serve each skill of DIR (a folder with SKILL.md) as MCP\n"
		   "             resources and a prompt, its scripts as tools, once it is\n"
		   "             well-formed, signed by a key of the trust store, unchanged\n"
		   "             and scanned (the scanner's rules and the operator's:\n"
		   "             docs/SKILLS.md); DIR by default the catalogue's skills/\n"
		   "  --redact-gitleaks FILE\n"
		   "             redact with the rules of this gitleaks configuration too\n"
		   "             (.gitleaks.toml: docs/REDACTION.md), beside the built-in\n"
		   "             ones; SIGHUP reads it again\n"
		   "  --skills-mode enforce|warn\n"
		   "             a skill that fails a check is not served (enforce, the\n"
		   "             default), or is served with what was found recorded\n"
		   "  --anomalies hold|warn|off\n"
		   "             a call whose arguments look like an attack (SQL or shell\n"
		   "             injection, private addresses, path traversal, bidi controls\n"
		   "             or terminal escapes, far from the tool's usual:\n"
		   "             docs/ANOMALIES.md) is held for approval, or\n"
		   "             run and recorded, for every tool; default: the policy's\n"
		   "             \"anomalies\", else hold\n"
		   "  --log-format text|json\n"
		   "             serve's own lines on stderr as text (the default) or as\n"
		   "             JSON lines (time, level, who, msg: docs/CLI.md, \"Logs\")\n"
		   "  --log-level error|warning|info|debug\n"
		   "             the least of them written (default info)\n");
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
		cli_log(CLI_WARNING, "serve", "traces: %s", err.msg);
		return -1;
	}
	return 0;
}

/* The skills served from now on pinned (docs/SKILLS.md, "Pinned"): only
 * here, once serve serves them, so a check (doctor) or a start that
 * failed before pins nothing. 0, or -1 (said): a pin not written stops
 * serve. */
static int pin_skills(struct tg_gate *gate)
{
	struct tg_error err;

	if (tg_gate_skills_pin(gate, &err) == 0)
		return 0;
	cli_log(CLI_ERROR, "serve", "skills: %s", err.msg);
	return -1;
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

/* SIGHUP: load the catalogue (and the skills, tg_gate_reload) again and
 * serve them: its tool count, or -1 when the old ones stay. With trust (--catalog-trust), what is served
 * and mounted is copy's, the bytes verified. */
static long reload(struct tg_mcp *mcp, struct tg_gate *gate, const char *dir, const char *trust,
		   struct catalog_copy *copy)
{
	struct tg_catalog *cat = NULL;
	struct tg_error err, uerr;
	char reason[32];
	size_t n;

	if (catalog_load(dir, trust, copy, &cat, reason, sizeof(reason), &err) < 0 && reason[0]) {
		cli_log(CLI_ERROR, "serve", "reload: %s; still serving the catalogue as it "
			"was", err.msg);
		tg_gate_record_blocked(gate, "catalog", reason, dir, err.msg);
		return -1;
	}
	/* the copy first: the reload checks the new contracts' mounts in it */
	if (cat && trust && catalog_commit(copy, &err) < 0) {
		tg_catalog_free(cat);
		cat = NULL;
	}
	if (!cat) {
		cli_log(CLI_ERROR, "serve", "reload: %s; still serving the catalogue as it "
			"was", err.msg);
		tg_gate_record_event(gate, "", dir, "load_refused", err.msg);
		return -1;
	}
	n = tg_catalog_count(cat);
	if (tg_mcp_reload(mcp, cat, &err) < 0) {
		cli_log(CLI_ERROR, "serve", "reload: %s; still serving the catalogue as it "
			"was", err.msg);
		tg_gate_record_event(gate, "", dir, "load_refused", err.msg);
		if (trust && catalog_commit(copy, &uerr) < 0) /* the old copy back */
			cli_log(CLI_ERROR, "serve", "reload: %s", uerr.msg);
		tg_catalog_free(cat);
		return -1;
	}
	record_loads(gate, cat);
	if (tg_gate_skill_count(gate))
		cli_log(CLI_INFO, "serve", "reloaded %s: %zu contracts, %zu skills", dir, n,
			tg_gate_skill_count(gate));
	else
		cli_log(CLI_INFO, "serve", "reloaded %s: %zu contracts", dir, n);
	return (long)n;
}

/* The certificates again, on SIGHUP (docs/MCP.md, "Serving beyond
 * loopback"); a pair that does not load leaves the old one served. */
static void reload_tls(struct tg_mcp_http *server, struct tg_gate *gate, const char *cert)
{
	struct tg_error err;

	if (!server || !cert)
		return;
	if (tg_mcp_http_reload_tls(server, &err) < 0) {
		cli_log(CLI_ERROR, "serve", "reload: %s; still serving the certificate as it "
			"was", err.msg);
		tg_gate_record_event(gate, "", cert, "load_refused", err.msg);
		return;
	}
	cli_log(CLI_INFO, "serve", "reloaded %s", cert);
}

/* What is served, as the service manager's STATUS= says it. */
struct served {
	size_t tools;
	char url[300]; /* the MCP URL, or "" for stdio alone */
};

static void tell_ready(const struct served *s, const char *note)
{
	char status[500];

	snprintf(status, sizeof(status), "serving %zu tools%s%s%s", s->tools,
		 s->url[0] ? " on " : " on stdio", s->url, note ? note : "");
	sdn_ready(status);
}

/* The thread that waits for SIGHUP while stdio is served. */
struct reloader {
	struct tg_mcp *mcp;
	struct tg_gate *gate;
	const char *dir;
	const char *trust;          /* --catalog-trust, or NULL */
	struct catalog_copy *copy;  /* with trust: the copies served */
	struct tg_mcp_http *server; /* with --http as well, or NULL */
	const char *cert;           /* its --tls-cert, or NULL */
	const char *gitleaks;       /* --redact-gitleaks, or NULL */
	struct served *served;
	volatile int quit;
};

/* A SIGHUP's reload, told to the service manager before and after. */
static void reload_all(struct reloader *r)
{
	long n;

	sdn_reloading();
	n = reload(r->mcp, r->gate, r->dir, r->trust, r->copy);
	reload_tls(r->server, r->gate, r->cert);
	serve_redact_reload(r->gitleaks, r->gate);
	if (n >= 0)
		r->served->tools = (size_t)n;
	tell_ready(r->served, n < 0 ? " (reload refused: the catalogue as it was)" : NULL);
}

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
		reload_all(r);
	}
}

/* What serve was asked. */
struct serve_args {
	const char *catalog, *workspace, *principal, *record, *http, *tokens, *state_key, *policy;
	const char *state, *otlp, *log_format, *log_level, *catalog_trust, *redact_gitleaks;
	const char *store; /* --store URL: the store elsewhere than the state directory */
	const char *replica; /* --replica NAME: this gateway among those of one store */
	char replica_shown[64]; /* the name its records carry (--replica's, or the host's) */
	char addr[64];  /* --http's */
	unsigned port;
	int stdio;
	struct tg_gate_options gopts;
	struct tg_mcp_options mopts;
	struct tg_mcp_http_options hopts;
};

enum {
	OPT_STDIO = 256, OPT_CATALOG, OPT_WORKSPACE, OPT_PRINCIPAL, OPT_AUDIT, OPT_HTTP, OPT_TOKENS,
	OPT_STATE_KEY, OPT_POLICY, OPT_STATE, OPT_OTLP, OPT_DESCRIPTIONS, OPT_ANOMALIES,
	OPT_HEADER_TIMEOUT, OPT_WARM, OPT_MAX_RUNS, OPT_MAX_RUNS_PER_PRINCIPAL, OPT_TLS_CERT,
	OPT_TLS_KEY, OPT_PUBLIC_URL, OPT_TRUST_PROXY, OPT_NO_CONSOLE, OPT_LOG_FORMAT, OPT_LOG_LEVEL,
	OPT_SKILLS, OPT_SKILLS_TRUST, OPT_SKILLS_RULES, OPT_SKILLS_MODE, OPT_CATALOG_TRUST,
	OPT_REDACT_GITLEAKS, OPT_STORE, OPT_REPLICA,
};

static const struct option options[] = {
	{ "stdio", no_argument, NULL, OPT_STDIO },
	{ "catalog", required_argument, NULL, OPT_CATALOG },
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "principal", required_argument, NULL, OPT_PRINCIPAL },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "record", required_argument, NULL, OPT_AUDIT },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "tokens", required_argument, NULL, OPT_TOKENS },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "public-url", required_argument, NULL, OPT_PUBLIC_URL },
	{ "trust-proxy", required_argument, NULL, OPT_TRUST_PROXY },
	{ "no-console", no_argument, NULL, OPT_NO_CONSOLE },
	{ "state-key", required_argument, NULL, OPT_STATE_KEY },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "replica", required_argument, NULL, OPT_REPLICA },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "descriptions", required_argument, NULL, OPT_DESCRIPTIONS },
	{ "anomalies", required_argument, NULL, OPT_ANOMALIES },
	{ "header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT },
	{ "warm", required_argument, NULL, OPT_WARM },
	{ "max-runs", required_argument, NULL, OPT_MAX_RUNS },
	{ "max-runs-per-principal", required_argument, NULL, OPT_MAX_RUNS_PER_PRINCIPAL },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "catalog-trust", required_argument, NULL, OPT_CATALOG_TRUST },
	{ "skills", required_argument, NULL, OPT_SKILLS },
	{ "skills-trust", required_argument, NULL, OPT_SKILLS_TRUST },
	{ "skills-rules", required_argument, NULL, OPT_SKILLS_RULES },
	{ "skills-mode", required_argument, NULL, OPT_SKILLS_MODE },
	{ "redact-gitleaks", required_argument, NULL, OPT_REDACT_GITLEAKS },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* A count option's value, from min to max, into *out: 0, or -1 (said). */
static int count_option(int opt, const char *v, unsigned long min, unsigned long max,
			unsigned *out)
{
	const struct option *o = options;
	char name[40];
	unsigned long n;

	while (o->name && o->val != opt)
		o++;
	snprintf(name, sizeof(name), "--%s", o->name ? o->name : "?");
	if (cli_count("serve", name, v, min, max, &n) < 0)
		return -1;
	*out = (unsigned)n;
	return 0;
}

/* --stdio, or an option whose value is a choice or a count, into *a: 0,
 * or -1 (said). */
static int serve_option(int opt, const char *v, void *ctx)
{
	struct serve_args *a = ctx;
	int action;

	switch (opt) {
	case OPT_STDIO:
		a->stdio = 1;
		return 0;
	case OPT_NO_CONSOLE:
		a->hopts.no_console = 1;
		return 0;
	case OPT_DESCRIPTIONS:
		if (strcmp(v, "refuse") == 0)
			a->gopts.descriptions = TG_DESCRIPTIONS_REFUSE;
		else if (strcmp(v, "warn") == 0)
			a->gopts.descriptions = TG_DESCRIPTIONS_WARN;
		else if (strcmp(v, "off") == 0)
			a->gopts.descriptions = TG_DESCRIPTIONS_OFF;
		else
			break;
		return 0;
	case OPT_SKILLS_MODE:
		if (strcmp(v, "enforce") != 0 && strcmp(v, "warn") != 0) {
			fprintf(stderr, "toolgate serve: --skills-mode '%s': takes enforce or warn\n",
				v);
			return -1;
		}
		a->gopts.skills_mode = v[0] == 'w' ? TG_SKILLS_WARN : TG_SKILLS_ENFORCE;
		return 0;
	case OPT_ANOMALIES:
		action = tg_anomaly_action_parse(v);
		if (action < 0)
			break;
		a->gopts.anomalies = (enum tg_anomaly_action)action;
		return 0;
	case OPT_HEADER_TIMEOUT:
		return count_option(opt, v, 1, 300, &a->mopts.http_header_timeout);
	case OPT_WARM:
		return count_option(opt, v, 0, 64, &a->gopts.warm);
	case OPT_MAX_RUNS:
		return count_option(opt, v, 1, 4096, &a->gopts.max_runs);
	case OPT_MAX_RUNS_PER_PRINCIPAL:
		return count_option(opt, v, 1, 4096, &a->gopts.max_runs_per_principal);
	}
	fprintf(stderr, "toolgate serve: %s '%s': takes %s\n",
		opt == OPT_DESCRIPTIONS ? "--descriptions" : "--anomalies", v,
		opt == OPT_DESCRIPTIONS ? "refuse, warn or off" : "hold, warn or off");
	return -1;
}

/* --stdio on the command line with no --http there: a host's session
 * (docs/HOSTS.md), which shares the state directory with the gateway the
 * configuration file's [serve] describes. The file's listener, and what
 * is for a listener alone, are that gateway's, not this one's (kept, it
 * would serve HTTP too and be refused that gateway's serve.lock). A file
 * that says stdio = yes itself asks for both. */
static void stdio_alone(struct serve_args *a)
{
	const struct cli_config_value *v = cli_config_for("serve", "stdio");
	const char **http_only[] = { &a->tokens, &a->hopts.tls_cert, &a->hopts.tls_key,
				     &a->hopts.public_url, &a->hopts.trust_proxy };
	size_t i;

	if (!a->stdio || (v && cli_config_yes(v->value) == 1) || !cli_config_gave(a->http))
		return;
	a->http = NULL;
	for (i = 0; i < sizeof(http_only) / sizeof(http_only[0]); i++)
		if (cli_config_gave(*http_only[i]))
			*http_only[i] = NULL;
}

/* argv into *a: -1, or the exit status (--help: 0; a usage error, said: 2). */
static int serve_parse(int argc, char **argv, struct serve_args *a)
{
	const struct cli_bind binds[] = {
		{ OPT_CATALOG, &a->catalog }, { OPT_WORKSPACE, &a->workspace },
		{ OPT_PRINCIPAL, &a->principal }, { OPT_AUDIT, &a->record }, { OPT_HTTP, &a->http },
		{ OPT_TOKENS, &a->tokens }, { OPT_STATE_KEY, &a->state_key },
		{ OPT_POLICY, &a->policy }, { OPT_STATE, &a->state }, { OPT_STORE, &a->store },
		{ OPT_REPLICA, &a->replica },
		{ OPT_OTLP, &a->otlp },
		{ OPT_TLS_CERT, &a->hopts.tls_cert }, { OPT_TLS_KEY, &a->hopts.tls_key },
		{ OPT_PUBLIC_URL, &a->hopts.public_url }, { OPT_TRUST_PROXY, &a->hopts.trust_proxy },
		{ OPT_LOG_FORMAT, &a->log_format }, { OPT_LOG_LEVEL, &a->log_level },
		{ OPT_SKILLS, &a->gopts.skills_dir }, { OPT_SKILLS_TRUST, &a->gopts.skills_trust },
		{ OPT_SKILLS_RULES, &a->gopts.skills_rules },
		{ OPT_CATALOG_TRUST, &a->catalog_trust },
		{ OPT_REDACT_GITLEAKS, &a->redact_gitleaks }, { 0, NULL },
	};
	int rc;

	/* every command tool keeps two sandboxes ready once called: one for
	 * the next call while the other is made (docs/SANDBOX.md) */
	a->gopts.warm = 2;
	rc = cli_parse("serve", argc, argv, ":h", options, usage, binds, serve_option, a);
	if (rc >= 0)
		return rc;
	if (cli_log_setup("serve", a->log_format, a->log_level) < 0)
		return EXIT_USAGE;
	if (optind < argc) {
		fprintf(stderr, "toolgate serve: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	stdio_alone(a);
	if (!a->catalog) {
		fprintf(stderr, "toolgate serve: --catalog DIR is needed\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (a->tokens && a->policy) {
		fprintf(stderr, "toolgate serve: --tokens or --policy, not both (a policy's tokens "
			"are signed, docs/AUTH.md)\n");
		return EXIT_USAGE;
	}
	if (!a->http && (a->tokens || a->hopts.tls_cert || a->hopts.tls_key ||
			 a->hopts.public_url || a->hopts.trust_proxy)) {
		fprintf(stderr, "toolgate serve: --%s is for --http\n", a->tokens ? "tokens" :
			a->hopts.tls_cert ? "tls-cert" : a->hopts.tls_key ? "tls-key" :
			a->hopts.public_url ? "public-url" : "trust-proxy");
		return EXIT_USAGE;
	}
	if (a->http) {
		const char *colon = strrchr(a->http, ':');
		char *end = NULL;
		unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;

		if (!colon || colon == a->http || (size_t)(colon - a->http) >= sizeof(a->addr) ||
		    end == colon + 1 || *end || colon[1] == '-' || port > 65535) {
			fprintf(stderr, "toolgate serve: --http '%s': wants ADDR:PORT, such as "
				"127.0.0.1:8080\n", a->http);
			return EXIT_USAGE;
		}
		snprintf(a->addr, sizeof(a->addr), "%.*s", (int)(colon - a->http), a->http);
		a->port = (unsigned)port;
	}
	return -1;
}

/* A rollback a crash interrupted is finished before anything else runs
 * (its compensation is idempotent by the call's id), and so is a plan a
 * dead gateway left half-way, forward or back. */
static void resume_interrupted(struct tg_gate *gate)
{
	size_t resumed, failed;
	struct tg_error err;

	if (tg_gate_resume_rollbacks(gate, &resumed, &failed, &err) < 0)
		cli_log(CLI_ERROR, "serve", "resuming rollbacks: %s", err.msg);
	else if (resumed)
		cli_log(CLI_INFO, "serve", "resumed %zu interrupted rollback%s, %zu "
			"failed again (toolgate rollback list)", resumed,
			resumed == 1 ? "" : "s", failed);
	if (tg_gate_resume_sagas(gate, &resumed, &failed, &err) < 0)
		cli_log(CLI_ERROR, "serve", "resuming plans: %s", err.msg);
	else if (resumed)
		cli_log(CLI_INFO, "serve", "resumed %zu interrupted plan%s, %zu "
			"neither done nor compensated", resumed, resumed == 1 ? "" : "s",
			failed);
}

/* The replica the audit log's records name (docs/AUDIT.md, "Replicas and
 * anchors"): --replica NAME; with a store in PostgreSQL and no name, the
 * host's name (a pod's, under Kubernetes). 0, or -1 having said why. */
static int replica_name(struct serve_args *a, struct tg_audit *audit)
{
	struct tg_error err;
	char host[256];

	if (!a->replica && !tg_store_remote(a->store))
		return 0;
	if (!a->replica && gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "%s", "");
	host[sizeof(host) - 1] = '\0';
	if (tg_audit_set_replica(audit, a->replica ? a->replica : host, &err) == 0) {
		snprintf(a->replica_shown, sizeof(a->replica_shown), "%.63s",
			 a->replica ? a->replica : host);
		return 0;
	}
	cli_log(CLI_ERROR, "serve", "--replica: %s%s", err.msg,
		a->replica ? "" : " (the host's name, the default, is not one: give --replica)");
	return -1;
}

/* What --policy brings, which the gate is given: the policy, the key in
 * the state directory that checks its tokens, and the store that revokes
 * them and holds write calls. The stdio principal named must be the
 * policy's. Freed by compose_free. */
struct composed {
	struct tg_policy *policy;
	struct tg_signer *signer;
	struct tg_store *store;
};

static int compose(const char *policy, const char *state, const char *store,
		   const char *principal, struct composed *c, struct tg_gate_options *gopts,
		   struct tg_error *err)
{
	if (!policy)
		return 0;
	if (!state)
		return tg_error_set(err, TG_ERR_INVALID, "a policy needs the state directory of "
				    "its signing key (--state DIR)");
	if (tg_policy_load(policy, &c->policy, err) < 0 ||
	    tg_signer_open(state, 1, &c->signer, err) < 0 ||
	    tg_store_open(store ? store : state, &c->store, err) < 0)
		return -1;
	/* one of the replicas the policy's rates are divided among */
	if (tg_store_remote(store) && tg_store_replica_join(c->store, err) < 0)
		return -1;
	if (principal && !tg_policy_knows(c->policy, principal))
		return tg_error_set(err, TG_ERR_INVALID, "principal %s is not in the policy %s",
				    principal, policy);
	gopts->policy = c->policy;
	gopts->signer = c->signer;
	gopts->store = c->store;
	return 0;
}

static void compose_free(struct composed *c)
{
	tg_store_close(c->store);
	tg_signer_close(c->signer);
	tg_policy_free(c->policy);
}

/* One gateway a state directory (docs/CLI.md, "One gateway a state
 * directory"): a gateway that serves HTTP takes an exclusive flock on
 * STATE/serve.lock, held for the process's life (the kernel drops it at
 * its end, kill -9 included, so a file a killed gateway left blocks
 * nothing), before anything is written there or listened on. Stdio
 * gateways, which hosts start one a session or a window, take none: they
 * share the directory with each other and with it (the store's webhooks
 * are delivered by one of them, src/gate/notify.c). Nor do the other
 * commands (approvals, token, rollback, audit). 0 and OUT *fd, and *made
 * when the directory was made here; else -1, said on stderr. */
static int serve_lock(const char *state, int http, int *fd, int *made)
{
	char path[4096];
	long holder;

	*fd = -1;
	*made = 0;
	if (!state)
		return 0;
	/* a gateway's first start makes its state directory (the store
	 * checks its owner and mode when it opens) */
	if (mkdir(state, 0700) == 0)
		*made = 1;
	else if (errno != EEXIST) {
		cli_log(CLI_ERROR, "serve", "--state %s: %s", state, strerror(errno));
		return -1;
	}
	if (!http)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/serve.lock", state) >= sizeof(path)) {
		cli_log(CLI_ERROR, "serve", "--state %s: too long a path", state);
		return -1;
	}
	if (file_lock_pid(path, fd, &holder) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		cli_log(CLI_ERROR, "serve", "--state %s is in use by another gateway that "
			"serves HTTP (pid %ld holds %s): one a state directory; give this one its "
			"own --state", state, holder, path);
	else
		cli_log(CLI_ERROR, "serve", "--state %s: %s: %s", state, path,
			strerror(errno));
	return -1;
}

/* The lock let go (fd from serve_lock); a start that failed in a state
 * directory it made leaves none behind (but what was written there). */
static void serve_unlock(const char *state, int fd, int made, int failed)
{
	char path[4096];

	if (failed && made) {
		if (fd >= 0 && (size_t)snprintf(path, sizeof(path), "%s/serve.lock", state) <
				       sizeof(path))
			unlink(path);
		rmdir(state); /* only when nothing else is there */
	}
	if (fd >= 0)
		close(fd);
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

/* What the watchdog checks before each ping (docs/SYSTEMD.md, "The
 * watchdog"): the HTTP listener answers a request on a connection of its
 * own, and the store answers a read. Both are cheap, and both stop when
 * what serves calls is stuck: the listener's thread, or the store's lock
 * held by a write that never ends. */
struct health {
	char addr[64];               /* --http's ADDR, "" without */
	unsigned port;
	struct tg_store *store;      /* with --policy and a state directory's store, or NULL:
				      * a PostgreSQL store away is /readyz's to say, not a
				      * hang for the watchdog to end (every wait on it is
				      * bounded), and a restart could not reach it either */
};

static int wait_fd(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int rc;

	do
		rc = poll(&p, 1, ms);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/* Any answer counts, a closed connection too: a TLS listener closes one
 * whose first bytes are plain HTTP, which shows its thread alive as well.
 * Only silence (the kernel accepted, nothing read) or a refusal fails. */
static int http_answers(const struct health *h, int ms, char *why, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)h->port) };
	socklen_t sl = sizeof(int);
	char req[200], c;
	int fd, soerr = 0, rc = -1;

	if (inet_pton(AF_INET, h->addr, &sa.sin_addr) != 1 || sa.sin_addr.s_addr == INADDR_ANY)
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "HTTP listener: socket: %s", strerror(errno));
		return -1;
	}
	snprintf(req, sizeof(req), "GET /healthz HTTP/1.1\r\nHost: %s:%u\r\n"
		 "Connection: close\r\n\r\n", h->addr, h->port);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		soerr = errno;
	else if (wait_fd(fd, POLLOUT, ms / 2) <= 0)
		soerr = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		soerr = EIO; /* not on a socket of its own making */
	if (soerr) {
		snprintf(why, len, "HTTP listener %s:%u: no connection in %d ms (%s)", h->addr,
			 h->port, ms / 2, strerror(soerr));
	} else if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 && errno != ECONNRESET) {
		snprintf(why, len, "HTTP listener %s:%u: send: %s", h->addr, h->port,
			 strerror(errno));
	} else if (wait_fd(fd, POLLIN, ms - ms / 2) <= 0) {
		snprintf(why, len, "HTTP listener %s:%u: no answer in %d ms", h->addr, h->port,
			 ms - ms / 2);
	} else if (recv(fd, &c, 1, 0) < 0 && errno != ECONNRESET) {
		snprintf(why, len, "HTTP listener %s:%u: recv: %s", h->addr, h->port,
			 strerror(errno));
	} else {
		rc = 0;
	}
	close(fd);
	return rc;
}

static int healthy(void *ctx, unsigned budget_ms, char *why, size_t len)
{
	const struct health *h = ctx;
	struct tg_error err;

	if (h->addr[0] && http_answers(h, (int)budget_ms, why, len) < 0)
		return -1;
	/* a point read behind the store's lock (any jti will do) */
	if (h->store && tg_store_revoked(h->store, "watchdog", TG_STORE_NOW, &err) < 0) {
		snprintf(why, len, "store: %s", err.msg);
		return -1;
	}
	return 0;
}

/* What runs, said once when an HTTP gateway starts (docs/CLI.md,
 * "Logs"): the version, the catalogue and its tools by authority, who
 * may call, the audit log, the state directory, warm pools. */
static void say_what_runs(const struct serve_args *a, const struct tg_catalog *cat)
{
	size_t i, reads = 0, writes = 0, upstream = 0, n = tg_catalog_count(cat);

	for (i = 0; i < n; i++) {
		const struct tg_contract *k = tg_catalog_at(cat, i);

		reads += k->authority == TG_AUTHORITY_READ;
		writes += k->authority == TG_AUTHORITY_WRITE;
		upstream += k->executor == TG_EXEC_UPSTREAM;
	}
	cli_log(CLI_INFO, "serve", "toolgate %s: %s: %zu tools (%zu read, %zu write; %zu of "
		"upstream servers); callers: %s%s; audit log: %s; state: %s%s%s%s%s; warm: %u",
		TOOLGATE_VERSION, a->catalog, n, reads, writes, upstream,
		a->policy ? "the policy " : a->tokens ? "the tokens of " : "anyone on loopback",
		a->policy ? a->policy : a->tokens ? a->tokens : "",
		a->record ? a->record : a->state ? "STATE/audit.log" : "stderr",
		a->state ? a->state : "none", a->store ? "; store: " : "",
		a->store ? a->store : "", a->store ? ", replica " : "",
		a->store ? a->replica_shown : "", a->gopts.warm);
}

/* --http: the listener started and said, what it serves and where the
 * watchdog probes it noted: 0, or -1 (said). */
static int http_listen(struct tg_mcp *mcp, struct serve_args *a, struct tg_mcp_http **server,
		       struct served *served, struct health *health)
{
	struct tg_error err;
	char url[300];

	if (tg_mcp_http_start(mcp, a->addr, a->port, &a->hopts, server, &err) < 0) {
		cli_log(CLI_ERROR, "serve", "%s", err.msg);
		return -1;
	}
	tg_mcp_http_url(*server, url, sizeof(url));
	if (a->hopts.public_url)
		cli_log(CLI_INFO, "serve", "MCP on %s (listening on %s:%u)", url, a->addr,
			tg_mcp_http_port(*server));
	else
		cli_log(CLI_INFO, "serve", "MCP on %s", url);
	snprintf(served->url, sizeof(served->url), "%s", url);
	if (tg_mcp_http_console_url(*server, url, sizeof(url)))
		cli_log(CLI_INFO, "serve", "approval console on %s", url);
	snprintf(health->addr, sizeof(health->addr), "%s", a->addr);
	health->port = tg_mcp_http_port(*server);
	return 0;
}

/* Serve until stdin closes (stdio) or a SIGINT or SIGTERM (HTTP alone),
 * reloading on SIGHUP: 0, or -1 when stdio failed (said). */
static int serve_until_stopped(struct tg_mcp *mcp, struct tg_gate *gate,
			       const struct serve_args *a, struct tg_mcp_http *server,
			       struct served *served, struct catalog_copy *copy)
{
	struct reloader r = { mcp, gate, a->catalog, a->catalog_trust, copy, server,
			      a->hopts.tls_cert, a->redact_gitleaks, served, 0 };
	struct tg_error err;
	sigset_t set;
	int sig = 0;

	if (!a->http || a->stdio) {
		pthread_t t;
		int started = pthread_create(&t, NULL, reloader_main, &r) == 0;
		int done = tg_mcp_serve_stdio(mcp, 0, 1, &err);

		sdn_stopping();
		if (started) {
			r.quit = 1;
			pthread_kill(t, SIGHUP);
			pthread_join(t, NULL);
		}
		if (done < 0) {
			cli_log(CLI_ERROR, "serve", "%s", err.msg);
			return -1;
		}
		return 0;
	}
	/* HTTP alone: serve until told to stop, reloading on SIGHUP */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
		reload_all(&r);
	cli_log(CLI_INFO, "serve", "stopping (%s)", sig == SIGINT ? "SIGINT" : "SIGTERM");
	sdn_stopping();
	return 0;
}

/* A problem of the deployment (tg_gate_preflight), said in the log. */
static void say_problem(void *ctx, const char *where, const char *what, const char *fix)
{
	(void)ctx;
	cli_log(CLI_ERROR, "serve", "%s: %s (fix: %s)", where, what, fix);
}

/* What serve found wrong before it listens: nothing (0), or the number of
 * problems said (serve_main's check, or the log). */
static unsigned preflight(struct tg_gate *gate, const struct serve_args *a,
			  const struct serve_check *check)
{
	unsigned n = tg_gate_preflight(gate, a->policy, check ? check->fn : say_problem,
				       check ? check->ctx : NULL);

	if (n && !check)
		cli_log(CLI_ERROR, "serve", "not serving: %u problem%s in the deployment, said "
			"above (docs/CLI.md, \"Checked at start\")", n, n == 1 ? "" : "s");
	return n;
}

/* What stops serve before its deployment could be looked at, given to a
 * check as its one problem. */
static void check_refused(struct serve_check *check, const char *where, const char *what,
			  const char *fix)
{
	check->fn(check->ctx, where, what, fix);
	check->problems = 1;
}

/* The state directory a check looks at: the configured one when it
 * exists (opened as serve opens it: run doctor as the service's user);
 * when it does not, serve would make it, and the check makes nothing
 * there: it uses a throwaway directory of its own, in scratch (removed
 * after). 0, or -1 when serve could not make it (a problem said). */
static int check_state(struct serve_args *a, struct serve_check *check, char *scratch,
		       size_t len)
{
	char parent[4096], *slash;
	struct stat st;

	if (!a->state || lstat(a->state, &st) == 0 || errno != ENOENT)
		return 0;
	snprintf(parent, sizeof(parent), "%s", a->state);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (stat(parent, &st) < 0) {
			char what[4200];

			snprintf(what, sizeof(what), "%s: its parent directory does not exist, so "
				 "serve cannot make it", a->state);
			check_refused(check, "serve: state", what, "make the parent, or fix the path");
			return -1;
		}
	}
	snprintf(scratch, len, "/tmp/toolgate-doctor-XXXXXX");
	if (!mkdtemp(scratch)) {
		scratch[0] = '\0';
		return 0; /* looked at as it is, then */
	}
	a->state = scratch;
	return 0;
}

/* serve_main's start: the command line and the configuration, the state
 * directory made and locked, the gateway moved into its own cgroup: -1
 * to go on, else the exit status. */
static int serve_begin(int argc, char **argv, struct serve_args *args, struct serve_check *check,
		       char *scratch, size_t len, int *lock_fd, int *made)
{
	char leaf[4096];
	struct tg_error err;
	int rc = serve_parse(argc, argv, args);

	if (rc >= 0 && check) {
		check_refused(check, "serve", "serve refuses the options the configuration file "
			      "gives it (said above)", "fix the configuration file (docs/CONFIG.md)");
		return EXIT_DATA;
	}
	if (rc >= 0)
		return rc;
	/* a directory there would quietly be a SQLite store beside the state */
	if (cli_store_url("serve", args->store) < 0) {
		if (check)
			check_refused(check, "serve", "store is not a postgres:// URL",
				      "give the PostgreSQL URL, or no store (the state directory's)");
		return check ? EXIT_DATA : EXIT_USAGE;
	}
	if (!check)
		sdn_open("serve");
	if (check && check_state(args, check, scratch, len) < 0)
		return EXIT_DATA;
	/* before anything is written in it: a second gateway writes nothing */
	if (serve_lock(args->state, args->http != NULL && !check, lock_fd, made) < 0) {
		if (check) {
			check_refused(check, "serve", "the state directory cannot be made (said above)",
				      "fix the configuration's state");
		}
		return EXIT_DATA;
	}
	/* before any thread: a delegated cgroup v2 hands its controllers
	 * down only once the gateway has left it (docs/SYSTEMD.md); doctor
	 * changes no cgroup (it would leave the unit's cgroup unable to take
	 * the gateway). Without it the runs say why they cannot. */
	if (check)
		return -1;
	if (tg_sandbox_cgroup_leaf(leaf, sizeof(leaf), &err) < 0)
		cli_log(CLI_WARNING, "serve", "%s: the runs may not get their cgroups", err.msg);
	else if (leaf[0])
		cli_log(CLI_INFO, "serve", "moved into the cgroup %s: its runs' cgroups go beside it",
			leaf);
	return -1;
}

/* serve, or with check its deployment looked at and nothing served
 * (toolgate doctor): the gateway made as serve makes it, without the
 * lock, the audit log or the tracer, and every problem given to check. */
static int serve_main(int argc, char **argv, struct serve_check *check)
{
	const char *catalog = NULL, *workspace = NULL, *principal = NULL, *record = NULL;
	const char *http = NULL, *tokens = NULL, *state_key = NULL, *policy = NULL;
	const char *state = NULL, *otlp = NULL, *own[6] = { 0 };
	char resource[600], scratch[64] = "", why[32];
	struct catalog_copy copy = { "", "", "" };
	char own_skills[PATH_MAX + 16];
	struct tg_mcp_http *server = NULL;
	int stdio = 0;
	struct tg_gate_options gopts = { 0 };
	struct tg_mcp_options mopts = { 0 };
	struct tg_catalog *cat = NULL;
	struct tg_gate *gate = NULL;
	struct tg_mcp *mcp = NULL;
	struct serve_args args = { 0 };
	struct composed composed = { 0 };
	struct served served = { 0 };
	struct health health = { 0 };
	struct tg_error err;
	int rc, lock_fd, made;

	rc = serve_begin(argc, argv, &args, check, scratch, sizeof(scratch), &lock_fd, &made);
	if (rc >= 0) {
		if (scratch[0])
			file_remove_tree(scratch);
		return rc;
	}
	rc = EXIT_DATA;
	catalog = args.catalog, workspace = args.workspace, principal = args.principal;
	record = args.record, http = args.http, tokens = args.tokens;
	state_key = args.state_key, policy = args.policy, state = args.state, otlp = args.otlp;
	stdio = args.stdio, gopts = args.gopts, mopts = args.mopts;
	/* a client that goes away mid-answer must not kill the gateway */
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	/* the audit log: --audit FILE, the state directory's, or stderr */
	gopts.audit = check ? NULL : cli_audit_open(record ? record : state ? NULL : "-", state,
						    "serve");
	if ((!gopts.audit && !check) ||
	    (gopts.audit && replica_name(&args, gopts.audit) < 0)) {
		tg_audit_close(gopts.audit);
		serve_unlock(args.state, lock_fd, made, 1);
		return EXIT_DATA;
	}
	gopts.workspace = workspace;
	/* a signed catalogue's relative mounts are the bytes verified, its copy
	 * (filled by catalog_load below, before the gate reads it) */
	gopts.tools_dir = catalog;
	gopts.tools_copy = args.catalog_trust ? copy.live : NULL;
	gopts.state_dir = state;
	{
		/* the files of its own it reads or writes: no tool is given them */
		const char *files[] = { record, policy, tokens, state_key, args.redact_gitleaks };
		size_t f, n = 0;

		for (f = 0; f < 5; f++)
			if (files[f])
				own[n++] = files[f];
		gopts.own_files = own;
	}
	/* stdio's principal: named, or "local"; HTTP alone has none */
	mopts.principal = principal ? principal : http && !stdio ? NULL : "local";
	mopts.http_tokens = tokens;
	mopts.state_key_file = state_key;
	/* the audience an identity provider's token must name when the
	 * policy's provider sets none: this server's URL as its clients reach
	 * it (docs/AUTH.md, "External identity providers") */
	if (http) {
		if (tg_mcp_http_resource(args.addr, args.port, &args.hopts, resource,
					 sizeof(resource), &err) == 0)
			gopts.resource = resource;
	}
	if (!check && tracer_open(otlp, &gopts.tracer) < 0)
		goto out;
	if (serve_redact_load(args.redact_gitleaks, check != NULL, &err) < 0 ||
	    catalog_load(catalog, args.catalog_trust, &copy, &cat, why, sizeof(why), &err) < 0 ||
	    (args.catalog_trust && catalog_commit(&copy, &err) < 0) ||
	    catalog_skills(catalog, args.catalog_trust ? copy.live : NULL, &gopts.skills_dir,
			   &gopts.skills_optional, own_skills, sizeof(own_skills)) < 0 ||
	    compose(policy, state, args.store, principal, &composed, &gopts, &err) < 0 ||
	    tg_gate_new(cat, &gopts, &gate, &err) < 0 || tg_mcp_new(gate, &mopts, &mcp, &err) < 0) {
		if (check) {
			check_refused(check, "serve", err.msg,
				      "serve refuses to start so: the message names what to change");
			rc = 0;
			goto out;
		}
		cli_log(CLI_ERROR, "serve", "%s", err.msg);
		tg_record_event(gopts.audit, "", catalog, "load_refused", err.msg);
		goto out;
	}
	if (check) {
		check->problems = preflight(gate, &args, check);
		rc = 0;
		goto out;
	}
	if (preflight(gate, &args, NULL)) {
		tg_record_event(gopts.audit, "", catalog, "load_refused",
				"problems in the deployment (said in the log)");
		goto out;
	}
	if (record_loads(gate, cat) < 0) {
		cli_log(CLI_ERROR, "serve", "the audit log cannot be written: not serving");
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
	if ((http && http_listen(mcp, &args, &server, &served, &health) < 0) ||
	    pin_skills(gate) < 0)
		goto out;
	if (http)
		say_what_runs(&args, cat);
	/* listening (or about to read stdin): the manager may start what
	 * depends on the gateway, and the watchdog starts being fed */
	served.tools = tg_catalog_count(cat);
	tell_ready(&served, NULL);
	health.store = tg_store_remote(args.store) ? NULL : composed.store;
	sdn_watchdog_start(healthy, &health);
	if (serve_until_stopped(mcp, gate, &args, server, &served, &copy) < 0)
		goto out;
	rc = 0;
out:
	sdn_watchdog_stop(); /* it probes the server and the store */
	tg_mcp_http_stop(server);
	tg_mcp_free(mcp);
	tg_gate_free(gate);
	compose_free(&composed); /* what the gate learnt is saved: now the store goes */
	tg_tracer_free(gopts.tracer); /* what waits is exported */
	tg_catalog_free(cat);
	catalog_copy_remove(&copy); /* after the gate: no tool runs from it now */
	tg_audit_close(gopts.audit);
	serve_unlock(args.state, lock_fd, made, rc != 0); /* last: the directory as it will be */
	if (scratch[0])
		file_remove_tree(scratch);
	return rc;
}

int cmd_serve(int argc, char **argv)
{
	return serve_main(argc, argv, NULL);
}

int cli_serve_check(const char *config, struct serve_check *check)
{
	char *argv[] = { "serve", "--config", (char *)config, NULL };

	check->problems = 0;
	check->catalog = cli_config_for("serve", "catalog") != NULL;
	if (!check->catalog)
		return 0;
	return serve_main(config ? 3 : 1, argv, check);
}
