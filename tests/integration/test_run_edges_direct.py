#!/usr/bin/env python3
"""A run's edges are exact: a short O_DIRECT dd (64 MiB, usually well under a second, so less
than one tick) inside `perflog run`. The device write bytes between the run's start and end
edges (the report's `edges`, raw /proc/diskstats sectors read by the daemon at those instants)
must equal the test's own /proc/diskstats delta across the command within 2%: whole-tick sums
could not, a run that short straddles at most two ticks. The command itself copies
/proc/diskstats just before and just after the dd, so the ground truth spans the dd and not the
client's wait for the report, when the other writers of a shared machine would count too.

The disk is a loop device of the test's own, backed by a file on the real disk under /var/tmp and
formatted ext4: on a shared machine other processes write to the root disk, and what they wrote
in the few ms between an edge and the command (the client forking, POSTing the end) was enough to
miss 2%. Nobody else writes to this device, so the comparison measures the edges alone. The
target file is written and synced before the run and then overwritten in place (conv=notrunc),
so the run writes data only, no allocation and no journal. Needs root (losetup, mount)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import (Daemon, check, diskstats_bytes, finish, log_lines,  # noqa: E402
                         loop_fs, loop_fs_remove, require_root, root_block_device)

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
SIZE_MIB = 64
LAZY_MIB = 128


def diskstats_write_bytes(path, disk):
    """Sectors written (field 10 of /proc/diskstats) of `disk`, in bytes, from a copy of
    /proc/diskstats at `path`."""
    return diskstats_bytes(disk, 9, path)


def main():
    require_root()
    work, loop, mnt = loop_fs("perflog-it-edges-", 512 << 20)
    target = os.path.join(mnt, "direct.bin")
    disk = root_block_device(mnt)
    check(disk == os.path.basename(loop), f"the test's file system is on its own {loop}")
    # loop devices are excluded by default: this daemon samples them
    d = Daemon(config={"disks": {"exclude": ["ram*", "zram*"]}}).start(wait_ticks=2)
    try:
        with open(target, "wb") as f:
            block = os.urandom(1 << 20)
            for _ in range(SIZE_MIB):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
        subprocess.run(["sync"], check=True)
        time.sleep(0.5)
        env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
        env["PERFLOG_SERVER"] = d.url
        # The copies go to tmpfs: written to the disk they would be the run's own storage writes,
        # dirty for 30 s, and the run's own data would not all be on the device at its end.
        shm = tempfile.mkdtemp(prefix="perflog-it-edges-", dir="/dev/shm")
        before, after = os.path.join(shm, "before"), os.path.join(shm, "after")
        script = (f"cat /proc/diskstats > {before} && dd if=/dev/zero of={target} bs=1M "
                  f"count={SIZE_MIB} oflag=direct conv=notrunc && cat /proc/diskstats > {after}")
        t0 = time.monotonic()
        p = subprocess.run([PERFLOG, "run", "--quiet", "--json", "--label", "direct", "--",
                            "sh", "-c", script],
                           capture_output=True, text=True, timeout=300, env=env)
        wall = time.monotonic() - t0
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            rep = {}
        check(p.returncode == 0 and rep, f"perflog run -- dd exits 0 with a JSON report "
              f"({p.returncode}, {p.stderr!r})")
        truth = diskstats_write_bytes(after, disk) - diskstats_write_bytes(before, disk)
        subprocess.run(["rm", "-rf", shm])
        edges = rep.get("edges") or {}
        start, end = edges.get("start") or {}, edges.get("end") or {}
        sd, ed = (start.get("disks") or {}).get(disk, {}), (end.get("disks") or {}).get(disk, {})
        check("write_bytes" in sd and "write_bytes" in ed,
              f"the start and end edges both read disk {disk}")
        run_bytes = ed.get("write_bytes", 0) - sd.get("write_bytes", 0)
        print(f"# dd of {SIZE_MIB} MiB took {wall:.2f} s under perflog run; ground truth "
              f"{truth} B, edges {run_bytes} B, run {end.get('t_ms', 0) - start.get('t_ms', 0)} ms")
        check(truth >= SIZE_MIB << 20, f"the ground truth saw the dd's {SIZE_MIB} MiB: {truth} B")
        check(abs(run_bytes - truth) <= 0.02 * truth,
              f"the edges' device writes equal the ground truth within 2%: {run_bytes} vs {truth}")
        check(0 < end.get("t_ms", 0) - start.get("t_ms", 0) < wall * 1000 + 1000,
              "the end edge comes after the start edge, within the command's time")
        settle = edges.get("settle") or {}
        check(settle.get("ended_by") == "own_written",
              f"the run settled on its own data, all on the device: {settle.get('ended_by')}")
        own = rep.get("own") or {}
        check(abs((own.get("write_bytes") or 0) - (SIZE_MIB << 20)) <= 2 << 20,
              f"own.write_bytes is the dd's {SIZE_MIB} MiB: {own.get('write_bytes')}")
        kernel = edges.get("kernel") or {}
        with open("/proc/sys/vm/dirty_expire_centisecs") as f:
            expire = int(f.read())
        check(kernel.get("dirty_expire_centisecs") == expire,
              f"the kernel settings at the start: dirty_expire_centisecs {kernel.get('dirty_expire_centisecs')} == {expire}")
        check("io_scan" not in start, "the report's edges leave the private io_scan out")

        # The cap: a buffered dd leaves its 128 MiB dirty (the kernel keeps it some 30 s), so its
        # own data is not on the device when the 1 s settle timeout ends the wait. (The own-data
        # rule counts every whole disk's writes, the other writers' on the root disk too: the
        # dirtied amount is large so that they do not cover it within the second.)
        lazy = os.path.join(work, "lazy.bin")
        p = subprocess.run([PERFLOG, "run", "--quiet", "--json", "--label", "capped",
                            "--settle-timeout", "1", "--", "dd", "if=/dev/zero", f"of={lazy}",
                            "bs=1M", f"count={LAZY_MIB}"],
                           capture_output=True, text=True, timeout=300, env=env)
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            rep = {}
        settle = rep.get("settle") or {}
        check(p.returncode == 0 and settle.get("ended_by") == "timeout" and settle.get("capped"),
              f"a run whose own data is still dirty is settled by the cap, and the report says "
              f"so: {settle}")
        own = rep.get("own") or {}
        check(abs((own.get("write_bytes") or 0) - (LAZY_MIB << 20)) <= 1 << 20,
              f"own.write_bytes is the buffered dd's {LAZY_MIB} MiB, dirtied: "
              f"{own.get('write_bytes')}")

        # A reload that excludes loop devices again: the next run's edges no longer read ours.
        with open(d.config_path, "w") as f:
            json.dump({"disks": {"exclude": ["loop*", "ram*", "zram*"]}}, f)
        d.signal(signal.SIGHUP)
        for _ in range(100):
            if log_lines(d, "configuration reloaded"):
                break
            time.sleep(0.1)
        p = subprocess.run([PERFLOG, "run", "--quiet", "--json", "--", "true"],
                           capture_output=True, text=True, timeout=300, env=env)
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            rep = {}
        disks = ((rep.get("edges") or {}).get("start") or {}).get("disks") or {}
        check(p.returncode == 0 and disks and disk not in disks,
              f"after a reload excluding loop*, the edges read {sorted(disks)}, not {disk}")
    finally:
        d.stop()
        loop_fs_remove(work, loop, mnt)
    d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
