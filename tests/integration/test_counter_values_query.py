#!/usr/bin/env python3
"""counter_values filtered by path and by time gives the same rows from chunked storage as from
plain storage, in the stock sqlite3 shell with `.load build/perflog_chunk`.

bench/bench_seed writes 2 h of 1 s ticks, which get two edits, made as SQLite would see them
after a real daemon's life:
  - a few ticks deleted from the middle of a span (a tick gone while rows of it stay, as after a
    crash of an older perflogd): their values must vanish from both copies;
  - a wall clock stepped back: the t_ms of 120 ticks moved 20 min into the past, so the times of
    their spans are not in tick order. A time filter that prunes chunks must still find these rows.
Then one copy stays plain and the other goes through the writer's chunking (rows older than 30
min, then their ticks: the chunked ticks hold the gap and the step).
Each query (by path, by object + instance + counter, open and closed time ranges whose edges fall
inside chunks, t_ms = X, a fractional and a text bound, time_utc, counts and sums over all) is
answered by both copies and the answers are compared as text. A shell without the extension still reads the plain copy, and chunk_series refuses a table name
that is no name.

Needs PERFLOG_BUILD_DIR (bench/bench_seed, perflog_chunk.so)."""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import check, finish  # noqa: E402

BUILD = os.environ.get("PERFLOG_BUILD_DIR", "build")
SEED = os.path.join(BUILD, "bench", "bench_seed")
EXT = os.path.join(BUILD, "perflog_chunk")
MIN = 60000


def shell(db, sql, load=True):
    pre = [f".load {EXT}"] if load else []
    r = subprocess.run(["sqlite3", "-bail", db] + pre + [sql], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def edit(db, gone, back):
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM ticks WHERE id BETWEEN ? AND ?", gone)
    conn.execute("UPDATE ticks SET t_ms = t_ms - 20 * 60000 WHERE id BETWEEN ? AND ?", back)
    conn.commit()
    conn.close()


def main():
    work = tempfile.mkdtemp(prefix="perflog-cvq-")
    plain, dense = os.path.join(work, "plain.db"), os.path.join(work, "dense.db")
    try:
        out = subprocess.run([SEED, plain, "2"], capture_output=True, text=True, timeout=300)
        check(out.returncode == 0, f"bench_seed wrote 2 h of ticks ({out.stderr.strip()})")
        # ticks 1000-1009 go (in a span), ticks 2000-2119 step 20 min back, onto the times of ticks 800-919
        edit(plain, (1000, 1009), (2000, 2119))
        shutil.copyfile(plain, dense)
        out = subprocess.run([SEED, dense, "0", "1800"], capture_output=True, text=True, timeout=300)
        check(out.returncode == 0, f"the writer's chunking ran ({out.stderr.strip()})")
        conn = sqlite3.connect(dense)
        nchunks, raw_from, tchunks, ticks_from = conn.execute(
            "SELECT (SELECT count(*) FROM obj_disk_chunks), (SELECT min(tick) FROM obj_disk), "
            "(SELECT count(*) FROM ticks_chunks), (SELECT min(id) FROM ticks)").fetchone()
        conn.close()
        check(nchunks > 0 and raw_from > 3600, f"{nchunks} disk chunks, raw rows from tick {raw_from}")
        check(tchunks >= 9 and ticks_from == raw_from, f"{tchunks} ticks chunks, plain ticks from {ticks_from}")
        conn = sqlite3.connect(plain)
        lo, hi = conn.execute("SELECT min(t_ms), max(t_ms) FROM ticks").fetchone()
        t1500 = conn.execute("SELECT t_ms FROM ticks WHERE id = 1500").fetchone()[0]
        t2050 = conn.execute("SELECT t_ms FROM ticks WHERE id = 2050").fetchone()[0]
        conn.close()

        path = "\\PhysicalDisk(vda)\\Disk Bytes/sec"
        objc = "object = 'PhysicalDisk' AND instance = 'vda' AND counter = 'Disk Bytes/sec'"
        cpu = "path = '\\Processor(_Total)\\% Processor Time'"
        by_path = f"path = '{path}'"
        rows = "SELECT t_ms, time_utc, interval_ms, path, object, instance, counter, value FROM counter_values"
        queries = [
            f"{rows} WHERE {by_path} ORDER BY t_ms",
            f"{rows} WHERE {objc} ORDER BY t_ms",
            f"{rows} WHERE {by_path} AND t_ms BETWEEN {t1500 - 333} AND {t1500 + 700 * 1000} ORDER BY t_ms",
            f"{rows} WHERE {cpu} AND t_ms >= {hi - 45 * MIN} ORDER BY t_ms",
            f"{rows} WHERE {by_path} AND t_ms < {lo + 20 * MIN} ORDER BY t_ms",
            f"{rows} WHERE {by_path} AND t_ms > {t1500}.5 AND t_ms <= {t1500 + 10000}.25 ORDER BY t_ms",
            f"{rows} WHERE {by_path} AND t_ms = {t1500}",
            f"{rows} WHERE {by_path} AND t_ms = {t2050}",
            f"{rows} WHERE {by_path} AND t_ms BETWEEN {t2050 - 60000} AND {t2050 + 60000} ORDER BY t_ms, value, interval_ms",
            f"{rows} WHERE {by_path} AND t_ms >= 'x'",
            f"{rows} WHERE {by_path} AND time_utc >= (SELECT strftime('%Y-%m-%dT%H:%M:%fZ', {t1500} / 1000.0, "
            f"'unixepoch')) AND t_ms < {t1500 + 5000} ORDER BY t_ms",
            # sums of REALs as 12 digits: chunked rows come in another order, so the last bits differ
            "SELECT path, count(*), count(value), printf('%.12g', sum(value)), min(t_ms), max(t_ms), sum(interval_ms) "
            "FROM counter_values GROUP BY path ORDER BY path",
            f"SELECT object, count(*), printf('%.12g', sum(value)) FROM counter_values WHERE t_ms BETWEEN {lo + 5 * MIN} "
            f"AND {lo + 95 * MIN} GROUP BY object ORDER BY object",
        ]
        for q in queries:
            rc1, a, e1 = shell(plain, q + ";")
            rc2, b, e2 = shell(dense, q + ";")
            n = a.count("\n")
            check(rc1 == 0 and rc2 == 0 and a == b,
                  f"{n} rows the same from plain and chunked: {q[len(rows) if q.startswith(rows) else 0:][:110]}"
                  f" ({e1.strip()}{e2.strip()})")
        # the edits are seen: the stepped-back ticks are found by their new time, the gone ones not
        _, a, _ = shell(dense, f"SELECT count(*) FROM counter_values WHERE {by_path} AND t_ms BETWEEN "
                               f"{t2050 - 60000} AND {t2050 + 60000};")
        gone = f"t_ms BETWEEN {t1500 - 540 * 1000} AND {t1500 - 480 * 1000}"  # ticks 960-1020
        _, g, _ = shell(dense, f"SELECT count(*) FROM counter_values WHERE {by_path} AND {gone};")
        _, nt, _ = shell(plain, f"SELECT count(*) FROM ticks WHERE {gone};")
        check(121 + 100 <= int(a) <= 121 + 120,
              f"around a stepped-back tick: the 121 s of that time and ~110 stepped-back ticks ({a.strip()})")
        check(int(g) == int(nt) <= 61 - 9, f"the deleted ticks have no rows ({g.strip()} rows, {nt.strip()} ticks "
              f"in 61 s)")
        rc, _, err = shell(dense, "SELECT * FROM chunk_series('obj_disk_chunks; DROP TABLE ticks', 'rd_ios', 4);")
        check(rc != 0 and "chunk_series: tbl must name" in err, f"chunk_series takes names only: {err.strip()}")
        rc, a, err = shell(plain, f"SELECT count(*) FROM counter_values WHERE {by_path};", load=False)
        check(rc == 0 and int(a) > 7000, f"a shell without the extension reads the plain copy ({err.strip()})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
