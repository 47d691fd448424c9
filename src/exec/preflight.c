/*
 * A deployment checked before it serves (docs/CLI.md, "Checked at
 * start"): what each command tool's executor needs of the host, looked at
 * as the sandbox will see it, so that a missing program, script, mount or
 * workspace, or one the sandbox's user cannot read or write, is said at
 * start with the file and field to fix, not found by an agent's call (a
 * ticket burnt on a traceback).
 *
 * The sandbox's view (docs/SANDBOX.md, "Root filesystem"): /usr, the root
 * directories and links that lead into it (/bin, /lib...) and three files
 * of /etc, as the host has them; the contract's mounts; /workspace and
 * /state when it asks for them; tmpfs elsewhere. A path inside is looked
 * up on the host through the mount that shows it; the program named by a
 * bare argv[0] is searched for along the PATH the sandbox will have (the
 * contract's env, else the sandbox's default).
 *
 * It reports; it never changes anything, and what it cannot see (a path
 * on a tmpfs, /state, which the run makes) it passes over.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "toolgate/catalog.h"
#include "toolgate/sandbox.h"
#include "toolgate/upstream.h"

struct check {
	const struct exec_dirs *d;
	int writes;                  /* write tools can run (the gateway has a store) */
	exec_problem_fn fn;
	void *ctx;
	unsigned n;                  /* problems reported */
	char *seen[256];             /* directories looked at ("r/host", "w/host") */
	size_t nseen;
	const struct tg_contract *unplaced; /* the first tool asking for a workspace */
	size_t nunplaced;            /* that there is not, and how many do */
};

/* 1 the first time dir is looked at for this access (0 read, 1 write; 2:
 * a program looked for, "NAME:PATH"): each is said once, at the first
 * tool that is given it. */
static int first_look(struct check *c, const char *host, int write)
{
	char key[4200];
	size_t i;

	snprintf(key, sizeof(key), "%c%s", "rwp"[write], host);
	for (i = 0; i < c->nseen; i++)
		if (strcmp(c->seen[i], key) == 0)
			return 0;
	if (c->nseen < sizeof(c->seen) / sizeof(c->seen[0]))
		c->seen[c->nseen++] = strdup(key);
	return 1;
}

static void problem(struct check *c, const char *file, const char *field, const char *fix,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void problem(struct check *c, const char *file, const char *field, const char *fix,
		    const char *fmt, ...)
{
	char where[1200], what[1600];
	va_list ap;

	snprintf(where, sizeof(where), "%s: %s", file, field);
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	c->n++;
	c->fn(c->ctx, where, what, fix);
}

static int under(const char *path, const char *dir, const char **rest)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return 0;
	*rest = path + n;
	return 1;
}

#define NO_WORKSPACE_FIX "serve --workspace DIR (or workspace = DIR in the configuration file)"

enum seen { UNSEEN, HOST, SKIP };

/* Where path, inside k's sandbox, is on the host: HOST (out[len] the host
 * path; mounted: through a mount of the contract or the workspace),
 * UNSEEN (nothing shows it), or SKIP (a tmpfs, /state, /proc, /dev). */
static enum seen host_of(const struct tg_contract *k, const struct exec_dirs *d,
			 const char *path, char *out, size_t len, int *mounted)
{
	static const char *const scratch[] = { "/tmp", "/dev", "/proc", "/state", "/work" };
	const char *rest, *best = NULL, *best_rest = NULL;
	char host[4096];
	size_t i, best_len = 0;

	*mounted = 1;
	for (i = 0; i < k->nmounts; i++)
		if (under(path, k->mounts[i].inside, &rest) &&
		    strlen(k->mounts[i].inside) >= best_len) {
			best = k->mounts[i].host;
			best_rest = rest;
			best_len = strlen(k->mounts[i].inside);
		}
	if (best) {
		if (exec_mount_host(d, best, host, sizeof(host)) < 0)
			return SKIP; /* the catalogue's check says so */
		snprintf(out, len, "%s%s", host, best_rest);
		return HOST;
	}
	if (k->workspace != TG_WORKSPACE_NONE && d->workspace &&
	    under(path, "/workspace", &rest)) {
		snprintf(out, len, "%s%s", d->workspace, rest);
		return HOST;
	}
	*mounted = 0;
	if (tg_sandbox_shows_host(path)) {
		snprintf(out, len, "%s", path);
		return HOST;
	}
	for (i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++)
		if (under(path, scratch[i], &rest))
			return SKIP;
	return UNSEEN;
}

/* The directories the sandbox shows k, for a message: "/usr, /bin, ...,
 * /tools, /data". */
static void view_of(const struct tg_contract *k, char *out, size_t len)
{
	size_t i, n;

	n = (size_t)snprintf(out, len, "/usr and the links into it (/bin, /lib...)");
	for (i = 0; i < k->nmounts && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, ", %s", k->mounts[i].inside);
	if (k->workspace != TG_WORKSPACE_NONE && n < len)
		snprintf(out + n, len - n, ", /workspace");
}

/* 1 if inside (host on the host) is a program k's sandbox can start: a
 * symbolic link is followed as the sandbox follows it, in its own view,
 * not the host's (/usr/local/bin/x -> /opt/x is not there). */
static int is_program(const struct tg_contract *k, const struct exec_dirs *d, const char *inside,
		      const char *host, int depth)
{
	char target[2048], next[4200], nhost[4096], why[4200];
	struct stat st;
	ssize_t n;
	int mounted;

	if (lstat(host, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		if (depth > 8 || (n = readlink(host, target, sizeof(target) - 1)) < 0)
			return 0;
		target[n] = '\0';
		if (target[0] == '/')
			snprintf(next, sizeof(next), "%s", target);
		else
			snprintf(next, sizeof(next), "%.*s/%s",
				 (int)(strrchr(inside, '/') - inside) & 2047, inside, target);
		switch (host_of(k, d, next, nhost, sizeof(nhost), &mounted)) {
		case SKIP:
			return 1;
		case UNSEEN:
			return 0;
		default:
			return is_program(k, d, next, nhost, depth + 1);
		}
	}
	return S_ISREG(st.st_mode) && tg_sandbox_bind_executable(NULL, host, why, sizeof(why)) == 1;
}

static const char *sandbox_path(const struct tg_contract *k)
{
	size_t i;

	for (i = 0; k->env && k->env[i]; i++)
		if (strncmp(k->env[i], "PATH=", 5) == 0)
			return k->env[i] + 5;
	return TG_SANDBOX_PATH;
}

/* argv[0]: a program the sandbox can start. */
static void check_program(struct check *c, const struct tg_contract *k)
{
	const char *a0 = k->argv[0], *path = sandbox_path(k);
	char host[4096], dir[4096], view[1024];
	int mounted;
	enum seen s;

	if (strchr(a0, '/')) {
		if (a0[0] != '/')
			return; /* the sandbox's working directory's: a tmpfs or a mount */
		s = host_of(k, c->d, a0, host, sizeof(host), &mounted);
		if (s == UNSEEN) {
			view_of(k, view, sizeof(view));
			problem(c, k->file, "executor.argv[0]",
				"mount the directory that holds it (executor.mounts), or name a "
				"program in /usr",
				"%s is not in the sandbox's view (it sees %s)", a0, view);
		} else if (s == HOST && !is_program(k, c->d, a0, host, 0)) {
			problem(c, k->file, "executor.argv[0]",
				"install it, or fix the path; a script needs its execute bit",
				"%s (on the host %s) is not an executable file: %s", a0, host,
				access(host, F_OK) == 0 ? "not executable" : strerror(errno));
		}
		return;
	}
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n > 0 && n < 2048 && path[0] == '/') {
			snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, path, a0);
			s = host_of(k, c->d, dir, host, sizeof(host), &mounted);
			if (s == SKIP || (s == HOST && is_program(k, c->d, dir, host, 0)))
				return;
		}
		path += n + (path[n] == ':');
	}
	/* said once, at the first tool that runs it */
	snprintf(dir, sizeof(dir), "%s:%s", a0, sandbox_path(k));
	if (!first_look(c, dir, 2))
		return;
	problem(c, k->file, "executor.argv[0]",
		"install it on the host (the sandbox sees /usr), or give its absolute path in a "
		"mount",
		"'%s' is not found along the sandbox's PATH (%s)", a0, sandbox_path(k));
}

/* 1 if program (argv[0]) is an interpreter whose argv[1] is its script. */
static int interpreter(const char *program)
{
	static const char *const names[] = { "python3", "python", "sh", "bash", "node", "perl",
					     "ruby", "php" };
	const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return 1;
	return 0;
}

/* argv[1...]: a path in one of the contract's mounts (a script) exists
 * and the sandbox's user may read it; an interpreter's script is in the
 * sandbox's view at all. */
static void check_args(struct check *c, const struct tg_contract *k)
{
	char host[4096], field[64], why[4200], view[1024];
	enum seen s;
	int mounted;
	size_t i;

	for (i = 1; k->argv[i]; i++) {
		if (k->argv[i][0] != '/')
			continue;
		snprintf(field, sizeof(field), "executor.argv[%zu]", i);
		s = host_of(k, c->d, k->argv[i], host, sizeof(host), &mounted);
		if (s == UNSEEN && i == 1 && interpreter(k->argv[0])) {
			view_of(k, view, sizeof(view));
			problem(c, k->file, field, "fix the path, or the mount that should show it",
				"%s, the script %s runs, is not in the sandbox's view (it sees %s)",
				k->argv[i], k->argv[0], view);
			continue;
		}
		if (s != HOST || !mounted)
			continue;
		if (access(host, F_OK) < 0) {
			problem(c, k->file, field, "put the file there, or fix the path or the mount",
				"%s is %s on the host, which does not exist", k->argv[i], host);
			continue;
		}
		if (tg_sandbox_bind_readable(NULL, host, why, sizeof(why)) == 0)
			problem(c, k->file, field, "let that user read it", "%s", why);
	}
}

/* A directory the sandbox is given: it exists, and its user may read it,
 * or write it when write. */
static void check_dir(struct check *c, const struct tg_contract *k, const char *field,
		      const char *as_given, const char *host, int write)
{
	struct tg_sandbox_spec *spec;
	struct tg_error err;
	char why[4200];
	struct stat st;
	int ok;

	if (!first_look(c, host, write))
		return;
	if (stat(host, &st) < 0) {
		int e = errno;

		first_look(c, host, !write); /* the other access: said now */
		problem(c, k->file, field, "create it, or fix the path",
			"%s (%s): %s", as_given, host, strerror(e));
		return;
	}
	/* the run binds it so: a path through a symlink fails every call */
	if (tg_sandbox_spec_new(TG_TIER_STRICT, &spec, &err) == 0) {
		ok = tg_sandbox_spec_add_bind(spec, host, "/x", 0, &err) == 0;
		tg_sandbox_spec_free(spec);
		if (!ok) {
			first_look(c, host, !write);
			problem(c, k->file, field, "name the real path (no symbolic link on the way)",
				"%s (%s): %s", as_given, host, err.msg);
			return;
		}
	}
	ok = write ? tg_sandbox_bind_writable(NULL, host, why, sizeof(why))
		   : tg_sandbox_bind_readable(NULL, host, why, sizeof(why));
	if (ok == 0)
		problem(c, k->file, field,
			write ? "give it to the sandbox's user as said, or the tool another directory"
			      : "let that user read it",
			"%s", why);
}

static void check_command(struct check *c, const struct tg_contract *k)
{
	char host[4096], field[64];
	size_t i;
	int write;

	check_program(c, k);
	check_args(c, k);
	for (i = 0; i < k->nmounts; i++) {
		write = k->mounts[i].writable && c->writes;
		if (exec_mount_host(c->d, k->mounts[i].host, host, sizeof(host)) < 0)
			continue; /* the catalogue's check says so */
		snprintf(field, sizeof(field), "executor.mounts[%zu].host", i);
		check_dir(c, k, field, k->mounts[i].host, host, write);
	}
	if (k->workspace == TG_WORKSPACE_NONE)
		return;
	if (!c->d->workspace) {
		if (!c->nunplaced++)
			c->unplaced = k;
		return;
	}
	write = k->workspace == TG_WORKSPACE_WRITE && c->writes;
	check_dir(c, k, "executor.workspace", "--workspace", c->d->workspace, write);
}

unsigned exec_preflight(const struct tg_catalog *catalog, const struct exec_dirs *d, int writes,
			exec_problem_fn fn, void *ctx)
{
	struct check c = { d, writes, fn, ctx, 0, { 0 }, 0, NULL, 0 };
	size_t i;

	for (i = 0; i < tg_catalog_count(catalog); i++) {
		const struct tg_contract *k = tg_catalog_at(catalog, i);

		if (k->executor == TG_EXEC_COMMAND && k->argv && k->argv[0])
			check_command(&c, k);
	}
	if (c.nunplaced == 1)
		problem(&c, c.unplaced->file, "executor.workspace", NO_WORKSPACE_FIX,
			"%s asks for the workspace and the gateway has none", c.unplaced->name);
	else if (c.nunplaced > 1)
		problem(&c, c.unplaced->file, "executor.workspace", NO_WORKSPACE_FIX,
			"%s and %zu other tool%s ask for the workspace and the gateway has none",
			c.unplaced->name, c.nunplaced - 1, c.nunplaced > 2 ? "s" : "");
	for (i = 0; i < c.nseen; i++)
		free(c.seen[i]);
	return c.n;
}
