/* The toolgate command's subcommands: one file each, thin over the library. */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <stddef.h>

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_schema(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* The deployment toolgate serve would run with from the configuration
 * file config (NULL: the default one), looked at and not served
 * (tg_gate_preflight): each problem given to fn, their number in
 * problems; catalog 0 when the file gives serve no catalogue (nothing
 * looked at). Serve's exit status for a command line or file it
 * refuses, else 0. */
struct serve_check {
	void (*fn)(void *ctx, const char *where, const char *what, const char *fix);
	void *ctx;
	unsigned problems;
	int catalog;
};
int cli_serve_check(const char *config, struct serve_check *check);
int cmd_token(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_approvals(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_redact(int argc, char **argv);
int cmd_anomalies(int argc, char **argv);
/* toolgate upstream list|show|test|pin|diff (upstream.c). */
int cmd_upstream(int argc, char **argv);
int cmd_skill(int argc, char **argv);
/* toolgate upstream accept (upstream_accept.c): argv[0] is "accept". */
int cli_upstream_accept(int argc, char **argv);

/* The audit log's path: file, else the state directory's audit.log; -1
 * when neither is given. cli_audit_open opens it (NULL: it said why on
 * stderr, as `toolgate who`). */
struct tg_audit;
int cli_audit_path(const char *file, const char *state, char *out, size_t len);
/* The log at path, whose chain held (rep), against the anchors of replica
 * (NULL: the one its first record names) in store (src/cli/audit_anchor.c):
 * 0 it reaches its anchor, 1 not (said), else the exit status. */
struct tg_audit_report;
int cli_audit_anchored(const char *path, const struct tg_audit_report *rep, const char *store,
		       const char *replica);
struct tg_audit *cli_audit_open(const char *file, const char *state, const char *who);

/* The principal d's token names (cli_identify, below), in who, if its
 * scopes may decide ticket t (an approve scope over
 * its tool and each tool it covers); -1 and err (TG_ERR_INVALID: saying
 * which scope it needs). */
struct tg_store;
struct tg_error;
struct tg_ticket;
struct cli_decider;
int cli_approver_of(const struct cli_decider *d, struct tg_store *st, const struct tg_ticket *t,
		    char *who, size_t len, struct tg_error *err);

/* The token a decision is made with, where the command line says it is
 * (src/cli/token.c): file, the --token-file (a regular file of this
 * user's, mode 0600 or stricter, one line of at most TG_MAX_TOKEN bytes,
 * its newline stripped); else arg, --token: "-" for stdin's first line,
 * else the token itself. 0 and OUT *out (malloc'd); else the exit status
 * (EXIT_USAGE: neither, both, nothing on stdin; EXIT_DATA: the file
 * missing, unreadable, open to others, empty or too big), having said
 * why on stderr as "toolgate WHO: ...". */
int cli_token_read(const char *who, const char *arg, const char *file, char **out);
/* A token cli_token_read gave, wiped and freed (NULL: nothing). */
void cli_token_free(char *token);

/* Who decides (approvals, rollback, upstream accept), as the gateway
 * would take the token (tg_token_identify): one the policy's key signed,
 * checked by the state directory's key and the store's revocations, or
 * one of the policy's identity providers' (docs/AUTH.md), whose audience
 * is the provider's own or else public_url (serve's --public-url: the
 * gateway's URL as its clients reach it; NULL: none). */
struct cli_decider {
	const char *state, *policy, *token, *public_url;
};
/* d's principal into who (len bytes) and OUT *scopes (malloc'd): 0; or
 * -1 and err (TG_ERR_INVALID: the token is refused, saying why). */
int cli_identify(const struct cli_decider *d, struct tg_store *st, char *who, size_t len,
		 char **scopes, struct tg_error *err);

/* Text others chose, printed with what a terminal would obey or reorder
 * escaped (src/cli/shown.c): cli_put_json writes JSON text json as the
 * same JSON, its hidden characters as JSON escapes (nothing added: a
 * line keeps its newline); cli_put_text writes text in its display form
 * (a bidi override as the six characters \u202E, a backslash doubled);
 * cli_say writes "toolgate WHO: TEXT" and a newline, TEXT so. */
#include <stdio.h>
void cli_put_json(FILE *f, const char *json);
void cli_put_text(FILE *f, const char *text);
void cli_say(FILE *f, const char *who, const char *text);
/* A server's text as the gateway's log shows it (tg_redact_shown):
 * redacted, what a terminal would obey or a reader not see as '?'. */
void cli_put_shown(FILE *f, const char *text);

/* Exit statuses, one table for every command (docs/CLI.md). run passes
 * its command's status through, so its own failures, a usage error among
 * them, are 125 as env(1) and timeout(1) have it, and 124, 126 and 127
 * are theirs too. */
#define EXIT_NO 1          /* the answer is no: findings, invalid, refused */
#define EXIT_USAGE 2       /* the command line: an option, a value, an operand */
#define EXIT_DATA 3        /* configuration or data: a file, directory, store or
			    * log missing, unreadable, malformed or not writable,
			    * or a state directory another serve holds */
#define EXIT_TIMEOUT 124
#define EXIT_TOOLGATE 125  /* run: refused, or the sandbox could not be set up */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

#include <getopt.h>
/* The command line (src/cli/opts.c). cli_parse is getopt_long over argv
 * (argv[0] the command's or the verb's name; operands anywhere, "--" ends
 * the options), where shortopts starts with ':' and has 'h', and longopts
 * has CLI_OPTION_HELP. --help prints usage on stdout; a usage error,
 * naming the option, is said on stderr as "toolgate WHO: ...". An option
 * whose val is in binds (ended by {0, NULL}; binds may be NULL) has its
 * value stored in *to, the last given winning; any other goes to
 * other(opt, optarg, ctx), which returns 0, or -1 having said why (a
 * usage error). -1 once every option is read (the operands from
 * argv[optind]); else the exit status: 0 after --help, EXIT_USAGE after a
 * usage error. */
struct cli_bind {
	int val;
	const char **to;
};
int cli_parse(const char *who, int argc, char **argv, const char *shortopts,
	      const struct option *longopts, void (*usage)(FILE *), const struct cli_bind *binds,
	      int (*other)(int opt, const char *arg, void *ctx), void *ctx);
/* An other for a command whose one option without a value is a flag:
 * *(int *)ctx = 1. */
int cli_set_flag(int opt, const char *arg, void *ctx);
/* The options several commands share, the same everywhere. */
#define CLI_OPTION_HELP { "help", no_argument, NULL, 'h' }
#define CLI_OPTION_STATE { "state", required_argument, NULL, 's' }
/* --store URL: the store in PostgreSQL rather than the state directory's
 * (its val past every character, and past opts.c's --config, 0x10000) */
#define CLI_STORE 0x10001
#define CLI_OPTION_STORE { "store", required_argument, NULL, CLI_STORE }
#define CLI_OPTION_POLICY { "policy", required_argument, NULL, 'p' }
#define CLI_OPTION_CATALOG { "catalog", required_argument, NULL, 'c' }
#define CLI_OPTION_END { NULL, 0, NULL, 0 }
/* v, a whole number from min to max, into *out: 0, or -1 having said
 * "toolgate WHO: NAME 'V': takes a whole number from MIN to MAX". */
int cli_count(const char *who, const char *name, const char *v, unsigned long min,
	      unsigned long max, unsigned long *out);
/* A reading command's state directory: 0 when it exists, else -1 having
 * said so, naming it. cli_has_store: 1 when where holds the store's
 * database: a state directory once serve --policy FILE --state DIR,
 * token revoke or upstream pin made it (before that there is nothing in
 * it to read); a PostgreSQL URL (tg_store_remote) always, its backend
 * making its tables on open. Neither creates anything. */
#define CLI_STORE_FILE "toolgate.db" /* docs/STORE.md */
int cli_state_exists(const char *who, const char *state);
int cli_has_store(const char *where);
/* Where a command's store is: --store's URL when given, else the state
 * directory (either may be NULL). */
const char *cli_store_at(const char *store, const char *state);
/* --store's value: 0 when NULL or a postgres:// or postgresql:// URL;
 * else -1 having said "toolgate WHO: --store ..." (a usage error; the
 * value is not repeated: it may hold what was meant as a password). */
int cli_store_url(const char *who, const char *store);

#endif
