/*
 * An http(s) URL's authority, as the parts that reach a server through
 * the egress proxy read it: the scheme, the host and the port, and the
 * egress rule ("host:port") they make. Shared by the upstreams'
 * declarations (src/upstream/decl.c) and the policy's webhooks
 * (src/auth/notify_config.c), so that both refuse the same URLs.
 */
#ifndef TG_UTIL_URL_H
#define TG_UTIL_URL_H

#include <stddef.h>

struct url_parts {
	int https;                   /* 1: https://, 0: http:// */
	char host[256];              /* as written: a name, an address, or "[V6]" */
	unsigned port;               /* the url's, or its scheme's (443, 80) */
	char rule[264];              /* "host:port", the egress rule */
};

/* url: "http://" or "https://" (any case), a host, an optional port
 * (:1 to :65535), no userinfo; only printable ASCII without spaces.
 * 0 and OUT *out; -1 and a static sentence saying what is wrong in *why
 * (fit to follow "url: "); -2 the same for userinfo, which the caller
 * follows with where a credential goes instead. */
int url_parts(const char *url, struct url_parts *out, const char **why);

#endif
