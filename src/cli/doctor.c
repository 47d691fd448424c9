/*
 * toolgate doctor: each kernel feature the tiers need, and what each tier
 * guarantees on this host. Exits 1 when the strict tier cannot be
 * guaranteed.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "toolgate/sandbox.h"

static const char *yes(int v)
{
	return v ? "yes" : "NO";
}

int cmd_doctor(int argc, char **argv)
{
	struct tg_sandbox_probe p;
	struct tg_error err;
	int strict_ok, standard_ok, json = argc > 1 && strcmp(argv[1], "--json") == 0;
	char strict_msg[512], standard_msg[512];

	if (argc > 1 && !json) {
		fprintf(stderr, "toolgate doctor: unknown option '%s'\n", argv[1]);
		return 2;
	}
	tg_sandbox_probe_host(&p);
	strict_ok = tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) == 0;
	snprintf(strict_msg, sizeof(strict_msg), "%s", strict_ok ? "" : err.msg);
	standard_ok = tg_sandbox_tier_check(TG_TIER_STANDARD, &p, &err) == 0;
	snprintf(standard_msg, sizeof(standard_msg), "%s", standard_ok ? "" : err.msg);
	if (json) {
		printf("{\"user_namespaces\":%s,\"namespaces\":%s,\"clone3_pidfd\":%s,"
		       "\"mount_api\":%s,\"seccomp\":%s,\"landlock_abi\":%d,"
		       "\"cgroup_version\":%d,\"cgroup_memory\":%s,\"cgroup_pids\":%s,"
		       "\"cgroup_cpu\":%s,\"cgroup_writable\":%s,\"overlayfs\":%s,\"strict\":%s,"
		       "\"standard\":%s}\n",
		       p.userns ? "true" : "false", p.namespaces ? "true" : "false",
		       p.clone3_pidfd ? "true" : "false", p.mount_api ? "true" : "false",
		       p.seccomp ? "true" : "false", p.landlock_abi, p.cgroup_version,
		       p.cgroup_memory ? "true" : "false", p.cgroup_pids ? "true" : "false",
		       p.cgroup_cpu ? "true" : "false", p.cgroup_writable ? "true" : "false",
		       p.overlayfs ? "true" : "false",
		       strict_ok ? "true" : "false", standard_ok ? "true" : "false");
		return strict_ok ? 0 : 1;
	}
	printf("kernel features\n");
	printf("  user namespaces            %s\n", yes(p.userns));
	printf("  mount/pid/net/ipc/uts/cgroup namespaces  %s\n", yes(p.namespaces));
	printf("  clone3 + pidfd             %s\n", yes(p.clone3_pidfd));
	printf("  mount API (open_tree...)   %s\n", yes(p.mount_api));
	printf("  seccomp (notify, kill)     %s\n", yes(p.seccomp));
	if (p.landlock_abi)
		printf("  landlock                   ABI %d%s\n", p.landlock_abi,
		       p.landlock_abi >= 4 ? " (filesystem, TCP)" : " (filesystem only)");
	else
		printf("  landlock                   NO\n");
	printf("  cgroups                    %s\n", p.cgroup_detail);
	printf("  overlayfs                  %s\n", yes(p.overlayfs));
	printf("\ntiers\n");
	if (strict_ok)
		printf("  strict    guaranteed: new user/mount/pid/net/ipc/uts/cgroup namespaces,\n"
		       "            tmpfs root with read-only binds, masked /proc, no /sys,\n"
		       "            seccomp allowlist, landlock filesystem and TCP rules,\n"
		       "            cgroup memory/pids/cpu limits, rlimits, no capabilities,\n"
		       "            no_new_privs, no network, wall-clock kill\n");
	else
		printf("  strict    REFUSED: %s\n", strict_msg);
	if (standard_ok)
		printf("  standard  guaranteed: as strict, without the landlock TCP rules\n"
		       "            (network isolation by the empty network namespace)\n");
	else
		printf("  standard  REFUSED: %s\n", standard_msg);
	return strict_ok ? 0 : 1;
}
