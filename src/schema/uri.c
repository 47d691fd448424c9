/*
 * URI references for "$id" and "$ref": resolution against a base as RFC
 * 3986 section 5.2 describes (merge, remove dot segments), and splitting off
 * the fragment. Enough for http(s), file and urn URIs; nothing is fetched.
 */
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

/* Length of "scheme:" at the start of s, or 0. */
static size_t scheme_len(const char *s)
{
	size_t i = 0;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	while (s[i] && s[i] != ':' && s[i] != '/' && s[i] != '?' && s[i] != '#')
		i++;
	return s[i] == ':' ? i + 1 : 0;
}

/* Drop the last segment (and its '/') from out[0..*o). */
static void pop_segment(char *out, size_t *o)
{
	while (*o > 0 && out[*o - 1] != '/')
		(*o)--;
	if (*o > 0)
		(*o)--;
}

/* Remove "." and ".." segments of path in place: RFC 3986 section 5.2.4,
 * step by step, into a copy. */
static void remove_dots(char *path)
{
	size_t len = strlen(path), o = 0;
	char *out = malloc(len + 1);
	const char *in = path;

	if (!out)
		return; /* leave it: an unresolvable reference is reported later */
	while (*in) {
		if (strncmp(in, "../", 3) == 0) {
			in += 3;
		} else if (strncmp(in, "./", 2) == 0 || strncmp(in, "/./", 3) == 0) {
			in += 2;
		} else if (strcmp(in, "/.") == 0) {
			in = "/";
		} else if (strncmp(in, "/../", 4) == 0) {
			in += 3;
			pop_segment(out, &o);
		} else if (strcmp(in, "/..") == 0) {
			in = "/";
			pop_segment(out, &o);
		} else if (strcmp(in, ".") == 0 || strcmp(in, "..") == 0) {
			in += strlen(in);
		} else {
			do
				out[o++] = *in++;
			while (*in && *in != '/');
		}
	}
	out[o] = '\0';
	memcpy(path, out, o + 1);
	free(out);
}

char *uri_split(const char *uri, char **frag)
{
	char *copy = strdup(uri), *hash;

	*frag = NULL;
	if (!copy)
		return NULL;
	hash = strchr(copy, '#');
	if (hash) {
		*hash = '\0';
		*frag = hash + 1;
	}
	return copy;
}

/* base[0..n) followed by ref, malloc'd. */
static char *concat(const char *base, size_t n, const char *sep, const char *ref)
{
	size_t sl = strlen(sep), rl = strlen(ref);
	char *out = malloc(n + sl + rl + 1);

	if (!out)
		return NULL;
	memcpy(out, base, n);
	memcpy(out + n, sep, sl);
	memcpy(out + n + sl, ref, rl + 1);
	return out;
}

char *uri_resolve(const char *base, const char *ref)
{
	size_t bl;
	const char *auth_end, *path_start, *h, *q, *end, *slash;
	char *out;

	if (scheme_len(ref) || !base || !*base) /* absolute already */
		return strdup(ref);
	h = strchr(base, '#');
	if (ref[0] == '#' || ref[0] == '\0')
		return concat(base, h ? (size_t)(h - base) : strlen(base), "", ref);
	bl = scheme_len(base);
	/* the authority of the base, if it has one ("scheme://host"), ends at
	 * the path, the query or the fragment */
	path_start = base + bl;
	auth_end = path_start;
	if (strncmp(path_start, "//", 2) == 0)
		auth_end = path_start + 2 + strcspn(path_start + 2, "/?#");
	if (strncmp(ref, "//", 2) == 0)
		return concat(base, bl, "", ref);
	if (ref[0] == '/') {
		out = concat(base, (size_t)(auth_end - base), "", ref);
	} else {
		/* merge: the base's path up to its last '/', then the reference;
		 * "scheme://host" with no path gets a "/" first */
		end = h ? h : base + strlen(base);
		q = strchr(base, '?');
		if (q && q < end)
			end = q;
		if (end < auth_end)
			end = auth_end;
		for (slash = end; slash > auth_end && *(slash - 1) != '/'; slash--)
			;
		out = concat(base, (size_t)(slash - base),
			     slash == auth_end && auth_end != path_start ? "/" : "", ref);
	}
	if (out)
		remove_dots(out + (size_t)(auth_end - base));
	return out;
}
