#!/usr/bin/env python3
"""`perflog typeperf` and `perflog export` against the real perflogd: typeperf's console format
(header, CRLF, rows one SI apart, values equal to /api/v1/data), -si/-sc/-f/-o/-cf/-q/-qx, a bad path,
Ctrl-C; the PDH-CSV export through the daemon and from the database file with the daemon stopped
(byte for byte the same), -t, --format tsv, --run, usage errors, and no daemon.

Needs PERFLOGD (the daemon) and PERFLOG_BUILD_DIR (where the `perflog` client is built)."""
import calendar
import csv
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, free_port  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
DIRTY = "\\Memory\\Dirty Bytes"
CPU_TOTAL = "\\Processor(_Total)\\% Processor Time"


def client_env(server, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PERFLOG_SERVER", "PERFLOG_TOKEN")}
    env["PERFLOG_SERVER"] = server
    env["TZ"] = "UTC"
    env.update(extra)
    return env


def perflog(server, *args, timeout=60, **extra):
    """Run the client; returns (exit code, stdout bytes, stderr text)."""
    p = subprocess.run([PERFLOG, *args], capture_output=True, timeout=timeout,
                       env=client_env(server, **extra))
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


DONE = b"\r\nThe command completed successfully.\r\n"


def strip_done(out):
    """typeperf's console output without its closing line (None when it is missing)."""
    return out[:-len(DONE)] if out.endswith(DONE) else None


def parse_time(cell):
    """'MM/DD/YYYY HH:MM:SS.mmm' (UTC) -> ms since the epoch."""
    whole, ms = cell.split(".")
    st = time.strptime(whole, "%m/%d/%Y %H:%M:%S")
    return calendar.timegm(st) * 1000 + int(ms)


def read_rows(data, delim=","):
    text = data.decode()
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delim))


def api_data(d, paths, t_from, t_to):
    """{path: {t_ms: value}} from /api/v1/data."""
    q = [("counter", p) for p in paths] + [("from", f"{t_from / 1000:.3f}"),
                                            ("to", f"{t_to / 1000:.3f}")]
    status, body = d.get_json("/api/v1/data?" + urllib.parse.urlencode(q))
    if status != 200:
        raise RuntimeError(f"/api/v1/data answered {status}: {body}")
    out = {}
    for s in body["series"]:
        out[s["path"]] = dict(zip(body["timestamps"], s["values"]))
    return out


def cell_of(v):
    return " " if v is None else "%.6f" % v


def compare_cells(rows, header, d, what):
    """Every value cell equals /api/v1/data's value for its timestamp and column."""
    paths = ["\\" + h.split("\\", 3)[3] for h in header[1:]]
    times = [parse_time(r[0]) for r in rows]
    data = api_data(d, paths, min(times), max(times))
    bad = []
    for r, t in zip(rows, times):
        for p, c in zip(paths, r[1:]):
            want = cell_of(data.get(p, {}).get(t)) if t in data.get(p, {}) else "<missing>"
            if c != want:
                bad.append((t, p, c, want))
    check(not bad and len(rows) > 0, f"{what}: every cell equals /api/v1/data "
          f"({len(rows)} rows x {len(paths)} columns; first mismatch {bad[:1]})")


def test_typeperf_basic(d, host):
    rc, out, err = perflog(d.url, "typeperf", "-sc", "3", DIRTY, CPU_TOTAL)
    check(rc == 0, f"typeperf -sc 3 exits 0 (rc {rc}, {err.strip()})")
    check(strip_done(out) is not None, f"typeperf ends with its closing line ({out[-60:]!r})")
    out = strip_done(out) or out
    lines = out.split(b"\r\n")
    check(lines[-1] == b"" and all(b"\n" not in l for l in lines),
          "typeperf: every line ends with CRLF")
    lines = lines[:-1]
    check(len(lines) == 4, f"typeperf -sc 3: a header and exactly 3 rows (got {len(lines)})")
    want = f'"(PDH-CSV 4.0)","\\\\{host}{DIRTY}","\\\\{host}{CPU_TOTAL}"'.encode()
    check(lines[0] == want, f"typeperf header is {want!r} (got {lines[0]!r})")
    rows = read_rows(out)[1:]
    times = [parse_time(r[0]) for r in rows]
    diffs = [b - a for a, b in zip(times, times[1:])]
    check(len(diffs) == 2 and all(abs(x - 1000) <= 50 for x in diffs),
          f"typeperf rows are 1 s apart (differences {diffs})")
    d.wait_ticks(d.tick_count() + 1)
    compare_cells(rows, read_rows(out)[0], d, "typeperf")
    return times


def test_typeperf_options(d, host, tmp):
    rc, out, err = perflog(d.url, "typeperf", "-SI", "2", "-sc", "2", DIRTY)
    rows = read_rows(strip_done(out) or out)[1:]
    diffs = [parse_time(b[0]) - parse_time(a[0]) for a, b in zip(rows, rows[1:])]
    check(rc == 0 and len(rows) == 2 and all(abs(x - 2000) <= 50 for x in diffs),
          f"typeperf -SI 2 -sc 2: two rows 2 s apart (rc {rc}, differences {diffs})")

    rc, out, err = perflog(d.url, "typeperf", "-f", "TSV", "-sc", "1", DIRTY, CPU_TOTAL)
    lines = out.split(b"\r\n")
    check(rc == 0 and lines[0] == f'"(PDH-TSV 4.0)"\t"\\\\{host}{DIRTY}"\t"\\\\{host}{CPU_TOTAL}"'
          .encode() and lines[1].count(b"\t") == 2,
          f"typeperf -f TSV: tabs and (PDH-TSV 4.0) ({lines[:2]!r})")

    path = os.path.join(tmp, "tp.csv")
    rc, out, err = perflog(d.url, "typeperf", "-sc", "2", "-o", path, "-y", DIRTY)
    with open(path, "rb") as f:
        data = f.read()
    check(rc == 0 and data.startswith(b'"(PDH-CSV 4.0)","\\\\') and data.count(b"\r\n") == 3,
          f"typeperf -o FILE writes the header and 2 rows to FILE ({data[:80]!r})")

    cf = os.path.join(tmp, "counters.txt")
    with open(cf, "w") as f:
        f.write("# counters for typeperf\n\n" + DIRTY + "\r\n" + CPU_TOTAL + "\n")
    rc, out, err = perflog(d.url, "typeperf", "-cf", cf, "-sc", "1")
    header = read_rows(strip_done(out) or out)[0] if out else []
    check(rc == 0 and header[1:] == [f"\\\\{host}{DIRTY}", f"\\\\{host}{CPU_TOTAL}"],
          f"typeperf -cf FILE reads the paths from FILE ({header}, {err.strip()})")

    rc, out, err = perflog(d.url, "typeperf", "-q", "Memory")
    paths = (strip_done(out) or b"").decode().splitlines()
    check(rc == 0 and DIRTY in paths and all(p.startswith("\\Memory\\") for p in paths)
          and all("(" not in p for p in paths),
          f"typeperf -q Memory lists \\Memory\\ paths without instances ({len(paths)} paths)")

    rc, out, err = perflog(d.url, "typeperf", "-qx", "PhysicalDisk")
    paths = (strip_done(out) or b"").decode().splitlines()
    check(rc == 0 and paths and all(p.startswith("\\PhysicalDisk(") and "(*)" not in p
                                    for p in paths),
          f"typeperf -qx PhysicalDisk lists instance paths ({paths[:2]})")

    rc, out, err = perflog(d.url, "typeperf", "-sc", "1", "\\NoSuch\\Thing")
    check(rc == 1 and "No valid counters" in err and "\\NoSuch\\Thing" in err,
          f"typeperf with a bad path: exit 1 and 'No valid counters' (rc {rc}, {err.strip()})")


def test_typeperf_sigint(d):
    p = subprocess.Popen([PERFLOG, "typeperf", DIRTY], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=client_env(d.url))
    time.sleep(2.5)
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    took = time.time() - t0
    # Without the SIGINT it would follow forever: stopping at all (no kill after 5 s) is the point.
    check(p.returncode == 0, f"typeperf stops on SIGINT with exit 0 (rc {p.returncode}, after {took:.2f} s)")
    check(out.endswith(b"\r\n") and out.count(b"\r\n") >= 2,
          f"after SIGINT the output ends with a complete CRLF line ({out[-40:]!r})")


def test_export_http(d, host, tmp):
    path = os.path.join(tmp, "mem.csv")
    rc, out, err = perflog(d.url, "export", "\\Memory\\*", "--from", "-10s", "--tz", "utc",
                           "-o", path)
    check(rc == 0 and os.path.exists(path) and not os.path.exists(path + ".tmp"),
          f"export -o FILE writes FILE (rc {rc}, {err.strip()})")
    with open(path, "rb") as f:
        data = f.read()
    rows = read_rows(data)
    check(rows[0][0] == "(PDH-CSV 4.0) (Coordinated Universal Time)(0)",
          f"export header cell with --tz utc ({rows[0][0]!r})")
    check(all(h.startswith(f"\\\\{host}\\Memory\\") for h in rows[0][1:]),
          "export columns are \\\\HOST\\Memory\\...")
    check(len(rows) - 1 >= 8, f"export --from -10s has at least 8 rows ({len(rows) - 1})")
    check(data.endswith(b"\r\n") and data.count(b"\r\n") == len(rows), "export lines end CRLF")
    compare_cells(rows[1:], rows[0], d, "export via the daemon")

    rc, out, err = perflog(d.url, "export", DIRTY, "--from", "-10s", "-t", "2", "--tz", "utc")
    rows2 = read_rows(out)[1:]
    ts = [parse_time(r[0]) for r in rows2]
    diffs = [b - a for a, b in zip(ts, ts[1:])]
    check(rc == 0 and len(rows2) >= 4 and all(abs(x - 2000) <= 100 for x in diffs),
          f"export -t 2 keeps every 2nd row (differences {diffs})")

    rc, out, err = perflog(d.url, "export", DIRTY, "--from", "-5s", "--format", "tsv")
    lines = out.split(b"\r\n")
    check(rc == 0 and lines[0].startswith(b'"(PDH-TSV 4.0) (') and b'\t"\\\\' in lines[0]
          and lines[1].count(b"\t") == 1, f"export --format tsv ({lines[:2]!r})")

    # (the run export itself is tested in test_cli_run, which makes runs)
    rc, out, err = perflog(d.url, "export", "--run", "999999")
    check(rc == 1 and "no run 999999" in err,
          f"export --run of an unknown run: exit 1 with the server's message ({rc}, {err.strip()})")
    rc, out, err = perflog(d.url, "export", "--run", "x1")
    check(rc == 2 and "--run" in err, f"export --run x1: a usage error, exit 2 ({rc}, {err.strip()})")
    rc, out, err = perflog(d.url, "export", "--run", "1", "--from", "-1h")
    check(rc == 2 and "--from" in err, f"export --run with --from: a usage error, exit 2 ({rc}, {err.strip()})")
    rc, out, err = perflog(d.url, "export")
    check(rc == 2 and "give at least one counter pattern" in err,
          f"export without a pattern: exit 2 ({rc}, {err.strip()})")
    rc, out, err = perflog(d.url, "export", DIRTY, "--from", "bogus", "-o",
                           os.path.join(tmp, "bad.csv"))
    check(rc == 2 and "bogus" in err and not os.path.exists(os.path.join(tmp, "bad.csv"))
          and not os.path.exists(os.path.join(tmp, "bad.csv.tmp")),
          f"export with a bad time: a usage error naming it, exit 2, no file ({err.strip()})")
    # A path that is not a regular file is written in place, never replaced by a rename: as root,
    # `-o /dev/null` used to turn /dev/null into a regular file. A FIFO shows both: the node stays
    # a FIFO and its reader gets the CSV.
    fifo = os.path.join(tmp, "out.fifo")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    rc, out, err = perflog(d.url, "export", DIRTY, "--from", "-5s", "-o", fifo)
    reader.join(10)
    fifo_ok = (rc == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and bool(got) and
               got[0].startswith(b'"(PDH-CSV 4.0)') and not os.path.exists(fifo + ".tmp"))
    check(fifo_ok, f"export -o FIFO writes into the FIFO and leaves it a FIFO ({rc}, {err.strip()})")
    if fifo_ok:  # only then is it safe to aim at the machine's own /dev/null
        rc, out, err = perflog(d.url, "export", DIRTY, "--from", "-5s", "-o", "/dev/null")
        check(rc == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode),
              f"export -o /dev/null leaves /dev/null a character device ({rc}, {err.strip()})")
    rc, out, err = perflog(f"http://127.0.0.1:{free_port()}", "export", DIRTY)
    check(rc == 1 and "is perflogd running?" in err,
          f"export without a daemon: exit 1 and the hint ({rc}, {err.strip()})")


def test_export_db(d, host, tmp):
    """The same absolute range through the daemon, then from the file with the daemon stopped."""
    now = int(time.time())
    t_from, t_to = str(now - 12), str(now - 2)
    args = ["export", "\\Memory\\*", "\\Processor(*)\\% Idle Time", "--from", t_from, "--to",
            t_to, "--tz", "utc"]
    rc, via_http, err = perflog(d.url, *args)
    check(rc == 0 and via_http.count(b"\r\n") >= 9, f"export of an absolute range ({rc}, {err})")
    d.stop()
    db = os.path.join(tmp, "copy.db")
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(d.db + ext):
            shutil.copy(d.db + ext, db + ext)
    rc, via_db, err = perflog(d.url, *args, "--db", db)
    check(rc == 0 and via_db == via_http,
          f"export --db with the daemon stopped gives the same bytes ({rc}, {err.strip()}, "
          f"{len(via_db)} vs {len(via_http)} bytes)")
    check(f"\\\\{host}\\Memory\\".encode() in via_db.split(b"\r\n")[0],
          "export --db names the host from the database")
    rc, via_db2, err = perflog(d.url, *args, "--db", db, "-t", "3", "--format", "tsv")
    check(rc == 0 and via_db2.startswith(b'"(PDH-TSV 4.0)') and
          via_db2.count(b"\r\n") == 1 + (via_http.count(b"\r\n") - 1 + 2) // 3,
          "export --db -t 3 --format tsv keeps every 3rd row")
    rc, out, err = perflog(d.url, "export", "--db", os.path.join(tmp, "none.db"), DIRTY)
    check(rc == 1 and "none.db" in err, f"export --db of a missing file: exit 1 ({err.strip()})")


def main():
    tmp = tempfile.mkdtemp(prefix="perflog-export-")
    d = Daemon().start(wait_ticks=3)
    try:
        status, health = d.get_json("/api/v1/health")
        host = health["host"]
        test_typeperf_basic(d, host)
        test_typeperf_options(d, host, tmp)
        test_typeperf_sigint(d)
        d.wait_ticks(12)
        test_export_http(d, host, tmp)
        test_export_db(d, host, tmp)
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
