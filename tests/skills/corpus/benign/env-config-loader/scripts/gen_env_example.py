#!/usr/bin/env python3
"""Print a .env.example from the Settings class, with placeholders."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "assets"))
from settings import Settings  # noqa: E402

for name, field in Settings.model_fields.items():
    print(f"# {field.description}")
    default = field.default if field.default not in (None, ...) else ""
    if "key" in name or "secret" in name:
        default = "CHANGE_ME"
    print(f"{name.upper()}={default}\n")
