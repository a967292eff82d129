#!/usr/bin/env python3
"""SQLite's memory on the writer's connection, the heap in use and VmRSS, for one or two builds side
by side in one window.

usage: bench/writer_mem.py [--at S[,S...]] [--runs N] [--root DIR] [--base BUILD] [BUILD]

BUILD (default $PERFLOG_BUILD_DIR, else ./build) and, with --base, a second build (for instance
main's) each start N daemons at once (default 3), on their own temporary database and free port,
sampling the real machine (or --root DIR, a bench_growth tree). At each of the times --at (seconds
after start, default 60 and 150: before and after the first whole minute the running roll-ups
write), each daemon's /api/v1/health memory (heap_in_use_bytes; writer_sqlite's statements, schema
and cache bytes where the build has it) and VmRSS (/proc/PID/status) are read. Printed per daemon
and as medians per build, KiB. Nothing is served but /api/v1/health; numbers only.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import urllib.request

from bench_ring import free_port, rss_kib as vm_rss_kib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.environ.get("PERFLOG_BUILD_DIR", "build"))
    ap.add_argument("--base", help="a second build to run side by side (e.g. main's)")
    ap.add_argument("--at", default="60,150")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--root")
    a = ap.parse_args()
    times = [int(x) for x in a.at.split(",")]
    builds = [("this", a.build)] + ([("base", a.base)] if a.base else [])
    work = tempfile.mkdtemp(prefix="bench-writer-mem-")
    daemons = []
    for name, b in builds:
        for i in range(a.runs):
            port = free_port()
            d = tempfile.mkdtemp(prefix=f"{name}{i}-", dir=work)
            log = open(os.path.join(d, "log"), "wb")
            cmd = [os.path.join(b, "perflogd"), "--db", os.path.join(d, "perflog.db"),
                   "--listen", f"127.0.0.1:{port}"] + (["--root", a.root] if a.root else [])
            daemons.append((name, i, port, subprocess.Popen(cmd, stdout=log, stderr=log)))
    t0 = time.monotonic()
    rows = {}  # (name, t) -> list of dicts
    try:
        for t in times:
            time.sleep(max(0, t0 + t - time.monotonic()))
            for name, i, port, p in daemons:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health",
                                            timeout=30) as r:
                    mem = json.load(r)["memory"]
                ws = mem.get("writer_sqlite") or {}
                row = {"heap": mem["heap_in_use_bytes"] / 1024, "rss": vm_rss_kib(p.pid),
                       "stmt": ws.get("statements_bytes", float("nan")) / 1024,
                       "schema": ws.get("schema_bytes", float("nan")) / 1024,
                       "cache": ws.get("cache_bytes", float("nan")) / 1024}
                rows.setdefault((name, t), []).append(row)
                print(f"{name}{i} at {t} s: " + ", ".join(f"{k} {v:.0f}" for k, v in row.items()),
                      flush=True)
    finally:
        for _, _, _, p in daemons:
            p.terminate()
        for _, _, _, p in daemons:
            p.wait(timeout=60)
    print(f"== medians of {a.runs}, KiB ({time.strftime('%FT%TZ', time.gmtime())}, root "
          f"{a.root or '/'}, load {open('/proc/loadavg').read().split()[0]})")
    print("build  at_s  writer_stmt  writer_schema  writer_cache  heap_in_use  VmRSS")
    for (name, t), rs in rows.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print(f"{name:5} {t:5} {med['stmt']:12.0f} {med['schema']:14.0f} {med['cache']:13.0f} "
              f"{med['heap']:12.0f} {med['rss']:6.0f}")
    subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    main()
