#!/usr/bin/env python3
"""One perflogd per database and per port.

A first perflogd samples at 200 ms. Then, while it runs:
  a. a second perflogd on the same database (its own free port) exits 1 at once, and its message
     names the first one's pid: "database in use by perflogd pid N";
  b. a second perflogd on the same port (its own database) exits 1 with "address already in use",
     and every request to the port is still answered by the first daemon (its health names its
     own database);
  c. while the first daemon runs, the database can still be read: `sqlite3` shell and Python's
     sqlite3 (read-only) see its ticks;
  d. after both attempts, the first daemon's ticks are strictly increasing in t_ms and id, with no
     duplicate, and it went on sampling throughout;
  e. once the first daemon has stopped (SIGTERM), a new one opens the same database at once; and
     after a kill -9 too (the operating system drops the lock with the process).
"""
import os
import shutil

import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

IV = 200


def run_second(args, timeout=20):
    """Start a perflogd that must fail; (exit code or None if it kept running, output)."""
    p = subprocess.Popen([os.environ.get("PERFLOGD", "build/perflogd")] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out


def ordered(rows):
    return [(a, b) for a, b in zip(rows, rows[1:]) if not (b[0] > a[0] and b[1] > a[1])]


def main():
    work = tempfile.mkdtemp(prefix="perflog-single-")
    db = os.path.join(work, "perflog.db")
    first = Daemon(args=["--interval", str(IV)], db=db, workdir=work)
    try:
        first.start(wait_ticks=3)
        pid = first.proc.pid

        # a. same database
        other_port = Daemon(db=os.path.join(work, "unused.db")).port
        t0 = time.time()
        rc, out = run_second(["--db", db, "--listen", f"127.0.0.1:{other_port}", "--interval", str(IV)])
        print(f"a: second perflogd on the same database: exit {rc} after {time.time() - t0:.2f} s:\n  "
              + out.strip().replace("\n", "\n  "), flush=True)
        check(rc == 1, f"a: a second perflogd on the same database exits 1 (got {rc})")
        check(f"database in use by perflogd pid {pid}" in out,
              f"a: its message names the first daemon's pid {pid}")

        # b. same port
        db2 = os.path.join(work, "second.db")
        rc, out = run_second(["--db", db2, "--listen", f"127.0.0.1:{first.port}", "--interval", str(IV)])
        print(f"b: second perflogd on the same port: exit {rc}:\n  " + out.strip().replace("\n", "\n  "),
              flush=True)
        check(rc == 1, f"b: a second perflogd on port {first.port} exits 1 (got {rc})")
        check("address already in use" in out.lower(), "b: its message says 'address already in use'")
        paths = set()
        for _ in range(40):
            st, h = first.get_json("/api/v1/health")
            paths.add(h["database"]["path"] if st == 200 else f"status {st}")
        check(paths == {db}, f"b: 40 health requests to the port all answered by the first daemon ({paths})")

        # c. readers still read while the daemon holds its lock
        n_py = first.tick_count()
        check(n_py >= 3, f"c: Python's sqlite3 reads {n_py} ticks while the daemon runs")
        if shutil.which("sqlite3"):
            r = subprocess.run(["sqlite3", db, "SELECT count(*) FROM ticks"], capture_output=True,
                               text=True, timeout=20)
            check(r.returncode == 0 and int(r.stdout.strip() or 0) >= n_py,
                  f"c: the sqlite3 shell reads the database while the daemon runs ({r.stdout.strip()}"
                  f"{r.stderr.strip()})")
        else:
            check(False, "c: the sqlite3 shell is installed")

        # d. the first daemon's series
        before = first.tick_count()
        try:
            first.wait_ticks(before + 5, timeout=15)
        except RuntimeError as e:
            check(False, f"d: the first daemon adds ticks: {e}")
        rows = first.query("SELECT id, t_ms FROM ticks ORDER BY id")
        bad = ordered(rows)
        check(not bad, f"d: {len(rows)} ticks, ids and t_ms strictly increasing"
                       + (f"; out of order or repeated: {bad[:5]}" if bad else ""))
        dups = len(rows) - len({t for _, t in rows})
        check(dups == 0, f"d: no t_ms stored twice ({dups})")
        check(len(rows) > before, f"d: the first daemon kept sampling ({before} -> {len(rows)} ticks)")
        check(first.proc.poll() is None, "d: the first daemon is still running")
        rc = first.stop()
        check(rc == 0, f"d: the first daemon exits 0 on SIGTERM (got {rc})")

        # e. the lock goes with the process: after a SIGTERM, then after a kill -9
        for how, end in (("SIGTERM", "kill -9"), ("kill -9", "SIGTERM")):
            d = Daemon(args=["--interval", str(IV)], db=db, workdir=work)
            n0 = d.tick_count()
            try:
                d.start(wait_ticks=n0 + 2)
                check(True, f"e: after the previous daemon's {how}, a new one opens the database "
                            f"and adds ticks ({n0} -> {d.tick_count()})")
            except RuntimeError as e:
                check(False, f"e: after the previous daemon's {how}, a new one runs: {e}")
            if end == "kill -9":
                d.kill9()
            else:
                d.stop()
        rows = d.query("SELECT id, t_ms FROM ticks ORDER BY id")
        bad = ordered(rows)
        check(not bad, f"e: over all runs, {len(rows)} ticks strictly increasing" + (f": {bad[:5]}" if bad else ""))
    finally:
        if first.proc and first.proc.poll() is None:
            first.stop()
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
