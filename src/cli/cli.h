/* The toolgate command's subcommands: one file each, thin over the library. */
#ifndef TG_CLI_H
#define TG_CLI_H

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_schema(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_approvals(int argc, char **argv);

/* Exit statuses shared by the subcommands, after env(1) and timeout(1). */
#define EXIT_TIMEOUT 124
#define EXIT_TOOLGATE 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

#endif
