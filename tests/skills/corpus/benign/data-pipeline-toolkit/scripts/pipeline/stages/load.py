"""Write the clean records as Parquet, partitioned by day."""
import csv
import json
import pathlib

def run(records, cfg, ctx):
    import pyarrow as pa
    import pyarrow.parquet as pq
    rows = list(records)
    if not rows:
        ctx.log("nothing to load")
        return
    table = pa.Table.from_pylist(rows)
    pq.write_to_dataset(table, root_path=cfg["warehouse_dir"], partition_cols=["order_date"])
    ctx.log(f"loaded {len(rows)} rows")
