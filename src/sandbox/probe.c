/*
 * What the host offers (`toolgate doctor`) and what each tier requires.
 * A tier's requirements are a table; tg_sandbox_tier_check names the first
 * one missing, and tg_sandbox_run refuses with that message: no silent
 * fallback to weaker isolation.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "util/file.h"

/* Fork a child into every namespace the sandbox uses and report whether
 * that worked. Exit codes: 0 all, 1 user namespace refused, 2 others. */
static int probe_namespaces(int *userns, int *others)
{
	int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
		    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	pid_t pid;
	int st;

	*userns = *others = 0;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		_exit(unshare(flags & ~CLONE_NEWUSER) < 0 ? 2 : 0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	*userns = WEXITSTATUS(st) != 1;
	*others = WEXITSTATUS(st) == 0;
	return 0;
}

/* Whether this caller can make a run's cgroup where a run would (a
 * non-root caller needs one delegated): try it. */
static void probe_cgroup_writable(struct tg_sandbox_probe *p)
{
	struct tg_sandbox_spec *spec = NULL;
	struct sb_cgroup *cg = NULL;
	struct tg_error err;
	size_t n;

	p->cgroup_writable = 0;
	if (p->cgroup_version == 0 || tg_sandbox_spec_new(TG_TIER_STRICT, &spec, &err) < 0)
		goto out;
	if (cgroup_create(spec, &cg, &err) == 0) {
		p->cgroup_writable = 1;
		cgroup_destroy(cg);
		goto out;
	}
	n = strlen(p->cgroup_detail);
	snprintf(p->cgroup_detail + n, sizeof(p->cgroup_detail) - n,
		 "; not writable by uid %u (needs --cgroup-parent)", (unsigned)geteuid());
out:
	tg_sandbox_spec_free(spec);
}

void tg_sandbox_probe_host(struct tg_sandbox_probe *p)
{
	probe_host_light(p);
	probe_namespaces(&p->userns, &p->namespaces);
	probe_cgroup_writable(p);
}

void probe_host_light(struct tg_sandbox_probe *p)
{
	memset(p, 0, sizeof(*p));
	/* the run itself finds out (clone3, cgroup_create) and names it */
	p->userns = p->namespaces = p->cgroup_writable = 1;
	p->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
		     file_contains("/proc/sys/kernel/seccomp/actions_avail", NULL, "user_notif") &&
		     file_contains("/proc/sys/kernel/seccomp/actions_avail", NULL, "kill_process");
	p->landlock_abi = landlock_abi();
	p->cgroup_version = cgroup_detect(p->cgroup_detail, sizeof(p->cgroup_detail),
					  &p->cgroup_memory, &p->cgroup_pids, &p->cgroup_cpu);
	p->overlayfs = file_contains("/proc/filesystems", NULL, "\toverlay\n");
	/* These report ENOSYS when missing and EBADF/EINVAL when present. */
	errno = 0;
	p->mount_api = !(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) < 0 && errno == ENOSYS);
	errno = 0;
	p->clone3_pidfd = !(syscall(SYS_clone3, NULL, 0) < 0 && errno == ENOSYS) &&
			  !(syscall(SYS_pidfd_send_signal, -1, 0, NULL, 0) < 0 && errno == ENOSYS);
}

struct requirement {
	const char *layer;
	int (*met)(const struct tg_sandbox_probe *p);
	const char *why;
};

static int r_userns(const struct tg_sandbox_probe *p) { return p->userns; }
static int r_ns(const struct tg_sandbox_probe *p) { return p->namespaces; }
static int r_seccomp(const struct tg_sandbox_probe *p) { return p->seccomp; }
static int r_ll_fs(const struct tg_sandbox_probe *p) { return p->landlock_abi >= 1; }
static int r_ll_net(const struct tg_sandbox_probe *p) { return p->landlock_abi >= 4; }
static int r_cgroup(const struct tg_sandbox_probe *p) { return p->cgroup_version > 0; }
static int r_cgroup_w(const struct tg_sandbox_probe *p) { return p->cgroup_writable; }
static int r_mount(const struct tg_sandbox_probe *p) { return p->mount_api; }
static int r_clone3(const struct tg_sandbox_probe *p) { return p->clone3_pidfd; }

static const struct requirement strict_req[] = {
	{ "user namespace", r_userns, "unprivileged user namespaces are disabled "
	  "(kernel.unprivileged_userns_clone or user.max_user_namespaces)" },
	{ "namespaces", r_ns, "mount, pid, net, ipc, uts or cgroup namespaces refused" },
	{ "clone3", r_clone3, "clone3 with pidfds needs Linux 5.3" },
	{ "mount API", r_mount, "open_tree, move_mount and mount_setattr need Linux 5.12" },
	{ "seccomp", r_seccomp, "seccomp filters with user notification and kill_process" },
	{ "landlock", r_ll_fs, "landlock is not enabled (lsm= boot parameter)" },
	{ "landlock network", r_ll_net, "landlock TCP rules need ABI 4 (Linux 6.7)" },
	{ "cgroup", r_cgroup, "no cgroup hierarchy with memory, pids and cpu controllers" },
	{ "cgroup", r_cgroup_w, "this caller cannot create cgroups there (delegate one and "
	  "pass --cgroup-parent)" },
};

/* The standard tier keeps every layer but the landlock TCP rules, whose
 * place the egress proxy takes. */
static const struct requirement standard_req[] = {
	{ "user namespace", r_userns, "unprivileged user namespaces are disabled" },
	{ "namespaces", r_ns, "mount, pid, net, ipc, uts or cgroup namespaces refused" },
	{ "clone3", r_clone3, "clone3 with pidfds needs Linux 5.3" },
	{ "mount API", r_mount, "open_tree, move_mount and mount_setattr need Linux 5.12" },
	{ "seccomp", r_seccomp, "seccomp filters with user notification and kill_process" },
	{ "landlock", r_ll_fs, "landlock is not enabled (lsm= boot parameter)" },
	{ "cgroup", r_cgroup, "no cgroup hierarchy with memory, pids and cpu controllers" },
	{ "cgroup", r_cgroup_w, "this caller cannot create cgroups there (delegate one and "
	  "pass --cgroup-parent)" },
};

int tg_sandbox_tier_check(enum tg_tier tier, const struct tg_sandbox_probe *p,
			  struct tg_error *err)
{
	const struct requirement *req = tier == TG_TIER_STANDARD ? standard_req : strict_req;
	size_t n = tier == TG_TIER_STANDARD ? sizeof(standard_req) / sizeof(standard_req[0])
					    : sizeof(strict_req) / sizeof(strict_req[0]);
	size_t i;

	for (i = 0; i < n; i++)
		if (!req[i].met(p))
			return tg_error_set(err, TG_ERR_UNAVAILABLE,
					    "%s tier unavailable: %s: %s", tg_tier_name(tier),
					    req[i].layer, req[i].why);
	return 0;
}
