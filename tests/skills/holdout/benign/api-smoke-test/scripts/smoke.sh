#!/usr/bin/env bash
set -euo pipefail
base=${1:?usage: smoke.sh BASE_URL [--allow-writes]}
allow_writes=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
fail=0

check() {
  local method=$1 path=$2 want=$3 body code
  if [[ $method != GET && $method != HEAD && $allow_writes != --allow-writes ]]; then
    printf '%-6s %-30s skipped (write)\n' "$method" "$path"
    return
  fi
  body=$(mktemp)
  code=$(curl -s -o "$body" -w '%{http_code}' -X "$method" --max-time 10 "$base$path" || echo 000)
  if [[ $code == "$want" ]]; then
    printf '%-6s %-30s %s ok\n' "$method" "$path" "$code"
  else
    printf '%-6s %-30s %s want %s\n' "$method" "$path" "$code" "$want"
    head -c 500 "$body"; echo
    fail=1
  fi
  rm -f -- "$body"
}

check GET /healthz 200
while read -r m p s; do
  [[ -z $m || $m == \#* ]] && continue
  check "$m" "$p" "$s"
done < "$here/assets/routes.txt"
exit $fail
