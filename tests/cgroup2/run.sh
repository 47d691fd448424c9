#!/bin/bash
# toolgate on a pure cgroup v2 kernel, as a non-root service in a cgroup
# delegated to it (docs/SYSTEMD.md, "Delegated cgroups"). These build
# machines have their controllers on cgroup v1, so this boots a kernel of
# its own under QEMU (software emulation, one CPU): Debian 12's backports
# kernel (apt-get download, never installed on the host), a root made by
# debootstrap with the toolgate package (make deb) and python3 installed
# by apt-get, as an initramfs whose /init (tests/cgroup2/init) runs the
# checks and prints "ok - ..." lines on the serial console.
# make check-long only (some 3 minutes, and the archive's downloads).
# Usage: tests/cgroup2/run.sh BUILD-DIR
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
if [ "${TOOLGATE_CHECK_LONG:-0}" != 1 ] || [ "$(id -u)" -ne 0 ]; then
	echo "skip - cgroup2/pure_v2_kernel: make check-long, as root"
	exit 0
fi
for t in debootstrap qemu-system-x86_64 cpio apt-get; do
	command -v "$t" >/dev/null || { echo "skip - cgroup2/pure_v2_kernel: no $t"; exit 0; }
done
tmp=$(mktemp -d /tmp/tg-cgroup2.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "not ok - cgroup2/$1: $2"; exit 1; }

# the kernel: bookworm-backports', from the archive apt already uses
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$tmp/apt/lists/partial"
echo "deb $mirror bookworm-backports main" >"$tmp/apt/sources.list"
aptq() { apt-get -q -o Dir::Etc::sourcelist="$tmp/apt/sources.list" -o Dir::Etc::sourceparts=- \
	-o Dir::State::Lists="$tmp/apt/lists" "$@"; }
aptq update >"$tmp/apt.out" 2>&1 || fail kernel "apt-get update: $(tail -n 2 "$tmp/apt.out")"
kname=$(apt-cache -o Dir::Etc::sourcelist="$tmp/apt/sources.list" -o Dir::Etc::sourceparts=- \
	-o Dir::State::Lists="$tmp/apt/lists" depends linux-image-cloud-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-6[^ ]*-cloud-amd64\)$/\1/p' | head -n 1)
[ -n "$kname" ] || fail kernel "no linux-image-cloud-amd64 in bookworm-backports"
(cd "$tmp" && aptq download "$kname" >>"$tmp/apt.out" 2>&1) || fail kernel "apt-get download $kname"
dpkg -x "$tmp"/linux-image-*.deb "$tmp/k"
vmlinuz=$(ls "$tmp"/k/boot/vmlinuz-* | head -n 1)

# the root: debootstrap, then the package and python3 with apt-get
"$repo/scripts/deb.sh" "$build" "$tmp" >/dev/null || fail package "make deb failed"
root=$tmp/root
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$tmp/debootstrap.out" 2>&1 ||
	fail root "debootstrap: $(tail -n 2 "$tmp/debootstrap.out")"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$tmp"/toolgate_*.deb "$root/tmp/"
chroot "$root" sh -c 'apt-get install -y -q /tmp/toolgate_*.deb python3' >"$tmp/install.out" 2>&1 ||
	fail root "apt-get install: $(tail -n 3 "$tmp/install.out")"
rm -f "$root"/tmp/*.deb "$root"/var/cache/apt/archives/*.deb
install -m 755 "$repo/tests/cgroup2/init" "$root/init"
(cd "$root" && find . -xdev | cpio -o -H newc --quiet | gzip -1 >"$tmp/initrd.gz")

# software emulation is not always steady under a nested hypervisor: a
# boot that dies before the checks ran is tried again, three times
for try in 1 2 3; do
	timeout 900 qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 4096 -nographic -no-reboot \
		-nic none -kernel "$vmlinuz" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 rdinit=/init quiet panic=-1" >"$tmp/console.log" 2>&1
	grep -q '^=== done' "$tmp/console.log" && break
done
grep -q '^=== done' "$tmp/console.log" ||
	fail boot "the VM did not finish three times: $(grep -m 2 -i 'panic' "$tmp/console.log")"
tr -d '\r' <"$tmp/console.log" | grep -E '^(ok|not ok|skip) - '
! tr -d '\r' <"$tmp/console.log" | grep -q '^not ok - '
