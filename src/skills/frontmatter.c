/*
 * SKILL.md's frontmatter, read per the Agent Skills standard
 * (include/toolgate/skill.h, docs/SKILLS.md).
 *
 * The text between the first two '---' lines is YAML, read with libyaml's
 * event parser (loaded when first used, src/util/yaml.c) and accepted only
 * in the one shape the standard has: a mapping of the six fields, each a
 * string, metadata a mapping of strings. Anything else is refused at its
 * first event, so nesting, anchors and aliases (the "billion laughs"
 * expansion) never build anything: a flow of a million '[' stops at the
 * second.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/skill.h"
#include "util/utf8.h"
#include "util/yaml.h"

#define DESCRIPTION_MAX 1024
#define COMPATIBILITY_MAX 500
#define NAME_MAX_LEN 64
#define TEXT_FIELD_MAX 4096 /* license, allowed-tools, a metadata value */
#define LINE0 2		    /* SKILL.md's line of libyaml's first (0) */

static const char *const fields[] = {
	"name", "description", "license", "compatibility", "metadata", "allowed-tools",
};

struct reader {
	yaml_parser_t parser;
	yaml_event_t ev;
	int have; /* ev holds an event to delete */
	struct tg_error *err;
};

/* The next event into r->ev: 0, or -1 with the parser's error. */
static int next(struct reader *r)
{
	if (r->have)
		yaml_event_delete(&r->ev);
	r->have = 0;
	if (!yaml_parser_parse(&r->parser, &r->ev)) {
		if (r->parser.context)
			return tg_error_set(r->err, TG_ERR_INVALID, "line %zu: %s %s begun on line %zu",
					    r->parser.problem_mark.line + LINE0,
					    r->parser.problem ? r->parser.problem : "not YAML",
					    r->parser.context, r->parser.context_mark.line + LINE0);
		return tg_error_set(r->err, TG_ERR_INVALID, "line %zu: %s",
				    r->parser.problem_mark.line + LINE0,
				    r->parser.problem ? r->parser.problem : "not YAML");
	}
	r->have = 1;
	return 0;
}

static size_t line_of(const struct reader *r)
{
	return r->ev.start_mark.line + LINE0;
}

/* The refusals common to every node: an alias, an anchor, a tag. */
static int plain_node(struct reader *r)
{
	const unsigned char *anchor = NULL, *tag = NULL;

	switch (r->ev.type) {
	case YAML_ALIAS_EVENT:
		return tg_error_set(r->err, TG_ERR_INVALID,
				    "line %zu: an alias (*%s): aliases are not allowed", line_of(r),
				    (const char *)r->ev.data.alias.anchor);
	case YAML_SCALAR_EVENT:
		anchor = r->ev.data.scalar.anchor;
		tag = r->ev.data.scalar.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = r->ev.data.mapping_start.anchor;
		tag = r->ev.data.mapping_start.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = r->ev.data.sequence_start.anchor;
		tag = r->ev.data.sequence_start.tag;
		break;
	default:
		break;
	}
	if (anchor)
		return tg_error_set(r->err, TG_ERR_INVALID,
				    "line %zu: an anchor (&%s): anchors are not allowed", line_of(r),
				    (const char *)anchor);
	if (tag)
		return tg_error_set(r->err, TG_ERR_INVALID,
				    "line %zu: a tag (%s): tags are not allowed", line_of(r),
				    (const char *)tag);
	return 0;
}

/* Characters (code points) in s, which is UTF-8. */
static size_t chars(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* The scalar r->ev is, as a new string, for field what, at most max
 * characters and, when nonempty, not empty: 0 and *out; or -1. */
static int scalar(struct reader *r, const char *what, size_t max, int nonempty, char **out)
{
	size_t len, n;

	*out = NULL;
	if (plain_node(r) < 0)
		return -1;
	if (r->ev.type != YAML_SCALAR_EVENT)
		return tg_error_set(r->err, TG_ERR_INVALID, "line %zu: %s must be a string",
				    line_of(r), what);
	len = r->ev.data.scalar.length;
	if (memchr(r->ev.data.scalar.value, '\0', len))
		return tg_error_set(r->err, TG_ERR_INVALID, "line %zu: %s has a NUL character",
				    line_of(r), what);
	n = chars((const char *)r->ev.data.scalar.value, len);
	if (nonempty && n == 0)
		return tg_error_set(r->err, TG_ERR_INVALID, "line %zu: %s is empty", line_of(r),
				    what);
	if (n > max)
		return tg_error_set(r->err, TG_ERR_LIMIT,
				    "line %zu: %s is %zu characters, at most %zu", line_of(r), what,
				    n, max);
	*out = strndup((const char *)r->ev.data.scalar.value, len);
	if (!*out)
		return tg_error_set(r->err, TG_ERR_NOMEM, "out of memory");
	return 0;
}

/* The standard's rule for a name: 1-64 lowercase letters, digits and
 * hyphens, no hyphen first, last or next to another. */
static int name_ok(const char *s, struct reader *r)
{
	size_t len = strlen(s);

	if (len == 0 || len > NAME_MAX_LEN)
		return tg_error_set(r->err, TG_ERR_INVALID,
				    "line %zu: name must be 1 to %d characters", line_of(r),
				    NAME_MAX_LEN);
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			continue;
		if (c == '-' && i > 0 && i + 1 < len && s[i + 1] != '-')
			continue;
		return tg_error_set(r->err, TG_ERR_INVALID,
				    "line %zu: name '%s' may have only lowercase letters, digits "
				    "and single hyphens, none first or last",
				    line_of(r), s);
	}
	return 0;
}

/* metadata's mapping, its start already read, into m->metadata. */
static int metadata(struct reader *r, struct tg_skill_meta *m)
{
	for (;;) {
		char *key = NULL, *value = NULL, what[80];
		size_t line;
		int rc;

		if (next(r) < 0)
			return -1;
		if (r->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		line = line_of(r);
		if (scalar(r, "a metadata key", NAME_MAX_LEN, 1, &key) < 0)
			return -1;
		for (size_t i = 0; i < m->n_metadata; i++)
			if (strcmp(m->metadata[i].key, key) == 0) {
				tg_error_set(r->err, TG_ERR_INVALID,
					     "line %zu: metadata.%s given twice", line, key);
				free(key);
				return -1;
			}
		if (m->n_metadata >= TG_SKILL_METADATA_MAX) {
			free(key);
			return tg_error_set(r->err, TG_ERR_LIMIT,
					    "line %zu: metadata has more than %d entries", line,
					    TG_SKILL_METADATA_MAX);
		}
		snprintf(what, sizeof(what), "metadata.%s", key);
		rc = next(r) < 0 ? -1 : scalar(r, what, TEXT_FIELD_MAX, 0, &value);
		if (rc == 0 && !m->metadata &&
		    !(m->metadata = calloc(TG_SKILL_METADATA_MAX, sizeof(*m->metadata))))
			rc = tg_error_set(r->err, TG_ERR_NOMEM, "out of memory");
		if (rc == 0) {
			m->metadata[m->n_metadata].key = key;
			m->metadata[m->n_metadata++].value = value;
			continue;
		}
		free(key);
		free(value);
		if (rc < 0)
			return -1;
	}
}

/* The value of field f (an index in fields), its first event in r->ev. */
static int field(struct reader *r, size_t f, struct tg_skill_meta *m)
{
	char *s = NULL;

	switch (f) {
	case 0:
		if (scalar(r, "name", NAME_MAX_LEN, 1, &s) < 0 || name_ok(s, r) < 0) {
			free(s);
			return -1;
		}
		memcpy(m->name, s, strlen(s) + 1);
		free(s);
		return 0;
	case 1:
		return scalar(r, "description", DESCRIPTION_MAX, 1, &m->description);
	case 2:
		return scalar(r, "license", TEXT_FIELD_MAX, 1, &m->license);
	case 3:
		return scalar(r, "compatibility", COMPATIBILITY_MAX, 1, &m->compatibility);
	case 4:
		if (plain_node(r) < 0)
			return -1;
		if (r->ev.type != YAML_MAPPING_START_EVENT)
			return tg_error_set(r->err, TG_ERR_INVALID,
					    "line %zu: metadata must be a mapping of strings",
					    line_of(r));
		return metadata(r, m);
	default:
		return scalar(r, "allowed-tools", TEXT_FIELD_MAX, 0, &m->allowed_tools);
	}
}

/* The top mapping's fields, its start already read. */
static int mapping(struct reader *r, struct tg_skill_meta *m)
{
	unsigned seen = 0;

	for (;;) {
		char *key = NULL;
		size_t f, line;

		if (next(r) < 0)
			return -1;
		if (r->ev.type == YAML_MAPPING_END_EVENT)
			break;
		line = line_of(r);
		if (scalar(r, "a field's name", TEXT_FIELD_MAX, 1, &key) < 0)
			return -1;
		for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (strcmp(key, fields[f]) == 0)
				break;
		if (f == sizeof(fields) / sizeof(fields[0])) {
			tg_error_set(r->err, TG_ERR_INVALID,
				     "line %zu: field '%.64s' is not in the Agent Skills standard "
				     "(name, description, license, compatibility, metadata, "
				     "allowed-tools)",
				     line, key);
			free(key);
			return -1;
		}
		free(key);
		if (seen & (1u << f))
			return tg_error_set(r->err, TG_ERR_INVALID, "line %zu: field '%s' given twice",
					    line, fields[f]);
		seen |= 1u << f;
		if (next(r) < 0 || field(r, f, m) < 0)
			return -1;
	}
	if (!(seen & 1u))
		return tg_error_set(r->err, TG_ERR_INVALID, "the frontmatter has no name");
	if (!(seen & 2u))
		return tg_error_set(r->err, TG_ERR_INVALID, "the frontmatter has no description");
	return 0;
}

/* The YAML text[0, len), one document of one mapping, into m. */
static int yaml_read(const char *text, size_t len, struct tg_skill_meta *m, struct tg_error *err)
{
	struct reader r = { .err = err };
	int rc = -1;

	if (!yaml_parser_initialize(&r.parser))
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&r.parser, YAML_UTF8_ENCODING);
	if (next(&r) < 0) /* the stream's start */
		goto out;
	if (next(&r) < 0)
		goto out;
	if (r.ev.type != YAML_DOCUMENT_START_EVENT) {
		tg_error_set(err, TG_ERR_INVALID, "the frontmatter is empty");
		goto out;
	}
	if (next(&r) < 0 || plain_node(&r) < 0)
		goto out;
	if (r.ev.type != YAML_MAPPING_START_EVENT) {
		tg_error_set(err, TG_ERR_INVALID, "line %zu: the frontmatter is not a mapping",
			     line_of(&r));
		goto out;
	}
	if (mapping(&r, m) < 0 || next(&r) < 0)
		goto out;
	if (r.ev.type != YAML_DOCUMENT_END_EVENT || next(&r) < 0 ||
	    r.ev.type != YAML_STREAM_END_EVENT) {
		tg_error_set(err, TG_ERR_INVALID,
			     "line %zu: the frontmatter has more than one document", line_of(&r));
		goto out;
	}
	rc = 0;
out:
	if (r.have)
		yaml_event_delete(&r.ev);
	yaml_parser_delete(&r.parser);
	return rc;
}

/* The length of the line at s (n bytes left) without its end, and in *end
 * the offset past its end ('\n' or "\r\n"; n when the text ends). */
static size_t line_len(const char *s, size_t n, size_t *end)
{
	const char *nl = memchr(s, '\n', n);
	size_t len = nl ? (size_t)(nl - s) : n;

	*end = nl ? len + 1 : n;
	if (len > 0 && s[len - 1] == '\r')
		len--;
	return len;
}

/* Where the frontmatter is in text: its bytes [*from, *to), and *body
 * (offset) and *line where the Markdown begins. */
static int delimit(const char *text, size_t len, size_t *from, size_t *to, size_t *body,
		   unsigned *line, struct tg_error *err)
{
	size_t at, end, l;
	unsigned n = 2;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		return tg_error_set(err, TG_ERR_INVALID,
				    "line 1: a byte order mark (U+FEFF) before '---': save SKILL.md "
				    "as UTF-8 without one");
	l = line_len(text, len, &end);
	if (l != 3 || memcmp(text, "---", 3) != 0)
		return tg_error_set(err, TG_ERR_INVALID,
				    "line 1: SKILL.md must begin with a '---' line and its "
				    "frontmatter");
	*from = end;
	for (at = end; at < len; at += end, n++) {
		l = line_len(text + at, len - at, &end);
		if (l == 3 && memcmp(text + at, "---", 3) == 0) {
			*to = at;
			*body = at + end;
			*line = n + 1;
			if (*to - *from > TG_SKILL_FRONTMATTER_MAX)
				break;
			return 0;
		}
		if (at - *from > TG_SKILL_FRONTMATTER_MAX)
			break;
	}
	if (at < len)
		return tg_error_set(err, TG_ERR_LIMIT, "the frontmatter is over %u bytes",
				    TG_SKILL_FRONTMATTER_MAX);
	return tg_error_set(err, TG_ERR_INVALID, "the frontmatter has no closing '---' line");
}

int tg_skill_frontmatter_parse(const char *text, size_t len, struct tg_skill_meta *out,
			       struct tg_error *err)
{
	struct tg_skill_meta m = { 0 };
	size_t from = 0, to = 0;
	memset(out, 0, sizeof(*out));
	if (len > TG_SKILL_MD_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%zu bytes, at most %u", len,
				    TG_SKILL_MD_MAX);
	if (memchr(text, '\0', len))
		return tg_error_set(err, TG_ERR_INVALID, "a NUL byte: SKILL.md must be text");
	if (!utf8_valid(text, len))
		return tg_error_set(err, TG_ERR_INVALID, "not UTF-8");
	if (delimit(text, len, &from, &to, &m.body, &m.body_line, err) < 0)
		return -1;
	if (tg_yaml_load("SKILL.md", err) < 0)
		return -1;
	if (yaml_read(text + from, to - from, &m, err) < 0) {
		tg_skill_meta_release(&m);
		return -1;
	}
	for (size_t i = 0; i < m.n_metadata; i++)
		if (strcmp(m.metadata[i].key, "version") == 0)
			m.version = m.metadata[i].value;
	*out = m;
	return 0;
}

void tg_skill_meta_release(struct tg_skill_meta *meta)
{
	if (!meta)
		return;
	free(meta->description);
	free(meta->license);
	free(meta->compatibility);
	free(meta->allowed_tools);
	for (size_t i = 0; i < meta->n_metadata; i++) {
		free(meta->metadata[i].key);
		free(meta->metadata[i].value);
	}
	free(meta->metadata);
	memset(meta, 0, sizeof(*meta));
}
