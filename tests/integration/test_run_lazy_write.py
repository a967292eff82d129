#!/usr/bin/env python3
"""Acceptance scenario 2, lazy writing: a buffered copy (cp) of a 1 GiB file onto a
real block device under `perflog run`. cp returns while most of the copy is still dirty in the
page cache; the kernel writes it back later (vm.dirty_expire_centisecs, 30 s by default, unless
vm.dirty_background_ratio is reached first). The report must show the dirty bytes at exit (> 0),
the tail's duration and the bytes written back in it, and the device's writes over run + tail must
be the 1 GiB copied, +-5%.

The device is the disk under the test directory (/var/tmp), found from the directory's st_dev
(/sys/dev/block); the source file is written and synced before the run, so the only writes to the
device during the run and its tail are the copy's (and the filesystem's journal).
Needs root (a real block device); about 40 s, most of it the kernel's 30 s write-back delay."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import (Daemon, check, finish, require_root, root_block_device,  # noqa: E402
                         values, wait_for_tick_at)

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
SIZE = 1 << 30
SETTLE_TIMEOUT_S = 120


def perflog(d, *args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    p = subprocess.run([PERFLOG, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="perflog-it-lazy-", dir="/var/tmp")
    src, dst = os.path.join(work, "src.bin"), os.path.join(work, "dst.bin")
    try:
        disk = root_block_device(work)
    except OSError as e:
        check(False, f"{work} is on no block device ({e}): this test needs a real disk")
        finish()
    check(os.path.exists(f"/sys/block/{disk}"), f"{work} is on block device {disk}")
    d = Daemon().start(wait_ticks=2)
    started = time.time()
    try:
        with open(src, "wb") as f:
            block = os.urandom(1 << 20)
            for _ in range(SIZE >> 20):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
        subprocess.run(["sync"], check=True)
        # The report counts every tick whose second overlaps the run, so the second before the
        # start must not hold the source's own write-back: wait for a tick a full interval later.
        wait_for_tick_at(d, int(time.time() * 1000) + 1000)
        t0 = time.time()
        rc, out, err = perflog(d, "run", "--quiet", "--json", "--label", "lazy", "--payload", src,
                               "--settle-timeout", str(SETTLE_TIMEOUT_S), "--", "cp", src, dst)
        wall = time.time() - t0
        try:
            rep = json.loads(out)
        except ValueError:
            rep = {}
        check(rc == 0 and rep, f"perflog run -- cp exits 0 with a JSON report ({rc}, {err!r})")
        check(os.path.getsize(dst) == SIZE, "cp copied the whole file")
        mem, pay = rep.get("memory") or {}, rep.get("payload") or {}
        dirty, tail_s = mem.get("dirty_bytes_at_end"), rep.get("tail_s")
        back = mem.get("writeback_tail_bytes")
        check(isinstance(dirty, int) and dirty > 0,
              f"dirty bytes at exit > 0: {dirty} ({(dirty or 0) / 2**20:.0f} MiB)")
        check(isinstance(tail_s, (int, float)) and 0 < tail_s < SETTLE_TIMEOUT_S,
              f"the tail has a duration, under the settle timeout: {tail_s} s")
        check(rep.get("status") == "settled" and rep.get("settled_utc"),
              f"the run settled: {rep.get('status')} at {rep.get('settled_utc')}")
        check(isinstance(back, int) and back > 0,
              f"bytes written back in the tail > 0: {back} ({(back or 0) / 2**20:.0f} MiB)")
        dev = next((x for x in rep.get("disks") or [] if x.get("instance") == disk), {})
        w, tw = dev.get("write_bytes"), dev.get("tail_write_bytes")
        total = (w or 0) + (tw or 0)
        check(isinstance(w, int) and isinstance(tw, int) and abs(total - SIZE) <= 0.05 * SIZE,
              f"{disk} wrote {total} B over run ({w}) + tail ({tw}): 1 GiB +-5% "
              f"({100.0 * total / SIZE:.1f}%)")
        check(isinstance(tw, int) and tw > 0, f"{disk} wrote in the tail: {tw} B")
        print(f"dirty at exit {dirty} B, tail {tail_s} s, written back in tail {back} B, "
              f"on disk at exit {pay.get('on_disk_at_end_pct')}%, duration "
              f"{rep.get('duration_s')} s, perflog run wall {wall:.1f} s", flush=True)
        for t, iv, v in values(d, f"\\PhysicalDisk({disk})\\Disk Write Bytes/sec",
                               int(t0 * 1000) - 2000):
            print(f"  {t} {disk} write {v / 2**20 if v else 0:.0f} MiB/s", flush=True)
        rc, text, err = perflog(d, "report", str(rep.get("id")))
        line = next((l for l in text.splitlines() if l.strip().startswith("dirty at exit")), "")
        check(rc == 0 and "tail" in line and "written back after exit" in line
              and "dirty at exit -" not in line,
              f"perflog report shows dirty at exit, the tail and its write-back: {line.strip()!r}")
    finally:
        for p in (src, dst):
            if os.path.exists(p):
                os.unlink(p)
        os.rmdir(work)
        code = d.stop()
        check(code == 0, f"perflogd exits 0 on SIGTERM (got {code})")
        print(f"wall time {time.time() - started:.1f} s", flush=True)
    finish()


if __name__ == "__main__":
    main()
