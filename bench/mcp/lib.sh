# Sourced by bench/mcp.sh, bench/mcp-wrk.sh and bench/mcp-sandbox.sh, from
# the repository's top, with $bench set to the script's name: the
# TypeScript SDK for their peers (npm, into tests/mcp/node_modules,
# git-ignored), a work directory and the servers' pids, both cleaned up at
# exit, and the waits for a server to listen.
if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
	(cd tests/mcp && npm install --no-save --no-audit --no-fund @modelcontextprotocol/sdk@1.32 >/dev/null)
fi
ln -sfn ../../tests/mcp/node_modules bench/mcp/node_modules # the SDK, for the peers
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

started() { # LOG WORDS: until the server's log says WORDS (10 s at most)
	for _ in $(seq 100); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	echo "$bench: a server did not start: $(cat "$1")" >&2
	exit 1
}

log_port() { # LOG: the loopback port a toolgate serve's log names
	grep -o 'http://127.0.0.1:[0-9]*' "$1" | head -1 | sed 's/.*://'
}
