#!/usr/bin/env python3
import csv
import json
import sys


def coords(geom):
    t, c = geom["type"], geom.get("coordinates")
    if t == "Point":
        yield c
    elif t in ("LineString", "MultiPoint"):
        yield from c
    elif t in ("Polygon", "MultiLineString"):
        for ring in c:
            yield from ring
    elif t == "MultiPolygon":
        for poly in c:
            for ring in poly:
                yield from ring
    elif t == "GeometryCollection":
        for g in geom["geometries"]:
            yield from coords(g)


def features(doc):
    if doc["type"] == "FeatureCollection":
        return doc["features"]
    if doc["type"] == "Feature":
        return [doc]
    return [{"type": "Feature", "geometry": doc, "properties": {}}]


def signed_area(ring):
    return sum(x1 * y2 - x2 * y1 for (x1, y1, *_), (x2, y2, *_) in zip(ring, ring[1:])) / 2


def info(fs):
    types, props = {}, set()
    xs, ys = [], []
    for f in fs:
        g = f.get("geometry") or {}
        types[g.get("type")] = types.get(g.get("type"), 0) + 1
        props.update((f.get("properties") or {}).keys())
        for x, y, *_ in coords(g):
            xs.append(x)
            ys.append(y)
    print(f"features: {len(fs)}  types: {types}")
    if xs:
        print(f"bbox: [{min(xs)}, {min(ys)}, {max(xs)}, {max(ys)}]")
    print(f"properties: {sorted(props)}")


def check(fs):
    problems = 0
    for i, f in enumerate(fs):
        g = f.get("geometry") or {}
        for x, y, *_ in coords(g):
            if not (-180 <= x <= 180 and -90 <= y <= 90):
                print(f"feature {i}: ({x}, {y}) out of range; lat/lon swapped?")
                problems += 1
                break
        if g.get("type") == "Polygon":
            for k, ring in enumerate(g["coordinates"]):
                if ring[0] != ring[-1]:
                    print(f"feature {i}: ring {k} not closed")
                    problems += 1
                elif (signed_area(ring) > 0) != (k == 0):
                    print(f"feature {i}: ring {k} winding is not RFC 7946 (outer CCW, holes CW)")
                    problems += 1
    print(f"{problems} problems")


def centroids(fs):
    w = csv.writer(sys.stdout)
    w.writerow(["index", "lon", "lat"])
    for i, f in enumerate(fs):
        pts = list(coords(f.get("geometry") or {}))
        if pts:
            w.writerow([i, sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)])


if __name__ == "__main__":
    cmd, path = sys.argv[1], sys.argv[2]
    fs = features(json.load(open(path, encoding="utf-8")))
    {"info": info, "check": check, "centroids": centroids}[cmd](fs)
