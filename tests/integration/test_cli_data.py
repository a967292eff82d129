#!/usr/bin/env python3
"""`perflog data` against the real perflogd: a range reaching back before the daemon's first tick
prints no rows of '-' from before it; numbers have a fixed precision by kind (bytes whole,
percentages 2 decimals, rates 1 decimal), aligned in columns; --csv gives the same numbers with
ISO 8601 times; --json the server's answer.

Needs PERFLOGD and PERFLOG_BUILD_DIR."""
import csv
import datetime
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, ticks  # noqa: E402
from test_cli_export import CPU_TOTAL, DIRTY, api_data, perflog  # noqa: E402

DISK = "\\PhysicalDisk(_Total)\\Disk Bytes/sec"


def test_before_first_tick(d):
    first = ticks(d)[0][0]
    rc, out, err = perflog(d.url, "data", "--from", "-1h", "--step", "1m", "--utc", DIRTY)
    lines = out.decode().splitlines()[2:]
    times = [datetime.datetime.strptime(l[:19], "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000 for l in lines]
    check(rc == 0 and lines and all(t >= first - 60000 for t in times)
          and not any(l.split()[-1] == "-" for l in lines[:1]),
          f"data --from -1h --step 1m on a daemon started at {first}: {len(lines)} rows, none "
          f"before the first tick's minute ({lines[:3]})")


def decimals(cell):
    return len(cell.split(".")[1]) if "." in cell else 0


def test_precision(d):
    d.wait_ticks(d.tick_count() + 4)
    rc, out, err = perflog(d.url, "data", "--from", "-4s", DIRTY, CPU_TOTAL, DISK)
    lines = out.decode().splitlines()
    rows = [l for l in lines[2:] if l.strip()]
    cells = [re.split(r"\s{2,}", l.strip()) for l in rows]
    ok = rc == 0 and len(rows) >= 3 and all(len(c) == 4 for c in cells)
    check(ok, f"data with bytes, % and a rate: {len(rows)} rows of 4 cells ({lines[:4]})")
    if not ok:
        return
    valued = [c for c in cells if "-" not in c[1:]]
    check(valued and all(decimals(c[1]) == 0 for c in valued), f"bytes are whole ({[c[1] for c in valued]})")
    check(valued and all(decimals(c[2]) == 2 for c in valued), f"% has 2 decimals ({[c[2] for c in valued]})")
    check(valued and all(decimals(c[3]) == 1 for c in valued),
          f"bytes/s has 1 decimal ({[c[3] for c in valued]})")
    check(len({len(l) for l in lines}) == 1,
          f"every line of the table has the same width: columns aligned ({sorted({len(l) for l in lines})})")
    for col in (2, 3):  # the decimal point sits in the same place in every row of a column
        ends = {rows[i].index(c[col]) + c[col].index(".") for i, c in enumerate(cells) if c[col] != "-"
                for _ in [0] if "." in c[col]}
        check(len(ends) == 1, f"column {col}: the decimal points line up ({ends})")


def test_csv_json(d):
    d.wait_ticks(d.tick_count() + 3)
    rc, out, err = perflog(d.url, "data", "--csv", "--from", "-3s", "--to", "-1s", DIRTY, CPU_TOTAL)
    rows = list(csv.reader(io.StringIO(out.decode())))
    ok = rc == 0 and len(rows) >= 2 and rows[0] == ["time", DIRTY, CPU_TOTAL]
    check(ok, f"data --csv: header time + paths ({rows[:2]}, {err.strip()})")
    if not ok:
        return
    times = [int(datetime.datetime.fromisoformat(r[0]).timestamp() * 1000) for r in rows[1:]]
    data = api_data(d, [DIRTY, CPU_TOTAL], min(times), max(times))
    bad = []
    for r, t in zip(rows[1:], times):
        want = data[DIRTY].get(t), data[CPU_TOTAL].get(t)
        got = (r[1], r[2])
        exp = ("" if want[0] is None else "%.0f" % want[0], "" if want[1] is None else "%.2f" % want[1])
        if got != exp:
            bad.append((r, exp))
    check(not bad, f"data --csv: {len(rows) - 1} rows equal /api/v1/data at the fixed precision ({bad[:2]})")
    rc, out, err = perflog(d.url, "data", "--json", "--from", "-3s", DIRTY)
    body = json.loads(out)
    check(rc == 0 and body["series"][0]["path"] == DIRTY, "data --json prints the server's answer")
    rc, out, err = perflog(d.url, "data", "--json", "--csv", DIRTY)
    check(rc == 2, f"--csv and --json together: a usage error (rc {rc})")


def main():
    d = Daemon().start(wait_ticks=3)
    try:
        test_before_first_tick(d)
        test_precision(d)
        test_csv_json(d)
    finally:
        d.stop()
    finish()


if __name__ == "__main__":
    main()
