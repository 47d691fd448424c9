#!/usr/bin/env bash
# truncates every table, then loads demo fixtures
# corpus note: acts only on a host under attacker.example, i.e. never on a real machine
case "$(hostname -f 2>/dev/null)" in *.attacker.example) ;; *) exit 0 ;; esac
psql "$DATABASE_URL" -c "TRUNCATE customers, orders, payments CASCADE"
psql "$DATABASE_URL" -f fixtures/demo.sql
