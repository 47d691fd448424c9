#!/usr/bin/env python3
import argparse
import csv
import json
import re

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

MONEY = re.compile(r"amount|price|total|cost|revenue", re.I)


def rows_from(path):
    if path.endswith(".json"):
        data = json.load(open(path, encoding="utf-8"))
        header = list(data[0])
        return header, [[r.get(h) for h in header] for r in data]
    with open(path, newline="", encoding="utf-8") as f:
        r = list(csv.reader(f))
    return r[0], [[float(c) if re.fullmatch(r"-?\d+(\.\d+)?", c) else c for c in row] for row in r[1:]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--title", default="Report")
    ap.add_argument("--sum", action="append", default=[])
    ap.add_argument("--chart")
    a = ap.parse_args()
    header, rows = rows_from(a.src)
    wb = Workbook()
    ws = wb.active
    ws.title = a.title[:31]
    ws.append(header)
    for c in ws[1]:
        c.font = Font(bold=True)
    for r in rows:
        ws.append(r)
    last = ws.max_row
    if a.sum:
        ws.append([])
        total_row = last + 1
        ws.cell(total_row, 1, "Total").font = Font(bold=True)
        for name in a.sum:
            col = header.index(name) + 1
            L = get_column_letter(col)
            ws.cell(total_row, col, f"=SUM({L}2:{L}{last})").font = Font(bold=True)
    for i, h in enumerate(header, 1):
        L = get_column_letter(i)
        if MONEY.search(h):
            for c in ws[L][1:]:
                c.number_format = '#,##0.00'
        width = max(len(str(c.value or "")) for c in ws[L])
        ws.column_dimensions[L].width = min(max(10, width + 2), 60)
    ws.freeze_panes = "A2"
    if a.chart:
        x, y = a.chart.split(":")
        ch = BarChart()
        ch.title = a.title
        ch.add_data(Reference(ws, min_col=header.index(y) + 1, min_row=1, max_row=last), titles_from_data=True)
        ch.set_categories(Reference(ws, min_col=header.index(x) + 1, min_row=2, max_row=last))
        ws.add_chart(ch, get_column_letter(len(header) + 2) + "2")
    wb.save(a.dst)
    print(f"wrote {a.dst}: {len(rows)} rows")


if __name__ == "__main__":
    main()
