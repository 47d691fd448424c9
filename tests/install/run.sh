#!/bin/bash
# The installed tree, as a user gets it: `make install DESTDIR=ROOT
# PREFIX=/usr` from the built tree (it builds nothing), then from ROOT
# alone: the binary's --version and doctor, the example catalogue served
# over stdio (initialize, tools/list, fs.read of the example workspace), a
# C program built with pkg-config against the headers and the library
# (linked with libtoolgate.a, and with libtoolgate.so), the bash
# completion, and `make uninstall` leaving no file behind (README.md,
# "Install").
# Usage: tests/install/run.sh BUILD-DIR
# Prints "ok - install/NAME" or "not ok - install/NAME: why".
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
tmp=$(mktemp -d /tmp/tg-install.XXXXXX) && tmp=$(cd "$tmp" && pwd -P)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

failures=0
ok() { echo "ok - install/$1"; }
fail() { echo "not ok - install/$1: $2"; failures=$((failures + 1)); }
# check NAME COND-EXIT-STATUS WHY
check() { if [ "$2" -eq 0 ]; then ok "$1"; else fail "$1" "$3"; fi; }

# The Makefile's own directories, not the caller's: a make check's
# MAKEFLAGS (its -j, its variables) stay out of it.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$repo" \
	BUILD="$build" DESTDIR="$root" PREFIX=/usr "$@" >>"$tmp/make.out" 2>&1; }

# --- make install ------------------------------------------------------------
mk install; rc=$?
# a compiler's line in the output: make install built something
! grep -qE '(^| )-c -o |-shared ' "$tmp/make.out"
built=$?
TG=$root/usr/bin/toolgate
so=$(cd "$root/usr/lib" 2>/dev/null && ls libtoolgate.so.*.*.* 2>/dev/null)
[ $rc -eq 0 ] && [ $built -eq 0 ] && [ -x "$TG" ] && [ -f "$root/usr/lib/libtoolgate.a" ] &&
	[ -n "$so" ] && [ "$(readlink "$root/usr/lib/libtoolgate.so")" = libtoolgate.so.0 ] &&
	[ "$(readlink "$root/usr/lib/libtoolgate.so.0")" = "$so" ] &&
	[ -f "$root/usr/include/toolgate/gate.h" ] && [ -f "$root/usr/lib/pkgconfig/toolgate.pc" ] &&
	[ -f "$root/usr/share/bash-completion/completions/toolgate" ]
check install_places_files $? "rc=$rc; $([ $built -eq 0 ] || echo "it built:" \
	"$(grep -E '(^| )-c -o |-shared ' "$tmp/make.out" | cut -c1-120 | head -n 2)")
	$(tail -n 3 "$tmp/make.out"); installed: $(cd "$root" && find . ! -type d | head -n 20)"

# the shared library's interface: the public headers' functions, no other
nm -D --defined-only "$root/usr/lib/$so" | awk '{ print $3 }' | sort >"$tmp/exported"
cat "$repo"/include/toolgate/*.h | tr '\n' ' ' | grep -oE '\btg_[a-z0-9_]+ *\(' |
	sed 's/ *(//' | sort -u >"$tmp/declared"
# (the one tg_...( of the headers that is no function: a comment's enum)
grep -vx tg_ticket_state "$tmp/declared" >"$tmp/declared.fn"
[ "$(readelf -d "$root/usr/lib/$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" = libtoolgate.so.0 ] &&
	cmp -s "$tmp/exported" "$tmp/declared.fn"
check shared_library_exports_the_headers $? \
	"$(diff "$tmp/declared.fn" "$tmp/exported" | head -n 10)"

# --- the installed binary ------------------------------------------------------
[ "$("$TG" --version)" = "$("$build/toolgate" --version)" ] &&
	"$TG" --version | grep -qx "toolgate $(sed -n 's/^#define TOOLGATE_VERSION "\(.*\)"/\1/p' \
		"$repo/include/toolgate/version.h")"
check version $? "$("$TG" --version 2>&1)"

"$TG" doctor --json >"$tmp/doctor.json" 2>"$tmp/err"; rc=$?
"$build/toolgate" doctor --json >/dev/null 2>&1; want=$?
[ $rc -eq $want ] && [ "$(jq -r .strict "$tmp/doctor.json")" != null ]
check doctor $? "rc=$rc (the build's $want) $(head -c 300 "$tmp/doctor.json") $(head -n 3 "$tmp/err")"

# the example catalogue and workspace, readable by the sandbox's user
cp -r "$repo/examples/catalog" "$tmp/catalog"
cp -r "$repo/examples/workspace" "$tmp/ws"
cp -r "$repo/examples/data" "$tmp/data" # the sql tools' ../data
chmod -R a+rX "$tmp/catalog" "$tmp/ws" "$tmp/data"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
printf '%s\n' "$INIT" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":1,"method":"tools/list"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs.read","arguments":{"path":"notes.txt"}}}' |
	(cd / && timeout 30 "$TG" serve --catalog "$tmp/catalog" --workspace "$tmp/ws" --stdio \
		--audit "$tmp/audit.log") >"$tmp/mcp.out" 2>"$tmp/err"
resp() { jq -c "select(.id == $1)" "$tmp/mcp.out"; }
[ "$(resp 0 | jq -r .result.serverInfo.name)" = toolgate ] &&
	resp 1 | jq -e '[.result.tools[].name] | index("fs.read") and index("sql.query")' >/dev/null &&
	[ "$(resp 2 | jq -r '.result.structuredContent.content')" = "$(cat "$repo/examples/workspace/notes.txt")" ]
check serve_examples_stdio $? "$(cut -c1-300 "$tmp/mcp.out") $(tail -n 3 "$tmp/err")"

# --- the library, as a program links it ---------------------------------------
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <toolgate/anomaly.h>
#include <toolgate/audit.h>
#include <toolgate/auth.h>
#include <toolgate/catalog.h>
#include <toolgate/contract.h>
#include <toolgate/egress.h>
#include <toolgate/error.h>
#include <toolgate/gate.h>
#include <toolgate/mcp.h>
#include <toolgate/redact.h>
#include <toolgate/sandbox.h>
#include <toolgate/scan.h>
#include <toolgate/schema.h>
#include <toolgate/store.h>
#include <toolgate/trace.h>
#include <toolgate/upstream.h>
#include <toolgate/version.h>

int main(void)
{
	static const char schema[] = "{\"type\":\"integer\",\"minimum\":1}";
	struct tg_schema *s = NULL;
	struct tg_error err;
	int good, bad;

	if (tg_schema_compile(schema, strlen(schema), NULL, &s, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	good = tg_schema_validate(s, "3", 1, NULL, &err);
	bad = tg_schema_validate(s, "0", 1, NULL, &err);
	tg_schema_free(s);
	printf("%s %d %d\n", TOOLGATE_VERSION, good, bad);
	return good == 1 && bad == 0 ? 0 : 1;
}
EOF
# the sysroot's files, and no system path filtered out of the flags
pc() { PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" \
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 pkg-config "$@"; }
want="$(sed -n 's/^#define TOOLGATE_VERSION "\(.*\)"/\1/p' "$repo/include/toolgate/version.h") 1 0"
cflags=$(pc --cflags toolgate) && static=$(pc --static --libs toolgate) &&
	[ "$(pc --modversion toolgate)" = "${want%% *}" ]; rc=$?
check pkg_config $rc "$(pc --cflags --libs toolgate 2>&1) $(cat "$root/usr/lib/pkgconfig/toolgate.pc")"

# static: the archive (-l:libtoolgate.a, though the .so lies beside it),
# its dependencies' shared libraries from Libs.private
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/prog-static" "$tmp/prog.c" $cflags \
	${static/-ltoolgate/-l:libtoolgate.a} 2>"$tmp/err" &&
	! ldd "$tmp/prog-static" | grep -q libtoolgate &&
	[ "$("$tmp/prog-static")" = "$want" ]
check link_static $? "$cflags $static: $(head -n 5 "$tmp/err")"

cc -std=c11 -Wall -Wextra -Werror -o "$tmp/prog-shared" "$tmp/prog.c" $cflags \
	$(pc --libs toolgate) 2>"$tmp/err" &&
	LD_LIBRARY_PATH="$root/usr/lib" ldd "$tmp/prog-shared" |
		grep -q "libtoolgate.so.0 => $root/usr/lib/libtoolgate.so.0 " &&
	[ "$(LD_LIBRARY_PATH="$root/usr/lib" "$tmp/prog-shared")" = "$want" ]
check link_shared $? "$(head -n 5 "$tmp/err") $(LD_LIBRARY_PATH="$root/usr/lib" ldd "$tmp/prog-shared" 2>&1 | grep toolgate)"

# --- bash completion -------------------------------------------------------------
comp=$root/usr/share/bash-completion/completions/toolgate
bash -n "$comp"
check completion_syntax $? "bash -n $comp"

# complete WORD... : what the completion offers for the last word
complete_words() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _toolgate;
		printf "%s\n" "${COMPREPLY[@]}"' complete "$comp" "$@" 2>&1 | sort | tr '\n' ' '
}
got1=$(complete_words toolgate ser) got2=$(complete_words toolgate serve --cat)
got3=$(cd "$tmp" && complete_words toolgate serve --catalog cat)
got4=$(complete_words toolgate serve --descriptions "")
[ "$got1" = "serve " ] && [ "$got2" = "--catalog --catalog-trust " ] && [ "$got3" = "catalog " ] &&
	[ "$got4" = "off refuse warn " ]
check completion_words $? "ser: '$got1'; serve --cat: '$got2'; --catalog cat: '$got3'; --descriptions: '$got4'"

# a ticket's id from `approvals list --json --state DIR`, of a stand-in
# for toolgate that gives two when asked just that
a=0123456789abcdef0123456789abcdef b=fedcba9876543210fedcba9876543210
cat >"$tmp/tg-stub" <<EOF
#!/bin/sh
[ "\$*" = "approvals list --json --state $tmp/state" ] &&
	echo '{"tickets":[{"id":"$a","state":"pending"},{"id":"$b","state":"pending"}]}'
EOF
chmod 755 "$tmp/tg-stub"
got1=$(complete_words "$tmp/tg-stub" approvals approve --state "$tmp/state" 01)
got2=$(complete_words "$tmp/tg-stub" approvals reject --state "$tmp/state" "")
[ "$got1" = "$a " ] && [ "$got2" = "$a $b " ]
check completion_ticket_ids $? "approve --state S 01: '$got1'; reject --state S: '$got2'"

# each command's options are its --help's (--help itself aside)
why=""
for cmd in run doctor schema catalog serve token policy approvals rollback audit redact anomalies \
	upstream config; do
	"$TG" "$cmd" --help | grep -oE -- '(^|[[ (|])--?[a-z][a-z0-9-]*' |
		grep -oE -- '--?[a-z][a-z0-9-]*$' | grep -vx -- '--help' | sort -u >"$tmp/help"
	complete_words toolgate "$cmd" - | tr ' ' '\n' | grep . | grep -vxE -- '--help|--' |
		sort -u >"$tmp/comp"
	cmp -s "$tmp/help" "$tmp/comp" ||
		why="$why $cmd: $(diff "$tmp/help" "$tmp/comp" | grep '^[<>]' | tr '\n' ' ');"
done
[ -z "$why" ]
check completion_options_match_help $? "< --help only, > completion only:$why"

# --- the Debian packages ---------------------------------------------------------
# make deb (scripts/deb.sh): toolgate and libtoolgate-dev from the built tree,
# their files make install's, their Depends what this host has installed
mkdir -p "$tmp/deb"
"$repo/scripts/deb.sh" "$build" "$tmp/deb" >"$tmp/deb.out" 2>&1; rc=$?
deb=$tmp/deb/toolgate_$(sed -n 's/^#define TOOLGATE_VERSION "\(.*\)"/\1/p' \
	"$repo/include/toolgate/version.h")_$(dpkg --print-architecture).deb
devdeb=${deb/toolgate_/libtoolgate-dev_}
[ $rc -eq 0 ] && [ -f "$deb" ] && [ -f "$devdeb" ] &&
	[ "$(dpkg-deb -f "$deb" Package)" = toolgate ] &&
	case "$(dpkg-deb -f "$devdeb" Depends)" in "toolgate (= $(dpkg-deb -f "$deb" Version)),"*) ;; *) false ;; esac &&
	dpkg-deb -I "$deb" prerm >/dev/null && dpkg-deb -I "$deb" triggers | grep -qx 'activate-noawait ldconfig' &&
	dpkg-deb -I "$deb" conffiles | grep -qx /etc/toolgate/toolgate.conf
check deb_built $? "rc=$rc $(tail -n 5 "$tmp/deb.out")"
dpkg-deb -c "$deb" | awk '{ print $6 }' >"$tmp/deb.files"
dpkg-deb -c "$devdeb" | awk '{ print $6 }' >"$tmp/devdeb.files"
why=""
for f in ./usr/bin/toolgate ./etc/toolgate/toolgate.conf ./usr/lib/systemd/system/toolgate.service \
	./usr/lib/sysusers.d/toolgate.conf ./usr/share/man/man1/toolgate-serve.1 \
	./usr/share/man/man5/toolgate.conf.5 ./usr/share/bash-completion/completions/toolgate \
	./usr/share/toolgate/examples/catalog/fs.read-1.0.0.json \
	./usr/share/toolgate/examples/data/shop.db; do
	grep -qx -- "$f" "$tmp/deb.files" || why="$why toolgate lacks $f;"
done
for f in '\./usr/include/toolgate/gate\.h' '\./usr/lib/[^/]*/libtoolgate\.a' \
	'\./usr/lib/[^/]*/libtoolgate\.so' '\./usr/lib/[^/]*/pkgconfig/toolgate\.pc'; do
	grep -qx -- "$f" "$tmp/devdeb.files" || why="$why libtoolgate-dev lacks $f;"
done
grep -q 'libtoolgate\.so\.0$' "$tmp/deb.files" || why="$why toolgate lacks libtoolgate.so.0;"
grep -q 'include/' "$tmp/deb.files" && why="$why toolgate holds headers;"
for p in $(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*//; s/ //g'); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		why="$why Depends $p is not installed here;"
done
[ -z "$why" ]
check deb_contents $? "$why"

# make check-long: the package installed with apt-get into a clean Debian
# root made by debootstrap (what it depends on and recommends from the
# Debian archive), then, inside it (bubblewrap's pivot_root: a chroot
# refuses user namespaces), doctor on the installed configuration and the
# example catalogue served from it: a read of the workspace and of the
# database
if [ "${TOOLGATE_CHECK_LONG:-0}" = 1 ] && [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null &&
	command -v bwrap >/dev/null; then
	chroot=$tmp/debroot
	mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	debootstrap --variant=minbase bookworm "$chroot" "${mirror:-http://deb.debian.org/debian}" \
		>"$tmp/debootstrap.out" 2>&1; rc=$?
	cp /etc/resolv.conf "$chroot/etc/resolv.conf" 2>/dev/null
	cp "$deb" "$chroot/tmp/"
	in_root() { bwrap --bind "$chroot" / --bind /proc /proc --dev-bind /dev /dev --bind /sys /sys \
		--tmpfs /tmp "$@"; }
	# as a user installs a package file: apt takes its Depends and Recommends
	[ $rc -eq 0 ] && chroot "$chroot" apt-get install -y -q "/tmp/$(basename "$deb")" \
		>"$tmp/dpkg.out" 2>&1 &&
		chroot "$chroot" dpkg-query -W -f='${Status}' toolgate | grep -q 'install ok installed'
	check deb_installs_in_a_clean_root $? "$(tail -n 5 "$tmp/debootstrap.out" "$tmp/dpkg.out")"
	in_root /usr/bin/toolgate doctor >"$tmp/doctor.out" 2>&1; rc=$?
	[ $rc -eq 0 ] && grep -q 'etc/toolgate/toolgate.conf: serve.s deployment has no problem found' \
		"$tmp/doctor.out"
	check deb_doctor_on_the_installed_config $? "rc=$rc $(tail -n 8 "$tmp/doctor.out")"
	printf '%s\n' "$INIT" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs.read","arguments":{"path":"notes.txt"}}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sql.query","arguments":{"sql":"SELECT count(*) AS n FROM products"}}}' |
		in_root timeout 60 /usr/bin/toolgate serve --stdio >"$tmp/mcp.out" 2>"$tmp/err"
	[ "$(resp 1 | jq -r '.result.structuredContent.content')" = "$(cat "$repo/examples/workspace/notes.txt")" ] &&
		[ "$(resp 2 | jq -r '.result.isError')" = false ]
	check deb_serves_the_installed_config $? "$(cut -c1-300 "$tmp/mcp.out") $(tail -n 3 "$tmp/err")"
else
	echo "skip - install/deb_in_a_clean_root: make check-long, as root, with debootstrap and bwrap"
fi

# --- make uninstall -------------------------------------------------------------
mk uninstall; rc=$?
left=$(cd "$root" && find . ! -type d)
[ $rc -eq 0 ] && [ -z "$left" ] && [ ! -e "$root/usr/include/toolgate" ]
check uninstall_leaves_nothing $? "rc=$rc left: $left"

[ "$failures" -eq 0 ]
