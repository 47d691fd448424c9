#!/bin/bash
# toolgate security suite.
#
#   tests/security/run.sh BUILD_DIR
#
# For every escape attempt in BUILD_DIR/tests/tg-escape:
#   (a) run it WITHOUT the sandbox, in a context where it must escape
#       (exit 0); if it does not, the test could never fail, so it fails;
#   (b) run it inside BUILD_DIR/toolgate and expect it blocked, with the
#       specific toolgate reason where there is one;
#   (c) check that the host was not affected, where that applies.
# Prints "ok - security/NAME", "not ok - security/NAME: WHY" or
# "skip - security/NAME: WHY" per test; "# ..." lines are notes.
# Exit status 0 iff no "not ok".  Needs root (network namespaces,
# unshare, setuid copy, mknod).
#
# Every run (sandboxed or not) happens inside a private network namespace
# created here, whose only addresses are on its loopback: no packet can
# leave the machine even if the sandbox were broken.  We enter it with
# "nsenter --net" rather than "ip netns exec", because the latter remounts
# /sys and so hides /sys/fs/cgroup from toolgate.

set -u
export LC_ALL=C

# A setup failure is one "not ok" line, so that summaries counting lines see it.
die() { echo "not ok - security/setup: $*"; exit 1; }

[ $# -ge 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" 2>/dev/null && pwd -P) || die "no build dir $1"
TG=$BUILD/toolgate
TGE=$BUILD/tests/tg-escape
[ -x "$TG" ] || die "$TG not built"
[ -x "$TGE" ] || die "$TGE not built"
[ "$(id -u)" = 0 ] || die "the security suite must run as root"
for c in jq ip nsenter unshare setpriv script timeout; do
	command -v "$c" >/dev/null || die "missing tool: $c"
done

T=$(mktemp -d /tmp/tgsec.XXXXXX) && T=$(cd "$T" && pwd -P) || die "mktemp"
chmod 755 "$T"
NS=tgsec-$$
NSPATH=/run/netns/$NS
PIDS=()
FAILS=0
TESTS=0

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	# leftover detached processes of the unsandboxed leftover run
	[ -n "${TAGU:-}" ] && "$TGE" leftover_check "$TAGU" "$T/lt" "$T/lw" clean >/dev/null 2>&1
	[ -n "${TAG:-}" ] && "$TGE" leftover_check "$TAG" /tmp /work clean >/dev/null 2>&1
	ip netns del "$NS" 2>/dev/null
	[ -n "${SHMID:-}" ] && ipcrm -m "$SHMID" 2>/dev/null
	[ -n "${SHMSECRET:-}" ] && rm -f "$SHMSECRET"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- fixtures ----------------------------------------------------------

RUNID=$$-$RANDOM$RANDOM
SECRET_VALUE="TGSEC-SECRET-$RANDOM$RANDOM"
mkdir -p "$T/secret" "$T/bind" "$T/hostdir" "$T/rodir" "$T/suid" "$T/fill" \
	"$T/dev" "$T/jail" "$T/core" "$T/rwfill" "$T/mnt" "$T/rw1" "$T/rw2" "$T/um" "$T/lt" "$T/lw" "$T/none"
SECRET=$T/secret/secret.txt
echo "$SECRET_VALUE" >"$SECRET"
chmod 755 "$T/secret" "$T/bind" "$T/suid"
chmod 644 "$SECRET"
# The sandbox runs as host uid 65534 for a root caller: make permissions no
# obstacle, so that only the sandbox stands between the attempt and the host.
chmod 777 "$T/hostdir" "$T/rodir" "$T/rwfill"
ln -s "$SECRET" "$T/bind/abs"
ln -s ../secret/secret.txt "$T/bind/rel"
cp "$TGE" "$T/suid/tg-escape"
chown root:root "$T/suid/tg-escape"
chmod 4755 "$T/suid/tg-escape"
cat >"$T/robind.sh" <<'EOF'
#!/bin/sh
# robind.sh DIR CMD...: make DIR a read-only bind mount, then run CMD
d=$1; shift
mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 3
exec "$@"
EOF
chmod 755 "$T/robind.sh"

# A secret in the host's /dev/shm and a host SysV shm segment.
SHMSECRET=/dev/shm/tgsec-$RUNID
echo "$SECRET_VALUE" >"$SHMSECRET" && chmod 644 "$SHMSECRET"
SHMTAG=s$RUNID
SHMID=$("$TGE" shm-create "$SHMTAG") || die "shm-create"

# The caller's secrets: an environment variable and an inherited fd 7.
export TG_SECRET="$SECRET_VALUE"
exec 7<"$SECRET"

# ---- private network namespace with decoys -----------------------------

ip netns add "$NS" || die "ip netns add $NS"
ip -n "$NS" link set lo up || die "lo up"
ip -n "$NS" addr add 169.254.169.254/32 dev lo || die "addr 169.254.169.254"
ip -n "$NS" addr add 10.255.0.7/32 dev lo || die "addr 10.255.0.7"
NSX=(nsenter "--net=$NSPATH")
LPORT=$((20000 + $$ % 20000))
UNIXNAME=tgsec-decoy-$RUNID

start_bg() { # LOGFILE CMD... ; appends pid to PIDS, sets BGPID
	# started from a subshell, so that the shell never reports their death
	local log=$1; shift
	BGPID=$( { "$@" >"$log" 2>&1 </dev/null & echo $!; } )
	PIDS+=("$BGPID")
}
start_bg "$T/decoy1.log" "${NSX[@]}" "$TGE" listen 169.254.169.254 80
start_bg "$T/decoy2.log" "${NSX[@]}" "$TGE" listen 10.255.0.7 80
start_bg "$T/decoy3.log" "${NSX[@]}" "$TGE" listen 127.0.0.1 "$LPORT"
start_bg "$T/decoy4.log" "${NSX[@]}" "$TGE" listen-unix "$UNIXNAME"
mkdir -p "$T/sock" && chmod 755 "$T/sock"
start_bg "$T/decoy5.log" "$TGE" listen-path "$T/sock/decoy.sock"
for i in $(seq 50); do
	n=$(cat "$T"/decoy*.log 2>/dev/null | grep -c READY)
	[ "$n" -ge 5 ] && break
	sleep 0.1
done
[ "$n" -ge 5 ] || die "decoy listeners did not start: $(cat "$T"/decoy*.log)"
decoy_hits() { cat "$T"/decoy*.log | grep -c '^HIT'; }

# Victim processes outside the sandbox, as uid 65534 (the sandbox's host
# uid for a root caller) so that only isolation protects them.
TAG=v$RUNID
start_victim() { # sets VPID
	start_bg /dev/null setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TGE" victim "tgsecmark-$TAG" 600
	VPID=$BGPID
}
start_victim
V1=$VPID
sleep 0.2

# ---- running attempts --------------------------------------------------

# run_unsb ATTEMPT BIN "CTX" ARGS... -> U_RC, U_MSG
run_unsb() {
	local name=$1 bin=$2 ctx=$3; shift 3
	local -a c=()
	[ -n "$ctx" ] && read -ra c <<<"$ctx"
	timeout -s KILL 60 "${NSX[@]}" "${c[@]}" "$bin" "$name" "$@" \
		>/dev/null 2>"$T/u.err" </dev/null
	U_RC=$?
	U_MSG=$(grep -a "^$name:" "$T/u.err" | tail -n 1)
	[ -n "$U_MSG" ] || U_MSG=$(tail -c 300 "$T/u.err" | tr '\n' ' ')
}

# run_sb ATTEMPT BIN "TGOPTS" ARGS... -> S_RC S_REASON S_EXIT S_SIG S_SYS
#   S_LIMITS S_OUTB S_ERRB S_OUTT S_ERRT S_MSG S_WALL ($T/s.json)
run_sb() {
	local name=$1 bin=$2 opts=$3; shift 3
	local -a o=()
	local t0 t1
	[ -n "$opts" ] && read -ra o <<<"$opts"
	t0=$(date +%s%N)
	timeout -s KILL 100 "${NSX[@]}" "$TG" run --json --ro "$BUILD/tests:/t" "${o[@]}" \
		-- "$bin" "$name" "$@" >"$T/s.json" 2>"$T/s.err" </dev/null
	S_RC=$?
	t1=$(date +%s%N)
	S_WALL=$(( (t1 - t0) / 1000000 ))
	parse_json "$name"
}

parse_json() { # ATTEMPT
	local line
	S_REASON=nojson S_EXIT=null S_SIG=null S_SYS=null S_LIMITS= S_OUTB=0 S_ERRB=0
	S_OUTT=null S_ERRT=null S_MSG=
	line=$(jq -r '[.reason, (.exit_code|tostring), (.signal|tostring),
		(.seccomp_syscall|tostring), ((.limits_hit // [])|map(tostring)|join(",")),
		((.stdout_bytes // (.stdout|length))|tostring),
		((.stderr_bytes // (.stderr|length))|tostring),
		(.stdout_truncated|tostring), (.stderr_truncated|tostring)] | join("\u001f")' \
		"$T/s.json" 2>/dev/null) || line=
	if [ -n "$line" ]; then
		IFS=$'\x1f' read -r S_REASON S_EXIT S_SIG S_SYS S_LIMITS S_OUTB S_ERRB S_OUTT S_ERRT <<<"$line"
		S_MSG=$(jq -r '.stderr // ""' "$T/s.json" | grep -a "^$1:" | tail -n 1)
		[ -n "$S_MSG" ] || S_MSG=$(jq -r '(.message // "") + " " + ((.stderr // "")|.[0:200])' "$T/s.json" | tr '\n' ' ')
	else
		S_MSG="toolgate rc=$S_RC, no JSON; stderr: $(tail -c 300 "$T/s.err" | tr '\n' ' ')"
	fi
}

# Interface rule for toolgate's own exit status.
check_status() { # LABEL
	local want
	case "$S_REASON" in
	nojson) return ;;
	timeout) want=124 ;;
	setup_failed) want=125 ;;
	*)
		if [ "$S_SIG" != null ]; then want=$((128 + S_SIG))
		elif [ "$S_EXIT" != null ]; then want=$S_EXIT
		else want=125; fi ;;
	esac
	[ "$S_RC" = "$want" ] ||
		echo "# note: security/$1: toolgate exited $S_RC, interface says $want (reason $S_REASON, exit_code $S_EXIT, signal $S_SIG)"
}

sb_desc() {
	echo "reason=$S_REASON exit_code=$S_EXIT signal=$S_SIG syscall=$S_SYS limits=[$S_LIMITS] rc=$S_RC: $S_MSG"
}

# judge EXPECT -> J_WHY (empty if ok)
U_RC= U_MSG= S_RC= S_REASON= S_EXIT= S_SIG= S_SYS= S_LIMITS= S_MSG=
judge() {
	local exp=$1 want
	J_WHY=
	if grep -qaE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$T/s.err" 2>/dev/null; then
		J_WHY="sanitizer report from toolgate: $(grep -aE 'Sanitizer|runtime error:' "$T/s.err" | head -n 1)"
		return
	fi
	if [ "$S_REASON" = nojson ]; then J_WHY="no JSON from toolgate: $S_MSG"; return; fi
	if [ "$S_REASON" = setup_failed ]; then J_WHY="setup_failed: $(sb_desc)"; return; fi
	if [ "$S_EXIT" = 0 ]; then J_WHY="ESCAPED inside the sandbox: $(sb_desc)"; return; fi
	if [ "$S_EXIT" = 2 ]; then J_WHY="attempt could not tell inside the sandbox: $(sb_desc)"; return; fi
	case "$exp" in
	blocked)
		[ "$S_EXIT" = 1 ] || [ "$S_REASON" = seccomp_violation ] ||
			J_WHY="not cleanly blocked: $(sb_desc)" ;;
	blocked_or_memory)
		[ "$S_EXIT" = 1 ] || [ "$S_REASON" = seccomp_violation ] || [ "$S_REASON" = memory_limit ] ||
			J_WHY="not cleanly blocked: $(sb_desc)" ;;
	kill:*)
		want=${exp#kill:}
		if [ "$S_REASON" != seccomp_violation ]; then
			if [ "$S_EXIT" = 1 ]; then
				J_WHY="blocked, but not a seccomp kill ending the sandbox as specified: $(sb_desc)"
			else
				J_WHY="expected reason seccomp_violation${want:+ ($want)}: $(sb_desc)"
			fi
		elif [ -n "$want" ] && [ "$S_SYS" != "$want" ]; then
			J_WHY="killed, but seccomp_syscall is '$S_SYS', expected '$want': $(sb_desc)"
		fi ;;
	killorblock)
		[ "$S_REASON" = seccomp_violation ] || [ "$S_EXIT" = 1 ] ||
			J_WHY="not blocked: $(sb_desc)" ;;
	memory)
		[ "$S_REASON" = memory_limit ] ||
			J_WHY="expected reason memory_limit: $(sb_desc)" ;;
	pids)
		if ! { [ "$S_EXIT" = 1 ] || [ "$S_REASON" = pids_limit ]; }; then
			J_WHY="not blocked: $(sb_desc)"
		elif [ "$S_REASON" != pids_limit ]; then
			J_WHY="blocked, but reason is not pids_limit: $(sb_desc)"
		fi ;;
	timeout)
		if [ "$S_REASON" != timeout ]; then J_WHY="expected reason timeout: $(sb_desc)"
		elif [ "$S_RC" != 124 ]; then J_WHY="reason timeout but exit status $S_RC, not 124"; fi ;;
	output:*)
		local s=${exp#output:} bytes trunc
		if [ "$s" = stdout ]; then bytes=$S_OUTB trunc=$S_OUTT; else bytes=$S_ERRB trunc=$S_ERRT; fi
		if [ "$S_REASON" != output_truncated ]; then
			J_WHY="expected reason output_truncated: $(sb_desc)"
		elif [ "$trunc" != true ]; then
			J_WHY="${s}_truncated is $trunc: $(sb_desc)"
		elif [ "$bytes" != 1048576 ]; then
			J_WHY="captured $s is $bytes bytes, expected exactly the 1 MiB limit"
		fi ;;
	*) J_WHY="harness bug: unknown expectation $exp" ;;
	esac
}

# Attempts whose syscall this host's kernel does not have: unsandboxed they
# get ENOSYS, so the test rests on the sandbox's seccomp kill alone (which
# still distinguishes a filtered call from an unfiltered one).
KERNEL_MAY_LACK=" kexec_load kexec_file_load init_module finit_module delete_module iopl ioperm x32_getpid "
declare -A COVERED=()

# TGSEC_VERBOSE=1: show what each run reported, as "# " notes.
VERBOSE=${TGSEC_VERBOSE:-0}
result() { # LABEL WHY(empty=ok) [NOTE]
	TESTS=$((TESTS + 1))
	if [ "$VERBOSE" = 1 ]; then
		echo "#   unsandboxed: rc=${U_RC:-} ${U_MSG:-}"
		echo "#   sandboxed:   $(sb_desc)"
	fi
	if [ -n "$2" ] && [ -n "${LIMITATION:-}" ]; then
		# An operator-granted resource the sandbox cannot bound; written
		# down in docs/SECURITY.md. Still run both ways, so the day it is
		# blocked this turns into "ok".
		echo "skip - security/$1: known limitation: $LIMITATION ($2)"
	elif [ -n "$2" ]; then
		echo "not ok - security/$1: $2"
		FAILS=$((FAILS + 1))
	else
		echo "ok - security/$1${3:+ # $3}"
	fi
}
skip() { TESTS=$((TESTS + 1)); echo "skip - security/$1: $2"; }

# unsb_ok ATTEMPT LABEL -> 0 if the unsandboxed run escaped (else prints
# the failure) ; sets NOTE for the kernel-lacks case.
unsb_ok() {
	local a=$1 label=$2
	NOTE=
	[ "$U_RC" = 0 ] && return 0
	if [ "$U_RC" = 1 ] && [[ "$KERNEL_MAY_LACK" == *" $a "* ]] && [[ "$U_MSG" == *ENOSYS* ]]; then
		NOTE="host kernel lacks it (unsandboxed: ENOSYS); judged on the seccomp kill"
		return 0
	fi
	result "$label" "does not escape unsandboxed, so the test could not fail (rc=$U_RC: $U_MSG)"
	return 1
}

# t LABEL ATTEMPT EXPECT "UCTX" "UARGS" "SOPTS" "SARGS" [HOSTCHECK [BIN SBIN]]
#   UCTX: command prefix for the unsandboxed run (word-split)
#   HOSTCHECK: function run after the sandboxed run; prints why the host was
#   affected and returns non-zero if it was.
t() {
	local label=$1 a=$2 exp=$3 uctx=$4 uargs=$5 sopts=$6 sargs=$7 hc=${8:-} \
		ubin=${9:-$TGE} sbin=${10:-/t/tg-escape}
	local -a ua=() sa=()
	local hits why
	COVERED[$a]=1
	[ -n "$uargs" ] && read -ra ua <<<"$uargs"
	[ -n "$sargs" ] && read -ra sa <<<"$sargs"
	run_unsb "$a" "$ubin" "$uctx" "${ua[@]}"
	unsb_ok "$a" "$label" || return
	[ -n "${BETWEEN:-}" ] && $BETWEEN
	hits=$(decoy_hits)
	run_sb "$a" "$sbin" "$sopts" "${sa[@]}"
	check_status "$label"
	judge "$exp"
	why=$J_WHY
	if [ "$(decoy_hits)" != "$hits" ]; then
		why="${why:+$why; }a decoy listener outside got a connection during the sandboxed run"
	fi
	if [ -n "$hc" ]; then
		local h
		if ! h=$($hc); then why="${why:+$why; }host affected: $h"; fi
	fi
	result "$label" "$why" "$NOTE"
}

# ---- host checks --------------------------------------------------------

dir_empty() { # DIR
	local f
	f=$(ls -A "$1")
	[ -z "$f" ] && return 0
	echo "$1 contains: $f"
	rm -f "$1"/*
	return 1
}
hc_hostdir() { dir_empty "$T/hostdir"; }
hc_rodir() { dir_empty "$T/rodir"; }
clean_hostdir() { rm -f "$T/hostdir"/*; }
clean_rodir() { rm -f "$T/rodir"/*; }
proc_alive() { # PID: exists and is not a zombie
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}
find_left_proc() { # TAG: pids whose cmdline is exactly tgsecleft-TAG
	local f
	for f in /proc/[0-9]*/cmdline; do
		[ "$(tr -d '\0' 2>/dev/null <"$f")" = "tgsecleft-$1" ] && { f=${f#/proc/}; echo "${f%/cmdline}"; }
	done
	return 0
}
hc_core_pattern() {
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$CORE_PATTERN" ] && return 0
	echo "core_pattern changed to $(cat /proc/sys/kernel/core_pattern)"; return 1
}
hc_hostname() {
	[ "$(hostname)" = "$HOSTNAME0" ] && return 0
	echo "hostname changed to $(hostname)"; return 1
}
hc_usr() {
	local f
	f=$(ls -A /usr | grep '^\.tgsec' || true)
	[ -z "$f" ] && return 0
	echo "/usr now contains $f"; return 1
}
hc_victim_alive() { # V1 alive and not traced
	if ! proc_alive "$V1"; then echo "victim pid $V1 is gone"; return 1; fi
	local tp
	tp=$(awk '/^TracerPid:/ {print $2}' "/proc/$V1/status")
	[ "$tp" = 0 ] && return 0
	echo "victim pid $V1 is traced by $tp"; return 1
}
hc_lo_addr() {
	if ip -n "$NS" -o addr show dev lo | grep -q 10.254.254.254; then
		echo "10.254.254.254 was added to lo of the outer namespace"; return 1
	fi
}

CORE_PATTERN=$(cat /proc/sys/kernel/core_pattern)
HOSTNAME0=$(hostname)

# ---- the cases ---------------------------------------------------------

echo "# toolgate security suite: $TG"
echo "# attempts: $TGE ($("$TGE" list | wc -l) entries)"

# network
t tcp_metadata        tcp_metadata        blocked "" "" "" ""
t tcp_private         tcp_private         blocked "" "" "" ""
t tcp_outer_loopback  tcp_outer_loopback  blocked "" "$LPORT" "" "$LPORT"
t udp_metadata        udp_metadata        blocked "" "" "" ""
t udp_private         udp_private         blocked "" "" "" ""
t udp_outer_loopback  udp_outer_loopback  blocked "" "$LPORT" "" "$LPORT"
t raw_socket          raw_socket          blocked "" "10.255.0.7" "" "10.255.0.7"
t packet_socket       packet_socket       blocked "" "" "" ""
t netlink_audit       netlink_audit       blocked "" "" "" ""
t netlink_uevent      netlink_uevent      blocked "" "" "" ""
t netlink_sock_diag   netlink_sock_diag   blocked "" "" "" ""
t netlink_generic     netlink_generic     blocked "" "" "" ""
t netlink_netfilter   netlink_netfilter   blocked "" "" "" ""
t netlink_xfrm        netlink_xfrm        blocked "" "" "" ""
t netlink_connector   netlink_connector   blocked "" "" "" ""
t netlink_route_admin netlink_route_admin blocked "" "" "" "" hc_lo_addr
t vsock               vsock               blocked "" "" "" ""
t tcp_bind            tcp_bind            blocked "" "8080" "" "8080"
t tcp_listen_autobind tcp_listen_autobind blocked "" "" "" ""
t socket_inet_sock_packet socket_inet_sock_packet blocked "" "" "" ""
t socket_family_highbits socket_family_highbits blocked "" "" "" ""
t netlink_proto_highbits netlink_proto_highbits blocked "" "" "" ""
t netlink_dgram       netlink_dgram       blocked "" "" "" ""
# a host unix socket inside a read-only bind: "read-only" must not mean "connectable"
LIMITATION="a unix socket inside a bound directory is connectable when the sandbox's host uid may write it; Landlock (ABI 7) cannot restrict connect() to named sockets, docs/SECURITY.md" \
t unix_path_socket    unix_path_socket    blocked "" "$T/sock/decoy.sock" "--ro $T/sock:/sock" "/sock/decoy.sock"
t abstract_unix       abstract_unix       blocked "" "$UNIXNAME" "" "$UNIXNAME"

# filesystem
t read_secret   read_secret   blocked "" "$SECRET" "" "$SECRET"
t read_secret:dev_shm read_secret blocked "" "$SHMSECRET" "" "$SHMSECRET"
BETWEEN=clean_hostdir t write_outside write_outside blocked "" "$T/hostdir" "" "$T/hostdir" hc_hostdir
# unsandboxed the directory is simply writable; sandboxed it is bound read-only
BETWEEN=clean_rodir t write_ro_bind write_ro_bind blocked "" "$T/rodir" "--ro $T/rodir:/ro" "/ro" hc_rodir
t proc1_root    proc1_root    blocked "" "$SECRET" "" "$SECRET"
t symlink_escape symlink_escape blocked "" "$T/bind" "--ro $T/bind:/b" "/b"
t dotdot_escape dotdot_escape blocked "" "$T/bind secret/secret.txt $SECRET" \
	"--ro $T/bind:/b" "/b secret/secret.txt $SECRET"
t open_by_handle_at open_by_handle_at kill:open_by_handle_at "" "/usr" "" "/usr"
t mount_tmpfs   mount_tmpfs   kill:mount "unshare --mount --propagation private" "$T/mnt" "" "/tmp"
t remount_rw    remount_rw    kill:mount "unshare --mount --propagation private $T/robind.sh $T/rw1" "$T/rw1" "" "/usr" hc_usr
t mount_setattr_rw mount_setattr_rw killorblock "unshare --mount --propagation private $T/robind.sh $T/rw2" "$T/rw2" "" "/usr" hc_usr
t fsopen_tmpfs  fsopen_tmpfs  kill:fsopen "unshare --mount --propagation private" "" "" ""
t umount2       umount2       kill:umount2 "unshare --mount --propagation private $T/robind.sh $T/um" "$T/um" "" "/usr"
t pivot_root    pivot_root    kill:pivot_root "unshare --mount --propagation private" "" "" ""
t open_tree     open_tree     kill:open_tree "unshare --mount --propagation private" "/usr" "" "/usr"
t move_mount    move_mount    kill:move_mount "unshare --mount --propagation private" "" "" ""
t proc_sys_core_pattern proc_sys_core_pattern blocked "" "" "" "" hc_core_pattern
t proc_sys_hostname proc_sys_hostname blocked "unshare --uts" "tgsec-pwned" "" "tgsec-pwned" hc_hostname
t proc_sys_any  proc_sys_any  blocked "" "" "" ""
t dev_sensitive dev_sensitive blocked "" "" "" ""
t kallsyms      kallsyms      blocked "" "" "" ""
for a in sysrq_trigger:/proc/sysrq-trigger proc_kcore:/proc/kcore; do
	if [ -e "${a#*:}" ]; then
		t "${a%%:*}" "${a%%:*}" blocked "" "" "" ""
	else
		COVERED[${a%%:*}]=1
		skip "${a%%:*}" "host has no ${a#*:} (kernel config), the attempt cannot escape here"
	fi
done
t see_sys       see_sys       blocked "" "" "" ""
t write_usr     write_usr     blocked "" "/usr" "" "/usr" hc_usr
t mknod_char    mknod_char    blocked "" "$T/dev" "" "/tmp"
t mknod_block   mknod_block   blocked "" "$T/dev" "" "/tmp"
t chroot_escape chroot_escape blocked "" "$SECRET $T/jail" "" "$SECRET /tmp"

# process
t see_process   see_process   blocked "" "$TAG $V1" "" "$TAG $V1"
# kill: a fresh victim for each run; the sandboxed one must survive
kill_case() {
	local why
	COVERED[kill_process]=1
	start_victim; VK=$VPID; sleep 0.1
	run_unsb kill_process "$TGE" "" "$VK"
	sleep 0.2
	unsb_ok kill_process kill_process || return
	if proc_alive "$VK"; then
		result kill_process "unsandboxed kill reported success but the victim survived"; return
	fi
	start_victim; VK=$VPID; sleep 0.1
	run_sb kill_process /t/tg-escape "" "$VK"
	check_status kill_process
	judge blocked
	why=$J_WHY
	sleep 0.2
	if ! proc_alive "$VK"; then why="${why:+$why; }host affected: victim pid $VK was killed"; fi
	result kill_process "$why"
}
kill_case
t ptrace_attach ptrace_attach kill:ptrace "" "$V1" "" "$V1" hc_victim_alive
t process_vm_readv process_vm_readv kill:process_vm_readv "" "$V1" "" "$V1" hc_victim_alive
t process_vm_writev process_vm_writev kill:process_vm_writev "" "$V1" "" "$V1" hc_victim_alive
t setns         setns         kill:setns "unshare --mount --uts --ipc" "" "" ""
t unshare_user  unshare_user  kill:unshare "" "" "" ""
t clone_newuser clone_newuser kill:clone "" "" "" ""
t clone_newnet  clone_newnet  kill:clone "" "" "" ""
t unshare_mount unshare_mount kill:unshare "" "" "" ""
t clone3_ns     clone3_ns     blocked "" "" "" ""
if [ "$S_EXIT" = 1 ] && [[ "$S_MSG" != *ENOSYS* ]]; then
	echo "# note: security/clone3_ns: blocked, but not with ENOSYS as specified: $S_MSG"
fi
if findmnt -no OPTIONS -T "$T/suid" 2>/dev/null | grep -qw nosuid; then
	COVERED[setuid_binary]=1
	skip setuid_binary "$T is on a nosuid mount: setuid binaries cannot work here"
else
	t setuid_binary setuid_binary blocked "setpriv --reuid=65534 --regid=65534 --clear-groups" "" \
		"--ro $T/suid:/s" "" "" "$T/suid/tg-escape" /s/tg-escape
fi
t nnp_off       nnp_off       blocked "" "" "" ""
t capabilities  capabilities  blocked "" "" "" ""
t seccomp_mode  seccomp_mode  blocked "" "" "" ""
t uid_map_root  uid_map_root  blocked "" "" "" ""
t tioclinux     tioclinux     blocked "" "" "" ""
t tiocsti_highbits  tiocsti_highbits  blocked "" "" "" ""
t tioclinux_highbits tioclinux_highbits blocked "" "" "" ""
t pidfd_getfd   pidfd_getfd   kill:pidfd_getfd "" "$V1" "" "$V1" hc_victim_alive
# PID 1 is a copy of toolgate's memory, dumpable while toolgate takes the
# seccomp and egress listeners from it: not by the time the command runs
t proc1_mem     proc1_mem     blocked "" "$V1" "" ""
t proc1_mem:egress proc1_mem  blocked "" "$V1" "--allow-host api.test:80" ""

# TIOCSTI: both runs under a pseudo-terminal (script(1)); sandboxed both
# with --json and without (where stdout/stderr may be the caller's tty).
pty_case() { # ATTEMPT
	local a=$1 why="" rc out
	COVERED[$a]=1
	U_RC= U_MSG=
	out=$(timeout -s KILL 30 script -qec "$TGE $a" /dev/null </dev/null 2>&1)
	rc=$?
	U_RC=$rc U_MSG=$(echo "$out" | tr -d '\r' | grep -a "^$a:" | tail -n 1)
	if [ "$rc" != 0 ]; then
		result "$a" "does not escape unsandboxed under a pty, so the test could not fail (rc=$rc: $out)"
		return
	fi
	timeout -s KILL 60 script -qec "${NSX[*]} $TG run --json --ro $BUILD/tests:/t -- /t/tg-escape $a >$T/s.json 2>$T/s.err" /dev/null </dev/null >/dev/null 2>&1
	S_RC=$?
	parse_json "$a"
	judge blocked
	why=$J_WHY
	out=$(timeout -s KILL 60 script -qec "${NSX[*]} $TG run --ro $BUILD/tests:/t -- /t/tg-escape $a" /dev/null </dev/null 2>&1)
	rc=$?
	if [ "$rc" != 1 ]; then
		why="${why:+$why; }without --json (run from a terminal): exit $rc, expected 1 (blocked): $(echo "$out" | tr -d '\r' | grep -a "^$a:" | tail -n 1)"
	fi
	result "$a" "$why"
}
pty_case tiocsti
pty_case tty_handle

# syscalls
for a in bpf perf_event_open userfaultfd io_uring_setup keyctl add_key request_key \
	kexec_load kexec_file_load init_module finit_module delete_module reboot \
	clock_settime settimeofday iopl ioperm; do
	t "$a" "$a" "kill:$a" "" "" "" ""
done
t adjtimex      adjtimex      killorblock "" "" "" ""
t clock_adjtime clock_adjtime killorblock "" "" "" ""
t personality   personality   killorblock "" "" "" ""
# 32-bit and x32 entry points: killed; seccomp_syscall is not checked
# (the name of a foreign-ABI number is not meaningful).
NO_IA32=
int80_case() {
	run_unsb int80_getpid "$TGE" ""
	if [ "$U_RC" = 139 ] || [ "$U_RC" = 132 ]; then
		COVERED[int80_getpid]=1
		NO_IA32="unsandboxed rc=$U_RC"
		skip int80_getpid "no IA32 emulation on this host ($NO_IA32)"
		return
	fi
	t int80_getpid int80_getpid kill: "" "" "" ""
}
int80_case
t x32_getpid    x32_getpid    kill: "" "" "" ""
# a violation must end the whole sandbox, not just the offending process/thread
t seccomp_child:bpf   seccomp_child  kill:bpf "" "bpf" "" "bpf"
# without IA32 emulation the kernel itself faults int $0x80 (SIGSEGV)
# before seccomp sees it: nothing for the filter to end there
if [ -n "$NO_IA32" ]; then
	skip seccomp_child:int80 "no IA32 emulation on this host ($NO_IA32)"
else
	t seccomp_child:int80 seccomp_child  kill:    "" "int80" "" "int80"
fi
t seccomp_thread      seccomp_thread kill:bpf "" "" "" ""

# secrets (TG_SECRET is exported and fd 7 is open on the secret for every run)
t env_secret          env_secret          blocked "" "" "" ""
t inherited_fd_secret inherited_fd_secret blocked "" "" "" ""
t leaked_fds          leaked_fds          blocked "" "" "" ""
t sysv_shm_host       sysv_shm_host       blocked "" "$SHMTAG" "" "$SHMTAG"
t dmesg               dmesg               blocked "" "" "" ""

# resources
t fork_bomb      fork_bomb      pids    "" "" "" ""
t thread_bomb    thread_bomb    pids    "" "" "" ""
t memory_balloon memory_balloon memory  "" "512" "" "512"
t disk_fill      disk_fill      blocked "" "$T/fill" "" "/tmp"
t disk_fill:work disk_fill      blocked "" "$T/fill" "" "/work"
t disk_fill:dev_shm disk_fill   blocked_or_memory "" "$T/fill" "" "/dev/shm"
# a --rw bind is host disk: the sandbox must not be able to fill it either
LIMITATION="a --rw bind is the host's filesystem: RLIMIT_FSIZE caps each file, nothing caps the total, docs/SECURITY.md" \
t disk_fill:rw_bind disk_fill   blocked "" "$T/fill" "--rw $T/rwfill:/rw" "/rw"
t fd_exhaustion  fd_exhaustion  blocked "" "" "" ""

# Descriptors in flight are counted per host user, and every sandbox runs as
# the same one: one run holding thousands in flight (senders asleep on full
# datagram queues pass the kernel's check) must not keep the others from
# starting, nor a running sandbox's egress connections from reaching the
# proxy. Nothing the sandbox hands toolgate may travel through a socket.
# hold_start CMD...: the holder, its stdin a fifo we keep open (fd 9) until
# the others are done; its "READY n" line in $T/hold.out. Sets HOLD_PID.
hold_start() {
	local i
	rm -f "$T/hold.in" "$T/hold.out" && mkfifo "$T/hold.in"
	timeout -s KILL 60 "$@" <"$T/hold.in" >"$T/hold.out" 2>"$T/hold.err" &
	HOLD_PID=$!
	exec 9>"$T/hold.in"
	for i in $(seq 100); do
		grep -q READY "$T/hold.out" && break
		sleep 0.1
	done
	HELD=$(awk '/^READY/ {print $2}' "$T/hold.out")
}
hold_end() { # -> HOLD_RC
	exec 9>&-
	wait "$HOLD_PID"
	HOLD_RC=$?
}
# inflight_try LABEL CMD...: one run that must start (and, with egress, reach
# the proxy: its refusal of an unlisted host is the proof) while the holder
# holds; counts INF_OK, keeps the first failure in INF_FIRST
inflight_try() {
	local label=$1
	shift
	timeout -s KILL 60 "$@" >"$T/s.json" 2>"$T/s.err" </dev/null
	S_RC=$?
	parse_json fd_inflight
	if [ "$S_RC" = 0 ] && [ "$S_REASON" = ok ] &&
		{ [ "$label" != egress ] || jq -r .stdout "$T/s.json" | grep -qx 'status 403'; }; then
		INF_OK=$((INF_OK + 1))
	elif [ -z "$INF_FIRST" ]; then
		INF_FIRST="$label: $(sb_desc) $(jq -r .stdout "$T/s.json" 2>/dev/null | tail -c 100) $(tail -c 200 "$T/s.err")"
	fi
	if grep -qaE 'Sanitizer|runtime error:' "$T/s.err"; then
		INF_WHY="${INF_WHY:+$INF_WHY; }sanitizer report from toolgate: $(grep -aE 'Sanitizer|runtime error:' "$T/s.err" | head -n 1)"
	fi
}
# inflight_hold_check WHO: the holder held thousands to the end
inflight_hold_check() {
	if [ "${HELD:-0}" -le 1024 ] || [ "$HOLD_RC" != 0 ]; then
		INF_WHY="${INF_WHY:+$INF_WHY; }$1: the sandboxed holder did not hold its descriptors to the end (held ${HELD:-none}, rc=$HOLD_RC: $(tail -c 200 "$T/hold.err"))"
	fi
}
inflight_case() {
	local runs=(prlimit --nofile=1024:1024) noptrace=(setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace)
	local want=5 deleg="" c
	COVERED[fd_inflight]=1 COVERED[fd_inflight_amp]=1
	INF_OK=0 INF_FIRST="" INF_WHY=""
	# unsandboxed, as the sandbox's host user: the holder puts far more in
	# flight than a sender with a limit of 1024 may pass
	hold_start "${NSX[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TGE" fd_inflight_amp 40 30
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TGE" fd-pass 1024 >/dev/null 2>"$T/u.err"
	U_RC=$? U_MSG=$(tail -n 1 "$T/u.err")
	hold_end
	if [ "${HELD:-0}" -le 1024 ] || [ "$U_RC" != 1 ]; then
		result fd_inflight "unsandboxed, $HELD descriptors in flight did not stop a sender with RLIMIT_NOFILE 1024 (rc=$U_RC: $U_MSG), so the test could not fail"
		return
	fi
	# sandboxed, a root caller's: others start, with and without
	# CAP_SYS_PTRACE, and a running sandbox's egress connection is handed on
	hold_start "${NSX[@]}" "$TG" run --timeout 40s --ro "$BUILD/tests:/t" -- \
		/t/tg-escape fd_inflight_amp 40 30
	inflight_try start "${NSX[@]}" "${runs[@]}" "$TG" run --json -- true
	inflight_try start "${NSX[@]}" "${runs[@]}" "$TG" run --json -- true
	inflight_try no_ptrace "${NSX[@]}" "${noptrace[@]}" "${runs[@]}" "$TG" run --json -- true
	inflight_try no_ptrace "${NSX[@]}" "${noptrace[@]}" "${runs[@]}" "$TG" run --json -- true
	inflight_try egress "${NSX[@]}" "${runs[@]}" "$TG" run --json --allow-host api.test:80 -- \
		curl -sS -w '\nstatus %{http_code}\n' http://other.test/
	hold_end
	inflight_hold_check root
	# a non-root caller's, with a cgroup delegated to it (cgroup v1 here;
	# the integration suite's non_root_caller does the same)
	if [ ! -f /sys/fs/cgroup/cgroup.controllers ] && [ -d /sys/fs/cgroup/pids ]; then
		deleg="tg-sec-inflight-$$"
		for c in memory pids cpu; do
			[ -d "/sys/fs/cgroup/$c" ] || continue
			mkdir "/sys/fs/cgroup/$c/$deleg" &&
				chown 65534:65534 "/sys/fs/cgroup/$c/$deleg" "/sys/fs/cgroup/$c/$deleg/cgroup.procs"
		done
		local user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		hold_start "${NSX[@]}" "${user[@]}" "$TG" run --timeout 40s --cgroup-parent "/$deleg" \
			--ro "$BUILD/tests:/t" -- /t/tg-escape fd_inflight_amp 40 30
		inflight_try non_root "${NSX[@]}" "${runs[@]}" "${user[@]}" "$TG" run --json --cgroup-parent "/$deleg" -- true
		inflight_try non_root "${NSX[@]}" "${runs[@]}" "${user[@]}" "$TG" run --json --cgroup-parent "/$deleg" -- true
		hold_end
		inflight_hold_check non-root
		want=7
		for c in memory pids cpu; do
			rmdir "/sys/fs/cgroup/$c/$deleg"/* 2>/dev/null
			rmdir "/sys/fs/cgroup/$c/$deleg" 2>/dev/null
		done
	fi
	[ "$INF_OK" = "$want" ] || INF_WHY="${INF_WHY:+$INF_WHY; }$INF_OK of $want runs started while another held $HELD descriptors in flight; first failure: $INF_FIRST"
	U_MSG="$HELD in flight; another sender: $U_MSG" S_MSG="$INF_OK of $want runs started"
	result fd_inflight "$INF_WHY"
}
inflight_case
t cpu_spin       cpu_spin       timeout "" "3" "--timeout 1s" "3"
t cpu_quota      cpu_quota      blocked "" "2 0.8" "--cpus 0.5" "2 0.8"
t core_dump      core_dump      blocked "" "$T/core" "" "/tmp"
t output_flood   output_flood   output:stdout "" "" "" ""
t output_flood_stderr output_flood_stderr output:stderr "" "" "" ""

# JSON integrity: the command prints a forged result and bytes that break
# naive embedding; toolgate must still print one valid object with the real
# result (exit_code 0 here, and no "forged" member).
json_case() {
	local why=""
	COVERED[json_forgery]=1
	timeout -s KILL 60 "$TGE" json_forgery >"$T/u.out" 2>/dev/null </dev/null
	U_RC=$? U_MSG="forged object on stdout"
	if [ "$U_RC" != 0 ] || ! head -n 1 "$T/u.out" | jq -e '.forged == true and .reason == "ok"' >/dev/null 2>&1; then
		result json_forgery "unsandboxed: the payload is not a parseable forged result, so the test could not fail"
		return
	fi
	run_sb json_forgery /t/tg-escape ""
	if [ "$S_REASON" = nojson ]; then
		why="toolgate's output is not one valid JSON object: $(head -c 200 "$T/s.json" | tr -d '\000' | tr '\n' ' ')"
	elif [ "$(jq -s 'length' "$T/s.json" 2>/dev/null)" != 1 ]; then
		why="toolgate printed $(jq -s 'length' "$T/s.json" 2>/dev/null) JSON values, not one"
	elif jq -e 'has("forged")' "$T/s.json" >/dev/null; then
		why="the command's output forged a member of toolgate's result"
	elif [ "$S_REASON" != ok ] || [ "$S_EXIT" != 0 ]; then
		why="result altered: $(sb_desc)"
	elif ! jq -e '(.stdout|type) == "string" and (.stderr|type) == "string"' "$T/s.json" >/dev/null; then
		why="stdout/stderr are not JSON strings"
	fi
	check_status json_forgery
	result json_forgery "$why"
}
json_case

# leftovers: run 1 plants a detached process, files in /tmp and /work and a
# SysV shm segment; the host must show no such process afterwards and run 2
# must find none of it.
leftover_case() {
	local why="" h
	COVERED[leftover_spawn]=1 COVERED[leftover_check]=1
	TAGU=u$RUNID
	run_unsb leftover_spawn "$TGE" "" "$TAGU" "$T/lt" "$T/lw"
	if [ "$U_RC" != 0 ]; then
		result leftovers "unsandboxed spawn failed (rc=$U_RC: $U_MSG)"; return
	fi
	if [ -z "$(find_left_proc "$TAGU")" ]; then
		result leftovers "unsandboxed: the detached process is not visible from the host, so the host check could not fail"; return
	fi
	run_unsb leftover_check "$TGE" "" "$TAGU" "$T/lt" "$T/lw"
	if [ "$U_RC" != 0 ]; then
		result leftovers "unsandboxed run 2 found no leftovers, so the test could not fail (rc=$U_RC: $U_MSG)"; return
	fi
	"$TGE" leftover_check "$TAGU" "$T/lt" "$T/lw" clean >/dev/null 2>&1
	TAG=l$RUNID
	run_sb leftover_spawn /t/tg-escape "" "$TAG"
	check_status leftovers
	if [ "$S_EXIT" != 0 ] || [ "$S_REASON" != ok ]; then
		why="run 1 did not end normally after planting (${S_WALL} ms): $(sb_desc)"
	fi
	if grep -qaE 'Sanitizer|runtime error:' "$T/s.err" 2>/dev/null; then
		why="${why:+$why; }sanitizer report from toolgate: $(grep -aE 'Sanitizer|runtime error:' "$T/s.err" | head -n 1)"
	fi
	h=$(find_left_proc "$TAG")
	if [ -n "$h" ]; then
		why="${why:+$why; }after toolgate returned, the detached process still runs on the host as pid $h"
	fi
	if h=$("$TGE" leftover_check "$TAG" /tmp /work clean 2>&1); then
		why="${why:+$why; }after toolgate returned, the host has: $h"
	fi
	run_sb leftover_check /t/tg-escape "" "$TAG"
	check_status leftovers
	judge blocked
	[ -n "$J_WHY" ] && why="${why:+$why; }run 2: $J_WHY"
	result leftovers "$why"

	# the same, ended by the wall-clock timeout instead of a normal exit
	why=""
	TAG=t$RUNID
	run_sb leftover_spawn /t/tg-escape "--timeout 1s" "$TAG" /tmp /work 20
	check_status leftovers:timeout
	judge timeout
	why=$J_WHY
	h=$(find_left_proc "$TAG")
	if [ -n "$h" ]; then
		why="${why:+$why; }after the timeout, the detached process still runs on the host as pid $h"
	fi
	if h=$("$TGE" leftover_check "$TAG" /tmp /work clean 2>&1); then
		why="${why:+$why; }after the timeout, the host has: $h"
	fi
	run_sb leftover_check /t/tg-escape "" "$TAG"
	judge blocked
	[ -n "$J_WHY" ] && why="${why:+$why; }run 2: $J_WHY"
	result leftovers:timeout "$why"
}
leftover_case

# every attempt must have a case
while read -r a fam; do
	[ -n "${COVERED[$a]:-}" ] || result "$a" "no harness case for this $fam attempt"
done < <("$TGE" list)

echo "# $TESTS tests, $FAILS not ok"
[ "$FAILS" = 0 ]
