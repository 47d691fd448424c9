/*
 * toolgate redact [FILE | -] [--json] [--gitleaks CONFIG]
 * toolgate redact --rules [--gitleaks CONFIG]
 *
 * The secret redactor (docs/REDACTION.md) over a file or stdin, so that an
 * operator can see what the gateway would hide: the redacted text on
 * stdout (what a flag says about the input, on stderr), or with --json a
 * document listing the findings, each its rule, offset, length and line,
 * never the secret's bytes. The input is streamed: any size, in bounded
 * memory. --gitleaks adds an operator's rules (a gitleaks configuration)
 * to the built-in ones, as serve's --redact-gitleaks does.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "toolgate/redact.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate redact [FILE | -] [--json] [--gitleaks CONFIG]\n"
		   "       toolgate redact --rules [--gitleaks CONFIG]\n"
		   "\n"
		   "Prints FILE (stdin when absent or -) with every secret replaced by\n"
		   "[REDACTED:<rule>]; --json lists the findings (rule, offset, length, line)\n"
		   "instead. --rules lists the rules. --gitleaks CONFIG adds the rules of a\n"
		   "gitleaks configuration (.gitleaks.toml) to the built-in ones; what of it\n"
		   "does not apply is said on stderr.\n"
		   "\n"
		   "Exit status: 0 (findings or not); 2 usage; 3 FILE cannot be read or\n"
		   "stdout written (docs/CLI.md).\n");
}

static int write_stdout(void *arg, const char *buf, size_t len, struct tg_error *err)
{
	(void)arg;
	if (fwrite(buf, 1, len, stdout) != len)
		return tg_error_sys(err, errno, "stdout");
	return 0;
}

static int write_nowhere(void *arg, const char *buf, size_t len, struct tg_error *err)
{
	(void)arg, (void)buf, (void)len, (void)err;
	return 0;
}

static const struct {
	unsigned flag;
	const char *name, *says;
} flag_names[] = {
	{ TG_REDACT_TRUNCATED, "truncated",
	  "a private key block without its END line within 16 KiB: redacted up to there" },
	{ TG_REDACT_BINARY, "binary", "the input holds NUL bytes" },
	{ TG_REDACT_INVALID_UTF8, "invalid_utf8", "the input is not valid UTF-8" },
	{ TG_REDACT_FINDINGS_CAPPED, "findings_capped",
	  "more findings than are listed (all were redacted)" },
	{ TG_REDACT_ENCODED, "encoded",
	  "a secret was found in what base64 or hex decodes to: the whole run was redacted" },
	{ TG_REDACT_UNDECIDED, "undecided",
	  "a gitleaks rule's regex hit its match limit: the rest of its block was redacted" },
};

static int print_json(struct tg_redact_stream *st, uint64_t bytes)
{
	const struct tg_redact_finding *f;
	json_t *doc = json_object(), *list = json_array(), *flags = json_array();
	uint64_t total;
	unsigned fl;
	size_t n, i;
	int rc = 0;

	f = tg_redact_stream_findings(st, &n, &total, &fl);
	for (i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:I, s:I, s:I}", "rule", f[i].rule, "offset",
				      (json_int_t)f[i].offset, "length", (json_int_t)f[i].length,
				      "line", (json_int_t)f[i].line);

		if (o && (f[i].flags & TG_REDACT_TRUNCATED))
			json_object_set_new(o, "truncated", json_true());
		if (o && (f[i].flags & TG_REDACT_ENCODED))
			json_object_set_new(o, "encoded", json_true());
		if (o && (f[i].flags & TG_REDACT_UNDECIDED))
			json_object_set_new(o, "undecided", json_true());
		json_array_append_new(list, o);
	}
	for (i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (fl & flag_names[i].flag)
			json_array_append_new(flags, json_string(flag_names[i].name));
	json_object_set_new(doc, "count", json_integer((json_int_t)total));
	json_object_set_new(doc, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(doc, "flags", flags);
	json_object_set_new(doc, "findings", list);
	if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0 || fputc('\n', stdout) == EOF)
		rc = -1;
	json_decref(doc);
	return rc;
}

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "rules", no_argument, NULL, 'r' },
	{ "gitleaks", required_argument, NULL, 'g' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

struct redact_opts {
	int json, rules;
	const char *gitleaks;
};

static int set_flag(int opt, const char *arg, void *ctx)
{
	struct redact_opts *o = ctx;

	if (opt == 'g')
		o->gitleaks = arg;
	else if (opt == 'r')
		o->rules = 1;
	else
		o->json = 1;
	return 0;
}

/* The configuration at path in use, its notes on stderr: 0, or -1 said. */
static int use_gitleaks(const char *path, struct tg_redact_ruleset **rs)
{
	struct tg_error err;
	const char *const *n;

	if (tg_redact_ruleset_load(path, rs, &err) < 0) {
		fprintf(stderr, "toolgate redact: --gitleaks %s\n", err.msg);
		return -1;
	}
	for (n = tg_redact_ruleset_notes(*rs); *n; n++)
		fprintf(stderr, "toolgate redact: note: %s\n", *n);
	tg_redact_use(*rs);
	return 0;
}

int cmd_redact(int argc, char **argv)
{
	const char *path = NULL;
	struct tg_redact_stream *st = NULL;
	struct tg_error err;
	uint64_t bytes = 0;
	char buf[65536];
	struct tg_redact_ruleset *rs = NULL;
	struct redact_opts o = { 0, 0, NULL };
	int json = 0, fd = 0, i, opt, rc = EXIT_DATA;
	unsigned fl;

	opt = cli_parse("redact", argc, argv, ":h", options, usage, NULL, set_flag, &o);
	if (opt >= 0)
		return opt;
	json = o.json;
	if (o.gitleaks && use_gitleaks(o.gitleaks, &rs) < 0)
		return EXIT_DATA;
	if (o.rules) {
		const char *const *r, *const *ids;
		size_t n = rs ? tg_redact_ruleset_ids(rs, &ids) : 0;

		for (r = tg_redact_rules(); *r; r++)
			puts(*r);
		for (size_t k = 0; k < n; k++)
			puts(ids[k]);
		tg_redact_use(NULL);
		tg_redact_ruleset_free(rs);
		return 0;
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "toolgate redact: one FILE at most ('%s', then '%s')\n", path,
			argv[optind]);
		rc = EXIT_USAGE;
		goto out;
	}
	if (path && strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "toolgate redact: %s: %s\n", path, strerror(errno));
			fd = 0;
			goto out;
		}
	}
	if (tg_redact_stream_new(json ? write_nowhere : write_stdout, NULL, &st, &err) < 0)
		goto fail;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			tg_error_sys(&err, errno, "%s", path ? path : "stdin");
			goto fail;
		}
		if (r == 0)
			break;
		bytes += (uint64_t)r;
		if (tg_redact_stream_feed(st, buf, (size_t)r, &err) < 0)
			goto fail;
	}
	if (tg_redact_stream_finish(st, &err) < 0)
		goto fail;
	if (json ? print_json(st, bytes) < 0 : fflush(stdout) == EOF) {
		fprintf(stderr, "toolgate redact: stdout: %s\n", strerror(errno));
		goto out;
	}
	tg_redact_stream_findings(st, NULL, NULL, &fl);
	if (!json)
		for (i = 0; i < (int)(sizeof(flag_names) / sizeof(flag_names[0])); i++)
			if (fl & flag_names[i].flag)
				fprintf(stderr, "toolgate redact: %s\n", flag_names[i].says);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "toolgate redact: %s\n", err.msg);
out:
	tg_redact_stream_free(st);
	tg_redact_use(NULL);
	tg_redact_ruleset_free(rs);
	if (fd > 0)
		close(fd);
	return rc;
}
