#!/usr/bin/env python3
"""A time per operation's roll-up against the kernel's own counters: the minute's write latency is
the writes' total time over their number, as the test reads them from /proc/diskstats.

The test makes a loop device of its own (a file under /var/tmp; nobody else writes to it) and a
perflogd whose clocks run SPEED times faster (the test hook $PERFLOGD_TEST_CLOCK_SPEED: a minute
of ticks in 60 / SPEED s; a time per operation is a quotient of two kernel counters, which the
speed does not change). Two seconds into a minute of the daemon's ticks it reads /proc/diskstats,
writes N blocks straight to the device (O_DIRECT, one at a time), and reads /proc/diskstats again,
all before the minute's last tick. Then:
  a. the minute's `counter_rollups` row of `\\PhysicalDisk(LOOP)\\Avg. Disk sec/Write` has `ops`
     equal to the writes the kernel completed in between, and `avg` equal to their time over
     their number (the test's deltas of write ticks and writes completed);
  b. `/api/v1/data` over the minute with step=60 (the roll-up tier) and step=20 s summed by the
     test (three raw buckets, weighted by their operations) give the same;
  c. most of the minute's ticks had no write (0 s a write each): their mean is under half of the
     latency, so a mean of the ticks (what the roll-ups stored before) would not pass a.
Needs root (losetup).
"""
import mmap
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402

SPEED = 4
WRITES = 1500
BLOCK = 4096


def diskstats(disk):
    """(writes completed, ms spent writing) of `disk` in /proc/diskstats."""
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if p[2] == disk:
                return int(p[7]), int(p[10])
    raise KeyError(disk)


def latest_ms(d):
    status, j = d.get_json("/api/v1/latest?counter=" + urllib.parse.quote("\\Memory\\Dirty Bytes"))
    if status != 200:
        raise RuntimeError(f"/api/v1/latest: {status} {j}")
    return j["t_ms"]


def data(d, path, from_ms, to_ms, step):
    q = urllib.parse.urlencode({"counter": path, "from": f"{from_ms / 1000:.3f}",
                                "to": f"{to_ms / 1000:.3f}", "step": step})
    status, j = d.get_json("/api/v1/data?" + q)
    if status != 200:
        raise RuntimeError(f"/api/v1/data?{q}: {status} {j}")
    return j


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="perflog-it-perop-", dir="/var/tmp")
    image = os.path.join(work, "disk.img")
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    loop = subprocess.run(["losetup", "--find", "--show", image], capture_output=True, text=True,
                          check=True).stdout.strip()
    disk = os.path.basename(loop)
    path = f"\\PhysicalDisk({disk})\\Avg. Disk sec/Write"
    # loop devices are excluded by default: this daemon samples them
    d = Daemon(config={"disks": {"exclude": ["ram*", "zram*"]}},
               env={"PERFLOGD_TEST_CLOCK_SPEED": str(SPEED)})
    try:
        d.start(wait_ticks=1)
        fd = os.open(loop, os.O_WRONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT wants
        buf.write(b"\xa5" * BLOCK)
        done = None
        for attempt in range(3):
            t = latest_ms(d)
            minute = (t // 60000 + 1) * 60000
            while latest_ms(d) < minute + 2000:
                time.sleep(0.01)
            w0, ms0 = diskstats(disk)
            for i in range(WRITES):
                os.pwrite(fd, buf, (i % 16384) * BLOCK)
            w1, ms1 = diskstats(disk)
            after = latest_ms(d)
            if after < minute + 58000:  # the writes were all inside the minute's ticks
                done = (minute, w1 - w0, ms1 - ms0)
                break
            print(f"attempt {attempt + 1}: the writes ran to {after}, past minute {minute}")
        os.close(fd)
        check(done is not None, "the writes fell inside one minute of the daemon's ticks")
        minute, writes, write_ms = done
        want = write_ms * 0.001 / writes
        print(f"minute {minute}: {writes} writes in {write_ms} ms (kernel): {want * 1e6:.1f} us a write")
        check(writes >= WRITES, f"the kernel completed the {WRITES} writes ({writes})")

        # a. the roll-up, once the next minute's first tick has written it
        row = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and row is None:
            rows = d.query("SELECT n, min, avg, max, ops FROM counter_rollups WHERE tier = '1m' "
                           "AND bucket_ms = ? AND path = ?", (minute, path))
            row = rows[0] if rows else None
            if row is None:
                time.sleep(0.2)
        check(row is not None, f"a: the minute's roll-up row of {path}")
        n, mn, avg, mx, ops = row
        print(f"roll-up: n {n}, min {mn}, avg {avg}, max {mx}, ops {ops}")
        check(ops == writes, f"a: ops {ops} = the writes the kernel completed ({writes})")
        check(avg is not None and abs(avg - want) <= 1e-9 * want,
              f"a: avg {avg} s = their time over their number ({want} s)")

        # b. the API: the roll-up tier, and three raw 20 s buckets weighted by their writes
        j = data(d, path, minute, minute + 59999, "60")
        v = j["series"][0]["values"] if j["series"] else []
        check(j["tier"] == "1m" and len(v) == 1 and v[0] is not None and
              abs(v[0] - want) <= 1e-9 * want, f"b: /api/v1/data step=60 ({j['tier']}): {v}")
        j = data(d, path, minute, minute + 59999, "20s")
        lat = j["series"][0]["values"] if j["series"] else []
        jr = data(d, f"\\PhysicalDisk({disk})\\Disk Writes/sec", minute, minute + 59999, "20s")
        rate = jr["series"][0]["values"] if jr["series"] else []
        parts = [(x, r * 20) for x, r in zip(lat, rate) if x is not None and r is not None]
        total = sum(o for _, o in parts)
        got = sum(x * o for x, o in parts) / total if total else None
        check(j["tier"] == "raw" and got is not None and abs(got - want) <= 1e-6 * want,
              f"b: /api/v1/data step=20s ({j['tier']}), buckets weighted by their writes: {got}")

        # c. the ticks' own values: mostly seconds without a write
        j = data(d, path, minute, minute + 59999, "1s")
        ticks = [x for x in (j["series"][0]["values"] if j["series"] else []) if x is not None]
        idle = sum(1 for x in ticks if x == 0)
        mean = sum(ticks) / len(ticks) if ticks else None
        print(f"{len(ticks)} ticks in the minute, {idle} without a write; their mean {mean}")
        # (a tick or two may be missed on a loaded machine: its clocks run 4 times faster)
        check(len(ticks) >= 40 and idle >= 30 and mean is not None and mean < want / 2,
              f"c: {idle} of {len(ticks)} ticks without a write: the ticks' mean {mean} is under "
              f"half the latency, which the roll-up does not report")
    finally:
        d.stop()
        subprocess.run(["losetup", "-d", loop])
        subprocess.run(["rm", "-rf", work])
    finish()


if __name__ == "__main__":
    main()
