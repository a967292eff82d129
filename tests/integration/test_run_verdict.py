#!/usr/bin/env python3
"""The run report's verdict on real runs whose limit is known by construction, each checked
against the test's own reading of /proc:

- an idle `sleep 5`: no limit found (the test's CPU and disk readings show nothing busy);
- `gzip -9` of a cached file into /dev/null: the tool, CPU-bound at one thread (the test's
  rusage of the run's children: CPU seconds at least 85% of the wall time);
- an O_DIRECT dd onto a loop device of the test's own: the disk, that device (one request is
  always in flight; the test's /proc/diskstats io_ticks of it are at least 90% of the run);
- 2000 files of 4 KiB, each fsync'd, `--files 2000`: per-file overhead (the test's diskstats:
  at least one device write per file);
- a buffered write of 192 MiB with vm.dirty_bytes set to 16 MiB, onto the loop device throttled
  to 24 MiB/s through the cgroup v1 blkio controller: writeback throttling (the test's own
  /proc/meminfo samples: Dirty + Writeback at the free-run point most of the time).

Only the limit is asserted, not timings. vm.dirty_bytes and the throttle are restored in a
finally. Needs root (losetup, mount, sysctl, the blkio controller of cgroup v1)."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
BLKIO = "/sys/fs/cgroup/blkio"
CPU_CG = "/sys/fs/cgroup/cpu"


def diskstats(dev):
    """(write ops, io_ticks ms) of `dev` in /proc/diskstats."""
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if p[2] == dev:
                return int(p[7]), int(p[12])
    raise KeyError(dev)


def heavy_cgroup():
    """A cpu cgroup (v1) of the largest weight: the other processes of a shared machine are in
    other cgroups, where nice does not reach. The caller removes it (os.rmdir) once empty."""
    cg = tempfile.mkdtemp(prefix="perflog-it-verdict-", dir=CPU_CG)
    with open(os.path.join(cg, "cpu.shares"), "w") as f:
        f.write("262144")
    return cg


def perflog_run(d, label, cmd, extra=()):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    p = subprocess.run([PERFLOG, "run", "--json", "--label", label, *extra, "--"] + cmd,
                       capture_output=True, text=True, timeout=600, env=env)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    check(p.returncode == 0 and rep, f"{label}: perflog run exits 0 with a JSON report "
          f"({p.returncode}, {p.stderr[-300:]!r})")
    v = rep.get("verdict") or {}
    print(f"# {label}: verdict {v.get('limit')} {v.get('instance')} "
          f"u={v.get('utilisation')} ({v.get('rule')}); top {v.get('top')}; "
          f"phases {[(x['limit'], x['instance']) for x in v.get('phases', [])]}")
    check(isinstance(rep.get("tail_verdict"), dict), f"{label}: the report has a tail_verdict")
    return rep, v


def text_report(d, run_id):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    return subprocess.run([PERFLOG, "report", str(run_id)], capture_output=True, text=True,
                          timeout=60, env=env).stdout


def idle(d):
    t0, c0 = time.monotonic(), os.times()
    rep, v = perflog_run(d, "idle", ["sleep", "5"])
    check(v.get("limit") == "none", f"sleep 5: no single limit found, got {v.get('limit')}")
    check(len(v.get("top") or []) == 3, f"sleep 5: the top three utilisations: {v.get('top')}")
    c1 = os.times()
    child = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
    check(child < 0.2 * (time.monotonic() - t0), f"the test's own reading: sleep used {child:.2f} "
          "CPU seconds")
    lines = text_report(d, rep["id"]).splitlines()
    check(any(ln.strip().startswith("limit") and "no single limit found" in ln
              for ln in lines[:6]),
          f"the text report says so in its first lines: {lines[:6]}")


def tool(d, work):
    src = os.path.join(work, "random.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(320 << 20))
    subprocess.run(["cat", src], stdout=subprocess.DEVNULL, check=True)  # cached
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    # On a shared machine the other processes would take the core, and the limit would be them
    cg = heavy_cgroup()
    try:
        rep, v = perflog_run(d, "gzip", ["sh", "-c", f"echo $$ > {cg}/cgroup.procs && "
                                                     f"gzip -9 -c {src} > /dev/null"])
    finally:
        os.rmdir(cg)
    r1, wall = resource.getrusage(resource.RUSAGE_CHILDREN), rep.get("duration_s") or 1
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    print(f"# gzip: {cpu:.2f} CPU s in {wall:.2f} s")
    check(cpu >= 0.85 * wall, f"the test's own reading: gzip was CPU-bound ({cpu:.2f} CPU s in "
          f"{wall:.2f} s)")
    check(v.get("limit") == "tool", f"gzip -9: the tool itself, got {v.get('limit')}")
    check((v.get("instance") or "").startswith("gzip:"),
          f"the tool's busiest process is gzip: {v.get('instance')}")
    check(v.get("rule") == "CPU-bound at one thread", f"at one thread: {v.get('rule')}")


def direct(d, work, raw, under):
    """O_DIRECT onto `raw`, a loop device over the loop device `under`, which the root blkio
    cgroup throttles: raw's requests wait for under's, so raw is busy all the time (the
    throttled bios of `under` are held before its queue and leave it looking idle)."""
    dev = os.path.basename(raw)
    major_minor = open(f"/sys/block/{os.path.basename(under)}/dev").read().strip()
    throttle = os.path.join(BLKIO, "blkio.throttle.write_bps_device")
    with open(throttle, "w") as f:
        f.write(f"{major_minor} {64 << 20}")
    try:
        direct_run(d, raw, dev)
    finally:
        with open(throttle, "w") as f:
            f.write(f"{major_minor} 0")


def direct_run(d, raw, dev):
    shm = tempfile.mkdtemp(prefix="perflog-it-verdict-", dir="/dev/shm")
    # Four writers for 10 s onto the raw device, so that a request is always in flight (one dd
    # leaves a gap between its requests, longer while it waits for a CPU of a shared machine:
    # so they run in a cpu cgroup of the largest weight), whatever the device's speed. The
    # script copies /proc/diskstats around them: the ground truth spans the writes.
    dd = f"timeout 10 dd if=/dev/zero of={raw} bs=1M count=250 seek=%d oflag=direct status=none"
    writers = " & ".join(f"({dd % (250 * i)})" for i in range(4))
    cg = heavy_cgroup()
    script = (f"echo $$ > {cg}/cgroup.procs && cat /proc/diskstats > {shm}/a; "
              f"date +%s.%N > {shm}/t0; {writers}; wait; date +%s.%N > {shm}/t1; "
              f"cat /proc/diskstats > {shm}/b; true")
    try:
        rep, v = perflog_run(d, "direct", ["sh", "-c", script])
    finally:
        os.rmdir(cg)

    def field(name, i):
        with open(os.path.join(shm, name)) as f:
            for line in f:
                p = line.split()
                if p[2] == dev:
                    return int(p[i])
        raise KeyError(dev)

    def busy_ms(name):
        return field(name, 12)

    wall = float(open(f"{shm}/t1").read()) - float(open(f"{shm}/t0").read())
    busy = (busy_ms("b") - busy_ms("a")) / (1000 * wall)
    # the writes' time over their number, by the test's own copies of /proc/diskstats
    writes = field("b", 7) - field("a", 7)
    write_s = (field("b", 10) - field("a", 10)) / 1000 / writes if writes else None
    subprocess.run(["rm", "-rf", shm])
    print(f"# direct: {dev} busy {busy:.2f} of the writes' {wall:.1f} s by /proc/diskstats")
    check(busy >= 0.9, f"the test's own reading: {dev} was busy {busy:.0%} of the writes")
    check(v.get("limit") == "disk", f"O_DIRECT dd: the disk, got {v.get('limit')}")
    check(v.get("instance") == dev, f"the disk is {dev}: {v.get('instance')}")
    lat = next((e.get("value") for e in v.get("evidence", [])
                if e.get("figure") == "avg_write_latency_s"), None)
    check(write_s and lat is not None and abs(lat - write_s) <= 0.15 * write_s,
          f"the verdict's write latency {lat} s is the writes' time over their number by "
          f"/proc/diskstats ({write_s} s, {writes} writes), within 15 % (the run's edge ticks)")
    lines = text_report(d, rep["id"]).splitlines()
    for ln in lines[:8]:
        print(f"#   {ln}")
    check(any(ln.startswith(f"  limit         a disk {dev} at ") for ln in lines[:6]),
          "the text report's first lines name the disk")


def per_file(d, mnt, loop):
    dev = os.path.basename(loop)
    tree = os.path.join(mnt, "files")
    os.mkdir(tree)
    script = ("import os,sys\n"
              "b=os.urandom(4096)\n"
              "for i in range(2000):\n"
              "    fd=os.open(os.path.join(sys.argv[1],'f%d'%i),os.O_WRONLY|os.O_CREAT,0o644)\n"
              "    os.write(fd,b); os.fsync(fd); os.close(fd)\n")
    w0, _ = diskstats(dev)
    rep, v = perflog_run(d, "files", [sys.executable, "-c", script, tree],
                         ["--files", "2000", "--bytes", str(2000 * 4096)])
    w1, _ = diskstats(dev)
    print(f"# files: {w1 - w0} device writes for 2000 files")
    check(w1 - w0 >= 2000, f"the test's own reading: {w1 - w0} device writes for 2000 files")
    check(v.get("limit") == "per_file", f"2000 fsync'd files: per-file overhead, got "
          f"{v.get('limit')} ({v.get('top')})")


def meminfo_dirty():
    vals = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, rest = line.split(":", 1)
            vals[k] = int(rest.split()[0]) * 1024
    return vals["Dirty"] + vals["Writeback"]


def writeback(d, mnt, loop):
    target = os.path.join(mnt, "buffered.bin")
    major_minor = open(f"/sys/block/{os.path.basename(loop)}/dev").read().strip()
    old = {k: open(f"/proc/sys/vm/{k}").read().strip()
           for k in ("dirty_bytes", "dirty_background_bytes", "dirty_ratio",
                     "dirty_background_ratio")}
    throttle = os.path.join(BLKIO, "blkio.throttle.write_bps_device")
    samples, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            samples.append(meminfo_dirty())
            time.sleep(0.1)

    try:
        with open("/proc/sys/vm/dirty_bytes", "w") as f:
            f.write(str(16 << 20))
        with open("/proc/sys/vm/dirty_background_bytes", "w") as f:
            f.write(str(8 << 20))
        with open(throttle, "w") as f:
            f.write(f"{major_minor} {24 << 20}")
        th = threading.Thread(target=sample)
        th.start()
        rep, v = perflog_run(d, "buffered", ["dd", "if=/dev/zero", f"of={target}", "bs=1M",
                                             "count=192", "status=none"])
        stop.set()
        th.join()
    finally:
        stop.set()
        with open(throttle, "w") as f:
            f.write(f"{major_minor} 0")
        for k in ("dirty_ratio", "dirty_background_ratio", "dirty_bytes",
                  "dirty_background_bytes"):
            if old[k] != "0":
                with open(f"/proc/sys/vm/{k}", "w") as f:
                    f.write(old[k])
    band = 0.9 * 8 * (1 << 20)  # from the background limit up, the kernel paces the writer
    at = sum(1 for s in samples if s >= band)
    print(f"# buffered: {at} of {len(samples)} meminfo samples in the throttling band")
    check(samples and at >= 0.5 * len(samples),
          f"the test's own reading: Dirty + Writeback in the throttling band in {at} of "
          f"{len(samples)} samples")
    check(v.get("limit") == "writeback", f"a buffered write above vm.dirty_bytes: writeback, "
          f"got {v.get('limit')} ({v.get('rule')}, {v.get('top')})")


def main():
    require_root()
    check(os.path.isdir(BLKIO), "the blkio controller of cgroup v1 is mounted")
    work = tempfile.mkdtemp(prefix="perflog-it-verdict-", dir="/var/tmp")
    image, mnt = os.path.join(work, "disk.img"), os.path.join(work, "mnt")
    os.mkdir(mnt)
    with open(image, "wb") as f:
        f.truncate(2 << 30)
    loop = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", image],
                          capture_output=True, text=True, check=True).stdout.strip()
    raw_image = os.path.join(work, "raw.img")
    with open(raw_image, "wb") as f:
        f.truncate(2 << 30)
    under = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", raw_image],
                           capture_output=True, text=True, check=True).stdout.strip()
    raw = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", under],
                         capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True)
    subprocess.run(["mount", loop, mnt], check=True)
    d = Daemon(config={"disks": {"exclude": ["ram*", "zram*"]}}).start(wait_ticks=2)
    try:
        idle(d)
        tool(d, work)
        direct(d, work, raw, under)
        per_file(d, mnt, loop)
        writeback(d, mnt, loop)
    finally:
        d.stop()
        subprocess.run(["umount", mnt])
        subprocess.run(["losetup", "-d", loop])
        subprocess.run(["losetup", "-d", raw])
        subprocess.run(["losetup", "-d", under])
        subprocess.run(["rm", "-rf", work])
    finish()


if __name__ == "__main__":
    main()
