"""What the SQL tools share: the database as of its last commit, from a
read-only mount.

A writer killed mid-transaction (a gateway killed with its sandbox) leaves
a hot journal that only a writer may roll back, and SQLite refuses a
read-only connection until one has (SQLITE_READONLY_ROLLBACK). Then the
file and its journal are copied to the sandbox's /tmp and opened there,
where SQLite rolls the copy back: the same committed state, read without
writing the original.
"""
import os
import shutil
import sqlite3
import tempfile

READONLY_ROLLBACK = 776


def open_readonly(path, private=False):
    """A connection to path's last committed state. private: one the
    caller may change (a copy in memory or in /tmp), for a dry run."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as e:
        if getattr(e, "sqlite_errorcode", None) != READONLY_ROLLBACK:
            raise
        tmp = tempfile.mkdtemp(prefix="sqlite-")
        copy = os.path.join(tmp, os.path.basename(path))
        shutil.copyfile(path, copy)
        if os.path.exists(path + "-journal"):
            shutil.copyfile(path + "-journal", copy + "-journal")
        return sqlite3.connect(copy, isolation_level=None if private else "")
    if not private:
        return db
    mem = sqlite3.connect(":memory:", isolation_level=None)
    db.backup(mem)
    db.close()
    return mem
