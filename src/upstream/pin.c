/*
 * Pins of an upstream's tool definitions (docs/UPSTREAMS.md, "Pins"): a
 * definition as an upstream lists it reduced to what a model reads of it,
 * in RFC 8785 canonical form (src/schema/jcs.c), and its SHA-256; and the
 * comparison of a listing against the pins kept (toolgate/store.h's
 * tg_store_pin_*), tool by tool. Whether a change is served, held or
 * refused is the caller's (the upstream's "pin" setting), not decided here.
 *
 * Must never: keep a member of a definition outside the six it pins (what
 * else an upstream sends, such as _meta, changes without the tool
 * changing), or read past the bounds of upstream.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "schema/jcs.h"
#include "toolgate/upstream.h"
#include "util/sodium.h"

/* The members of a definition that are pinned: what a model is shown of
 * the tool and what its calls and results must look like. */
static const char *const pinned_members[] = { "name",         "title",        "description",
					      "inputSchema",  "outputSchema", "annotations" };

void tg_pin_definition_release(struct tg_pin_definition *d)
{
	free(d->tool);
	free(d->canonical);
	memset(d, 0, sizeof(*d));
}

/* def's pinned members, a new object; NULL out of memory. */
static json_t *pinned_part(json_t *def)
{
	json_t *part = json_object(), *m;
	size_t i;

	for (i = 0; part && i < sizeof(pinned_members) / sizeof(pinned_members[0]); i++) {
		m = json_object_get(def, pinned_members[i]);
		if (m && json_object_set(part, pinned_members[i], m) < 0) {
			json_decref(part);
			return NULL;
		}
	}
	return part;
}

static int canon_error(int rc, const char *tool, struct tg_error *err)
{
	if (rc == JCS_NOMEM)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (rc == JCS_TOO_LONG)
		return tg_error_set(err, TG_ERR_LIMIT, "tool %s: a canonical definition of more than "
				    "%u bytes", tool, TG_UPSTREAM_MAX_DEFINITION);
	return tg_error_set(err, TG_ERR_INVALID, "tool %s: a value canonical JSON cannot hold (a "
			    "NUL in a string, or nested too deep)", tool);
}

int tg_upstream_definition(const char *json, size_t len, struct tg_pin_definition *out,
			   struct tg_error *err)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	json_t *def = NULL, *part = NULL, *name;
	char why[256];
	size_t clen;
	int rc = -1, jrc;

	tg_error_clear(err);
	memset(out, 0, sizeof(*out));
	if (tg_sodium_load("a tool definition", err) < 0) /* its hash below */
		return -1;
	if (len > TG_UPSTREAM_MAX_DEFINITION)
		return tg_error_set(err, TG_ERR_LIMIT, "a tool definition of %zu bytes, more than %u",
				    len, TG_UPSTREAM_MAX_DEFINITION);
	def = jcs_load(json, len, why, sizeof(why));
	if (!def)
		return tg_error_set(err, TG_ERR_INVALID, "a tool definition: %s", why);
	name = json_object_get(def, "name");
	if (!json_is_object(def)) {
		tg_error_set(err, TG_ERR_INVALID, "a tool definition: not a JSON object");
		goto out;
	}
	if (!json_is_string(name) || !tg_upstream_tool_name_ok(json_string_value(name))) {
		tg_error_set(err, TG_ERR_INVALID, "a tool definition: \"name\" is not a tool's name "
			     "(1 to 128 of A-Z a-z 0-9 _ . -)");
		goto out;
	}
	if (!(out->tool = strdup(json_string_value(name))) || !(part = pinned_part(def))) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	jrc = jcs_dump(part, TG_UPSTREAM_MAX_DEFINITION, &out->canonical, &clen);
	if (jrc != 0) {
		canon_error(jrc, out->tool, err);
		goto out;
	}
	crypto_hash_sha256(h, (const unsigned char *)out->canonical, clen);
	sodium_bin2hex(out->sha256, sizeof(out->sha256), h, sizeof(h));
	rc = 0;
out:
	if (rc < 0)
		tg_pin_definition_release(out);
	json_decref(part);
	json_decref(def);
	return rc;
}

/* ---- the comparison ----------------------------------------------------------- */

static const char *const change_names[] = { "unchanged", "changed", "added", "removed" };

const char *tg_pin_change_name(enum tg_pin_change change)
{
	return (unsigned)change < 4 ? change_names[change] : "?";
}

/* A name and where it came from, to sort and search by name. */
struct named {
	const char *name;
	size_t at;
};

static int named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* v's n names sorted; -1 and err for a NULL name or one given twice
 * (what says where they came from). */
static int sorted_names(struct named *v, size_t n, const char *what, struct tg_error *err)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!v[i].name)
			return tg_error_set(err, TG_ERR_INVALID, "%s %zu: no tool name", what, i);
	qsort(v, n, sizeof(*v), named_cmp);
	for (i = 1; i < n; i++)
		if (strcmp(v[i - 1].name, v[i].name) == 0)
			return tg_error_set(err, TG_ERR_INVALID, "tool %.128s: %s twice", v[i].name,
					    what);
	return 0;
}

int tg_upstream_pins_compare(const struct tg_pin_definition *listed, size_t n,
			     const struct tg_pin_ref *pins, size_t npins,
			     struct tg_pin_verdict **out, size_t *nout, struct tg_error *err)
{
	struct named *byname = NULL, *bypin = NULL, key, *hit;
	struct tg_pin_verdict *v = NULL;
	unsigned char *seen = NULL;
	size_t i, k = 0;
	int rc = -1;

	tg_error_clear(err);
	*out = NULL;
	*nout = 0;
	if (n > TG_UPSTREAM_MAX_LISTED || npins > TG_UPSTREAM_MAX_LISTED)
		return tg_error_set(err, TG_ERR_LIMIT, "pins: %zu tools listed and %zu pinned, more "
				    "than %d", n, npins, TG_UPSTREAM_MAX_LISTED);
	byname = calloc(n + 1, sizeof(*byname));
	bypin = calloc(npins + 1, sizeof(*bypin));
	seen = calloc(npins + 1, 1);
	v = calloc(n + npins + 1, sizeof(*v));
	if (!byname || !bypin || !seen || !v) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		byname[i] = (struct named){ listed[i].tool, i };
	for (i = 0; i < npins; i++)
		bypin[i] = (struct named){ pins[i].tool, i };
	if (sorted_names(byname, n, "listed", err) < 0 || sorted_names(bypin, npins, "pinned", err) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		key.name = listed[i].tool;
		hit = bsearch(&key, bypin, npins, sizeof(*bypin), named_cmp);
		v[k] = (struct tg_pin_verdict){ listed[i].tool, TG_PIN_ADDED, i, SIZE_MAX };
		if (hit) {
			seen[hit->at] = 1;
			v[k].pin = hit->at;
			/* the whole definition, by its hash: any member's change
			 * (a description's word, a schema's bound) is a change */
			v[k].change = pins[hit->at].sha256 &&
						      strcmp(pins[hit->at].sha256, listed[i].sha256) == 0
					      ? TG_PIN_UNCHANGED
					      : TG_PIN_CHANGED;
		}
		k++;
	}
	for (i = 0; i < npins; i++)
		if (!seen[i])
			v[k++] = (struct tg_pin_verdict){ pins[i].tool, TG_PIN_REMOVED, SIZE_MAX, i };
	*out = v;
	*nout = k;
	v = NULL;
	rc = 0;
out:
	free(byname);
	free(bypin);
	free(seen);
	free(v);
	return rc;
}
