/* Unit tests: src/exec/dirs.c, what a command tool may be given of the
 * gateway's directories: the workspace kept apart from the state
 * directory, the catalogue and the gateway's own files, an earlier
 * toolgate's undo records in the workspace refused, contracts that mount
 * the state directory (or /tmp, the overlay layers', or the workspace, or
 * write the catalogue) refused, also where the source does not exist yet;
 * each bind checked again when a tool runs; a write tool family's state
 * directory made 0700 for the sandbox's user without following a
 * symlink, STATE/tools 0700 and the gateway's whoever made it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "toolgate/catalog.h"
#include "unit.h"

/* The directories of a gateway with workspace ws, catalogue tools, state
 * directory state and own files own (each may be NULL). */
static int dirs(const char *ws, const char *tools, const char *state, const char *const *own,
		struct exec_dirs **d, struct tg_error *err)
{
	struct exec_dirs_options o = { .workspace = ws, .tools_dir = tools, .state_dir = state,
					.own_files = own };

	return exec_dirs_new(&o, d, err);
}

/* exec_dirs_new's answer for ws, tools, state and own: 0, or -1 with want
 * in the message. */
static int made_with(const char *ws, const char *tools, const char *state,
		     const char *const *own, const char *want)
{
	struct exec_dirs *d = NULL;
	struct tg_error err;
	int rc = dirs(ws, tools, state, own, &d, &err);

	exec_dirs_free(d);
	if (rc < 0 && (!want || !strstr(err.msg, want))) {
		fprintf(stderr, "%s, %s: %s\n", ws ? ws : "-", state ? state : "-", err.msg);
		return -2;
	}
	return rc;
}

static int made(const char *ws, const char *state, const char *want)
{
	return made_with(ws, NULL, state, NULL, want);
}

static int apart(void)
{
	char top[64], ws[96], in[128], state[96], path[160];

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(state, sizeof(state), "%s/state", top);
	snprintf(in, sizeof(in), "%s/state", ws);
	CHECK(mkdir(ws, 0755) == 0);
	CHECK(made(NULL, NULL, NULL) == 0);
	/* a state directory the store has not made yet is where it will be */
	CHECK(made(ws, state, NULL) == 0 && access(state, F_OK) < 0);
	CHECK(made(ws, in, "overlap") == -1 && access(in, F_OK) < 0);
	CHECK(made(ws, top, "overlap") == -1);
	CHECK(made(ws, ws, "overlap") == -1);
	snprintf(path, sizeof(path), "%s/./state/", ws);
	CHECK(made(ws, path, "overlap") == -1);
	CHECK(made("/tmp", NULL, "where overlay dry runs keep their layers") == -1);
	CHECK(made("/", state, "overlap") == -1);
	snprintf(path, sizeof(path), "%s/nope", top);
	CHECK(made(path, NULL, "No such file") == -1);
	/* an earlier toolgate's undo records: moved first, never served */
	snprintf(path, sizeof(path), "%s/.toolgate/undo", ws);
	CHECK(mkdir(path, 0700) < 0 && errno == ENOENT);
	snprintf(path, sizeof(path), "%s/.toolgate", ws);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(made(ws, state, NULL) == 0); /* .toolgate alone is the workspace's */
	snprintf(path, sizeof(path), "%s/.toolgate/undo", ws);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(made(ws, state, "holds .toolgate/undo") == -1);
	CHECK(made(ws, state, "/tools/fs && mv ") == -1);
	unit_rmtree(top);
	return 0;
}

/* A state directory, and a catalogue, that do not exist yet are judged by
 * where they will be, through a symlink or a missing parent too; the
 * workspace and the catalogue kept apart either way; the gateway's own
 * files kept out of the workspace. */
static int apart_more(void)
{
	char top[64], ws[96], cat[96], path[160], link[160];
	const char *own[3] = { NULL, NULL, NULL };

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(cat, sizeof(cat), "%s/cat", top);
	CHECK(mkdir(ws, 0755) == 0 && mkdir(cat, 0755) == 0);
	/* a symlink to a state directory the store has not made yet */
	snprintf(path, sizeof(path), "%s/state", ws);
	snprintf(link, sizeof(link), "%s/link", top);
	CHECK(symlink(path, link) == 0);
	CHECK(made(ws, link, "overlap") == -1);
	snprintf(link, sizeof(link), "%s/a/b/../../ws/x/state", top);
	CHECK(made(ws, link, "overlap") == -1);
	snprintf(link, sizeof(link), "%s/a/b/state", top);
	CHECK(made(ws, link, NULL) == 0);
	/* the catalogue: its contracts and programs are what the gateway loads */
	CHECK(made_with(cat, cat, NULL, NULL, "--workspace") == -1);
	CHECK(made_with(top, cat, NULL, NULL, "holds the catalogue directory") == -1);
	snprintf(path, sizeof(path), "%s/ws", cat);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(made_with(path, cat, NULL, NULL, "lies in the catalogue directory") == -1);
	CHECK(made_with(ws, cat, NULL, NULL, NULL) == 0);
	/* the record, the policy...: not in the workspace */
	snprintf(path, sizeof(path), "%s/record", ws);
	own[0] = "-";
	own[1] = path;
	CHECK(made_with(ws, cat, NULL, own, "a file of the gateway's own") == -1);
	own[1] = "/dev/null";
	CHECK(made_with(ws, cat, NULL, own, NULL) == 0);
	unit_rmtree(top);
	return 0;
}

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A catalogue of one tool mounting host, a write tool's writable mount
 * when writable, else a read tool's: exec_check_catalog's answer, and its
 * message in msg. */
static int mounting_as(const char *top, const char *host, int writable, const struct exec_dirs *d,
		       char *msg, size_t len)
{
	struct tg_catalog *cat = NULL;
	struct tg_error err;
	char dir[128], path[160], text[1024];
	int rc = -2;

	snprintf(dir, sizeof(dir), "%s/cat", top);
	snprintf(path, sizeof(path), "%s/t.json", dir);
	snprintf(text, sizeof(text),
		 "{\"name\":\"t.%s\",\"version\":\"1.0.0\",\"description\":\"d\","
		 "\"owner\":{\"team\":\"t\",\"contact\":\"t@example.test\"},"
		 "\"authority\":\"%s\",\"input_schema\":{\"type\":\"object\"},%s"
		 "\"executor\":{\"kind\":\"command\",\"argv\":[\"t\"],"
		 "\"mounts\":[{\"host\":\"%s\",\"inside\":\"/m\",\"writable\":%s}]}}",
		 writable ? "write" : "read", writable ? "write" : "read",
		 writable ? "\"dry_run\":\"unsupported\",\"compensation\":"
			    "{\"irreversible\":\"a test\"}," : "",
		 host, writable ? "true" : "false");
	if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || put(path, text) < 0 ||
	    tg_catalog_load_dir(dir, NULL, &cat, &err) < 0)
		return -2;
	rc = exec_check_catalog(cat, d, &err);
	snprintf(msg, len, "%s", rc < 0 ? err.msg : "");
	tg_catalog_free(cat);
	return rc;
}

static int mounting(const char *top, const char *host, const struct exec_dirs *d, char *msg,
		    size_t len)
{
	return mounting_as(top, host, 0, d, msg, len);
}

static int catalog_mounts(void)
{
	struct exec_dirs *d = NULL;
	struct tg_error err;
	char top[64], state[96], cat[96], msg[512];

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(state, sizeof(state), "%s/state", top);
	snprintf(cat, sizeof(cat), "%s/cat", top);
	CHECK(mkdir(state, 0700) == 0 && mkdir(cat, 0755) == 0);
	snprintf(msg, sizeof(msg), "%s/tools", cat);
	CHECK(mkdir(msg, 0755) == 0);
	CHECK(dirs(NULL, cat, state, NULL, &d, &err) == 0);
	CHECK(mounting(top, "tools", d, msg, sizeof(msg)) == 0);
	CHECK(mounting(top, "../state", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "t.json: executor.mounts[0]: ../state is the gateway's state directory"));
	CHECK(mounting(top, "..", d, msg, sizeof(msg)) == -1 && strstr(msg, ".. holds the gateway"));
	CHECK(mounting(top, "/", d, msg, sizeof(msg)) == -1 && strstr(msg, "executor.mounts[0]"));
	snprintf(msg, sizeof(msg), "%s/tools", state);
	CHECK(mkdir(msg, 0700) == 0);
	CHECK(mounting(top, "../state/tools", d, msg, sizeof(msg)) == -1 && strstr(msg, "lies in"));
	/* one that does not exist yet is judged by where it will be */
	CHECK(mounting(top, "../state/tools/fs", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "../state/tools/fs lies in the gateway's state directory"));
	CHECK(mounting(top, "../nope/../state/x", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "lies in the gateway's state directory"));
	exec_dirs_free(d);
	/* nor does the state directory itself, on a first run */
	snprintf(msg, sizeof(msg), "%s/fresh", top);
	CHECK(dirs(NULL, cat, msg, NULL, &d, &err) == 0);
	CHECK(mounting(top, "../fresh", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "../fresh is the gateway's state directory"));
	CHECK(mounting(top, "../fresh/tools/fs", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "lies in the gateway's state directory"));
	exec_dirs_free(d);
	/* /tmp holds the overlay layers: refused with or without a state */
	CHECK(dirs(NULL, cat, NULL, NULL, &d, &err) == 0);
	CHECK(mounting(top, "/tmp", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "/tmp is or holds /tmp, where overlay dry runs keep their layers"));
	CHECK(mounting(top, "/tmp/" EXEC_OVERLAY_PREFIX "1-abc/0", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "lies in an overlay dry run's layers"));
	/* one that does not exist is left to its run, which fails */
	CHECK(mounting(top, "nope", d, msg, sizeof(msg)) == 0);
	exec_dirs_free(d);
	unit_rmtree(top);
	return 0;
}

/* The workspace only through executor.workspace; the catalogue never
 * writable; the gateway's own files and an earlier toolgate's undo
 * records in no mount. */
static int catalog_mounts_more(void)
{
	struct exec_dirs *d = NULL;
	struct tg_error err;
	char top[64], ws[96], cat[96], rec[96], msg[512];
	const char *own[2] = { rec, NULL };

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(cat, sizeof(cat), "%s/cat", top);
	snprintf(rec, sizeof(rec), "%s/record", top);
	CHECK(mkdir(ws, 0755) == 0 && mkdir(cat, 0755) == 0 && put(rec, "") == 0);
	snprintf(msg, sizeof(msg), "%s/tools", cat);
	CHECK(mkdir(msg, 0755) == 0);
	CHECK(dirs(ws, cat, NULL, own, &d, &err) == 0);
	CHECK(mounting(top, "../ws", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "../ws is the workspace") && strstr(msg, "executor.workspace"));
	CHECK(mounting(top, ws, d, msg, sizeof(msg)) == -1 && strstr(msg, "is the workspace"));
	CHECK(mounting(top, "../ws/not-yet", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "lies in the workspace"));
	CHECK(mounting(top, "../ws/..", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "holds the workspace"));
	/* the catalogue's own files, read-only: what the example tools do */
	CHECK(mounting(top, "tools", d, msg, sizeof(msg)) == 0);
	CHECK(mounting_as(top, "tools", 1, d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "tools is writable and lies in the catalogue directory"));
	CHECK(mounting_as(top, ".", 1, d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "is writable and is the catalogue directory"));
	CHECK(mounting_as(top, "../data", 1, d, msg, sizeof(msg)) == 0);
	exec_dirs_free(d);
	/* a file of the gateway's own */
	CHECK(dirs(NULL, cat, NULL, own, &d, &err) == 0);
	CHECK(mounting(top, "..", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "a file of the gateway's own"));
	/* an earlier toolgate's undo records */
	snprintf(msg, sizeof(msg), "%s/old", top);
	CHECK(mkdir(msg, 0755) == 0);
	CHECK(mounting(top, "../old", d, msg, sizeof(msg)) == 0);
	snprintf(msg, sizeof(msg), "%s/old/.toolgate", top);
	CHECK(mkdir(msg, 0755) == 0);
	snprintf(msg, sizeof(msg), "%s/old/.toolgate/undo", top);
	CHECK(mkdir(msg, 0700) == 0);
	CHECK(mounting(top, "../old", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "holds .toolgate/undo"));
	exec_dirs_free(d);
	unit_rmtree(top);
	return 0;
}

/* When a tool runs, each bind again by its real path: what changed on the
 * host since the catalogue loaded is refused. */
static int bind_check(void)
{
	struct exec_dirs *d = NULL;
	struct tg_error err;
	char top[64], ws[96], cat[96], state[96], path[160];

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(cat, sizeof(cat), "%s/cat", top);
	snprintf(state, sizeof(state), "%s/state", top);
	CHECK(mkdir(ws, 0755) == 0 && mkdir(cat, 0755) == 0);
	CHECK(dirs(ws, cat, state, NULL, &d, &err) == 0);
	CHECK(exec_dirs_check_bind(d, ws, 0, 1, &err) == 0);
	CHECK(exec_dirs_check_bind(d, cat, 1, 0, &err) == 0);
	CHECK(exec_dirs_check_bind(d, cat, 1, 1, &err) == -1 &&
	      strstr(err.msg, "is writable and is the catalogue directory"));
	CHECK(exec_dirs_check_bind(d, ws, 1, 0, &err) == -1 && strstr(err.msg, "is the workspace"));
	/* made since: the state directory (the store makes it after the
	 * gate), an old toolgate's records */
	snprintf(path, sizeof(path), "%s/tools", state);
	CHECK(exec_dirs_check_bind(d, path, 1, 0, &err) == -1 &&
	      strstr(err.msg, "No such file"));
	CHECK(mkdir(state, 0700) == 0 && mkdir(path, 0700) == 0);
	CHECK(exec_dirs_check_bind(d, path, 1, 0, &err) == -1 &&
	      strstr(err.msg, "lies in the gateway's state directory") &&
	      strstr(err.msg, "not given to the tool"));
	snprintf(path, sizeof(path), "%s/old", top);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(exec_dirs_check_bind(d, path, 1, 0, &err) == 0);
	snprintf(path, sizeof(path), "%s/old/.toolgate", top);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/old/.toolgate/undo", top);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/old", top);
	CHECK(exec_dirs_check_bind(d, path, 1, 0, &err) == -1 &&
	      strstr(err.msg, "holds .toolgate/undo"));
	exec_dirs_free(d);
	unit_rmtree(top);
	return 0;
}

static int state_dir(void)
{
	struct tg_contract k = { .name = (char *)"fs.write" };
	struct exec_dirs *d = NULL;
	struct tg_error err;
	char top[64], state[96], path[256], link[160];
	unsigned uid = geteuid() == 0 ? 65534 : geteuid();
	struct stat st;

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(state, sizeof(state), "%s/state", top);
	CHECK(mkdir(state, 0700) == 0);
	CHECK(dirs(NULL, NULL, NULL, NULL, &d, &err) == 0);
	CHECK(exec_state_dir(d, &k, uid, uid, path, sizeof(path), &err) == -1 &&
	      strstr(err.msg, "fs.write: the gateway has no state directory"));
	exec_dirs_free(d);
	CHECK(dirs(NULL, NULL, state, NULL, &d, &err) == 0);
	CHECK(exec_state_dir(d, &k, uid, uid, path, sizeof(path), &err) == 0);
	snprintf(link, sizeof(link), "%s/tools/fs", state);
	CHECK(strcmp(path, link) == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	      st.st_uid == uid && (st.st_mode & 07777) == 0700);
	/* one the operator made is handed over, and closed to others */
	CHECK(chmod(path, 0755) == 0);
	k.name = (char *)"fs";
	CHECK(exec_state_dir(d, &k, uid, uid, path, sizeof(path), &err) == 0 &&
	      stat(path, &st) == 0 && (st.st_mode & 07777) == 0700 && strcmp(path, link) == 0);
	/* nothing on the way is followed if it is a symlink */
	snprintf(path, sizeof(path), "%s/tools/sql", state);
	CHECK(symlink(top, path) == 0);
	k.name = (char *)"sql.execute";
	CHECK(exec_state_dir(d, &k, uid, uid, path, sizeof(path), &err) == -1 &&
	      strstr(err.msg, "sql.execute: its state directory"));
	exec_dirs_free(d);
	unit_rmtree(top);
	return 0;
}

/* STATE/tools and STATE/tools/FAMILY an operator made (mkdir -p, the
 * umask's mode, another owner) are made 0700 and owned as they should be:
 * the gateway's, the sandbox user's. */
static int state_dir_tightened(void)
{
	struct tg_contract k = { .name = (char *)"fs.write" };
	struct exec_dirs *d = NULL;
	struct tg_error err;
	char top[64], state[96], tools[128], path[256];
	unsigned uid = geteuid() == 0 ? 65534 : geteuid();
	struct stat st;

	CHECK(unit_tmpdir(top, "dirs") == 0);
	snprintf(state, sizeof(state), "%s/state", top);
	snprintf(tools, sizeof(tools), "%s/tools", state);
	snprintf(path, sizeof(path), "%s/fs", tools);
	CHECK(mkdir(state, 0700) == 0 && mkdir(tools, 0700) == 0 && mkdir(path, 0700) == 0);
	CHECK(chmod(tools, 0755) == 0 && chmod(path, 0755) == 0);
	if (geteuid() == 0)
		CHECK(chown(tools, 12345, 12345) == 0 && chown(path, 12345, 12345) == 0);
	CHECK(dirs(NULL, NULL, state, NULL, &d, &err) == 0);
	CHECK(exec_state_dir(d, &k, uid, uid, path, sizeof(path), &err) == 0);
	CHECK(stat(tools, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == geteuid() &&
	      st.st_gid == getegid());
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == uid);
	exec_dirs_free(d);
	unit_rmtree(top);
	return 0;
}

const struct unit_test dirs_tests[] = {
	{ "dirs/apart", apart },
	{ "dirs/apart_more", apart_more },
	{ "dirs/catalog_mounts", catalog_mounts },
	{ "dirs/catalog_mounts_more", catalog_mounts_more },
	{ "dirs/bind_check", bind_check },
	{ "dirs/state_dir", state_dir },
	{ "dirs/state_dir_tightened", state_dir_tightened },
	UNIT_TESTS_END,
};
