#!/usr/bin/env python3
"""The cost of deleting a chunked span's raw rows, two ways, on a table shaped like perflog's raw
tables (WITHOUT ROWID, PRIMARY KEY (tick, inst), 15 INTEGER fields; 2 KiB pages, incremental
auto-vacuum, WAL, synchronous=NORMAL, as storage/db.c opens a file):

  slice   what the chunk steps did up to schema 7: each step deleted its slice of W instances
          (48, CHUNK_WIDE_INSTS) from every tick of the span, by the same statement
          (tick IN (the span's ticks) AND inst >= a AND inst < a + W), one transaction a step;
  range   what delete_chunked_raw does from schema 8: whole ticks, K a step (K = 28 800 rows,
          CHUNK_DELETE_ROWS, over the rows of a tick), oldest first.

Each run builds the table afresh (2 spans of TICKS ticks x INSTANCES rows, the first deleted),
checkpoints it, then deletes the first span's rows and checkpoints (PASSIVE) after every step, as
the writer does between steps. Prints per run the process CPU time of the deletes and their
checkpoints and the WAL frames the checkpoints copied, then the medians of RUNS runs and
range/slice. The two strategies alternate run by run.

usage: bench/delete_layout.py [--ticks 300] [--instances 1000] [--runs 5] [--dir /dev/shm]
"""
import argparse, os, resource, sqlite3, statistics, tempfile


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def build(path, ticks, insts):
    for sfx in ("", "-wal", "-shm"):
        try:
            os.unlink(path + sfx)
        except FileNotFoundError:
            pass
    c = sqlite3.connect(path, isolation_level=None)
    for p in ("page_size = 2048", "auto_vacuum = INCREMENTAL", "journal_mode = WAL",
              "synchronous = NORMAL", "wal_autocheckpoint = 0"):
        c.execute("PRAGMA " + p)
    cols = ", ".join(f"f{i} INTEGER" for i in range(15))
    c.execute(f"CREATE TABLE d (tick INTEGER NOT NULL, inst INTEGER NOT NULL, {cols}, "
              "PRIMARY KEY (tick, inst)) WITHOUT ROWID")
    vals = ", ".join("abs(random() % 100000)" for _ in range(15))
    c.execute("BEGIN")
    for t in range(1, 2 * ticks + 1):
        c.execute(f"WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < {insts}) "
                  f"INSERT INTO d SELECT {t}, x, {vals} FROM i")
    c.execute("COMMIT")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return c


def run(kind, path, ticks, insts):
    c = build(path, ticks, insts)
    frames = 0
    t0 = cpu()
    if kind == "slice":
        for a in range(1, insts + 1, 48):
            c.execute("BEGIN")
            c.execute("DELETE FROM d WHERE tick IN (WITH RECURSIVE s(x) AS (SELECT ?1 UNION ALL "
                      "SELECT x + 1 FROM s WHERE x < ?2) SELECT x FROM s) AND inst >= ?3 AND "
                      "inst < ?4", (1, ticks, a, a + 48))
            c.execute("COMMIT")
            frames += c.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    else:
        k = max(1, 28800 // insts)
        for a in range(1, ticks + 1, k):
            c.execute("BEGIN")
            c.execute("DELETE FROM d WHERE tick BETWEEN ? AND ?", (a, min(ticks, a + k - 1)))
            c.execute("COMMIT")
            frames += c.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    ms = (cpu() - t0) * 1000
    left = c.execute("SELECT count(*) FROM d").fetchone()[0]
    c.close()
    assert left == ticks * insts, left
    return ms, frames


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default="/dev/shm")
    a = ap.parse_args()
    d = tempfile.mkdtemp(dir=a.dir)
    path = os.path.join(d, "delete.db")
    res = {"slice": [], "range": []}
    try:
        for i in range(a.runs):
            for kind in ("slice", "range") if i % 2 == 0 else ("range", "slice"):
                ms, fr = run(kind, path, a.ticks, a.instances)
                res[kind].append((ms, fr))
                rows = a.ticks * a.instances
                print(f"run {i + 1} {kind:5s}: {ms:7.1f} ms CPU ({1000 * ms / rows:.3f} us a row), "
                      f"{fr} WAL frames checkpointed", flush=True)
    finally:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
           for k, v in res.items()}
    for k in ("slice", "range"):
        print(f"median {k:5s}: {med[k][0]:7.1f} ms CPU, {med[k][1]:.0f} frames")
    print(f"range/slice: CPU {med['range'][0] / med['slice'][0]:.3f}, "
          f"frames {med['range'][1] / med['slice'][1]:.3f} "
          f"({a.ticks} ticks x {a.instances} rows, SQLite {sqlite3.sqlite_version})")


if __name__ == "__main__":
    main()
