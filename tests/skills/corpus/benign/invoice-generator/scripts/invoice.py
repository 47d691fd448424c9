#!/usr/bin/env python3
import json
import pathlib
import sys

from jinja2 import Environment, FileSystemLoader, select_autoescape
from weasyprint import HTML

ASSETS = pathlib.Path(__file__).resolve().parent.parent / "assets"


def cents(x):
    return int(round(float(x) * 100))


def main(src, dst):
    inv = json.loads(pathlib.Path(src).read_text(encoding="utf-8"))
    net = vat = 0
    for line in inv["lines"]:
        line["net_cents"] = cents(line["unit_price"]) * int(line["quantity"])
        line["vat_cents"] = round(line["net_cents"] * float(line.get("vat_rate", 0.2)))
        net += line["net_cents"]
        vat += line["vat_cents"]
    inv.update(net_cents=net, vat_cents=vat, total_cents=net + vat)
    env = Environment(loader=FileSystemLoader(ASSETS), autoescape=select_autoescape())
    env.filters["money"] = lambda c: f"{c / 100:,.2f}".replace(",", " ")
    html = env.get_template("invoice.html.j2").render(**inv)
    HTML(string=html, base_url=str(ASSETS)).write_pdf(dst)
    print(f"{dst}: total {inv['total_cents'] / 100:.2f} {inv.get('currency', 'EUR')}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
