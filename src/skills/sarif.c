/*
 * A scan's findings as SARIF 2.1.0 (include/toolgate/skill.h,
 * docs/SKILLS.md, "SARIF"), the format code-scanning tools read: one run
 * of the tool "toolgate" with every rule it applied, a result a finding,
 * located by the file's path as the command was given it (a relative
 * folder makes a relative URI, which a code-scanning service resolves
 * against the repository's root) and by line and column in Unicode code
 * points.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skills/skill_int.h"
#include "toolgate/version.h"

static const char *level(enum tg_severity s)
{
	return s >= TG_SEVERITY_HIGH ? "error" : s == TG_SEVERITY_MEDIUM ? "warning" : "note";
}

/* GitHub's code scanning reads this property, 0.1 to 10, to rank a
 * security finding. */
static const char *score(enum tg_severity s)
{
	return s == TG_SEVERITY_CRITICAL ? "9.5"
	       : s == TG_SEVERITY_HIGH	 ? "8.0"
	       : s == TG_SEVERITY_MEDIUM ? "5.0"
					 : "2.0";
}

/* dir/path as a URI reference: what RFC 3986 reserves, and anything not
 * ASCII, percent-encoded byte by byte; '/' kept; "./" at the head left
 * out; an absolute path as a file: URI. */
static char *uri(const char *dir, const char *path)
{
	size_t dl = strlen(dir), n = 0;
	char *both, *out;

	while (dl > 2 && strncmp(dir, "./", 2) == 0) {
		dir += 2;
		dl -= 2;
	}
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (asprintf(&both, "%.*s/%s", (int)dl, dir, path) < 0)
		return NULL;
	out = malloc(strlen(both) * 3 + 8);
	if (!out) {
		free(both);
		return NULL;
	}
	if (both[0] == '/') {
		memcpy(out, "file://", 7);
		n = 7;
	}
	for (const unsigned char *c = (const unsigned char *)both; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    strchr("-._~/", *c))
			out[n++] = (char)*c;
		else
			n += (size_t)snprintf(out + n, 4, "%%%02X", *c);
	}
	out[n] = '\0';
	free(both);
	return out;
}

static json_t *rules_json(const struct tg_skill_rules *rules)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rules->n; i++) {
		const struct skill_rule *r = &rules->r[i];

		if (json_array_append_new(
			    a, json_pack("{s:s, s:{s:s}, s:{s:s}, s:{s:s, s:s, s:s, s:[s,s]}}", "id",
					 r->id, "shortDescription", "text", r->description,
					 "defaultConfiguration", "level", level(r->severity),
					 "properties", "family", r->family, "severity",
					 tg_severity_name(r->severity), "security-severity",
					 score(r->severity), "tags", "security", r->family)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static size_t rule_index(const struct tg_skill_rules *rules, const char *id)
{
	for (size_t i = 0; i < rules->n; i++)
		if (strcmp(rules->r[i].id, id) == 0)
			return i;
	return 0;
}

static json_t *result_json(const struct tg_skill *skill, const struct tg_skill_finding *f,
			   const struct tg_skill_rules *rules)
{
	char *where = uri(skill->dir, f->path), *text;
	json_t *r = NULL;

	if (!where)
		return NULL;
	if (asprintf(&text, "%s%s%s%s", f->message, f->note[0] ? " (" : "", f->note,
		     f->note[0] ? ")" : "") < 0) {
		free(where);
		return NULL;
	}
	/* the excerpt is the line around the finding: its context, not the
	 * region's own text */
	r = json_pack("{s:s, s:I, s:s, s:{s:s}, s:[{s:{s:{s:s}, s:{s:I, s:I}, s:{s:I, s:{s:s}}}}], "
		      "s:{s:s, s:s}}",
		      "ruleId", f->rule, "ruleIndex", (json_int_t)rule_index(rules, f->rule),
		      "level", level(f->severity), "message", "text", text, "locations",
		      "physicalLocation", "artifactLocation", "uri", where, "region", "startLine",
		      (json_int_t)f->line, "startColumn", (json_int_t)f->column, "contextRegion",
		      "startLine", (json_int_t)f->line, "snippet", "text", f->excerpt, "properties",
		      "severity", tg_severity_name(f->severity), "skill", skill->meta.name);
	free(text);
	free(where);
	return r;
}

char *tg_skill_sarif(const struct tg_skill *const *skills, const struct tg_skill_report *reports,
		     size_t n, const struct tg_skill_rules *rules)
{
	json_t *doc, *results = json_array(), *rj = rules_json(rules);
	char *text = NULL;

	if (!results || !rj)
		goto fail;
	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < reports[s].n; i++)
			if (json_array_append_new(results, result_json(skills[s],
								       &reports[s].findings[i],
								       rules)) < 0)
				goto fail;
	doc = json_pack("{s:s, s:s, s:[{s:{s:{s:s, s:s, s:o}}, s:s, s:o}]}", "$schema",
			"https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0",
			"runs", "tool", "driver", "name", "toolgate", "version", TOOLGATE_VERSION,
			"rules", rj, "columnKind", "unicodeCodePoints", "results", results);
	rj = results = NULL; /* the document's now, or freed by json_pack's failure */
	if (!doc)
		return NULL;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	return text;
fail:
	json_decref(results);
	json_decref(rj);
	return NULL;
}
