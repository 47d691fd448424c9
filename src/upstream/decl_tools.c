/*
 * An upstream declaration's credentials and tools (docs/UPSTREAMS.md;
 * the rest of the file is decl.c's).
 *
 * A credential is a path: the file must be a regular file of the caller's,
 * mode 0600 or stricter, not under /proc or /dev, when the declaration
 * loads, and it is never read here, so the secret never sits in the parsed
 * declaration nor in an error message. A tool whose declaration does not say read is a write: the
 * server's own readOnlyHint is the server's claim, and the gateway holds a
 * write for approval whatever the server says.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "upstream/secret.h"
#include "upstream/upstream_int.h"

#define MAX_CREDENTIALS 64
#define MAX_TOOL_NAME 128 /* MCP's tool names, the exposed ones included */

#define MAX_ARGS_TEXT (16 * 1024) /* a compensation's arguments, serialized */
#define MAX_ARGS_KEY 256

/* Headers the gateway itself sets on a request to an HTTP upstream, or
 * that speak to a proxy or to the connection rather than to the server: a
 * credential under one of these names would fight the transport. */
static const char *const transport_headers[] = {
	"Host", "Content-Type", "Content-Length", "Accept", "Accept-Encoding", "Connection",
	"Keep-Alive", "Transfer-Encoding", "TE", "Trailer", "Upgrade", "Expect",
	"Proxy-Authorization", "Proxy-Connection", "Mcp-Session-Id", "Mcp-Protocol-Version",
	"Last-Event-ID", "Mcp-Method", "Mcp-Name", NULL,
};

/* RFC 9110 tchar: an HTTP header name, 1 to 128 of them. */
static int header_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 1 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
			return 0;
	return 1;
}

int tg_upstream_tool_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > MAX_TOOL_NAME)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return 0;
	return 1;
}

/* path is /proc or /dev or below one: the kernel's files, never a
 * secret's (/proc/self/environ is a regular file of the caller's, mode
 * 0400, and holds the gateway's own environment). */
static int kernel_path(const char *path)
{
	return (strncmp(path, "/proc", 5) == 0 && (path[5] == '/' || !path[5])) ||
	       (strncmp(path, "/dev", 4) == 0 && (path[4] == '/' || !path[4]));
}

int upstream_secret_check(const struct stat *st, const char *given, const char *real, char *why,
			  size_t len)
{
	/* a link that resolves nowhere (/dev/stdin on a pipe) is judged
	 * by the path it was given */
	if (kernel_path(given) || !real || kernel_path(real))
		snprintf(why, len, "is under /proc or /dev: a secret's file is an ordinary file "
			 "of its own");
	else if (!S_ISREG(st->st_mode))
		snprintf(why, len, "is not a regular file");
	else if (st->st_uid != geteuid())
		snprintf(why, len, "is owned by uid %u, not by this user (uid %u)",
			 (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_mode & 077)
		snprintf(why, len, "has mode %04o: a secret's file is 0600 or stricter (chmod 600)",
			 (unsigned)(st->st_mode & 07777));
	else
		return 0;
	return -1;
}

/* The file a secret will be read from, checked without reading it. */
static int secret_file(struct up_loader *l, const char *field, const char *path)
{
	struct stat st;
	char *real, why[128];
	int rc;

	if (!up_absolute(path))
		return jload_bad(&l->j, field, "%.200s: must be an absolute path to the secret's file", path);
	if (stat(path, &st) < 0)
		return jload_bad(&l->j, field, "%.200s: %s", path, strerror(errno));
	real = realpath(path, NULL); /* where it resolves, links followed */
	rc = upstream_secret_check(&st, path, real, why, sizeof(why));
	free(real);
	return rc < 0 ? jload_bad(&l->j, field, "%.200s %s", path, why) : 0;
}

/* name is refused as a credential's (header or variable) for this upstream:
 * why, or NULL. */
static const char *credential_clash(const struct tg_upstream *u, const char *name)
{
	size_t i, n = strlen(name);

	if (u->transport == TG_UPSTREAM_HTTP) {
		for (i = 0; transport_headers[i]; i++)
			if (strcasecmp(name, transport_headers[i]) == 0)
				return "is a header the gateway's transport sets";
		/* the 2026-07-28 era's mirrors of a call's arguments */
		if (strncasecmp(name, "Mcp-Param-", 10) == 0)
			return "is a header the gateway's transport sets";
		for (i = 0; i < u->ncredentials; i++)
			if (u->credentials[i].name && strcasecmp(name, u->credentials[i].name) == 0)
				return "is given twice (header names ignore case)";
		return NULL;
	}
	if (strncmp(name, "TOOLGATE_", 9) == 0)
		return "TOOLGATE_ names are the gateway's";
	for (i = 0; u->env && u->env[i]; i++)
		if (strncmp(u->env[i], name, n) == 0 && u->env[i][n] == '=')
			return "is also set in env: a variable is a secret or not";
	return NULL;
}

int up_load_credentials(struct up_loader *l, json_t *doc)
{
	static const char *const fields[] = { "env", "header", NULL };
	struct tg_upstream *u = l->u;
	json_t *c = json_object_get(doc, "credentials"), *set, *v;
	int http = u->transport == TG_UPSTREAM_HTTP;
	const char *where = http ? "credentials.header" : "credentials.env", *key, *why;

	if (!c)
		return 0;
	if (!json_is_object(c))
		return jload_bad(&l->j, "credentials", "must be an object");
	if (jload_only(&l->j, c, "credentials", fields) < 0)
		return -1;
	if (json_object_get(c, http ? "env" : "header"))
		return jload_bad(&l->j, http ? "credentials.env" : "credentials.header", http
			      ? "is for stdio upstreams: an http upstream's secrets travel in "
				"headers (credentials.header)"
			      : "is for http upstreams: a stdio server's secrets are given in its "
				"environment (credentials.env)");
	set = json_object_get(c, http ? "header" : "env");
	if (!set)
		return 0;
	if (!json_is_object(set) || json_object_size(set) > MAX_CREDENTIALS)
		return jload_bad(&l->j, where, "must be an object of at most %d %s, each the path of a "
			      "file", MAX_CREDENTIALS, http ? "headers" : "variables");
	u->credentials = calloc(json_object_size(set) + 1, sizeof(*u->credentials));
	if (!u->credentials)
		return jload_nomem(&l->j);
	json_object_foreach(set, key, v) {
		struct tg_upstream_credential *cr = &u->credentials[u->ncredentials];
		char field[JLOAD_MAX_FIELD];

		jload_field(field, sizeof(field), where, key);
		if (http ? !header_name_ok(key) : !up_env_name(key))
			return jload_bad(&l->j, field, http ? "a header's name is 1 to 128 HTTP token "
				      "characters" : "a variable's name is a letter or _ and then "
				      "letters, digits or _, at most 128");
		if ((why = credential_clash(u, key)))
			return jload_bad(&l->j, field, "%s", why);
		u->ncredentials++;
		if (!(cr->name = strdup(key)))
			return jload_nomem(&l->j);
		if (jload_string(&l->j, v, field, UPSTREAM_MAX_TEXT, &cr->path) < 0 ||
		    secret_file(l, field, cr->path) < 0)
			return -1;
	}
	return 0;
}

/* A compensation's argument mapping: the placeholders a contract's take
 * (docs/contracts.md, "compensation"), "${call_id}" and
 * "${arguments.NAME}", each a whole string; any other "${" is refused. */
static int mapping_ok(json_t *v, int depth)
{
	const char *s = json_string_value(v), *key;
	size_t i, n;
	json_t *item;

	if (depth > 16)
		return 0;
	if (s && strstr(s, "${")) {
		n = strlen(s);
		return strcmp(s, "${call_id}") == 0 ||
		       (strncmp(s, "${arguments.", 12) == 0 && n > 13 && s[n - 1] == '}' &&
			strcspn(s + 12, "}") == n - 13);
	}
	json_object_foreach(v, key, item)
		if (strlen(key) > MAX_ARGS_KEY || !mapping_ok(item, depth + 1))
			return 0;
	json_array_foreach(v, i, item)
		if (!mapping_ok(item, depth + 1))
			return 0;
	return 1;
}

static int load_compensation(struct up_loader *l, struct tg_upstream_tool *t, json_t *comp,
			     const char *where)
{
	static const char *const fields[] = { "tool", "arguments", "irreversible", NULL };
	char field[JLOAD_MAX_FIELD], sub[JLOAD_MAX_FIELD];
	json_t *args;

	jload_field(field, sizeof(field), where, "compensation");
	if (t->authority == TG_UPSTREAM_READ)
		return jload_bad(&l->j, field, "is a write's rollback story: a read has nothing to undo");
	if (!json_is_object(comp))
		return jload_bad(&l->j, field, "must be an object");
	if (jload_only(&l->j, comp, field, fields) < 0)
		return -1;
	jload_field(sub, sizeof(sub), field, "tool");
	if (json_object_get(comp, "tool") &&
	    jload_string(&l->j, json_object_get(comp, "tool"), sub, UPSTREAM_MAX_TEXT,
		      &t->compensation_tool) < 0)
		return -1;
	jload_field(sub, sizeof(sub), field, "irreversible");
	if (json_object_get(comp, "irreversible") &&
	    jload_string(&l->j, json_object_get(comp, "irreversible"), sub, UPSTREAM_MAX_TEXT,
		      &t->irreversible) < 0)
		return -1;
	if (!!t->compensation_tool == !!t->irreversible || (t->irreversible && !t->irreversible[0]))
		return jload_bad(&l->j, field, "either a tool that undoes the write, or irreversible "
			      "with a reason");
	args = json_object_get(comp, "arguments");
	jload_field(sub, sizeof(sub), field, "arguments");
	if (args && (!t->compensation_tool || !json_is_object(args)))
		return jload_bad(&l->j, sub, "an object mapping the undo tool's arguments, with tool");
	if (args && !mapping_ok(args, 0))
		return jload_bad(&l->j, sub, "a placeholder is \"${call_id}\" or \"${arguments.NAME}\", "
			      "the whole string; at most 16 deep, each key at most %d bytes",
			      MAX_ARGS_KEY);
	if (args && !(t->compensation_args = json_dumps(args, JSON_COMPACT)))
		return jload_nomem(&l->j);
	if (args && strlen(t->compensation_args) > MAX_ARGS_TEXT)
		return jload_bad(&l->j, sub, "at most %d bytes as compact JSON", MAX_ARGS_TEXT);
	return 0;
}

/* One of words (NULL-terminated) in v, its index; def when v is absent;
 * -1 otherwise. */
static int word(json_t *v, const char *const *words, int def)
{
	const char *s = json_string_value(v);
	int i;

	if (!v)
		return def;
	for (i = 0; words[i]; i++)
		if (s && strcmp(s, words[i]) == 0)
			return i;
	return -1;
}

/* "unsupported", or {"argument": NAME}: the boolean argument that asks
 * the server to show what the call would do instead of doing it (the
 * filesystem server's dryRun). There is no dry run MCP itself asks for,
 * and a server that ignores a flag it does not know would do the write in
 * what the approver takes for its preview: so the argument is named,
 * and a listing whose schema has no such boolean withdraws the tool. */
static int load_dry_run(struct up_loader *l, struct tg_upstream_tool *t, json_t *v,
			const char *field)
{
	static const char *const fields[] = { "argument", NULL };
	const char *a;

	if (json_is_string(v) && strcmp(json_string_value(v), "unsupported") == 0)
		return 0;
	if (json_is_string(v) && strcmp(json_string_value(v), "supported") == 0)
		return jload_bad(&l->j, field, "name the boolean argument that asks the server for a dry "
			      "run: {\"argument\": \"dryRun\"} (MCP has no dry run of its own)");
	if (!json_is_object(v))
		return jload_bad(&l->j, field, "must be unsupported (the default) or {\"argument\": "
			      "NAME}");
	if (jload_only(&l->j, v, field, fields) < 0)
		return -1;
	a = json_string_value(json_object_get(v, "argument"));
	if (!a || !a[0] || strlen(a) > 128)
		return jload_bad(&l->j, field, "argument: required, the name (1 to 128 bytes) of the "
			      "tool's boolean argument that asks for a dry run");
	t->dry_run_argument = strdup(a);
	if (!t->dry_run_argument)
		return jload_nomem(&l->j);
	t->dry_run = 1;
	return 0;
}

static int load_tool(struct up_loader *l, struct tg_upstream_tool *t, json_t *o,
		     const char *where)
{
	static const char *const fields[] = { "authority", "dry_run", "compensation", "tasks",
					      "rename", "hide", NULL };
	static const char *const auth[] = { "write", "read", NULL };
	static const char *const tasks[] = { "forbidden", "optional", "required", NULL };
	char field[JLOAD_MAX_FIELD];
	json_t *v;
	const char *rename;
	int i;

	if (!json_is_object(o))
		return jload_bad(&l->j, where, "must be an object");
	if (jload_only(&l->j, o, where, fields) < 0)
		return -1;
	jload_field(field, sizeof(field), where, "authority");
	if ((i = word(json_object_get(o, "authority"), auth, TG_UPSTREAM_WRITE)) < 0)
		return jload_bad(&l->j, field, "must be read or write (a tool with none given is a write)");
	t->authority = (enum tg_upstream_authority)i;
	jload_field(field, sizeof(field), where, "dry_run");
	if ((v = json_object_get(o, "dry_run")) && load_dry_run(l, t, v, field) < 0)
		return -1;
	jload_field(field, sizeof(field), where, "tasks");
	i = word(json_object_get(o, "tasks"), tasks, t->authority == TG_UPSTREAM_WRITE
						     ? TG_UPSTREAM_TASKS_OPTIONAL
						     : TG_UPSTREAM_TASKS_FORBIDDEN);
	if (i < 0)
		return jload_bad(&l->j, field, "must be forbidden, optional or required");
	t->tasks = (enum tg_upstream_tasks)i;
	if ((v = json_object_get(o, "compensation")) && load_compensation(l, t, v, where) < 0)
		return -1;
	jload_field(field, sizeof(field), where, "hide");
	if (jload_bool(&l->j, o, "hide", field, &t->hide) < 0)
		return -1;
	jload_field(field, sizeof(field), where, "rename");
	if ((v = json_object_get(o, "rename")) &&
	    (!json_is_string(v) || !tg_upstream_tool_name_ok(json_string_value(v))))
		return jload_bad(&l->j, field, "a tool's name: 1 to 128 of A-Z a-z 0-9 _ . -");
	rename = v ? json_string_value(v) : t->name;
	if (asprintf(&t->exposed, "%s.%s", l->u->name, rename) < 0) {
		t->exposed = NULL;
		return jload_nomem(&l->j);
	}
	if (strlen(t->exposed) > MAX_TOOL_NAME)
		return jload_bad(&l->j, v ? field : where, "the exposed name %.140s... is longer than %d "
			      "characters (say a shorter rename)", t->exposed, MAX_TOOL_NAME);
	return 0;
}

/* Two tools served under one name: the second's index (OUT *first the
 * first's), or 0. */
static size_t exposed_twice(const struct tg_upstream *u, size_t *first)
{
	size_t i, j;

	for (j = 1; j < u->ntools; j++)
		for (i = 0; i < j; i++)
			if (!u->tools[i].hide && !u->tools[j].hide &&
			    strcmp(u->tools[i].exposed, u->tools[j].exposed) == 0) {
				*first = i;
				return j;
			}
	return 0;
}

int up_load_tools(struct up_loader *l, json_t *doc)
{
	struct tg_upstream *u = l->u;
	json_t *tools = json_object_get(doc, "tools"), *v;
	char where[JLOAD_MAX_FIELD];
	const char *key;
	size_t i, first = 0;

	if (!tools)
		return 0;
	if (!json_is_object(tools) || json_object_size(tools) > TG_UPSTREAM_MAX_TOOLS)
		return jload_bad(&l->j, "tools", "must be an object of at most %d tools, by the "
			      "upstream's name of each", TG_UPSTREAM_MAX_TOOLS);
	u->tools = calloc(json_object_size(tools) + 1, sizeof(*u->tools));
	if (!u->tools)
		return jload_nomem(&l->j);
	json_object_foreach(tools, key, v) {
		struct tg_upstream_tool *t = &u->tools[u->ntools];

		jload_field(where, sizeof(where), "tools", key);
		if (!tg_upstream_tool_name_ok(key))
			return jload_bad(&l->j, where, "a tool's name is 1 to 128 of A-Z a-z 0-9 _ . -");
		u->ntools++;
		if (!(t->name = strdup(key)))
			return jload_nomem(&l->j);
		if (load_tool(l, t, v, where) < 0)
			return -1;
	}
	if ((i = exposed_twice(u, &first))) {
		jload_field(where, sizeof(where), "tools", u->tools[i].name);
		return jload_bad(&l->j, where, "exposed as %s, as tools.%s is: one name, one tool",
			      u->tools[i].exposed, u->tools[first].name);
	}
	return 0;
}
