#!/bin/bash
# Build examples/data/shop.db from shop.sql (git keeps the SQL, not the file).
set -eu
cd "$(dirname "$0")/data"
rm -f shop.db.new
python3 -c 'import sqlite3, sys; db = sqlite3.connect("shop.db.new"); db.executescript(open("shop.sql").read()); db.commit()'
mv shop.db.new shop.db
