#!/bin/bash
# make bench-mcp: tools/call of a trivial tool over Streamable HTTP, toolgate
# against the official TypeScript MCP SDK's server exposing the same tool
# (bench/mcp/sdk-server.mjs; the SDK from the npm registry into
# tests/mcp/node_modules, git-ignored), one load generator for both
# (bench/mcp-load.c), at 1 and 64 concurrent clients, each a session on its
# own keep-alive connection. Then the pipeline's own cost: toolgate's
# tools/call against its ping (the same request path, no pipeline).
# Usage: bench/mcp.sh BUILD-DIR [SECONDS]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
bench=mcp
. bench/mcp/lib.sh

"$build/toolgate" serve --catalog bench/mcp/catalog --http 127.0.0.1:0 --record /dev/null 2>"$work/tg.err" &
pids+=($!)
sdk_port=$((20000 + RANDOM % 20000))
node bench/mcp/sdk-server.mjs "$sdk_port" 2>"$work/sdk.err" &
pids+=($!)
started "$work/tg.err" 'MCP on'
started "$work/sdk.err" 'sdk-server on'
tg_port=$(log_port "$work/tg.err")

run() { "$build/bench/mcp-load" "$1" "$2" "$secs" "$3"; }
printf '%-28s %10s %10s %10s %8s\n' "server, clients" "req/s" "p50 us" "p99 us" "errors"
for c in 1 64; do
	for who in toolgate sdk; do
		port=$tg_port
		[ "$who" = sdk ] && port=$sdk_port
		r=$(run "$port" "$c" call)
		echo "$r" >"$work/$who.$c"
		printf '%-28s %10s %10s %10s %8s\n' "$who tools/call, $c" "$(jq .rps <<<"$r")" \
			"$(jq .p50_us <<<"$r")" "$(jq .p99_us <<<"$r")" "$(jq .errors <<<"$r")"
	done
	printf '%-28s %10s\n' "ratio toolgate/sdk, $c" \
		"$(jq -n --slurpfile t "$work/toolgate.$c" --slurpfile s "$work/sdk.$c" '$t[0].rps / $s[0].rps * 10 | floor / 10')x"
done
p=$(run "$tg_port" 1 ping)
c=$(cat "$work/toolgate.1")
printf '%-28s %10s %10s %10s\n' "toolgate ping, 1" "$(jq .rps <<<"$p")" "$(jq .p50_us <<<"$p")" "$(jq .p99_us <<<"$p")"
printf 'the pipeline (tools/call over ping), 1 client: p50 +%s us, p99 +%s us\n' \
	"$(jq -n --argjson c "$c" --argjson p "$p" '($c.p50_us - $p.p50_us) * 10 | floor / 10')" \
	"$(jq -n --argjson c "$c" --argjson p "$p" '($c.p99_us - $p.p99_us) * 10 | floor / 10')"
