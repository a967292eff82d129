#!/usr/bin/env python3
"""The counters that explain a copy, on the real machine (docs/design.md §2): a loopback transfer
raises NET_RX softirqs on some core, an fsync-heavy small-file loop raises Disk Flushes/sec, an
O_DIRECT write raises IO Some %. Each workload runs under `perflog run` and reads the /proc file
itself before and after (the test's own reading, not perflog's): perflog's integral over the ticks
that overlap the workload must hold at least the test's own delta, and no more than the test's delta
over a wider window (the workload sleeps 1.2 s before and after, more than a tick). The reports name
the busiest core's dominant softirq (the one that rose most on that core in the test's own reading)
and the disk flushes.

Needs root (O_DIRECT on the test directory's disk, /proc/pressure), a kernel with the diskstats
flush columns (5.5+) and PSI (4.20+): the test fails, with the reason, where they are missing.
Needs PERFLOGD and PERFLOG_BUILD_DIR (for `perflog`)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, integrate, require_root, root_block_device, values  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")

# The workload's own readings: READ(name) returns {key: number} of one /proc file. Four readings,
# at t0, t1 (1.2 s later), t2 (after the work), t3 (1.2 s later), go to argv[1] as JSON.
COMMON = r"""
import json, os, socket, subprocess, sys, threading, time

def softirqs():
    lines = open('/proc/softirqs').read().split('\n')
    cpus = lines[0].split()
    for l in lines[1:]:
        f = l.split()
        if f and f[0].endswith(':'):
            for cpu, v in zip(cpus, f[1:]):
                yield f[0][:-1] + ':' + cpu[3:], int(v)

def diskstats():
    for l in open('/proc/diskstats'):
        f = l.split()
        if len(f) >= 20:
            yield f[2], int(f[18])  # column 19: flush requests completed

def pressure():
    for l in open('/proc/pressure/io'):
        f = l.split()
        yield f[0], int(f[-1].split('=')[1])

READ = {'softirqs': softirqs, 'diskstats': diskstats, 'pressure': pressure}[sys.argv[2]]

def reading():
    return {'t_ms': time.time() * 1000.0, 'v': dict(READ())}

out = [reading()]
time.sleep(1.2)
out.append(reading())
"""

END = r"""
out.append(reading())
time.sleep(1.2)
out.append(reading())
json.dump(out, open(sys.argv[1], 'w'))
"""

# One transfer per CPU, both ends pinned to it (os.sched_setaffinity(0) is the calling thread's):
# loopback receive work is raised as NET_RX on the sending CPU, so every core gets some, and
# whichever core the machine's other loads make the busiest has it too.
LOOPBACK = COMMON + r"""
def transfer(cpu):
    os.sched_setaffinity(0, {cpu})
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(1)
    def sink():
        os.sched_setaffinity(0, {cpu})
        c, _ = srv.accept()
        while c.recv(1 << 20):
            pass
    th = threading.Thread(target=sink)
    th.start()
    cl = socket.create_connection(srv.getsockname())
    chunk = b'x' * (1 << 16)
    for _ in range(8000):  # 500 MiB
        cl.sendall(chunk)
    cl.close()
    th.join()
ts = [threading.Thread(target=transfer, args=(c,)) for c in sorted(os.sched_getaffinity(0))]
for t in ts:
    t.start()
for t in ts:
    t.join()
""" + END


FSYNC = COMMON + r"""
d = sys.argv[3]
for i in range(150):
    with open(os.path.join(d, 'f%03d' % i), 'wb') as f:
        f.write(os.urandom(4096))
        f.flush()
        os.fsync(f.fileno())
""" + END

DIRECT = COMMON + r"""
subprocess.run(['dd', 'if=/dev/zero', 'of=' + sys.argv[3], 'bs=1M', 'count=384', 'oflag=direct',
                'status=none'], check=True)
""" + END


def perflog(daemon, *args, timeout=180):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = daemon.url
    p = subprocess.run([PERFLOG, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def run_workload(d, name, script, what, *extra):
    """perflog run the script; returns (report, [four readings]) or (None, None)."""
    out = os.path.join(d.dir, f"{name}.json")
    code, text, err = perflog(d, "run", "--json", "--label", name, "--settle-timeout", "5", "--",
                              sys.executable, "-c", script, out, what, *extra)
    check(code == 0, f"{name}: perflog run exits 0 ({code}, {err[-300:]!r})")
    try:
        rep = json.loads(text)
        rep = rep.get("report", rep)
        with open(out) as f:
            reads = json.load(f)
    except (ValueError, OSError) as e:
        check(False, f"{name}: the report and the workload's readings are there ({e})")
        return None, None
    return rep, reads


def own_delta(reads, key, a, b):
    return reads[b]["v"].get(key, 0) - reads[a]["v"].get(key, 0)


def perflog_total(d, path, reads, scale=1.0):
    """The counter's integral over the ticks whose interval overlaps [t1, t2] of the readings."""
    t1, t2 = reads[1]["t_ms"], reads[2]["t_ms"]
    rows = [r for r in values(d, path) if r[1] and r[0] > t1 and r[0] - r[1] < t2]
    return integrate(rows) * scale, len(rows)


def check_against_own(name, got, n, inner, outer):
    check(n > 0, f"{name}: perflog has ticks over the workload ({n})")
    # A tick's value is rounded by nothing: its integral is a whole count, so 1% covers rounding
    # of the intervals only.
    check(got >= 0.99 * inner - 1,
          f"{name}: perflog holds at least the test's own delta over the workload ({got:.0f} >= "
          f"{inner})")
    check(got <= 1.01 * outer + 1,
          f"{name}: and no more than the test's own delta over the wider window ({got:.0f} <= "
          f"{outer})")


def test_loopback(d):
    rep, reads = run_workload(d, "loopback", LOOPBACK, "softirqs")
    if not rep:
        return
    cpus = sorted({k.split(":")[1] for k in reads[0]["v"] if k.startswith("NET_RX:")})
    rises = {c: own_delta(reads, f"NET_RX:{c}", 1, 2) for c in cpus}
    core = max(rises, key=rises.get) if rises else None
    check(core is not None and rises[core] > 1000,
          f"the loopback transfer raised NET_RX on some core, by the test's own read ({rises})")
    if core is None:
        return
    got, n = perflog_total(d, f"\\Processor({core})\\NET_RX Softirqs/sec", reads)
    check_against_own(f"NET_RX of core {core}", got, n, rises[core],
                      own_delta(reads, f"NET_RX:{core}", 0, 3))
    busiest = (rep.get("cpu") or {}).get("busiest") or {}
    bcore = busiest.get("instance")
    kinds = ("NET_RX", "NET_TX", "BLOCK", "TIMER")
    if bcore in cpus:
        # The report's window is the whole run in whole ticks: about [t0, t3] of the readings,
        # give or take a tick at each end, so a kind within 20% of the top one over [t0, t3] in
        # the test's reading may come out first in perflog's.
        own = {k: own_delta(reads, f"{k}:{bcore}", 0, 3) for k in kinds}
        top = max(own.values())
        ok = {k for k, v in own.items() if v >= 0.8 * top}
        check(busiest.get("dominant_softirq") in ok,
              f"the report names core {bcore}'s dominant softirq "
              f"({busiest.get('dominant_softirq')}; the test read {own})")
    else:
        check(False, f"the report names a busiest core ({busiest})")
    code, text, _ = perflog(d, "report", str(rep["id"]))
    check(code == 0 and f"core {bcore} mostly {busiest.get('dominant_softirq')}" in text,
          f"perflog report says which softirq the busiest core ran ({text[-600:]!r})")


def test_fsync(d):
    disk = root_block_device(d.dir)
    with open("/proc/diskstats") as f:
        cols = [len(l.split()) for l in f if l.split()[2:3] == [disk]]
    check(cols and cols[0] >= 20,
          f"/proc/diskstats has the flush columns for {disk} (kernel {os.uname().release}: "
          f"{cols} columns; 5.5+ has 20)")
    files = os.path.join(d.dir, "small")
    os.mkdir(files)
    rep, reads = run_workload(d, "fsync", FSYNC, "diskstats", files)
    if not rep:
        return
    inner = own_delta(reads, disk, 1, 2)
    check(inner > 0, f"the fsync loop raised {disk}'s flushes, by the test's own read ({inner})")
    got, n = perflog_total(d, f"\\PhysicalDisk({disk})\\Disk Flushes/sec", reads)
    check_against_own(f"Disk Flushes of {disk}", got, n, inner, own_delta(reads, disk, 0, 3))
    stalls = rep.get("stalls") or {}
    mine = [x for x in rep.get("disks", []) if x.get("instance") == disk]
    check(isinstance(stalls.get("disk_flushes"), int) and stalls["disk_flushes"] > 0 and mine
          and isinstance(mine[0].get("flushes"), int) and mine[0]["flushes"] >= 0.99 * inner - 1,
          f"the report names the flushes ({stalls.get('disk_flushes')} in all, "
          f"{mine[0].get('flushes') if mine else None} on {disk}; the test read {inner})")
    code, text, _ = perflog(d, "report", str(rep["id"]))
    check(code == 0 and f"{stalls.get('disk_flushes')} disk cache flushes in the run" in text,
          f"perflog report says how many flushes the run caused ({text[-600:]!r})")


def test_direct_write(d):
    rep, reads = run_workload(d, "direct", DIRECT, "pressure", os.path.join(d.dir, "direct.bin"))
    if not rep:
        return
    inner = own_delta(reads, "some", 1, 2)
    check(inner > 0, f"the O_DIRECT write stalled tasks on I/O, by the test's own read ({inner} us)")
    # IO Some % x interval (s) / 100 = seconds stalled; in us to compare with total=.
    got, n = perflog_total(d, "\\Pressure\\IO Some %", reads, scale=1e6 / 100.0)
    check_against_own("IO Some", got, n, inner, own_delta(reads, "some", 0, 3))
    before = [v for t, iv, v in values(d, "\\Pressure\\IO Some %")
              if t <= reads[1]["t_ms"] and t > reads[0]["t_ms"]]
    check(isinstance((rep.get("stalls") or {}).get("io_some_pct"), (int, float))
          and rep["stalls"]["io_some_pct"] > 0,
          f"the report gives the run's share of time stalled on I/O ({rep.get('stalls')}; "
          f"the second before: {before})")


def main():
    require_root()
    d = Daemon().start(wait_ticks=2)
    try:
        test_loopback(d)
        test_fsync(d)
        test_direct_write(d)
    finally:
        code = d.stop()
        check(code == 0, f"perflogd exits 0 on SIGTERM (got {code})")
        d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
