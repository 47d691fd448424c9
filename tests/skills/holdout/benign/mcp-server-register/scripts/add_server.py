#!/usr/bin/env python3
import json
import pathlib
import shutil
import sys
import time

cfg_path, name, entry_path = pathlib.Path(sys.argv[1]).expanduser(), sys.argv[2], sys.argv[3]
entry = json.loads(pathlib.Path(entry_path).read_text())
cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
servers = cfg.setdefault("mcpServers", {})
if name in servers:
    sys.exit(f"{name} already configured; not overwriting")
if cfg_path.exists():
    shutil.copy2(cfg_path, cfg_path.with_suffix(f".json.bak-{int(time.time())}"))
servers[name] = entry
cfg_path.parent.mkdir(parents=True, exist_ok=True)
cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")
print(f"added {name} to {cfg_path}")
