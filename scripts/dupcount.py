#!/usr/bin/env python3
# Count the rows of `duplicates` output whose two sides are in two different layers, outside
# tests/fixtures. A file's layer is the layer folder that is its longest prefix (storage/query/x.c
# is storage/query's, collectors/linux/x.c collectors'). Usage: duplicates --most 200 | dupcount.py
import re, sys
LAYERS = ["base", "collectors/model", "collectors", "storage", "storage/query", "daemon/runs", "web",
          "config", "daemon", "cli/http", "cli"]


def layer_of(path):
    best = None
    for l in LAYERS:
        if path.startswith(l + "/") and (best is None or len(l) > len(best)):
            best = l
    return best


n = 0
rows = []
for line in sys.stdin:
    m = re.match(r"\s*D\d+\s+(\S+):\d+-\d+\s+~\s+(\S+):\d+-\d+(.*)", line)
    if not m:
        continue
    a, b = m.group(1), m.group(2)
    if "fixtures/" in a or "fixtures/" in b:
        continue
    la, lb = layer_of(a), layer_of(b)
    if la and lb and la != lb:
        n += 1
        rows.append(line.rstrip())
print("\n".join(rows))
print(f"cross-layer pairs: {n}")
