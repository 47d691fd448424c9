/*
 * An upstream's credentials read for its server (exec/upstream_secret.h,
 * docs/UPSTREAMS.md, "What the runner checks again"): each file opened
 * and checked on its descriptor each time the server starts or is
 * connected to, its secret put in the sandbox's environment or in the
 * requests' headers, every buffer that held it wiped.
 *
 * Never: name a secret's value in an error or the log, keep it in a
 * buffer of its own once it was handed on, or read a file a sandbox is
 * given (one of the upstream's own mounts), the gateway's own or one in
 * its state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/upstream_run.h"
#include "exec/upstream_secret.h"
#include "toolgate/sandbox.h"
#include "upstream/secret.h"
#include "util/sodium.h"

/* 1 if real (a real path) is, or lies in, the real path of one of u's
 * mounts. */
static int in_a_mount(const struct tg_upstream *u, const char *real)
{
	char dir[PATH_MAX];
	size_t i, n;

	for (i = 0; i < u->nmounts; i++) {
		if (!realpath(u->mounts[i].host, dir))
			continue; /* the mount's own check says so */
		n = strlen(dir);
		if (strncmp(real, dir, n) == 0 && (real[n] == '/' || !real[n] || n == 1))
			return 1;
	}
	return 0;
}

/* Where a credential is declared: the variable of a stdio server's
 * environment, the header of an HTTP server's requests. */
static const char *credential_field(const struct tg_upstream *u)
{
	return u->transport == TG_UPSTREAM_HTTP ? "credentials.header" : "credentials.env";
}

/* The secret of credential c into buf[UPSTREAM_RUN_CREDENTIAL_MAX + 1],
 * checked on the descriptor opened: OUT *len. -1 and err naming the
 * upstream and the credential, never the value. */
static int credential_read(const struct tg_upstream *u, const struct exec_dirs *dirs,
			   const struct tg_upstream_credential *c,
			   char *buf, size_t *len, struct tg_error *err)
{
	const char *name = u->name, *field = credential_field(u);
	char link[64], real[PATH_MAX], why[128];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, rc = -1;

	*len = 0;
	fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return tg_error_sys(err, errno, "upstream %s: %s.%s: %s", name,
				    field, c->name, c->path);
	/* the file as it is now, not as the catalogue saw it */
	if (fstat(fd, &st) < 0) {
		tg_error_sys(err, errno, "upstream %s: %s.%s: %s", name, field, c->name,
			     c->path);
		goto out;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	if (n < 0) {
		tg_error_sys(err, errno, "upstream %s: %s.%s: %s", name, field, c->name,
			     c->path);
		goto out;
	}
	real[n] = '\0';
	/* the loader's rule, on the file opened (the path the kernel gives
	 * the descriptor is where it resolves) */
	if (upstream_secret_check(&st, real, real, why, sizeof(why)) < 0) {
		tg_error_set(err, TG_ERR_INVALID, "upstream %s: %s.%s: %s %s", name,
			     field, c->name, c->path, why);
		goto out;
	}
	if (st.st_size > (off_t)UPSTREAM_RUN_CREDENTIAL_MAX) {
		tg_error_set(err, TG_ERR_LIMIT, "upstream %s: %s.%s: %s is over %u "
			     "bytes", name, field, c->name, c->path, UPSTREAM_RUN_CREDENTIAL_MAX);
		goto out;
	}
	if (exec_dirs_check_secret(dirs, real, err) < 0) {
		tg_error_wrap(err, "upstream %s: %s.%s", name, field, c->name);
		goto out;
	}
	if (in_a_mount(u, real)) {
		/* the server could read it there, or (writable) swap it for a
		 * link to another file of the gateway's before a restart */
		tg_error_set(err, TG_ERR_INVALID, "upstream %s: %s.%s: %s lies in one "
			     "of its own mounts: a secret is given in the environment only", name,
			     field, c->name, c->path);
		goto out;
	}
	/* one byte more than allowed: a file that grew is seen */
	while (got <= UPSTREAM_RUN_CREDENTIAL_MAX) {
		n = read(fd, buf + got, UPSTREAM_RUN_CREDENTIAL_MAX + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tg_error_sys(err, errno, "upstream %s: %s.%s: %s", name,
				     field, c->name, c->path);
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > UPSTREAM_RUN_CREDENTIAL_MAX) {
		tg_error_set(err, TG_ERR_LIMIT, "upstream %s: %s.%s: %s is over %u "
			     "bytes", name, field, c->name, c->path, UPSTREAM_RUN_CREDENTIAL_MAX);
		goto out;
	}
	/* a file written with echo ends in a newline that is no part of it */
	if (got && buf[got - 1] == '\n') {
		got--;
		if (got && buf[got - 1] == '\r')
			got--;
	}
	if (memchr(buf, '\0', got)) {
		tg_error_set(err, TG_ERR_INVALID, "upstream %s: %s.%s: %s holds a NUL "
			     "byte, which no environment variable or header can", name, field,
			     c->name, c->path);
		goto out;
	}
	*len = got;
	rc = 0;
out:
	close(fd);
	return rc;
}

/* Every credential into spec's environment, NAME=VALUE; the buffers
 * wiped whatever happens. */
int upstream_add_credentials(const struct tg_upstream *u, const struct exec_dirs *dirs, struct tg_sandbox_spec *spec,
			   struct tg_error *err)
{
	size_t cap = 128 + UPSTREAM_RUN_CREDENTIAL_MAX + 2, i, len, nl;
	char *buf = malloc(UPSTREAM_RUN_CREDENTIAL_MAX + 1), *var = malloc(cap);
	int rc = 0;

	if (!buf || !var) {
		free(buf);
		free(var);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	for (i = 0; rc == 0 && i < u->ncredentials; i++) {
		const struct tg_upstream_credential *c = &u->credentials[i];

		nl = strlen(c->name);
		if (nl > 127) {
			rc = tg_error_set(err, TG_ERR_INVALID, "upstream %s: credentials.env: a name "
					  "too long", u->name);
			break;
		}
		rc = credential_read(u, dirs, c, buf, &len, err);
		if (rc < 0)
			break;
		memcpy(var, c->name, nl);
		var[nl] = '=';
		memcpy(var + nl + 1, buf, len);
		var[nl + 1 + len] = '\0';
		rc = tg_sandbox_spec_add_env(spec, var, err);
		if (rc < 0)
			tg_error_set(err, err->code, "upstream %s: credentials.env.%s: the sandbox "
				     "refused it", u->name, c->name);
		sodium_memzero(var, nl + 2 + len);
	}
	/* what was read, a refused file's too */
	sodium_memzero(buf, UPSTREAM_RUN_CREDENTIAL_MAX + 1);
	free(buf);
	free(var);
	return rc;
}

/* What headers_read gave, wiped and freed. */
void upstream_headers_release(struct upstream_http_header *h, size_t n)
{
	size_t i;

	for (i = 0; h && i < n; i++)
		if (h[i].value) {
			sodium_memzero((char *)h[i].value, UPSTREAM_RUN_CREDENTIAL_MAX + 1);
			free((char *)h[i].value);
		}
	free(h);
}

/* The credentials of an http upstream as its requests' headers, read
 * (each file as credential_read reads it): OUT *out, an array of
 * u->ncredentials, released by upstream_headers_release whatever happens after. */
int upstream_headers_read(const struct tg_upstream *u, const struct exec_dirs *dirs, struct upstream_http_header **out,
			struct tg_error *err)
{
	struct upstream_http_header *h;
	size_t i, n = u->ncredentials;
	char *buf;

	*out = NULL;
	if (!n)
		return 0;
	h = calloc(n, sizeof(*h));
	if (!h)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		h[i].name = u->credentials[i].name;
		h[i].value = buf = malloc(UPSTREAM_RUN_CREDENTIAL_MAX + 1);
		if (!buf || credential_read(u, dirs, &u->credentials[i], buf, &h[i].len, err) < 0) {
			if (!buf)
				tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			upstream_headers_release(h, n);
			return -1;
		}
	}
	*out = h;
	return 0;
}
