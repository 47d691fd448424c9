#!/bin/bash
# MCP interop: the official TypeScript SDK's client against `toolgate serve`.
# The SDK comes from the npm registry into tests/mcp/node_modules
# (git-ignored). Without node and npm, says so and skips.
# Usage: tests/mcp/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd -P)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "skip - mcp-interop: node and npm are not installed"
	exit 0
fi
if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
	(cd tests/mcp && npm install --no-save --no-audit --no-fund @modelcontextprotocol/sdk@1.32 >/dev/null 2>&1) || {
		echo "not ok - mcp-interop/install: npm install @modelcontextprotocol/sdk failed"
		exit 1
	}
fi
examples/make-db.sh
record=$(mktemp /tmp/tg-mcp-record.XXXXXX)
trap 'rm -f "$record"' EXIT
rc=0
for mode in stdio http; do
	: >"$record"
	timeout 120 node tests/mcp/client.mjs "$build/toolgate" "$PWD" "$record" "$mode" || rc=1
done
exit $rc
