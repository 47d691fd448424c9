#!/bin/sh
# Install the Debian packages that building and testing toolgate need, only
# those missing. Runs as root on Debian 12 (apt-get); as another user it
# only reports what is missing.
set -eu

PKGS="gcc make pkg-config libc6-dev musl-tools libseccomp-dev libjansson-dev libpcre2-dev libmicrohttpd-dev libgnutls28-dev libssl-dev libsodium-dev libsqlite3-dev libcurl4-openssl-dev libinih-dev
      libpq-dev postgresql-15
      libsystemd-dev
      clang clang-tidy libclang-rt-14-dev bubblewrap iproute2 jq python3 util-linux chromium
      procps bsdextrautils python3-jsonschema curl openssl dpkg-dev debootstrap qemu-system-x86 cpio
      json-schema-test-suite libtest-json-schema-acceptance-perl libidn2-0 prometheus unicode-data
      scdoc libyaml-dev minisign wrk"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root: apt-get install$missing)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
