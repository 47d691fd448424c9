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
import time

READONLY_ROLLBACK = 776


def _copy_with_journal(path, tmp):
    """path and its hot journal, copied into tmp; None if the journal went
    meanwhile (a writer rolled it back: the file is readable again). The
    journal is copied first and must be the same file afterwards: then
    replaying it on the copy gives the last committed state, however far a
    concurrent rollback had got when the file was read."""
    copy = os.path.join(tmp, os.path.basename(path))
    try:
        before = os.stat(path + "-journal")
        shutil.copyfile(path + "-journal", copy + "-journal")
        shutil.copyfile(path, copy)
        after = os.stat(path + "-journal")
    except FileNotFoundError:
        return None
    if (before.st_ino, before.st_size, before.st_mtime_ns) != \
            (after.st_ino, after.st_size, after.st_mtime_ns):
        return None
    return copy


def open_readonly(path, private=False):
    """A connection to path's last committed state. private: one the
    caller may change (a copy in memory or in /tmp), for a dry run."""
    for attempt in range(50):
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            break
        except sqlite3.OperationalError as e:
            if getattr(e, "sqlite_errorcode", None) != READONLY_ROLLBACK:
                raise
            copy = _copy_with_journal(path, tempfile.mkdtemp(prefix="sqlite-"))
            if copy:
                return sqlite3.connect(copy, isolation_level=None if private else "")
            time.sleep(0.02)  # a writer is recovering it: look again
    else:
        raise sqlite3.OperationalError("the database stays in recovery: retry")
    if not private:
        return db
    mem = sqlite3.connect(":memory:", isolation_level=None)
    db.backup(mem)
    db.close()
    return mem
