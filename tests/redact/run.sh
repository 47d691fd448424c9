#!/bin/bash
# The redactor's accuracy on the generated corpora (tests/redact/corpus.py):
# recall on true secrets at least 95%, look-alikes flagged at most 1%, the
# figures per kind printed as comments. docs/REDACTION.md has the latest.
# Usage: tests/redact/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
if ! command -v python3 >/dev/null; then
	echo "skip - redact/accuracy: no python3"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/redact/accuracy.py "$build" "$work"
