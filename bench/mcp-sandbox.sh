#!/bin/bash
# make bench-mcp-sandbox: a sandboxed command tool's tools/call over
# Streamable HTTP, through toolgate against what a user would write
# without it: the official TypeScript MCP SDK's server whose tool spawns
# bubblewrap for each call (bench/mcp/sdk-bwrap-server.mjs), the same
# command (/bin/cat: the arguments in, the same JSON out), the same
# isolation flags where bubblewrap has them, toolgate's own seccomp
# programs in both. toolgate serves bench/mcp/sandbox-catalog as it
# starts by default (a warm pool of 2: toolgate) and with --warm 0
# (toolgate-cold). The floor: the same SDK server spawning /bin/cat with no
# sandbox. One load generator for all (bench/mcp-load.c), at 1 and 64
# clients, each a session on its own keep-alive connection; ROUNDS rounds
# (default 3), the contenders in turn, each line the round with the median
# req/s. Not a test: it asserts nothing; docs/BENCHMARKS.md has the figures.
# Usage: bench/mcp-sandbox.sh BUILD-DIR [SECONDS [ROUNDS]]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
rounds=${3:-3}
command -v bwrap >/dev/null || { echo "mcp-sandbox: bwrap is missing (apt-get install bubblewrap)" >&2; exit 1; }
bench=mcp-sandbox
. bench/mcp/lib.sh
"$build/bench/seccomp-export" "$work"

"$build/toolgate" serve --catalog bench/mcp/sandbox-catalog --http 127.0.0.1:0 --record /dev/null \
	2>"$work/tg.err" &
pids+=($!)
"$build/toolgate" serve --catalog bench/mcp/sandbox-catalog --http 127.0.0.1:0 --record /dev/null \
	--warm 0 2>"$work/tgc.err" &
pids+=($!)
declare -A port
port[sdk-bwrap]=$((20000 + RANDOM % 20000))
port[sdk-bare]=$((port[sdk-bwrap] + 1))
node bench/mcp/sdk-bwrap-server.mjs "${port[sdk-bwrap]}" "$work" 2>"$work/sdk.err" &
pids+=($!)
node bench/mcp/sdk-bwrap-server.mjs "${port[sdk-bare]}" bare 2>"$work/bare.err" &
pids+=($!)
started "$work/tg.err" 'MCP on'
started "$work/tgc.err" 'MCP on'
started "$work/sdk.err" 'sdk-bwrap-server on'
started "$work/bare.err" 'sdk-bwrap-server on'
port[toolgate]=$(log_port "$work/tg.err")
port[toolgate-cold]=$(log_port "$work/tgc.err")
who=(toolgate toolgate-cold sdk-bwrap sdk-bare)

# a first call to each, untimed: toolgate's pool is made from its tool's
# first call, node's modules load on the first
for w in "${who[@]}"; do
	"$build/bench/mcp-load" "${port[$w]}" 1 1 call >/dev/null
done
printf '%-34s %10s %10s %10s %8s\n' "server, clients" "req/s" "p50 us" "p99 us" "errors"
for c in 1 64; do
	for w in "${who[@]}"; do
		: >"$work/$w.$c"
	done
	for r in $(seq "$rounds"); do
		for w in "${who[@]}"; do
			"$build/bench/mcp-load" "${port[$w]}" "$c" "$secs" call >>"$work/$w.$c"
		done
	done
	for w in "${who[@]}"; do
		# the round with the median req/s
		jq -s 'sort_by(.rps) | .[length / 2 | floor]' "$work/$w.$c" >"$work/$w.$c.med"
		r=$(cat "$work/$w.$c.med")
		printf '%-34s %10s %10s %10s %8s\n' "$w, $c" "$(jq .rps <<<"$r")" \
			"$(jq .p50_us <<<"$r")" "$(jq .p99_us <<<"$r")" "$(jq .errors <<<"$r")"
	done
	for w in toolgate toolgate-cold sdk-bare; do
		# req/s, p50 and p99 over sdk-bwrap's, two decimals
		read -r rps p50 p99 < <(jq -rn --slurpfile t "$work/$w.$c.med" \
			--slurpfile s "$work/sdk-bwrap.$c.med" '
			[$t[0].rps / $s[0].rps, $t[0].p50_us / $s[0].p50_us, $t[0].p99_us / $s[0].p99_us]
			| map(. * 100 | floor / 100) | @tsv')
		printf '%-34s %10s   p50 %5s   p99 %5s\n' "ratio $w/sdk-bwrap, $c" "${rps}x" "$p50" "$p99"
	done
done
