#!/usr/bin/env python3
"""sql.undo: the compensation of sql.execute. Puts back the before-image
that sql.execute kept in toolgate_undo under a call's id, in one
transaction, newest change first.

It refuses to overwrite what changed since: each row must still hold what
the call left there (a later write to it is a conflict, named, and nothing
is restored). Undoing twice is harmless: the second time answers that the
call was already rolled back. Dry run (TOOLGATE_DRY_RUN=1): the same on a
copy in memory, saying what it would restore or which conflict stops it.
"""
import json
import os
import sqlite3
import sys

from sqlite_snapshot import open_readonly

DB = os.environ.get("SQL_DATABASE", "/data/shop.db")
UNDO = "toolgate_undo"


class Conflict(Exception):
    pass


def fail(code, message):
    json.dump({"error": {"code": code, "message": message}}, sys.stdout)
    sys.exit(1)


def q(name):
    return name.replace('"', '""')


def current(db, table, cols, rowid):
    """The row's values as SQL literals, or None."""
    sel = ", ".join(f'quote("{q(c)}")' for c in cols)
    row = db.execute(f'SELECT {sel} FROM main."{q(table)}" WHERE rowid = ?', (rowid,)).fetchone()
    return list(row) if row else None


def put(db, table, cols, rowid, values):
    names = ", ".join(f'"{q(c)}"' for c in cols)
    db.execute(f'INSERT INTO main."{q(table)}" (rowid, {names}) VALUES (?, '
               + ", ".join(values) + ")", (rowid,))


def exists(db, table):
    return db.execute("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?",
                      (table,)).fetchone() is not None


def restore(db, undo):
    """Apply the before-image, newest first; the number of rows restored."""
    n = 0
    for c in reversed(undo["changes"]):
        t, cols = c["table"], c["columns"]
        if not exists(db, t):
            raise Conflict(f"table {t} no longer exists")
        if c["op"] in ("insert", "update"):
            now = current(db, t, cols, c["new_rowid"])
            if now != c["new"]:
                raise Conflict(f"{t} row {c['new_rowid']} changed since the call")
        if c["op"] == "insert":
            db.execute(f'DELETE FROM main."{q(t)}" WHERE rowid = ?', (c["new_rowid"],))
        elif c["op"] == "delete":
            if current(db, t, cols, c["old_rowid"]) is not None:
                raise Conflict(f"{t} row {c['old_rowid']} was written again since the call")
            put(db, t, cols, c["old_rowid"], c["old"])
        else:
            sets = ", ".join(f'"{q(col)}" = {v}' for col, v in zip(cols, c["old"]))
            db.execute(f'UPDATE main."{q(t)}" SET rowid = ?, {sets} WHERE rowid = ?',
                       (c["old_rowid"], c["new_rowid"]))
        n += 1
    for s in reversed(undo["steps"]):
        t = s["table"]
        if s["op"] == "create_table":
            if exists(db, t):
                if db.execute(f'SELECT count(*) FROM main."{q(t)}"').fetchone()[0]:
                    raise Conflict(f"table {t}, which the call created, holds rows now")
                db.execute(f'DROP TABLE main."{q(t)}"')
        elif s["op"] == "drop_table":
            if exists(db, t):
                raise Conflict(f"a table {t} exists again")
            for sql in s["schema"]:
                db.execute(sql)
            for rowid, values in s["rows"]:
                put(db, t, s["columns"], rowid, values)
                n += 1
    return n


def main():
    args = json.load(sys.stdin)
    call_id, dry = args["call_id"], os.environ.get("TOOLGATE_DRY_RUN") == "1"
    if dry:
        db = open_readonly(DB, private=True)
    else:
        db = sqlite3.connect(DB, isolation_level=None, timeout=10)
        db.execute("PRAGMA synchronous = FULL")
    try:
        db.execute("BEGIN IMMEDIATE")
        row = None
        if exists(db, UNDO):
            row = db.execute(f"SELECT state, undo FROM {UNDO} WHERE call_id = ?",
                             (call_id,)).fetchone()
        if not row:
            fail("not_found", f"no before-image of call {call_id} in this database")
        if row[0] == "compensated":
            db.execute("ROLLBACK")
            json.dump({"call_id": call_id, "restored_rows": 0, "already": True,
                       "dry_run": dry}, sys.stdout)
            return
        n = restore(db, json.loads(row[1]))
        db.execute(f"UPDATE {UNDO} SET state = 'compensated' WHERE call_id = ?", (call_id,))
        db.execute("ROLLBACK" if dry else "COMMIT")
    except Conflict as e:
        fail("conflict", f"call {call_id} cannot be undone: {e}; nothing was restored")
    except sqlite3.Error as e:
        fail("sql_error", str(e))
    json.dump({"call_id": call_id, "restored_rows": n, "already": False, "dry_run": dry},
              sys.stdout)


main()
