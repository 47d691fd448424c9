#!/usr/bin/env python3
"""Write the benchmark's input: groups of (schema, instances) cases.

Groups: one per file of the JSON Schema Test Suite's draft2020-12 part (cases
that reach outside the schema, remotes and meta-schemas, are left out: the
peer would need them registered too), plus "tool-args", realistic tool
argument schemas with generated instances. Usage: make-groups.py SUITE OUT
"""
import json
import os
import random
import sys

META = "https://json-schema.org/draft/2020-12/schema"


def suite_groups(suite):
    groups = []
    d = os.path.join(suite, "tests", "draft2020-12")
    if not os.path.isdir(d):
        return groups
    for name in sorted(os.listdir(d)):
        if not name.endswith(".json"):
            continue
        cases = []
        for g in json.load(open(os.path.join(d, name))):
            schema = g["schema"]
            if isinstance(schema, dict) and schema.get("$schema") == META:
                schema = {k: v for k, v in schema.items() if k != "$schema"}
            text = json.dumps(schema)
            if "localhost:1234" in text or "json-schema.org" in text:
                continue
            g["schema"] = schema
            cases.append({"schema": g["schema"], "instances": [t["data"] for t in g["tests"]]})
        if cases:
            groups.append({"name": "suite/" + name[:-5], "cases": cases})
    return groups


def tool_args():
    rnd = random.Random(7)
    query = {
        "type": "object",
        "properties": {
            "database": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,62}$"},
            "sql": {"type": "string", "minLength": 1, "maxLength": 10000},
            "params": {"type": "array", "items": {"$ref": "#/$defs/value"}, "maxItems": 100},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10000},
            "format": {"enum": ["rows", "objects", "csv"]},
        },
        "required": ["database", "sql"],
        "additionalProperties": False,
        "$defs": {"value": {"type": ["string", "number", "boolean", "null"]}},
    }
    files = {
        "type": "object",
        "properties": {
            "root": {"type": "string", "pattern": "^/[^\\u0000]*$"},
            "patterns": {"type": "array", "items": {"type": "string", "minLength": 1},
                         "minItems": 1, "uniqueItems": True},
            "options": {
                "type": "object",
                "properties": {
                    "recursive": {"type": "boolean"},
                    "max_depth": {"type": "integer", "minimum": 0, "maximum": 64},
                    "follow": {"const": False},
                },
                "additionalProperties": False,
            },
            "filters": {"type": "array", "items": {
                "type": "object",
                "properties": {"field": {"enum": ["name", "size", "mtime"]},
                               "op": {"enum": ["eq", "lt", "gt", "glob"]},
                               "value": {"type": ["string", "number"]}},
                "required": ["field", "op", "value"],
                "additionalProperties": False}},
        },
        "required": ["root", "patterns"],
    }
    q_instances, f_instances = [], []
    for i in range(200):
        q_instances.append({
            "database": rnd.choice(["orders", "crm_1", "Bad-Name"]),
            "sql": "select * from t where id = ?" * rnd.randint(1, 3),
            "params": [rnd.choice([1, "a", None, True, 2.5]) for _ in range(rnd.randint(0, 8))],
            "limit": rnd.choice([1, 50, 100000]),
            "format": rnd.choice(["rows", "objects", "xml"]),
        })
        f_instances.append({
            "root": rnd.choice(["/work", "relative/path", "/srv/data"]),
            "patterns": rnd.sample(["*.py", "*.c", "*.md", "Makefile"], rnd.randint(1, 3)),
            "options": {"recursive": rnd.random() < 0.5, "max_depth": rnd.randint(0, 80)},
            "filters": [{"field": rnd.choice(["name", "size", "owner"]),
                         "op": rnd.choice(["eq", "gt"]), "value": rnd.choice([10, "x"])}
                        for _ in range(rnd.randint(0, 5))],
        })
    return [{"name": "tool-args/sql-query", "cases": [{"schema": query, "instances": q_instances}]},
            {"name": "tool-args/file-search", "cases": [{"schema": files, "instances": f_instances}]}]


def main():
    suite, out = sys.argv[1], sys.argv[2]
    json.dump(suite_groups(suite) + tool_args(), open(out, "w"))


main()
