#!/bin/bash
# make bench-mcp-wrk: tools/call of the echo tool over Streamable HTTP,
# toolgate against the official TypeScript MCP SDK's server (the same peer
# as bench/mcp.sh), driven by a load generator that is not this project's:
# wrk (Debian's package; bench/mcp/wrk-call.lua checks every answer).
# 64 connections from wrk's 2 threads (the machine has 2 cores), two
# ways: one MCP session shared by all, and 64 sessions, the requests
# taking them in turn (a session is a header, not a connection). Then the
# pipeline's cost over ping at 1 connection, and the same with toolgate's
# audit log on. The machine's floor beside them: nginx (Debian's; installed
# when missing, as root) answering every POST with a fixed tools/call
# result, no work at all, at 64 connections and at 1. ROUNDS rounds
# (default 3), toolgate and the peers in turn; each line is the round with
# the median req/s.
# Not a test: it asserts nothing; docs/BENCHMARKS.md has the figures.
# Usage: bench/mcp-wrk.sh BUILD-DIR [SECONDS [ROUNDS]]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
rounds=${3:-3}
command -v wrk >/dev/null || { echo "mcp-wrk: wrk is missing (apt-get install wrk)" >&2; exit 1; }
bench=mcp-wrk
. bench/nginx.sh
. bench/mcp/lib.sh
"$build/toolgate" serve --catalog bench/mcp/catalog --http 127.0.0.1:0 --record /dev/null \
	2>"$work/tg.err" &
pids+=($!)
mkdir -p "$work/state"
"$build/toolgate" serve --catalog bench/mcp/catalog --http 127.0.0.1:0 \
	--state "$work/state" --audit "$work/state/audit.log" 2>"$work/tga.err" &
pids+=($!)
sdk_port=$((20000 + RANDOM % 20000))
node bench/mcp/sdk-server.mjs "$sdk_port" 2>"$work/sdk.err" &
pids+=($!)
# the floor: the fastest answer this machine gives over HTTP on loopback
nginx_port=$((20000 + RANDOM % 20000))
nginx_start "$work" "	server {
		listen 127.0.0.1:$nginx_port;
		location /mcp {
			default_type application/json;
			return 200 '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"structuredContent\":{\"text\":\"hello\"},\"isError\":false}}';
		}
	}"
started "$work/tg.err" 'MCP on'
started "$work/tga.err" 'MCP on'
started "$work/sdk.err" 'sdk-server on'
tg_port=$(log_port "$work/tg.err")
tga_port=$(log_port "$work/tga.err")

# A session: initialize, then the initialized notification; its id out.
session() { # PORT
	local h="$work/h.$$" id
	curl -s -o /dev/null -D "$h" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "http://127.0.0.1:$1/mcp" \
		-d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}'
	id=$(grep -i '^mcp-session-id:' "$h" | tr -d '\r' | awk '{print $2}')
	[ -n "$id" ] || { echo "mcp-wrk: no session from port $1" >&2; exit 1; }
	curl -s -o /dev/null -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $id" \
		-H 'MCP-Protocol-Version: 2025-11-25' "http://127.0.0.1:$1/mcp" \
		-d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo "$id"
}
# Sessions ended (DELETE): a server keeps at most 64 of one principal.
close_sessions() { # PORT IDS
	local id
	for id in ${2//,/ }; do
		curl -s -o /dev/null -X DELETE -H "Mcp-Session-Id: $id" \
			-H 'MCP-Protocol-Version: 2025-11-25' "http://127.0.0.1:$1/mcp"
	done
}
sessions() { # PORT N
	local ids=() i
	for i in $(seq "$2"); do ids+=("$(session "$1")"); done
	(IFS=,; echo "${ids[*]}")
}
run() { # PORT CONNECTIONS SESSIONS [METHOD]
	local t=$2
	[ "$t" -gt 2 ] && t=2
	MCP_SESSIONS=$3 MCP_METHOD=${4:-tools/call} wrk -t"$t" -c"$2" -d"${secs}s" \
		-s bench/mcp/wrk-call.lua "http://127.0.0.1:$1/mcp" | tail -n 1
}
line() { # LABEL JSON
	printf '%-34s %9s %10s %10s %6s\n' "$1" "$(jq .rps <<<"$2")" "$(jq .p50_us <<<"$2")" \
		"$(jq .p99_us <<<"$2")" "$(jq .bad <<<"$2")"
}
median() { jq -s 'sort_by(.rps) | .[(length - 1) / 2 | floor]' "$@"; }
ratio() { jq -n --argjson a "$1" --argjson b "$2" '$a.rps / $b.rps * 10 | floor / 10'; }
port_of() { case $1 in sdk) echo "$sdk_port" ;; audited) echo "$tga_port" ;; *) echo "$tg_port" ;; esac; }

for r in $(seq "$rounds"); do
	for mode in shared per-client; do
		for who in toolgate sdk; do
			port=$(port_of "$who")
			if [ "$mode" = shared ]; then ids=$(session "$port"); else ids=$(sessions "$port" 64); fi
			run "$port" 64 "$ids" >>"$work/$who.$mode"
			close_sessions "$port" "$ids"
		done
	done
	for who in toolgate audited; do
		port=$(port_of "$who")
		id=$(session "$port")
		run "$port" 1 "$id" ping >>"$work/$who.ping"
		run "$port" 1 "$id" >>"$work/$who.call"
		close_sessions "$port" "$id"
	done
	id=$(session "$tga_port")
	run "$tga_port" 64 "$id" >>"$work/audited.shared"
	close_sessions "$tga_port" "$id"
	run "$nginx_port" 64 none >>"$work/nginx.64"
	run "$nginx_port" 1 none >>"$work/nginx.1"
done

printf '%-34s %9s %10s %10s %6s\n' "server, connections" "req/s" "p50 us" "p99 us" "bad"
for mode in shared per-client; do
	t=$(median "$work/toolgate.$mode") p=$(median "$work/sdk.$mode")
	line "toolgate, 64, $mode session" "$t"
	line "sdk, 64, $mode session" "$p"
	printf '%-34s %9sx\n' "ratio toolgate/sdk, $mode" "$(ratio "$t" "$p")"
done
line "audited tools/call, 64, shared" "$(median "$work/audited.shared")"
for who in toolgate audited; do
	p=$(median "$work/$who.ping") c=$(median "$work/$who.call")
	line "$who ping, 1" "$p"
	line "$who tools/call, 1" "$c"
	printf 'the pipeline (%s): p50 +%s us, p99 +%s us\n' "$who" \
		"$(jq -n --argjson c "$c" --argjson p "$p" '($c.p50_us - $p.p50_us) * 10 | floor / 10')" \
		"$(jq -n --argjson c "$c" --argjson p "$p" '($c.p99_us - $p.p99_us) * 10 | floor / 10')"
done
line "floor: nginx, fixed answer, 64" "$(median "$work/nginx.64")"
line "floor: nginx, fixed answer, 1" "$(median "$work/nginx.1")"
