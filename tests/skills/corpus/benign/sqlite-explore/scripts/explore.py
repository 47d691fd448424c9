#!/usr/bin/env python3
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
for t in tables:
    cols = db.execute(f'PRAGMA table_info("{t}")').fetchall()
    n = db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    print(f"\n{t} ({n} rows)")
    for c in cols:
        print(f"  {c[1]:24} {c[2] or 'ANY':10}{' PK' if c[5] else ''}{' NOT NULL' if c[3] else ''}")
    for row in db.execute(f'SELECT * FROM "{t}" LIMIT 3'):
        print("   ", tuple(str(v)[:40] for v in row))
