/*
 * The skills the gateway serves, read as one set (docs/SKILLS.md,
 * "Serving"): at start and at each reload, from the skills folder, each
 * skill checked (well-formed, signed by a key of the trust store, its
 * files those signed, scanned, its pin, its tools) and, in enforce mode,
 * served only when every check passed; each refusal logged, recorded in
 * the audit log and counted in toolgate_blocked_loads_total{kind="skill",
 * reason}. A skill served is the bytes that were hashed and scanned, kept
 * in memory: a change on disk changes nothing served until the next
 * reload.
 *
 * A set is held by the gate (g->skillset) and by each snapshot made with
 * its tools (their /skill is its copy), each reader of it (skills.c) for
 * as long as it reads; the last reference frees it and removes its copy.
 * A reload makes a set anew, and the gate serves it only once the whole
 * reload succeeded (tg_gate_reload): a failed one leaves the set served
 * before, and its pins, as they were.
 *
 * Never: serve a skill's scripts as tools unless every check passed, or
 * record a pin for a set that is not served.
 */
#include <dirent.h>
#include <errno.h>
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
#include "util/file.h"
#include "util/log.h"
#include "util/sodium.h"

#define SKILLS_MAX 256
#define SKILLS_BYTES_MAX (256ull << 20) /* of all the skills served, in memory */

struct gate_skillset *gate_skillset_get(struct tg_gate *g)
{
	struct gate_skillset *set;

	pthread_mutex_lock(&g->lock);
	set = g->skillset;
	if (set)
		set->refs++;
	pthread_mutex_unlock(&g->lock);
	return set;
}

void gate_skillset_put(struct tg_gate *g, struct gate_skillset *set)
{
	int last;

	if (!set)
		return;
	pthread_mutex_lock(&g->lock);
	last = --set->refs == 0;
	pthread_mutex_unlock(&g->lock);
	if (!last)
		return;
	for (size_t i = 0; i < set->n; i++)
		tg_skill_free(set->v[i]);
	free(set->v);
	free(set->due);
	tg_skill_tools_free(set->tools, set->ntools);
	if (set->copy[0])
		file_remove_tree(set->copy);
	free(set);
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

/* What checking the skills of one folder uses. */
struct skill_load_ctx {
	struct tg_trust *trust;
	struct tg_skill_rules *rules;
};

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct tg_skill *const *)a)->meta.name,
		      (*(struct tg_skill *const *)b)->meta.name);
}

/* One skill of the folder (st its lstat), checked, into set: its pin,
 * its tools, then held. 0 (also when it is refused: said), or -1 and err
 * when the store fails (nothing is served unchecked against its pin). */
static int take(struct tg_gate *g, const struct tg_catalog *catalog, struct gate_skillset *set,
		const struct skill_load_ctx *c, const char *name, const struct stat *st,
		struct tg_error *err)
{
	char path[4096];
	struct tg_skill *s;
	struct tg_error terr;
	int passed = 0;

	snprintf(path, sizeof(path), "%s/%s", g->skills_dir, name);
	s = check_one(g, path, name, st, c->trust, c->rules, g->skills_warn, &passed);
	if (s && set->bytes + s->bytes > SKILLS_BYTES_MAX) {
		/* every skill served is in memory: the whole has a ceiling too */
		refused(g, name, "malformed", "over the skills' ceiling of 256 MiB in all", 0);
		tg_skill_free(s);
		return 0;
	}
	/* pinned: other files under a version served before are refused */
	if (s && passed && g->store) {
		const char *reason = NULL;
		char why[400];
		int pr = pin_check(g, s, &reason, why, sizeof(why), err);

		if (pr < 0) {
			tg_skill_free(s);
			return -1;
		}
		if (pr > 0) {
			refused(g, name, reason, why, g->skills_warn);
			passed = 0;
			if (!g->skills_warn) {
				tg_skill_free(s);
				return 0;
			}
		}
	}
	/* its scripts run as tools only when every check passed, warn mode
	 * or not: text a person may read, code only signed */
	if (s && passed && gate_skill_tools_add(g, catalog, set, s, &terr) < 0) {
		refused(g, name, "malformed", terr.msg, 0);
		tg_skill_free(s);
		return 0;
	}
	if (s && !passed && tg_skill_file(s, TG_SKILL_TOOLS_FILE))
		tg_log(TG_LOG_WARNING, "skill %s: served in warn mode without its tools: a skill's "
		       "scripts run only once it is signed by a trusted key and scanned",
		       s->meta.name);
	if (!s)
		return 0;
	if (passed && g->store)
		set->due[set->ndue++] = s;
	set->bytes += s->bytes;
	set->v[set->n++] = s;
	return 0;
}

int gate_skillset_load(struct tg_gate *g, const struct tg_catalog *catalog,
		       struct gate_skillset **out, struct tg_error *err)
{
	struct skill_load_ctx c = { NULL, NULL };
	struct gate_skillset *set = NULL;
	DIR *d = NULL;
	struct dirent *e;
	int rc = -1;

	*out = NULL;
	if (!g->skills_dir)
		return 0;
	if (g->skills_optional) {
		struct stat st;

		/* a catalogue's own skills/: none, rather than the start or the
		 * reload refused, when it has none (a link is not followed) */
		if (lstat(g->skills_dir, &st) < 0 ? errno == ENOENT || errno == ENOTDIR
						  : !S_ISDIR(st.st_mode))
			return 0;
	}
	if (g->skills_trust && tg_trust_load(g->skills_trust, &c.trust, err) < 0)
		return -1;
	if (tg_skill_rules_new(g->skills_rules, &c.rules, err) < 0)
		goto out;
	d = opendir(g->skills_dir);
	if (!d) {
		tg_error_sys(err, errno, "skills folder %s", g->skills_dir);
		goto out;
	}
	set = calloc(1, sizeof(*set));
	if (!set || !(set->v = calloc(SKILLS_MAX, sizeof(*set->v))) ||
	    !(set->due = calloc(SKILLS_MAX, sizeof(*set->due)))) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	set->refs = 1;
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", g->skills_dir, e->d_name);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* a skill is a folder; a link to one is not followed */
		if (set->n == SKILLS_MAX) {
			tg_log(TG_LOG_WARNING, "skills %s: more than %d skills: the rest not read",
			       g->skills_dir, SKILLS_MAX);
			break;
		}
		if (take(g, catalog, set, &c, e->d_name, &st, err) < 0)
			goto out;
	}
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), by_name);
	*out = set;
	set = NULL;
	rc = 0;
out:
	if (d)
		closedir(d);
	if (set) {
		set->refs = 1;
		gate_skillset_put(g, set);
	}
	tg_skill_rules_free(c.rules);
	tg_trust_free(c.trust);
	return rc;
}

int gate_skillset_pin(struct tg_gate *g, struct gate_skillset *set, struct tg_error *err)
{
	struct tg_error one;
	int rc = 0;

	/* each tried: one that fails leaves the others pinned; the first
	 * failure said */
	for (size_t i = 0; set && i < set->ndue; i++)
		if (pin_record(g, set->due[i], rc ? &one : err) < 0)
			rc = -1;
	return rc;
}

int gate_skillset_differs(const struct gate_skillset *a, const struct gate_skillset *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0;

	if (na != nb)
		return 1;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a->v[i]->meta.name, b->v[i]->meta.name) != 0 ||
		    memcmp(a->v[i]->digest, b->v[i]->digest, sizeof(a->v[i]->digest)) != 0)
			return 1;
	return 0;
}

int gate_skills_init(struct tg_gate *g, const struct tg_gate_options *o, struct tg_error *err)
{
	struct gate_skillset *set;

	if (!o || !o->skills_dir)
		return 0;
	if (!(g->skills_dir = strdup(o->skills_dir)) ||
	    (o->skills_trust && !(g->skills_trust = strdup(o->skills_trust))) ||
	    (o->skills_rules && !(g->skills_rules = strdup(o->skills_rules))))
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	g->skills_warn = o->skills_mode == TG_SKILLS_WARN;
	g->skills_optional = o->skills_optional;
	if (gate_skillset_load(g, g->base->catalog, &set, err) < 0)
		return -1;
	g->skillset = set;
	return 0;
}

int tg_gate_skills_pin(struct tg_gate *g, struct tg_error *err)
{
	int rc;

	tg_error_clear(err);
	/* the set served now: a reload meanwhile pins its own */
	pthread_mutex_lock(&g->rebuild_lock);
	rc = gate_skillset_pin(g, g->skillset, err);
	pthread_mutex_unlock(&g->rebuild_lock);
	return rc;
}

void gate_skills_release(struct tg_gate *g)
{
	gate_skillset_put(g, g->skillset);
	g->skillset = NULL;
	free(g->skills_dir);
	free(g->skills_trust);
	free(g->skills_rules);
	g->skills_dir = g->skills_trust = g->skills_rules = NULL;
}
