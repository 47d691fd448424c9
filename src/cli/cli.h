/* The toolgate command's subcommands: one file each, thin over the library. */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <stddef.h>

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_schema(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_approvals(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_redact(int argc, char **argv);
int cmd_anomalies(int argc, char **argv);

/* The audit log's path: file, else the state directory's audit.log; -1
 * when neither is given. cli_audit_open opens it (NULL: it said why on
 * stderr, as `toolgate who`). */
struct tg_audit;
int cli_audit_path(const char *file, const char *state, char *out, size_t len);
struct tg_audit *cli_audit_open(const char *file, const char *state, const char *who);

/* The principal a token (issued for the policy at policy_path, docs/AUTH.md)
 * names, in who, if its scopes may decide ticket t (an approve scope over
 * its tool and each tool it covers); -1 and err (TG_ERR_INVALID: saying
 * which scope it needs). */
struct tg_store;
struct tg_error;
struct tg_ticket;
int cli_approver_of(const char *state, const char *policy_path, const char *token,
		    struct tg_store *st, const struct tg_ticket *t, char *who, size_t len,
		    struct tg_error *err);

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

/* Exit statuses shared by the subcommands, after env(1) and timeout(1). */
#define EXIT_TIMEOUT 124
#define EXIT_TOOLGATE 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

#endif
