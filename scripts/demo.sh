#!/bin/bash
# make demo: a short tour. The gateway first: an MCP client drives `toolgate
# serve` on the example catalogue (examples/). Then `toolgate run`, the
# sandbox those tools run in: an ordinary command, and a few of the attacks
# from tests/security/, each with what toolgate did.
set -u
failed=""
cd "$(dirname "$0")/.."
build=${1:-build}
TG="$build/toolgate"
bold=$(tput bold 2>/dev/null || true) off=$(tput sgr0 2>/dev/null || true)

step() { printf '\n%s== %s%s\n' "$bold" "$1" "$off"; }
show() { # run a command in the sandbox and summarise the JSON result
	printf '$ toolgate run %s\n' "$*"
	"$TG" run --json "$@" | jq -r --arg attack "${ATTACK:-}" '"  reason: \(.reason)   exit: \(.exit_code // "-")   signal: \(.signal // "-")" +
		(if .seccomp_syscall then "   syscall: \(.seccomp_syscall)" else "" end) +
		"   wall: \(.wall_ms) ms   peak memory: \(.peak_memory / 1048576 | floor) MiB",
		(.stdout | split("\n")[:3][] | select(length > 0) | "  stdout| " + .),
		(.stderr | split("\n") | map(select(length > 0)) | .[-2:][] | "  stderr| " + .),
		(if $attack == "" then empty
		 elif .reason != "ok" or .exit_code != 0 then "  => blocked"
		 else "  => NOT BLOCKED" end)'
}
attack() { ATTACK=1 show "$@"; }

step "What this host guarantees"
"$TG" doctor

# The write path on a copy of the examples (the data and workspace owned
# by the sandbox's host user, nobody): a policy where agent-1 may write
# with sql.execute and alice may approve it, and alice's token. A held
# call is answered at once (writes.wait 0): alice decides between the
# agent's calls, as the demo shows step by step.
write_demo() {
	local dir tg
	dir=$(mktemp -d /tmp/toolgate-demo.XXXXXX)
	tg="$(cd "$build" && pwd -P)/toolgate"
	cp -r examples/catalog examples/workspace "$dir/"
	mkdir "$dir/data" && cp examples/data/shop.db "$dir/data/"
	chown -R 65534:65534 "$dir/data" "$dir/workspace"
	cat >"$dir/policy.json" <<'JSON'
{"principals": {"agent-1": {"scopes": ["sql.*:read", "sql.execute:write"]},
                "alice": {"scopes": ["sql.*:approve"]}},
 "writes": {"wait": "0"}}
JSON
	"$tg" token issue --state "$dir/state" --policy "$dir/policy.json" --principal alice \
		--scope 'sql.*:approve' >"$dir/alice.token" &&
	"$tg" token issue --state "$dir/state" --policy "$dir/policy.json" --principal agent-1 \
		--scope 'sql.execute:write' >"$dir/agent.token" &&
		node tests/mcp/demo-writes.mjs "$tg" "$dir"
	local rc=$?
	rm -rf "$dir"
	return $rc
}

# The gateway: an MCP client (the official TypeScript SDK, from npm into
# tests/mcp/node_modules) connects to `toolgate serve` on the example
# catalogue and calls its tools; every message is printed.
if command -v node >/dev/null && command -v npm >/dev/null; then
	if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
		(cd tests/mcp && npm install --no-save --no-audit --no-fund @modelcontextprotocol/sdk@1.32 >/dev/null 2>&1) ||
			echo "(npm could not install the MCP SDK: the gateway part is skipped)"
	fi
	if [ -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
		examples/make-db.sh
		node tests/mcp/demo.mjs "$(cd "$build" && pwd -P)/toolgate" "$PWD" ||
			failed="$failed the-gateway"
		printf '\n%sWrite calls: approval, one run, rollback%s\n' "$bold" "$off"
		write_demo || failed="$failed write-calls"
	fi
else
	echo "(node and npm are not installed: the gateway part is skipped)"
fi

printf '\n%sThe sandbox every command tool runs in, under attack%s\n' "$bold" "$off"

step "An ordinary command"
show -- python3 -c 'import os, platform; print("hello from", platform.node(), "as uid", os.getuid()); print("cwd", os.getcwd())'

step "The layers applied to that run"
"$TG" run --json -- true | jq -r '.layers | join(", ")' | fold -s -w 76 | sed 's/^/  /'

secret=$(mktemp /tmp/toolgate-demo-secret.XXXXXX)
echo "AWS_SECRET_ACCESS_KEY=demo" >"$secret"
trap 'rm -f "$secret"' EXIT

step "Attack: read a secret file of the host"
attack -- cat "$secret"

step "Attack: reach the cloud metadata service"
attack -- python3 -c 'import socket; socket.create_connection(("169.254.169.254", 80), timeout=2); print("connected")'

step "Attack: own the host through kernel.core_pattern"
attack -- sh -c 'echo "|/tmp/pwn" > /proc/sys/kernel/core_pattern'

step "Attack: a nested user namespace (the first step of many kernel exploits)"
attack -- unshare -U -r id

step "Attack: fork bomb"
attack --pids 32 --timeout 3s -- sh -c 'bomb() { bomb | bomb & }; bomb; sleep 2'

step "Attack: memory balloon"
attack --memory 128M -- python3 -c 'x = bytearray(1 << 30); print("allocated 1 GiB")'

step "Attack: run forever"
attack --timeout 1s -- sh -c 'while :; do :; done'

step "Attack: flood the caller with output"
attack --output-limit 64K -- sh -c 'yes flood'

left=$(find /sys/fs/cgroup -maxdepth 3 -type d -name 'run-*' 2>/dev/null | wc -l)
printf '\nLeft behind by all these runs: %s cgroups, %s sandbox processes.\n' "$left" \
	"$(pgrep -c -f 'flood|bomb|bytearray' 2>/dev/null || true)"
# a part that broke is said, and make demo fails: a demo that goes wrong
# quietly is how its breakage goes unseen
if [ -n "$failed" ]; then
	printf '\nThe demo went wrong in:%s (see above)\n' "$failed" >&2
	exit 1
fi
