/*
 * toolgate audit verify [FILE | --state DIR] [--expect SEQ:HASH]
 *                       [--store URL [--replica NAME]]
 * toolgate audit tail   [FILE | --state DIR] [-n N] [-f]
 * toolgate audit query  [FILE | --state DIR] [--principal P] [--tool T]
 *                       [--outcome O] [--kind K] [--since TIME] [--until TIME]
 *
 * The audit log (docs/AUDIT.md). verify checks the chain from the first
 * record and names the first bad one (exit 1); --expect checks that a
 * head noted earlier (`verify` prints it) is still in the log, as its
 * record SEQ with that hash: a log cut back before it, or rewritten, is
 * found. --store checks the log against the heads its replica anchored
 * in a shared store every two seconds (src/cli/audit_anchor.c). tail prints the last N records (and, with -f, those that follow).
 * query prints the records that match every filter given; TIME is
 * RFC 3339 (2026-12-01T06:40:00Z, or a prefix of it: 2026-12-01) or unix
 * seconds. The log is the state directory's audit.log unless FILE is
 * given. tail and query print each record as the same JSON with what a
 * terminal would obey or reorder (bidi controls, escape sequences, tag and
 * zero-width characters an agent put in a tool's name or an argument
 * quoted by an error) written as JSON escapes, whoever wrote the log.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "toolgate/audit.h"
#include "toolgate/error.h"

#define LINE_CAP (TG_AUDIT_RECORD_MAX + 1024)

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate audit verify [FILE | --state DIR] [--expect SEQ:HASH]\n"
		   "                             [--store URL [--replica NAME]]\n"
		   "       toolgate audit tail [FILE | --state DIR] [-n N] [-f]\n"
		   "       toolgate audit query [FILE | --state DIR] [--principal P] [--tool T]\n"
		   "                            [--outcome O] [--kind K] [--since TIME] "
		   "[--until TIME]\n"
		   "\n"
		   "--store URL: the log checked against the heads its replica anchored in\n"
		   "the PostgreSQL store (docs/AUDIT.md); NAME: the replica, by default the one\n"
		   "its first record names\n"
		   "TIME: RFC 3339 (2026-12-01T06:40:00Z, or a prefix: 2026-12-01) or unix seconds\n"
		   "\n"
		   "Exit status: 0; 1 a broken chain (verify) or nothing matched (query);\n"
		   "2 usage; 3 the log or the state directory missing or unreadable\n"
		   "(docs/CLI.md).\n");
}

int cli_audit_path(const char *file, const char *state, char *out, size_t len)
{
	if (file)
		return snprintf(out, len, "%s", file) < (int)len ? 0 : -1;
	if (state)
		return snprintf(out, len, "%s/audit.log", state) < (int)len ? 0 : -1;
	return -1;
}

struct tg_audit *cli_audit_open(const char *file, const char *state, const char *who)
{
	/* beside a gateway, a log it wrote is never empty: one that is was cut */
	unsigned flags = strcmp(who, "serve") == 0 ? 0 : TG_AUDIT_NOT_EMPTY;
	struct tg_audit *a = NULL;
	struct tg_error err;
	char path[4096];

	if (cli_audit_path(file, state, path, sizeof(path)) < 0)
		return NULL;
	/* a gateway's first start makes its state directory, as the store
	 * would: the log opens first, there */
	if (!file && strcmp(who, "serve") == 0 && mkdir(state, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "toolgate %s: --state %s: %s\n", who, state, strerror(errno));
		return NULL;
	}
	if (tg_audit_open(path, flags, &a, &err) < 0) {
		fprintf(stderr, "toolgate %s: %s\n", who, err.msg);
		return NULL;
	}
	return a;
}

/* TIME as the log writes it ("2026-12-01T06:40:00.000000Z"), or a prefix
 * of that form; -1 when it is neither that nor unix seconds. */
static int time_key(const char *in, char *out, size_t len)
{
	char *end;
	long long s = strtoll(in, &end, 10);
	size_t i;

	if (*in && !*end) {
		time_t t = (time_t)s;
		struct tm tm;

		if (s < 0 || !gmtime_r(&t, &tm))
			return -1;
		strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
		return 0;
	}
	/* digits, - T : . and a final Z, as RFC 3339 in UTC has them */
	for (i = 0; in[i]; i++)
		if (!((in[i] >= '0' && in[i] <= '9') || strchr("-T:.", in[i]) ||
		      (in[i] == 'Z' && !in[i + 1])))
			return -1;
	if (i < 4 || i >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)(in[i - 1] == 'Z' ? i - 1 : i), in);
	return 0;
}

struct filter {
	const char *principal, *tool, *outcome, *kind;
	char since[40], until[40];
};

static int matches(const struct filter *f, const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	const char *ts = json_string_value(json_object_get(o, "ts"));
	int ok = o != NULL;

#define FIELD_IS(key, want) \
	(!(want) || (json_string_value(json_object_get(o, key)) && \
		     strcmp(json_string_value(json_object_get(o, key)), want) == 0))
	ok = ok && FIELD_IS("principal", f->principal) && FIELD_IS("outcome", f->outcome) &&
	     FIELD_IS("kind", f->kind);
#undef FIELD_IS
	if (ok && f->tool) {
		/* a call's tool, or an event's subject naming it */
		const char *t = json_string_value(json_object_get(o, "tool"));
		const char *s = json_string_value(json_object_get(o, "subject"));

		ok = (t && strcmp(t, f->tool) == 0) || (s && strcmp(s, f->tool) == 0);
	}
	if (ok && f->since[0])
		ok = ts && strncmp(ts, f->since, strlen(f->since)) >= 0;
	if (ok && f->until[0])
		ok = ts && strncmp(ts, f->until, strlen(f->until)) <= 0;
	json_decref(o);
	return ok;
}

static int verify(const char *path, const char *expect, const char *store,
		  const char *replica)
{
	struct tg_audit_report rep;
	struct tg_audit_head head;
	struct tg_error err;
	unsigned long long seq = 0;

	memset(&head, 0, sizeof(head));
	if (expect && (sscanf(expect, "%llu:%64[0-9a-f]", &seq, head.hash) != 2 ||
		       strlen(head.hash) != 64)) {
		fprintf(stderr, "toolgate audit verify: --expect %s: wants SEQ:HASH (64 hex digits)\n",
			expect);
		return EXIT_USAGE;
	}
	head.seq = seq;
	if (tg_audit_verify(path, expect ? &head : NULL, &rep, &err) < 0) {
		fprintf(stderr, "toolgate audit verify: %s\n", err.msg);
		return EXIT_DATA;
	}
	if (rep.bad_line) {
		printf("%s: line %llu: %s\n", path, (unsigned long long)rep.bad_line, rep.problem);
		printf("%llu records verified before it (the last, %llu: %s)\n",
		       (unsigned long long)rep.records, (unsigned long long)rep.last_seq,
		       rep.last_hash);
		return 1;
	}
	printf("%s: %llu records, the chain holds; head %llu:%s\n", path,
	       (unsigned long long)rep.records, (unsigned long long)rep.last_seq, rep.last_hash);
	return store ? cli_audit_anchored(path, &rep, store, replica) : 0;
}

/* The log's lines, one at a time: whole lines only (one still being
 * written shows once it is), at most a record's length. */
struct lines {
	FILE *f;
	char *line;
};

static int lines_open(struct lines *r, const char *path, const char *who)
{
	r->f = fopen(path, "re");
	r->line = malloc(LINE_CAP);
	if (r->f && r->line)
		return 0;
	fprintf(stderr, "toolgate audit %s: %s: %s\n", who, path, strerror(r->f ? ENOMEM : errno));
	if (r->f)
		fclose(r->f);
	free(r->line);
	return -1;
}

/* The next whole line (with its newline), or NULL: at the end, or before
 * a line not yet ended (read again from there next time). A line with a
 * NUL byte, or longer than a record can be, is not a record: passed over,
 * so that neither query nor tail -f stops there. */
static const char *lines_next(struct lines *r)
{
	for (;;) {
		long at = ftell(r->f);
		size_t n;
		int ch;

		if (!fgets(r->line, LINE_CAP, r->f))
			break;
		n = (size_t)(ftell(r->f) - at);
		if (n && r->line[n - 1] == '\n') {
			if (strlen(r->line) == n)
				return r->line;
			continue; /* a NUL in it */
		}
		if (n < LINE_CAP - 1) {
			/* not ended yet: being written */
			clearerr(r->f);
			fseek(r->f, at, SEEK_SET);
			return NULL;
		}
		while ((ch = fgetc(r->f)) != EOF && ch != '\n') {
		}
		if (ch == EOF) {
			clearerr(r->f);
			fseek(r->f, at, SEEK_SET);
			return NULL;
		}
	}
	clearerr(r->f);
	return NULL;
}

static void lines_close(struct lines *r)
{
	fclose(r->f);
	free(r->line);
}

/* Print the last n lines. */
static int tail_last(struct lines *r, long n)
{
	char **ring = calloc((size_t)n, sizeof(char *));
	const char *line;
	long i, count = 0;

	if (!ring)
		return -1;
	while ((line = lines_next(r))) {
		free(ring[count % n]);
		ring[count % n] = strdup(line);
		count++;
	}
	for (i = count > n ? count - n : 0; i < count; i++) {
		if (ring[i % n])
			cli_put_json(stdout, ring[i % n]); /* escaped: cli/shown.c */
		free(ring[i % n]);
		ring[i % n] = NULL;
	}
	fflush(stdout);
	free(ring);
	return 0;
}

static int tail(const char *path, long n, int follow)
{
	struct lines r;
	const char *line;

	if (lines_open(&r, path, "tail") < 0)
		return EXIT_DATA;
	if (tail_last(&r, n) < 0) {
		lines_close(&r);
		return EXIT_DATA;
	}
	if (follow)
		for (;;) { /* until killed, as tail -f */
			while ((line = lines_next(&r))) {
				cli_put_json(stdout, line);
				fflush(stdout);
			}
			usleep(200000);
		}
	lines_close(&r);
	return 0;
}

static int query(const char *path, const struct filter *flt)
{
	struct lines r;
	const char *line;
	long found = 0;

	if (lines_open(&r, path, "query") < 0)
		return EXIT_DATA;
	while ((line = lines_next(&r)))
		if (matches(flt, line)) {
			cli_put_json(stdout, line);
			found++;
		}
	lines_close(&r);
	return found ? 0 : 1;
}

static const struct option options[] = {
	CLI_OPTION_STATE,
	{ "expect", required_argument, NULL, 'e' },
	{ "principal", required_argument, NULL, 'P' },
	{ "tool", required_argument, NULL, 'T' },
	{ "outcome", required_argument, NULL, 'O' },
	{ "kind", required_argument, NULL, 'K' },
	{ "since", required_argument, NULL, 'S' },
	{ "until", required_argument, NULL, 'U' },
	CLI_OPTION_STORE,
	{ "replica", required_argument, NULL, 'R' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* What audit was asked. */
struct audit_args {
	const char *file, *state, *expect, *store, *replica;
	struct filter flt;
	long n;
	int follow;
};

/* An option that is more than a value into *a: 0, or -1 (said). */
static int audit_option(int opt, const char *v, void *ctx)
{
	struct audit_args *a = ctx;
	unsigned long n;

	switch (opt) {
	case 'S':
	case 'U':
		if (time_key(v, opt == 'S' ? a->flt.since : a->flt.until, sizeof(a->flt.since)) < 0) {
			fprintf(stderr, "toolgate audit: --%s %s: not RFC 3339 or unix seconds\n",
				opt == 'S' ? "since" : "until", v);
			return -1;
		}
		break;
	case 'n':
		if (cli_count("audit tail", "-n", v, 1, 100000, &n) < 0)
			return -1;
		a->n = (long)n;
		break;
	case 'f':
		a->follow = 1;
		break;
	}
	return 0;
}

int cmd_audit(int argc, char **argv)
{
	struct audit_args a;
	const struct cli_bind binds[] = {
		{ 's', &a.state }, { 'e', &a.expect }, { CLI_STORE, &a.store },
		{ 'R', &a.replica }, { 'P', &a.flt.principal },
		{ 'T', &a.flt.tool }, { 'O', &a.flt.outcome }, { 'K', &a.flt.kind }, { 0, NULL },
	};
	const char *verb;
	char path[4096], who[32];
	int rc;

	memset(&a, 0, sizeof(a));
	a.n = 10;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	verb = argv[1];
	if (strcmp(verb, "verify") != 0 && strcmp(verb, "tail") != 0 && strcmp(verb, "query") != 0) {
		fprintf(stderr, "toolgate audit: unknown command '%s' (verify, tail or query)\n",
			verb);
		return EXIT_USAGE;
	}
	snprintf(who, sizeof(who), "audit %s", verb);
	rc = cli_parse(who, argc - 1, argv + 1, ":hn:f", options, usage, binds, audit_option, &a);
	if (rc >= 0)
		return rc;
	if (optind < argc - 1)
		a.file = argv[1 + optind++];
	if (optind < argc - 1) {
		fprintf(stderr, "toolgate %s: one FILE only ('%s', then '%s')\n", who, a.file,
			argv[1 + optind]);
		return EXIT_USAGE;
	}
	if (cli_audit_path(a.file, a.state, path, sizeof(path)) < 0) {
		fprintf(stderr, "toolgate %s: which log? FILE or --state DIR\n", who);
		return EXIT_USAGE;
	}
	/* reading: a state directory that is not there is said, not made */
	if (!a.file && cli_state_exists(who, a.state) < 0)
		return EXIT_DATA;
	if ((a.store || a.replica) && strcmp(verb, "verify") != 0) {
		fprintf(stderr, "toolgate %s: --store and --replica are verify's\n", who);
		return EXIT_USAGE;
	}
	if ((a.replica && !a.store) || cli_store_url(who, a.store) < 0) {
		if (!a.store)
			fprintf(stderr, "toolgate %s: --replica names whose anchors --store URL "
				"holds: give --store\n", who);
		return EXIT_USAGE;
	}
	if (strcmp(verb, "verify") == 0)
		return verify(path, a.expect, a.store, a.replica);
	if (strcmp(verb, "tail") == 0)
		return tail(path, a.n, a.follow);
	return query(path, &a.flt);
}
