#!/usr/bin/env python3
"""perflogd's resident memory while it serves a dashboard, by kind of mapping, for one or two builds
side by side in the same window.

usage: bench/rss_http.py [--seconds S] [--runs N] [--every S] [--base BUILD]... [BUILD]

BUILD (default $PERFLOG_BUILD_DIR, else ./build) and each --base build (for instance main's) each
start N daemons at once (default 2), on their own temporary database and free port,
sampling the real machine. Each is served the dashboard's mix: /api/v1/latest every second,
/api/v1/data for the last 10 minutes of the dashboard's charts every 10 s, /metrics every 15 s,
/api/v1/health every 5 s, and every 5 minutes a run (POST /api/v1/runs, ended 60 s later, its
report read with GET /api/v1/runs/ID once settled).

Every --every seconds (default 60) each daemon's /proc/PID/smaps is read and its resident memory
split by kind: [heap] (the main arena), arenas (glibc's per-thread malloc arenas: an anonymous
mapping followed by its reserved, inaccessible rest), stacks (thread stacks: an anonymous mapping
above a guard page, and [stack]), anon (other anonymous mappings: large malloc blocks, SQLite's
mmap), file (shared libraries and the binary). Printed: a table over time of the medians of each
build, and at the end the growth slope over the second half (least squares, MiB/min) and the RSS at
1 h by that slope (an upper bound when the growth levels off), and the on-CPU seconds of the
whole process and of its writer thread. Nothing is asserted; numbers only.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from bench_ring import slope_mib_per_min, start_serving

KINDS = ["heap", "arenas", "stacks", "anon", "file"]
# The dashboard's charts (web/dashboard/boot.js PL.SPECS), one /api/v1/data request for all.
PATTERNS = ["\\PhysicalDisk(*)\\Disk Read Bytes/sec", "\\PhysicalDisk(*)\\Disk Write Bytes/sec",
            "\\PhysicalDisk(*)\\% Disk Time", "\\Network Interface(*)\\Bytes Received/sec",
            "\\Network Interface(*)\\Bytes Sent/sec", "\\Processor(*)\\% Processor Time",
            "\\Memory\\Dirty Bytes", "\\Memory\\Writeback Bytes", "\\Memory\\Cache Bytes"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smaps_kib(pid):
    """Resident KiB of pid by kind of mapping (KINDS) plus 'rss' and 'dirty' (Private_Dirty)."""
    maps = []  # [start, end, perms, name, rss, private_dirty]
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                maps.append([lo, hi, head[1], head[5] if len(head) > 5 else "", 0, 0])
            elif head[0] == "Rss:":
                maps[-1][4] = int(head[1])
            elif head[0] == "Private_Dirty:":
                maps[-1][5] = int(head[1])
    out = dict.fromkeys(KINDS + ["rss", "dirty"], 0)
    for i, (lo, hi, perms, name, rss, dirty) in enumerate(maps):
        out["rss"] += rss
        out["dirty"] += dirty
        if name == "[heap]":
            kind = "heap"
        elif name == "[stack]":
            kind = "stacks"
        elif name.startswith("/"):
            kind = "file"
        elif name:
            kind = "anon"  # [vvar], [vdso]
        else:
            prev = maps[i - 1] if i else None
            nxt = maps[i + 1] if i + 1 < len(maps) else None
            if nxt and nxt[0] == hi and nxt[2] == "---p" and not nxt[3] and \
                    (nxt[1] - lo) % (64 << 20) == 0:
                kind = "arenas"  # glibc reserves HEAP_MAX_SIZE (64 MiB on 64-bit) per arena
            elif prev and prev[1] == lo and prev[2] == "---p" and not prev[3] and \
                    prev[1] - prev[0] <= 65536:
                kind = "stacks"
            else:
                kind = "anon"
        out[kind] += rss
    return out


def cpu_s(pid):
    """On-CPU seconds of pid (all threads, those gone too), and by live thread's name."""
    def stat(path):
        with open(path) as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        # utime, stime (proc(5)); the name is between the parentheses
        return st[st.index("(") + 1:st.rindex(")")], (int(fields[11]) + int(fields[12])) / tick

    tick = os.sysconf("SC_CLK_TCK")
    by = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm, sec = stat(f"/proc/{pid}/task/{tid}/stat")
        except OSError:
            continue
        by[comm] = by.get(comm, 0.0) + sec
    return stat(f"/proc/{pid}/stat")[1], by


def get(url, data=None, timeout=60):
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()


class Daemon:
    def __init__(self, build, label, work):
        self.label, self.port = label, free_port()
        self.dir = tempfile.mkdtemp(prefix=label.replace(":", "-") + "-", dir=work)
        cmd = [os.path.join(build, "perflogd"), "--db", os.path.join(self.dir, "perflog.db"),
               "--listen", f"127.0.0.1:{self.port}"]
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        self.url = f"http://127.0.0.1:{self.port}"
        self.samples = []  # (seconds since start, smaps_kib())
        self.errors = 0
        self.stop = threading.Event()

    def step(self, k, run):
        """Second k of the dashboard's mix; returns the open or settling run's id."""
        get(f"{self.url}/api/v1/latest")
        if k % 10 == 0:
            qs = "&".join("counter=" + urllib.parse.quote(p) for p in PATTERNS)
            get(f"{self.url}/api/v1/data?{qs}&from=now-600&to=now")
        if k % 15 == 0:
            get(f"{self.url}/metrics")
        if k % 5 == 0:
            get(f"{self.url}/api/v1/health")
        if k % 300 == 30:
            run = json.loads(get(f"{self.url}/api/v1/runs", b'{"label":"bench"}'))["id"]
        elif run is not None and k % 300 == 90:
            get(f"{self.url}/api/v1/runs/{run}/end", b'{"exit_code":0}')
        elif run is not None and k % 300 >= 120 and k % 10 == 0:
            if json.loads(get(f"{self.url}/api/v1/runs/{run}")).get("status") == "settled":
                run = None
        return run

    def serve(self):
        k, run = 0, None
        t0 = time.monotonic()
        while not self.stop.wait(max(0.0, t0 + k + 1 - time.monotonic())):
            k += 1
            try:
                run = self.step(k, run)
            except (OSError, ValueError, KeyError):
                self.errors += 1


def row(name, t, samples):
    med = {k: statistics.median(s[k] for s in samples) / 1024 for k in samples[0]}
    return (f"{name:>5} {t:6.0f} s  RSS {med['rss']:5.1f}  dirty {med['dirty']:5.1f}  " +
            "  ".join(f"{k} {med[k]:4.1f}" for k in KINDS))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.environ.get("PERFLOG_BUILD_DIR", "build"))
    ap.add_argument("--base", action="append", default=[],
                    help="another build to run side by side (e.g. main's); may be repeated")
    ap.add_argument("--seconds", type=int, default=1200)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--every", type=int, default=60)
    a = ap.parse_args()
    builds = [("this", a.build)] + [(f"base{j or ''}", b) for j, b in enumerate(a.base)]
    work = tempfile.mkdtemp(prefix="bench-rss-")
    daemons = [Daemon(b, f"{name}:{i}", work) for name, b in builds for i in range(a.runs)]
    t0 = time.time()
    print(f"# {time.strftime('%FT%TZ', time.gmtime())}, {a.runs} daemons per build, MiB, "
          f"medians per build; work dir {work}", flush=True)
    try:
        start_serving(daemons)
        nxt = 0
        while True:
            t = time.time() - t0
            if t >= nxt:
                for d in daemons:
                    d.samples.append((t, smaps_kib(d.proc.pid)))
                for name, _ in builds:
                    mine = [d for d in daemons if d.label.split(":")[0] == name]
                    print(row(name, t, [d.samples[-1][1] for d in mine]), flush=True)
                nxt += a.every
            if t >= a.seconds:
                break
            time.sleep(min(1.0, max(0.0, nxt - t)))
        print(f"== load {open('/proc/loadavg').read().split()[0]}")
        for name, b in builds:
            mine = [d for d in daemons if d.label.split(":")[0] == name]
            cpu = [cpu_s(d.proc.pid) for d in mine]
            tot = statistics.median(c[0] for c in cpu)
            wr = statistics.median(c[1].get("perflog-write", 0.0) for c in cpu)
            sl = statistics.median(slope_mib_per_min([(t, x["rss"]) for t, x in d.samples])
                                   for d in mine)
            end = statistics.median(d.samples[-1][1]["rss"] for d in mine) / 1024
            print(f"{name} ({b}): RSS {end:.1f} MiB at {a.seconds} s, slope {sl:+.4f} MiB/min "
                  f"(second half), 1 h by the slope {end + sl * (3600 - a.seconds) / 60:.1f} MiB, "
                  f"CPU {tot:.2f} s (writer {wr:.2f} s), request errors "
                  f"{sum(d.errors for d in mine)}")
    finally:
        for d in daemons:
            d.stop.set()
            d.proc.terminate()
        for d in daemons:
            try:
                d.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                d.proc.kill()


if __name__ == "__main__":
    main()
