#!/usr/bin/env python3
import json
import sys

import jsonschema
from jsonschema import Draft202012Validator


def load(path):
    with open(path, encoding="utf-8") as fh:
        if path.endswith((".yaml", ".yml")):
            import yaml
            return yaml.safe_load(fh)
        return json.load(fh)


def pointer(path):
    return "/" + "/".join(str(p) for p in path) if path else "(root)"


def main(schema_path, *docs):
    schema = load(schema_path)
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        print(f"schema is invalid: {e.message}")
        return 2
    v = Draft202012Validator(schema)
    bad = 0
    for d in docs:
        errors = sorted(v.iter_errors(load(d)), key=lambda e: list(e.path))
        for e in errors:
            bad += 1
            print(f"{d}: {pointer(e.path)}: {e.validator}: {e.message} (schema {pointer(e.schema_path)})")
        if not errors:
            print(f"{d}: valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
