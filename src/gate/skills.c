/*
 * The skills the gateway serves (docs/SKILLS.md, "Serving"): read at
 * start from the skills folder, each one checked (well-formed, signed by
 * a key of the trust store, its files those signed, scanned) and, in
 * enforce mode, served only when every check passed; each refusal
 * logged, recorded in the audit log and counted in
 * toolgate_blocked_loads_total{kind="skill",reason}. A skill served is
 * the bytes that were hashed and scanned, kept in memory: a change on
 * disk changes nothing served until the next start.
 *
 * Served progressively, over MCP's resources and prompts: each skill's
 * SKILL.md listed as a resource (skill://NAME/SKILL.md, with the
 * description), its other files read by URI when the model follows the
 * body's references, and a prompt a skill (skill:NAME) that gives the
 * body as a message.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gate/gate_int.h"
#include "obs/metrics.h"
#include "obs/shown.h"
#include "toolgate/audit.h"
#include "toolgate/skill.h"
#include "toolgate/store.h"
#include "util/log.h"
#include "util/utf8.h"

#define SKILLS_MAX 256
#define SKILLS_BYTES_MAX (256ull << 20) /* of all the skills served, in memory */
#define URI_PREFIX "skill://"
#define PROMPT_PREFIX "skill:"

void gate_skills_release(struct tg_gate *g)
{
	for (size_t i = 0; i < g->nskills; i++)
		tg_skill_free(g->skills[i]);
	free(g->skills);
	g->skills = NULL;
	g->nskills = 0;
}

/* text (NUL-terminated) made one line of the log: obs_shown keeps a line
 * break, which would start a line of the attacker's. */
static void one_line(char *text)
{
	for (char *p = text; (p = strpbrk(p, "\n\r")); p++)
		*p = '?';
}

/* A skill not served (or, warn, served with what was found): logged,
 * recorded, and counted when refused. name is the folder's (any bytes)
 * and why may quote the skill (a frontmatter's name or tag, decoded from
 * YAML escapes): the log shows both made safe (obs_shown), the audit
 * log, JSON, as they are. */
static void refused(struct tg_gate *g, const char *name, const char *reason, const char *why,
		    int served)
{
	char subject[160], shown_name[160], shown_why[600];

	snprintf(subject, sizeof(subject), "skill %s", name);
	obs_shown(name, strlen(name), shown_name, sizeof(shown_name));
	obs_shown(why, strlen(why), shown_why, sizeof(shown_why));
	one_line(shown_name);
	one_line(shown_why);
	tg_log(TG_LOG_WARNING, "skill %s %s (%s): %s", shown_name,
	       served ? "served, warned" : "refused", reason, shown_why);
	tg_record_event(g->audit, NULL, subject, served ? "load_warned" : "load_refused", why);
	if (!served)
		metrics_blocked(g->metrics, "skill", reason);
}

/* One folder of the skills folder checked (st its lstat): the skill, or
 * NULL (said why); *passed whether every check passed (else it is served
 * in warn mode). */
static struct tg_skill *check_one(struct tg_gate *g, const char *path, const char *name,
				  const struct stat *st, const struct tg_trust *trust,
				  const struct tg_skill_rules *rules, int warn, int *passed)
{
	struct tg_skill *s;
	struct tg_trust none = { NULL, 0 };
	struct tg_skill_judgement j;
	struct tg_error err;
	int failed;

	if (tg_skill_load(path, &s, &err) < 0) {
		refused(g, name, "malformed", err.msg, 0);
		return NULL;
	}
	/* the folder looked at, served under its own entry's name: tg_skill_load
	 * opens the path (a link followed) and matches the name by realpath, so
	 * an entry swapped for a link meanwhile would bring another folder, or
	 * a second skill of a name already served */
	if (s->dev != (uint64_t)st->st_dev || s->ino != (uint64_t)st->st_ino ||
	    strcmp(s->meta.name, name) != 0) {
		refused(g, name, "malformed",
			"replaced while it was read (a link to a folder is not followed)", 0);
		tg_skill_free(s);
		return NULL;
	}
	/* without --skills-trust no key is trusted (docs/SKILLS.md,
	 * "Serving"): the signature is judged against a store of none, and
	 * a skill is unsigned or untrusted (a NULL store would not look) */
	if (tg_skill_judge(s, trust ? trust : &none, rules, time(NULL), &j, &err) < 0) {
		refused(g, name, "scan", err.msg, 0);
		failed = 1;
		warn = 0;
	} else {
		/* refused for its first failure, counted once; in warn mode
		 * served all the same, with each failure said */
		if (j.verdict != TG_VERDICT_OK)
			refused(g, name, tg_verdict_name(j.verdict), j.verify.msg, warn);
		if (j.scan[0] && (warn || j.verdict == TG_VERDICT_OK))
			refused(g, name, "scan", j.scan, warn);
		failed = j.verdict != TG_VERDICT_OK || j.scan[0];
	}
	tg_skill_judgement_release(&j);
	*passed = !failed;
	if (failed && !warn) {
		tg_skill_free(s);
		return NULL;
	}
	return s;
}

/* s against the pin of its name (docs/SKILLS.md, "Pinned"): 0 when it
 * may be served (the same files, or another version); 1 when not, with
 * the reason and why[len]; -1 and err when the store fails (nothing is
 * served unpinned). */
static int pin_check(struct tg_gate *g, const struct tg_skill *s, const char **reason, char *why,
		     size_t len, struct tg_error *err)
{
	struct tg_skill_pin pin;
	const char *version = s->meta.version ? s->meta.version : "";
	char hex[65];
	int rc;

	if (strlen(version) >= sizeof(pin.version)) {
		*reason = "malformed";
		snprintf(why, len, "metadata.version: over %zu bytes, more than a pin holds",
			 sizeof(pin.version) - 1);
		return 1;
	}
	rc = tg_store_skill_pin_get(g->store, s->meta.name, &pin, err);
	if (rc != 0)
		return rc < 0 ? tg_error_wrap(err, "skill %s: its pin", s->meta.name) : 0;
	sodium_bin2hex(hex, sizeof(hex), s->digest, sizeof(s->digest));
	/* as skill install: other files under the same version, when both
	 * say one, are a change that was not given a version of its own */
	if (strcmp(pin.sha256, hex) != 0 && version[0] && strcmp(pin.version, version) == 0) {
		*reason = "tampered";
		snprintf(why, len, "version %.200s was served with other files (manifest sha256:%.12s, "
			 "now %.12s): a change is a new version (metadata.version)", version,
			 pin.sha256, hex);
		return 1;
	}
	return 0;
}

/* s, served, pinned as its name's skill from now on: 0, or -1 and err. */
static int pin_record(struct tg_gate *g, const struct tg_skill *s, struct tg_error *err)
{
	struct tg_skill_pin pin, was;
	int rc;

	memset(&pin, 0, sizeof(pin));
	snprintf(pin.name, sizeof(pin.name), "%s", s->meta.name);
	snprintf(pin.version, sizeof(pin.version), "%s", s->meta.version ? s->meta.version : "");
	sodium_bin2hex(pin.sha256, sizeof(pin.sha256), s->digest, sizeof(s->digest));
	pin.pinned_at = (int64_t)time(NULL);
	rc = tg_store_skill_pin_get(g->store, pin.name, &was, err);
	if (rc < 0)
		return -1;
	if (rc == 0 && strcmp(was.sha256, pin.sha256) == 0)
		return 0; /* the same files: pinned already */
	if (rc == 0) {
		char from[160], to[160];

		obs_shown(was.version, strlen(was.version), from, sizeof(from));
		obs_shown(pin.version, strlen(pin.version), to, sizeof(to));
		one_line(from);
		one_line(to);
		tg_log(TG_LOG_INFO, "skill %s: version %s is served in place of %s", pin.name,
		       to[0] ? to : "(none)", from[0] ? from : "(none)");
	}
	return tg_store_skill_pin_set(g->store, &pin, err) < 0
		       ? tg_error_wrap(err, "skill %s: its pin", pin.name)
		       : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct tg_skill *const *)a)->meta.name,
		      (*(struct tg_skill *const *)b)->meta.name);
}

int gate_skills_load(struct tg_gate *g, const struct tg_gate_options *o, struct tg_error *err)
{
	uint64_t held = 0;
	struct tg_trust *trust = NULL;
	struct tg_skill_rules *rules = NULL;
	DIR *d;
	struct dirent *e;
	int rc = -1;

	if (!o || !o->skills_dir)
		return 0;
	if (o->skills_trust && tg_trust_load(o->skills_trust, &trust, err) < 0)
		return -1;
	if (tg_skill_rules_new(o->skills_rules, &rules, err) < 0)
		goto out;
	d = opendir(o->skills_dir);
	if (!d) {
		tg_error_sys(err, errno, "skills folder %s", o->skills_dir);
		goto out;
	}
	g->skills = calloc(SKILLS_MAX, sizeof(*g->skills));
	if (!g->skills) {
		closedir(d);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		struct tg_skill *s;
		struct tg_error terr;
		int passed = 0;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", o->skills_dir, e->d_name);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* a skill is a folder; a link to one is not followed */
		if (g->nskills == SKILLS_MAX) {
			tg_log(TG_LOG_WARNING, "skills %s: more than %d skills: the rest not read",
			       o->skills_dir, SKILLS_MAX);
			break;
		}
		s = check_one(g, path, e->d_name, &st, trust, rules,
			      o->skills_mode == TG_SKILLS_WARN, &passed);
		if (s && held + s->bytes > SKILLS_BYTES_MAX) {
			/* every skill served is in memory: the whole has a ceiling too */
			refused(g, e->d_name, "malformed", "over the skills' ceiling of 256 MiB in all",
				0);
			tg_skill_free(s);
			s = NULL;
		}
		/* pinned: other files under a version served before are refused */
		if (s && passed && g->store) {
			const char *reason = NULL;
			char why[400];
			int pr = pin_check(g, s, &reason, why, sizeof(why), err);

			if (pr < 0) {
				tg_skill_free(s);
				closedir(d);
				goto out;
			}
			if (pr > 0) {
				int warn = o->skills_mode == TG_SKILLS_WARN;

				refused(g, e->d_name, reason, why, warn);
				passed = 0;
				if (!warn) {
					tg_skill_free(s);
					s = NULL;
				}
			}
		}
		/* its scripts run as tools only when every check passed, warn
		 * mode or not: text a person may read, code only signed */
		if (s && passed && gate_skill_tools_add(g, s, &terr) < 0) {
			refused(g, e->d_name, "malformed", terr.msg, 0);
			tg_skill_free(s);
			s = NULL;
		} else if (s && !passed && tg_skill_file(s, TG_SKILL_TOOLS_FILE)) {
			tg_log(TG_LOG_WARNING, "skill %s: served in warn mode without its tools: a "
			       "skill's scripts run only once it is signed by a trusted key and "
			       "scanned", s->meta.name);
		}
		if (s && passed && g->store && pin_record(g, s, err) < 0) {
			tg_skill_free(s);
			closedir(d);
			goto out;
		}
		if (s) {
			held += s->bytes;
			g->skills[g->nskills++] = s;
		}
	}
	closedir(d);
	if (g->nskills)
		qsort(g->skills, g->nskills, sizeof(*g->skills), by_name);
	rc = 0;
out:
	tg_skill_rules_free(rules);
	tg_trust_free(trust);
	return rc;
}

size_t tg_gate_skill_count(struct tg_gate *g)
{
	return g->nskills;
}

struct name_key {
	const char *name;
	size_t len;
};

static int name_cmp(const void *key, const void *e)
{
	const struct name_key *k = key;
	const char *n = (*(struct tg_skill *const *)e)->meta.name;
	int c = strncmp(k->name, n, k->len);

	return c ? c : n[k->len] ? -1 : 0;
}

/* The skill served as name[0, len), or NULL: the skills are sorted by
 * name (by_name). */
static const struct tg_skill *named(const struct tg_gate *g, const char *name, size_t len)
{
	struct name_key k = { name, len };
	struct tg_skill *const *s;

	if (!g->nskills || memchr(name, '\0', len))
		return NULL;
	s = bsearch(&k, g->skills, g->nskills, sizeof(*g->skills), name_cmp);
	return s ? *s : NULL;
}

/* own (a JSON array's text, taken) with the skills' entries after it. */
char *gate_skills_list(struct tg_gate *g, char *own, int templates, int prompts)
{
	json_t *a = own ? json_loads(own, 0, NULL) : NULL;
	char *text = NULL;

	free(own);
	if (!json_is_array(a)) {
		json_decref(a);
		return NULL;
	}
	if (templates && g->nskills)
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s}", "uriTemplate", URI_PREFIX "{name}/{+path}",
				     "name", "skill-file", "description",
				     "A file of a skill the gateway serves, by its path in the skill "
				     "(the body of SKILL.md names them)"));
	for (size_t i = 0; !templates && i < g->nskills; i++) {
		const struct tg_skill *s = g->skills[i];
		char uri[128], name[80];

		snprintf(uri, sizeof(uri), URI_PREFIX "%s/SKILL.md", s->meta.name);
		snprintf(name, sizeof(name), PROMPT_PREFIX "%s", s->meta.name);
		if (prompts)
			json_array_append_new(a, json_pack("{s:s, s:s}", "name", name, "description",
							   s->meta.description));
		else
			json_array_append_new(
				a, json_pack("{s:s, s:s, s:s, s:s, s:I}", "uri", uri, "name",
					     s->meta.name, "description", s->meta.description,
					     "mimeType", "text/markdown", "size",
					     (json_int_t)s->skill_md_len));
	}
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return text;
}

/* A file's contents entry: text when it is UTF-8, else base64. */
static json_t *contents(const char *uri, const struct tg_skill_file *f)
{
	const char *dot = strrchr(f->path, '.');
	const char *mime = dot && !strcmp(dot, ".md") ? "text/markdown" : "text/plain";
	json_t *o;

	if (!memchr(f->data, '\0', f->size) && utf8_valid(f->data, f->size))
		return json_pack("{s:s, s:s, s:s%}", "uri", uri, "mimeType", mime, "text", f->data,
				 (size_t)f->size);
	{
		size_t n = sodium_base64_ENCODED_LEN(f->size, sodium_base64_VARIANT_ORIGINAL);
		char *b = malloc(n);

		if (!b)
			return NULL;
		sodium_bin2base64(b, n, (const unsigned char *)f->data, f->size,
				  sodium_base64_VARIANT_ORIGINAL);
		o = json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType", "application/octet-stream",
			      "blob", b);
		free(b);
		return o;
	}
}

int gate_skills_is_uri(const char *uri)
{
	return strncmp(uri, URI_PREFIX, strlen(URI_PREFIX)) == 0;
}

char *gate_skills_read(struct tg_gate *g, const char *uri, struct tg_error *err)
{
	const char *name = uri + strlen(URI_PREFIX), *slash = strchr(name, '/');
	const struct tg_skill *s = slash ? named(g, name, (size_t)(slash - name)) : NULL;
	const struct tg_skill_file *f;
	json_t *a;
	char *text;

	f = s ? tg_skill_file(s, slash + 1) : NULL;
	if (f) {
		a = json_array();
		if (!a || json_array_append_new(a, contents(uri, f)) < 0) {
			json_decref(a);
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			return NULL;
		}
		text = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		if (!text)
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return text;
	}
	tg_error_set(err, TG_ERR_INVALID, "no resource %.200s: %s", uri,
		     s ? "the skill has no such file" : "no such skill is served");
	return NULL;
}

int gate_skills_is_prompt(const char *name)
{
	return strncmp(name, PROMPT_PREFIX, strlen(PROMPT_PREFIX)) == 0;
}

/* The body's length without the blank lines at its end. */
static size_t body_len(const struct tg_skill *s)
{
	size_t n = s->skill_md_len - s->meta.body;

	while (n && strchr(" \t\r\n", s->skill_md[s->meta.body + n - 1]))
		n--;
	return n;
}

char *gate_skills_prompt(struct tg_gate *g, const char *name, struct tg_error *err)
{
	const char *n = name + strlen(PROMPT_PREFIX);
	const struct tg_skill *s = named(g, n, strlen(n));
	char *body, *text = NULL;
	json_t *o;

	if (!s) {
		tg_error_set(err, TG_ERR_INVALID, "no prompt %.200s: no such skill is served", name);
		return NULL;
	}
	if (asprintf(&body, "%.*s\n\n(The skill's files are resources: " URI_PREFIX "%s/PATH, PATH "
			    "as the skill names it.)",
		     (int)body_len(s), s->skill_md + s->meta.body, s->meta.name) < 0) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	o = json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description", s->meta.description,
		      "messages", "role", "user", "content", "type", "text", "text", body);
	free(body);
	if (o)
		text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
}
