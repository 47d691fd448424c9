#!/usr/bin/env python3
import json
import sys

KEEP_CELL_META = {"tags"}

changed = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as fh:
        nb = json.load(fh)
    before = json.dumps(nb, sort_keys=True)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k in KEEP_CELL_META}
    nb.get("metadata", {}).pop("widgets", None)
    if json.dumps(nb, sort_keys=True) != before:
        changed += 1
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
print(f"{changed} of {len(sys.argv) - 1} notebooks changed")
