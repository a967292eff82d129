#!/usr/bin/env python3
"""Tick offsets of one perflogd while another is under HTTP load (bench, not a test).

Daemon A (measured) runs with the sampler_rt_priority given; daemon B, on its own port and
database, gets `wrk -t2 -c64` on /metrics, while `stress-ng --cpu 4` keeps both cores busy with
many runnable nice-0 threads. Prints A's tick offsets from the whole second (max, p99, median),
missed ticks and the load average. With --cpu, instead: two idle daemons side by side in one
window, one per priority, and the CPU time of each one's sampler thread and whole process per
tick (from /proc/PID/task/*/schedstat). Run as root from the build directory's parent:

    PERFLOGD=build/perflogd bench/sched_http_load.py [RT_PRIORITY ...]   (default: 0 1)
    PERFLOGD=build/perflogd bench/sched_http_load.py --cpu [SECONDS]     (default: 60)
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from perflogtest import Daemon, offset_from_second_ms, sleep_until_wall, ticks, wait_for_tick_at  # noqa: E402

SECONDS = int(os.environ.get("BENCH_SECONDS", "30"))


def one(rt_priority):
    workdir = tempfile.mkdtemp(prefix="perflog-bench-sched-", dir="/var/tmp")
    for sub in ("a", "b"):
        os.makedirs(os.path.join(workdir, sub))
    a = Daemon(config={"sampler_rt_priority": rt_priority}, workdir=os.path.join(workdir, "a"))
    b = Daemon(workdir=os.path.join(workdir, "b"))
    loads = []
    try:
        a.start(wait_ticks=2)
        b.start(wait_ticks=1)
        sampler = [l for l in a.log().splitlines() if "sampler" in l]
        sleep_until_wall(math.floor(time.time()) + 1.5)
        wrk = subprocess.Popen(["wrk", "-t2", "-c64", f"-d{SECONDS + 4}s", "--timeout", "10s",
                                f"{b.url}/metrics"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cpu = subprocess.Popen(["stress-ng", "--cpu", "4", "--timeout", f"{SECONDS + 4}s", "--quiet"])
        w0 = (math.floor(time.time()) + 3) * 1000
        w1 = w0 + (SECONDS - 1) * 1000
        while time.time() < w1 / 1000 + 0.2:
            time.sleep(5)
            loads.append(os.getloadavg()[0])
        wrk_out = wrk.communicate(timeout=60)[0]
        cpu.wait(60)
        wait_for_tick_at(a, w1, timeout=10)
        rows = ticks(a, w0 - 500, w1 + 500)
    finally:
        a.stop()
        b.stop()
    offs = sorted(offset_from_second_ms(t) for t, _, _ in rows)
    secs = {round(t / 1000) for t, _, _ in rows}
    missing = SECONDS - len(secs)
    missed = sum(m or 0 for _, _, m in rows)
    p99 = offs[min(len(offs) - 1, math.ceil(0.99 * len(offs)) - 1)] if offs else None
    rps = [l.strip() for l in wrk_out.splitlines() if "Requests/sec" in l]
    print(f"sampler_rt_priority={rt_priority}: {len(rows)} ticks in {SECONDS} s (missing {missing}, "
          f"missed {missed}); offset max {offs[-1] if offs else None} ms, p99 {p99} ms, median "
          f"{offs[len(offs) // 2] if offs else None} ms, >5 ms: {sum(1 for o in offs if o > 5)}; "
          f"load avg(1 min) {min(loads):.1f}..{max(loads):.1f}; B {rps[0] if rps else '?'}; "
          f"{'; '.join(sampler)}", flush=True)
    shutil.rmtree(workdir, ignore_errors=True)


def cpu_ns(pid):
    """(sampler thread, whole process) CPU ns so far."""
    sampler = total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            ns = int(f.read().split()[0])
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().strip() == "perflog-sample":
                sampler += ns
        total += ns
    return sampler, total


def cpu(seconds):
    workdir = tempfile.mkdtemp(prefix="perflog-bench-sched-", dir="/var/tmp")
    ds = {}
    for prio in (0, 1):
        os.makedirs(os.path.join(workdir, str(prio)))
        ds[prio] = Daemon(config={"sampler_rt_priority": prio}, workdir=os.path.join(workdir, str(prio)))
        ds[prio].start(wait_ticks=2)
    try:
        c0 = {p: (cpu_ns(d.proc.pid), d.tick_count()) for p, d in ds.items()}
        time.sleep(seconds)
        c1 = {p: (cpu_ns(d.proc.pid), d.tick_count()) for p, d in ds.items()}
    finally:
        for d in ds.values():
            d.stop()
    for p in ds:
        n = max(1, c1[p][1] - c0[p][1])
        print(f"sampler_rt_priority={p}: {n} ticks; sampler thread {(c1[p][0][0] - c0[p][0][0]) / n / 1e3:.0f} us "
              f"per tick, whole process {(c1[p][0][1] - c0[p][0][1]) / n / 1e3:.0f} us per tick; load avg "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    shutil.rmtree(workdir, ignore_errors=True)


def main():
    if sys.argv[1:2] == ["--cpu"]:
        cpu(int(sys.argv[2]) if len(sys.argv) > 2 else 60)
        return
    for p in (sys.argv[1:] or ["0", "1"]):
        one(int(p))


if __name__ == "__main__":
    main()
