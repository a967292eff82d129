#!/usr/bin/env python3
# Count the rows of `duplicates` output whose two sides are in two different layers (top folder;
# cli/http counts as cli), outside tests/fixtures. Usage: duplicates --most 200 | dupcount.py
import re, sys
LAYERS = {"base", "model", "collectors", "storage", "query", "runs", "web", "config", "daemon", "cli"}
n = 0
rows = []
for line in sys.stdin:
    m = re.match(r"\s*D\d+\s+(\S+):\d+-\d+\s+~\s+(\S+):\d+-\d+(.*)", line)
    if not m:
        continue
    a, b, rest = m.group(1), m.group(2), m.group(3)
    if "fixtures/" in a or "fixtures/" in b:
        continue
    la, lb = a.split("/")[0], b.split("/")[0]
    if la in LAYERS and lb in LAYERS and la != lb:
        n += 1
        rows.append(line.rstrip())
print("\n".join(rows))
print(f"cross-layer pairs: {n}")
