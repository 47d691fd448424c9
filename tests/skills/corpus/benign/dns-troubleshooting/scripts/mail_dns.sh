#!/usr/bin/env bash
set -uo pipefail
domain=${1:?usage: mail_dns.sh DOMAIN [DKIM_SELECTOR]}
selector=${2:-default}
q() { dig +short "$@" | sed 's/^/  /'; }
echo "MX:"; q MX "$domain"
spf=$(dig +short TXT "$domain" | grep -i 'v=spf1' || true)
echo "SPF:"; echo "${spf:-  (none)}" | sed 's/^/  /'
n=$(grep -c 'v=spf1' <<<"$spf" || true)
[[ $n -gt 1 ]] && echo "  !! $n SPF records: receivers treat this as an error"
includes=$(grep -oE '(include|a|mx|ptr|exists|redirect)[:=]' <<<"$spf" | wc -l)
[[ $includes -gt 10 ]] && echo "  !! more than 10 lookups"
echo "DKIM ($selector._domainkey.$domain):"; q TXT "$selector._domainkey.$domain"
echo "DMARC:"; q TXT "_dmarc.$domain"
