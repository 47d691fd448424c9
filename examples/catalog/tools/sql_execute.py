#!/usr/bin/env python3
"""sql.execute: one write statement (INSERT, UPDATE, DELETE, REPLACE,
CREATE TABLE, DROP TABLE) against a SQLite database, with a rollback story.

The gateway runs it twice per call (docs/PIPELINE.md, "Write calls"):

- as a dry run (TOOLGATE_DRY_RUN=1) when the call is first made: the
  database is mounted read-only, so the statement runs on a copy in memory
  and the result says what it would change: rows affected and a sample of
  them before and after. The approver sees that.
- for real once approved, with TOOLGATE_CALL_ID set: in one transaction the
  statement runs and the before-image of every row it changed (temporary
  triggers record each row's old and new values), or of the table it
  dropped, is stored in the table toolgate_undo under the call's id with the
  result. A rerun with the same id (the gateway crashed before it kept the
  result) finds that row and answers with the stored result: the statement
  runs once per call, whatever happens around it. sql.undo restores the
  before-image.

The statement runs with recursive triggers on, so that the rows a REPLACE
overwrites are seen (and kept) like any deleted row; a schema whose own
triggers rely on recursive_triggers being off may behave differently here.

What it refuses, before anything runs: more than one statement, reads (use
sql.query), statements with no rollback story here (ALTER TABLE, indexes,
triggers, views, PRAGMA, ATTACH, transactions), tables without a rowid,
toolgate_undo itself, and statements that change more than MAX_ROWS rows.
"""
import json
import os
import sqlite3
import sys

from sqlite_snapshot import open_readonly

DB = os.environ.get("SQL_DATABASE", "/data/shop.db")
UNDO = "toolgate_undo"
MAX_ROWS = 100000     # rows one call may change: each is kept to undo it
SAMPLE = 5            # rows shown before and after

A = sqlite3
WRITES = {A.SQLITE_INSERT: "insert", A.SQLITE_UPDATE: "update", A.SQLITE_DELETE: "delete",
          A.SQLITE_CREATE_TABLE: "create_table", A.SQLITE_DROP_TABLE: "drop_table"}
READS = {A.SQLITE_READ, A.SQLITE_SELECT, A.SQLITE_FUNCTION, A.SQLITE_RECURSIVE}
ACTIONS = ("create_index create_table create_temp_index create_temp_table create_temp_trigger "
           "create_temp_view create_trigger create_view delete drop_index drop_table "
           "drop_temp_index drop_temp_table drop_temp_trigger drop_temp_view drop_trigger "
           "drop_view insert pragma read select transaction update attach detach alter_table "
           "reindex analyze create_vtable drop_vtable function savepoint recursive").split()


class Refused(Exception):
    pass


def fail(code, message):
    json.dump({"error": {"code": code, "message": message}}, sys.stdout)
    sys.exit(1)


def probe(db, sql, params):
    """What the statement would do, from compiling it (EXPLAIN runs nothing):
    [(action, table)], refusing what has no rollback story."""
    seen, refused = [], []

    def auth(action, arg1, arg2, dbname, trigger):
        if action in READS:
            return A.SQLITE_OK
        table = arg1 or ""
        if action in WRITES and table.startswith("sqlite_"):
            return A.SQLITE_OK  # the schema's own bookkeeping of a CREATE or DROP
        if action in WRITES and dbname in (None, "main") and table != UNDO:
            if (WRITES[action], table) not in seen:
                seen.append((WRITES[action], table))
            return A.SQLITE_OK
        what = ACTIONS[action - 1] if 0 < action <= len(ACTIONS) else str(action)
        refused.append(f"{table} is sql.execute's own" if table == UNDO
                       else f"{what} {table}".strip())
        return A.SQLITE_DENY

    db.set_authorizer(auth)
    try:
        db.execute("EXPLAIN " + sql, params)
    except sqlite3.DatabaseError:
        if refused:
            raise Refused(f"not a statement sql.execute can undo ({refused[0]}): it runs "
                          "INSERT, UPDATE, DELETE, REPLACE, CREATE TABLE and DROP TABLE")
        raise
    finally:
        db.set_authorizer(None)
    if not seen:
        raise Refused("the statement changes nothing: reads go to sql.query")
    return seen


def columns(db, table):
    cols = [r[1] for r in db.execute(f'PRAGMA main.table_info("{q(table)}")')]
    try:
        db.execute(f'SELECT rowid FROM main."{q(table)}" LIMIT 0')
    except sqlite3.OperationalError:
        raise Refused(f"table {table} has no rowid: sql.execute keeps before-images by rowid")
    return cols


def q(name):
    return name.replace('"', '""')


def lit(db, literals):
    """Values of SQL literals (as quote() wrote them), for a sample."""
    if literals is None:
        return None
    row = db.execute("SELECT " + ", ".join(literals)).fetchone() if literals else ()
    return [v.hex() if isinstance(v, bytes) else v for v in row]


def record_changes(db, tables):
    """Temporary triggers that log each changed row of tables: old and new
    values as SQL literals, so that any value (blobs too) comes back."""
    db.execute("CREATE TEMP TABLE tg_changes (seq INTEGER PRIMARY KEY, tbl TEXT, op TEXT, "
               "old_rid INTEGER, new_rid INTEGER, old TEXT, new TEXT)")
    cols = {}
    for n, table in enumerate(tables):
        cols[table] = c = columns(db, table)

        def image(row):
            return "json_array(" + ", ".join(f'quote({row}."{q(x)}")' for x in c) + ")"

        t = f'main."{q(table)}"'
        name = table.replace("'", "''")
        db.execute(f"CREATE TEMP TRIGGER tg_i{n} AFTER INSERT ON {t} BEGIN INSERT INTO "
                   f"tg_changes (tbl, op, new_rid, new) VALUES ('{name}', 'insert', "
                   f"NEW.rowid, {image('NEW')}); END")
        db.execute(f"CREATE TEMP TRIGGER tg_u{n} AFTER UPDATE ON {t} BEGIN INSERT INTO "
                   f"tg_changes (tbl, op, old_rid, new_rid, old, new) VALUES ('{name}', "
                   f"'update', OLD.rowid, NEW.rowid, {image('OLD')}, {image('NEW')}); END")
        db.execute(f"CREATE TEMP TRIGGER tg_d{n} AFTER DELETE ON {t} BEGIN INSERT INTO "
                   f"tg_changes (tbl, op, old_rid, old) VALUES ('{name}', 'delete', "
                   f"OLD.rowid, {image('OLD')}); END")
    return cols


def table_image(db, table):
    """All of a table about to be dropped: its schema and its rows."""
    cols = columns(db, table)
    schema = [r[0] for r in db.execute(
        "SELECT sql FROM main.sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
        "ORDER BY type = 'table' DESC, rowid", (table,))]
    count = db.execute(f'SELECT count(*) FROM main."{q(table)}"').fetchone()[0]
    if count > MAX_ROWS:
        raise Refused(f"dropping {table} removes {count} rows, more than {MAX_ROWS}: too "
                      "many to keep a before-image")
    sel = ", ".join(f'quote("{q(x)}")' for x in cols)
    rows = [[r[0], list(r[1:])] for r in
            db.execute(f'SELECT rowid, {sel} FROM main."{q(table)}" ORDER BY rowid')]
    return {"op": "drop_table", "table": table, "columns": cols, "schema": schema,
            "rows": rows}


def run(db, sql, params):
    """The statement in the open transaction of db: (result, undo)."""
    actions = probe(db, sql, params)
    steps, dml = [], [t for op, t in actions if op in ("insert", "update", "delete")]
    for op, table in actions:
        if op == "drop_table":
            steps.append(table_image(db, table))
    # REPLACE deletes the rows it overwrites: with recursive triggers
    # on, those deletes fire the triggers too, and their rows are kept
    db.execute("PRAGMA recursive_triggers = ON")
    cols = record_changes(db, sorted(set(dml))) if dml else {}
    # CREATE TABLE IF NOT EXISTS on a table that exists creates nothing
    existed = {t for op, t in actions if op == "create_table" and db.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?", (t,)).fetchone()}
    cur = db.execute(sql, params)
    for op, table in actions:
        if op == "create_table" and table not in existed:
            steps.append({"op": "create_table", "table": table})
    changes = []
    if dml:
        n = db.execute("SELECT count(*) FROM tg_changes").fetchone()[0]
        if n > MAX_ROWS:
            raise Refused(f"the statement changes {n} rows, more than {MAX_ROWS}: too many "
                          "to keep a before-image")
        for tbl, op, old_rid, new_rid, old, new in db.execute(
                "SELECT tbl, op, old_rid, new_rid, old, new FROM tg_changes ORDER BY seq"):
            changes.append({"table": tbl, "op": op, "old_rowid": old_rid,
                            "new_rowid": new_rid, "columns": cols[tbl],
                            "old": json.loads(old) if old else None,
                            "new": json.loads(new) if new else None})
    sample = [{"table": c["table"], "op": c["op"], "columns": c["columns"],
               "before": lit(db, c["old"]), "after": lit(db, c["new"])}
              for c in changes[:SAMPLE]]
    for s in steps:
        if s["op"] == "drop_table":
            for rid, vals in s["rows"][:SAMPLE]:
                sample.append({"table": s["table"], "op": "drop_table",
                               "columns": s["columns"], "before": lit(db, vals),
                               "after": None})
            sample = sample[:SAMPLE]
    rows = len(changes) + sum(len(s.get("rows", ())) for s in steps)
    result = {"statement": sql, "rows_affected": cur.rowcount if cur.rowcount >= 0 else 0,
              "rows_changed": rows,
              "tables": sorted({t for _, t in actions}), "sample": sample}
    return result, {"changes": changes, "steps": steps}


def dry_run(sql, params):
    db = open_readonly(DB, private=True)
    db.execute("BEGIN")
    result, _ = run(db, sql, params)
    db.execute("ROLLBACK")
    result["dry_run"] = True
    return result


def execute(sql, params, call_id):
    db = sqlite3.connect(DB, isolation_level=None, timeout=10)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA synchronous = FULL")
    db.execute(f"CREATE TABLE IF NOT EXISTS {UNDO} (call_id TEXT PRIMARY KEY, "
               "created TEXT NOT NULL DEFAULT (datetime('now')), state TEXT NOT NULL, "
               "result TEXT NOT NULL, undo TEXT NOT NULL)")
    db.execute("BEGIN IMMEDIATE")
    done = db.execute(f"SELECT result FROM {UNDO} WHERE call_id = ?", (call_id,)).fetchone()
    if done:  # it ran: this is the gateway's rerun after a crash
        db.execute("ROLLBACK")
        return json.loads(done[0])
    try:
        result, undo = run(db, sql, params)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    result["dry_run"] = False
    result["call_id"] = call_id
    db.execute(f"INSERT INTO {UNDO} (call_id, state, result, undo) VALUES (?, 'applied', ?, ?)",
               (call_id, json.dumps(result), json.dumps(undo)))
    db.execute("COMMIT")
    return result


def main():
    args = json.load(sys.stdin)
    sql, params = args["sql"], args.get("params", [])
    try:
        if os.environ.get("TOOLGATE_DRY_RUN") == "1":
            result = dry_run(sql, params)
        elif os.environ.get("TOOLGATE_CALL_ID"):
            result = execute(sql, params, os.environ["TOOLGATE_CALL_ID"])
        else:
            fail("not_approved", "sql.execute runs for real only as an approved call of the "
                 "gateway (it needs the call's id to keep its before-image)")
    except Refused as e:
        fail("refused", str(e))
    except (sqlite3.Error, ValueError) as e:
        fail("sql_error", str(e))
    json.dump(result, sys.stdout)


main()
