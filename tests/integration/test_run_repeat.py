#!/usr/bin/env python3
"""perflog run --repeat 3 --cold -- cat FILE: three runs labelled "cat #1".."cat #3", each cold,
then their comparison with the median, min and max of every figure.

Cold is checked against the test's own ground truth, not perflog's numbers: FILE is on an ext4
file system on a loop device of the test's own (nobody else reads it), and the device's read bytes
in /proc/diskstats across the whole command must be at least three times FILE's size, which only
three reads from the device give. Each report's cache-served share must be about 0%. A warm run
afterwards (no --cold, one eighth of FILE evicted) is the control: its share must be what the
devices' read bytes leave of FILE (about 87.5%), so the cold checks can fail. Without root,
--cold is an error (exit 2) before any run is opened. Needs root (losetup, mount, drop_caches).
Nothing is timed."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import (Daemon, check, diskstats_bytes, finish, loop_fs,  # noqa: E402
                         loop_fs_remove, require_root, root_block_device)

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
SIZE = 48 << 20


def device_read_bytes(disk):
    """Sectors read (field 6 of /proc/diskstats) of `disk`, in bytes."""
    return diskstats_bytes(disk, 5)


def main():
    require_root()
    work, loop, mnt = loop_fs("perflog-it-repeat-", 256 << 20)
    d = None
    try:
        disk = root_block_device(mnt)
        check(disk == os.path.basename(loop), f"the test's file system is on its own {loop}")
        target = os.path.join(mnt, "data.bin")
        with open(target, "wb") as f:
            f.write(os.urandom(SIZE))
            f.flush()
            os.fsync(f.fileno())
        d = Daemon(config={"disks": {"exclude": ["ram*", "zram*"]}}).start(wait_ticks=2)
        env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
        env["PERFLOG_SERVER"] = d.url

        # not root: exit 2, and nothing opened
        p = subprocess.run([PERFLOG, "run", "--repeat", "3", "--cold", "--", "cat", target],
                           capture_output=True, env=env, timeout=60, user=65534)
        check(p.returncode == 2 and b"root" in p.stderr,
              f"--cold without root: exit 2 naming root ({p.returncode}, {p.stderr!r})")
        _, runs = d.get_json("/api/v1/runs")
        check(runs["runs"] == [], f"no run was opened ({len(runs['runs'])})")

        before = device_read_bytes(disk)
        p = subprocess.run([PERFLOG, "run", "--quiet", "--json", "--repeat", "3", "--cold",
                            "--bytes", str(SIZE), "--", "cat", target],
                           capture_output=True, env=env, timeout=600)
        truth = device_read_bytes(disk) - before
        check(p.returncode == 0, f"perflog run --repeat 3 --cold exits 0 ({p.returncode}, "
              f"{p.stderr[-500:]!r})")
        check(p.stdout[:SIZE * 3].count(b"\0") < SIZE * 3, "cat's output came through")
        at = p.stdout.rfind(b'{\n "runs"')
        try:
            cmp = json.loads(p.stdout[at:]) if at >= 0 else {}
        except ValueError:
            cmp = {}
        check(len(p.stdout) - len(p.stdout[at:]) == 3 * SIZE,
              f"stdout is cat's 3 x {SIZE} B, then the comparison ({len(p.stdout)} B)")
        print(f"# the device read {truth} B over the three cold runs of a {SIZE} B file")
        check(truth >= 3 * SIZE, f"each run read FILE from the device: {truth} >= 3 x {SIZE} B")

        reports = cmp.get("runs") or []
        check([r.get("label") for r in reports] == ["cat #1", "cat #2", "cat #3"],
              f"three runs labelled cat #1..#3 ({[r.get('label') for r in reports]})")
        for r in reports:
            pct = (r.get("process") or {}).get("cache_served_read_pct")
            check(pct is not None and pct < 5, f"run {r.get('id')} is cold: cache-served {pct}%")
        figs = {f["name"]: f for f in cmp.get("figures") or []}
        check(set(figs) >= {"cache_served_read_pct", "throughput.returned", "duration_s"},
              "the comparison's figures are there")
        for name in ("cache_served_read_pct", "throughput.returned", "duration_s"):
            check(len([v for v in figs[name]["values"] if v is not None]) == 3,
                  f"{name}: a value for each run")
        for name, f in figs.items():
            vals = sorted(v for v in f["values"] if isinstance(v, (int, float)))
            if not vals:
                check(f.get("median", 0) is None and f.get("min", 0) is None
                      and f.get("max", 0) is None, f"{name}: no numbers, no statistics")
                continue
            mid = len(vals) // 2
            med = vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2
            check(f.get("min") == vals[0] and f.get("max") == vals[-1]
                  and abs(f.get("median") - med) <= 1e-9 * max(1, abs(med)),
                  f"{name}: median/min/max {f.get('median')}/{f.get('min')}/{f.get('max')} "
                  f"of {vals}")
        for r, v in zip(reports, (figs.get("duration_s") or {}).get("values") or []):
            check(v == r.get("duration_s"), f"run {r.get('id')}: the figure is its report's")

        # the text summary
        ids = [str(r["id"]) for r in reports]
        p = subprocess.run([PERFLOG, "compare", *ids], capture_output=True, text=True, env=env,
                           timeout=60)
        check(p.returncode == 0 and all(f"run {i}" in p.stdout for i in ids),
              f"perflog compare of the three runs ({p.stderr})")

        # the control: warm but for one eighth of FILE evicted first (POSIX_FADV_DONTNEED on its
        # clean pages), so the share is about 87.5%, which no report stuck near 0% or 100% meets.
        # The bounds come from the test's own diskstats, not a fixed share: another test dropping
        # caches meanwhile (CI once read 2.26 MB of FILE back) and sh and cat paged in from the
        # root disk are storage reads the report must count. So the share lies between what the
        # loop device alone and the loop device plus the root disk leave of FILE.
        evict = SIZE // 8
        with open(target, "rb") as f:
            os.posix_fadvise(f.fileno(), 0, evict, os.POSIX_FADV_DONTNEED)
        sysdisk = root_block_device("/usr/bin")
        before, sys_before = device_read_bytes(disk), device_read_bytes(sysdisk)
        p = subprocess.run([PERFLOG, "run", "--quiet", "--json", "--bytes", str(SIZE), "--",
                            "sh", "-c", f"cat {target} > /dev/null"],
                           capture_output=True, text=True, env=env, timeout=300)
        truth = device_read_bytes(disk) - before
        sys_truth = device_read_bytes(sysdisk) - sys_before if sysdisk != disk else 0
        rep = json.loads(p.stdout) if p.returncode == 0 else {}
        pct = (rep.get("process") or {}).get("cache_served_read_pct")
        hi = 100.0 * (1 - truth / SIZE) + 0.5
        lo = 100.0 * (1 - (truth + sys_truth) / SIZE) - 0.5
        print(f"# warm: the device read {truth} B, {sysdisk} {sys_truth} B, "
              f"cache-served {pct}% (expected {lo:.2f}..{hi:.2f})")
        check(evict <= truth < SIZE // 4,
              f"warm, the device read the evicted eighth and little more: {truth} B")
        check(pct is not None and pct < 95 and lo <= pct <= hi,
              f"warm, the report's cache-served {pct}% is what the devices read: "
              f"{lo:.2f}..{hi:.2f}")
    finally:
        if d:
            d.stop()
        loop_fs_remove(work, loop, mnt)
    if d:
        d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
