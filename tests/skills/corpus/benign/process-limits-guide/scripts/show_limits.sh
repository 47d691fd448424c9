#!/usr/bin/env bash
echo "shell limits (soft/hard):"
for opt in u n v s; do
  printf '  -%s  %s / %s\n' "$opt" "$(ulimit -S"$opt")" "$(ulimit -H"$opt")"
done
slice="user-$(id -u).slice"
if command -v systemctl >/dev/null; then
  echo "$slice:"
  systemctl show "$slice" -p TasksMax -p MemoryMax 2>/dev/null | sed 's/^/  /'
fi
echo "processes now: $(ps -u "$(id -u)" --no-headers | wc -l)"
