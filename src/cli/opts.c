/*
 * What the subcommands share about their command lines (src/cli/cli.h):
 * getopt_long with one set of conventions (GNU style, --help on stdout
 * with exit 0, a usage error on stderr naming the option), counts read
 * from an option's value, and the check that a reading command's state
 * directory is there (and whether it holds a store yet, or the store is
 * a PostgreSQL database: --store URL).
 *
 * It never creates, opens or changes anything: a missing state directory
 * is said and left missing, so that a typo cannot make a new, empty one.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "toolgate/store.h"

/* What cli_opt returns besides an option's val. */
#define CLI_HELP (-2)
#define CLI_BAD (-3)
/* --config's val, an option every command takes (cli_parse adds it). */
#define CLI_CONFIG 0x10000
#define CLI_MAX_OPTIONS 64

static void cli_opt_begin(void)
{
	optind = 0; /* glibc: start afresh */
	opterr = 0; /* the messages below name the option and the command */
}

/* The next option's val, -1 at the end, CLI_HELP (usage printed on
 * stdout) or CLI_BAD (a usage error said on stderr). */
static int cli_opt(const char *who, int argc, char **argv, const char *shortopts,
		   const struct option *longopts, void (*usage)(FILE *))
{
	int opt = getopt_long(argc, argv, shortopts, longopts, NULL);
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (opt == 'h') {
		usage(stdout);
		return CLI_HELP;
	}
	if (opt == ':') {
		fprintf(stderr, "toolgate %s: option %s needs a value (see --help)\n", who, arg);
		return CLI_BAD;
	}
	if (opt == '?') {
		if (optopt && optopt < 256 && strncmp(arg, "--", 2) != 0)
			fprintf(stderr, "toolgate %s: unknown option '-%c' (see --help)\n", who,
				optopt);
		else if (optopt)
			/* a long option given a value it does not take */
			fprintf(stderr, "toolgate %s: option '%s' takes no value (see --help)\n",
				who, arg);
		else
			fprintf(stderr, "toolgate %s: unknown option '%s' (see --help)\n", who, arg);
		return CLI_BAD;
	}
	return opt;
}

/* longopts and --config, into all (CLI_MAX_OPTIONS + 2 of them): 0, or
 * -1 when longopts has too many. */
static int with_config(const struct option *longopts, struct option *all)
{
	size_t n = 0;

	for (; longopts[n].name; n++) {
		if (n == CLI_MAX_OPTIONS)
			return -1;
		all[n] = longopts[n];
	}
	all[n++] = (struct option){ "config", required_argument, NULL, CLI_CONFIG };
	all[n] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

/* The configuration file's values for the options of longopts who takes
 * that the file gives (src/cli/config.c), set as the command line would
 * set them, before it does: 0, or the exit status. */
static int from_config(const char *who, const char *path, const struct option *longopts,
		       const struct cli_bind *binds,
		       int (*other)(int opt, const char *arg, void *ctx), void *ctx)
{
	const struct cli_config_value *v;
	const struct option *o;
	const struct cli_bind *b;
	const char *file;
	int kind, takes = 0;

	for (o = longopts; o->name; o++)
		takes |= cli_config_kind_of(o->name) >= 0;
	/* a command that takes no key reads no file it was not given */
	if (!takes && !path)
		return 0;
	if (cli_config_load(who, path, &file) < 0)
		return EXIT_DATA;
	for (o = longopts; file && o->name; o++) {
		kind = cli_config_kind_of(o->name);
		v = kind >= 0 ? cli_config_for(who, o->name) : NULL;
		if (!v || (kind == CLI_CONFIG_FLAG && cli_config_yes(v->value) != 1) ||
		    (kind == CLI_CONFIG_NO_FLAG && cli_config_yes(v->value) != 0))
			continue;
		for (b = binds; b && b->to && b->val != o->val; b++) {
		}
		if (b && b->to)
			*b->to = kind == CLI_CONFIG_VALUE ? v->value : NULL;
		else if (!other || other(o->val, kind == CLI_CONFIG_VALUE ? v->value : NULL,
					 ctx) < 0) {
			fprintf(stderr, "toolgate %s: (that is %s:%u's %s)\n", who, file, v->line,
				v->key);
			return EXIT_DATA;
		}
	}
	return 0;
}

int cli_parse(const char *who, int argc, char **argv, const char *shortopts,
	      const struct option *longopts, void (*usage)(FILE *), const struct cli_bind *binds,
	      int (*other)(int opt, const char *arg, void *ctx), void *ctx)
{
	struct option all[CLI_MAX_OPTIONS + 2];
	const struct cli_bind *b;
	const char *config = NULL;
	int opt, rc;

	if (with_config(longopts, all) < 0)
		abort(); /* a table of the program's own */
	/* first --config, wherever it is; then the file's values; then the
	 * command line over them */
	cli_opt_begin();
	while ((opt = getopt_long(argc, argv, shortopts, all, NULL)) != -1)
		if (opt == CLI_CONFIG)
			config = optarg;
		else if (opt == 'h')
			break;
	if (opt != 'h' && (rc = from_config(who, config, longopts, binds, other, ctx)) != 0)
		return rc;
	cli_opt_begin();
	while ((opt = cli_opt(who, argc, argv, shortopts, all, usage)) != -1) {
		if (opt == CLI_HELP)
			return 0;
		if (opt == CLI_BAD)
			return EXIT_USAGE;
		if (opt == CLI_CONFIG)
			continue;
		for (b = binds; b && b->to && b->val != opt; b++) {
		}
		if (b && b->to)
			*b->to = optarg;
		else if (!other || other(opt, optarg, ctx) < 0)
			return EXIT_USAGE;
	}
	return -1;
}

int cli_set_flag(int opt, const char *arg, void *ctx)
{
	(void)opt, (void)arg;
	*(int *)ctx = 1;
	return 0;
}

int cli_count(const char *who, const char *name, const char *v, unsigned long min,
	      unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (*end || end == v || *v == '-' || *v == '+' || errno || n < min || n > max) {
		fprintf(stderr, "toolgate %s: %s '%s': takes a whole number from %lu to %lu\n", who,
			name, v, min, max);
		return -1;
	}
	*out = n;
	return 0;
}

int cli_state_exists(const char *who, const char *state)
{
	struct stat sb;

	if (stat(state, &sb) < 0) {
		fprintf(stderr, "toolgate %s: --state %s: %s\n", who, state,
			errno == ENOENT ? "no such state directory" : strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "toolgate %s: --state %s: not a directory\n", who, state);
		return -1;
	}
	return 0;
}

int cli_has_store(const char *where)
{
	char path[4096];

	if (tg_store_remote(where))
		return 1; /* PostgreSQL: its tables are made on open */
	return snprintf(path, sizeof(path), "%s/%s", where, CLI_STORE_FILE) < (int)sizeof(path) &&
	       access(path, F_OK) == 0;
}

const char *cli_store_at(const char *store, const char *state)
{
	return store ? store : state;
}

int cli_store_url(const char *who, const char *store)
{
	if (!store || tg_store_remote(store))
		return 0;
	fprintf(stderr, "toolgate %s: --store: takes a postgres:// or postgresql:// URL "
		"(postgres://HOST/DB); the state directory's store is --state DIR's\n", who);
	return -1;
}
