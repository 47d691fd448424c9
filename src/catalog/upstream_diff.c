/*
 * What changed between two definitions of an upstream's tool
 * (include/toolgate/catalog.h, docs/UPSTREAMS.md, "Pins"): the report a
 * person reads before accepting a new definition, in an approval ticket's
 * preview and in `toolgate upstream diff`. The schemas are judged by
 * catalog diff's rules (diff.c: does the new one break callers?); the
 * texts a model reads (title, description, annotations) are shown old and
 * new.
 *
 * Everything the server wrote is shown as a JSON string with every byte
 * outside printable ASCII escaped (\uXXXX): a control character, an
 * invisible or bidirectional one, cannot hide in the report or rewrite a
 * terminal. Each text is shown up to 128 KiB, so that the report fits a
 * ticket's preview. Nothing here starts or reaches a server, or decides anything.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/catalog.h"
#include "toolgate/contract.h"
#include "toolgate/upstream.h"

/* One text shown, at most: a ticket keeps a preview of at most 4 MiB,
 * and a report shows ten texts at most, each escaped again there. */
#define SHOWN_MAX (128 << 10)

struct report {
	char *p;
	size_t len, cap;
	int nomem;
};

static void put(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct report *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	while (!r->nomem) {
		va_start(ap, fmt);
		n = vsnprintf(r->p ? r->p + r->len : NULL, r->p ? r->cap - r->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			r->nomem = 1;
		} else if (r->p && (size_t)n < r->cap - r->len) {
			r->len += (size_t)n;
			return;
		} else {
			size_t cap = r->cap * 2 + (size_t)n + 256;
			char *p = realloc(r->p, cap);

			if (!p)
				r->nomem = 1;
			else
				r->p = p, r->cap = cap;
		}
	}
}

/* v as ASCII-only compact JSON, or "(none)". */
static void put_json(struct report *r, json_t *v)
{
	char *text;

	if (!v) {
		put(r, "(none)");
		return;
	}
	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	if (!text) {
		r->nomem = 1;
		return;
	}
	if (strlen(text) > SHOWN_MAX)
		put(r, "%.*s... (%zu bytes more, not shown; the scanner read them all)", SHOWN_MAX,
		    text, strlen(text) - SHOWN_MAX);
	else
		put(r, "%s", text);
	free(text);
}

/* The title as the contract takes it: its own, or the annotations'. */
static json_t *title_of(json_t *def)
{
	json_t *t = json_object_get(def, "title");

	return t ? t : json_object_get(json_object_get(def, "annotations"), "title");
}

/* One member that a model reads, old and new, when they differ. */
static void texts(struct report *r, const char *what, json_t *old, json_t *now)
{
	if (json_equal(old, now) || (!old && !now))
		return;
	put(r, "  %s was: ", what);
	put_json(r, old);
	put(r, "\n  %s now: ", what);
	put_json(r, now);
	put(r, "\n");
}

/* The schema judgement of catalog diff between the contracts the two
 * definitions make; 1 when it breaks callers. */
static int judged(struct report *r, const struct tg_upstream *u, const char *old_def,
		  size_t old_len, const char *new_def, size_t new_len)
{
	struct tg_contract *o = NULL, *n = NULL;
	struct tg_diff *d = calloc(1, sizeof(*d));
	struct tg_error err;
	int breaking = 1, ro, rn;
	size_t i;

	if (!d) {
		r->nomem = 1;
		return 1;
	}
	ro = tg_catalog_upstream_tool(u, old_def, old_len, &o, &err);
	rn = ro < 0 ? -1 : tg_catalog_upstream_tool(u, new_def, new_len, &n, &err);
	if (ro == 1 || rn == 1) {
		put(r, "  (the declaration hides the tool: not served either way)\n");
		breaking = 0;
	} else if (ro < 0 || rn < 0 || tg_catalog_diff(o, n, d, &err) < 0) {
		/* shown safe: the message may quote the server's text */
		json_t *why = json_string(err.msg);

		put(r, "  the schemas cannot be compared: ");
		put_json(r, why);
		put(r, " (judged breaking)\n");
		json_decref(why);
	} else {
		for (i = 0; i < d->n; i++) {
			json_t *f = json_string(d->findings[i].text);

			put(r, "  %s: ", d->findings[i].breaking ? "breaking" : "compatible");
			put_json(r, f);
			put(r, "\n");
			json_decref(f);
		}
		breaking = d->breaking;
	}
	tg_contract_free(o);
	tg_contract_free(n);
	free(d);
	return breaking;
}

int tg_catalog_upstream_diff(const struct tg_upstream *u, const char *old_def, size_t old_len,
			     const char *new_def, size_t new_len, char **text, int *breaking,
			     struct tg_error *err)
{
	struct report r = { 0 };
	json_t *o = NULL, *n, *name;
	static const char *const schemas[] = { "inputSchema", "outputSchema" };
	size_t i;

	*text = NULL;
	*breaking = 0;
	tg_error_clear(err);
	if ((old_def && old_len > TG_UPSTREAM_MAX_DEFINITION) || new_len > TG_UPSTREAM_MAX_DEFINITION)
		return tg_error_set(err, TG_ERR_LIMIT, "upstream %s: a tool's definition is over "
				    "%u bytes", u->name, TG_UPSTREAM_MAX_DEFINITION);
	n = json_loadb(new_def, new_len, JSON_REJECT_DUPLICATES, NULL);
	if (old_def)
		o = json_loadb(old_def, old_len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(n) || (old_def && !json_is_object(o))) {
		json_decref(n);
		json_decref(o);
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: a definition that is not a "
				    "JSON object", u->name);
	}
	name = json_object_get(n, "name");
	put(&r, "upstream %s: tool ", u->name);
	put_json(&r, name);
	if (!o) {
		/* added: the whole of what a model would read */
		put(&r, ": added\n");
		texts(&r, "title", NULL, title_of(n));
		texts(&r, "description", NULL, json_object_get(n, "description"));
		for (i = 0; i < 2; i++)
			texts(&r, schemas[i], NULL, json_object_get(n, schemas[i]));
		texts(&r, "annotations", NULL, json_object_get(n, "annotations"));
		*breaking = 0;
	} else {
		put(&r, ": changed\n");
		*breaking = judged(&r, u, old_def, old_len, new_def, new_len);
		texts(&r, "title", title_of(o), title_of(n));
		texts(&r, "description", json_object_get(o, "description"),
		      json_object_get(n, "description"));
		for (i = 0; i < 2; i++)
			texts(&r, schemas[i], json_object_get(o, schemas[i]),
			      json_object_get(n, schemas[i]));
		texts(&r, "annotations", json_object_get(o, "annotations"),
		      json_object_get(n, "annotations"));
		put(&r, "  judged %s for its callers\n", *breaking ? "breaking" : "compatible");
	}
	json_decref(o);
	json_decref(n);
	if (r.nomem) {
		free(r.p);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	*text = r.p;
	return 0;
}
