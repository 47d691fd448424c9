/*
 * toolgate: the command. Dispatches to one subcommand per file.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "cli/log.h"
#include "toolgate/error.h"
#include "toolgate/version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: toolgate COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  run [options] -- CMD [ARGS...]   run a command in the sandbox\n"
		"  doctor [--json]                  what this host's kernel guarantees\n"
		"  schema validate SCHEMA INSTANCE  check a JSON instance against a schema\n"
		"  schema test [--remotes DIR] FILE...  run JSON Schema Test Suite files\n"
		"  catalog list|lint DIR            the tool contracts of a directory\n"
		"  catalog show DIR NAME[@VERSION]  one tool's MCP definition\n"
		"  catalog diff OLD.json NEW.json   what changed, and whether it breaks callers\n"
		"  serve --catalog DIR [--stdio]    the MCP gateway over a catalogue\n"
		"  token issue|verify|revoke ...    signed tokens for a policy's principals\n"
		"  policy lint FILE [--catalog DIR] excessive agency in a policy\n"
		"  approvals list|show|approve|reject ...  write calls awaiting a person\n"
		"  rollback CALL-ID | list ...                undo an executed write call\n"
		"  audit verify|tail|query ...      the hash-chained audit log\n"
		"  redact [FILE] [--json]           hide the secrets in a file or stdin\n"
		"  anomalies TOOL [FILE] --catalog DIR  what the anomaly rules find in arguments\n"
		"  upstream list|show|test|pin|diff|accept ...  the upstream MCP servers\n"
		"  skill check|sign|verify|scan|install|trust ...  Agent Skills: signed, scanned\n"
		"  config show [COMMAND] | keys     the configuration file's values\n"
		"\n"
		"toolgate COMMAND --help says what each takes; every command but run takes\n"
		"--config FILE, the configuration file (default $TOOLGATE_CONFIG, else\n"
		"" CLI_CONFIG_DEFAULT ", when there: docs/CONFIG.md). Exit status: 0; 1 the answer\n"
		"is no (findings, invalid, refused); 2 usage; 3 a file, directory, store or\n"
		"log missing, malformed or failing; run: its command's, 124 to 127 its own\n"
		"(docs/CLI.md).\n");
}

/* The library's messages (tg_log_set): to stderr, a line each, as the
 * command logs (src/cli/log.c). */
static void log_to_stderr(void *ctx, enum tg_log_level level, const char *message)
{
	cli_log_library(ctx, (int)level, message);
}

int main(int argc, char **argv)
{
	tg_log_set(log_to_stderr, NULL);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return cmd_doctor(argc - 1, argv + 1);
	if (strcmp(argv[1], "schema") == 0)
		return cmd_schema(argc - 1, argv + 1);
	if (strcmp(argv[1], "catalog") == 0)
		return cmd_catalog(argc - 1, argv + 1);
	if (strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (strcmp(argv[1], "token") == 0)
		return cmd_token(argc - 1, argv + 1);
	if (strcmp(argv[1], "policy") == 0)
		return cmd_policy(argc - 1, argv + 1);
	if (strcmp(argv[1], "approvals") == 0)
		return cmd_approvals(argc - 1, argv + 1);
	if (strcmp(argv[1], "rollback") == 0)
		return cmd_rollback(argc - 1, argv + 1);
	if (strcmp(argv[1], "audit") == 0)
		return cmd_audit(argc - 1, argv + 1);
	if (strcmp(argv[1], "redact") == 0)
		return cmd_redact(argc - 1, argv + 1);
	if (strcmp(argv[1], "anomalies") == 0)
		return cmd_anomalies(argc - 1, argv + 1);
	if (strcmp(argv[1], "upstream") == 0)
		return cmd_upstream(argc - 1, argv + 1);
	if (strcmp(argv[1], "skill") == 0)
		return cmd_skill(argc - 1, argv + 1);
	if (strcmp(argv[1], "config") == 0)
		return cmd_config(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0) {
		puts("toolgate " TOOLGATE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "toolgate: unknown command '%s' (try toolgate --help)\n", argv[1]);
	return EXIT_USAGE;
}
