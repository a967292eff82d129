#!/usr/bin/env python3
"""Scheduler of the real perflogd at the default 1000 ms interval (docs/design.md §3).

What is asserted is the scheduler's behaviour, not the machine's wake-up latency: ticks on the
whole-second grid (the median offset 1 ms or less while idle), one tick in every second and none
twice, each tick's interval_ms the time since the tick before it, ticks.missed 0, no tick later
than LATE_LIMIT_MS (a tenth of the interval: a tick that waited for the database, the writer or an
HTTP client would be a second late or missing) and the sampler thread really at SCHED_FIFO priority
1 (/proc/PID/task/TID/stat), which is what keeps ticks within a millisecond on a loaded machine.
How late ticks are is printed (max offset, ticks beyond the 5 ms goal) and measured in bench/
(bench/sched_http_load.py), never asserted: the first tick of a CI run once started 11 ms late on a
virtual machine, which a test cannot tell from a slow host.

One daemon, four phases:
  a. idle: the first 31 ticks (30 intervals), the first interval_ms NULL;
  b. writer held up: another connection holds BEGIN EXCLUSIVE on the database for 10 s. No tick
     taken during the lock gets committed while it is held (so the lock really blocked the writer);
     after the release every second of the window has its tick, on schedule, none missed (how soon
     they are committed is printed); the log mentions the lock once, not once per retry;
  c. saturated: stress-ng --cpu N --io 1 plus O_DIRECT dd writes for 35 s; over 30 s inside it every
     second has its tick, none missed, and the machine really was saturated;
  d. another process's HTTP load: a second perflogd on its own port and database under
     `wrk -t2 -c64` on /metrics, plus stress-ng --cpu 2N (many runnable threads, network softirqs),
     for 34 s: over 30 s inside it every second has its tick, none missed, wrk really was served and
     the machine saturated.
"""
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import (Daemon, check, finish, offset_from_second_ms, require_root,  # noqa: E402
                         sleep_until_wall, ticks, values, wait_for_tick_at)

IDLE_TICKS = 31      # 30 intervals
LOCK_S = 10.0
STRESS_S = 35
STRESS_WINDOW = 30   # ticks checked inside the stress run
HTTP_S = 34
HTTP_WINDOW = 30     # ticks checked inside the HTTP load
LATE_LIMIT_MS = 100  # a tenth of the interval: beyond it a tick waited for something
GOAL_MS = 5          # printed, measured in bench/sched_http_load.py


def describe(rows):
    offs = [offset_from_second_ms(t) for t, _, _ in rows]
    ivs = [iv for _, iv, _ in rows if iv is not None]
    diffs = [b[0] - a[0] for a, b in zip(rows, rows[1:])]
    return offs, ivs, diffs


def busy_avg(daemon, w0, w1):
    """Average _Total % Processor Time the daemon recorded over [w0, w1] ms."""
    busy = values(daemon, "\\Processor(_Total)\\% Processor Time", w0, w1)
    return sum(v for _, _, v in busy if v is not None) / max(1, len(busy))


def check_schedule(label, rows, off_median=None, expect_n=None):
    """The common checks on a run of consecutive ticks [(t_ms, interval_ms, missed)]."""
    if not check(len(rows) >= 2, f"{label}: ticks to check ({len(rows)})"):
        return
    offs, ivs, diffs = describe(rows)
    med, mx = statistics.median(offs), max(offs)
    print(f"{label}: {len(rows)} ticks {rows[0][0]}..{rows[-1][0]}; offset from the whole second "
          f"median {med} ms, max {mx} ms, {sum(1 for o in offs if o > GOAL_MS)} beyond the {GOAL_MS} ms goal; "
          f"intervals {min(ivs) if ivs else None}..{max(ivs) if ivs else None} ms; "
          f"t_ms steps {min(diffs)}..{max(diffs)} ms", flush=True)
    if expect_n is not None:
        check(len(rows) == expect_n, f"{label}: {expect_n} ticks expected, {len(rows)} stored")
    secs = [round(t / 1000) for t, _, _ in rows]
    check(secs == list(range(secs[0], secs[0] + len(secs))),
          f"{label}: one tick per second, {secs[-1] - secs[0] + 1} seconds elapsed, {len(secs)} ticks")
    if off_median is not None:
        check(med <= off_median, f"{label}: on the whole-second grid: median offset {med} ms <= {off_median} ms")
    check(mx <= LATE_LIMIT_MS, f"{label}: no tick waited: every t_ms within {LATE_LIMIT_MS} ms of its second "
                               f"(max {mx} ms)")
    # interval_ms is the monotonic time since the tick before; t_ms the wall clock's: both in whole ms
    bad = [(b[0], b[1], b[0] - a[0]) for a, b in zip(rows, rows[1:]) if b[1] is None or abs(b[1] - (b[0] - a[0])) > 2]
    check(not bad, f"{label}: every interval_ms is the time since the tick before (t_ms, interval_ms, "
                   f"t_ms step; outside ±2 ms: {bad[:5]})")
    missed = [(t, m) for t, _, m in rows if m]
    check(not missed, f"{label}: ticks.missed is 0 everywhere (non-zero: {missed[:5]})")


def sampler_policy(daemon):
    """(policy, rt_priority) of the daemon's perflog-sample thread, from /proc/PID/task/TID/stat."""
    task = f"/proc/{daemon.proc.pid}/task"
    for tid in os.listdir(task):
        try:
            with open(f"{task}/{tid}/comm") as f:
                if f.read().strip() != "perflog-sample":
                    continue
            with open(f"{task}/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[0] is field 3 (state): rt_priority is field 40, policy field 41 (proc(5))
        return int(fields[38]), int(fields[37])
    return None, None


def main():
    require_root()
    for tool in ("stress-ng", "wrk"):
        if not shutil.which(tool):
            check(False, f"{tool} is installed")
            finish()

    workdir = tempfile.mkdtemp(prefix="perflog-scheduler-", dir="/var/tmp")
    daemon = Daemon(workdir=workdir)
    os.makedirs(os.path.join(workdir, "other"))
    other = Daemon(workdir=os.path.join(workdir, "other"))
    stress = wrk = None
    dd_stop = threading.Event()
    try:
        daemon.start(wait_ticks=1)
        print("\n".join(l for l in daemon.log().splitlines() if "sampler" in l), flush=True)
        policy, prio = sampler_policy(daemon)
        check((policy, prio) == (os.SCHED_FIFO, 1),
              f"the sampler thread runs at SCHED_FIFO priority 1 (policy {policy}, priority {prio})")

        # a. idle
        daemon.wait_ticks(IDLE_TICKS + 1, timeout=IDLE_TICKS + 15)
        rows = ticks(daemon)[:IDLE_TICKS]
        check(rows[0][1] is None, f"idle: the first tick's interval_ms is NULL (got {rows[0][1]})")
        check_schedule("idle", rows, off_median=1, expect_n=IDLE_TICKS)

        # b. the database held by another writer for LOCK_S seconds
        log_before = len(daemon.log())
        sleep_until_wall(math.floor(time.time()) + 1.5)
        conn = sqlite3.connect(daemon.db, timeout=10, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        tl0 = time.time()
        print(f"lock: BEGIN EXCLUSIVE held from {tl0:.3f}", flush=True)
        time.sleep(LOCK_S - 1.0)
        newest_during = daemon.query("SELECT max(t_ms) FROM ticks")[0][0]
        time.sleep(1.0)
        conn.execute("COMMIT")
        tl1 = time.time()
        conn.close()
        print(f"lock: released at {tl1:.3f} after {tl1 - tl0:.3f} s", flush=True)
        check(newest_during < (math.floor(tl0) + 1) * 1000,
              f"lock: no tick taken during the lock was committed while it was held "
              f"(newest committed {newest_during}, lock from {tl0 * 1000:.0f})")
        last_needed = (math.ceil(tl1) + 1) * 1000
        # How soon is printed, not asserted (a slow host is not a writer that waits): what is
        # asserted is that they come at all, and below, every second of the window on schedule.
        wait_for_tick_at(daemon, last_needed, timeout=60)
        catch_up = time.time() - tl1
        print(f"lock: the held ticks were in the database {catch_up:.2f} s after the release", flush=True)
        rows = ticks(daemon, (math.floor(tl0) - 2) * 1000 - 500, last_needed + 500)
        check_schedule("lock", rows, off_median=1,
                       expect_n=(last_needed // 1000) - (math.floor(tl0) - 2) + 1)
        new_log = daemon.log()[log_before:]
        lock_lines = [l for l in new_log.splitlines() if "lock" in l.lower()]
        print("lock: log since the lock:\n  " + "\n  ".join(new_log.splitlines()), flush=True)
        check(len(lock_lines) == 1, f"lock: the log mentions the lock once ({len(lock_lines)} lines)")

        # c. saturated machine
        ncpu = os.cpu_count() or 1
        ddfile = os.path.join(workdir, "dd.bin")
        dd_runs = [0]

        def dd_loop():
            while not dd_stop.is_set():
                # 256 MiB O_DIRECT bursts with pauses: a writing disk, not tens of GB of wear per run
                subprocess.run(["dd", "if=/dev/zero", f"of={ddfile}", "bs=1M", "count=256", "oflag=direct",
                                "conv=notrunc"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                dd_runs[0] += 1
                dd_stop.wait(1.0)

        sleep_until_wall(math.floor(time.time()) + 1.5)
        ts0 = time.time()
        stress = subprocess.Popen(["stress-ng", "--cpu", str(ncpu), "--io", "1", "--timeout", f"{STRESS_S}s",
                                   "--temp-path", workdir, "--quiet"])
        dd = threading.Thread(target=dd_loop)
        dd.start()
        w0 = (math.floor(ts0) + 3) * 1000
        w1 = w0 + (STRESS_WINDOW - 1) * 1000
        sleep_until_wall(w1 / 1000 + 0.2)
        dd_stop.set()
        stress.wait(STRESS_S + 30)
        stress = None
        dd.join(60)
        print(f"stress: stress-ng --cpu {ncpu} --io 1 for {STRESS_S}s with {dd_runs[0]} dd runs of 256 MiB "
              f"O_DIRECT meanwhile", flush=True)
        wait_for_tick_at(daemon, w1, timeout=10)
        rows = ticks(daemon, w0 - 500, w1 + 500)
        check_schedule("stress", rows, expect_n=STRESS_WINDOW)
        avg = busy_avg(daemon, w0, w1)
        check(avg >= 90.0, f"stress: the machine was saturated: average _Total % Processor Time {avg:.1f} (>= 90)")

        # d. another perflogd under wrk -c64 and CPU-heavy threads: the load that once made ticks
        # hundreds of ms late although stress-ng alone did not
        other.start(wait_ticks=1)
        sleep_until_wall(math.floor(time.time()) + 1.5)
        th0 = time.time()
        wrk = subprocess.Popen(["wrk", "-t2", "-c64", f"-d{HTTP_S}s", "--timeout", "10s", f"{other.url}/metrics"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        stress = subprocess.Popen(["stress-ng", "--cpu", str(2 * ncpu), "--timeout", f"{HTTP_S}s", "--quiet"])
        w0 = (math.floor(th0) + 3) * 1000
        w1 = w0 + (HTTP_WINDOW - 1) * 1000
        loads = []
        while time.time() < w1 / 1000 + 0.2:
            time.sleep(min(5.0, max(0.0, w1 / 1000 + 0.2 - time.time())))
            loads.append(os.getloadavg()[0])
        wrk_out = wrk.communicate(timeout=HTTP_S + 30)[0]
        wrk = None
        stress.wait(HTTP_S + 30)
        stress = None
        other.stop()
        rps = [float(l.split()[1]) for l in wrk_out.splitlines() if l.startswith("Requests/sec:")]
        print(f"http: wrk -t2 -c64 on a second perflogd: {rps[0] if rps else '?'} requests/s; stress-ng --cpu "
              f"{2 * ncpu}; load average {min(loads):.1f}..{max(loads):.1f}", flush=True)
        check(rps and rps[0] >= 100, f"http: the second perflogd was really under load ({rps} requests/s >= 100)")
        wait_for_tick_at(daemon, w1, timeout=10)
        rows = ticks(daemon, w0 - 500, w1 + 500)
        check_schedule("http", rows, expect_n=HTTP_WINDOW)
        avg = busy_avg(daemon, w0, w1)
        check(avg >= 90.0, f"http: the machine was saturated: average _Total % Processor Time {avg:.1f} (>= 90)")
    finally:
        dd_stop.set()
        for p in (stress, wrk):
            if p:
                p.kill()
                p.wait()
        if other.proc and other.proc.poll() is None:
            other.stop()
        rc = daemon.stop()
    check(rc == 0, f"perflogd exits 0 on SIGTERM (got {rc})")
    rows = ticks(daemon)
    check(not any(m for _, _, m in rows), f"no tick of the whole run ({len(rows)} ticks) was missed")
    shutil.rmtree(workdir, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
