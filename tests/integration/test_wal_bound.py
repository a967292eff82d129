#!/usr/bin/env python3
"""The WAL stays bounded: perflogd on a 4 MiB tmpfs with max_db_bytes 3 MiB keeps working (plain
tier: retention.chunk_after_minutes 0).

The sampler's clocks run SPEED times faster (the test hook $PERFLOGD_TEST_CLOCK_SPEED): each tick
is still stamped one second after the last, with real counters, so the writer commits, checkpoints
and maintains the database as it would over hours of 1 s ticks, in a minute or two. Meanwhile a
reader opens the database every second for a short query (a reader holds the WAL back from its
checkpoints SPEED times longer in tick time than it takes: a 2 s query would hold two minutes of
ticks' WAL) and the health endpoint is polled; the sizes of the database, its WAL and the tmpfs are watched every
20 ms.

  a. 30 minutes of ticks: health never degraded, no write failure, and the file plus its WAL stay
     under 4 MiB all along (the WAL's peak is printed);
  b. on until the 3 MiB cap prunes the oldest ticks (about 2 hours of ticks on a small VM; at most
     MAX_HOURS), then 30 minutes more: still never degraded, file plus WAL under 4 MiB, the pages
     in use under the cap, the newest hour kept;
  c. at the end: exit 0 on SIGTERM, PRAGMA integrity_check ok, the stored ticks one second apart.

Before the WAL was bounded this failed after about 4 minutes of ticks: the WAL grew to 4 MB (the
default autocheckpoint of 1000 pages), the disk was full and the daemon stayed degraded.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, integrity_check, log_lines, require_root  # noqa: E402

FS_BYTES = 4 * 1024 * 1024
CAP = 3 * 1024 * 1024
SPEED = 60
PHASE_A_S = 30 * 60
MAX_HOURS = 6       # phase b: until the cap prunes (about 2 h of ticks here), at most this
AFTER_PRUNE_S = 30 * 60


def size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class Watch(threading.Thread):
    """Samples file sizes every 20 ms and health every 0.5 s; a reader every second."""

    def __init__(self, d, mnt):
        super().__init__(daemon=True)
        self.d, self.mnt = d, mnt
        self.stop = threading.Event()
        self.peak_total = self.peak_wal = self.peak_db = self.peak_fs = 0
        self.health = []  # (status, problems, write_failures, last_sample_ms, used_bytes)
        self.reads = self.read_errors = 0
        self.errors = []

    def sizes(self):
        db = self.d.db
        wal, main = size(db + "-wal"), size(db)
        st = os.statvfs(self.mnt)
        used_fs = (st.f_blocks - st.f_bfree) * st.f_frsize
        self.peak_wal = max(self.peak_wal, wal)
        self.peak_db = max(self.peak_db, main)
        self.peak_total = max(self.peak_total, wal + main)
        self.peak_fs = max(self.peak_fs, used_fs)

    def read(self):
        try:
            conn = sqlite3.connect(f"file:{self.d.db}?mode=ro", uri=True, timeout=5)
            try:
                conn.execute("SELECT count(*), max(t_ms) FROM ticks").fetchone()
                self.reads += 1
            finally:
                conn.close()
        except sqlite3.Error as e:
            self.read_errors += 1
            self.errors.append(str(e))

    def run(self):
        next_health = next_read = 0
        while not self.stop.is_set():
            self.sizes()
            now = time.time()
            if now >= next_health:
                next_health = now + 0.5
                try:
                    st, h = self.d.get_json("/api/v1/health")
                    if st == 200:
                        self.health.append((h["status"], h["problems"], h["write_failures"],
                                            h["last_sample_ms"], h["database"]["used_bytes"]))
                    else:
                        self.health.append((f"HTTP {st}", [], None, None, None))
                except OSError as e:
                    self.health.append((f"no answer: {e}", [], None, None, None))
            if now >= next_read:
                next_read = now + 1.0
                self.read()
            self.stop.wait(0.02)

    def last_sample_ms(self):
        for h in reversed(self.health):
            if h[3]:
                return h[3]
        return None


def wait_sim(d, w, first_ms, span_s, timeout):
    """Wait until the daemon's newest sample is span_s seconds of tick time after first_ms."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if d.proc.poll() is not None:
            return False
        last = w.last_sample_ms()
        if last and last - first_ms >= span_s * 1000:
            return True
        time.sleep(0.2)
    return False


def report(label, w, t0):
    bad = [h for h in w.health if h[0] != "ok"]
    fails = max((h[2] or 0) for h in w.health) if w.health else None
    print(f"{label}: {time.time() - t0:.0f} s real; {len(w.health)} health answers; peaks: database "
          f"{w.peak_db} bytes, WAL {w.peak_wal} bytes, database + WAL {w.peak_total} bytes, tmpfs "
          f"used {w.peak_fs} of {FS_BYTES}; {w.reads} reads ({w.read_errors} failed)", flush=True)
    check(w.health and not bad, f"{label}: health 'ok' in all {len(w.health)} answers"
          + (f"; not ok: {bad[:3]}" if bad else ""))
    check(fails == 0, f"{label}: write_failures 0 (max seen {fails})")
    check(w.peak_total < FS_BYTES, f"{label}: the database and its WAL stayed under 4 MiB "
          f"(peak {w.peak_total} bytes, WAL peak {w.peak_wal})")


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="perflog-walbound-")
    mnt = os.path.join(work, "fs")
    os.mkdir(mnt)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES}", "tmpfs", mnt],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, f"mount a {FS_BYTES}-byte tmpfs on {mnt} {r.stderr.strip()}"):
        finish()
    # The plain tier (chunk_after_minutes 0): its WAL is what this test bounds, and it reaches the
    # cap in about 2 h of ticks. The compressed tier stored 6 h of this machine's ticks without
    # reaching it (a rehearsal of CI), so phase b would never start; test_sizecap holds the cap
    # on a chunked history.
    d = Daemon(config={"max_db_bytes": CAP, "retention": {"chunk_after_minutes": 0}},
               db=os.path.join(mnt, "perflog.db"), workdir=work,
               env={"PERFLOGD_TEST_CLOCK_SPEED": str(SPEED)})
    w = Watch(d, mnt)
    try:
        t0 = time.time()
        d.start(wait_ticks=1)
        first_ms = d.query("SELECT min(t_ms) FROM ticks")[0][0]
        w.start()
        check(wait_sim(d, w, first_ms, PHASE_A_S, PHASE_A_S / SPEED * 4 + 60),
              f"a: {PHASE_A_S // 60} minutes of ticks sampled at {SPEED}x")
        report("a", w, t0)

        pruned_at = None
        for span in range(PHASE_A_S + 600, MAX_HOURS * 3600 + 1, 600):
            if not wait_sim(d, w, first_ms, span, 600 / SPEED * 4 + 60):
                break
            if d.query("SELECT min(t_ms) FROM ticks")[0][0] > first_ms:
                pruned_at = span
                break
        when = f"after {pruned_at / 3600:.2f} h" if pruned_at else "never"
        check(pruned_at, f"b: the cap started pruning {when} of ticks (at most {MAX_HOURS} h)")
        if pruned_at:
            check(wait_sim(d, w, first_ms, pruned_at + AFTER_PRUNE_S, AFTER_PRUNE_S / SPEED * 4 + 60),
                  f"b: {AFTER_PRUNE_S // 60} minutes more of ticks after the cap was reached")
        report("b", w, t0)
        lo, hi, n = d.query("SELECT min(t_ms), max(t_ms), count(*) FROM ticks")[0]
        used = max((h[4] or 0) for h in w.health[-10:])
        print(f"b: ticks stored from {lo} to {hi} ({(hi - lo) / 3600e3:.2f} h, {n} ticks); first "
              f"tick at {first_ms}; pages in use {used} bytes", flush=True)
        check(lo > first_ms, f"b: the cap pruned the oldest ticks ({(lo - first_ms) / 60e3:.0f} "
                             f"minutes of them)")
        check(hi - lo >= 3600 * 1000 - 2000, f"b: the newest hour is kept ({(hi - lo) / 1000:.0f} s)")
        check(0 < used <= CAP, f"b: pages in use under the cap ({used} <= {CAP})")
        check(d.proc.poll() is None, "b: perflogd still running")
        check(not log_lines(d, "disk full"), "b: the log never says 'disk full'")
        check(w.read_errors == 0, f"b: every read of the database while it ran worked "
              f"({w.reads} reads; errors {w.errors[:2]})")
    finally:
        w.stop.set()
        if w.is_alive():
            w.join(5)
        rc = d.stop() if d.proc else None
        check(rc == 0, f"c: perflogd exits 0 on SIGTERM (got {rc})")
        if rc is not None:
            ic = integrity_check(d.db)
            check(ic == "ok", f"c: PRAGMA integrity_check = {ic!r}")
            rows = d.query("SELECT t_ms, missed FROM ticks ORDER BY t_ms")
            # one second apart, or as many more as were missed; a late tick (less than half an
            # interval: not missed) moves one step and the next back
            off = [(a[0], b[0], b[1]) for a, b in zip(rows, rows[1:])
                   if not 0 < b[0] - a[0] or abs(b[0] - a[0] - 1000 * (1 + b[1])) >= 1000]
            missed = sum(m for _, m in rows)
            check(not off, f"c: {len(rows)} stored ticks one second of tick time apart, or as "
                           f"many more as they say were missed ({missed} missed in all)"
                           + (f"; off: {off[:5]}" if off else ""))
        subprocess.run(["umount", "-l", mnt], capture_output=True)
    finish()


if __name__ == "__main__":
    main()
