#!/usr/bin/env python3
"""`perflog typeperf` behaves as typeperf against the real perflogd:

- `-si 2` rows of a disk rate are the rate over the two seconds (the bytes of both ticks over their
  elapsed time, from the daemon's own counter_values), not the newest second's, while this test
  writes known O_DIRECT bytes to a file on the real disk, a different amount each second;
- the first row is a tick newer than the one current when typeperf started;
- `-q`/`-qx` with `-o FILE` write the list to the file;
- a valid and an invalid path: the valid one runs, the invalid one is named as typeperf names it,
  exit 1; `\\\\otherhost\\...` and `-s otherhost` are refused with a pointer to --server, the
  daemon's own host name is accepted;
- the closing line "The command completed successfully.";
- `-config FILE`, typeperf's settings file: its counters, -sc, -f and -o are used, the command
  line's options win over the file's, and a bad file (unknown key, missing file) exits 2 naming
  the file, the line and the key.

Needs root (O_DIRECT on /var/tmp), PERFLOGD and PERFLOG_BUILD_DIR."""
import mmap
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root, root_block_device, values  # noqa: E402
from test_cli_export import (DIRTY, PERFLOG, client_env, parse_time, perflog, read_rows,  # noqa: E402
                             strip_done)

MiB = 1 << 20
BAD = "The following counter path is not valid: "


def direct_writer(path, stop, log):
    """Until stop is set: O_DIRECT writes of 1 MiB blocks, 24 MiB in even seconds and 4 MiB in odd
    ones (so two neighbouring seconds differ), each second's blocks fsynced. log gets the bytes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
    buf = mmap.mmap(-1, MiB)  # page aligned, as O_DIRECT needs
    buf.write(bytes(range(256)) * (MiB // 256))
    try:
        while not stop.is_set():
            sec = int(time.time())
            want = 24 if sec % 2 == 0 else 4
            for _ in range(want):
                if int(time.time()) != sec:
                    break
                os.write(fd, buf)
                log.append(MiB)
            os.fsync(fd)
            os.lseek(fd, 0, os.SEEK_SET)  # stay within 24 MiB of the disk
            while int(time.time()) == sec and not stop.is_set():
                time.sleep(0.01)
    finally:
        os.close(fd)
        buf.close()


def test_si_average(d, workdir):
    dev = root_block_device(workdir)
    path = f"\\PhysicalDisk({dev})\\Disk Write Bytes/sec"
    status, body = d.get_json("/api/v1/counters?match=" + path.replace("\\", "%5C").replace(
        "(", "%28").replace(")", "%29").replace(" ", "%20").replace("/", "%2F"))
    if not check(status == 200 and body["counters"], f"{path} exists for {workdir} on {dev}"):
        return
    stop, log = threading.Event(), []
    w = threading.Thread(target=direct_writer, args=(os.path.join(workdir, "f"), stop, log))
    w.start()
    try:
        time.sleep(1.2)
        rc, out, err = perflog(d.url, "typeperf", "-si", "2", "-sc", "4", path, timeout=60)
    finally:
        stop.set()
        w.join()
    check(rc == 0, f"typeperf -si 2 -sc 4 exits 0 (rc {rc}, {err.strip()})")
    body = strip_done(out)
    if not check(body is not None, "typeperf -si 2 ends with its closing line"):
        return
    rows = read_rows(body)[1:]
    check(len(rows) == 4, f"4 rows (got {len(rows)})")
    d.wait_ticks(d.tick_count() + 2)
    times = [parse_time(r[0]) for r in rows]
    ticks = values(d, path, times[0] - 4000, times[-1])
    by_t = {t: (iv, v) for t, iv, v in ticks}
    newest_differs = 0
    for i, (r, t) in enumerate(zip(rows, times)):
        shown = float(r[1])
        # a row spans the ticks after the row before (the first: the two ticks up to it)
        win = ([x for x in ticks if times[i - 1] < x[0] <= t] if i else
               [x for x in ticks if x[0] <= t][-2:])
        nbytes = sum(v * iv / 1000.0 for _, iv, v in win if v is not None)
        elapsed = sum(iv for _, iv, v in win if v is not None) / 1000.0
        want = nbytes / elapsed if elapsed else float("nan")
        newest = by_t.get(t, (None, None))[1]
        check(len(win) == 2 and abs(shown - want) <= 0.01 * max(want, 1.0),
              f"-si 2 row at {r[0]}: {shown:.0f} B/s = the two seconds' {nbytes:.0f} bytes / "
              f"{elapsed:.3f} s = {want:.0f} B/s within 1% (ticks {[(tt, v) for tt, _, v in win]})")
        if newest is not None and abs(newest - want) > 0.1 * want:
            newest_differs += 1
    # The writer makes neighbouring seconds differ, so the newest second alone (what a row showed
    # before) is off by more than 10% in some rows: the check above would have failed on it.
    check(newest_differs >= 1,
          f"in {newest_differs} of 4 rows the newest second alone differs from the 2 s rate by > 10%")
    total = sum(float(r[1]) * 2 for r in rows)
    print(f"O_DIRECT wrote {sum(log)} bytes in all; the 4 rows account for {total:.0f} bytes in 8 s")


def test_first_row_new(d):
    status, latest = d.get_json("/api/v1/latest?counter=%5CMemory%5CDirty%20Bytes")
    rc, out, err = perflog(d.url, "typeperf", "-sc", "1", DIRTY)
    rows = read_rows(strip_done(out) or b"")[1:]
    check(rc == 0 and len(rows) == 1 and parse_time(rows[0][0]) > latest["t_ms"],
          f"the first row is a tick after the one current at the start ({latest['t_ms']}, "
          f"row {rows[:1]})")


def test_query_out(d, tmp):
    for opt in ("-q", "-qx"):
        dest = os.path.join(tmp, f"list{opt}.txt")
        rc, out, err = perflog(d.url, "typeperf", opt, "Memory", "-o", dest)
        data = open(dest, "rb").read() if os.path.exists(dest) else b""
        paths = data.decode().splitlines()
        check(rc == 0 and DIRTY in paths and b"\\Memory\\" not in out,
              f"typeperf {opt} Memory -o FILE writes the list to FILE, not the console "
              f"({len(paths)} paths, console {out[:60]!r})")
    # the file is a -cf file
    rc, out, err = perflog(d.url, "typeperf", "-cf", dest, "-sc", "1")
    check(rc == 0 and DIRTY in (strip_done(out) or b"").decode(),
          f"the -q -o file works as a -cf file (rc {rc}, {err.strip()[:200]})")


def test_bad_paths(d, host):
    nope = "\\Memory\\Dirty Byte"
    rc, out, err = perflog(d.url, "typeperf", "-sc", "1", DIRTY, nope)
    rows = read_rows(strip_done(out) or b"")
    check(rc == 1 and BAD + nope in err and "No valid counters" not in err
          and len(rows) == 2 and rows[0][1:] == [f"\\\\{host}{DIRTY}"],
          f"a valid and an invalid path: the valid one runs, the invalid one is named, exit 1 "
          f"(rc {rc}, {err.strip()!r}, rows {rows})")

    rc, out, err = perflog(d.url, "typeperf", "-sc", "1", nope)
    check(rc == 1 and BAD + nope in err and "Error: No valid counters." in err and not out,
          f"only an invalid path: 'Error: No valid counters.', exit 1 (rc {rc}, {err.strip()!r})")

    other = "\\\\otherhost\\Memory\\Dirty Bytes"
    rc, out, err = perflog(d.url, "typeperf", "-sc", "1", other)
    check(rc == 1 and BAD + other in err and "--server" in err and not out,
          f"\\\\otherhost\\...: refused, naming --server, never a local answer "
          f"(rc {rc}, {err.strip()!r})")

    rc, out, err = perflog(d.url, "typeperf", "-sc", "1", f"\\\\{host}{DIRTY}")
    check(rc == 0 and len(read_rows(strip_done(out) or b"")) == 2,
          f"\\\\{host}\\... (the daemon's own host) is read (rc {rc}, {err.strip()!r})")

    rc, out, err = perflog(d.url, "typeperf", "-s", "otherhost", "-sc", "1", DIRTY)
    check(rc == 1 and "--server" in err and "otherhost" in err and not out,
          f"-s otherhost: refused, naming --server (rc {rc}, {err.strip()!r})")

    rc, out, err = perflog(d.url, "typeperf", "-q", "Memory", "-s", "otherhost")
    check(rc == 1 and "--server" in err and not out,
          f"-q -s otherhost: refused, never the local list (rc {rc}, {err.strip()!r})")
    rc, out, err = perflog(d.url, "typeperf", "-q", "Memory", "-s", host)
    check(rc == 0 and DIRTY in out.decode(), f"-q -s {host}: the list (rc {rc})")

    for name in (host, host.upper(), "localhost"):
        rc, out, err = perflog(d.url, "typeperf", "-s", name, "-sc", "1", DIRTY)
        check(rc == 0 and len(read_rows(strip_done(out) or b"")) == 2,
              f"-s {name}: the local host is accepted (rc {rc}, {err.strip()!r})")


def test_config(d, tmp, host):
    avail = "\\Memory\\Available Bytes"
    cfg = os.path.join(tmp, "settings.cfg")
    with open(cfg, "w") as f:
        f.write("; typeperf -config\n[c]\n" + DIRTY + "\n" + avail + "\n[sc] 2\n[f]\nTSV\n")
    rc, out, err = perflog(d.url, "typeperf", "-config", cfg)
    rows = read_rows(strip_done(out) or b"", delim="\t")
    check(rc == 0 and len(rows) == 3 and rows[0][1:] == [f"\\\\{host}{DIRTY}", f"\\\\{host}{avail}"],
          f"-config: the file's counters, [sc] 2 and TSV (rc {rc}, {err.strip()!r}, rows {rows})")

    # the command line's -sc wins; its counter comes before the file's
    cpu = "\\Processor(_Total)\\% Processor Time"
    rc, out, err = perflog(d.url, "typeperf", cpu, "-sc", "1", "-config", cfg)
    rows = read_rows(strip_done(out) or b"", delim="\t")
    check(rc == 0 and len(rows) == 2 and [c.split("\\", 3)[-1] for c in rows[0][1:]]
          == [cpu[1:], DIRTY[1:], avail[1:]],
          f"-sc 1 on the command line wins over [sc] 2; its counter first (rc {rc}, rows {rows})")

    # [o] writes the rows to the file
    dest = os.path.join(tmp, "rows.csv")
    with open(cfg, "w") as f:
        f.write(f"c={DIRTY}\nsc=1\no={dest}\n")
    rc, out, err = perflog(d.url, "typeperf", "-config", cfg)
    data = open(dest, "rb").read() if os.path.exists(dest) else b""
    check(rc == 0 and DIRTY.encode() in data and DIRTY.encode() not in out,
          f"o= in the settings file writes the rows to that file (rc {rc}, {len(data)} bytes)")

    with open(cfg, "w") as f:
        f.write("[c]\n" + DIRTY + "\n\n[interval]\n5\n")
    rc, out, err = perflog(d.url, "typeperf", "-config", cfg)
    check(rc == 2 and f"{cfg}:4:" in err and "unknown key 'interval'" in err and not out,
          f"an unknown key: exit 2 naming the file, the line and the key (rc {rc}, {err.strip()!r})")

    missing = os.path.join(tmp, "none.cfg")
    rc, out, err = perflog(d.url, "typeperf", "-config", missing)
    check(rc == 2 and missing in err and "No such file" in err and not out,
          f"a missing settings file: exit 2 naming it (rc {rc}, {err.strip()!r})")


def main():
    require_root()
    tmp = tempfile.mkdtemp(prefix="perflog-typeperf-")
    workdir = tempfile.mkdtemp(prefix="perflog-typeperf-", dir="/var/tmp")
    d = Daemon().start(wait_ticks=3)
    try:
        status, health = d.get_json("/api/v1/health")
        host = health["host"]
        test_first_row_new(d)
        test_query_out(d, tmp)
        test_bad_paths(d, host)
        test_config(d, tmp, host)
        test_si_average(d, workdir)
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
