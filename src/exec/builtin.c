/*
 * Builtin tools: small tools implemented in C inside the gateway, for
 * what needs no sandbox because it touches nothing outside the call
 * (echo, the time). Anything that reads files, databases or the network
 * is a command tool in the sandbox instead. Plans are not builtins: they
 * are an executor kind of their own, which the gate runs (src/gate/saga.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "util/json_wide.h"

void exec_out_release(struct exec_out *o)
{
	json_decref(o->content);
	json_decref(o->structured);
	json_decref(o->changes);
	free(o->exact);
	o->content = o->structured = o->changes = NULL;
	o->exact = NULL;
}

json_t *exec_text(const char *text)
{
	return json_pack("{s:s,s:s}", "type", "text", "text", text);
}

/* Structured output, and its JSON text as the text block (MCP: a tool
 * that returns structured content should return it serialized too). */
static int structured(struct exec_out *o, json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT);

	o->structured = obj;
	o->content = text ? json_pack("[o]", exec_text(text)) : NULL;
	free(text);
	return o->content ? 0 : -1;
}

/* echo: its arguments back, as structured content; its text block (and
 * the text the output schema is checked on) the arguments as sent where
 * jansson would round a number of them. */
static int builtin_echo(json_t *args, const char *text, size_t len, struct exec_out *o)
{
	size_t n;
	char *exact;

	if (!json_is_object(args) || !json_wide_has_long(text, len))
		return structured(o, json_incref(args));
	exact = json_wide_text(text, len, &n);
	o->structured = json_incref(args);
	o->content = exact ? json_pack("[o]", exec_text(exact)) : NULL;
	o->exact = exact;
	return o->content ? 0 : -1;
}

/* time.now: the gateway's clock, UTC. */
static int builtin_time(json_t *args, const char *text, size_t len, struct exec_out *o)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;

	(void)args;
	(void)text;
	(void)len;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return structured(o, json_pack("{s:s,s:I}", "utc", buf, "unix", (json_int_t)t));
}

static const struct {
	const char *name;
	int (*fn)(json_t *args, const char *text, size_t len, struct exec_out *o);
} builtins[] = {
	{ "echo", builtin_echo },
	{ "time.now", builtin_time },
};

int exec_builtin_exists(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return 1;
	return 0;
}

int exec_builtin(const struct tg_contract *k, json_t *args, const char *text, size_t len,
		 int dry_run, struct exec_out *o, struct tg_error *err)
{
	size_t i;

	(void)dry_run; /* none of these touches anything: its dry run is the call */
	memset(o, 0, sizeof(*o));
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strcmp(builtins[i].name, k->builtin) == 0) {
			if (builtins[i].fn(args, text, len, o) < 0) {
				exec_out_release(o);
				return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			}
			return 0;
		}
	return tg_error_set(err, TG_ERR_INVALID, "no builtin tool named '%s'", k->builtin);
}
