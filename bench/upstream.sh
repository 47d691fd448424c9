#!/bin/bash
# make bench-upstream: toolgate fronting a real upstream MCP server
# (@modelcontextprotocol/server-everything), a tools/call of its echo tool
# from one load generator (bench/mcp-load.c) at 1 and 64 concurrent clients,
# against four contenders on loopback, interleaved round by round:
#
#   direct     server-everything over Streamable HTTP, called as it is
#   tg-stdio   toolgate serve --http, the server over stdio in its sandbox
#   tg-http    toolgate serve --http, the direct server as an http upstream
#   sgw        supergateway (npm) in front of the server over stdio,
#              exposing Streamable HTTP (--stateful: a server a session)
#
# then the pipeline's own cost (tg-stdio's tools/call of its builtin echo
# against its ping, as bench/mcp.sh measures it), and the gateway's memory
# per idle upstream with the machine's floor (bench/upstream/memory.py).
# The npm packages go, pinned, into bench/upstream/node_modules (git-ignored).
# docs/BENCHMARKS.md, "bench/upstream", says what the figures mean.
# Usage: bench/upstream.sh BUILD-DIR [SECONDS [ROUNDS]]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-5}
rounds=${3:-3}
everything=2026.8.31
supergateway=4.0.0
nm=$PWD/bench/upstream/node_modules
server=$nm/@modelcontextprotocol/server-everything/dist/index.js

version() { node -p "require('$nm/$1/package.json').version" 2>/dev/null || true; }
if [ "$(version @modelcontextprotocol/server-everything)" != "$everything" ] ||
   [ "$(version supergateway)" != "$supergateway" ]; then
	npm install --prefix bench/upstream --no-save --no-audit --no-fund \
		"@modelcontextprotocol/server-everything@$everything" "supergateway@$supergateway" >/dev/null
fi

work=$(mktemp -d)
chmod 755 "$work"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
port() { echo $((20000 + RANDOM % 20000)); }
until_in() { # FILE TEXT: wait up to 30 s for TEXT in FILE
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench/upstream.sh: no \"$2\" in $1:" >&2
	cat "$1" >&2
	exit 1
}

# (a) direct: server-everything over Streamable HTTP, on 127.0.0.1 only
direct_port=$(port)
PORT=$direct_port node --import ./bench/upstream/loopback.mjs "$server" streamableHttp \
	>/dev/null 2>"$work/direct.err" &
pids+=($!)
until_in "$work/direct.err" "listening on port"

# (b) and (c): toolgate, the builtin echo of bench/mcp beside the upstream
mkdir -p "$work/cat-stdio/upstreams" "$work/cat-http/upstreams"
cp bench/mcp/catalog/echo.json "$work/cat-stdio/"
cp bench/mcp/catalog/echo.json "$work/cat-http/"
cat >"$work/cat-stdio/upstreams/everything.json" <<EOF
{ "transport": "stdio",
  "argv": ["/usr/bin/node", "/opt/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  "sandbox": { "tier": "strict", "mounts": [ { "host": "$nm", "inside": "/opt/mcp/node_modules" } ] },
  "tools": { "echo": { "authority": "read" } } }
EOF
cat >"$work/cat-http/upstreams/everything.json" <<EOF
{ "transport": "http", "url": "http://127.0.0.1:$direct_port/mcp",
  "tools": { "echo": { "authority": "read" } } }
EOF
for t in stdio http; do
	"$build/toolgate" serve --catalog "$work/cat-$t" --http 127.0.0.1:0 --record /dev/null \
		2>"$work/tg-$t.err" &
	pids+=($!)
	until_in "$work/tg-$t.err" "MCP on"
	eval "tg_${t}_port=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/tg-$t.err" | sed 's/.*://')"
done

# (d) supergateway: stdio -> Streamable HTTP, on 127.0.0.1 only
sgw_port=$(port)
node --import ./bench/upstream/loopback.mjs "$nm/supergateway/dist/index.js" \
	--stdio "/usr/bin/node $server stdio" --outputTransport streamableHttp --stateful \
	--port "$sgw_port" --healthEndpoint /healthz --logLevel none >/dev/null 2>"$work/sgw.err" &
pids+=($!)
for _ in $(seq 300); do
	curl -sf "http://127.0.0.1:$sgw_port/healthz" >/dev/null && break
	sleep 0.1
done

# Each contender: its port, the tool's name there, its arguments.
declare -A at=([direct]="$direct_port echo" [tg-stdio]="$tg_stdio_port everything.echo"
	       [tg-http]="$tg_http_port everything.echo" [sgw]="$sgw_port echo")
contenders="direct tg-stdio tg-http sgw"
args='{"message":"hello"}'
load() { # WHO CLIENTS SECONDS
	local port tool

	read -r port tool <<<"${at[$1]}"
	"$build/bench/mcp-load" "$port" "$2" "$3" call "$tool" "$args"
}
# Until every contender answers the call (the upstreams' first listing),
# and once more for a second: node's JIT, toolgate's first session.
for who in $contenders; do
	for _ in $(seq 100); do
		r=$(load "$who" 1 0.2 2>/dev/null)
		[ "$(jq '.errors == 0 and .requests > 0' <<<"$r")" = true ] && break
		sleep 0.3
	done
	load "$who" 1 1 >/dev/null
done

echo "bench/upstream: $(date -u +%FT%TZ), nproc $(nproc), Linux $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server-everything $everything, supergateway $supergateway, node $(node --version); $secs s a run, $rounds rounds"
for r in $(seq "$rounds"); do
	for c in 1 64; do
		for who in $contenders; do
			load "$who" "$c" "$secs" | jq -c --arg w "$who" '. + {who: $w}' >>"$work/runs"
			sleep 1 # supergateway ends its 64 servers after a run: not in the next one's
		done
	done
	for m in call ping; do # the builtin echo, default arguments
		"$build/bench/mcp-load" "$tg_stdio_port" 1 "$secs" "$m" | jq -c --arg w "tg-$m" \
			'. + {who: $w}' >>"$work/runs"
	done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# The medians of the rounds, and the ratios.
mkdir -p bench/results
cp "$work/runs" bench/results/upstream-runs.jsonl # every run, for a second look
jqm() { # the medians of the rounds: m(WHO; CLIENTS; KEY), e(WHO; CLIENTS) the errors
	jq -rs "$(cat <<'EOF'
def median: sort | if length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r1: . * 10 | round / 10;
def r2: . * 100 | round / 100;
def m($w; $c; $k): [.[] | select(.who == $w and .clients == $c) | .[$k]] | median;
def e($w; $c): [.[] | select(.who == $w and .clients == $c) | .errors] | add;
def row($name; $w; $c): [$name, (m($w; $c; "rps") | round), (m($w; $c; "p50_us") | r1),
	(m($w; $c; "p99_us") | r1), e($w; $c)] | @tsv;
EOF
)$1" "$work/runs"
}
jqm '
	(["contender, clients", "req/s", "p50 us", "p99 us", "errors"] | @tsv),
	((1, 64) as $c | ("direct", "tg-stdio", "tg-http", "sgw") as $w | row("\($w), \($c)"; $w; $c)),
	row("tg builtin echo, 1"; "tg-call"; 1), row("tg ping, 1"; "tg-ping"; 1)' | column -t -s $'\t'
jqm '
	(m("tg-call"; 1; "p50_us") - m("tg-ping"; 1; "p50_us")) as $pipe | m("direct"; 1; "p50_us") as $d |
	"the pipeline (builtin tools/call over ping), 1 client: p50 +\($pipe | r1) us",
	(("tg-stdio", "tg-http") as $w | m($w; 1; "p50_us") as $t |
	 "p50 \($w)/direct, 1 client: \($t / $d | r2)x (\($t | r1) against \($d | r1) us); " +
	 "1.1 x direct + the pipeline = \(1.1 * $d + $pipe | r1) us: " +
	 (if $t <= 1.1 * $d + $pipe then "met" else "not met, by \($t - 1.1 * $d - $pipe | r1) us" end)),
	(m("sgw"; 64; "rps") as $s | ("tg-stdio", "tg-http") as $w |
	 "throughput \($w)/sgw, 64 clients: \(m($w; 64; "rps") / $s | r2)x; 3x: " +
	 (if m($w; 64; "rps") >= 3 * $s then "met" else "not met" end))'
echo
echo "memory per idle upstream (server-everything over stdio, each in its sandbox):"
python3 bench/upstream/memory.py "$build/toolgate" "$nm" "$work" 0 1 8 | grep -v '^json '
