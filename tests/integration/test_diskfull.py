#!/usr/bin/env python3
"""A full disk: the database lives on a small tmpfs that a filler file fills to ENOSPC.

Scenario A (max_held_ticks 120, interval 1000 ms): perflogd writes ticks, then the filesystem is
filled so SQLite gets SQLITE_FULL, and kept full: a reader holds the WAL (as a long export
would), so a checkpoint cannot give its space back, and a thread takes every byte perflogd frees
all the same. Checks: the daemon stays
alive and keeps sampling, the error is logged once (one log line mentions 'disk full', however many retries), and ~8 s later the filler is
deleted: within a few seconds every tick held in memory is written, so the stored series has no hole
(consecutive ticks one interval apart across the whole full period, missed = 0, interval_ms right),
the log says the database is writable again, and PRAGMA integrity_check is 'ok'.

Scenario C (interval 1000 ms, full for 8 s, no reader): the write that meets ENOSPC checkpoints
and truncates the WAL, then writes into the space it gave back, so the daemon never fails: health
ok, no write failure, nothing logged, every tick committed while the disk is full.

Scenario B (max_held_ticks 10, interval 200 ms, full for 5 s, i.e. ~25 ticks for 10 places): the
oldest held ticks are dropped and the newest kept: the stored series has exactly one hole, inside the
full period; after it the ticks run without a gap up to the end; at most max_held_ticks of them were
sampled while the disk was full; the daemon keeps going and writes new ticks afterwards. What the log
says about the loss is printed (the drop count is meant for /api/v1/health).
"""
import errno
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, integrity_check, log_lines, require_root  # noqa: E402

TMPFS_SIZE = "4m"
STARTED = []  # daemons to stop whatever happens, before the tmpfs is unmounted


def mount_tmpfs(path):
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", path],
                       capture_output=True, text=True)
    return r.returncode == 0, (r.stderr or r.stdout).strip()


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


def fill(path):
    """Write a filler file until the filesystem says ENOSPC; returns the bytes written."""
    total = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for chunk in (1 << 20, 1 << 16, 4096, 512, 1):
            buf = b"\xa5" * chunk
            while True:
                try:
                    n = os.write(fd, buf)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
                total += n
                if n < chunk:
                    break
    finally:
        os.close(fd)
    return total


class KeepFull(threading.Thread):
    """Keeps the filesystem full: every 50 ms the filler takes whatever was freed. perflogd gives
    space back on a full disk (it checkpoints and truncates its WAL), which the filler would
    otherwise leave free for it, and the disk would not stay full."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.stop = threading.Event()
        self.topped = 0

    def run(self):
        while not self.stop.wait(0.05):
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                for chunk in (1 << 16, 4096, 512, 1):
                    while True:
                        try:
                            self.topped += os.write(fd, b"\xa5" * chunk)
                        except OSError as e:
                            if e.errno != errno.ENOSPC:
                                raise
                            break
            finally:
                os.close(fd)

    def end(self):
        self.stop.set()
        self.join(5)


def pin_wal(db):
    """A reader in the middle of a read: it holds the WAL, so a checkpoint cannot give the WAL's
    space back, as a long export would. Returns the connection; closing it lets go."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM ticks").fetchone()
    return conn


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def wait_log(d, needle, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if log_lines(d, needle):
            return time.time()
        time.sleep(0.05)
    return None


def started(d):
    STARTED.append(d)
    return d


def all_ticks(d):
    return d.query("SELECT t_ms, interval_ms, missed FROM ticks ORDER BY t_ms")


def scenario_a(mnt):
    iv = 1000
    d = Daemon(config={"interval_ms": iv, "max_held_ticks": 120, "commit_interval_ms": 1000},
               db=os.path.join(mnt, "perflog.db"))
    started(d).start(wait_ticks=3)
    # The WAL file keeps its length after the daemon's checkpoints, and a WAL whose old frames
    # are all checkpointed is written again from its start: with a large WAL left by the first
    # transactions (the schema, the series rows) the commits could go on inside it for many
    # seconds of a full disk. Truncate it, let the daemon commit into the fresh file, then pin it:
    # from there every commit grows the file.
    rw = sqlite3.connect(d.db, timeout=10, isolation_level=None)
    rw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    rw.close()
    deadline = time.time() + 30
    while time.time() < deadline and os.path.getsize(d.db + "-wal") == 0:
        time.sleep(0.05)
    pin = pin_wal(d.db)
    filler = os.path.join(mnt, "filler")
    t_fill = time.time()
    nfill = fill(filler)
    keep = KeepFull(filler)
    keep.start()
    print(f"A: filled the tmpfs with {nfill} bytes ({free_bytes(mnt)} bytes left) at "
          f"{time.strftime('%H:%M:%S', time.gmtime(t_fill))}", flush=True)
    t_err = wait_log(d, "disk full", 30)
    check(t_err is not None, f"A: disk full logged (after {t_err - t_fill:.1f} s)" if t_err
          else "A: disk full logged within 30 s of filling the filesystem")
    if t_err is None:
        keep.end()
        pin.close()
        d.stop()
        return
    # stay full ~8 s
    time.sleep(max(0.0, t_err + 8 - time.time()))
    alive = d.proc.poll() is None
    check(alive, "A: perflogd still running after 8 s on a full disk")
    n_full_lines = len(log_lines(d, "disk full"))
    stored_while_full = d.tick_count()
    keep.end()
    pin.close()
    print(f"A: the filler took {keep.topped} more bytes that perflogd gave back while full", flush=True)
    t_free = time.time()
    os.unlink(filler)
    t_back = wait_log(d, "writable again", 10)
    check(t_back is not None, f"A: 'writable again' logged {t_back - t_free:.1f} s after the filler was deleted"
          if t_back else "A: 'writable again' logged within 10 s after the filler was deleted")
    # every tick sampled until the disk was freed must be stored within a few seconds
    deadline = time.time() + 10
    caught_up = None
    while time.time() < deadline:
        rows = all_ticks(d)
        if rows and rows[-1][0] >= t_free * 1000 and not holes(rows, iv):
            caught_up = time.time()
            break
        time.sleep(0.1)
    check(caught_up is not None and caught_up - t_free <= 5,
          f"A: held ticks written {caught_up - t_free:.1f} s after the disk was freed (want <= 5 s)"
          if caught_up else "A: held ticks written within 10 s after the disk was freed")
    time.sleep(2)
    rc = d.stop()
    check(rc == 0, f"A: SIGTERM exit code {rc}")
    rows = all_ticks(d)
    held = [r for r in rows if t_fill * 1000 <= r[0] <= t_free * 1000]
    print(f"A: {len(rows)} ticks stored; {stored_while_full} were in the database while it was full; "
          f"{len(held)} ticks were sampled while the disk was full ({(t_free - t_fill):.1f} s) "
          f"and written after it was freed", flush=True)
    check(len(held) >= int(t_free - t_fill) - 1,
          f"A: {len(held)} ticks sampled during {t_free - t_fill:.1f} s of full disk are stored (sampling went on)")
    h = holes(rows, iv)
    check(not h, f"A: no hole in {len(rows)} ticks from {rows[0][0]} to {rows[-1][0]}"
                 + (f": holes {h[:5]}" if h else ""))
    bad_iv = [r for r in rows[1:] if r[1] is None or abs(r[1] - iv) > 20]
    check(not bad_iv, f"A: every interval_ms within {iv}±20" + (f"; off: {bad_iv[:5]}" if bad_iv else ""))
    missed = sum(r[2] for r in rows)
    check(missed == 0, f"A: missed = {missed} over the run (want 0)")
    n_lines = len(log_lines(d, "disk full"))
    check(n_full_lines == 1 and n_lines == 1,
          f"A: 'disk full' logged once ({n_full_lines} lines after 8 s full, {n_lines} at the end)")
    print("A: log:\n  " + "\n  ".join(d.log().splitlines()), flush=True)
    ic = integrity_check(d.db)
    check(ic == "ok", f"A: PRAGMA integrity_check = {ic!r}")


def log_time_ms(line):
    """The UTC time stamp that starts a perflogd log line, in ms since the epoch."""
    import calendar
    stamp = line.split(" ", 1)[0]  # 2026-11-29T19:55:10.696Z
    secs = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
    return secs * 1000 + int(stamp[20:23])


def holes(rows, iv):
    """[(t_ms before, t_ms after)] where consecutive ticks are not one interval apart (±iv/4)."""
    return [(a[0], b[0]) for a, b in zip(rows, rows[1:]) if abs((b[0] - a[0]) - iv) > iv // 4]


def scenario_b(mnt):
    iv, cap, full_s = 200, 10, 5.0
    d = Daemon(config={"interval_ms": iv, "max_held_ticks": cap, "commit_interval_ms": 1000},
               db=os.path.join(mnt, "perflog.db"))
    started(d).start(wait_ticks=5)
    pin = pin_wal(d.db)
    filler = os.path.join(mnt, "filler")
    before = d.query("SELECT max(t_ms) FROM ticks")[0][0]
    t_fill = time.time()
    fill(filler)
    keep = KeepFull(filler)
    keep.start()
    t_err = wait_log(d, "disk full", 10)
    check(t_err is not None, "B: disk full logged")
    if t_err is None:
        keep.end()
        pin.close()
        d.stop()
        return
    time.sleep(max(0.0, t_err + full_s - time.time()))
    # the newest tick committed before the failure
    last_ok = d.query("SELECT max(t_ms) FROM ticks")[0][0]
    keep.end()
    pin.close()
    t_free = time.time()
    os.unlink(filler)
    check(wait_log(d, "writable again", 10) is not None, "B: 'writable again' logged after the filler was deleted")
    time.sleep(3)
    alive = d.proc.poll() is None
    rc = d.stop()
    check(alive and rc == 0, f"B: perflogd kept running through the overflow (alive {alive}, exit {rc})")
    rows = all_ticks(d)
    h = holes(rows, iv)
    after_hole = [r for r in rows if h and r[0] >= h[0][1]]
    sampled_full = [r for r in rows if r[0] > last_ok and r[0] <= t_free * 1000]
    print(f"B: last tick committed before the failure at {last_ok} ({before} when filling began); "
          f"disk full for {t_free - t_err:.1f} s = ~{(t_free - t_err) * 1000 / iv:.0f} ticks for "
          f"{cap} places; holes: {[(a, b, round((b - a) / iv) - 1) for a, b in h]}", flush=True)
    print(f"B: {len(sampled_full)} ticks of the full period stored: "
          f"{[r[0] for r in sampled_full]}", flush=True)
    check(len(h) == 1, f"B: exactly one hole in the stored series ({len(h)})")
    if h:
        lost = round((h[0][1] - h[0][0]) / iv) - 1
        check(h[0][0] >= last_ok and h[0][1] <= t_free * 1000,
              f"B: the hole ({lost} ticks, {h[0][0]}..{h[0][1]}) lies inside the full period")
        check(lost >= (t_free - t_err) * 1000 / iv - 2 * cap,
              f"B: the oldest ticks were dropped ({lost} lost)")
        check(len(after_hole) > 10 and after_hole[-1][0] >= t_free * 1000 + 2000,
              f"B: after the hole {len(after_hole)} ticks run without a gap to the end "
              f"({after_hole[0][0]}..{after_hole[-1][0]}); the newest were kept")
    check(1 <= len(sampled_full) <= cap,
          f"B: {len(sampled_full)} ticks sampled while the disk was full are stored (<= max_held_ticks {cap})")
    # the moment the database took writes again, from the log line's own time stamp
    back = log_lines(d, "writable again")
    if back:
        t_back_ms = log_time_ms(back[0])
        kept = [r for r in rows if last_ok < r[0] <= t_back_ms]
        print(f"B: {len(kept)} ticks held at the moment the database was writable again "
              f"({back[0][:24]}): {[r[0] for r in kept]}", flush=True)
        check(cap - 1 <= len(kept) <= cap + 1,
              f"B: the newest ~max_held_ticks were held and written: {len(kept)} (max_held_ticks {cap})")
    missed = sum(r[2] for r in rows)
    print(f"B: missed over the run = {missed}; the stored tick after the hole says interval_ms "
          f"{after_hole[0][1] if after_hole else None}", flush=True)
    drop_lines = [ln for ln in d.log().splitlines() if "were dropped" in ln]
    print(f"B: log lines about dropped ticks: {drop_lines or 'none'}", flush=True)
    logged = [int(m.group(1)) for m in (re.search(r"(\d+) oldest tick\(s\) were dropped", ln)
                                         for ln in drop_lines) if m]
    check(len(logged) == 1 and h and logged[0] == round((h[0][1] - h[0][0]) / iv) - 1,
          f"B: the recovery logs how many ticks were dropped ({logged}) and it matches the hole")
    check(len(log_lines(d, "disk full")) == 1, f"B: 'disk full' logged once ({len(log_lines(d, 'disk full'))})")
    ic = integrity_check(d.db)
    check(ic == "ok", f"B: PRAGMA integrity_check = {ic!r}")


def scenario_c(mnt):
    """Full, with no reader holding the WAL: the write that meets ENOSPC checkpoints, truncates the
    WAL and writes into the space it gave back, or holds its ticks until the disk has room; either
    way no tick is lost and the file stays whole."""
    iv, full_s = 1000, 8
    d = Daemon(config={"interval_ms": iv, "commit_interval_ms": 1000}, db=os.path.join(mnt, "perflog.db"))
    started(d).start(wait_ticks=3)
    filler = os.path.join(mnt, "filler")
    t_fill = time.time()
    fill(filler)
    keep = KeepFull(filler)
    keep.start()
    time.sleep(full_s)
    st, h = d.get_json("/api/v1/health")
    stored = d.query("SELECT count(*) FROM ticks WHERE t_ms > ?", (t_fill * 1000,))[0][0]
    keep.end()
    os.unlink(filler)
    print(f"C: full for {full_s} s (the filler took {keep.topped} more bytes freed meanwhile); "
          f"health {st} {h and h['status']}, write_failures {h and h['write_failures']}; "
          f"{stored} ticks of the full period committed while it was full", flush=True)
    # Whether the commits go on through the full period depends on a race this test cannot
    # referee: the space a truncated WAL gives back is taken by the daemon's retry or by the
    # filler that keeps the disk full (about half the runs each way on 2026-12-02, 2 cores). So
    # it is reported, and what holds either way is checked: nothing lost, a clean exit.
    print(f"C: the daemon kept committing through the full period: "
          f"{st == 200 and h['status'] == 'ok' and h['write_failures'] == 0 and stored >= full_s - 2}"
          f" ({len(log_lines(d, 'disk full'))} 'disk full' log lines)", flush=True)
    rc = d.stop()
    check(rc == 0, f"C: SIGTERM exit code {rc}")
    rows = all_ticks(d)
    h = holes(rows, iv)
    check(not h, f"C: no hole in {len(rows)} ticks" + (f": {h[:5]}" if h else ""))
    ic = integrity_check(d.db)
    check(ic == "ok", f"C: PRAGMA integrity_check = {ic!r}")


def main():
    require_root()
    base = tempfile.mkdtemp(prefix="perflog-diskfull-")
    for name, scenario in (("A", scenario_a), ("B", scenario_b), ("C", scenario_c)):
        mnt = os.path.join(base, name)
        os.mkdir(mnt)
        ok, err = mount_tmpfs(mnt)
        if not check(ok, f"{name}: mount -t tmpfs -o size={TMPFS_SIZE} on {mnt}" + ("" if ok else f": {err}")):
            continue
        try:
            scenario(mnt)
        except RuntimeError as e:
            check(False, f"{name}: {e}")
        finally:
            for d in STARTED:
                if d.proc and d.proc.poll() is None:
                    d.stop()
            STARTED.clear()
            umount(mnt)
    finish()


if __name__ == "__main__":
    main()
