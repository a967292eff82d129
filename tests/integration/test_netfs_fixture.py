#!/usr/bin/env python3
"""SMB Client Shares and NFS Client through the real perflogd, on a fixture /proc root (this
machine's kernel has neither client), read back over HTTP and from the SQLite file.

- a share and NFS mounts that appear without a change of proc/self/mounts are not seen: the files
  are not retried every tick;
- after the mounts file changes they are: /api/v1/counters lists `\\SMB Client Shares(\\\\fs1\\data)\\*`
  and the NFS mounts, with instance names holding backslashes;
- the bytes, requests and times of the fixture's deltas (tests/fixtures/linux/netfs-t2 minus netfs)
  come back from /api/v1/data and the counter_values view, whatever the ticks' real intervals;
- a run around those deltas reports each share and mount (netfs[]) with its bytes, requests and
  times, and its bytes against the interfaces' bytes of the same report;
- on the real /proc, in a mount namespace of the test's own (needs root: fails without it), a mount
  and an unmount each make the daemon probe the two files again, and idle ticks do not.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, integrate, log_lines, require_root, values  # noqa: E402

Q = urllib.parse.quote
SRC = os.environ.get("PERFLOG_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
FX = os.path.join(SRC, "tests", "fixtures", "linux")
SHARE = "\\\\fs1\\data"
OLD = "\\\\nas\\old share"
NFS3 = "nfs3srv:/export/home"


def copy(rel_src, root, rel_dst):
    os.makedirs(os.path.dirname(os.path.join(root, rel_dst)), exist_ok=True)
    shutil.copyfile(os.path.join(FX, rel_src), os.path.join(root, rel_dst))


def overwrite_in_place(rel_src, root, rel_dst):
    """One pwrite over the old contents, no truncation (the daemon keeps the file open and reads
    it each tick: a truncate first could show it an empty file). The new text is not shorter."""
    with open(os.path.join(FX, rel_src), "rb") as f:
        data = f.read()
    path = os.path.join(root, rel_dst)
    check(len(data) >= os.path.getsize(path), f"{rel_src} is not shorter than what it replaces")
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


def replace_mounts(root, text):
    """A mount or unmount: the mounts file replaced (new inode)."""
    tmp = os.path.join(root, "proc/self/mounts.new")
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(root, "proc/self/mounts"))


def call(d, path, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    status, _, raw = d.http(path, method=method, body=data,
                            headers={"Content-Type": "application/json"} if data else None)
    return status, json.loads(raw) if raw else None


def wait_report(d, rid, timeout=60):
    deadline = time.time() + timeout
    doc = None
    while time.time() < deadline:
        status, doc = call(d, f"/api/v1/runs/{rid}")
        if status == 200 and doc.get("status") != "running" and doc.get("report"):
            return doc["report"]
        time.sleep(0.25)
    check(False, f"run {rid} has a report within {timeout} s ({doc})")
    return {}


def by_instance(arr, inst):
    return next((x for x in arr or [] if x.get("instance") == inst), None)


def counters(d, pattern):
    status, c = d.get_json("/api/v1/counters?match=" + Q(pattern))
    check(status == 200, f"counters {pattern}: 200 ({status})")
    return c["counters"] if c else []


def probes(d):
    """The daemon's probes of /proc/self/mountstats so far (a debug line each)."""
    return len(log_lines(d, "/proc/self/mountstats: "))


def wait_probes(d, n, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline and probes(d) < n:
        time.sleep(0.1)
    return probes(d)


def real_proc_reprobe():
    require_root()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS: the daemon, our child, shares it
        check(False, f"unshare(CLONE_NEWNS): errno {ctypes.get_errno()}")
        return
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    mnt = tempfile.mkdtemp(prefix="perflog-netfs-mnt-")
    d = Daemon(config={"log_level": "debug", "interval_ms": 500}).start(wait_ticks=2)
    try:
        check(wait_probes(d, 1) >= 1, "the first collect probes the real mountstats")
        # The kernel also reports changes the test did not make (about one in 20 s on this
        # machine, even in a private namespace), so the counts are bounds: a probe per tick would
        # make at least one per idle tick.
        before, n = probes(d), d.tick_count()
        d.wait_ticks(n + 6)
        idle = probes(d) - before
        check(idle < 6, f"six idle ticks: fewer probes than ticks ({idle})")
        for what, cmd in (("a mount", ["mount", "-t", "tmpfs", "-o", "size=1m", "perflog-test", mnt]),
                          ("an unmount", ["umount", mnt])):
            before = probes(d)
            subprocess.run(cmd, check=True)
            check(wait_probes(d, before + 1, timeout=5) > before,
                  f"{what}: a probe within 5 s, seen by poll(2) ({before} -> {probes(d)})")
        d.stop()
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill9()
        subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
        os.rmdir(mnt)


def main():
    root = tempfile.mkdtemp(prefix="perflog-netfs-root-")
    shutil.copytree(os.path.join(FX, "multi"), root, dirs_exist_ok=True)
    os.makedirs(os.path.join(root, "proc/self"))
    replace_mounts(root, "proc /proc proc rw 0 0\n")
    copy("odd/mountstats-no-nfs", root, "proc/self/mountstats")
    d = Daemon(config={"root": root, "log_level": "debug", "interval_ms": 500}).start(wait_ticks=2)
    try:
        check(counters(d, "\\SMB Client Shares(*)\\*") == [], "no share before the module is there")
        check(counters(d, "\\NFS Client(*)\\*") == [], "no NFS mount before one is there")

        # The module loads and NFS lines appear, the mount table unchanged: not probed again.
        copy("netfs/proc/fs/cifs/Stats", root, "proc/fs/cifs/Stats")
        overwrite_in_place("netfs/proc/self/mountstats", root, "proc/self/mountstats")
        n = d.tick_count()
        d.wait_ticks(n + 3)
        check(counters(d, "\\SMB Client Shares(*)\\*") == [],
              "a Stats file that appears without a mount is not seen (no retry per tick)")
        check(counters(d, "\\NFS Client(*)\\*") == [], "nor are NFS lines without a mount")

        with open(os.path.join(FX, "netfs/proc/self/mounts")) as f:
            replace_mounts(root, f.read())
        n = d.tick_count()
        d.wait_ticks(n + 3)
        smb = counters(d, "\\SMB Client Shares(*)\\Data Bytes/sec")
        insts = sorted(x["instance"] for x in smb)
        check(insts == sorted([SHARE, OLD, "_Total"]), f"after the mount: the shares and _Total ({insts})")
        check(any(x["path"] == f"\\SMB Client Shares({SHARE})\\Data Bytes/sec" for x in smb),
              f"a share's path holds its backslashes ({[x['path'] for x in smb]})")
        nfs = sorted(x["instance"] for x in counters(d, "\\NFS Client(*)\\Avg. RTT sec/Op"))
        check(nfs == sorted([NFS3, "nfs4srv:/", "_Total"]), f"the NFS mounts, the bind mount once ({nfs})")

        status, run = call(d, "/api/v1/runs", "POST", {"label": "smb copy", "command": "cp"})
        check(status == 201, f"a run opens ({status} {run})")
        n = d.tick_count()
        d.wait_ticks(n + 2)
        t_before_ms = int(time.time() * 1000)
        overwrite_in_place("netfs-t2/proc/fs/cifs/Stats", root, "proc/fs/cifs/Stats")
        overwrite_in_place("netfs-t2/proc/self/mountstats", root, "proc/self/mountstats")
        overwrite_in_place("multi-t2/proc/net/dev", root, "proc/net/dev")
        n = d.tick_count()
        d.wait_ticks(n + 3)
        status, _ = call(d, f"/api/v1/runs/{run['id']}/end", "POST", {"exit_code": 0})
        check(status == 200, f"the run ends ({status})")
        rep = wait_report(d, run["id"])
        nic = sum(x["rx_bytes"] + x["tx_bytes"] for x in rep.get("interfaces", [])
                  if x["instance"] != "lo")
        share = by_instance(rep.get("netfs"), SHARE) or {}
        check(share.get("kind") == "smb" and share.get("read_bytes") == 2097152
              and share.get("write_bytes") == 0 and share.get("requests") == 8,
              f"report: the share read 2 MiB in 8 requests ({share})")
        check(nic > 0 and abs(share.get("bytes_per_nic_byte", 0) - 2097152 / nic) < 1e-9,
              f"report: the share's bytes against the interfaces' {nic} ({share.get('bytes_per_nic_byte')})")
        old = by_instance(rep.get("netfs"), OLD) or {}
        check(old.get("write_bytes") == 4096 and old.get("requests") == 4 and old.get("avg_rtt_s") is None,
              f"report: the SMB1 share wrote 4 KiB in 4 requests, no time ({old})")
        mnt = by_instance(rep.get("netfs"), NFS3) or {}
        check(mnt.get("kind") == "nfs" and mnt.get("read_bytes") == 1048576 and mnt.get("requests") == 10
              and abs(mnt.get("avg_rtt_s", 0) - 0.005) < 1e-12 and abs(mnt.get("avg_execute_s", 0) - 0.006) < 1e-12,
              f"report: the NFSv3 mount read 1 MiB in 10 calls of 5 ms RTT, 6 ms execute ({mnt})")

        # Rates times real intervals give back the fixture's deltas, in the view...
        rd = integrate(values(d, f"\\SMB Client Shares({SHARE})\\Read Bytes/sec", t_before_ms - 5000))
        check(abs(rd - 2097152) < 1, f"SMB read bytes: the 2 MiB of the fixture ({rd})")
        wr = integrate(values(d, f"\\SMB Client Shares({OLD})\\Write Requests/sec", t_before_ms - 5000))
        check(abs(wr - 4) < 1e-6, f"SMB1 write requests across 2^31: 4 ({wr})")
        nrd = integrate(values(d, f"\\NFS Client({NFS3})\\Read Bytes/sec", t_before_ms - 5000))
        check(abs(nrd - 1048576) < 1, f"NFS server read bytes: 1 MiB ({nrd})")
        rtt = [v for _, _, v in values(d, "\\NFS Client(_Total)\\Avg. RTT sec/Op", t_before_ms - 5000)
               if v]
        check(len(rtt) == 1 and abs(rtt[0] - 0.090 / 12) < 1e-12,
              f"NFS _Total Avg. RTT: (50 + 40) ms over 12 calls, in the one tick that had calls ({rtt})")

        # ... and over HTTP, value for value.
        status, data = d.get_json("/api/v1/data?counter=" + Q(f"\\SMB Client Shares({SHARE})\\Read Bytes/sec")
                                  + "&from=" + str((t_before_ms - 5000) / 1000) + "&to=now")
        check(status == 200 and len(data["series"]) == 1, f"data: one series ({status})")
        api = [v for v in data["series"][0]["values"] if v] if status == 200 else []
        view = [v for _, _, v in values(d, f"\\SMB Client Shares({SHARE})\\Read Bytes/sec", t_before_ms - 5000)
                if v]
        check(api == view and len(api) == 1, f"data: the view's non-zero value ({api} vs {view})")
        d.stop()
        d.check_sanitizers()
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill9()
        shutil.rmtree(root, ignore_errors=True)
    real_proc_reprobe()
    finish()


if __name__ == "__main__":
    main()
