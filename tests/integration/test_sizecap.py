#!/usr/bin/env python3
"""The size cap (max_db_bytes) on a real perflogd, with a fast-forwarded history: bench_seed writes
six hours of 1 s ticks (about 10 MB, with roll-ups) through the real storage code, then perflogd
starts on that file with a cap.

  a. cap 4 MiB: the writer prunes the oldest raw ticks between writes until the pages in use are
     under 90% of the cap, gives the pages back (incremental auto-vacuum), and the file (with its
     WAL) ends under the cap + 10%; the newest seeded tick and the live ticks are all kept;
     health stays ok and reports used/max bytes;
  b. cap 1 MiB, less than the newest hour that is always kept: health turns degraded and says the
     cap cannot be met; the newest data is still there; the log says it once.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

BUILD = os.environ.get("PERFLOG_BUILD_DIR", "build")
SEED = os.path.join(BUILD, "bench", "bench_seed")


def file_bytes(db):
    return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))


def span(d):
    """min(t_ms), max(t_ms) and the count of every tick, plain and chunked (ticks_all)."""
    return [int(x) for x in d.query_chunked("SELECT min(t_ms), max(t_ms), count(*) FROM ticks_all;")[0]]


def wait_health(d, pred, timeout):
    deadline = time.time() + timeout
    h = None
    while time.time() < deadline:
        try:
            st, h = d.get_json("/api/v1/health")
        except OSError:  # not listening yet
            st = None
        if st == 200 and pred(h):
            return h
        time.sleep(1)
    return h


def main():
    if not os.access(SEED, os.X_OK):
        check(False, f"{SEED} is built (cmake --build builds bench/)")
        finish()
    work = tempfile.mkdtemp(prefix="perflog-sizecap-", dir="/var/tmp")
    db = os.path.join(work, "perflog.db")
    try:
        out = subprocess.run([SEED, db, "6"], capture_output=True, text=True, timeout=120)
        check(out.returncode == 0, f"bench_seed wrote 6 h of ticks ({out.stdout.strip()}{out.stderr.strip()})")
        seeded = file_bytes(db)
        print(f"seeded file: {seeded} bytes", flush=True)
        check(seeded > 8 * 1024 * 1024, f"the seeded file is well over the 4 MiB cap ({seeded} bytes)")

        cap = 4 * 1024 * 1024
        d = Daemon(config={"max_db_bytes": cap}, db=db, workdir=work).start(wait_ticks=0)
        try:
            h = wait_health(d, lambda h: 0 < h["database"]["used_bytes"] <= cap * 0.9
                            and file_bytes(db) <= cap + cap // 10, 150)
            lo, hi, n = span(d)
            fb = file_bytes(db)
            print(f"a: used {h['database']['used_bytes']} bytes, file {fb} bytes, {n} ticks "
                  f"from {lo} to {hi}", flush=True)
            check(h["database"]["used_bytes"] <= cap * 0.9, f"a: pages in use under 90% of the cap "
                  f"({h['database']['used_bytes']} <= {cap * 0.9:.0f})")
            check(fb <= cap + cap // 10, f"a: the file and its WAL are under the cap + 10% ({fb} bytes)")
            check(h["database"]["max_bytes"] == cap, "a: health reports the cap")
            check(h["status"] == "ok", f"a: health ok ({h['status']}, {h['problems']})")
            # Six hours to roll up, chunk and prune take many ticks' worth of steps: each tick
            # interrupts them, and the writer takes them up again right after writing it. The
            # cap can be reached before the first tick came in the middle of a step (pruning
            # goes first), so the count is read once the backlog has had ticks to yield to.
            h = wait_health(d, lambda h: h.get("wakeups", {}).get("writer_resumes", 0) > 0, 60)
            resumes = h.get("wakeups", {}).get("writer_resumes")
            check(isinstance(resumes, int) and resumes > 0,
                  f"a: the writer went back to the backlog right after the ticks that interrupted "
                  f"it (wakeups.writer_resumes {resumes})")
            time.sleep(2.5)
            lo2, hi2, n2 = span(d)
            check(hi2 >= int(time.time() * 1000) - 3000, "a: live ticks keep arriving and are kept")
            check(hi2 - lo2 >= 3600 * 1000, f"a: at least the newest hour of raw data is kept ({(hi2 - lo2) / 1000:.0f} s)")
            check(n2 < 21600, f"a: old raw ticks were pruned ({n2} of 21600 + live)")
            rows = d.query("SELECT count(*) FROM obj_memory_1h")[0][0]
            check(rows >= 5, f"a: the hour roll-ups of the pruned hours are kept ({rows})")
        finally:
            check(d.stop() == 0, "a: perflogd exits 0")

        tiny = 1024 * 1024
        d = Daemon(config={"max_db_bytes": tiny}, db=db, workdir=work).start(wait_ticks=0)
        try:
            h = wait_health(d, lambda h: h["status"] == "degraded", 90)
            print(f"b: {h}", flush=True)
            check(h["status"] == "degraded" and any("max_db_bytes" in p for p in h["problems"]),
                  f"b: a cap below the newest hour: health degraded, says why ({h['problems']})")
            lo, hi, n = span(d)
            check(hi >= int(time.time() * 1000) - 3000 and hi - lo >= 3600 * 1000 - 2000,
                  f"b: the newest hour is kept ({(hi - lo) / 1000:.0f} s up to now)")
            lines = [l for l in d.log().splitlines() if "over max_db_bytes" in l]
            check(len(lines) == 1, f"b: the log says it once ({len(lines)})")
        finally:
            check(d.stop() == 0, "b: perflogd exits 0")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
