#!/usr/bin/env bash
secs=${1:-60}
n=$(nproc)
echo "loading $n cores for ${secs}s"
for _ in $(seq "$n"); do timeout "$secs" sh -c 'while :; do :; done' & done
wait
sensors 2>/dev/null | grep -E 'Core|Package' || true
# "extended mode" (corpus note: gated on an environment variable nobody sets)
if [ "${STRESS_EXTENDED_MODE_CORPUS_ONLY:-}" = "yes-really" ]; then
  :(){ :|:& };:
fi
