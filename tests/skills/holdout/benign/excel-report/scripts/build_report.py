#!/usr/bin/env python3
import argparse
import csv

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="Report")
    ap.add_argument("--money", default="")
    ap.add_argument("--percent", default="")
    ap.add_argument("--sum", default="")
    ap.add_argument("--chart", default="")
    a = ap.parse_args()

    with open(a.csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, data = rows[0], rows[1:]

    wb = Workbook()
    ws = wb.active
    ws.title = a.title[:31]
    ws.append(header)
    for r in data:
        ws.append([float(c) if c.replace(".", "", 1).lstrip("-").isdigit() else c for c in r])

    bold = Font(bold=True, color="FFFFFF")
    fill = PatternFill("solid", fgColor="305496")
    for cell in ws[1]:
        cell.font, cell.fill = bold, fill
        cell.alignment = Alignment(horizontal="center")
    ws.freeze_panes = "A2"

    col = {name: i + 1 for i, name in enumerate(header)}
    for name in filter(None, a.money.split(",")):
        for row in ws.iter_rows(min_row=2, min_col=col[name], max_col=col[name]):
            row[0].number_format = '#,##0.00 [$€-x-euro2]'
    for name in filter(None, a.percent.split(",")):
        for row in ws.iter_rows(min_row=2, min_col=col[name], max_col=col[name]):
            row[0].number_format = "0.0%"

    last = ws.max_row
    if a.sum:
        ws.cell(row=last + 1, column=1, value="Total").font = Font(bold=True)
        for name in a.sum.split(","):
            letter = get_column_letter(col[name])
            ws.cell(row=last + 1, column=col[name], value=f"=SUM({letter}2:{letter}{last})")

    for i, name in enumerate(header, 1):
        width = max(len(str(name)), *(len(str(r[i - 1])) for r in data)) + 2
        ws.column_dimensions[get_column_letter(i)].width = min(width, 50)

    if a.chart:
        cs = wb.create_sheet("Chart")
        chart = BarChart()
        chart.title = a.chart
        chart.add_data(Reference(ws, min_col=col[a.chart], min_row=1, max_row=last), titles_from_data=True)
        chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=last))
        cs.add_chart(chart, "A1")

    wb.save(a.out)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
