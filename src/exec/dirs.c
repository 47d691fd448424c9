/*
 * The host directories a command tool may be given besides its contract's
 * mounts (docs/contracts.md, "executor"; docs/PIPELINE.md, "Command
 * tools"): the gateway's --workspace, at /workspace, only to a tool whose
 * contract asks for it (executor.workspace read, or write for a write
 * tool), and a write tool's family state directory, STATE/tools/FAMILY
 * at /state, only to a write tool that asks for it (executor.state). The
 * family is the tool's name up to its first dot: fs.write keeps there
 * the undo copies fs.undo reads.
 *
 * The gateway's own records (its store and audit log, the tools' undo
 * copies, the layers of overlay dry runs, its record, policy and token
 * files) and the catalogue it loads must lie outside every directory a
 * tool can be given, and no contract mount may hand out the workspace,
 * which only executor.workspace gives: the gate refuses to start when
 * the workspace overlaps the state directory or the catalogue, holds a
 * file of the gateway's own or an earlier toolgate's undo records
 * (.toolgate/undo), and a catalogue whose mounts are, hold or lie in the
 * state directory or the workspace, hold /tmp (the overlay layers), a
 * file of the gateway's own or .toolgate/undo, or write the catalogue. A
 * mount whose source does not exist yet is judged by where it will be
 * (resolve), and every bind is checked again, by its real path, when a
 * tool runs (exec_dirs_check_bind): what changed on the host since the
 * catalogue loaded is caught there.
 *
 * It must never give a tool a directory its contract did not ask for,
 * nor follow a symlink where it makes a state directory or hands it to
 * the sandbox's user.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "toolgate/catalog.h"
#include "toolgate/upstream.h"

/* a is b, or lies in it (both real paths) */
static int within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return 1;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

static int overlap(const char *a, const char *b)
{
	return within(a, b) || within(b, a);
}

/* How a (a real path) stands to b, which overlap */
static const char *relation(const char *a, const char *b)
{
	return strcmp(a, b) == 0 ? "is" : within(a, b) ? "lies in" : "holds";
}

void exec_dirs_free(struct exec_dirs *d)
{
	size_t i;

	if (!d)
		return;
	free(d->workspace);
	free(d->tools_dir);
	free(d->tools_copy);
	free(d->state);
	free(d->workspace_real);
	free(d->state_real);
	free(d->tools_real);
	for (i = 0; i < d->nown; i++)
		free(d->own_real[i]);
	free(d->own_real);
	free(d);
}

static int fail(int e)
{
	errno = e;
	return -1;
}

/* One component of *todo taken into out[PATH_MAX] (a real path): "." is
 * nothing, ".." the parent, a symlink its target (the rest of *todo put
 * after it), anything else appended, whether it exists or not. */
static int resolve_step(char *out, char *todo, int *links)
{
	char part[PATH_MAX], target[PATH_MAX], rest[PATH_MAX];
	size_t n, lead = strspn(todo, "/");
	const char *next;
	struct stat st;
	int missing;
	ssize_t t;

	memmove(todo, todo + lead, strlen(todo + lead) + 1);
	n = strcspn(todo, "/");
	next = todo + n + strspn(todo + n, "/");
	if (n == 0)
		return 0;
	if ((n == 1 && todo[0] == '.') || (n == 2 && todo[0] == '.' && todo[1] == '.')) {
		char *slash = strrchr(out, '/');

		if (n == 2)
			slash[slash == out] = '\0';
		memmove(todo, next, strlen(next) + 1);
		return 0;
	}
	if ((size_t)snprintf(part, sizeof(part), "%s/%.*s", strcmp(out, "/") ? out : "", (int)n,
			     todo) >= sizeof(part))
		return fail(ENAMETOOLONG);
	missing = lstat(part, &st) < 0;
	if (missing && errno != ENOENT && errno != ENOTDIR)
		return -1;
	if (missing || !S_ISLNK(st.st_mode)) {
		/* what does not exist yet is made as a directory would be */
		memcpy(out, part, strlen(part) + 1);
		memmove(todo, next, strlen(next) + 1);
		return 0;
	}
	if (++*links > 40)
		return fail(ELOOP);
	t = readlink(part, target, sizeof(target) - 1);
	if (t < 0)
		return -1;
	target[t] = '\0';
	if ((size_t)snprintf(rest, sizeof(rest), "%s/%s", target, next) >= sizeof(rest))
		return fail(ENAMETOOLONG);
	if (target[0] == '/')
		snprintf(out, PATH_MAX, "/");
	memcpy(todo, rest, strlen(rest) + 1);
	return 0;
}

/* The real path of path where it exists, and where it does not yet (the
 * store makes the state directory after the gate starts; a mount's source
 * may be made later), what it will be when what is missing is made as
 * plain directories: symlinks followed, "." and ".." applied, the missing
 * rest appended. malloc'd; NULL and errno (ELOOP, ENAMETOOLONG, EACCES...). */
static char *resolve(const char *path)
{
	char out[PATH_MAX], todo[PATH_MAX];
	int links = 0;

	if (!path || !*path || (size_t)snprintf(todo, sizeof(todo), "%s", path) >= sizeof(todo)) {
		errno = path && *path ? ENAMETOOLONG : ENOENT;
		return NULL;
	}
	if (path[0] == '/')
		snprintf(out, sizeof(out), "/");
	else if (!getcwd(out, sizeof(out)))
		return NULL;
	while (todo[0])
		if (resolve_step(out, todo, &links) < 0)
			return NULL;
	return strdup(out);
}

static int say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* fmt into why[len]: 1 */
static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 1;
}

/* Why the host directory at real path real may not be given to a tool
 * (mount: as a contract's mount, writable or not; else as the workspace),
 * a phrase that follows its name, into why[len]: 1; or 0. */
static int refused(const struct exec_dirs *d, const char *real, int mount, int writable,
		   char *why, size_t len)
{
	char tmp[PATH_MAX], stale[PATH_MAX + 32];
	size_t i, n;
	struct stat st;

	if (d->state_real && overlap(real, d->state_real))
		return say(why, len, "%s the gateway's state directory %s, which no tool is given "
			   "(a write tool may ask for its own part of it: executor.state)",
			   relation(real, d->state_real), d->state);
	if (realpath(EXEC_OVERLAY_DIR, tmp)) {
		n = strlen(tmp);
		if (within(tmp, real))
			return say(why, len, "is or holds %s, where overlay dry runs keep their "
				   "layers", EXEC_OVERLAY_DIR);
		/* another run's layers, which it could read or change (real
		 * is not tmp: real[n] is its slash) */
		if (within(real, tmp) && strncmp(real + n + (n > 1), EXEC_OVERLAY_PREFIX,
						 strlen(EXEC_OVERLAY_PREFIX)) == 0)
			return say(why, len, "lies in an overlay dry run's layers (%s/%s*)",
				   EXEC_OVERLAY_DIR, EXEC_OVERLAY_PREFIX);
	}
	if (mount && d->workspace_real && overlap(real, d->workspace_real))
		return say(why, len, "%s the workspace %s, which a tool is given only when its "
			   "contract asks (executor.workspace: read or write)",
			   relation(real, d->workspace_real), d->workspace);
	if (d->tools_real && (!mount || writable) && overlap(real, d->tools_real))
		return say(why, len, "%s%s the catalogue directory %s, whose contracts and tool "
			   "programs the gateway loads", mount ? "is writable and " : "",
			   relation(real, d->tools_real), d->tools_dir);
	for (i = 0; i < d->nown; i++)
		if (within(d->own_real[i], real))
			return say(why, len, "holds %s, a file of the gateway's own (its record, "
				   "policy, tokens or key)", d->own_real[i]);
	/* before the undo records moved to the state directory, the file
	 * tools kept them here, where every tool given it could read them */
	snprintf(stale, sizeof(stale), "%s/.toolgate/undo", strcmp(real, "/") ? real : "");
	if (lstat(stale, &st) == 0)
		return say(why, len, "holds .toolgate/undo, undo records of an earlier toolgate "
			   "(copies of changed and deleted files): move them to %s/tools/fs/ or "
			   "remove them", d->state ? d->state : "STATE");
	return 0;
}

/* The checks of exec_dirs_new on d, whose real paths are known. */
static int dirs_check(const struct exec_dirs *d, struct tg_error *err)
{
	char stale[PATH_MAX + 32], why[PATH_MAX + 256];
	struct stat st;

	if (d->workspace_real && d->state_real && overlap(d->workspace_real, d->state_real))
		return tg_error_set(err, TG_ERR_INVALID, "--workspace %s and --state %s overlap: "
				    "the state directory holds the gateway's records (undo copies "
				    "of deleted files among them) and must lie outside the "
				    "workspace, which tools are given", d->workspace, d->state);
	if (!d->workspace_real)
		return 0;
	/* before the undo records moved to the state directory, the file
	 * tools kept them here, where every tool given the workspace could
	 * read them: they are moved by the operator, never served */
	snprintf(stale, sizeof(stale), "%s/.toolgate/undo", d->workspace_real);
	if (lstat(stale, &st) == 0)
		return tg_error_set(err, TG_ERR_INVALID, "--workspace %.120s holds .toolgate/undo, "
				    "undo records of an earlier toolgate (copies of changed and "
				    "deleted files) that any tool given the workspace could read: "
				    "move them (mkdir -p %.100s/tools/fs && mv %.100s "
				    "%.100s/tools/fs/ && rmdir %.100s/.toolgate) or remove them",
				    d->workspace, d->state ? d->state : "STATE", stale,
				    d->state ? d->state : "STATE", d->workspace);
	/* the catalogue, the overlay layers, the gateway's own files */
	if (refused(d, d->workspace_real, 0, 0, why, sizeof(why)))
		return tg_error_set(err, TG_ERR_INVALID, "--workspace %s %s: it is given to tools",
				    d->workspace, why);
	return 0;
}

/* The gateway's own files outside the state directory (the record, the
 * policy...), by real path, into d; those that are not regular files
 * ("-", /dev/null) are not the gateway's to guard. */
static int own_files(struct exec_dirs *d, const char *const *files, struct tg_error *err)
{
	size_t n = 0;
	struct stat st;

	while (files && files[n])
		n++;
	d->own_real = calloc(n + 1, sizeof(*d->own_real));
	if (!d->own_real)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (; files && *files; files++) {
		char *real;

		if (strcmp(*files, "-") == 0 || (stat(*files, &st) == 0 && !S_ISREG(st.st_mode)))
			continue;
		real = resolve(*files);
		if (!real)
			return tg_error_sys(err, errno, "%s", *files);
		d->own_real[d->nown++] = real;
	}
	return 0;
}

int exec_dirs_new(const struct exec_dirs_options *opts, struct exec_dirs **out,
		  struct tg_error *err)
{
	struct exec_dirs *d = calloc(1, sizeof(*d));
	const char *workspace = opts ? opts->workspace : NULL;
	const char *tools_dir = opts ? opts->tools_dir : NULL;
	const char *state = opts ? opts->state_dir : NULL;

	*out = NULL;
	if (!d)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if ((workspace && !(d->workspace = strdup(workspace))) ||
	    (tools_dir && !(d->tools_dir = strdup(tools_dir))) ||
	    (opts && opts->tools_copy && !(d->tools_copy = strdup(opts->tools_copy))) ||
	    (state && !(d->state = strdup(state)))) {
		exec_dirs_free(d);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (workspace && !(d->workspace_real = realpath(workspace, NULL))) {
		tg_error_sys(err, errno, "--workspace %s", workspace);
		goto fail;
	}
	if (state && !(d->state_real = resolve(state))) {
		tg_error_sys(err, errno, "--state %s", state);
		goto fail;
	}
	if (tools_dir && !(d->tools_real = resolve(tools_dir))) {
		tg_error_sys(err, errno, "--catalog %s", tools_dir);
		goto fail;
	}
	if (own_files(d, opts ? opts->own_files : NULL, err) < 0 || dirs_check(d, err) < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	exec_dirs_free(d);
	return -1;
}

/* 1 when the relative path p, read lexically, stays inside the folder it
 * is relative to (no ".." takes it out). */
static int stays_inside(const char *p)
{
	long depth = 0;

	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			depth--;
		else if (n && !(n == 1 && p[0] == '.'))
			depth++;
		if (depth < 0)
			return 0;
		p += n + (p[n] == '/');
	}
	return 1;
}

int exec_mount_host(const struct exec_dirs *d, const char *host, char *out, size_t len)
{
	/* what the signed catalogue holds comes from its verified copy; what
	 * lies outside it (../data) from where it is */
	const char *base = d && d->tools_copy && stays_inside(host) ? d->tools_copy
			   : d ? d->tools_dir : NULL;
	int n = host[0] != '/' && base ? snprintf(out, len, "%s/%s", base, host)
				       : snprintf(out, len, "%s", host);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Host path host of a mount, resolved; malloc'd, or NULL. */
static char *mount_real(const struct exec_dirs *d, const char *host)
{
	char path[PATH_MAX];

	return exec_mount_host(d, host, path, sizeof(path)) < 0 ? NULL : resolve(path);
}

/* Mount i of command tool k against d, at the catalogue's load: where its
 * source does not exist yet, as it will be when it is made (the run
 * checks again, exec_dirs_check_bind). */
static int mount_check(const struct tg_contract *k, size_t i, const struct exec_dirs *d,
		       struct tg_error *err)
{
	char why[PATH_MAX + 256], *real;
	int bad;

	real = mount_real(d, k->mounts[i].host);
	if (!real)
		return tg_error_sys(err, errno, "%s: executor.mounts[%zu]: %s", k->file, i,
				    k->mounts[i].host);
	bad = refused(d, real, 1, k->mounts[i].writable, why, sizeof(why));
	free(real);
	if (bad)
		return tg_error_set(err, TG_ERR_INVALID, "%s: executor.mounts[%zu]: %s %s", k->file,
				    i, k->mounts[i].host, why);
	return 0;
}

int exec_dirs_check_bind(const struct exec_dirs *d, const char *host, int mount, int writable,
			 struct tg_error *err)
{
	char why[PATH_MAX + 256], *real = realpath(host, NULL);
	int bad;

	if (!real)
		return tg_error_sys(err, errno, "%s", host);
	bad = refused(d, real, mount, writable, why, sizeof(why));
	free(real);
	if (bad)
		return tg_error_set(err, TG_ERR_INVALID, "%s %s: not given to the tool", host, why);
	return 0;
}

int exec_dirs_check_secret(const struct exec_dirs *d, const char *real, struct tg_error *err)
{
	size_t i;

	if (d && d->state_real && within(real, d->state_real))
		return tg_error_set(err, TG_ERR_INVALID, "%s lies in the gateway's state directory "
				    "%s: a secret's file is kept elsewhere", real, d->state);
	for (i = 0; d && i < d->nown; i++)
		if (strcmp(d->own_real[i], real) == 0)
			return tg_error_set(err, TG_ERR_INVALID, "%s is a file of the gateway's own "
					    "(its record, policy, tokens or key), not a secret to "
					    "give a server", real);
	return 0;
}

/* An upstream's credential, by the real path of its file. */
struct secret {
	const struct tg_upstream *u;
	size_t c;                    /* its index in u->credentials */
	char *real;
};

/* The first secret of v (n) that lies in host, named by what in why: a
 * contract's mount (self NULL: relative to the catalogue), or upstream
 * self's (its own secrets pass here: the runner refuses them each time it
 * starts). Its index + 1, or 0. host is resolved once, here. */
static size_t secret_in(const struct secret *v, size_t n, const struct exec_dirs *d,
			const char *host, const struct tg_upstream *self, char *why, size_t len,
			const char *what)
{
	char *real = self ? resolve(host) : mount_real(d, host);
	size_t i, hit = 0;

	for (i = 0; real && i < n && !hit; i++)
		if (v[i].u != self && within(v[i].real, real))
			hit = i + 1;
	free(real);
	if (hit)
		say(why, len, "lies in %s %s", what, host);
	return hit;
}

/* The first secret of v (n) where a sandbox, or the gateway's own, sees
 * it: in the workspace, the catalogue, a command tool's mount, another
 * upstream's mount, one of the gateway's own files or its state
 * directory. Its index + 1 and why; 0 when none. */
static size_t secret_exposed(const struct tg_catalog *catalog, const struct exec_dirs *d,
			     const struct secret *v, size_t n, char *why, size_t len,
			     struct tg_error *err)
{
	char what[PATH_MAX + 64];
	size_t i, m, hit;

	for (i = 0; i < n; i++) {
		if (d && d->workspace_real && within(v[i].real, d->workspace_real))
			return say(why, len, "lies in the workspace %s, which tools are given",
				   d->workspace) ? i + 1 : 0;
		if (d && d->tools_real && within(v[i].real, d->tools_real))
			return say(why, len, "lies in the catalogue %s", d->tools_dir) ? i + 1 : 0;
		if (exec_dirs_check_secret(d, v[i].real, err) < 0)
			return say(why, len, "%s", err->msg) ? i + 1 : 0;
	}
	for (i = 0; i < tg_catalog_count(catalog); i++) {
		const struct tg_contract *k = tg_catalog_at(catalog, i);

		for (m = 0; k->executor == TG_EXEC_COMMAND && m < k->nmounts; m++) {
			snprintf(what, sizeof(what), "%s's executor.mounts[%zu]", k->file, m);
			if ((hit = secret_in(v, n, d, k->mounts[m].host, NULL, why, len, what)))
				return hit;
		}
	}
	for (i = 0; i < tg_catalog_upstream_count(catalog); i++) {
		const struct tg_upstream *u = tg_catalog_upstream_at(catalog, i);

		for (m = 0; m < u->nmounts; m++) {
			snprintf(what, sizeof(what), "upstream %s's sandbox.mounts[%zu]", u->name, m);
			if ((hit = secret_in(v, n, d, u->mounts[m].host, u, why, len, what)))
				return hit;
		}
	}
	return 0;
}

/* Each credential of each upstream of catalog, where no sandbox sees it:
 * each file and each mount resolved once. */
static int check_credentials(const struct tg_catalog *catalog, const struct exec_dirs *d,
			     struct tg_error *err)
{
	char why[PATH_MAX + 256];
	struct secret *v = NULL, *nv;
	size_t n = 0, i, c, hit;
	int rc = 0;

	for (i = 0; rc == 0 && i < tg_catalog_upstream_count(catalog); i++) {
		const struct tg_upstream *u = tg_catalog_upstream_at(catalog, i);

		for (c = 0; rc == 0 && c < u->ncredentials; c++) {
			nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			v = nv;
			v[n] = (struct secret){ u, c, resolve(u->credentials[c].path) };
			if (!v[n].real)
				rc = tg_error_sys(err, errno, "upstream %s: credentials: %s",
						  u->name, u->credentials[c].name);
			else
				n++;
		}
	}
	if (rc == 0 && n && (hit = secret_exposed(catalog, d, v, n, why, sizeof(why), err))) {
		const struct secret *s = &v[hit - 1];

		rc = tg_error_set(err, TG_ERR_INVALID, "upstream %s: the credential %s: %s %s: a "
				  "secret's file lies where no sandbox is given it", s->u->name,
				  s->u->credentials[s->c].name, s->u->credentials[s->c].path, why);
	}
	for (i = 0; i < n; i++)
		free(v[i].real);
	free(v);
	return rc;
}

int exec_check_catalog(const struct tg_catalog *catalog, const struct exec_dirs *d,
		       struct tg_error *err)
{
	size_t i, m;

	for (i = 0; i < tg_catalog_count(catalog); i++) {
		const struct tg_contract *k = tg_catalog_at(catalog, i);

		/* a builtin that does not exist is a configuration error,
		 * said when the catalogue is loaded rather than on the first
		 * call */
		if (k->executor == TG_EXEC_BUILTIN && !exec_builtin_exists(k->builtin))
			return tg_error_set(err, TG_ERR_INVALID, "%s: no builtin tool named '%s'",
					    k->file, k->builtin);
		for (m = 0; k->executor == TG_EXEC_COMMAND && m < k->nmounts; m++)
			if (mount_check(k, m, d, err) < 0)
				return -1;
	}
	return check_credentials(catalog, d, err);
}

/* Directory name in dir, made when missing, opened without following a
 * symlink, then owned by uid:gid and mode 0700 whatever it was made with
 * (an operator's mkdir -p leaves the umask's mode): a gateway that is not
 * root cannot hand one over, and one another user owns is refused. Its
 * descriptor; -1 and errno. */
static int subdir(int dir, const char *name, unsigned uid, unsigned gid)
{
	struct stat st;
	int fd, e;

	if (mkdirat(dir, name, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		goto fail;
	if (geteuid() == 0 && (st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) < 0)
		goto fail;
	if (geteuid() != 0 && st.st_uid != uid) {
		errno = EPERM;
		goto fail;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0)
		goto fail;
	return fd;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

int exec_state_dir(const struct exec_dirs *d, const struct tg_contract *k, unsigned uid,
		   unsigned gid, char *path, size_t len, struct tg_error *err)
{
	size_t n = strcspn(k->name, ".");
	int top = -1, tools = -1, fam = -1, rc = -1;
	char family[160];

	if (!d->state)
		return tg_error_set(err, TG_ERR_INVALID, "%s: the gateway has no state directory "
				    "to give it (serve --state DIR)", k->name);
	/* the loader refused a name that starts with a dot: n > 0 */
	snprintf(family, sizeof(family), "%.*s", (int)n, k->name);
	if (!n || (size_t)snprintf(path, len, "%s/tools/%s", d->state, family) >= len)
		return tg_error_set(err, TG_ERR_INVALID, "%s: its state directory: path too long",
				    k->name);
	top = open(d->state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* STATE/tools is the gateway's, STATE/tools/FAMILY the sandbox's
	 * user's, who writes it; nobody else reads either, and one the
	 * operator made (moving old records in) is handed over */
	if (top >= 0)
		tools = subdir(top, "tools", geteuid(), getegid());
	if (tools >= 0)
		fam = subdir(tools, family, uid, gid);
	if (fam < 0) {
		tg_error_sys(err, errno, "%s: its state directory %s", k->name, path);
		goto out;
	}
	rc = 0;
out:
	if (fam >= 0)
		close(fam);
	if (tools >= 0)
		close(tools);
	if (top >= 0)
		close(top);
	return rc;
}
