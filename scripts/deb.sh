#!/bin/bash
# make deb: Debian packages of the built tree (README.md, "Install"), made
# with dpkg-deb from `make install DESTDIR=... PREFIX=/usr` (it builds
# nothing that make all did not): toolgate (the command, the shared
# library, the man pages, the completion, the systemd unit and sysusers
# file, the sample configuration as a conffile, the examples) and
# libtoolgate-dev (the headers, the static library, the .so link and the
# pkg-config file). Depends comes from dpkg-shlibdeps on what the command
# and the library link, PCRE2 and libsodium, which every gateway loads,
# SQLite, which a command keeping state loads, libseccomp and libinih
# (a syscall's name, the configuration file), and libmicrohttpd and
# GnuTLS, which serve --http loads when it listens;
# what toolgate loads only when used (libcurl for
# OTLP, webhooks, identity providers and HTTP upstreams; libcrypto for
# identity providers' keys; libsystemd under systemd; libyaml for skills;
# libpq for a PostgreSQL store)
# and the examples' python3 are Recommends.
# Usage: scripts/deb.sh BUILD-DIR [OUT-DIR]   (OUT-DIR: BUILD-DIR)
# Prints the packages' paths.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
out=$(cd "${2:-$build}" && pwd -P)
version=$(sed -n 's/^#define TOOLGATE_VERSION "\(.*\)"/\1/p' "$repo/include/toolgate/version.h")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
work=$(mktemp -d /tmp/tg-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
main=$work/toolgate dev=$work/libtoolgate-dev

for tool in dpkg-deb dpkg-shlibdeps; do
	command -v "$tool" >/dev/null || { echo "deb.sh: $tool is needed (apt-get install dpkg-dev)" >&2; exit 1; }
done
[ -x "$build/toolgate" ] || { echo "deb.sh: no $build/toolgate: make all first" >&2; exit 1; }

# the installed tree, with the library where Debian keeps it
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$repo" BUILD="$build" \
	DESTDIR="$main" PREFIX=/usr LIBDIR="/usr/lib/$multiarch" install >"$work/make.out" 2>&1 ||
	{ cat "$work/make.out" >&2; exit 1; }

# the development files apart
for f in "usr/include" "usr/lib/$multiarch/libtoolgate.a" "usr/lib/$multiarch/libtoolgate.so" \
	"usr/lib/$multiarch/pkgconfig"; do
	mkdir -p "$dev/$(dirname "$f")"
	mv "$main/$f" "$dev/$f"
done

# Depends of what the command and the library link
mkdir -p "$work/shlibs/debian"
printf 'Source: toolgate\n\nPackage: toolgate\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e"$main/usr/bin/toolgate" \
	-e"$(ls "$main/usr/lib/$multiarch"/libtoolgate.so.0.*)" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb.sh: dpkg-shlibdeps found no dependency" >&2; exit 1; }
# and what serve --http loads when it listens (src/util/mhd.c), and
# SQLite, which any command keeping state loads (src/util/sqlite.c), and
# PCRE2 and libsodium, which patterns, redaction, the store, the audit log
# and tokens load (src/util/pcre2.c, sodium.c): the
# gateway's main jobs, so dependencies, not recommendations
depends="$depends, libmicrohttpd12 (>= 0.9.50), libgnutls30 (>= 3.7.3), libsqlite3-0 (>= 3.31)"
depends="$depends, libpcre2-8-0 (>= 10.34), libsodium23 (>= 1.0.18)"
# libseccomp, which names the syscall that ended a run (the filters are
# compiled at build time: src/sandbox/seccomp.c), and libinih, which reads
# the configuration file (src/cli/config.c)
depends="$depends, libseccomp2 (>= 2.5), libinih1 (>= 53)"

size() { du -sk --exclude=DEBIAN "$1" | cut -f1; }
control() { # DIR PACKAGE SECTION DESCRIPTION FIELDS... (the long description follows)
	local dir=$1 name=$2 section=$3 desc=$4
	shift 4
	mkdir -p "$dir/DEBIAN"
	{
		echo "Package: $name"
		echo "Version: $version"
		echo "Architecture: $arch"
		echo "Maintainer: toolgate developers <toolgate@localhost>"
		echo "Section: $section"
		echo "Priority: optional"
		echo "Installed-Size: $(size "$dir")"
		printf '%s\n' "$@"
		echo "Description: $desc"
	} >"$dir/DEBIAN/control"
}

control "$main" toolgate net "the tool-execution layer for AI agents" \
	"Depends: $depends" "Recommends: libcurl4, libssl3, libsystemd0, libyaml-0-2, libpq5, python3"
cat >>"$main/DEBIAN/control" <<'EOF'
 toolgate sits between AI agents and the systems their tools change: a
 catalogue of typed tool contracts and the MCP servers already run, each
 write held for a person's approval and run once, every command tool in a
 sandbox with default-deny egress, short-lived scoped tokens and a
 tamper-evident audit log. This package holds the toolgate command, its
 shared library, man pages, bash completion, systemd unit and sample
 configuration (/etc/toolgate/toolgate.conf).
EOF
echo /etc/toolgate/toolgate.conf >"$main/DEBIAN/conffiles"
cat >"$main/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# the service's user (sysusers.d/toolgate.conf); the unit is not enabled:
# an operator starts it once the configuration is theirs (docs/SYSTEMD.md);
# an upgrade restarts a gateway that runs, on the new binary
set -e
if [ "$1" = configure ]; then
	if command -v systemd-sysusers >/dev/null; then
		systemd-sysusers toolgate.conf
	else
		echo "toolgate: no systemd-sysusers: make the user of /usr/lib/sysusers.d/toolgate.conf by hand" >&2
	fi
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null || true
		[ -z "$2" ] || systemctl try-restart toolgate.service >/dev/null || true
	fi
fi
EOF
cat >"$main/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# a gateway that runs stops before its binary goes
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl stop toolgate.service >/dev/null 2>&1 || true
fi
EOF
cat >"$main/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi
EOF
chmod 755 "$main/DEBIAN/postinst" "$main/DEBIAN/prerm" "$main/DEBIAN/postrm"
# the shared library: the linker's cache made anew
echo "activate-noawait ldconfig" >"$main/DEBIAN/triggers"

control "$dev" libtoolgate-dev libdevel "toolgate's library: headers, static library, pkg-config" \
	"Depends: toolgate (= $version), libjansson-dev"
cat >>"$dev/DEBIAN/control" <<'EOF'
 The C headers of toolgate's library (toolgate/*.h), libtoolgate.a, the
 libtoolgate.so link and toolgate.pc, for programs built against it.
EOF

for d in "$main" "$dev"; do
	name=$(basename "$d")
	dpkg-deb --root-owner-group --build "$d" "$out/${name}_${version}_${arch}.deb" >/dev/null
	echo "$out/${name}_${version}_${arch}.deb"
done
