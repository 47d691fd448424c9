/*
 * The configuration file (docs/CONFIG.md): /etc/toolgate/toolgate.conf,
 * or --config FILE, or $TOOLGATE_CONFIG; INI as operators write it for
 * many daemons, read by libinih (Debian's libinih), every key the long
 * option of the same name. Top-level keys count for every command that
 * takes the option; a [COMMAND] section's for that command alone, and win
 * over the top's. The command line wins over both (src/cli/opts.c).
 *
 * The file is read and checked whole before a command does anything: at
 * most 64 KiB, lines of at most 4,096 bytes, no NUL or other control
 * character, every section a command, every key one this reader knows and
 * the section's command takes, each once, every value well-formed for its
 * kind (a yes or no; a path, made absolute against the file's directory);
 * a file others may write is refused (it decides where the state and the
 * policy are). A mistake is said as "FILE:LINE: KEY: what is wrong".
 *
 * libinih is loaded the first time a file is read (as the library's
 * optional libraries are: src/util/dl.h): a command that reads none
 * (`toolgate run`, which takes no key) never maps it. Its settings are
 * variables of its own; the table holds their addresses.
 *
 * Owns: the table of keys. Must never: act on a value before the whole
 * file is read and found good, or read the files the values name (the
 * commands do, as they do an option's).
 */
#include <errno.h>
#include <ini.h>
#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "util/dl.h"
#include "util/file.h"

/* libinih's parser and the settings parse_text sets */
static struct {
	__typeof__(ini_parse_stream) *parse_stream;
	__typeof__(ini_allow_multiline) *allow_multiline;
	__typeof__(ini_allow_inline_comments) *allow_inline_comments;
	__typeof__(ini_allow_no_value) *allow_no_value;
	__typeof__(ini_stop_on_first_error) *stop_on_first_error;
	__typeof__(ini_use_stack) *use_stack;
	__typeof__(ini_allow_realloc) *allow_realloc;
	__typeof__(ini_max_line) *max_line;
	__typeof__(ini_initial_alloc) *initial_alloc;
} inih;
static pthread_once_t inih_once = PTHREAD_ONCE_INIT;
static char inih_failed[300]; /* why it could not be loaded; "" when it was */

static void inih_load(void)
{
#define S(f) { "ini_" #f, offsetof(__typeof__(inih), f) }
	static const struct dl_sym syms[] = {
		S(parse_stream), S(allow_multiline), S(allow_inline_comments), S(allow_no_value),
		S(stop_on_first_error), S(use_stack), S(allow_realloc), S(max_line),
		S(initial_alloc),
	};
#undef S
	__typeof__(inih) api = { 0 };

	if (DL_TABLE("libinih.so.1", syms, api, inih_failed))
		inih = api;
}

/* The commands that read keys (a bit each). */
#define C_SERVE (1u << 0)
#define C_APPROVALS (1u << 1)
#define C_ROLLBACK (1u << 2)
#define C_TOKEN (1u << 3)
#define C_AUDIT (1u << 4)
#define C_POLICY (1u << 5)
#define C_UPSTREAM (1u << 6)
#define C_ANOMALIES (1u << 7)

static const char *const command_names[] = {
	"serve", "approvals", "rollback", "token", "audit", "policy", "upstream", "anomalies",
};
#define NCOMMANDS (sizeof(command_names) / sizeof(command_names[0]))

#define DECIDERS (C_APPROVALS | C_ROLLBACK)
#define READERS (C_SERVE | DECIDERS | C_UPSTREAM | C_ANOMALIES)

/* The keys: each a long option of the commands it names. */
static const struct config_key {
	const char *key, *option;
	enum cli_config_kind kind;
	int path;            /* a path: made absolute against the file's directory */
	unsigned commands;
	const char *what;
} keys[] = {
	{ "catalog", "catalog", CLI_CONFIG_VALUE, 1, READERS | C_POLICY,
	  "the catalogue's directory" },
	{ "state", "state", CLI_CONFIG_VALUE, 1, READERS | C_TOKEN | C_AUDIT,
	  "the state directory (the store, the signing key, the audit log)" },
	{ "store", "store", CLI_CONFIG_VALUE, 0, READERS | C_TOKEN,
	  "the store in PostgreSQL (postgres://HOST/DB), when not the state directory's" },
	{ "replica", "replica", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "this gateway's name among those of one store (its audit records, its anchors)" },
	{ "policy", "policy", CLI_CONFIG_VALUE, 1, READERS | C_TOKEN, "the policy file" },
	{ "workspace", "workspace", CLI_CONFIG_VALUE, 1, C_SERVE | C_ROLLBACK,
	  "the directory write tools change" },
	{ "audit", "audit", CLI_CONFIG_VALUE, 1, C_SERVE | DECIDERS | C_UPSTREAM,
	  "the audit log, when not STATE/audit.log" },
	{ "public-url", "public-url", CLI_CONFIG_VALUE, 0, C_SERVE | DECIDERS,
	  "the URL clients use for the MCP endpoint" },
	{ "http", "http", CLI_CONFIG_VALUE, 0, C_SERVE, "ADDR:PORT to serve MCP over HTTP on" },
	{ "stdio", "stdio", CLI_CONFIG_FLAG, 0, C_SERVE, "yes: serve MCP on stdin and stdout too" },
	{ "console", "no-console", CLI_CONFIG_NO_FLAG, 0, C_SERVE,
	  "no: no approval console at /console/" },
	{ "tls-cert", "tls-cert", CLI_CONFIG_VALUE, 1, C_SERVE, "the TLS certificate chain" },
	{ "tls-key", "tls-key", CLI_CONFIG_VALUE, 1, C_SERVE, "the TLS private key" },
	{ "trust-proxy", "trust-proxy", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "the reverse proxies' addresses or networks, comma-separated" },
	{ "tokens", "tokens", CLI_CONFIG_VALUE, 1, C_SERVE, "a file of bearer tokens (without a policy)" },
	{ "state-key", "state-key", CLI_CONFIG_VALUE, 1, C_SERVE,
	  "the key file sealing the store's secrets" },
	{ "otlp", "otlp", CLI_CONFIG_VALUE, 0, C_SERVE, "where traces go (OTLP/HTTP JSON), or none" },
	{ "principal", "principal", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "the principal stdio callers are" },
	{ "warm", "warm", CLI_CONFIG_VALUE, 0, C_SERVE, "sandboxes kept ready for each command tool (0 to 64)" },
	{ "max-runs", "max-runs", CLI_CONFIG_VALUE, 0, C_SERVE, "command tools running at once (1 to 4096)" },
	{ "max-runs-per-principal", "max-runs-per-principal", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "one principal's share of max-runs" },
	{ "header-timeout", "header-timeout", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "seconds an HTTP client has to send a request's headers (1 to 300)" },
	{ "anomalies", "anomalies", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "hold, warn or off: what the anomaly rules do" },
	{ "log-format", "log-format", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "text or json: how serve's own lines on stderr are written" },
	{ "log-level", "log-level", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "error, warning, info or debug: the least that is written" },
	{ "descriptions", "descriptions", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "refuse, warn or off: a tool whose description speaks to the model" },
	{ "catalog-trust", "catalog-trust", CLI_CONFIG_VALUE, 1, C_SERVE | C_ROLLBACK | C_UPSTREAM,
	  "the trust store of the keys that may sign the catalogue" },
	{ "skills", "skills", CLI_CONFIG_VALUE, 1, C_SERVE, "the folder of the skills served" },
	{ "skills-trust", "skills-trust", CLI_CONFIG_VALUE, 1, C_SERVE,
	  "the trust store of the keys that sign skills" },
	{ "skills-rules", "skills-rules", CLI_CONFIG_VALUE, 1, C_SERVE,
	  "the operator's scanner rules for skills" },
	{ "skills-mode", "skills-mode", CLI_CONFIG_VALUE, 0, C_SERVE,
	  "enforce or warn: a skill that fails a check" },
	{ "redact-gitleaks", "redact-gitleaks", CLI_CONFIG_VALUE, 1, C_SERVE,
	  "a gitleaks configuration whose rules redact too" },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static struct {
	int loaded;          /* 1 read (or none to read), -1 refused */
	char *path;          /* NULL: no file */
	char *dir;           /* its directory, for relative paths */
	struct cli_config_value v[CLI_CONFIG_MAX_VALUES];
	size_t n;
} config;

/* The parse under way: where the reader is, and the first mistake. */
struct parse {
	const char *text, *at, *file;
	unsigned line, section_line; /* the line read last, the last [section]'s */
	char why[600];
};

static int command_bit(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strlen(command_names[i]) == len && strncmp(command_names[i], name, len) == 0)
			return (int)i;
	return -1;
}

static const struct config_key *key_named(const char *key)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

/* Levenshtein's distance of a and b, up to 3 (a typo's suggestion). */
static unsigned distance(const char *a, const char *b)
{
	unsigned row[64], i, j, prev, cur;
	size_t la = strlen(a), lb = strlen(b);

	if (la >= 64 || lb >= 64)
		return 3;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = a[i - 1] == b[j - 1] ? prev
				 : 1 + (prev < row[j - 1] ? (prev < row[j] ? prev : row[j])
					: (row[j - 1] < row[j] ? row[j - 1] : row[j]));
			prev = cur;
		}
	}
	return row[lb] < 3 ? row[lb] : 3;
}

/* A [section] line's name, checked here: libinih calls the handler for
 * a section's keys only, and an unknown section with none would pass.
 * 0, or -1 with why (one without its ']' is libinih's to refuse). */
static int section_known(struct parse *p, const char *line)
{
	const char *name = line + strspn(line, " \t") + 1, *end = strchr(name, ']');

	if (!end || command_bit(name, (size_t)(end - name)) >= 0)
		return 0;
	snprintf(p->why, sizeof(p->why), "%s:%u: [%.*s]: no such command's section (serve, "
		 "approvals, rollback, token, audit, policy, upstream or anomalies)", p->file,
		 p->line, (int)(end - name > 64 ? 64 : end - name), name);
	return -1;
}

/* libinih's reader (fgets's manner) over the text, a line a call: the
 * count of lines kept, and a line too long said, not split. Its length is
 * without the \n or \r\n that ends it (num leaves room for those). */
static char *read_line(char *str, int num, void *stream)
{
	struct parse *p = stream;
	const char *nl;
	size_t len, text;

	if (!*p->at || p->why[0])
		return NULL;
	nl = strchr(p->at, '\n');
	len = nl ? (size_t)(nl - p->at) + 1 : strlen(p->at);
	text = nl ? len - 1 - (len > 1 && nl[-1] == '\r') : len;
	p->line++;
	if (len + 1 > (size_t)num || text > CLI_CONFIG_MAX_LINE) {
		snprintf(p->why, sizeof(p->why), "%s:%u: a line longer than %d bytes", p->file,
			 p->line, CLI_CONFIG_MAX_LINE);
		return NULL;
	}
	memcpy(str, p->at, len);
	str[len] = '\0';
	p->at += len;
	if (str[strspn(str, " \t")] == '[') {
		p->section_line = p->line;
		if (section_known(p, str) < 0)
			return NULL;
	}
	return str;
}

/* value checked for key k, into the table (a path made absolute). */
static int keep(struct parse *p, const struct config_key *k, const char *section,
		const char *value)
{
	struct cli_config_value *v;
	const unsigned char *c;
	size_t i;
	char *val;

	for (c = (const unsigned char *)value; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return snprintf(p->why, sizeof(p->why), "%s:%u: %s: a control character "
					"in the value", p->file, p->line, k->key), 0;
	if (!*value)
		return snprintf(p->why, sizeof(p->why), "%s:%u: %s: no value (leave the key out "
				"for the default)", p->file, p->line, k->key), 0;
	if (k->kind != CLI_CONFIG_VALUE && cli_config_yes(value) < 0)
		return snprintf(p->why, sizeof(p->why), "%s:%u: %s: '%.100s': want yes or no",
				p->file, p->line, k->key, value), 0;
	for (i = 0; i < config.n; i++)
		if (strcmp(config.v[i].key, k->key) == 0 && strcmp(config.v[i].section, section) == 0)
			return snprintf(p->why, sizeof(p->why), "%s:%u: %s: given twice in %s%s%s "
					"(first on line %u)", p->file, p->line, k->key,
					*section ? "[" : "the top", section, *section ? "]" : "",
					config.v[i].line), 0;
	if (config.n == CLI_CONFIG_MAX_VALUES)
		return snprintf(p->why, sizeof(p->why), "%s:%u: more than %d values", p->file,
				p->line, CLI_CONFIG_MAX_VALUES), 0;
	/* -: stderr's, which the audit log alone may be */
	if (k->path && strcmp(value, "-") == 0 && strcmp(k->key, "audit") != 0)
		return snprintf(p->why, sizeof(p->why), "%s:%u: %s: '-' names no file (only "
				"audit takes it, for stderr)", p->file, p->line, k->key), 0;
	if (k->path && value[0] != '/' && strcmp(value, "-") != 0) {
		if (asprintf(&val, "%s/%s", config.dir, value) < 0)
			val = NULL;
	} else {
		val = strdup(value);
	}
	v = &config.v[config.n];
	v->key = k->key;
	v->section = strdup(section);
	v->value = val;
	v->line = p->line;
	if (!val || !v->section)
		return snprintf(p->why, sizeof(p->why), "out of memory"), 0;
	config.n++;
	return 1;
}

/* libinih's handler: a key = value of section. 1, or 0 with why. */
static int one(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	const struct config_key *k = key_named(name), *near = NULL;
	int cmd = *section ? command_bit(section, strlen(section)) : -1;
	size_t i;

	if (*section && cmd < 0)
		return snprintf(p->why, sizeof(p->why), "%s:%u: [%.64s]: no such command's "
				"section (serve, approvals, rollback, token, audit, policy, "
				"upstream or anomalies)", p->file, p->section_line, section), 0;
	if (!k) {
		for (i = 0; i < NKEYS && !near; i++)
			if (distance(name, keys[i].key) <= 2)
				near = &keys[i];
		return snprintf(p->why, sizeof(p->why), "%s:%u: %.64s: no such key%s%s%s "
				"(toolgate config keys lists them)", p->file, p->line, name,
				near ? "; did you mean " : "", near ? near->key : "",
				near ? "?" : ""), 0;
	}
	if (cmd >= 0 && !(k->commands & 1u << cmd))
		return snprintf(p->why, sizeof(p->why), "%s:%u: %s: toolgate %s takes no --%s "
				"(move it to the top, or to the section of a command that "
				"does)", p->file, p->line, name, section, k->option), 0;
	return keep(p, k, section, value);
}

/* text (len bytes, NUL-terminated) parsed into config, as the file p->file
 * in directory config.dir: 0, or -1 with p->why. */
static int parse_text(struct parse *p, const char *text, size_t len)
{
	struct tg_error err;
	const char *c;
	int rc;

	if (strlen(text) != len) {
		p->line = 1;
		for (c = text; *c; c++)
			p->line += *c == '\n';
		snprintf(p->why, sizeof(p->why), "%s:%u: a NUL byte", p->file, p->line);
		return -1;
	}
	pthread_once(&inih_once, inih_load);
	if (dl_loaded(inih_failed, p->file, "libinih", "libinih1", &err) < 0) {
		snprintf(p->why, sizeof(p->why), "%s", err.msg);
		return -1;
	}
	/* strict: no value over several lines, no comment after a value (a
	 * ';' or '#' is a path's), a line too long said (read_line) */
	*inih.allow_multiline = 0;
	*inih.allow_inline_comments = 0;
	*inih.allow_no_value = 0;
	*inih.stop_on_first_error = 1;
	*inih.use_stack = 0;
	*inih.allow_realloc = 0;
	*inih.max_line = *inih.initial_alloc = CLI_CONFIG_MAX_LINE + 3;
	p->text = p->at = text;
	p->line = p->section_line = 0;
	rc = inih.parse_stream(read_line, p, one, p);
	if (rc && !p->why[0])
		snprintf(p->why, sizeof(p->why), rc > 0 ? "%s:%d: want KEY = VALUE, a [COMMAND] "
			 "section or a # comment" : "%s: could not be read (%d)", p->file, rc);
	return p->why[0] ? -1 : 0;
}

/* path, read and parsed into config: 0, or -1 with p->why. */
static int parse_file(const char *path, struct parse *p)
{
	struct stat st;
	size_t len;
	char *text = file_read_stat(path, CLI_CONFIG_MAX_BYTES, 1, &len, &st), *copy;
	int rc;

	p->file = path;
	if (!text) {
		snprintf(p->why, sizeof(p->why), "%s: %s", path, errno == EFBIG
			 ? "larger than 64 KiB" : errno == EINVAL ? "not a regular file"
			 : strerror(errno));
		return -1;
	}
	/* it says where the state and the policy are: as sshd its
	 * configuration, only root or this user may have written it */
	if (st.st_mode & (S_IWOTH | S_IWGRP) || (st.st_uid != 0 && st.st_uid != geteuid())) {
		if (st.st_mode & (S_IWOTH | S_IWGRP))
			snprintf(p->why, sizeof(p->why), "%s: %s may change it (mode %04o), and it "
				 "says where the state and the policy are: chmod go-w", path,
				 st.st_mode & S_IWOTH ? "every user" : "its group",
				 (unsigned)(st.st_mode & 07777));
		else
			snprintf(p->why, sizeof(p->why), "%s: owned by uid %u, neither root nor this "
				 "user (uid %u), and it says where the state and the policy are: "
				 "chown it", path, (unsigned)st.st_uid, (unsigned)geteuid());
		free(text);
		return -1;
	}
	copy = strdup(path);
	config.dir = copy ? realpath(dirname(copy), NULL) : NULL;
	free(copy);
	rc = config.dir ? parse_text(p, text, len)
			: (snprintf(p->why, sizeof(p->why), "%s: %s", path, strerror(errno)), -1);
	free(text);
	return rc;
}

int cli_config_parse(const char *name, const char *text, size_t len, char *why, size_t whylen)
{
	static struct parse p;
	int rc;

	cli_config_free();
	memset(&p, 0, sizeof(p));
	p.file = name;
	config.dir = strdup("/");
	rc = config.dir ? parse_text(&p, text, len) : -1;
	snprintf(why, whylen, "%s", p.why);
	return rc;
}

/* The values kept, freed (a file refused keeps none). */
static void drop_values(void)
{
	size_t i;

	for (i = 0; i < config.n; i++) {
		free((char *)config.v[i].value);
		free((char *)config.v[i].section);
	}
	config.n = 0;
}

void cli_config_free(void)
{
	drop_values();
	free(config.path);
	free(config.dir);
	memset(&config, 0, sizeof(config));
}

int cli_config_load(const char *who, const char *path, const char **file)
{
	static struct parse p;
	const char *env = getenv("TOOLGATE_CONFIG");
	struct stat st;

	*file = NULL;
	/* a file refused stays refused: no second call acts on what was kept
	 * of it before the mistake */
	if (config.loaded) {
		*file = config.path;
		return config.loaded < 0 ? -1 : 0;
	}
	memset(&p, 0, sizeof(p)); /* a load after cli_config_free reads afresh */
	if (!path && env)
		path = *env ? env : NULL;
	/* the default when it is there, or there but not to be seen (said
	 * below): only its absence means no file */
	else if (!path && (stat(CLI_CONFIG_DEFAULT, &st) == 0 || errno != ENOENT))
		path = CLI_CONFIG_DEFAULT;
	config.loaded = 1;
	if (!path)
		return 0;
	config.path = strdup(path);
	if (!config.path || parse_file(config.path, &p) < 0) {
		fprintf(stderr, "toolgate %s: %s\n", who, config.path ? p.why : "out of memory");
		drop_values();
		config.loaded = -1;
		return -1;
	}
	*file = config.path;
	return 0;
}

const char *cli_config_file(void)
{
	return config.loaded > 0 ? config.path : NULL;
}

int cli_config_yes(const char *value)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(value, yes[i]) == 0)
			return 1;
		if (strcasecmp(value, no[i]) == 0)
			return 0;
	}
	return -1;
}

int cli_config_kind_of(const char *option)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].option, option) == 0)
			return (int)keys[i].kind;
	return -1;
}

const struct cli_config_value *cli_config_for(const char *who, const char *option)
{
	const struct cli_config_value *top = NULL;
	size_t i, len = strcspn(who, " ");
	int cmd = command_bit(who, len);

	if (cmd < 0)
		return NULL;
	for (i = 0; i < NKEYS && strcmp(keys[i].option, option) != 0; i++)
		;
	if (i == NKEYS || !(keys[i].commands & 1u << cmd))
		return NULL;
	for (size_t j = 0; j < config.n; j++) {
		const struct cli_config_value *v = &config.v[j];

		if (strcmp(v->key, keys[i].key) != 0)
			continue;
		if (!*v->section)
			top = v;
		else if (strlen(v->section) == len && strncmp(v->section, who, len) == 0)
			return v;
	}
	return top;
}

int cli_config_gave(const char *value)
{
	size_t i;

	for (i = 0; value && i < config.n; i++)
		if (config.v[i].value == value)
			return 1;
	return 0;
}

/* ---- toolgate config show|keys ------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: toolgate config show [--config FILE] [COMMAND]\n"
		"       toolgate config keys\n"
		"\n"
		"show: the configuration file's values (docs/CONFIG.md), each with its line;\n"
		"with COMMAND, those COMMAND takes, as it takes them (a [COMMAND] section's\n"
		"over the top's). Options given on COMMAND's command line win over these.\n"
		"keys: every key, the commands that take it and what it is.\n"
		"\n"
		"options:\n"
		"  --config FILE   the file (default $TOOLGATE_CONFIG, else " CLI_CONFIG_DEFAULT
		")\n");
}

static void commands_of(FILE *f, unsigned bits)
{
	const char *sep = "";
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (bits & 1u << i) {
			fprintf(f, "%s%s", sep, command_names[i]);
			sep = ",";
		}
}

static int show(const char *file, const char *command)
{
	const struct cli_config_value *v;
	int cmd = command ? command_bit(command, strlen(command)) : -1;
	size_t i;

	if (command && cmd < 0) {
		fprintf(stderr, "toolgate config show: %s: no command takes configuration keys "
			"(serve, approvals, rollback, token, audit, policy, upstream, anomalies)\n",
			command);
		return EXIT_USAGE;
	}
	printf("# %s\n", file ? file : "no configuration file (" CLI_CONFIG_DEFAULT
	       " is not there, and neither --config nor $TOOLGATE_CONFIG names one)");
	if (!command) {
		for (i = 0; i < config.n; i++) {
			v = &config.v[i];
			printf("%s%s%s%s = %s\t# line %u\n", *v->section ? "[" : "", v->section,
			       *v->section ? "] " : "", v->key, v->value, v->line);
		}
		return 0;
	}
	printf("# toolgate %s takes (its command line wins over these):\n", command);
	for (i = 0; i < NKEYS; i++) {
		if (!(keys[i].commands & 1u << cmd))
			continue;
		v = cli_config_for(command, keys[i].option);
		if (v)
			printf("%s = %s\t# line %u%s%s%s\n", keys[i].key, v->value, v->line,
			       *v->section ? ", [" : "", v->section, *v->section ? "]" : "");
		else
			printf("# %s: not set (the command's default)\n", keys[i].key);
	}
	return 0;
}

int cmd_config(int argc, char **argv)
{
	static const struct option options[] = { CLI_OPTION_HELP, CLI_OPTION_END };
	const char *verb = argc > 1 ? argv[1] : NULL, *file;
	size_t i;
	int rc;

	if (!verb || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		usage(verb ? stdout : stderr);
		return verb ? 0 : EXIT_USAGE;
	}
	if (strcmp(verb, "keys") == 0) {
		for (i = 0; i < NKEYS; i++) {
			printf("%-24s ", keys[i].key);
			commands_of(stdout, keys[i].commands);
			printf("\n    %s%s\n", keys[i].what, keys[i].kind == CLI_CONFIG_VALUE ? ""
			       : " (yes or no)");
		}
		return 0;
	}
	if (strcmp(verb, "show") != 0) {
		fprintf(stderr, "toolgate config: unknown verb '%s' (show or keys)\n", verb);
		return EXIT_USAGE;
	}
	rc = cli_parse("config show", argc - 1, argv + 1, ":h", options, usage, NULL, NULL, NULL);
	if (rc >= 0)
		return rc;
	if (argc - 1 - optind > 1) {
		fprintf(stderr, "toolgate config show: one COMMAND at most (see --help)\n");
		return EXIT_USAGE;
	}
	if (cli_config_load("config show", NULL, &file) < 0)
		return EXIT_DATA;
	return show(file, optind < argc - 1 ? argv[1 + optind] : NULL);
}
