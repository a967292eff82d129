#!/usr/bin/env python3
"""The writer's WAL frames reach the file system gathered, and readers never see a commit in part.

perflogd's writer connection goes through storage/walbuf.c, which writes a commit's WAL frames in a
few large writes instead of two a page. A daemon samples the real machine every 100 ms (a commit
every 2 s carries about 20 ticks) for 35 s, past its maintenance at 30 s of ticks, while a reader
with Python's sqlite3 (the default VFS, a connection of its own, as a user's shell would be) reads
the ticks table a thousand times a second:

1. every read succeeds, and the newest tick id never goes back;
2. /api/v1/health database.wal_writes: the writes SQLite made on the WAL (sqlite_writes) and those
   the file system got (file_writes); both counted, and at least four calls gathered into each
   write on average (a commit of n pages is 2n calls);
3. SIGTERM exits 0 and PRAGMA integrity_check on the file says ok.
No time is measured.
"""
import sqlite3
import threading
import time

from perflogtest import Daemon, check, finish, integrity_check


def main():
    d = Daemon(args=["--interval", "100"]).start(wait_ticks=1)
    stop = threading.Event()
    seen = {"reads": 0, "errors": [], "back": 0}

    def reader():
        conn = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True, timeout=10)
        last = 0
        while not stop.is_set():
            try:
                row = conn.execute("SELECT max(id), count(*) FROM ticks").fetchone()
            except sqlite3.Error as e:
                seen["errors"].append(str(e))
                continue
            seen["reads"] += 1
            if row[0] is not None:
                if row[0] < last:
                    seen["back"] += 1
                last = row[0]
            time.sleep(0.001)  # thousands of reads a second, without taking a core from others
        conn.close()

    th = threading.Thread(target=reader)
    th.start()
    try:
        d.wait_ticks(350, timeout=90)
        d.wait_ticks(d.tick_count() + 30, timeout=30)
        stop.set()
        th.join()
        check(seen["reads"] > 0 and not seen["errors"],
              f"{seen['reads']} reads while the daemon wrote, errors: {seen['errors'][:3]}")
        check(seen["back"] == 0, f"the newest tick id never went back ({seen['back']} times)")
        wal = d.get_json("/api/v1/health")[1]["database"].get("wal_writes")
        print(f"database.wal_writes: {wal}", flush=True)
        ok = isinstance(wal, dict) and all(isinstance(wal.get(k), int)
                                           for k in ("sqlite_writes", "file_writes", "bytes"))
        check(ok, f"/api/v1/health database.wal_writes has its three counts: {wal}")
        if ok:
            check(wal["file_writes"] > 0 and wal["bytes"] > 0,
                  f"the WAL was written: {wal['file_writes']} writes, {wal['bytes']} bytes")
            check(wal["sqlite_writes"] >= 4 * wal["file_writes"],
                  f"{wal['sqlite_writes']} WAL writes of SQLite reached the file system as "
                  f"{wal['file_writes']}")
    finally:
        stop.set()
        th.join()
        rc = d.stop()
    check(rc == 0, f"SIGTERM: exit {rc}")
    check(integrity_check(d.db) == "ok", "integrity_check after the stop")
    finish()


if __name__ == "__main__":
    main()
