#!/usr/bin/env python3
"""Memory of the newest ticks: perflogd's RSS over time while it serves HTTP, and the latency of
/api/v1/data for the last 10 minutes, for one or two builds side by side in the same window.

usage: bench/bench_ring.py [--seconds S] [--runs N] [--root DIR] [--base BUILD] [BUILD]

BUILD (default $PERFLOG_BUILD_DIR, else ./build) and, with --base, a second build (for instance main's)
each start N daemons at once (default 3), on their own temporary database and free port, sampling the
real machine (or --root DIR: a tree from `bench_growth DIR`, e.g. DIR/root-8 is 256 CPUs, 1000
disks, 1000 interfaces). While they run, each is served like a dashboard would: /api/v1/latest
every second and /metrics every 5 s. VmRSS is read every 10 s. At the end, each daemon answers 11
sequential /api/v1/data requests for the last 10 minutes of the _Total disk, processor and
interface counters and of Memory (COUNTERS, 30 series); the median of those times is its latency. Printed per daemon and as medians over the
runs of each build: RSS at 60 s and at the end, the growth slope over the second half (least
squares, MiB/min), the data latency (ms), the RSS after those requests, and the RSS at 1 h by the
slope (a linear extrapolation: an upper bound when the growth levels off). Nothing is asserted; numbers only.
"""
import argparse
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

# What a dashboard's graphs ask for; within the point limit at 256 CPUs and 1000 disks too.
COUNTERS = ["\\PhysicalDisk(_Total)\\*", "\\Processor(_Total)\\*", "\\Memory\\*",
            "\\Network Interface(_Total)\\*"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def get(url, timeout=60):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


class Daemon:
    def __init__(self, build, label, work, root):
        self.label, self.port = label, free_port()
        self.dir = tempfile.mkdtemp(prefix=label + "-", dir=work)
        cmd = [os.path.join(build, "perflogd"), "--db", os.path.join(self.dir, "perflog.db"),
               "--listen", f"127.0.0.1:{self.port}"] + (["--root", root] if root else [])
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        self.url = f"http://127.0.0.1:{self.port}"
        self.samples = []  # (seconds since start, KiB)
        self.stop = threading.Event()

    def serve(self):
        """A dashboard's load: /latest every second, /metrics every 5 s."""
        k = 0
        q = urllib.parse.quote("\\PhysicalDisk(*)\\*")
        while not self.stop.wait(1.0):
            try:
                get(f"{self.url}/api/v1/latest?counter={q}")
                if k % 5 == 0:
                    get(f"{self.url}/metrics")
            except OSError:
                pass
            k += 1

    def data_ms(self, n=11):
        qs = "&".join("counter=" + urllib.parse.quote(c) for c in COUNTERS)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            get(f"{self.url}/api/v1/data?{qs}&from=now-600&to=now")
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)


def slope_mib_per_min(samples):
    """Least-squares slope of the second half of the samples, MiB per minute."""
    half = [s for s in samples if s[0] >= samples[-1][0] / 2]
    if len(half) < 2:
        return float("nan")
    mx = statistics.mean(t for t, _ in half)
    my = statistics.mean(v for _, v in half)
    den = sum((t - mx) ** 2 for t, _ in half)
    return sum((t - mx) * (v - my) for t, v in half) / den * 60 / 1024 if den else float("nan")


def start_serving(daemons):
    """Once the daemons are up (3 s), a thread runs each one's serve(); exits if one is gone."""
    time.sleep(3)
    for d in daemons:
        if d.proc.poll() is not None:
            sys.exit(f"{d.label} exited; see {d.dir}/log")
        threading.Thread(target=d.serve, daemon=True).start()


def at(samples, t):
    return min(samples, key=lambda s: abs(s[0] - t))[1] / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.environ.get("PERFLOG_BUILD_DIR", "build"))
    ap.add_argument("--base", help="a second build to run side by side (e.g. main's)")
    ap.add_argument("--seconds", type=int, default=360)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--root", help="read /proc and /sys below DIR (a bench_growth tree)")
    a = ap.parse_args()
    builds = [("this", a.build)] + ([("base", a.base)] if a.base else [])
    work = tempfile.mkdtemp(prefix="bench-ring-")
    daemons = [Daemon(b, f"{name}{i}", work, a.root) for name, b in builds for i in range(a.runs)]
    t0 = time.time()
    try:
        start_serving(daemons)
        while time.time() - t0 < a.seconds:
            for d in daemons:
                d.samples.append((time.time() - t0, rss_kib(d.proc.pid)))
            time.sleep(10)
        for d in daemons:
            d.samples.append((time.time() - t0, rss_kib(d.proc.pid)))
            d.stop.set()
        res = {}
        for d in daemons:
            try:
                ms = d.data_ms()
            except OSError as e:
                print(f"{d.label}: /api/v1/data failed: {e}", flush=True)
                ms = float("nan")
            after = rss_kib(d.proc.pid) / 1024
            row = (at(d.samples, 60), d.samples[-1][1] / 1024, slope_mib_per_min(d.samples), ms,
                   after)
            res.setdefault(d.label.rstrip("0123456789"), []).append(row)
            print(f"{d.label}: RSS {row[0]:.1f} MiB at 60 s, {row[1]:.1f} MiB at "
                  f"{d.samples[-1][0]:.0f} s, slope {row[2]:+.3f} MiB/min (second half), "
                  f"/api/v1/data last 10 min {row[3]:.1f} ms (median of 11), RSS after them "
                  f"{row[4]:.1f} MiB", flush=True)
        print(f"== medians of {a.runs} ({time.strftime('%FT%TZ', time.gmtime())}, root "
              f"{a.root or '/'}, {a.seconds} s, load {open('/proc/loadavg').read().split()[0]})")
        for name, b in builds:
            rows = res[name]
            med = [statistics.median(r[i] for r in rows) for i in range(5)]
            print(f"{name} ({b}): RSS {med[0]:.1f} MiB at 60 s, {med[1]:.1f} MiB at end, slope "
                  f"{med[2]:+.3f} MiB/min, data {med[3]:.1f} ms, {med[4]:.1f} MiB after; 1 h by the slope: "
                  f"{med[1] + med[2] * (60 - a.seconds / 60):.1f} MiB")
    finally:
        for d in daemons:
            d.stop.set()
            if d.proc.poll() is None:
                d.proc.terminate()
                d.proc.wait(30)
        if not os.environ.get("BENCH_KEEP"):
            subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
