/*
 * A skill's manifest: SHA256SUMS, read strictly (include/toolgate/skill.h,
 * docs/SKILLS.md, "Manifest").
 *
 * The manifest is what is signed, so only one text may stand for a set of
 * files: sha256sum's lines, sorted by path as bytes, each path once. A
 * manifest toolgate reads is one coreutils can check (`sha256sum -c`), and
 * one that `find | LC_ALL=C sort | xargs sha256sum` writes is one toolgate
 * reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/skill.h"
#include "skills/skill_int.h"
#include "util/hidden.h"
#include "util/sodium.h"
#include "util/utf8.h"

#define MANIFEST_MAX ((size_t)TG_SKILL_FILES_MAX * (64 + 2 + TG_SKILL_PATH_MAX + 1))

void tg_skill_entries_free(struct tg_skill_entry *entries, size_t n)
{
	if (!entries)
		return;
	for (size_t i = 0; i < n; i++)
		free(entries[i].path);
	free(entries);
}

int skill_name_hidden(const char *s, size_t len)
{
	struct hidden_scan h;
	struct hidden c;

	hidden_scan_init(&h, s, len);
	while (hidden_scan_next(&h, &c))
		if ((c.kind == HIDDEN_CONTROL && c.cp >= 0x80) || c.kind == HIDDEN_BIDI ||
		    c.kind == HIDDEN_SEPARATOR)
			return 1;
	return 0;
}

/* A path as the skill's walk makes them: relative, no empty, '.' or '..'
 * component, UTF-8, no control character, bidi control or backslash. */
static const char *path_wrong(const char *p, size_t len)
{
	size_t at = 0;

	if (len == 0)
		return "an empty path";
	if (len > TG_SKILL_PATH_MAX)
		return "a path over 1024 bytes";
	if (!utf8_valid(p, len))
		return "a path that is not UTF-8";
	if (p[0] == '/')
		return "an absolute path";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\')
			return "a control character or backslash in a path";
	if (skill_name_hidden(p, len))
		return "a C1 control, bidi control or line separator in a path";
	while (at <= len) {
		const char *slash = memchr(p + at, '/', len - at);
		size_t n = slash ? (size_t)(slash - (p + at)) : len - at;

		if (n == 0)
			return "an empty component in a path";
		if ((n == 1 && p[at] == '.') || (n == 2 && p[at] == '.' && p[at + 1] == '.'))
			return "a '.' or '..' component in a path";
		at += n + 1;
	}
	return NULL;
}

/* One line, s[0, len) without its '\n', into e. */
static int parse_line(const char *s, size_t len, size_t line, struct tg_skill_entry *e,
		      struct tg_error *err)
{
	const char *why;

	if (len < 64 + 2 + 1 || s[64] != ' ' || s[65] != ' ')
		return tg_error_set(err, TG_ERR_INVALID,
				    "line %zu: not 'SHA-256  PATH' (64 hex digits, two spaces, "
				    "the path)",
				    line);
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return tg_error_set(err, TG_ERR_INVALID,
					    "line %zu: the digest is not 64 lowercase hex digits",
					    line);
	why = path_wrong(s + 66, len - 66);
	if (why)
		return tg_error_set(err, TG_ERR_INVALID, "line %zu: %s", line, why);
	if (sodium_hex2bin(e->sha256, 32, s, 64, NULL, NULL, NULL) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "line %zu: bad digest", line);
	e->path = strndup(s + 66, len - 66);
	if (!e->path)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return 0;
}

int tg_skill_manifest_parse(const char *text, size_t len, struct tg_skill_entry **out, size_t *n,
			    struct tg_error *err)
{
	struct tg_skill_entry *e = NULL;
	size_t count = 0, at = 0, line = 1;
	int rc = -1;

	*out = NULL;
	*n = 0;
	if (tg_sodium_load("skill manifest", err) < 0) /* its hex digests */
		return -1;
	if (len > MANIFEST_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%zu bytes, at most %zu", len, MANIFEST_MAX);
	if (len > 0 && text[len - 1] != '\n')
		return tg_error_set(err, TG_ERR_INVALID, "the last line has no newline");
	for (size_t i = 0; i < len; i++)
		count += text[i] == '\n';
	if (count > TG_SKILL_FILES_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%zu lines, at most %d", count,
				    TG_SKILL_FILES_MAX);
	e = calloc(count ? count : 1, sizeof(*e));
	if (!e)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < count; i++, line++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = (size_t)(nl - (text + at));

		if (parse_line(text + at, l, line, &e[i], err) < 0)
			goto out;
		if (i > 0 && strcmp(e[i - 1].path, e[i].path) >= 0) {
			tg_error_set(err, TG_ERR_INVALID, "line %zu: %s %s", line, e[i].path,
				     strcmp(e[i - 1].path, e[i].path) == 0
					     ? "is listed twice"
					     : "is out of order (lines are sorted by path, as "
					       "LC_ALL=C sort does)");
			goto out;
		}
		at += l + 1;
	}
	*out = e;
	*n = count;
	e = NULL;
	rc = 0;
out:
	tg_skill_entries_free(e, count);
	return rc;
}

int tg_skill_manifest_check(const struct tg_skill *skill, const char *text, size_t len,
			    struct tg_error *err)
{
	struct tg_skill_entry *e;
	size_t n, i = 0, j = 0;
	int rc = -1;

	if (tg_skill_manifest_parse(text, len, &e, &n, err) < 0)
		return tg_error_wrap(err, "%s/%s", skill->dir, TG_SKILL_MANIFEST);
	/* both sorted the same way: one pass */
	while (i < skill->n_files || j < n) {
		int c = i == skill->n_files ? 1
			: j == n	    ? -1
					    : strcmp(skill->files[i].path, e[j].path);

		if (c < 0) {
			tg_error_set(err, TG_ERR_INVALID, "%s/%s: not in the manifest", skill->dir,
				     skill->files[i].path);
			goto out;
		}
		if (c > 0) {
			tg_error_set(err, TG_ERR_INVALID, "%s/%s: in the manifest, not in the folder",
				     skill->dir, e[j].path);
			goto out;
		}
		if (sodium_memcmp(skill->files[i].sha256, e[j].sha256, 32) != 0) {
			tg_error_set(err, TG_ERR_INVALID,
				     "%s/%s: changed since the manifest was made", skill->dir,
				     e[j].path);
			goto out;
		}
		i++;
		j++;
	}
	rc = 0;
out:
	tg_skill_entries_free(e, n);
	return rc;
}
