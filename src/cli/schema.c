/*
 * toolgate schema validate [--draft7] [--format-assert] SCHEMA INSTANCE
 *     exit 0 valid, 1 invalid, 2 usage, 3 a file that does not load
 * toolgate schema test [--draft7] [--format-assert] [--remotes DIR] FILE...
 *     runs files in the JSON Schema Test Suite's format; ends with
 *     "N passed, M failed". --remotes serves http://localhost:1234/ from DIR
 *     (the suite's remotes/), never from the network.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "toolgate/schema.h"
#include "util/file.h"
#include "util/json_span.h"

#define SUITE_BASE "http://localhost:1234/"

/* The file's text, at most max bytes; NULL with a message on stderr that
 * says why (it cannot be opened, it is larger than max). */
static char *slurp(const char *path, size_t max, size_t *len)
{
	char *buf = file_read_all(path, max, 0, len);

	if (!buf && errno == EFBIG)
		fprintf(stderr, "toolgate schema: %s: larger than %zu bytes\n", path, max);
	else if (!buf)
		fprintf(stderr, "toolgate schema: %s: %s\n", path, strerror(errno));
	return buf;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate schema validate [--draft7] [--format-assert] SCHEMA INSTANCE\n"
		   "       toolgate schema test [--draft7] [--format-assert] [--remotes DIR] "
		   "FILE...\n"
		   "\n"
		   "Exit status: 0 valid (every test passed); 1 invalid (a test failed);\n"
		   "2 usage; 3 a file that cannot be read or does not load (docs/CLI.md).\n");
}

static const struct option options[] = {
	{ "draft7", no_argument, NULL, 'd' },
	{ "format-assert", no_argument, NULL, 'f' },
	{ "remotes", required_argument, NULL, 'r' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* One of validate's or test's options into the struct tg_schema_options
 * ctx: 0. */
static int schema_option(int opt, const char *arg, void *ctx)
{
	struct tg_schema_options *o = ctx;

	if (opt == 'd') {
		o->draft = TG_SCHEMA_DRAFT7;
	} else if (opt == 'f') {
		o->format_assert = 1;
	} else {
		o->remote_base = SUITE_BASE;
		o->remote_dir = arg;
	}
	return 0;
}

/* The options of validate or test (argv[0] the verb) into *o: -1 (the
 * operands from argv[optind]), or the exit status (--help: 0; a usage
 * error, said: 2). --remotes is test's only. */
static int schema_parse(const char *who, int argc, char **argv, struct tg_schema_options *o)
{
	int rc = cli_parse(who, argc, argv, ":h", options, usage, NULL, schema_option, o);

	if (rc < 0 && o->remote_dir && strcmp(who, "schema test") != 0) {
		fprintf(stderr, "toolgate %s: --remotes is for schema test\n", who);
		return EXIT_USAGE;
	}
	return rc;
}

/* the library's ceilings (docs/SCHEMA.md) */
#define MAX_SCHEMA_TEXT (8u << 20)
#define MAX_INSTANCE_TEXT (16u << 20)

static int cmd_validate(int argc, char **argv)
{
	struct tg_schema_error ev[20];
	struct tg_schema_errors errors = { ev, 20, 0 };
	struct tg_schema_options o;
	struct tg_schema *schema = NULL;
	char *stext, *itext;
	size_t slen, ilen, i;
	struct tg_error err;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = schema_parse("schema validate", argc, argv, &o);
	if (rc >= 0)
		return rc;
	argc -= optind - 1;
	argv += optind - 1;
	if (argc != 3) {
		fprintf(stderr, "toolgate schema validate: takes SCHEMA INSTANCE (%d given)\n",
			argc - 1);
		return EXIT_USAGE;
	}
	stext = slurp(argv[1], MAX_SCHEMA_TEXT, &slen);
	itext = stext ? slurp(argv[2], MAX_INSTANCE_TEXT, &ilen) : NULL;
	if (!stext || !itext) {
		free(stext);
		free(itext);
		return EXIT_DATA;
	}
	if (tg_schema_compile(stext, slen, &o, &schema, &err) < 0) {
		fprintf(stderr, "toolgate schema: %s: %s\n", argv[1], err.msg);
		rc = EXIT_DATA;
	} else {
		rc = tg_schema_validate(schema, itext, ilen, &errors, &err);
		if (rc < 0) {
			fprintf(stderr, "toolgate schema: %s: %s\n", argv[2], err.msg);
			rc = EXIT_DATA;
		} else if (rc == 0) {
			for (i = 0; i < errors.n; i++)
				printf("%s: %s (%s)\n", ev[i].instance_location[0] ? ev[i].instance_location : "/",
				       ev[i].message, ev[i].keyword_location);
			rc = 1;
		} else {
			rc = 0;
		}
	}
	tg_schema_free(schema);
	free(stext);
	free(itext);
	return rc;
}

/* A test file: its text, and the structure jansson read from it (numbers
 * past 64 bits as doubles: a schema and an instance are handed to the
 * validator as written, from the text, so their numbers stay exact). */
struct suite_file {
	const char *name;
	const char *text;
	size_t len;
};

/* The bytes of the value at member key of the value starting at pos. */
static const char *span_of(const struct suite_file *f, size_t pos, const char *key,
			   size_t *len)
{
	size_t at = json_span_member(f->text, f->len, pos, key), start, end;

	end = at ? json_span_value(f->text, f->len, at, &start) : 0;
	*len = end ? end - start : 0;
	return end ? f->text + start : NULL;
}

static void run_group(const struct suite_file *f, json_t *group, size_t gpos,
		      const struct tg_schema_options *o, int *passed, int *failed)
{
	json_t *tests = json_object_get(group, "tests"), *t;
	const char *gdesc = json_string_value(json_object_get(group, "description"));
	size_t slen, tpos = json_span_member(f->text, f->len, gpos, "tests");
	const char *stext = span_of(f, gpos, "schema", &slen);
	struct tg_schema *schema = NULL;
	struct tg_error err;
	size_t i, at;

	if (!stext || tg_schema_compile(stext, slen, o, &schema, &err) < 0) {
		json_array_foreach(tests, i, t) {
			(*failed)++;
			printf("not ok - %s: %s: %s: schema: %s\n", f->name, gdesc,
			       json_string_value(json_object_get(t, "description")),
			       stext ? err.msg : "no \"schema\"");
		}
		return;
	}
	at = tpos ? json_span_item(f->text, f->len, tpos, 0) : 0;
	json_array_foreach(tests, i, t) {
		size_t ilen;
		const char *itext = at ? span_of(f, at, "data", &ilen) : NULL;
		int want = json_is_true(json_object_get(t, "valid"));
		int got = itext ? tg_schema_validate(schema, itext, ilen, NULL, &err) : -1;

		if (got == want) {
			(*passed)++;
		} else {
			(*failed)++;
			printf("not ok - %s: %s: %s: expected %s, got %s\n", f->name, gdesc,
			       json_string_value(json_object_get(t, "description")),
			       want ? "valid" : "invalid",
			       !itext ? "no \"data\"" : got < 0 ? err.msg : got ? "valid" : "invalid");
		}
		at = at ? json_span_next(f->text, f->len, at) : 0; /* one pass, not one a test */
	}
	tg_schema_free(schema);
}

static int run_file(const char *path, const struct tg_schema_options *o, int *passed,
		    int *failed)
{
	const char *base = strrchr(path, '/');
	struct suite_file f = { base ? base + 1 : path, NULL, 0 };
	char *text = slurp(path, 64u << 20, &f.len);
	json_error_t jerr;
	json_t *doc, *g;
	size_t k, gpos;

	if (!text)
		return -1;
	f.text = text;
	/* duplicate names refused: the spans find a name's first value */
	doc = json_loadb(text, f.len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL |
			 JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_array(doc)) {
		if (doc)
			fprintf(stderr, "toolgate schema: %s: not a test file (an array of groups)\n",
				path);
		else
			fprintf(stderr, "toolgate schema: %s: line %d: %s\n", path, jerr.line,
				jerr.text);
		json_decref(doc);
		free(text);
		return -1;
	}
	gpos = json_span_item(f.text, f.len, 0, 0);
	json_array_foreach(doc, k, g) {
		run_group(&f, g, gpos, o, passed, failed);
		gpos = gpos ? json_span_next(f.text, f.len, gpos) : 0;
	}
	json_decref(doc);
	free(text);
	return 0;
}

static int cmd_test(int argc, char **argv)
{
	struct tg_schema_options o;
	int passed = 0, failed = 0, i;

	memset(&o, 0, sizeof(o));
	i = schema_parse("schema test", argc, argv, &o);
	if (i >= 0)
		return i;
	i = optind;
	if (i >= argc) {
		fprintf(stderr, "toolgate schema test: which FILE?\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (; i < argc; i++)
		if (run_file(argv[i], &o, &passed, &failed) < 0)
			return EXIT_DATA;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

int cmd_schema(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "validate") == 0)
		return cmd_validate(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "test") == 0)
		return cmd_test(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2)
		fprintf(stderr, "toolgate schema: unknown command '%s' (validate or test)\n",
			argv[1]);
	else
		usage(stderr);
	return EXIT_USAGE;
}
