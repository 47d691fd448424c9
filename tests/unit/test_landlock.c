/*
 * Unit tests: landlock.c applied to a forked child on the host's own
 * filesystem, and the tier requirements of probe.c against made-up hosts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "unit.h"

/* A file outside every rule, made before the child restricts itself. */
static char outside[] = "/var/tmp/tg-unit-landlock-XXXXXX";

static int restricted_child(void)
{
	struct tg_sandbox_spec *spec = unit_spec();
	struct sockaddr_in sa;
	struct sb_plan plan;
	struct sb_trees trees;
	const char *what = "";
	unsigned layers = 0;
	int fd;

	memset(&plan, 0, sizeof(plan));
	plan.spec = spec;
	plan.landlock_abi = (unsigned)landlock_abi();
	plan.workdir = "/tmp";
	plan.workdir_is_bound = 1; /* /tmp has its own rule */
	memset(&trees, -1, sizeof(trees));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    landlock_apply(&plan, &trees, &layers, &what) < 0)
		return 10;
	if (!(layers & TG_LAYER_LANDLOCK_FS))
		return 11;
	/* granted: read /usr, /etc; write /tmp */
	fd = open("/usr/bin/true", O_RDONLY);
	if (fd < 0)
		return 12;
	close(fd);
	fd = open("/etc/hostname", O_RDONLY);
	if (fd < 0 && errno != ENOENT)
		return 13;
	if (fd >= 0)
		close(fd);
	/* not granted: writing /etc, reading outside the rules */
	if (open("/etc/tg-landlock-test", O_WRONLY | O_CREAT, 0600) >= 0 || errno != EACCES)
		return 14;
	/* "/" grants directory listing beneath it (so `ls /` works inside),
	 * never file contents */
	if (open(outside, O_RDONLY) >= 0 || errno != EACCES)
		return 15;
	if (open("/var/tmp/tg-landlock-new", O_WRONLY | O_CREAT, 0600) >= 0 || errno != EACCES)
		return 16;
	/* TCP connect and bind denied (ABI 4) */
	if (plan.landlock_abi >= 4) {
		if (!(layers & TG_LAYER_LANDLOCK_NET))
			return 17;
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons(9);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != EACCES)
			return 18;
		close(fd);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		sa.sin_port = htons(0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != EACCES)
			return 19;
		close(fd);
	}
	tg_sandbox_spec_free(spec);
	return 0;
}

static int rules_hold(void)
{
	pid_t pid;
	int st, fd;

	CHECK(landlock_abi() >= 1); /* this project's machines have it */
	fd = mkstemp(outside);
	CHECK(fd >= 0);
	close(fd);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(restricted_child());
	CHECK(waitpid(pid, &st, 0) == pid);
	unlink(outside);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "child status %#x\n", st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

/* A bind's rule is given the mount itself (its fd from rootfs_build),
 * never its inside path opened again, which a symlink planted through a
 * writable bind could lead elsewhere: here the inside path does not even
 * exist, and what the fd names is writable, nothing beside it. */
static char bound[] = "/var/tmp/tg-unit-llbind-XXXXXX";

static int bind_child(void)
{
	struct tg_sandbox_spec *spec = unit_spec();
	struct sb_plan plan;
	struct sb_trees trees;
	struct tg_error err;
	const char *what = "";
	unsigned layers = 0;
	char path[96];
	int fd;

	if (!spec || tg_sandbox_spec_add_bind(spec, bound, "/tg-unit-no-such-inside", 1, &err) < 0)
		return 20;
	memset(&plan, 0, sizeof(plan));
	plan.spec = spec;
	plan.landlock_abi = (unsigned)landlock_abi();
	plan.workdir = "/tmp";
	plan.workdir_is_bound = 1;
	memset(&trees, -1, sizeof(trees));
	trees.user[0] = open(bound, O_PATH | O_CLOEXEC);
	if (trees.user[0] < 0)
		return 21;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    landlock_apply(&plan, &trees, &layers, &what) < 0)
		return 22;
	snprintf(path, sizeof(path), "%s/new", bound);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return 23;
	close(fd);
	snprintf(path, sizeof(path), "%s-beside", bound);
	if (open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) >= 0 || errno != EACCES)
		return 24;
	tg_sandbox_spec_free(spec);
	return 0;
}

static int bind_rule_by_fd(void)
{
	char path[96];
	pid_t pid;
	int st;

	CHECK(mkdtemp(bound));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(bind_child());
	CHECK(waitpid(pid, &st, 0) == pid);
	snprintf(path, sizeof(path), "%s/new", bound);
	unlink(path);
	snprintf(path, sizeof(path), "%s-beside", bound);
	unlink(path);
	rmdir(bound);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "child status %#x\n", st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

static int tiers(void)
{
	struct tg_sandbox_probe p;
	struct tg_error err;

	memset(&p, 0, sizeof(p));
	p.userns = p.namespaces = p.seccomp = p.mount_api = p.clone3_pidfd = 1;
	p.cgroup_writable = 1;
	p.cgroup_version = 1;
	p.landlock_abi = 7;
	CHECK(tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) == 0);
	p.landlock_abi = 2; /* no TCP rules: strict refuses, standard runs */
	CHECK(tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) < 0);
	CHECK(err.code == TG_ERR_UNAVAILABLE && strstr(err.msg, "landlock network"));
	CHECK(tg_sandbox_tier_check(TG_TIER_STANDARD, &p, &err) == 0);
	p.cgroup_version = 0;
	CHECK(tg_sandbox_tier_check(TG_TIER_STANDARD, &p, &err) < 0 && strstr(err.msg, "cgroup"));
	p.cgroup_version = 2;
	p.landlock_abi = 7;
	p.cgroup_writable = 0;
	CHECK(tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) < 0 && strstr(err.msg, "--cgroup-parent"));
	p.cgroup_writable = 1;
	p.userns = 0;
	CHECK(tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) < 0 &&
	      strstr(err.msg, "user namespace"));
	p.userns = 1;
	p.seccomp = 0;
	CHECK(tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) < 0 && strstr(err.msg, "seccomp"));
	return 0;
}

const struct unit_test landlock_tests[] = {
	{ "landlock/rules_hold", rules_hold },
	{ "landlock/bind_rule_by_fd", bind_rule_by_fd },
	{ "probe/tiers", tiers },
	UNIT_TESTS_END,
};
