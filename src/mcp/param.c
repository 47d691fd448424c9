/*
 * The headers of a 2026-07-28 HTTP request that mirror its body: the
 * base64 sentinel ("=?base64?...?=", streamable-http "Value Encoding"),
 * and the Mcp-Param-{Name} headers of a tools/call checked against the
 * arguments they mirror ("Server Behavior for Custom Headers", "Server
 * Validation"). The annotations come from the contract
 * (src/catalog/param_header.c); the transport supplies the headers.
 *
 * The server acts on the body; a proxy may have routed or rate-limited on
 * the headers. Any difference between the two is refused, so that both
 * sources of truth always agree: a value in the body without its header,
 * a header without a value in the body, a header given twice, a value a
 * header cannot hold.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "toolgate/contract.h"
#include "util/sodium.h"

#define MAX_PARAM_VALUE 8192  /* bytes of one Mcp-Param-* header, as sent */
#define SAFE_INTEGER 9007199254740991.0 /* 2^53 - 1: a double holds it exactly */

char *mcp_header_decode(const char *v, size_t *len)
{
	size_t n, bin_len;
	unsigned char *bin;
	char *s;

	/* the spaces and tabs around a field value are not part of it
	 * (RFC 9110, 5.5); a value that has some travels base64-encoded */
	v += strspn(v, " \t");
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n >= 11 && strncmp(v, "=?base64?", 9) == 0 && strncmp(v + n - 2, "?=", 2) == 0) {
		bin = malloc(n);
		if (!bin || sodium_base642bin(bin, n, v + 9, n - 11, NULL, &bin_len, NULL,
					      sodium_base64_VARIANT_ORIGINAL) != 0) {
			free(bin);
			return NULL;
		}
		bin[bin_len] = '\0';
		*len = bin_len;
		return (char *)bin;
	}
	s = strndup(v, n);
	*len = n;
	return s;
}

/* The value at the annotation's property path in arguments; NULL when
 * absent or null (then no header is expected). */
static json_t *value_at(const struct tg_param_header *p, json_t *arguments)
{
	json_t *v = arguments;
	size_t i;

	for (i = 0; i < p->depth && json_is_object(v); i++)
		v = json_object_get(v, p->path[i]);
	return i == p->depth && !json_is_null(v) ? v : NULL;
}

/* A JSON number holding an integer a double holds exactly. */
static int integral(double d, long long *out)
{
	if (!isfinite(d) || d != floor(d) || fabs(d) > SAFE_INTEGER)
		return 0;
	*out = (long long)d;
	return 1;
}

/* An integer written as a JSON number ("42", "-7", "42.0", "4.2e1"). */
static int header_integer(const char *s, size_t n, long long *out)
{
	char *end;
	double d;

	if (n == 0 || strlen(s) != n || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) ||
	    strspn(s, "0123456789+-.eE") != n) /* no hex, inf or nan */
		return 0;
	errno = 0;
	if (strspn(s + (s[0] == '-'), "0123456789") == n - (s[0] == '-')) {
		*out = strtoll(s, &end, 10);
		return errno == 0 && *end == '\0';
	}
	d = strtod(s, &end);
	return *end == '\0' && integral(d, out);
}

/* Whether the decoded header value s (n bytes) is the body's value v:
 * a string byte for byte, a boolean as true or false, a number
 * numerically (integers only: number is not mirrored). */
static int same_value(json_t *v, const char *s, size_t n)
{
	long long a, b;

	if (json_is_string(v))
		return json_string_length(v) == n && memcmp(json_string_value(v), s, n) == 0;
	if (json_is_boolean(v))
		return strcmp(s, json_is_true(v) ? "true" : "false") == 0 && strlen(s) == n;
	if (json_is_integer(v))
		return header_integer(s, n, &a) && a == (long long)json_integer_value(v);
	if (json_is_real(v))
		return integral(json_real_value(v), &b) && header_integer(s, n, &a) && a == b;
	return 0;
}

/* Visible ASCII, space and tab (RFC 9110 field values; anything else
 * travels base64-encoded). */
static int plain_header_value(const char *s)
{
	for (; *s; s++)
		if ((*s < 0x20 && *s != '\t') || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static void param_path(const struct tg_param_header *p, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < p->depth && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%.60s", i ? "." : "", p->path[i]);
}

/* One annotation's header against its value: NULL, or why not. */
static const char *param_mismatch(const struct tg_param_header *p, json_t *arguments,
				  mcp_header_fn get, void *ctx, char *why, size_t len)
{
	json_t *v = value_at(p, arguments);
	char header[160], path[200], *value;
	unsigned count = 0;
	const char *raw;
	size_t n;
	int same;

	snprintf(header, sizeof(header), "Mcp-Param-%s", p->name);
	raw = get(ctx, header, &count);
	param_path(p, path, sizeof(path));
	if (!raw && !v)
		return NULL;
	if (!raw)
		snprintf(why, len, "Header mismatch: %s is missing; the body's arguments.%s is set",
			 header, path);
	else if (count > 1)
		snprintf(why, len, "Header mismatch: %s is given %u times", header, count);
	else if (strlen(raw) > MAX_PARAM_VALUE)
		snprintf(why, len, "Header mismatch: %s is longer than %d bytes", header,
			 MAX_PARAM_VALUE);
	else if (!plain_header_value(raw))
		snprintf(why, len, "Header mismatch: %s holds characters a header value cannot "
			 "(non-ASCII or control: send =?base64?...?=)", header);
	else if (!v)
		snprintf(why, len, "Header mismatch: %s is given but the body has no "
			 "arguments.%s", header, path);
	else {
		value = mcp_header_decode(raw, &n);
		same = value && same_value(v, value, n);
		free(value);
		if (same)
			return NULL;
		snprintf(why, len, "Header mismatch: %s does not match the body's arguments.%s",
			 header, path);
	}
	return why;
}

const char *mcp_params_mismatch(const struct tg_contract *k, json_t *arguments,
				mcp_header_fn get, void *ctx, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < k->nparam_headers; i++)
		if (param_mismatch(&k->param_headers[i], arguments, get, ctx, why, len))
			return why;
	return NULL;
}
