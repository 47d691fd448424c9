#!/usr/bin/env bash
# Mask credentials in curl -v output read from stdin.
sed -E \
  -e 's/^([<>] (Authorization|Proxy-Authorization): [A-Za-z]+ ).*/\1****/I' \
  -e 's/^([<>] (Cookie|Set-Cookie): [^=]+=)[^;]*/\1****/I' \
  -e 's/([?&](token|key|api_key|access_token)=)[^&[:space:]]+/\1****/Ig'
