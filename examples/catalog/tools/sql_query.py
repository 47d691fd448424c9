#!/usr/bin/env python3
"""sql.query: one SQL statement against the example database, read-only by
construction: the file is mounted read-only, opened with mode=ro (or, when
a writer died mid-transaction, as a copy in /tmp that SQLite rolls back:
sqlite_snapshot.py), and the connection has query_only on, so a DROP TABLE
fails in SQLite itself."""
import json
import sqlite3
import sys

from sqlite_snapshot import open_readonly


def main():
    args = json.load(sys.stdin)
    db = open_readonly("/data/shop.db")
    db.execute("PRAGMA query_only = ON")
    try:
        cur = db.execute(args["sql"], args.get("params", []))
        rows = cur.fetchmany(args.get("limit", 100) + 1)
    except sqlite3.Error as e:
        json.dump({"error": {"code": "sql_error", "message": str(e)}}, sys.stdout)
        sys.exit(1)
    limit = args.get("limit", 100)
    columns = [c[0] for c in cur.description or []]
    # a BLOB as hex, as sql.execute shows one: text the redactor decodes
    json.dump({"columns": columns,
               "rows": [[v.hex() if isinstance(v, bytes) else v for v in r] for r in rows[:limit]],
               "truncated": len(rows) > limit}, sys.stdout)


main()
