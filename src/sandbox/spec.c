/*
 * The sandbox spec: the tier's defaults and every setter's validation.
 * Nothing reaches a run unchecked: paths must exist and be canonical,
 * limits must be possible on this host, sizes have ceilings. The messages
 * name the option as a user would write it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

struct tier_defaults {
	uint64_t memory;
	unsigned millicpus;
	unsigned pids;
	uint64_t timeout_ms;
	uint64_t output_limit;
	uint64_t tmpfs_size;
};

static const struct tier_defaults tier_defaults[] = {
	[TG_TIER_STRICT] = { 256ull << 20, 1000, 64, 10 * 1000, 1ull << 20, 64ull << 20 },
	[TG_TIER_STANDARD] = { 1ull << 30, 2000, 256, 60 * 1000, 4ull << 20, 256ull << 20 },
};

int tg_sandbox_spec_new(enum tg_tier tier, struct tg_sandbox_spec **out, struct tg_error *err)
{
	struct tg_sandbox_spec *s;
	const struct tier_defaults *d;

	*out = NULL;
	if (tier != TG_TIER_STRICT && tier != TG_TIER_STANDARD)
		return tg_error_set(err, TG_ERR_INVALID, "tier %d: strict or standard", (int)tier);
	s = calloc(1, sizeof(*s));
	if (!s)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	d = &tier_defaults[tier];
	s->tier = tier;
	s->memory = d->memory;
	s->millicpus = d->millicpus;
	s->pids = d->pids;
	s->timeout_ms = d->timeout_ms;
	s->output_limit = d->output_limit;
	s->tmpfs_size = d->tmpfs_size;
	s->stdin_fd = -1;
	s->cancel_fd = -1;
	s->host_uid = s->host_gid = SB_OVERFLOW_ID;
	s->workdir = strdup("/work");
	if (!s->workdir) {
		free(s);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

static void free_argv(struct tg_sandbox_spec *s)
{
	int i;

	if (!s->argv)
		return;
	for (i = 0; i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	s->argv = NULL;
	s->argc = 0;
}

void tg_sandbox_spec_free(struct tg_sandbox_spec *s)
{
	int i;

	if (!s)
		return;
	free_argv(s);
	for (i = 0; i < s->nbinds; i++) {
		free(s->binds[i].host);
		free(s->binds[i].inside);
		free(s->binds[i].upper);
		free(s->binds[i].work);
	}
	/* a variable may hold a secret (an upstream's credential): wiped,
	 * not left in freed memory */
	for (i = 0; i < s->nenv; i++) {
		explicit_bzero(s->env[i], strlen(s->env[i]));
		free(s->env[i]);
	}
	free(s->workdir);
	free(s->cgroup_parent);
	free(s);
}

int tg_sandbox_spec_set_argv(struct tg_sandbox_spec *s, int argc,
			     char *const argv[], struct tg_error *err)
{
	size_t total = 0;
	char **v;
	int i;

	if (argc < 1 || !argv || !argv[0] || !argv[0][0])
		return tg_error_set(err, TG_ERR_INVALID, "no command given");
	if (argc > SB_MAX_ARGV)
		return tg_error_set(err, TG_ERR_LIMIT, "too many arguments (%d, at most %d)",
				    argc, SB_MAX_ARGV);
	for (i = 0; i < argc; i++) {
		if (!argv[i])
			return tg_error_set(err, TG_ERR_INVALID, "argument %d is NULL", i);
		total += strnlen(argv[i], SB_ARG_MAX + 1) + 1;
		if (total > SB_ARG_MAX)
			return tg_error_set(err, TG_ERR_LIMIT,
					    "arguments too long (at most %d bytes)", SB_ARG_MAX);
	}
	v = calloc((size_t)argc + 1, sizeof(*v));
	if (!v)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0; i < argc; i++) {
		v[i] = strdup(argv[i]);
		if (!v[i]) {
			while (i-- > 0)
				free(v[i]);
			free(v);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	}
	free_argv(s);
	s->argv = v;
	s->argc = argc;
	return 0;
}

int tg_sandbox_spec_set_memory(struct tg_sandbox_spec *s, uint64_t bytes,
			       struct tg_error *err)
{
	struct sysinfo si;

	if (bytes < (4ull << 20))
		return tg_error_set(err, TG_ERR_INVALID,
				    "--memory %llu: below the 4M a process needs to start",
				    (unsigned long long)bytes);
	if (sysinfo(&si) == 0 && bytes > (uint64_t)si.totalram * si.mem_unit)
		return tg_error_set(err, TG_ERR_INVALID,
				    "--memory %lluM: more than this host has (%lluM)",
				    (unsigned long long)(bytes >> 20),
				    (unsigned long long)(((uint64_t)si.totalram * si.mem_unit) >> 20));
	s->memory = bytes;
	return 0;
}

int tg_sandbox_spec_set_cpus(struct tg_sandbox_spec *s, unsigned millicpus,
			     struct tg_error *err)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (millicpus < 10)
		return tg_error_set(err, TG_ERR_INVALID, "--cpus must be at least 0.01");
	if (n > 0 && millicpus > (unsigned)n * 1000)
		return tg_error_set(err, TG_ERR_INVALID,
				    "--cpus %u.%03u: this host has %ld CPUs",
				    millicpus / 1000, millicpus % 1000, n);
	s->millicpus = millicpus;
	return 0;
}

int tg_sandbox_spec_set_pids(struct tg_sandbox_spec *s, unsigned pids,
			     struct tg_error *err)
{
	if (pids < 1 || pids > 65536)
		return tg_error_set(err, TG_ERR_INVALID, "--pids %u: must be 1 to 65536", pids);
	s->pids = pids;
	return 0;
}

int tg_sandbox_spec_set_timeout(struct tg_sandbox_spec *s, uint64_t ms,
				struct tg_error *err)
{
	if (ms < 1 || ms > 24ull * 3600 * 1000)
		return tg_error_set(err, TG_ERR_INVALID, "--timeout must be 1ms to 24h");
	s->timeout_ms = ms;
	return 0;
}

uint64_t tg_sandbox_spec_get_timeout(const struct tg_sandbox_spec *s)
{
	return s->timeout_ms;
}

int tg_sandbox_spec_set_output_limit(struct tg_sandbox_spec *s, uint64_t bytes,
				     struct tg_error *err)
{
	if (bytes > (1ull << 30))
		return tg_error_set(err, TG_ERR_INVALID, "--output-limit must be at most 1G");
	s->output_limit = bytes;
	return 0;
}

int tg_sandbox_spec_set_tmpfs_size(struct tg_sandbox_spec *s, uint64_t bytes,
				   struct tg_error *err)
{
	if (bytes < (64ull << 10) || bytes > (64ull << 30))
		return tg_error_set(err, TG_ERR_INVALID, "--tmpfs-size must be 64K to 64G");
	s->tmpfs_size = bytes;
	return 0;
}

/* Normalise an inside path into out: absolute, no "." or ".." components,
 * single slashes, no trailing slash. */
static int normalise_inside(const char *in, char *out, size_t len, const char *opt,
			    struct tg_error *err)
{
	size_t o = 0;
	const char *p = in, *e;

	if (!in || in[0] != '/')
		return tg_error_set(err, TG_ERR_INVALID, "%s %s: must be an absolute path",
				    opt, in ? in : "");
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if ((e - p == 1 && p[0] == '.') || (e - p == 2 && p[0] == '.' && p[1] == '.'))
			return tg_error_set(err, TG_ERR_INVALID,
					    "%s %s: '.' and '..' are not allowed", opt, in);
		if (o + (size_t)(e - p) + 2 > len)
			return tg_error_set(err, TG_ERR_LIMIT, "%s: path too long", opt);
		out[o++] = '/';
		memcpy(out + o, p, (size_t)(e - p));
		o += (size_t)(e - p);
		p = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static int reserved_inside(const char *p)
{
	static const char *const reserved[] = { "/proc", "/dev" };
	unsigned i;
	size_t n;

	if (strcmp(p, "/") == 0)
		return 1;
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		n = strlen(reserved[i]);
		if (strncmp(p, reserved[i], n) == 0 && (p[n] == '\0' || p[n] == '/'))
			return 1;
	}
	return 0;
}

/* path made absolute against the working directory, with ".", ".." and
 * repeated slashes resolved lexically (as realpath would if no component
 * were a symlink). OUT out. */
static int lexical_absolute(const char *path, char *out, size_t len)
{
	char buf[SB_PATH_MAX * 2];
	size_t o = 0;
	char *p, *save = NULL;

	int n;

	if (path[0] == '/') {
		n = snprintf(buf, sizeof(buf), "%s", path);
	} else {
		char cwd[SB_PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		n = snprintf(buf, sizeof(buf), "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	for (p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		if (strcmp(p, ".") == 0)
			continue;
		if (strcmp(p, "..") == 0) {
			while (o > 0 && out[--o] != '/')
				;
			continue;
		}
		if (o + strlen(p) + 2 > len)
			return -1;
		out[o++] = '/';
		memcpy(out + o, p, strlen(p));
		o += strlen(p);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

int tg_sandbox_spec_add_bind(struct tg_sandbox_spec *s, const char *host,
			     const char *inside, int writable, struct tg_error *err)
{
	const char *opt = writable ? "--rw" : "--ro";
	char in[SB_PATH_MAX];
	char *real = NULL;
	struct stat st;
	struct sb_bind *b;

	if (s->nbinds == SB_MAX_BINDS)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: at most %d binds", opt, SB_MAX_BINDS);
	if (!host || !*host)
		return tg_error_set(err, TG_ERR_INVALID, "%s: empty host path", opt);
	if (strnlen(host, SB_PATH_MAX) >= SB_PATH_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: host path too long", opt);
	real = realpath(host, NULL);
	if (!real || stat(real, &st) < 0) {
		int e = errno;

		free(real);
		return tg_error_sys(err, e, "%s %s", opt, host);
	}
	/* No symlink anywhere in a bind source: one that a sandbox planted
	 * through a --rw bind would otherwise choose what a later run binds
	 * (say, the host's /). At run time the path is resolved again without
	 * following any (rootfs.c), so none can appear in between either. */
	if (lexical_absolute(host, in, sizeof(in)) < 0 || strcmp(in, real) != 0) {
		tg_error_set(err, TG_ERR_INVALID,
			     "%s %s: the path goes through a symlink (it resolves to %s); "
			     "name the real path", opt, host, real);
		free(real);
		return -1;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		free(real);
		return tg_error_set(err, TG_ERR_INVALID,
				    "%s %s: not a directory or regular file", opt, host);
	}
	if (access(real, writable ? R_OK | W_OK : R_OK) < 0) {
		int e = errno;

		free(real);
		return tg_error_sys(err, e, "%s %s", opt, host);
	}
	if (normalise_inside(inside ? inside : real, in, sizeof(in), opt, err) < 0) {
		free(real);
		return -1;
	}
	if (reserved_inside(in)) {
		free(real);
		return tg_error_set(err, TG_ERR_INVALID,
				    "%s %s: cannot bind over %s", opt, host, in);
	}
	b = &s->binds[s->nbinds];
	b->host = real;
	b->inside = strdup(in);
	if (!b->inside) {
		free(real);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	b->writable = !!writable;
	b->is_dir = S_ISDIR(st.st_mode);
	s->nbinds++;
	return 0;
}

/* An overlay's upper or work directory: canonical (no symlink on the
 * way), empty, the caller's own; malloc'd, OUT *st; NULL and err. */
static char *layer_dir(const char *path, const char *what, struct stat *st,
		       struct tg_error *err)
{
	char in[SB_PATH_MAX], *real = path ? realpath(path, NULL) : NULL;
	DIR *d = real ? opendir(real) : NULL;
	struct dirent *e;
	int empty = d != NULL;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = 0;
	if (d)
		closedir(d);
	if (!real || lexical_absolute(path, in, sizeof(in)) < 0 || strcmp(in, real) != 0 ||
	    lstat(real, st) < 0 || !S_ISDIR(st->st_mode) || !empty || st->st_uid != geteuid()) {
		tg_error_set(err, TG_ERR_INVALID, "--overlay: %s %s: an empty directory of the "
			     "caller's own, reached without symlinks", what, path ? path : "");
		free(real);
		return NULL;
	}
	return real;
}

int tg_sandbox_spec_add_overlay(struct tg_sandbox_spec *s, const char *host, const char *inside,
				const char *upper, const char *work, struct tg_error *err)
{
	struct stat us, ws;
	struct sb_bind *b;
	char *u, *w;

	u = layer_dir(upper, "upper", &us, err);
	w = u ? layer_dir(work, "work", &ws, err) : NULL;
	if (w && (us.st_dev != ws.st_dev || us.st_ino == ws.st_ino)) {
		tg_error_set(err, TG_ERR_INVALID, "--overlay: upper and work must be two "
			     "directories of one filesystem");
		free(w);
		w = NULL;
	}
	if (!w || tg_sandbox_spec_add_bind(s, host, inside, 0, err) < 0) {
		free(u);
		free(w);
		return -1;
	}
	b = &s->binds[s->nbinds - 1];
	if (!b->is_dir) {
		free(u);
		free(w);
		free(b->host);
		free(b->inside);
		s->nbinds--;
		return tg_error_set(err, TG_ERR_INVALID, "--overlay %s: not a directory", host);
	}
	b->upper = u;
	b->work = w;
	b->writable = 1;
	return 0;
}

void tg_sandbox_spec_host_id(const struct tg_sandbox_spec *s, unsigned *uid, unsigned *gid)
{
	*uid = s->host_uid;
	*gid = s->host_gid;
}

/* Whether uid:gid, with no supplementary group, may do want (R_OK, W_OK
 * or X_OK) to st by its mode bits, and, a directory, enter it: the
 * permission check the kernel makes for the sandbox's user of a root
 * caller, who dropped root's groups (docs/SANDBOX.md, "Identity"). ACLs
 * are not read. */
static int mode_allows(const struct stat *st, unsigned uid, unsigned gid, int want)
{
	int dir = S_ISDIR(st->st_mode), shift;

	if (st->st_uid == uid)
		shift = 6;
	else if (st->st_gid == gid)
		shift = 3;
	else
		shift = 0;
	/* R_OK, W_OK and X_OK are the mode's bits 4, 2 and 1 */
	return ((st->st_mode >> shift) & want) && (!dir || ((st->st_mode >> shift) & 1));
}

static int bind_access(const struct tg_sandbox_spec *s, const char *host, int want, char *why,
		       size_t len)
{
	static const char *const said[] = { [R_OK] = "readable", [W_OK] = "writable",
					    [X_OK] = "executable" };
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	struct stat st;
	int e, ok, dir;

	if (stat(host, &st) < 0) {
		e = errno;
		snprintf(why, len, "%s: %s", host, strerror(e));
		return -1;
	}
	dir = S_ISDIR(st.st_mode);
	/* the caller's own answer first: a read-only filesystem stops root too */
	ok = faccessat(AT_FDCWD, host, want | (dir ? X_OK : 0), AT_EACCESS) == 0;
	if (!ok && errno == EROFS) {
		snprintf(why, len, "%s is on a read-only filesystem", host);
		return 0;
	}
	if (uid == 0) {
		/* a root caller's sandbox runs as its host ids, not as
		 * root; and what root may not (an immutable directory, a
		 * security module's refusal) they may not either */
		uid = s ? s->host_uid : SB_OVERFLOW_ID;
		gid = s ? s->host_gid : SB_OVERFLOW_ID;
		ok = ok && mode_allows(&st, uid, gid, want);
	}
	if (ok)
		return 1;
	if (want == W_OK)
		snprintf(why, len, "%s is not writable by the sandbox's user (uid %u: chown %u:%u %s)",
			 host, uid, uid, gid, host);
	else
		snprintf(why, len, "%s is not %s by the sandbox's user (uid %u: chmod o+%s %s)",
			 host, said[want], uid, want == X_OK ? "x" : dir ? "rx" : "r", host);
	return 0;
}

int tg_sandbox_bind_writable(const struct tg_sandbox_spec *s, const char *host, char *why,
			     size_t len)
{
	return bind_access(s, host, W_OK, why, len);
}

int tg_sandbox_bind_readable(const struct tg_sandbox_spec *s, const char *host, char *why,
			     size_t len)
{
	return bind_access(s, host, R_OK, why, len);
}

int tg_sandbox_bind_executable(const struct tg_sandbox_spec *s, const char *host, char *why,
			       size_t len)
{
	return bind_access(s, host, X_OK, why, len);
}

int tg_sandbox_spec_set_workdir(struct tg_sandbox_spec *s, const char *dir,
				struct tg_error *err)
{
	char in[SB_PATH_MAX];
	char *d;

	if (normalise_inside(dir, in, sizeof(in), "--workdir", err) < 0)
		return -1;
	if (reserved_inside(in))
		return tg_error_set(err, TG_ERR_INVALID, "--workdir %s: not allowed", dir);
	d = strdup(in);
	if (!d)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	free(s->workdir);
	s->workdir = d;
	return 0;
}

int tg_sandbox_spec_add_env(struct tg_sandbox_spec *s, const char *a,
			    struct tg_error *err)
{
	const char *eq, *p;
	size_t len, total = 0;
	char *copy;
	int i;

	if (!a || !(eq = strchr(a, '=')) || eq == a)
		return tg_error_set(err, TG_ERR_INVALID, "--env %s: expected NAME=VALUE",
				    a ? a : "");
	for (p = a; p < eq; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
		      (p > a && *p >= '0' && *p <= '9')))
			return tg_error_set(err, TG_ERR_INVALID,
					    "--env %.*s: invalid variable name", (int)(eq - a), a);
	len = strnlen(a, SB_ARG_MAX + 1);
	for (i = 0; i < s->nenv; i++)
		total += strlen(s->env[i]) + 1;
	if (total + len + 1 > SB_ARG_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "--env: environment too large");
	copy = strdup(a);
	if (!copy)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	/* A later assignment of the same name replaces the earlier one. */
	for (i = 0; i < s->nenv; i++)
		if (strncmp(s->env[i], a, (size_t)(eq - a) + 1) == 0) {
			explicit_bzero(s->env[i], strlen(s->env[i]));
			free(s->env[i]);
			s->env[i] = copy;
			return 0;
		}
	if (s->nenv == SB_MAX_ENV) {
		explicit_bzero(copy, strlen(copy));
		free(copy);
		return tg_error_set(err, TG_ERR_LIMIT, "--env: at most %d variables", SB_MAX_ENV);
	}
	s->env[s->nenv++] = copy;
	s->env[s->nenv] = NULL;
	return 0;
}

void tg_sandbox_spec_set_stdin_fd(struct tg_sandbox_spec *s, int fd)
{
	s->stdin_fd = fd;
}

int tg_sandbox_spec_set_host_id(struct tg_sandbox_spec *s, unsigned uid, unsigned gid,
				struct tg_error *err)
{
	if (geteuid() != 0)
		return tg_error_set(err, TG_ERR_INVALID,
				    "--host-uid: only a root caller chooses the sandbox's host "
				    "identity; others run as themselves");
	if (uid == 0 || gid == 0 || uid == (unsigned)-1 || gid == (unsigned)-1)
		return tg_error_set(err, TG_ERR_INVALID,
				    "--host-uid %u:%u: must be an unprivileged uid and gid", uid, gid);
	s->host_uid = uid;
	s->host_gid = gid;
	return 0;
}

int tg_sandbox_spec_set_egress(struct tg_sandbox_spec *s, struct tg_egress_proxy *proxy,
			       struct tg_error *err)
{
	if (proxy && s->tier != TG_TIER_STANDARD)
		return tg_error_set(err, TG_ERR_INVALID, "egress: the strict tier has no network; "
				    "an allowlist is for the standard tier");
	s->egress = proxy;
	return 0;
}

void tg_sandbox_spec_set_cancel_fd(struct tg_sandbox_spec *s, int fd)
{
	s->cancel_fd = fd;
}

void tg_sandbox_spec_set_server(struct tg_sandbox_spec *s, int on)
{
	s->server = !!on;
}

void tg_sandbox_spec_set_output_fn(struct tg_sandbox_spec *s,
				   tg_sandbox_output_fn fn, void *ctx)
{
	s->out_fn = fn;
	s->out_ctx = ctx;
}

int tg_sandbox_spec_set_cgroup_parent(struct tg_sandbox_spec *s, const char *rel,
				      struct tg_error *err)
{
	char in[SB_PATH_MAX];
	char *d;

	if (normalise_inside(rel, in, sizeof(in), "--cgroup-parent", err) < 0)
		return -1;
	d = strdup(in);
	if (!d)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	free(s->cgroup_parent);
	s->cgroup_parent = d;
	return 0;
}

const char *tg_tier_name(enum tg_tier tier)
{
	return tier == TG_TIER_STANDARD ? "standard" : "strict";
}

int tg_tier_parse(const char *name)
{
	if (name && strcmp(name, "strict") == 0)
		return TG_TIER_STRICT;
	if (name && strcmp(name, "standard") == 0)
		return TG_TIER_STANDARD;
	return -1;
}

/* ---- for the warm pool (pool.c) ------------------------------------------------ */

static int dup_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -1 : 0;
}

struct tg_sandbox_spec *spec_dup(const struct tg_sandbox_spec *s)
{
	struct tg_sandbox_spec *d = calloc(1, sizeof(*d));
	int i, bad = 0;

	if (!d)
		return NULL;
	*d = *s;
	d->argv = NULL;
	d->argc = 0;
	d->workdir = NULL;
	d->cgroup_parent = NULL;
	d->nbinds = d->nenv = 0;
	d->out_fn = NULL;
	d->out_ctx = NULL;
	d->stdin_fd = d->cancel_fd = -1;
	d->egress = NULL;
	if (s->argv && tg_sandbox_spec_set_argv(d, s->argc, s->argv, NULL) < 0)
		bad = 1;
	bad |= dup_str(&d->workdir, s->workdir) < 0 || dup_str(&d->cgroup_parent, s->cgroup_parent) < 0;
	for (i = 0; i < s->nbinds && !bad; i++, d->nbinds++) {
		d->binds[i] = s->binds[i];
		d->binds[i].host = d->binds[i].inside = d->binds[i].upper = d->binds[i].work = NULL;
		bad |= dup_str(&d->binds[i].host, s->binds[i].host) < 0 ||
		       dup_str(&d->binds[i].inside, s->binds[i].inside) < 0 ||
		       dup_str(&d->binds[i].upper, s->binds[i].upper) < 0 ||
		       dup_str(&d->binds[i].work, s->binds[i].work) < 0;
	}
	for (i = 0; i < s->nenv && !bad; i++, d->nenv++)
		bad |= dup_str(&d->env[i], s->env[i]) < 0;
	if (bad) {
		tg_sandbox_spec_free(d);
		return NULL;
	}
	return d;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int spec_pool_match(const struct tg_sandbox_spec *t, const struct tg_sandbox_spec *s, int prestart)
{
	int i;

	/* what the sandbox is made of before its command is known */
	if (t->tier != s->tier || t->memory != s->memory || t->millicpus != s->millicpus ||
	    t->pids != s->pids || t->timeout_ms != s->timeout_ms || t->server != s->server ||
	    t->tmpfs_size != s->tmpfs_size || t->host_uid != s->host_uid ||
	    t->host_gid != s->host_gid || !same_str(t->workdir, s->workdir) ||
	    !same_str(t->cgroup_parent, s->cgroup_parent) || !t->egress != !s->egress ||
	    t->nbinds != s->nbinds)
		return 0;
	for (i = 0; i < t->nbinds; i++)
		if (!same_str(t->binds[i].host, s->binds[i].host) ||
		    !same_str(t->binds[i].inside, s->binds[i].inside) ||
		    t->binds[i].writable != s->binds[i].writable || t->binds[i].upper ||
		    s->binds[i].upper)
			return 0;
	if (!prestart)
		return 1;
	/* a command started ahead: the very same, in the same environment */
	if (t->argc != s->argc || t->nenv != s->nenv)
		return 0;
	for (i = 0; i < t->argc; i++)
		if (strcmp(t->argv[i], s->argv[i]) != 0)
			return 0;
	for (i = 0; i < t->nenv; i++)
		if (strcmp(t->env[i], s->env[i]) != 0)
			return 0;
	return 1;
}
