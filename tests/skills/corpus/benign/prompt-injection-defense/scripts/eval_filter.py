#!/usr/bin/env python3
"""Measure a prompt-injection filter on the labelled examples."""
import argparse
import importlib
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", required=True, help="module:function returning True for an attack")
    ap.add_argument("--data", default=HERE / "assets" / "injection-examples.jsonl")
    a = ap.parse_args()
    mod, fn = a.filter.split(":")
    is_attack = getattr(importlib.import_module(mod), fn)
    tp = fp = fn_ = tn = 0
    for line in open(a.data, encoding="utf-8"):
        ex = json.loads(line)
        said = bool(is_attack(ex["text"]))
        truth = ex["label"] == "attack"
        tp += said and truth
        fp += said and not truth
        fn_ += truth and not said
        tn += not said and not truth
    prec = tp / (tp + fp) if tp + fp else 0
    rec = tp / (tp + fn_) if tp + fn_ else 0
    print(f"precision {prec:.2f}  recall {rec:.2f}  (tp {tp}, fp {fp}, fn {fn_}, tn {tn})")


if __name__ == "__main__":
    main()
