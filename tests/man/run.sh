#!/bin/sh
# The man pages against the code (tests/man/options.py): each command's
# page documents exactly the long options its --help and its verbs' print,
# those are the options its source accepts, and man(1) reads every page
# without a warning. Usage: tests/man/run.sh BUILD-DIR
cd "$(dirname "$0")/../.." || exit 1
exec python3 tests/man/options.py "${1:-build}"
