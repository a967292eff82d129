#!/usr/bin/env python3
"""No HTTP worker left spinning after hostile traffic: the load of test_hostile.py (the same
seeded 10 000 malformed, random and valid requests from 16 threads, with slowloris and stalled
connections) is replayed; then

- within 2 s after the last request, the libmicrohttpd worker threads are idle: over the next
  second their CPU time (/proc/PID/task/TID/schedstat) adds up to less than 5% of one core;
- no connection of the daemon's port is left in CLOSE-WAIT by then (ss);
- SIGTERM makes perflogd exit 0 (it does not hang: the test waits 10 s at most).

Meant for the ASan build too (scripts/test.sh runs it there), where the load is slowest.
"""
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile as H  # noqa: E402
from perflogtest import Daemon, check, finish  # noqa: E402


def worker_cpu_ns(pid):
    """{tid: CPU ns} of the daemon's libmicrohttpd worker threads: perflog-http once they have
    answered a request (they rename themselves then), MHD-worker before."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if not f.read().startswith(("MHD", "perflog-http")):
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except OSError:
            pass
    return out


def close_wait(port):
    p = subprocess.run(["ss", "-Htn", "state", "close-wait", f"( sport = :{port} )"],
                       capture_output=True, text=True)
    return [line for line in p.stdout.splitlines() if line.strip()]


def main():
    r = random.Random(H.SEED)
    reqs = [H.gen(r, i) for i in range(H.N_REQUESTS)]
    d = Daemon(config=H.CONFIG)
    t = H.Tally()
    try:
        d.start(wait_ticks=2)
        H.run_load(d, t, reqs)
        t_last = time.time()
        print(f"hostile load replayed: {sum(v for k, v in t.c.items() if k.startswith('sent:'))} requests",
              flush=True)
        check(d.proc.poll() is None, "perflogd still runs after the load")
        time.sleep(max(0.0, t_last + 2 - time.time()))
        a = worker_cpu_ns(d.proc.pid)
        time.sleep(1)
        b = worker_cpu_ns(d.proc.pid)
        busy = sum(b[k] - a[k] for k in b if k in a) / 1e9
        check(len(a) >= 1, f"the libmicrohttpd worker threads were found ({len(a)})")
        check(busy < 0.05, f"2 s after the last request the HTTP workers are idle: {busy * 100:.1f}% of "
                           f"a core over 1 s (per thread: "
                           f"{[(b[k] - a[k]) // 1000000 for k in b if k in a]} ms)")
        cw = close_wait(d.port)
        check(not cw, f"no connection left in CLOSE-WAIT ({len(cw)}: {cw[:3]})")
        t0 = time.time()
        d.signal(15)
        try:
            d.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        took = time.time() - t0
        check(d.proc.returncode == 0, f"SIGTERM: exit 0 ({d.proc.returncode}, after {took:.2f} s)")
    finally:
        d.stop()
    finish()


if __name__ == "__main__":
    main()
