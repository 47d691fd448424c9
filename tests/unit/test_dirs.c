/* Unit tests: src/exec/dirs.c, what a command tool may be given of the
 * gateway's directories: the workspace and the state directory kept apart,
 * an earlier toolgate's undo records in the workspace refused, contracts
 * that mount the state directory (or /tmp, the overlay layers') refused,
 * a write tool family's state directory made 0700 for the sandbox's user
 * without following a symlink. */
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

/* exec_dirs_new(ws, NULL, state): 0, or -1 with want in the message. */
static int made(const char *ws, const char *state, const char *want)
{
	struct exec_dirs *d = NULL;
	struct tg_error err;
	int rc = exec_dirs_new(ws, NULL, state, &d, &err);

	exec_dirs_free(d);
	if (rc < 0 && (!want || !strstr(err.msg, want))) {
		fprintf(stderr, "%s, %s: %s\n", ws ? ws : "-", state ? state : "-", err.msg);
		return -2;
	}
	return rc;
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

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A catalogue of one read tool mounting host: exec_check_catalog's answer,
 * and its message in msg. */
static int mounting(const char *top, const char *host, const struct exec_dirs *d, char *msg,
		    size_t len)
{
	struct tg_catalog *cat = NULL;
	struct tg_error err;
	char dir[128], path[160], text[1024];
	int rc = -2;

	snprintf(dir, sizeof(dir), "%s/cat", top);
	snprintf(path, sizeof(path), "%s/t.json", dir);
	snprintf(text, sizeof(text),
		 "{\"name\":\"t.read\",\"version\":\"1.0.0\",\"description\":\"d\","
		 "\"owner\":{\"team\":\"t\",\"contact\":\"t@example.test\"},"
		 "\"authority\":\"read\",\"input_schema\":{\"type\":\"object\"},"
		 "\"executor\":{\"kind\":\"command\",\"argv\":[\"t\"],"
		 "\"mounts\":[{\"host\":\"%s\",\"inside\":\"/m\"}]}}", host);
	if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || put(path, text) < 0 ||
	    tg_catalog_load_dir(dir, NULL, &cat, &err) < 0)
		return -2;
	rc = exec_check_catalog(cat, d, &err);
	snprintf(msg, len, "%s", rc < 0 ? err.msg : "");
	tg_catalog_free(cat);
	return rc;
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
	CHECK(exec_dirs_new(NULL, cat, state, &d, &err) == 0);
	CHECK(mounting(top, "tools", d, msg, sizeof(msg)) == 0);
	CHECK(mounting(top, "../state", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "t.json: executor.mounts[0]: ../state is the gateway's state directory"));
	CHECK(mounting(top, "..", d, msg, sizeof(msg)) == -1 && strstr(msg, ".. holds the gateway"));
	CHECK(mounting(top, "/", d, msg, sizeof(msg)) == -1 && strstr(msg, "executor.mounts[0]"));
	snprintf(msg, sizeof(msg), "%s/tools", state);
	CHECK(mkdir(msg, 0700) == 0);
	CHECK(mounting(top, "../state/tools", d, msg, sizeof(msg)) == -1 && strstr(msg, "lies in"));
	exec_dirs_free(d);
	/* /tmp holds the overlay layers: refused with or without a state */
	CHECK(exec_dirs_new(NULL, cat, NULL, &d, &err) == 0);
	CHECK(mounting(top, "/tmp", d, msg, sizeof(msg)) == -1 &&
	      strstr(msg, "/tmp is or holds /tmp, where overlay dry runs keep their layers"));
	/* one that does not exist is left to its run, which fails */
	CHECK(mounting(top, "nope", d, msg, sizeof(msg)) == 0);
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
	CHECK(exec_dirs_new(NULL, NULL, NULL, &d, &err) == 0);
	CHECK(exec_state_dir(d, &k, uid, uid, path, sizeof(path), &err) == -1 &&
	      strstr(err.msg, "fs.write: the gateway has no state directory"));
	exec_dirs_free(d);
	CHECK(exec_dirs_new(NULL, NULL, state, &d, &err) == 0);
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

const struct unit_test dirs_tests[] = {
	{ "dirs/apart", apart },
	{ "dirs/catalog_mounts", catalog_mounts },
	{ "dirs/state_dir", state_dir },
	UNIT_TESTS_END,
};
