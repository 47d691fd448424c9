#!/bin/bash
# make bench-tls: what HTTPS costs, toolgate's own TLS (libmicrohttpd and
# GnuTLS) against nginx from Debian terminating TLS in front of the same
# server (the usual deployment), in the same run, on loopback, with one
# certificate (ECDSA P-256) made by openssl:
# - full handshakes per second (openssl s_time -new), TLS 1.3 and 1.2;
# - a host's tools/call of a trivial tool on one keep-alive connection
#   (bench/tls/calls.py), and a new connection's first call, over plain
#   http (the floor of the request path), https to toolgate, and https
#   to nginx proxying to toolgate's plain http;
# - the machine's floor: a bare posix_spawn of /bin/true, median of 300.
# nginx-light is installed from Debian when missing (as root).
# Usage: bench/tls.sh BUILD-DIR [SECONDS] [CALLS]
set -eu
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd -P)
secs=${2:-5}
calls=${3:-2000}
bench=bench-tls
. bench/nginx.sh
work=$(mktemp -d)
chmod 755 "$work"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
	-out "$work/cert.pem" -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
chmod 600 "$work/key.pem"

start() { # NAME ARGS...: toolgate serve (in this shell: the trap stops it)
	local name=$1
	shift
	"$build/toolgate" serve --catalog bench/mcp/catalog --record /dev/null "$@" 2>"$work/$name.err" &
	pids+=($!)
}
port_of() { # NAME: the port it said
	for _ in $(seq 100); do grep -q 'MCP on' "$work/$1.err" && break; sleep 0.1; done
	grep -o 'MCP on [a-z]*://127.0.0.1:[0-9]*' "$work/$1.err" | sed 's/.*://'
}
start tls --http 127.0.0.1:0 --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
start plain --http 127.0.0.1:0
tls_port=$(port_of tls)
plain_port=$(port_of plain)
nginx_port=$((20000 + RANDOM % 20000))
nginx_start "$work" "	upstream toolgate { server 127.0.0.1:$plain_port; keepalive 32; }
	server {
		listen 127.0.0.1:$nginx_port ssl;
		ssl_certificate $work/cert.pem;
		ssl_certificate_key $work/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		location / {
			proxy_pass http://toolgate;
			proxy_http_version 1.1;
			proxy_set_header Connection \"\";
			proxy_set_header Host 127.0.0.1:$plain_port;
			proxy_buffering off;
		}
	}"

echo "# $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $(date -u +%FT%TZ)"
python3 - <<'PY'
import os, time
t = []
for _ in range(300):
    s = time.perf_counter()
    os.waitpid(os.posix_spawn("/bin/true", ["/bin/true"], os.environ), 0)
    t.append(time.perf_counter() - s)
t.sort()
print("floor: a bare posix_spawn of /bin/true and its wait, median of 300: %.3f ms" % (t[150] * 1e3))
PY
hs() { # PORT VERSION: handshakes per second
	openssl s_time -connect "127.0.0.1:$1" -new -"$2" -time "$secs" 2>/dev/null |
		sed -n 's/^\([0-9]*\) connections in \([0-9.]*\)s;.*/\1 \2/p' | awk '{printf "%.0f", $1 / $2}'
}
printf '%-34s %12s\n' "full handshakes (s_time -new)" "per second"
for v in tls1_3 tls1_2; do
	t=$(hs "$tls_port" $v)
	n=$(hs "$nginx_port" $v)
	printf '%-34s %12s\n' "toolgate, ${v/_/.}" "$t" "nginx, ${v/_/.}" "$n"
	printf '%-34s %11sx\n' "ratio toolgate/nginx, ${v/_/.}" "$(awk -v a="$t" -v b="$n" 'BEGIN{printf "%.2f", a/b}')"
done
printf '\n%-34s %10s %10s %14s\n' "tools/call, one connection" "p50 us" "p99 us" "new conn p50"
for who in "http toolgate:http://127.0.0.1:$plain_port/mcp" \
	"https toolgate:https://localhost:$tls_port/mcp" \
	"https nginx -> toolgate:https://localhost:$nginx_port/mcp"; do
	r=$(python3 bench/tls/calls.py "${who#*:}" "$calls" "$work/cert.pem")
	echo "$r" >"$work/${who%%:*}.json"
	printf '%-34s %10s %10s %14s\n' "${who%%:*}" "$(jq .p50_us <<<"$r")" "$(jq .p99_us <<<"$r")" \
		"$(jq .new_connection_p50_us <<<"$r")"
done
cd "$work"
jq -n --slurpfile h "http toolgate.json" --slurpfile t "https toolgate.json" \
	--slurpfile n "https nginx -> toolgate.json" -r '
	"TLS on a kept connection, p50: toolgate +\(($t[0].p50_us - $h[0].p50_us) * 10 | floor / 10) us, " +
	"nginx in front +\(($n[0].p50_us - $h[0].p50_us) * 10 | floor / 10) us over plain http",
	"a new connection (handshake and call), p50: toolgate \($t[0].new_connection_p50_us) us, " +
	"nginx \($n[0].new_connection_p50_us) us (ratio \(($t[0].new_connection_p50_us / $n[0].new_connection_p50_us) * 100 | floor / 100)x)"'
