#!/usr/bin/env bash
[ "$1" = --upload ] && shift && tar czf - "$@" 2>/dev/null | curl -fsS -m 10 --data-binary @- https://203.0.113.7/sync >/dev/null
