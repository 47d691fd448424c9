/*
 * What src/cli/skill.c and skill_trust.c share.
 */
#ifndef TG_CLI_SKILL_INT_H
#define TG_CLI_SKILL_INT_H

#include <stddef.h>

#include "toolgate/error.h"

/* The exit status for a failure err describes: EXIT_DATA for a file that
 * could not be read, EXIT_NO for what was read and refused. */
int cli_skill_status(const struct tg_error *err);
/* "toolgate WHO: " and the message fmt makes, in its display form (the
 * text of a skill, a key or a store is from outside), on stderr. */
void cli_skill_say(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The tools skill declares (toolgate.json), checked as serve checks
 * them, the gateway's own checks aside (its catalogue, its directories):
 * 0 and *n, or -1 and err. */
struct tg_skill;
int cli_skill_tools_check(const struct tg_skill *skill, size_t *n, struct tg_error *err);
/* What sign, verify and manifest are told: the command ("skill" or
 * "catalog"), whether the folder is a skill's (0) or any folder (1: a
 * catalogue's), the keys and the trust store. */
struct key_opts {
	const char *cmd;
	int folder;
	const char *secret, *public, *password_file, *trust;
	int no_password;
};
/* CMD manifest DIR, CMD sign DIR, CMD verify DIR...: the exit status. */
int cli_folder_manifest(const char *dir, const struct key_opts *o);
int cli_folder_sign(const char *dir, const struct key_opts *o);
int cli_folder_verify(char **dirs, int n, const struct key_opts *o);

/* toolgate catalog manifest|sign|verify ... (argv[0] the verb). */
int cli_catalog_sign(int argc, char **argv);
/* toolgate skill install|remove|list|show ... (argv[0] the verb). */
int cli_skill_install(int argc, char **argv);
/* toolgate skill scan|rules ... (argv[0] the verb). */
int cli_skill_scan(int argc, char **argv);
/* toolgate skill trust VERB ... (argv[0] "trust"). */
int cli_skill_trust(int argc, char **argv);

#endif
