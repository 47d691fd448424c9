/*
 * An upstream's credentials read for its server: the runner's
 * (src/exec/upstream_run.c) each time it starts a stdio server or
 * connects to an http one; upstream_secret.c owns it.
 */
#ifndef TG_EXEC_UPSTREAM_SECRET_H
#define TG_EXEC_UPSTREAM_SECRET_H

#include <stddef.h>

#include "exec/exec.h"
#include "toolgate/error.h"
#include "toolgate/upstream.h"
#include "upstream/http.h"

struct tg_sandbox_spec;

/* Every credentials.env of u into spec's environment, NAME=VALUE, each
 * file read and checked (against dirs: the gateway's own files and state
 * directory; and u's own mounts) on the descriptor opened; the buffers
 * wiped whatever happens. 0, or -1 and err naming the upstream and the
 * variable, never the value. */
int upstream_add_credentials(const struct tg_upstream *u, const struct exec_dirs *dirs,
			     struct tg_sandbox_spec *spec, struct tg_error *err);

/* The credentials.header of http upstream u as its requests' headers,
 * read and checked likewise: OUT *out, an array of u->ncredentials
 * (NULL for none), released by upstream_headers_release. 0, or -1 and
 * err. */
int upstream_headers_read(const struct tg_upstream *u, const struct exec_dirs *dirs,
			  struct upstream_http_header **out, struct tg_error *err);
/* What upstream_headers_read gave (n entries), wiped and freed. */
void upstream_headers_release(struct upstream_http_header *h, size_t n);

#endif
