/*
 * The configuration file (src/cli/config.c, docs/CONFIG.md): the values
 * of the options a deployment repeats, read by every command before its
 * command line, which wins.
 */
#ifndef TG_CLI_CONFIG_H
#define TG_CLI_CONFIG_H

#include <getopt.h>
#include <stdio.h>

#define CLI_CONFIG_MAX_BYTES (64 * 1024)
#define CLI_CONFIG_MAX_LINE 4096
#define CLI_CONFIG_MAX_VALUES 128

/* The file commands read when no --config names one: $TOOLGATE_CONFIG
 * (empty: none), else this, when it exists. */
#ifndef TG_SYSCONFDIR
#define TG_SYSCONFDIR "/etc"
#endif
#define CLI_CONFIG_DEFAULT TG_SYSCONFDIR "/toolgate/toolgate.conf"

/* One value the file gives: its key, its value (a path made absolute
 * against the file's directory), its section ("" for the top), its line. */
struct cli_config_value {
	const char *key, *value, *section;
	unsigned line;
};

/* The file at path (NULL: the default one, or none), read and checked
 * whole once a process (a second call with the same path gives the same,
 * a refusal said the first time only, nothing of a refused file kept):
 * 0, or -1 having said why on stderr as "toolgate WHO: FILE:LINE: KEY:
 * ...". *file is its path, NULL when no file is read. */
int cli_config_load(const char *who, const char *path, const char **file);

/* The value command (the first word of who) takes for the option named
 * option (a long option's name): its [command] section's, else the
 * top's; NULL when the file gives none. */
const struct cli_config_value *cli_config_for(const char *who, const char *option);

/* 1 when value (an option's, as cli_parse set it) is the file's, not
 * the command line's: a verb that has no use for it drops it, where it
 * would refuse the option given on its command line. */
int cli_config_gave(const char *value);

/* How a configuration key stands for an option: its value the option's
 * (VALUE); yes makes the flag (FLAG); no makes the flag (NO_FLAG, for a
 * --no-X option whose key is X). */
enum cli_config_kind { CLI_CONFIG_VALUE, CLI_CONFIG_FLAG, CLI_CONFIG_NO_FLAG };
/* 1 when the key's value, a yes or no, is yes. */
int cli_config_yes(const char *value);
/* The kind of option's key, -1 when option is no configuration key. */
int cli_config_kind_of(const char *option);

/* text (len bytes, NUL-terminated) parsed as the file name, relative
 * paths against /, replacing what was loaded: 0, or -1 and why (the
 * fuzzer's entry, tests/fuzz/fuzz_config.c). */
int cli_config_parse(const char *name, const char *text, size_t len, char *why, size_t whylen);
/* The file cli_config_load read (NULL: none, or none loaded yet). */
const char *cli_config_file(void);
/* What cli_config_load or cli_config_parse kept, freed: a next load reads
 * again. */
void cli_config_free(void);

/* toolgate config show [--config FILE] [COMMAND]. */
int cmd_config(int argc, char **argv);

#endif
