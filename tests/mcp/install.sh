#!/bin/bash
# The npm packages of the MCP interop tests (tests/mcp/run.sh) and of the
# console's sign-in test (tests/console), into tests/mcp/node_modules
# (git-ignored), when missing. Usage: tests/mcp/install.sh
set -u
cd "$(dirname "$0")/../.."
# the 1.x SDK (a 2025-era client), the 2.x client and server packages (the
# 2026-07-28 era; the server is server2026.mjs's) and the two reference
# servers, pinned, in one install: npm drops what another --no-save install
# put there
mcp=tests/mcp/node_modules/@modelcontextprotocol
if [ ! -d $mcp/sdk ] || [ ! -d $mcp/client ] || [ ! -d $mcp/server ] ||
	[ ! -d $mcp/server-everything ] || [ ! -d $mcp/server-filesystem ] ||
	[ ! -d tests/mcp/node_modules/oidc-provider ]; then
	(cd tests/mcp && npm install --no-save --no-audit --no-fund @modelcontextprotocol/sdk@1.32 \
		@modelcontextprotocol/client@2.4.0 @modelcontextprotocol/server@2.4.0 \
		@modelcontextprotocol/server-everything@2026.8.31 \
		@modelcontextprotocol/server-filesystem@2026.8.31 oidc-provider@9.13.3 >/dev/null 2>&1) ||
		exit 1
fi
