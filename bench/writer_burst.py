#!/usr/bin/env python3
"""CPU per tick per thread and the writer's longest burst, for one or more perflogd binaries side
by side in the same window, beside sysstat's `sadc -S XDISK 1`.

usage: bench/writer_burst.py [--root DIR] [--seconds S] [--runs N] [--list MS] PERFLOGD [PERFLOGD ...]

Each run starts every binary (own temporary database, own free port, --root DIR when given) and
one sadc, lets them settle (--settle, default 70 s: past the one-off batch roll-up of the partial
first minute after a start), then for S seconds (default 130: two minute roll-ups) polls the
writer thread's /proc/PID/task/TID/schedstat every millisecond. A burst is a maximal stretch of
polls between which the writer never went to sleep (its voluntary_ctxt_switches did not move);
its length is the on-CPU time it used meanwhile (preemption by another thread does not end it).
Prints per run and the medians over runs: ms per tick of each thread and in all, the ratio to
sadc, and the longest writer burst in ms. With --list MS, also every burst of MS or more, with the
second of the minute (wall clock) at which it began: the minute roll-up's bursts begin at the
minute's first tick, maintenance steps anywhere.
"""
import os, socket, statistics, subprocess, sys, tempfile, time, argparse, json, urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def threads(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            out[name] = tid
        except OSError:
            pass
    return out


def ns(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            return int(f.read().split()[0])
    except OSError:
        return 0


def vcsw(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def all_ns(pid):
    tot = {}
    for name, tid in threads(pid).items():
        tot[name] = tot.get(name, 0) + ns(pid, tid)
    return tot


def writer_work(port):
    """/api/v1/health's writer_work (builds from the seventeenth session on), or {}."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=5) as r:
            return json.load(r).get("writer_work", {})
    except OSError:
        return {}


def one_run(bins, root, secs, settle, list_ms=None):
    work = tempfile.mkdtemp(prefix="perflog-burst-")
    procs = []
    ports = []
    for i, b in enumerate(bins):
        ports.append(free_port())
        cmd = [b, "--db", f"{work}/db{i}.db", "--listen", f"127.0.0.1:{ports[-1]}",
               "--log-level", "warn"]
        if root:
            cmd += ["--root", root]
        procs.append(subprocess.Popen(cmd))
    sadc = subprocess.Popen(["/usr/lib/sysstat/sadc", "-S", "XDISK", "1", str(secs + settle + 20),
                             f"{work}/sa.data"])
    time.sleep(settle)
    writers = []
    for p in procs:
        t = threads(p.pid)
        writers.append(t.get("perflog-write"))
    start = [all_ns(p.pid) for p in procs]
    work0 = [writer_work(p) for p in ports]
    s0 = ns(sadc.pid, sadc.pid)
    t0 = time.monotonic()
    last = [ns(p.pid, w) for p, w in zip(procs, writers)]
    lastsw = [vcsw(p.pid, w) for p, w in zip(procs, writers)]
    cur = [0] * len(procs)
    best = [0] * len(procs)
    began = [0.0] * len(procs)
    listed = [[] for _ in procs]
    while time.monotonic() - t0 < secs:
        time.sleep(0.001)
        for i, (p, w) in enumerate(zip(procs, writers)):
            v = ns(p.pid, w)
            sw = vcsw(p.pid, w)
            if sw == lastsw[i]:
                if cur[i] == 0 and v != last[i]:
                    began[i] = time.time() - 0.001
                cur[i] += v - last[i]
            else:
                if list_ms is not None and cur[i] >= list_ms * 1e6:
                    listed[i].append((began[i], cur[i] / 1e6))
                cur[i] = 0  # it slept in between: what it ran after waking is not known apart
            best[i] = max(best[i], cur[i])
            last[i] = v
            lastsw[i] = sw
    wall = time.monotonic() - t0
    end = [all_ns(p.pid) for p in procs]
    work1 = [writer_work(p) for p in ports]
    s1 = ns(sadc.pid, sadc.pid)
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()
    sadc.terminate()
    sadc.wait()
    subprocess.run(["rm", "-rf", work])
    ticks = wall  # one tick a second
    sadc_ms = (s1 - s0) / 1e6 / ticks
    res = []
    for i in range(len(procs)):
        per = {k: (end[i].get(k, 0) - start[i].get(k, 0)) / 1e6 / ticks for k in end[i]}
        tot = sum(per.values())
        res.append({"total": tot, "threads": per, "ratio": tot / sadc_ms if sadc_ms else 0,
                    "burst": best[i] / 1e6, "sadc": sadc_ms, "listed": listed[i],
                    "work": {k: (v["n"] - work0[i].get(k, {}).get("n", 0),
                                 (v["cpu_ms"] - work0[i].get(k, {}).get("cpu_ms", 0)) / ticks,
                                 v["max_ms"]) for k, v in work1[i].items()}})
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root")
    ap.add_argument("--seconds", type=int, default=130)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--settle", type=int, default=70,
                    help="seconds before the window: past the roll-up of the partial first minute")
    ap.add_argument("--list", type=float, metavar="MS",
                    help="list every writer burst of MS or more, with when it began")
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    runs = []
    for r in range(a.runs):
        res = one_run(a.bins, a.root, a.seconds, a.settle, a.list)
        runs.append(res)
        for b, x in zip(a.bins, res):
            for t, ms in x["listed"]:
                print(f"  {b}: burst of {ms:.1f} ms at :{time.gmtime(t).tm_sec:02d}"
                      f".{int(t % 1 * 1000):03d} ({time.strftime('%H:%M', time.gmtime(t))})")
            if x["work"]:
                # The writer's work by kind over the window (as of each daemon's maintenance
                # nearest the window's ends): calls, ms a tick, and the longest call since start.
                print(f"  {b}: writer's work, calls / ms a tick / longest since start: " +
                      ", ".join(f"{k} {n} / {ms:.3f} / {mx:.1f}"
                                for k, (n, ms, mx) in x["work"].items()))
            th = " ".join(f"{k}={v:.3f}" for k, v in sorted(x["threads"].items()))
            print(f"run {r + 1} {b}: {x['total']:.3f} ms/tick ({th}); sadc {x['sadc']:.3f} ms; "
                  f"ratio {x['ratio']:.2f}; longest writer burst {x['burst']:.1f} ms", flush=True)
    print("medians over %d runs (root %s, %d s each):" % (a.runs, a.root or "/", a.seconds))
    print("| binary | ms/tick all threads | writer ms/tick | sampler ms/tick | sadc ms/tick | ratio | longest writer burst ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for i, b in enumerate(a.bins):
        med = lambda f: statistics.median(f(run[i]) for run in runs)
        print(f"| {b} | {med(lambda x: x['total']):.3f} | "
              f"{med(lambda x: x['threads'].get('perflog-write', 0)):.3f} | "
              f"{med(lambda x: x['threads'].get('perflog-sample', 0)):.3f} | "
              f"{med(lambda x: x['sadc']):.3f} | {med(lambda x: x['ratio']):.2f} | "
              f"{med(lambda x: x['burst']):.1f} |")


if __name__ == "__main__":
    main()
