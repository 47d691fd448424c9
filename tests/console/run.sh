#!/bin/bash
# The approval console in a real browser (docs/CONSOLE.md): Debian's
# chromium, headless, driven by puppeteer-core, with axe-core checking
# accessibility; both from the npm registry into tests/console/node_modules
# (git-ignored). Then the sign-in at a real OpenID provider (signin.mjs,
# oidc-provider from tests/mcp/node_modules). Without node, npm or
# chromium, says so and skips.
# Usage: tests/console/run.sh BUILD-DIR [SCREENSHOT-DIR]
set -u
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd -P)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "skip - console: node and npm are not installed"
	exit 0
fi
if [ ! -x /usr/bin/chromium ]; then
	echo "skip - console: /usr/bin/chromium is not installed (apt-get install chromium)"
	exit 0
fi
if [ ! -d tests/console/node_modules/puppeteer-core ] || [ ! -d tests/console/node_modules/axe-core ]; then
	(cd tests/console && npm install --no-save --no-audit --no-fund puppeteer-core@24.43.1 \
		axe-core@4.10.3 >/dev/null 2>&1) || {
		echo "not ok - console/install: npm install of puppeteer-core and axe-core failed"
		exit 1
	}
fi
examples/make-db.sh
rc=0
timeout 180 node tests/console/console.mjs "$build/toolgate" "$PWD" ${2:+"$2"} || rc=1
# signing in at a real OpenID provider (oidc-provider, tests/mcp's packages)
if tests/mcp/install.sh; then
	# the provider's own notices (it is a development setup) are not ours
	timeout 120 node tests/console/signin.mjs "$build/toolgate" "$PWD" 2>&1 | grep -v '^oidc-provider '
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
else
	echo "not ok - console-signin/install: npm install of tests/mcp's packages failed"
	rc=1
fi
exit $rc
