#!/bin/bash
# The command line as docs/CLI.md states it: --help on every command and
# subcommand (usage on stdout, exit 0, nothing on stderr); a usage error
# on stderr naming the option, exit 2; --opt=value and options after the
# operands; one exit-status table (3 for a file, directory or log that is
# missing, not 125, run's sandbox code); and reading commands that never
# create state: a state directory that is not there is an error naming
# it, and none is made (nor a store in one that is there).
# Usage: tests/integration/cli.sh TOOLGATE REPO
# Prints "ok - integration/cli_NAME" or "not ok - integration/cli_NAME: why".
set -u
TG=$1
repo=$2
tmp=$(mktemp -d /tmp/tg-cli.XXXXXX) && tmp=$(cd "$tmp" && pwd -P)
trap 'rm -rf "$tmp"' EXIT
failures=0

check() { # NAME STATUS WHY
	if [ "$2" -eq 0 ]; then
		echo "ok - integration/cli_$1"
	else
		echo "not ok - integration/cli_$1: $3"
		failures=$((failures + 1))
	fi
}

# t NAME WANT-STATUS STDERR-PATTERN ARGS...: toolgate ARGS </dev/null exits
# WANT-STATUS, and its stderr holds the pattern (when not empty)
t() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$TG" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq "$want" ] && { [ -z "$pat" ] || grep -qF -- "$pat" "$tmp/err"; }
	check "$name" $? "toolgate $*: exit $rc, want $want; stderr: $(head -c 300 "$tmp/err")"
}

# --- reading commands make no state ------------------------------------------------
typo=$tmp/TYPO
for cmd in "approvals list" "approvals show ID" "rollback list" "audit verify" "audit tail" \
	"audit query" "token verify TOKEN --policy $tmp/p.json" "anomalies fs.read - --catalog $repo/examples/catalog"; do
	name=$(echo "$cmd" | cut -d' ' -f1-2 | tr ' ' _)
	# shellcheck disable=SC2086 # the words of cmd are its arguments
	t "missing_state_${name}_is_an_error" 3 "--state $typo: no such state directory" $cmd --state "$typo"
	[ ! -e "$typo" ]
	check "missing_state_${name}_not_made" $? "$cmd made $typo: $(ls -la "$typo" 2>&1 | head -3)"
	rm -rf "$typo" # each on its own
done

# a gateway's state directory without a store (no --policy): nothing to list, no
# store made by looking
"$TG" serve --catalog "$repo/examples/catalog" --workspace "$repo/examples/workspace" --state "$tmp/st" </dev/null 2>"$tmp/err"
check serve_made_state $? "$(cat "$tmp/err")"
t approvals_list_before_a_store 0 "" approvals list --state "$tmp/st"
grep -qx '0 tickets' "$tmp/out"
check approvals_list_says_none $? "$(cat "$tmp/out")"
t rollback_list_before_a_store 0 "" rollback list --state "$tmp/st"
t approvals_show_before_a_store 1 "no such ticket" approvals show 0123 --state "$tmp/st"
[ ! -e "$tmp/st/toolgate.db" ]
check no_store_made_by_reading $? "$(ls "$tmp/st")"

# --- the exit-status table -----------------------------------------------------------
t audit_tail_missing_log 3 "$tmp/none.log" audit tail "$tmp/none.log"
t audit_verify_missing_log 3 "$tmp/none.log" audit verify "$tmp/none.log"
t audit_query_missing_log 3 "$tmp/none.log" audit query "$tmp/none.log"
t serve_missing_catalogue 3 "$tmp/none" serve --catalog "$tmp/none" --audit "$tmp/serve.log"
t catalog_list_missing 3 "$tmp/none" catalog list "$tmp/none"
t policy_lint_missing 3 "$tmp/none" policy lint "$tmp/none"
t redact_missing_file 3 "$tmp/none" redact "$tmp/none"
t schema_missing_file 3 "$tmp/none" schema validate "$tmp/none" "$tmp/none"
t audit_verify_holds 0 "" audit verify "$tmp/st/audit.log"

# --- upstreams in a catalogue (docs/UPSTREAMS.md): listed, linted, refused -------------
mkdir -p "$tmp/upcat/upstreams"
printf '{"transport":"http","url":"https://h.test/mcp","tools":{"echo":{"authority":"read"}}}' \
	>"$tmp/upcat/upstreams/everything.json"
"$TG" catalog list "$tmp/upcat" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && grep -Eq '^everything +http +1 +strict$' "$tmp/out"
check catalog_list_upstream $? "$(cat "$tmp/out" "$tmp/err")"
"$TG" catalog lint "$tmp/upcat" >"$tmp/out" 2>&1
[ $? -eq 0 ] && grep -qx '0 contracts, 1 upstream, 0 problems' "$tmp/out"
check catalog_lint_upstream_clean $? "$(cat "$tmp/out")"
printf '{"transport":"stdio","argv":["x"],"sandbox":{"egress":["h.test"]}}' \
	>"$tmp/upcat/upstreams/bad.json"
"$TG" catalog lint "$tmp/upcat" >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -qF "upstream $tmp/upcat/upstreams/bad.json: sandbox.egress[0]: " "$tmp/out"
check catalog_lint_upstream_refused $? "$(cat "$tmp/out")"
t catalog_list_upstream_refused 3 "upstreams/bad.json: sandbox.egress[0]" catalog list "$tmp/upcat"

# --- usage errors: exit 2, the option named ------------------------------------------
t usage_unknown_option_approvals 2 "'--bogus'" approvals list --bogus --state "$tmp/st"
t usage_unknown_option_rollback 2 "'--bogus'" rollback list --state "$tmp/st" --bogus
t usage_unknown_option_audit 2 "'--bogus'" audit tail --bogus "$tmp/st/audit.log"
t usage_unknown_short_option_audit 2 "'-x'" audit tail -x "$tmp/st/audit.log"
t usage_unknown_option_token 2 "'--bogus'" token issue --bogus
t usage_unknown_option_serve 2 "'--bogus'" serve --catalog "$tmp/none" --bogus
t usage_unknown_option_redact 2 "'--bogus'" redact --bogus
t usage_unknown_option_anomalies 2 "'--bogus'" anomalies fs.read --bogus
t usage_unknown_option_doctor 2 "'--bogus'" doctor --bogus
t usage_unknown_option_policy 2 "'--bogus'" policy lint --bogus x
t usage_unknown_option_catalog 2 "'--bogus'" catalog list --bogus x
t usage_unknown_option_schema 2 "'--bogus'" schema validate --bogus a b
t usage_missing_value 2 "--catalog needs a value" serve --catalog
t usage_bad_count 2 "--warm '99'" serve --catalog "$tmp/none" --warm=99
t usage_bad_choice 2 "--anomalies 'maybe'" serve --catalog "$tmp/none" --anomalies maybe
t usage_bad_http 2 "--http 'localhost'" serve --catalog "$tmp/none" --http localhost
t usage_bad_lines 2 "-n '0'" audit tail -n 0 "$tmp/st/audit.log"
t usage_flag_with_value 2 "'--json=yes'" doctor --json=yes
t usage_unknown_subcommand 2 "'lsit'" approvals lsit --state "$tmp/st"
t usage_unknown_command 2 "'bogus'" bogus
t usage_no_state 2 "--state DIR" approvals list
[ ! -s "$tmp/out" ]
check usage_not_on_stdout $? "$(head -c 300 "$tmp/out")"

# --- --opt=value, options after operands ---------------------------------------------
t equals_form 0 "" approvals list --all --state="$tmp/st"
t options_after_operand 0 "" audit tail "$tmp/st/audit.log" -n 1
[ "$(wc -l <"$tmp/out")" -eq 1 ]
check tail_n_after_operand $? "$(cat "$tmp/out")"
t options_before_verb_operand 0 "" audit query --kind=event --state "$tmp/st"

# --- --help on every command and subcommand ------------------------------------------
while read -r args; do
	# shellcheck disable=SC2086 # the words of args are the arguments
	"$TG" $args --help </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 0 ] && head -1 "$tmp/out" | grep -q '^usage: toolgate' && [ ! -s "$tmp/err" ]
	ok=$?
	check "help_$(echo "${args:-toolgate}" | tr ' ' _)" $ok \
		"toolgate $args --help: exit $rc; stdout: $(head -c 100 "$tmp/out"); stderr: $(head -c 200 "$tmp/err")"
done <<'LIST'

run
doctor
schema
schema validate
schema test
catalog
catalog list
catalog show
catalog lint
catalog diff
serve
token
token issue
token verify
token revoke
policy
policy lint
approvals
approvals list
approvals show
approvals approve
approvals reject
approvals cancel
rollback
rollback list
audit
audit verify
audit tail
audit query
redact
anomalies
LIST

echo "ok - integration/cli_ran_to_the_end"
[ "$failures" -eq 0 ]
