/*
 * The catalogue (include/toolgate/catalog.h): contracts loaded from a
 * directory, version resolution with deprecation and sunset, and the MCP
 * tool definitions derived from contracts, never from callers. Resources
 * and prompts are content.c's, upstreams' declarations upstreams.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog/catalog_int.h"
#include "toolgate/scan.h"
#include "util/jload.h"

#define MAX_CONTRACTS 4096

static int by_name_version(const void *a, const void *b)
{
	const struct tg_contract *x = *(const struct tg_contract *const *)a;
	const struct tg_contract *y = *(const struct tg_contract *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : tg_semver_compare(&x->version, &y->version);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void catalog_free_files(char **files)
{
	size_t i;

	for (i = 0; files && files[i]; i++)
		free(files[i]);
	free(files);
}

char **catalog_json_files(const char *dir, int missing_ok, struct tg_error *err)
{
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, len;
	DIR *d = opendir(dir);

	if (!d && missing_ok && errno == ENOENT) {
		/* none: an empty list (which may itself fail to be made) */
		if (!(v = calloc(1, sizeof(*v))))
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return v;
	}
	if (!d) {
		tg_error_sys(err, errno, "catalog %s", dir);
		return NULL;
	}
	v = calloc(MAX_CONTRACTS + 1, sizeof(*v));
	if (!v) {
		closedir(d);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
			continue;
		if (n == MAX_CONTRACTS) {
			tg_error_set(err, TG_ERR_LIMIT, "catalog %s: more than %d contracts", dir,
				     MAX_CONTRACTS);
			goto fail;
		}
		if (asprintf(&v[n++], "%s/%s", dir, e->d_name) < 0) {
			v[--n] = NULL;
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			goto fail;
		}
	}
	closedir(d);
	qsort(v, n, sizeof(*v), by_string);
	return v;
fail:
	closedir(d);
	catalog_free_files(v);
	return NULL;
}

/* The first name@version that two contracts share (c->v sorted), or 0. */
static size_t find_duplicate(const struct tg_catalog *c, size_t from)
{
	size_t i;

	for (i = from ? from : 1; i < c->n; i++)
		if (by_name_version(&c->v[i - 1], &c->v[i]) == 0)
			return i;
	return 0;
}

static void duplicate_error(const char *dir, const struct tg_catalog *c, size_t i,
			    struct tg_error *err)
{
	tg_error_set(err, TG_ERR_INVALID, "catalog %s: %s@%s is in both %s and %s", dir,
		     c->v[i]->name, c->v[i]->version_text, c->v[i - 1]->file, c->v[i]->file);
}

/* Each compensation names a write tool of the catalogue: a rollback
 * story that points nowhere is found at load, not at the first rollback.
 * From index from; the index of the first that does not, 0 for none. */
static size_t bad_compensation(const struct tg_catalog *c, size_t from, struct tg_error *err)
{
	const struct tg_contract *undo;
	struct tg_error rerr;
	size_t i;

	for (i = from; i < c->n; i++) {
		if (!c->v[i]->compensation_tool)
			continue;
		if (tg_catalog_resolve(c, c->v[i]->compensation_tool, "0000-01-01", &undo, &rerr) < 0) {
			/* the catalogue is what is wrong (INVALID), even when the
			 * tool it names is retired (UNAVAILABLE from resolve) */
			tg_error_set(err, TG_ERR_INVALID, "contract %s: compensation.tool: %s",
				     c->v[i]->file, rerr.msg);
			return i + 1;
		}
		if (undo->authority != TG_AUTHORITY_WRITE) {
			tg_error_set(err, TG_ERR_INVALID, "contract %s: compensation.tool: %s@%s is a "
				     "read tool, and undoing a write writes", c->v[i]->file,
				     undo->name, undo->version_text);
			return i + 1;
		}
	}
	return 0;
}

int tg_catalog_load_dir(const char *dir, const struct tg_schema_options *opts,
			struct tg_catalog **out, struct tg_error *err)
{
	struct tg_catalog *c;
	char **files;
	size_t i;

	*out = NULL;
	tg_error_clear(err);
	files = catalog_json_files(dir, 0, err);
	if (!files)
		return -1;
	c = calloc(1, sizeof(*c));
	if (c)
		for (i = 0; files[i]; i++)
			;
	if (!c || !(c->v = calloc(i + 1, sizeof(*c->v)))) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; files[i]; i++) {
		if (tg_contract_load(files[i], opts, &c->v[c->n], err) < 0)
			goto fail;
		c->n++;
	}
	qsort(c->v, c->n, sizeof(*c->v), by_name_version);
	if ((i = find_duplicate(c, 0))) {
		duplicate_error(dir, c, i, err);
		goto fail;
	}
	if (bad_compensation(c, 0, err) || catalog_load_content(c, dir, err) < 0 ||
	    catalog_load_upstreams(c, dir, err) < 0)
		goto fail;
	catalog_free_files(files);
	*out = c;
	return 0;
fail:
	catalog_free_files(files);
	tg_catalog_free(c);
	return -1;
}

/* A folder of dir named nearly upstreams (upstream, Upstreams,
 * upstreams.d): nothing loads it, and nothing else would say so, so the
 * declarations in it would never be served without a word. The number
 * reported. */
static int lint_near_upstreams(const char *dir, void (*report)(const char *line, void *ctx),
			       void *ctx)
{
	char name[JLOAD_MAX_FIELD], line[1024];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0; /* catalog_json_files has said why */
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, "upstreams") == 0 || e->d_name[0] == '.' ||
		    jload_distance(e->d_name, "upstreams") > 2 ||
		    fstatat(dirfd(d), e->d_name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
			continue;
		jload_field(name, sizeof(name), "", e->d_name); /* its bytes made printable */
		snprintf(line, sizeof(line), "catalog %s: folder %s/ is not read: upstreams' "
			 "declarations go in %s/upstreams/", dir, name, dir);
		report(line, ctx);
		n++;
	}
	closedir(d);
	return n;
}

int tg_catalog_lint(const char *dir, const struct tg_schema_options *opts,
		    void (*report)(const char *line, void *ctx), void *ctx, size_t *files_read,
		    size_t *upstreams_read, struct tg_error *err)
{
	struct tg_catalog c = { .v = NULL };
	struct tg_error lerr;
	char **files, line[1024];
	size_t i, k;
	int problems = 0, up;

	*files_read = 0;
	*upstreams_read = 0;
	tg_error_clear(err);
	files = catalog_json_files(dir, 0, err);
	if (!files)
		return -1;
	for (i = 0; files[i]; i++)
		;
	*files_read = i;
	c.v = calloc(i + 1, sizeof(*c.v));
	if (!c.v) {
		catalog_free_files(files);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* every file on its own, so one run reports every problem */
	for (i = 0; files[i]; i++) {
		if (tg_contract_load(files[i], opts, &c.v[c.n], &lerr) == 0) {
			c.n++;
		} else {
			report(lerr.msg, ctx);
			problems++;
		}
	}
	catalog_free_files(files);
	qsort(c.v, c.n, sizeof(*c.v), by_name_version);
	for (i = find_duplicate(&c, 0); i; i = find_duplicate(&c, i + 1)) {
		duplicate_error(dir, &c, i, &lerr);
		report(lerr.msg, ctx);
		problems++;
	}
	for (i = 1; i < c.n; i++) {
		const struct tg_contract *o = c.v[i - 1], *n = c.v[i];
		struct tg_diff d;

		if (strcmp(o->name, n->name) != 0 || o->version.major != n->version.major ||
		    tg_catalog_diff(o, n, &d, &lerr) < 0 || !d.breaking)
			continue;
		snprintf(line, sizeof(line), "%s: %s@%s breaks callers of %s without a major "
			 "version bump:", n->file, n->name, n->version_text, o->version_text);
		report(line, ctx);
		for (k = 0; k < d.n; k++)
			if (d.findings[k].breaking) {
				snprintf(line, sizeof(line), "    %s", d.findings[k].text);
				report(line, ctx);
			}
		problems++;
	}
	for (i = bad_compensation(&c, 0, &lerr); i; i = bad_compensation(&c, i, &lerr)) {
		report(lerr.msg, ctx);
		problems++;
	}
	/* what the model reads of each tool: nothing addressed to it
	 * (docs/SCANNING.md) */
	for (i = 0; i < c.n; i++) {
		struct tg_scan_finding f[16];
		size_t n = tg_scan_contract(c.v[i], f, 16);
		char what[400];

		for (k = 0; k < n && k < 16; k++) {
			tg_scan_describe(&f[k], what, sizeof(what));
			snprintf(line, sizeof(line), "%s: %s@%s: %s", c.v[i]->file, c.v[i]->name,
				 c.v[i]->version_text, what);
			report(line, ctx);
		}
		problems += n > 0;
	}
	/* resources and prompts: the first problem there (they load as one) */
	if (catalog_load_content(&c, dir, &lerr) < 0) {
		report(lerr.msg, ctx);
		problems++;
	}
	problems += lint_near_upstreams(dir, report, ctx);
	/* the upstreams' declarations, each on its own, and their names
	 * against the contracts' */
	up = catalog_lint_upstreams(&c, dir, report, ctx, upstreams_read, err);
	catalog_free_upstreams(&c);
	catalog_free_content(&c);
	for (i = 0; i < c.n; i++)
		tg_contract_free(c.v[i]);
	free(c.v);
	return up < 0 ? -1 : problems + up;
}

void tg_catalog_free(struct tg_catalog *c)
{
	size_t i;

	if (!c)
		return;
	if (c->base) {
		/* what it has of its base is the base's */
		for (i = 0; i < c->nown; i++)
			tg_contract_free(c->own[i]);
		free(c->own);
	} else {
		for (i = 0; i < c->n; i++)
			tg_contract_free(c->v[i]);
		catalog_free_upstreams(c);
	}
	free(c->v);
	catalog_free_content(c);
	free(c);
}

/* *name with prefix from (a folder: followed by '/') made to: 0, or -1. */
static int rebase_one(char **name, const char *from, const char *to)
{
	size_t fl = strlen(from);
	char *again;

	if (!*name || strncmp(*name, from, fl) != 0 || (*name)[fl] != '/')
		return 0;
	if (asprintf(&again, "%s%s", to, *name + fl) < 0)
		return -1;
	free(*name);
	*name = again;
	return 0;
}

/* Each "_file" of list's definitions (content.c) so made. */
static int rebase_list(json_t *list, const char *from, const char *to)
{
	json_t *v;
	size_t i;

	json_array_foreach(list, i, v) {
		char *name = json_is_string(json_object_get(v, "_file"))
				     ? strdup(json_string_value(json_object_get(v, "_file")))
				     : NULL;
		int rc = name ? rebase_one(&name, from, to) : 0;

		if (rc == 0 && name)
			rc = json_object_set_new(v, "_file", json_string(name));
		free(name);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int tg_catalog_rebase(struct tg_catalog *c, const char *from, const char *to)
{
	size_t i;

	if (c->base) /* a derived catalogue's files are its base's */
		return 0;
	for (i = 0; i < c->n; i++)
		if (rebase_one(&c->v[i]->file, from, to) < 0)
			return -1;
	for (i = 0; i < c->nup; i++)
		if (rebase_one(&c->up[i]->file, from, to) < 0)
			return -1;
	return rebase_list(c->resources, from, to) < 0 || rebase_list(c->templates, from, to) < 0 ||
			       rebase_list(c->prompts, from, to) < 0
		       ? -1
		       : 0;
}

int tg_catalog_derive(const struct tg_catalog *base, struct tg_contract **tools, size_t n,
		      struct tg_catalog **out, struct tg_error *err)
{
	struct tg_catalog *c;
	size_t i, j;

	*out = NULL;
	tg_error_clear(err);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->v = calloc(base->n + n + 1, sizeof(*c->v))) ||
	    !(c->own = calloc(n + 1, sizeof(*c->own)))) {
		if (c)
			free(c->v);
		free(c);
		for (i = 0; i < n; i++)
			tg_contract_free(tools[i]);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	c->base = base;
	if (n) {
		memcpy(c->own, tools, n * sizeof(*tools));
		memcpy(c->v + base->n, tools, n * sizeof(*tools));
	}
	c->nown = n;
	if (base->n)
		memcpy(c->v, base->v, base->n * sizeof(*c->v));
	c->n = base->n + n;
	c->resources = json_incref(base->resources);
	c->templates = json_incref(base->templates);
	c->prompts = json_incref(base->prompts);
	c->up = base->up;
	c->nup = base->nup;
	qsort(c->v, c->n, sizeof(*c->v), by_name_version);
	/* a tool has one name: the namespaces keep an upstream's apart from
	 * the contracts, and the gate gives each name once; said if not */
	for (i = 1; i < c->n; i++)
		if (strcmp(c->v[i - 1]->name, c->v[i]->name) == 0)
			for (j = 0; j < n; j++)
				if (tools[j] == c->v[i - 1] || tools[j] == c->v[i]) {
					tg_error_set(err, TG_ERR_INVALID, "%s: served twice",
						     c->v[i]->name);
					tg_catalog_free(c);
					return -1;
				}
	*out = c;
	return 0;
}

size_t tg_catalog_count(const struct tg_catalog *c)
{
	return c ? c->n : 0;
}

const struct tg_contract *tg_catalog_at(const struct tg_catalog *c, size_t i)
{
	return c && i < c->n ? c->v[i] : NULL;
}

/* "1", "1.2" or "1.2.3[-pre]": how many numbers were given. */
static int parse_partial(const char *s, struct tg_semver *v)
{
	unsigned long n[3] = { 0, 0, 0 };
	int given = 0;
	char *end;

	memset(v, 0, sizeof(*v));
	if (tg_semver_parse(s, v) == 0)
		return 3;
	while (given < 3) {
		if (*s < '0' || *s > '9')
			return -1;
		n[given++] = strtoul(s, &end, 10);
		if (n[given - 1] > 999999)
			return -1;
		s = end;
		if (*s == '\0')
			break;
		if (*s++ != '.')
			return -1;
	}
	if (*s || given == 3)
		return -1;
	v->major = (unsigned)n[0];
	v->minor = (unsigned)n[1];
	return given;
}

static int matches(const struct tg_contract *c, const struct tg_semver *want, int given,
		   const char *text)
{
	if (given == 4)
		return strcmp(c->version_text, text) == 0;
	if (given == 3)
		return tg_semver_compare(&c->version, want) == 0;
	if (c->version.pre[0])
		return 0; /* ranges never pick a pre-release */
	return c->version.major == want->major && (given < 2 || c->version.minor == want->minor);
}

int tg_catalog_resolve(const struct tg_catalog *c, const char *ref, const char *today,
		       const struct tg_contract **out, struct tg_error *err)
{
	const struct tg_contract *best = NULL, *best_live = NULL;
	struct tg_semver want;
	char name[129], date[11], ver[64];
	const char *at = strchr(ref, '@');
	size_t nl = at ? (size_t)(at - ref) : strlen(ref), i;
	int given = 0;

	*out = NULL;
	tg_error_clear(err);
	if (nl == 0 || nl >= sizeof(name))
		return tg_error_set(err, TG_ERR_INVALID, "tool '%.140s': not a tool name", ref);
	memcpy(name, ref, nl);
	name[nl] = '\0';
	/* 1.2.3+build: only an upstream's tools have one (0.0.0+D, its
	 * definition), named whole */
	if (at && strchr(at + 1, '+')) {
		size_t vl = strcspn(at + 1, "+");

		given = -1;
		if (vl < sizeof(ver)) {
			memcpy(ver, at + 1, vl);
			ver[vl] = '\0';
			given = tg_semver_parse(ver, &want) == 0 ? 4 : -1;
		}
	} else if (at)
		given = parse_partial(at + 1, &want);
	if (given < 0)
		return tg_error_set(err, TG_ERR_INVALID,
				    "tool '%.140s': the version must be 1, 1.2 or 1.2.3 (or an "
				    "upstream tool's whole 0.0.0+D)", ref);
	if (!today) {
		time_t t = time(NULL);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
		today = date;
	}
	for (i = 0; i < c->n; i++) {
		const struct tg_contract *k = c->v[i];

		if (strcmp(k->name, name) != 0)
			continue;
		if (at ? !matches(k, &want, given, at + 1) : k->version.pre[0] != '\0')
			continue;
		best = k; /* sorted ascending: the last match is the highest */
		if (!k->deprecated_since)
			best_live = k;
	}
	if (best_live && (!at || given < 3))
		best = best_live;
	if (!best)
		return tg_error_set(err, TG_ERR_INVALID, "tool '%.140s': no such tool%s", ref,
				    at ? " version" : "");
	if (best->sunset && strcmp(today, best->sunset) >= 0)
		return tg_error_set(err, TG_ERR_UNAVAILABLE,
				    "tool %s@%s was retired on %s%s%s", best->name, best->version_text,
				    best->sunset, best->replacement ? "; use " : "",
				    best->replacement ? best->replacement : "");
	*out = best;
	return 0;
}

static json_t *bundled(const struct tg_schema *schema)
{
	char *text = tg_schema_bundle(schema, NULL);
	json_t *j = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;

	free(text);
	return j;
}

char *tg_catalog_mcp_tool(const struct tg_contract *k, const char *exposed, struct tg_error *err)
{
	json_t *o = json_object(), *ann = json_object(), *in = NULL, *outs = NULL;
	char *text = NULL;
	int destructive, bad = 0;

	tg_error_clear(err);
	if (!o || !ann)
		goto fail;
	/* self-contained: the shared schemas a contract references are
	 * embedded, a client has no access to the catalogue's files */
	in = bundled(k->input_schema);
	if (k->output_schema)
		outs = bundled(k->output_schema);
	if (!in || (k->output_schema && !outs))
		goto fail;
	/* every hint from the contract: a caller's claims never reach here */
	destructive = k->authority == TG_AUTHORITY_WRITE &&
		      (k->irreversible || k->risk >= TG_RISK_HIGH);
	bad |= json_object_set_new(o, "name", json_string(exposed ? exposed : k->name));
	if (k->title)
		bad |= json_object_set_new(o, "title", json_string(k->title));
	bad |= json_object_set_new(o, "description", json_string(k->description));
	bad |= json_object_set_new(o, "inputSchema", in);
	in = NULL;
	if (outs) {
		bad |= json_object_set_new(o, "outputSchema", outs);
		outs = NULL;
	}
	if (k->title)
		bad |= json_object_set_new(ann, "title", json_string(k->title));
	bad |= json_object_set_new(ann, "readOnlyHint",
				   json_boolean(k->authority == TG_AUTHORITY_READ));
	bad |= json_object_set_new(ann, "destructiveHint", json_boolean(destructive));
	bad |= json_object_set_new(ann, "idempotentHint", json_boolean(k->idempotent));
	bad |= json_object_set_new(ann, "openWorldHint", json_boolean(k->open_world));
	bad |= json_object_set_new(o, "annotations", ann);
	ann = NULL;
	/* forbidden is MCP's default: said only otherwise */
	if (k->tasks != TG_TASKS_FORBIDDEN)
		bad |= json_object_set_new(o, "execution",
					   json_pack("{s:s}", "taskSupport",
						     k->tasks == TG_TASKS_REQUIRED ? "required" : "optional"));
	/* a member that could not be set fails the whole definition: a
	 * tool listed without its name or schema is not the contract's */
	text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		goto fail;
	json_decref(o);
	return text;
fail:
	json_decref(o);
	json_decref(ann);
	json_decref(in);
	json_decref(outs);
	tg_error_set(err, TG_ERR_NOMEM, "%s: cannot build the MCP definition", k->name);
	return NULL;
}
