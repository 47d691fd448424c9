/*
 * A proxy of one destination for a client of this process (toolgate/egress.h,
 * tg_egress_local_start): the egress proxy (egress_proxy.c) with one rule,
 * HOST:PORT, on a unix socket in a directory of its own, reached by libcurl
 * as SOCKS5 with names resolved by the proxy. The gateway's own HTTP
 * clients that go where a file says (an HTTP upstream, a webhook) reach
 * their server only this way, so a name that resolves to a private,
 * loopback or metadata address is refused as a sandbox's would be.
 *
 * Must never: leave its directory or socket behind once stopped, or
 * allow more than its one rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolgate/egress.h"

struct tg_egress_local {
	struct tg_egress_proxy *proxy;
	char dir[64];
};

int tg_egress_local_start(const char *rule, const struct tg_egress_proxy_options *opts,
			  struct tg_egress_local **out, char url[TG_EGRESS_LOCAL_URL],
			  struct tg_error *err)
{
	struct tg_egress_proxy_options po;
	const char *rules[1] = { rule };
	struct tg_egress_local *l;
	char path[64 + 16];

	*out = NULL;
	url[0] = '\0';
	l = calloc(1, sizeof(*l));
	if (!l)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	snprintf(l->dir, sizeof(l->dir), "/tmp/toolgate-http-XXXXXX");
	if (!mkdtemp(l->dir)) {
		free(l);
		return tg_error_sys(err, errno, "a directory for its egress proxy");
	}
	snprintf(path, sizeof(path), "%s/egress.sock", l->dir);
	if (opts)
		po = *opts;
	else
		memset(&po, 0, sizeof(po));
	po.socket_path = path;
	po.policy = NULL;
	po.rules = rules;
	po.nrules = 1;
	if (tg_egress_proxy_start(&po, &l->proxy, err) < 0) {
		rmdir(l->dir);
		free(l);
		return -1;
	}
	snprintf(url, TG_EGRESS_LOCAL_URL, "socks5h://localhost%s", path);
	*out = l;
	return 0;
}

void tg_egress_local_stop(struct tg_egress_local *l)
{
	if (!l)
		return;
	tg_egress_proxy_stop(l->proxy);
	rmdir(l->dir);
	free(l);
}
