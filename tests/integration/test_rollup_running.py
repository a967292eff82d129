#!/usr/bin/env python3
"""Roll-ups of a real daemon, kept running as ticks are written, equal those computed from the
raw values.

perflogd samples this machine with its clocks SPEED times faster (the test hook
$PERFLOGD_TEST_CLOCK_SPEED), until its ticks span a whole hour after the first hour boundary,
then stops on SIGTERM. Then, from the database file:
  a. every per-minute bucket in `counter_rollups` (tier 1m) has the count, min and max of the same
     minute's per-tick values in `counter_values` exactly, and their average (to 1e-12 relative),
     and every minute with values has its bucket; a time per operation (Avg. Disk sec/Read,
     /Write, /Flush) averages over the operations instead: the minute's total time over its total
     operations, both summed by the test from the raw rows, and its `ops` are that total;
  b. every whole hour's buckets (tier 1h) have the counts, minima and maxima of its minute buckets,
     and the average of their averages weighted by their counts (a time per operation's by their
     operations, which add up);
  c. the first partial minute and hour after the start (rolled up by the batch path) and the
     following ones (rolled up while the ticks were written) both appear.
"""
import math
import os
import signal
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

SPEED = 400
HOUR_MS = 3600000
# the times per operation of the disks: counter -> (total time in ms, operations), raw fields
PER_OP = {"Avg. Disk sec/Read": ("rd_ms", "rd_ios"), "Avg. Disk sec/Write": ("wr_ms", "wr_ios"),
          "Avg. Disk sec/Flush": ("flush_ms", "flush_ios")}


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def main():
    # No compressed tier: at this speed an hour passes in seconds, and Python's sqlite3 (without
    # extension loading on Debian) could not read counter_values over chunked rows.
    d = Daemon(config={"retention": {"chunk_after_minutes": 0}},
               env={"PERFLOGD_TEST_CLOCK_SPEED": str(SPEED)})
    d.start(wait_ticks=1)
    first_ms = d.query("SELECT min(t_ms) FROM ticks")[0][0]
    goal_ms = (first_ms // HOUR_MS + 2) * HOUR_MS + 90000  # a whole hour, and the next minute
    deadline = time.monotonic() + (goal_ms - first_ms) / 1000 / SPEED * 4 + 60
    while time.monotonic() < deadline:
        if (d.query("SELECT max(t_ms) FROM ticks")[0][0] or 0) >= goal_ms:
            break
        time.sleep(1)
    last_ms = d.query("SELECT max(t_ms) FROM ticks")[0][0]
    check(last_ms >= goal_ms, f"ticks from {first_ms} to {last_ms}: past a whole hour")
    check(d.stop(signal.SIGTERM) == 0, "perflogd exits 0 on SIGTERM")

    conn = sqlite3.connect(d.db)
    # Minutes that were over before the last maintenance could roll them: all but the last two.
    end_min = (last_ms // 60000 - 2) * 60000
    raw = {}
    for b, path, n, mn, avg, mx in conn.execute(
            "SELECT (t_ms / 60000) * 60000, path, count(*), min(value), avg(value), max(value) "
            "FROM counter_values WHERE t_ms < ? GROUP BY 1, 2", (end_min,)):
        raw[(b, path)] = (n, mn, avg, mx)
    # a time per operation: the minute's total time over its operations, from the raw rows
    ops = {}
    for counter, (num, den) in PER_OP.items():
        for b, inst, tn, td in conn.execute(
                f"SELECT (t.t_ms / 60000) * 60000, i.name, sum({num}), sum({den}) FROM obj_disk o "
                f"JOIN ticks t ON t.id = o.tick JOIN instances i ON i.id = o.inst WHERE t.t_ms < ? "
                f"AND {num} IS NOT NULL AND {den} IS NOT NULL GROUP BY 1, 2", (end_min,)):
            key = (b, f"\\PhysicalDisk({inst})\\{counter}")
            if key in raw:
                raw[key] = (raw[key][0], raw[key][1], 0.0 if td == 0 else tn * 0.001 / td,
                            raw[key][3])
                ops[key] = td
    check(len(ops) >= 3 * 60, f"a: {len(ops)} minute buckets of the disks' times per operation")
    rolled = {}
    rolled_ops = {}
    for b, path, n, mn, avg, mx, op in conn.execute(
            "SELECT bucket_ms, path, n, min, avg, max, ops FROM counter_rollups WHERE tier = '1m' "
            "AND bucket_ms < ?", (end_min,)):
        rolled[(b, path)] = (n, mn, avg, mx)
        if op is not None:
            rolled_ops[(b, path)] = op
    check(rolled_ops == ops, "a: each time per operation's ops are its minute's operations "
          f"({[(k, ops[k], rolled_ops.get(k)) for k in ops if rolled_ops.get(k) != ops[k]][:3]})")
    missing = [k for k in raw if k not in rolled]
    extra = [k for k in rolled if k not in raw]
    bad = [k for k in raw if k in rolled and not (
        raw[k][0] == rolled[k][0] and raw[k][1] == rolled[k][1] and raw[k][3] == rolled[k][3] and
        close(raw[k][2], rolled[k][2]))]
    minutes = sorted({k[0] for k in raw})
    check(len(minutes) >= 60, f"a: {len(minutes)} minutes, {len(raw)} minute buckets compared")
    check(not missing, f"a: no minute bucket missing ({missing[:3]})")
    check(not extra, f"a: no minute bucket without values ({extra[:3]})")
    check(not bad, f"a: every minute bucket equals its raw values ({[(k, raw[k], rolled[k]) for k in bad[:2]]})")

    first_hour = (first_ms // HOUR_MS) * HOUR_MS
    whole = [first_hour + HOUR_MS]
    expect = {}
    for h, path, n, mn, avg, mx, sw, w in conn.execute(
            "SELECT (bucket_ms / 3600000) * 3600000, path, sum(n), min(min), "
            "sum(avg * n) / sum(CASE WHEN avg IS NOT NULL THEN n END), max(max), "
            "total(avg * ops), sum(ops) "
            "FROM counter_rollups WHERE tier = '1m' AND bucket_ms >= ? AND bucket_ms < ? "
            "GROUP BY 1, 2", (first_hour, whole[-1] + HOUR_MS)):
        if w is not None:  # a time per operation: weighted by the operations
            avg = 0.0 if w == 0 else sw / w
        expect[(h, path)] = (n, mn, avg, mx)
    got = {}
    for h, path, n, mn, avg, mx in conn.execute(
            "SELECT bucket_ms, path, n, min, avg, max FROM counter_rollups WHERE tier = '1h' AND "
            "bucket_ms >= ? AND bucket_ms < ?", (first_hour, whole[-1] + HOUR_MS)):
        got[(h, path)] = (n, mn, avg, mx)
    for h in [first_hour] + whole:
        e = {k: v for k, v in expect.items() if k[0] == h}
        g = {k: v for k, v in got.items() if k[0] == h}
        diff = [k for k in e if k not in g or not (
            e[k][0] == g[k][0] and e[k][1] == g[k][1] and e[k][3] == g[k][3] and
            close(e[k][2], g[k][2]))]
        check(e and set(e) == set(g) and not diff,
              f"b: hour {h}: {len(g)} buckets equal the roll-up of its minutes ({diff[:2]})")
    check(first_ms % 60000 != 0 and (first_ms // 60000) * 60000 in minutes,
          "c: the first, partial minute is rolled up too")
    conn.close()
    finish()


if __name__ == "__main__":
    main()
