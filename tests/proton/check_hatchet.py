#!/usr/bin/env python3
"""check_hatchet.py — reads .hatchet files the way upstream tools do.

Run with the reference venv's python (llnl-hatchet installed): for every file,
element 0 goes through hatchet.GraphFrame.from_literal exactly as proton-viewer
does (metadata frames removed, device info popped), inclusive columns are added,
and the inclusive time of ROOT must equal the sum of the kernel nodes' exclusive
"time (ns)". Exit status 1 when any file fails.
"""
import json
import sys

import hatchet as ht


def check(path):
    with open(path, encoding="utf-8") as f:
        db = json.load(f)
    if not isinstance(db, list) or len(db) != 2 or not isinstance(db[1], dict):
        return "not [tree, device info]"
    if db[0]["frame"]["name"] != "ROOT":
        return "root is not ROOT"
    kernels = []

    def walk(n):
        m = n["metrics"]
        if m.get("device_type") == "CPU":
            kernels.append(m["time (ns)"])
        for c in n.get("children", []):
            walk(c)

    walk(db[0])
    gf = ht.GraphFrame.from_literal([db[0]])
    gf.update_inclusive_columns()
    df = gf.dataframe
    if kernels:
        if "time (ns) (inc)" not in df.columns:
            return "no inclusive time column"
        root = df[df["name"] == "ROOT"]["time (ns) (inc)"].iloc[0]
        if int(root) != sum(kernels):
            return f"ROOT inclusive time {root} != sum of kernel times {sum(kernels)}"
    return None


def main(paths):
    bad = 0
    for p in paths:
        err = check(p)
        print(f"{p}: {'ok' if err is None else err}")
        bad += err is not None
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
