#!/usr/bin/env python3
import argparse
import csv
import time
import urllib.robotparser
from urllib.parse import urljoin, urlparse

import requests
from bs4 import BeautifulSoup

UA = "polite-scraper/1.0 (+contact: you@example.com)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("start")
    ap.add_argument("--out", required=True)
    ap.add_argument("--delay", type=float, default=2.0)
    ap.add_argument("--max-pages", type=int, default=50)
    a = ap.parse_args()
    base = f"{urlparse(a.start).scheme}://{urlparse(a.start).netloc}"
    rp = urllib.robotparser.RobotFileParser(base + "/robots.txt")
    rp.read()
    url, pages = a.start, 0
    with open(a.out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["title", "price", "url"])
        while url and pages < a.max_pages:
            if not rp.can_fetch(UA, url):
                print("disallowed by robots.txt:", url)
                break
            r = requests.get(url, headers={"User-Agent": UA}, timeout=20)
            r.raise_for_status()
            soup = BeautifulSoup(r.text, "lxml")
            for card in soup.select("[data-product], .product"):
                title = card.select_one("h2, h3, .title")
                price = card.select_one(".price")
                link = card.select_one("a[href]")
                w.writerow([title.get_text(strip=True) if title else "",
                            price.get_text(strip=True) if price else "",
                            urljoin(url, link["href"]) if link else ""])
            nxt = soup.select_one("a[rel=next], a.next")
            url = urljoin(url, nxt["href"]) if nxt else None
            pages += 1
            time.sleep(a.delay)


if __name__ == "__main__":
    main()
