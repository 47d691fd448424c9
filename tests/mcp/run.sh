#!/bin/bash
# MCP interop: the official TypeScript SDK's clients against `toolgate serve`:
# the 1.x SDK (client.mjs) and the 2026-07-28 client package (client2026.mjs);
# then real upstream servers (server-everything, server-filesystem) behind it
# (upstreams.mjs), and a 2026-07-28 one built on the 2026 server package
# (server2026.mjs, upstreams2026.mjs); then the stock hosts of docs/HOSTS.md
# (hosts.mjs, with oidc-provider as the identity provider; hosts_config.mjs,
# the page's configurations as written); then skills served (skills.mjs). They come from the npm registry into tests/mcp/node_modules
# (git-ignored). Without node and npm, says so and skips.
# Usage: tests/mcp/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd -P)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "skip - mcp-interop: node and npm are not installed"
	exit 0
fi
tests/mcp/install.sh || {
	echo "not ok - mcp-interop/install: npm install of the SDK packages failed"
	exit 1
}
examples/make-db.sh
record=$(mktemp /tmp/tg-mcp-record.XXXXXX)
trap 'rm -f "$record"' EXIT
rc=0
for mode in stdio http; do
	: >"$record"
	timeout 120 node tests/mcp/client.mjs "$build/toolgate" "$PWD" "$record" "$mode" || rc=1
done
# the 2026-07-28 client package: the era probe, MRTR it fulfils itself,
# Mcp-Param headers it mirrors, a subscription
for mode in stdio http; do
	timeout 120 node tests/mcp/client2026.mjs "$build/toolgate" "$PWD" "$mode" || rc=1
done
# upstreams: server-everything (stdio in the sandbox, and Streamable HTTP on
# loopback) and server-filesystem with one bound directory, behind serve
# over stdio and over HTTP
timeout 120 node tests/mcp/upstreams.mjs "$build/toolgate" || rc=1
# both protocol eras on both sides: a 2026-07-28 upstream (server2026.mjs,
# stdio and HTTP) behind the 1.x client and the 2026 one, and a 2025-era
# upstream asking the 2026 client
timeout 120 node tests/mcp/upstreams2026.mjs "$build/toolgate" || rc=1
# stock hosts (docs/HOSTS.md): the SDK client with no _meta and its own
# OAuth flow against a real OpenID provider, over HTTPS from a network
# namespace, and over stdio; then every configuration block of the page
timeout 180 node tests/mcp/hosts.mjs "$build/toolgate" "$PWD" 2> >(grep -v '^oidc-provider ' >&2) || rc=1
timeout 120 node tests/mcp/hosts_config.mjs "$build/toolgate" "$PWD" || rc=1
# skills served: the trusted one listed and loaded, the refused ones never
# seen and counted (docs/SKILLS.md, "Serving")
timeout 120 node tests/mcp/skills.mjs "$build/toolgate" || rc=1
exit $rc
