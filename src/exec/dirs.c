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
 * copies, the layers of overlay dry runs) must lie outside every
 * directory a tool can be given: the gate refuses to start when the
 * workspace and the state directory overlap, when the workspace still
 * holds an earlier toolgate's undo records (.toolgate/undo), or when a
 * contract mounts a directory that is, holds or lies in the state
 * directory, or holds the overlay layers' directory.
 *
 * It must never give a tool a directory its contract did not ask for,
 * nor follow a symlink where it makes a state directory or hands it to
 * the sandbox's user.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "toolgate/catalog.h"

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

void exec_dirs_free(struct exec_dirs *d)
{
	if (!d)
		return;
	free(d->workspace);
	free(d->tools_dir);
	free(d->state);
	free(d->workspace_real);
	free(d->state_real);
	free(d);
}

/* The checks of exec_dirs_new on d, whose real paths are known. */
static int dirs_check(const struct exec_dirs *d, struct tg_error *err)
{
	char stale[PATH_MAX + 32];
	struct stat st;

	if (d->workspace_real && d->state_real && overlap(d->workspace_real, d->state_real))
		return tg_error_set(err, TG_ERR_INVALID, "--workspace %s and --state %s overlap: "
				    "the state directory holds the gateway's records (undo copies "
				    "of deleted files among them) and must lie outside the "
				    "workspace, which tools are given", d->workspace, d->state);
	if (!d->workspace_real)
		return 0;
	if (realpath(EXEC_OVERLAY_DIR, stale) && within(stale, d->workspace_real))
		return tg_error_set(err, TG_ERR_INVALID, "--workspace %s is or holds %s, where "
				    "overlay dry runs keep their layers", d->workspace,
				    EXEC_OVERLAY_DIR);
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
	return 0;
}

/* The real path of path, or of what it will be when it is made (the
 * store makes the state directory): malloc'd; NULL and errno. */
static char *real_path(const char *path)
{
	char dir[PATH_MAX], *real = realpath(path, NULL), *base, *out = NULL;
	size_t n;

	if (real || errno != ENOENT)
		return real;
	n = (size_t)snprintf(dir, sizeof(dir), "%s", path);
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = '\0';
	base = strrchr(dir, '/');
	if (base)
		*base++ = '\0';
	else
		base = dir;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = ENOENT;
		return NULL;
	}
	real = realpath(base == dir ? "." : dir[0] ? dir : "/", NULL);
	if (real && asprintf(&out, "%s/%s", strcmp(real, "/") ? real : "", base) < 0)
		out = NULL;
	free(real);
	return out;
}

int exec_dirs_new(const char *workspace, const char *tools_dir, const char *state,
		  struct exec_dirs **out, struct tg_error *err)
{
	struct exec_dirs *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if ((workspace && !(d->workspace = strdup(workspace))) ||
	    (tools_dir && !(d->tools_dir = strdup(tools_dir))) ||
	    (state && !(d->state = strdup(state)))) {
		exec_dirs_free(d);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (workspace && !(d->workspace_real = realpath(workspace, NULL))) {
		tg_error_sys(err, errno, "--workspace %s", workspace);
		goto fail;
	}
	if (state && !(d->state_real = real_path(state))) {
		tg_error_sys(err, errno, "--state %s", state);
		goto fail;
	}
	if (dirs_check(d, err) < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	exec_dirs_free(d);
	return -1;
}

/* Mount i of command tool k against d. */
static int mount_check(const struct tg_contract *k, size_t i, const struct exec_dirs *d,
		       struct tg_error *err)
{
	const char *host = k->mounts[i].host;
	char path[PATH_MAX], real[PATH_MAX], tmp[PATH_MAX];

	if (host[0] != '/' && d->tools_dir) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->tools_dir, host) >=
		    sizeof(path))
			return tg_error_set(err, TG_ERR_INVALID, "%s: executor.mounts[%zu]: %s: path "
					    "too long", k->file, i, host);
		host = path;
	}
	/* one that does not exist is refused when the tool runs */
	if (!realpath(host, real))
		return 0;
	if (d->state_real && overlap(real, d->state_real))
		return tg_error_set(err, TG_ERR_INVALID, "%s: executor.mounts[%zu]: %s %s the "
				    "gateway's state directory %s, which no tool is given (a write "
				    "tool may ask for its own part of it: executor.state)", k->file,
				    i, k->mounts[i].host, strcmp(real, d->state_real) == 0 ? "is"
				    : within(real, d->state_real) ? "lies in" : "holds", d->state);
	if (realpath(EXEC_OVERLAY_DIR, tmp) && within(tmp, real))
		return tg_error_set(err, TG_ERR_INVALID, "%s: executor.mounts[%zu]: %s is or holds "
				    "%s, where overlay dry runs keep their layers", k->file, i,
				    k->mounts[i].host, EXEC_OVERLAY_DIR);
	return 0;
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
	return 0;
}

/* Directory name in dir, made 0700 when missing, opened without
 * following a symlink; -1 and errno. */
static int subdir(int dir, const char *name)
{
	if (mkdirat(dir, name, 0700) < 0 && errno != EEXIST)
		return -1;
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int exec_state_dir(const struct exec_dirs *d, const struct tg_contract *k, unsigned uid,
		   unsigned gid, char *path, size_t len, struct tg_error *err)
{
	size_t n = strcspn(k->name, ".");
	int top = -1, tools = -1, fam = -1, rc = -1;
	char family[160];
	struct stat st;

	if (!d->state)
		return tg_error_set(err, TG_ERR_INVALID, "%s: the gateway has no state directory "
				    "to give it (serve --state DIR)", k->name);
	/* the loader refused a name that starts with a dot: n > 0 */
	snprintf(family, sizeof(family), "%.*s", (int)n, k->name);
	if (!n || (size_t)snprintf(path, len, "%s/tools/%s", d->state, family) >= len)
		return tg_error_set(err, TG_ERR_INVALID, "%s: its state directory: path too long",
				    k->name);
	top = open(d->state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top >= 0)
		tools = subdir(top, "tools");
	if (tools >= 0)
		fam = subdir(tools, family);
	if (fam < 0 || fstat(fam, &st) < 0) {
		tg_error_sys(err, errno, "%s: its state directory %s", k->name, path);
		goto out;
	}
	/* the sandbox's user writes it, and nobody else reads it; as root,
	 * one the operator made (moving old records in) is handed over */
	if ((geteuid() == 0 && (st.st_uid != uid || st.st_gid != gid) &&
	     fchown(fam, uid, gid) < 0) ||
	    ((st.st_mode & 07777) != 0700 && fchmod(fam, 0700) < 0)) {
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
