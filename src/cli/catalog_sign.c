/*
 * toolgate catalog manifest DIR
 * toolgate catalog sign DIR --secret-key FILE [--password-file FILE]
 * toolgate catalog verify DIR... (--trust FILE | --public-key FILE)
 *
 * A contract catalogue's folder signed as a skill's is (docs/SKILLS.md,
 * "Signed catalogues"): its files' manifest (SHA256SUMS) and minisign's
 * signature of it beside it, made and checked by what skill sign and
 * verify use (src/cli/skill.c), for any folder rather than a skill's.
 * `serve --catalog-trust FILE` refuses a catalogue that does not verify.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/skill_int.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate catalog manifest DIR\n"
		   "       toolgate catalog sign DIR --secret-key FILE [--password-file FILE]\n"
		   "       toolgate catalog verify DIR... (--trust FILE | --public-key FILE)\n"
		   "\n"
		   "Keys, signatures and the trust store are skill's (toolgate skill keygen,\n"
		   "toolgate skill trust; docs/SKILLS.md). Exit status: 0; 1 unsigned,\n"
		   "untrusted or tampered; 2 usage; 3 a folder, key or store missing,\n"
		   "unreadable or malformed.\n");
}

static const struct option options[] = {
	CLI_OPTION_HELP,
	{ "secret-key", required_argument, NULL, 's' },
	{ "password-file", required_argument, NULL, 'w' },
	{ "trust", required_argument, NULL, 't' },
	{ "public-key", required_argument, NULL, 'P' },
	CLI_OPTION_END,
};

int cli_catalog_sign(int argc, char **argv)
{
	struct key_opts o = { .cmd = "catalog", .folder = 1 };
	const struct cli_bind binds[] = {
		{ 's', &o.secret }, { 'w', &o.password_file }, { 't', &o.trust },
		{ 'P', &o.public }, { 0, NULL },
	};
	int verb = !strcmp(argv[0], "manifest") ? 0 : !strcmp(argv[0], "sign") ? 1 : 2, opt, n;
	char who[32];

	snprintf(who, sizeof(who), "catalog %s", argv[0]);
	opt = cli_parse(who, argc, argv, ":h", options, usage, binds, NULL, NULL);
	if (opt >= 0)
		return opt;
	n = argc - optind;
	if ((verb < 2 && n != 1) || (verb == 2 && n < 1) ||
	    (verb == 0 && (o.secret || o.password_file || o.trust || o.public)) ||
	    (verb == 1 && (o.trust || o.public)) || (verb == 2 && (o.secret || o.password_file))) {
		fprintf(stderr, "toolgate %s: takes %s\n", who,
			verb == 0   ? "DIR"
			: verb == 1 ? "DIR --secret-key FILE [--password-file FILE]"
				    : "DIR... (--trust FILE | --public-key FILE)");
		return EXIT_USAGE;
	}
	if (verb == 0)
		return cli_folder_manifest(argv[optind], &o);
	if (verb == 1)
		return cli_folder_sign(argv[optind], &o);
	return cli_folder_verify(argv + optind, n, &o);
}
