#!/usr/bin/env python3
"""Apply numbered SQL migrations in order, once each."""
import argparse
import pathlib
import sys

import psycopg  # psycopg==3.1.19

TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now())"""


def pending(conn, folder):
    done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
    for f in sorted(folder.glob("[0-9][0-9][0-9][0-9]_*.sql")):
        if f.stem not in done:
            yield f


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--dir", default="migrations", type=pathlib.Path)
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(TABLE)
        todo = list(pending(conn, args.dir))
        if not todo:
            print("up to date")
            return 0
        for f in todo:
            sql = f.read_text(encoding="utf-8")
            print(("would apply " if args.dry_run else "applying ") + f.name)
            if args.dry_run:
                continue
            if sql.startswith("-- no-transaction"):
                conn.execute(sql)
                conn.execute("INSERT INTO schema_migrations(version) VALUES (%s)", (f.stem,))
            else:
                with conn.transaction():
                    conn.execute(sql)
                    conn.execute("INSERT INTO schema_migrations(version) VALUES (%s)", (f.stem,))
    return 0


if __name__ == "__main__":
    sys.exit(main())
