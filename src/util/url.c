/*
 * An http(s) URL's scheme, host and port, and the egress rule they make
 * (util/url.h). A parser of text from files: it bounds what it reads and
 * says why it refuses, never resolves a name nor opens anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/url.h"

int url_parts(const char *s, struct url_parts *out, const char **why)
{
	const char *auth, *end, *host_end, *port;
	size_t i, hostlen;
	unsigned long p;

	memset(out, 0, sizeof(*out));
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f) {
			*why = "holds a space, a control or a non-ASCII byte (percent-encode it)";
			return -1;
		}
	out->https = strncasecmp(s, "https://", 8) == 0;
	if (!out->https && strncasecmp(s, "http://", 7) != 0) {
		*why = "must start with http:// or https://";
		return -1;
	}
	auth = s + (out->https ? 8 : 7);
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', (size_t)(end - auth))) {
		*why = "holds userinfo (user:password@)";
		return -2;
	}
	if (auth[0] == '[') {
		host_end = memchr(auth, ']', (size_t)(end - auth));
		host_end = host_end ? host_end + 1 : NULL;
	} else {
		host_end = memchr(auth, ':', (size_t)(end - auth));
		host_end = host_end ? host_end : end;
	}
	if (!host_end || host_end == auth || (auth[0] == '[' && host_end - auth < 3)) {
		*why = "must name a host";
		return -1;
	}
	hostlen = (size_t)(host_end - auth);
	if (hostlen >= sizeof(out->host)) {
		*why = "names a host longer than 255 bytes";
		return -1;
	}
	port = host_end < end ? host_end : NULL;
	p = out->https ? 443 : 80;
	if (port) {
		if (port[0] != ':' || port + 1 == end || (size_t)(end - port) > 6 ||
		    strspn(port + 1, "0123456789") != (size_t)(end - port - 1) ||
		    (p = strtoul(port + 1, NULL, 10)) < 1 || p > 65535) {
			*why = "a port is :1 to :65535";
			return -1;
		}
	}
	memcpy(out->host, auth, hostlen);
	out->port = (unsigned)p;
	snprintf(out->rule, sizeof(out->rule), "%s:%u", out->host, out->port);
	return 0;
}
