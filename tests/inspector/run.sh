#!/bin/bash
# Interop: the MCP Inspector in CLI mode (npm @modelcontextprotocol/inspector,
# into tests/inspector/node_modules, git-ignored) against `toolgate
# serve` on the example catalogue, over stdio and Streamable HTTP.
# Usage: tests/inspector/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd -P)
here=$PWD/tests/inspector
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "skip - mcp-inspector: node and npm are not installed"
	exit 0
fi
if [ ! -x "$here/node_modules/.bin/mcp-inspector" ]; then
	mkdir -p "$here"
	(cd "$here" && npm install --no-save --no-audit --no-fund @modelcontextprotocol/inspector@2.12 >/dev/null 2>&1) || {
		echo "not ok - mcp-inspector/install: npm could not install the Inspector"
		exit 1
	}
fi
work=$(mktemp -d)
"$build/toolgate" serve --catalog "$PWD/examples/catalog" --workspace "$PWD/examples/workspace" \
	--http 127.0.0.1:0 --record /dev/null 2>"$work/serve.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do grep -q 'MCP on' "$work/serve.err" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*/mcp' "$work/serve.err")
examples/make-db.sh
failed=0
# inspect TRANSPORT NAME JQ-CHECK INSPECTOR-ARGS...
inspect() {
	local transport=$1 name=$2 check=$3
	shift 3
	if [ "$transport" = http ]; then
		set -- --transport http --server-url "$url" "$@"
	else
		set -- "$@" -- "$build/toolgate" serve --catalog "$PWD/examples/catalog" \
			--workspace "$PWD/examples/workspace" --record /dev/null
	fi
	# for tools/list, --strict: the Inspector's schema portability
	# warnings fail the check
	case " $* " in *" tools/list "*) set -- --strict "$@" ;; esac
	HOME=$work timeout 60 "$here/node_modules/.bin/mcp-inspector" --cli "$@" >"$work/out" 2>&1
	# the answer is the JSON document; the Inspector's own notes follow it
	if sed -n '1,/^}$/p' "$work/out" | jq -e "$check" >/dev/null 2>&1 &&
		! grep -q -E '^(Warning|Error): ' "$work/out"; then
		echo "ok - mcp-inspector/$transport/$name"
	else
		echo "not ok - mcp-inspector/$transport/$name: $(head -c 300 "$work/out")"
		failed=1
	fi
}
for t in stdio http; do
	inspect $t tools_list '[.tools[].name] | sort == ["fs.delete","fs.read","fs.search","fs.undo","fs.write","plan.run","plan.undo","python.run","sql.execute","sql.query","sql.undo"]' --method tools/list
	inspect $t tools_call '.structuredContent.content | test("def greet")' \
		--method tools/call --tool-name fs.read --tool-arg path=src/hello.py
	inspect $t resources_read '.contents[0].text | test("CREATE TABLE")' \
		--method resources/read --uri data://shop/schema.sql
	inspect $t prompts_get '.messages[1].content.text | test("who spent most")' \
		--method prompts/get --prompt-name ask_the_shop --prompt-args "question=who spent most"
done
exit $failed
