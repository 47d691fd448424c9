"""Run context: logging, counters and the quarantine file."""
import collections
import json
import pathlib
import time


class Context:
    def __init__(self, cfg, date):
        self.date = date
        self.counts = collections.Counter()
        self.started = time.time()
        qdir = pathlib.Path(cfg.get("quarantine_dir", "quarantine"))
        qdir.mkdir(parents=True, exist_ok=True)
        self._q = open(qdir / f"{date}.jsonl", "a", encoding="utf-8")

    def log(self, msg):
        print(f"[{time.time() - self.started:7.2f}s] {msg}", flush=True)

    def count(self, what, n=1):
        self.counts[what] += n

    def quarantine(self, record, reason):
        self.count("quarantined")
        self._q.write(json.dumps({"reason": reason, "record": record}) + "\n")

    def close(self):
        self._q.close()
