#!/bin/bash
# toolgate egress suite: the allowlist proxy, end to end.
#
#   tests/egress/run.sh BUILD_DIR
#
# Everything runs in two network namespaces made here and joined by a veth
# pair, and nowhere else: no packet can leave the machine. toolgate runs in
# the first (192.0.2.1, its only route the other end); the decoys live in
# the second, on its loopback (tests/egress/decoys.py): the allowed
# service, a public service no rule names, the cloud metadata address, a
# private address, and a DNS server for the test's names; a service of
# the gateway's own host listens in the first, for no name to reach (a
# name whose AAAA answer is its address IPv4-mapped). toolgate runs
# with its own
# /etc/resolv.conf and /etc/hosts (a private mount namespace), so the proxy
# resolves through that DNS server like any gateway would, DNS rebinding
# included. Each check runs a real client (curl, or Python for raw
# requests and SOCKS) in the sandbox, and the decoys count what reached
# them: a decoy no rule allows must never be hit.
#
# Prints "ok - egress/NAME", "not ok - egress/NAME: WHY" or
# "skip - egress/NAME: WHY"; exit status 0 iff no "not ok". Needs root.

set -u
export LC_ALL=C

die() { echo "not ok - egress/setup: $*"; exit 1; }

[ $# -ge 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" 2>/dev/null && pwd -P) || die "no build dir $1"
REPO=$(cd "$(dirname "$0")/../.." && pwd -P)
TG=$BUILD/toolgate
[ -x "$TG" ] || die "$TG not built"
if [ "$(id -u)" != 0 ]; then
	echo "skip - egress/all: needs root (network namespaces)"
	exit 0
fi
for c in jq ip nsenter unshare curl python3 timeout; do
	command -v "$c" >/dev/null || die "missing tool: $c"
done

T=$(mktemp -d /tmp/tgegress.XXXXXX) && T=$(cd "$T" && pwd -P) || die "mktemp"
chmod 755 "$T"
NS=tgegress-$$
NSD=tgdecoys-$$
NSPATH=/run/netns/$NS
DECOYS=
GWDECOY=
FAILS=0

cleanup() {
	[ -n "$DECOYS" ] && kill -9 "$DECOYS" 2>/dev/null
	[ -n "$GWDECOY" ] && kill -9 "$GWDECOY" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip netns del "$NSD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok - egress/$1"; }
fail() {
	echo "not ok - egress/$1: $2"
	FAILS=$((FAILS + 1))
}
check() { # NAME WHY CONDITION...: ok when the condition holds
	local name=$1 why=$2
	shift 2
	if "$@"; then ok "$name"; else fail "$name" "$why"; fi
}

# ---- the namespace and its decoys --------------------------------------------

ip netns add "$NS" || die "ip netns add $NS"
ip netns add "$NSD" || die "ip netns add $NSD"
ip link add veth-gw netns "$NS" type veth peer name veth-decoys netns "$NSD" || die "veth"
ip -n "$NS" addr add 192.0.2.1/24 dev veth-gw || die "addr 192.0.2.1"
ip -n "$NSD" addr add 192.0.2.2/24 dev veth-decoys || die "addr 192.0.2.2"
for n in "$NS" "$NSD"; do
	ip -n "$n" link set lo up || die "lo up"
done
ip -n "$NS" link set veth-gw up && ip -n "$NSD" link set veth-decoys up || die "veth up"
ip -n "$NS" route add default via 192.0.2.2 || die "route"
# an IPv6 address too, so that the gateway's resolver asks for AAAA answers
ip -n "$NS" addr add 2001:db8:2::1/64 dev veth-gw nodad || die "addr 2001:db8:2::1"
for a in 203.0.113.10 203.0.113.20 203.0.113.53 169.254.169.254 10.255.0.9; do
	ip -n "$NSD" addr add "$a/32" dev lo || die "addr $a"
done
echo "nameserver 203.0.113.53" >"$T/resolv.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$T/hosts"
cat >"$T/in-ns" <<EOF
#!/bin/sh
# in-ns CMD...: CMD with the test's resolv.conf and hosts (a private
# mount namespace, entered by the caller)
mount --bind "$T/resolv.conf" /etc/resolv.conf || exit 3
mount --bind "$T/hosts" /etc/hosts || exit 3
exec "\$@"
EOF
chmod 755 "$T/in-ns"
IN=(nsenter "--net=$NSPATH" unshare -m --propagation private "$T/in-ns")

DECOYS=$( { nsenter "--net=/run/netns/$NSD" python3 -u "$REPO/tests/egress/decoys.py" \
	>"$T/decoys.log" 2>&1 </dev/null & echo $!; } )
for _ in $(seq 100); do
	grep -q READY "$T/decoys.log" 2>/dev/null && break
	sleep 0.1
done
grep -q READY "$T/decoys.log" || die "the decoys did not start: $(cat "$T/decoys.log")"
# a service of the gateway's own host, which no name may lead to
GWDECOY=$( { nsenter "--net=$NSPATH" python3 -u "$REPO/tests/egress/decoys.py" gateway \
	>>"$T/decoys.log" 2>&1 </dev/null & echo $!; } )
for _ in $(seq 100); do
	grep -q "READY gateway" "$T/decoys.log" 2>/dev/null && break
	sleep 0.1
done
grep -q "READY gateway" "$T/decoys.log" || die "the gateway's decoy did not start: $(cat "$T/decoys.log")"
hits() { grep -c "^HIT $1 " "$T/decoys.log"; }

# The sandbox runs as host uid 65534: what it reads from $T must be readable.
cp "$REPO/tests/egress/client.py" "$T/client.py" && chmod 644 "$T/client.py"

# tg OUT ERR ARGS...: toolgate run in the namespace; its status
tg() {
	local out=$1 err=$2
	shift 2
	timeout 60 "${IN[@]}" "$TG" run --ro "$T/client.py:/client.py" "$@" >"$out" 2>"$err"
}

# ---- through the proxy: what the rules allow -----------------------------------

tg "$T/o" "$T/e" --allow-host api.test:80 -- curl -sS http://api.test/hello
check allowed_name_http "$(cat "$T/o" "$T/e")" grep -q "service api /hello host=api.test" "$T/o"

tg "$T/o" "$T/e" --allow-host api.test:80 -- curl -sS -p http://api.test/tunnel
check allowed_name_connect "$(cat "$T/o" "$T/e")" grep -q "service api /tunnel" "$T/o"

# SOCKS5 with the name resolved by the proxy, for a protocol that is not HTTP
tg "$T/o" "$T/e" --allow-host api.test:5432 -- python3 /client.py socks api.test 5432 hello
check socks_not_http "$(cat "$T/o" "$T/e")" grep -q "^db: hello" "$T/o"

# an address a rule names literally is allowed, private as it is
tg "$T/o" "$T/e" --allow-host 10.255.0.9:80 -- curl -sS http://10.255.0.9/literal
check literal_rule_private "$(cat "$T/o" "$T/e")" grep -q "service intranet /literal" "$T/o"

# every proxy variable names the listener; the layers say so
tg "$T/o" "$T/e" --json --allow-host api.test:80 -- sh -c 'env | sort'
check proxy_environment "$(cat "$T/o")" \
	sh -c "jq -r .stdout '$T/o' | grep -qx 'http_proxy=http://127.0.0.1:3128' &&
	       jq -r .stdout '$T/o' | grep -qx 'HTTPS_PROXY=http://127.0.0.1:3128' &&
	       jq -r .stdout '$T/o' | grep -qx 'ALL_PROXY=socks5h://127.0.0.1:3128' &&
	       jq -e '.layers | index(\"egress_proxy\")' '$T/o' >/dev/null"

# ---- what they do not -----------------------------------------------------------

before=$(hits api)
tg "$T/o" "$T/e" --allow-host api.test:80 -- curl -sS -w '\nstatus %{http_code}\n' http://api.test:5432/
check unlisted_port "$(cat "$T/o" "$T/e")" sh -c "grep -qx 'status 403' '$T/o' &&
	grep -q 'other ports' '$T/o' && grep -q 'egress denied: api.test:5432' '$T/e' &&
	[ $(hits db) -eq 1 ] && [ $(hits api) -eq $before ]"

tg "$T/o" "$T/e" --allow-host api.test:80 -- curl -sS http://other.test/
check unlisted_host "$(cat "$T/o" "$T/e")" sh -c "grep -q 'no rule names this host' '$T/o' &&
	[ $(hits other) -eq 0 ]"

# the metadata address in every spelling, sent as written (Python: curl
# would normalise some of them first)
tg "$T/o" "$T/e" --allow-host api.test:80 -- python3 /client.py spellings \
	169.254.169.254 2852039166 0xa9fea9fe 0251.0376.0251.0376 0xa9.0xfe.43518 \
	169.254.43518 '[::ffff:169.254.169.254]' '[::ffff:a9fe:a9fe]' '[64:ff9b::a9fe:a9fe]' \
	'[fd00:ec2::254]' 10.255.0.9 0x0a.0xff.0.9 '[::ffff:10.255.0.9]' 127.0.0.1 '[::1]'
check metadata_spellings "$(cat "$T/o" "$T/e")" sh -c "[ \$(grep -c ' 403$' '$T/o') -eq 15 ] &&
	[ $(hits metadata) -eq 0 ] && [ $(hits intranet) -eq 1 ]"

# a listed name that leads into a deny range: refused when resolved
tg "$T/o" "$T/e" --allow-host meta.test:80 --allow-host multi.test:80 -- \
	sh -c 'curl -sS http://meta.test/; curl -sS http://multi.test/'
check listed_name_denied_address "$(cat "$T/o" "$T/e")" sh -c "
	grep -q 'meta.test resolves to 169.254.169.254, in a denied range: link-local' '$T/o' &&
	grep -q 'multi.test resolves to 10.255.0.9' '$T/o' && [ $(hits metadata) -eq 0 ] &&
	[ $(hits intranet) -eq 1 ]"

# DNS rebinding: the name answers api and metadata in turn, TTL 0; each
# request is either served by api or refused, never sent to the metadata
tg "$T/o" "$T/e" --allow-host rebind.test:80 -- \
	sh -c 'for i in 1 2 3 4 5 6 7 8; do curl -sS http://rebind.test/r$i; echo; done'
check dns_rebinding "$(cat "$T/o" "$T/e")" sh -c "
	[ \$(grep -c '^service api /r' '$T/o') -ge 2 ] &&
	[ \$(grep -c 'resolves to 169.254.169.254' '$T/o') -ge 2 ] &&
	[ \$(grep -c -e '^service api' -e 'resolves to 169.254' '$T/o') -eq 8 ] &&
	[ $(hits metadata) -eq 0 ]"

# a redirect from the allowed service to the metadata address
tg "$T/o" "$T/e" --allow-host api.test:80 -- curl -sSL http://api.test/redirect
check redirect_to_denied "$(cat "$T/o" "$T/e")" sh -c "grep -q 'no rule names this address' '$T/o' &&
	[ $(hits metadata) -eq 0 ] && grep -q 'egress denied: 169.254.169.254:80' '$T/e'"

tg "$T/o" "$T/e" --allow-host crowd.test:80 -- curl -sS http://crowd.test/
check many_addresses "$(cat "$T/o" "$T/e")" grep -q 'resolves to more than 16 addresses' "$T/o"

# a name that leads back to the gateway's own host (its public address)
tg "$T/o" "$T/e" --allow-host self.test:80 -- curl -sS http://self.test/
check gateway_own_address "$(cat "$T/o" "$T/e")" grep -q "resolves to 192.0.2.1, in a denied range: this host's own address" "$T/o"

# the same address as a DNS server may answer it, IPv4-mapped in an AAAA
# record: normalised to 192.0.2.1 before it is judged, never connected to
# through a dual-stack socket
tg "$T/o" "$T/e" --allow-host self6.test:80 -- curl -sS http://self6.test/
check gateway_own_address_mapped "$(cat "$T/o" "$T/e")" sh -c "
	grep -q 'self6.test resolves to 192.0.2.1, in a denied range: this host.s own address' '$T/o' &&
	[ $(hits gateway) -eq 0 ]"

# ---- no way around the proxy ------------------------------------------------------

tg "$T/o" "$T/e" --json --allow-host api.test:80 -- python3 /client.py bypass
check no_bypass "$(cat "$T/o")" sh -c "jq -r .stdout '$T/o' | grep -q '^direct 203.0.113.10:80 refused' &&
	jq -r .stdout '$T/o' | grep -q '^loopback 127.0.0.1:22 refused' &&
	jq -r .stdout '$T/o' | grep -q '^bind 127.0.0.1:8080 refused' &&
	jq -r .stdout '$T/o' | grep -q '^udp 203.0.113.53:53 refused'"
if jq -e '.layers | index("landlock_net")' "$T/o" >/dev/null; then
	check landlock_tcp_rules "$(cat "$T/o")" sh -c "jq -r .stdout '$T/o' |
		grep -q 'loopback 127.0.0.1:22 refused: .*Permission denied'"
else
	echo "skip - egress/landlock_tcp_rules: landlock ABI 4 is not available here"
fi

tg "$T/o" "$T/e" --tier standard -- sh -c 'env | grep -i proxy; curl -sS --max-time 5 http://203.0.113.10/'
check no_allowlist_no_network "$(cat "$T/o" "$T/e")" sh -c "! grep -qi proxy '$T/o' &&
	! grep -q service '$T/o'"

tg "$T/o" "$T/e" --tier strict --allow-host api.test:80 -- true
rc=$?
check strict_tier_refused "$(cat "$T/e")" sh -c "[ $rc -eq 125 ] && grep -q 'strict tier has no network' '$T/e'"

# ---- bad input: refused, and the proxy serves the others ---------------------------

tg "$T/o" "$T/e" --allow-host api.test:80 -- python3 /client.py hostile &
hostile=$!
sleep 0.3
tg "$T/o2" "$T/e2" --allow-host api.test:80 -- curl -sS http://api.test/meanwhile
wait $hostile
check hostile_clients "$(cat "$T/o" "$T/e")" sh -c "grep -qx 'flood 431' '$T/o' &&
	grep -qx 'garbage 400' '$T/o' && grep -qx 'slow 408' '$T/o' && grep -qx 'nul 400' '$T/o' &&
	grep -qx 'socks-bind 7' '$T/o'"
check serves_others "$(cat "$T/o2" "$T/e2")" grep -q "service api /meanwhile" "$T/o2"

# ---- through the gateway: a tool's allowlist, and its refusals recorded ----------

mkdir -p "$T/cat/tools"
cp "$T/client.py" "$T/cat/tools/client.py"
cat >"$T/cat/web.fetch-1.0.0.json" <<'EOF'
{
  "name": "web.fetch", "version": "1.0.0", "title": "Fetch a URL of the api service",
  "description": "GET a URL through the egress proxy.",
  "owner": { "team": "qa", "contact": "qa@example.test" },
  "authority": "read", "risk": "low", "idempotent": true,
  "input_schema": { "type": "object", "properties": { "url": { "type": "string" } },
                    "required": ["url"], "additionalProperties": false },
  "executor": { "kind": "command", "argv": ["python3", "/tools/client.py", "tool"],
                "tier": "standard", "egress": ["api.test:80"],
                "mounts": [ { "host": "tools", "inside": "/tools" } ] }
}
EOF
echo '{"principals": {"agent7": {"scopes": ["*:read"]}}}' >"$T/policy.json"
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"web.fetch","arguments":{"url":"%s"}}}' "$1" "$2"; }
# the metadata address is an anomaly the gateway would hold for review
# (docs/ANOMALIES.md); with --anomalies warn the call runs, recorded as
# one, and the proxy's own refusal is what is tested here
{ echo "$init"; call 1 http://api.test/from-tool; echo; call 2 http://169.254.169.254/latest/; echo; } |
	timeout 60 "${IN[@]}" "$TG" serve --catalog "$T/cat" --state "$T/state" --policy "$T/policy.json" \
		--principal agent7 --record "$T/record" --anomalies warn >"$T/serve.out" 2>"$T/serve.err"
check gateway_allowed "$(cat "$T/serve.out" "$T/serve.err")" sh -c "
	jq -r 'select(.id == 1) | .result.content[0].text' '$T/serve.out' | grep -q 'service api /from-tool'"
check gateway_denial_recorded "$(cat "$T/record" "$T/serve.out")" sh -c "
	jq -r 'select(.id == 2) | .result.content[0].text' '$T/serve.out' | grep -q '403' &&
	jq -s -e 'map(select(.outcome == \"egress_denied\" and .principal == \"agent7\" and
	       .subject == \"web.fetch@1.0.0\" and (.error // \"\" | startswith(\"169.254.169.254:80: \"))))
	       | length == 1' '$T/record' >/dev/null && [ $(hits metadata) -eq 0 ] &&
	jq -s -e 'map(select(.kind == \"call\" and .anomaly_action == \"warn\" and
	       .anomalies[0].rule == \"address\")) | length == 1' '$T/record' >/dev/null"

# a refusal does not hold up its run: the run's supervision thread, which
# hands the sandbox's connections to the proxy and keeps its deadline,
# queues the record of those it refuses (49 of 65 here: 16 a run) and goes
# on while the audit log is held (its writer locked out for 9 s); the run
# ends at its 4 s deadline
mkdir -p "$T/cat4/tools"
cp "$T/client.py" "$T/cat4/tools/client.py"
cat >"$T/cat4/conns.hold-1.0.0.json" <<'EOF'
{
  "name": "conns.hold", "version": "1.0.0", "title": "Hold connections to the egress proxy",
  "description": "Open connections to the egress proxy and hold them.",
  "owner": { "team": "qa", "contact": "qa@example.test" },
  "authority": "read", "risk": "low", "idempotent": true,
  "input_schema": { "type": "object", "additionalProperties": false },
  "executor": { "kind": "command", "argv": ["python3", "/tools/client.py", "hold", "65"],
                "tier": "standard", "egress": ["api.test:80"], "limits": { "timeout": "4s" },
                "mounts": [ { "host": "tools", "inside": "/tools" } ] }
}
EOF
timeout 90 python3 "$REPO/tests/egress/held_log.py" "$T/record4" 9 -- "${IN[@]}" "$TG" serve \
	--catalog "$T/cat4" --state "$T/state4" --policy "$T/policy.json" --principal agent7 \
	--record "$T/record4" >"$T/held" 2>"$T/held.err"
held_us=$(sed -n 's/^duration_us //p' "$T/held")
check refusal_not_waited "$(cat "$T/held" "$T/held.err")" sh -c "
	[ ${held_us:-999999999} -lt 7500000 ] &&
	grep -q '^call .*\"sandbox\": \"timeout\"' '$T/held' &&
	grep -q '^refusal .*\"principal\": \"agent7\"' '$T/held'"

# a contract that asks for egress on the strict tier, or with a bad rule, does not load
sed -e 's/"standard"/"strict"/' "$T/cat/web.fetch-1.0.0.json" >"$T/strict.json"
sed -e 's/api.test:80/api.test/' "$T/cat/web.fetch-1.0.0.json" >"$T/badrule.json"
mkdir -p "$T/cat2" "$T/cat3"
cp "$T/strict.json" "$T/cat2/web.fetch-1.0.0.json"
cp "$T/badrule.json" "$T/cat3/web.fetch-1.0.0.json"
"$TG" catalog list "$T/cat2" >"$T/c2" 2>&1
r2=$?
"$TG" catalog list "$T/cat3" >"$T/c3" 2>&1
r3=$?
check contract_checked "$(cat "$T/c2" "$T/c3")" sh -c "[ $r2 -ne 0 ] && [ $r3 -ne 0 ] &&
	grep -q 'executor.egress: is for the standard tier' '$T/c2' &&
	grep -q \"egress rule 'api.test'\" '$T/c3'"

# ---- the decoys' count ------------------------------------------------------------
check decoys_untouched "$(grep HIT "$T/decoys.log")" sh -c "[ $(hits metadata) -eq 0 ] &&
	[ $(hits other) -eq 0 ] && [ $(hits intranet) -eq 1 ] && [ $(hits gateway) -eq 0 ]"

[ "$FAILS" -eq 0 ]
