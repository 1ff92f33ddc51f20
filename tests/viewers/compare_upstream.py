#!/usr/bin/env python3
"""compare_upstream.py — checks `proton-cli report -m M` against upstream `proton-viewer -m M`.

usage: compare_upstream.py UPSTREAM.txt OURS.txt   (one-metric tree outputs)

Both trees are read into {path of names: value} and must agree node for node. Intended
differences that are normalised away (docs/proton-cli.md, "Compared with proton-viewer"):
  * child order: proton-viewer (hatchet) sorts children by name, we sort by the metric;
  * missing values: hatchet prints "nan" (or 0.000 for an inclusive sum over nothing)
    where we print "-"; "nan" and "-" compare equal here;
  * proton-viewer ends with a blank line; we print notes as "note: ..." lines and
    start with a "# metric [unit] | ..." line naming the columns.
Exit status 0 when the trees agree; differences are listed otherwise.
"""
import sys

CONNECTORS = ("├─ ", "└─ ", "│  ", "   ")


def parse(path):
    nodes, stack = {}, []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith(("note:", "Warning", "# ")):
            continue
        depth = 0
        while line[:3] in CONNECTORS:
            line = line[3:]
            depth += 1
        value, _, name = line.partition(" ")
        if value == "nan":
            value = "-"
        del stack[depth:]
        stack.append(name)
        key = " / ".join(stack)
        while key in nodes:  # same name twice under one parent
            key += "'"
        nodes[key] = value
    return nodes


def main():
    up, ours = parse(sys.argv[1]), parse(sys.argv[2])
    bad = 0
    for k in sorted(set(up) | set(ours)):
        if up.get(k) != ours.get(k):
            print(f"  {k}: proton-viewer {up.get(k, '(absent)')}, proton-cli {ours.get(k, '(absent)')}")
            bad += 1
    if bad:
        print(f"{bad} nodes differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
