#!/usr/bin/env python3
"""The chunk functions in the stock sqlite3 shell, on a real daemon's database: `.load
build/perflog_chunk`, then for every raw object table, instance and column the chunk of its rows
(chunk_encode over the rows in tick order) expands (chunk_points) to exactly those rows, NULLs
included, compared by the shell itself both ways (EXCEPT) and by count. The daemon keeps writing
meanwhile (WAL: the shell reads a snapshot). Also: the errors a user of the shell meets."""
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

BUILD = os.environ.get("PERFLOG_BUILD_DIR", "build")
EXT = os.path.join(BUILD, "perflog_chunk")


def shell(db, *sql):
    """The stock sqlite3 shell on db with the extension loaded: (rc, stdout, stderr). The SQL goes
    in on stdin: one round trip per series is over 128 KiB on a machine with many NICs, more than
    the kernel takes as one argument (E2BIG)."""
    r = subprocess.run(["sqlite3", "-bail", db], input="\n".join((f".load {EXT}",) + sql) + "\n",
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def main():
    if not check(os.path.exists(EXT + ".so"), f"{EXT}.so is built"):
        finish()
    d = Daemon().start(wait_ticks=12, timeout=30)
    try:
        conn = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True)
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'obj_*' "
            "AND name NOT GLOB '*_1[mh]' ORDER BY name")]
        stmts, series = [], 0
        for t in tables:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({t})") if r[1] not in ("tick", "inst")]
            insts = [r[0] for r in conn.execute(f"SELECT DISTINCT inst FROM {t}")]
            for inst in insts:
                for c in cols:
                    rows = f"SELECT tick, \"{c}\" AS v FROM {t} WHERE inst = {inst} AND tick <= {{hi}}"
                    chunk = f"(SELECT chunk_encode(tick, v) FROM ({rows} ORDER BY tick))"
                    pts = f"SELECT tick, value FROM chunk_points({chunk})"
                    # the difference both ways (IS-equal for NULLs: EXCEPT treats NULLs as equal)
                    stmts.append(f"SELECT '{t}.{c}.{inst}', (SELECT count(*) FROM ({rows} EXCEPT {pts})) + "
                                 f"(SELECT count(*) FROM ({pts} EXCEPT {rows})), "
                                 f"(SELECT count(*) FROM ({rows})) - (SELECT count(*) FROM ({pts}));")
                    series += 1
        conn.close()
        check(len(tables) >= 4 and series >= 20, f"{len(tables)} raw tables, {series} series to chunk")
        # a fixed upper tick, so every statement sees the same rows while the daemon writes on
        hi = int(d.query("SELECT max(id) FROM ticks")[0][0])
        rc, out, err = shell(d.db, "\n".join(s.replace("{hi}", str(hi)) for s in stmts))
        lines = [ln.split("|") for ln in out.splitlines() if ln]
        bad = [ln for ln in lines if ln[1:] != ["0", "0"]]
        check(rc == 0 and not err, f"the shell ran {len(stmts)} round trips ({err.strip()[:200]})")
        check(len(lines) == series, f"one answer per series ({len(lines)} of {series})")
        check(not bad, f"every chunk expands to its rows exactly, NULLs included ({bad[:3]})")
        nulls = d.query("SELECT count(*) FROM obj_disk WHERE rd_ios IS NULL")[0][0]
        check(nulls >= 1, f"the data has NULLs to keep (first ticks: {nulls})")

        rc, out, err = shell(d.db, "SELECT * FROM chunk_points;")
        check(rc != 0 and "no query solution" in err, f"chunk_points without a chunk is refused: {err.strip()}")
        rc, out, err = shell(d.db, "SELECT * FROM chunk_points(x'0102');")
        check(rc != 0 and "not a chunk" in err, f"a BLOB that is no chunk: {err.strip()}")
        rc, out, err = shell(d.db, "SELECT chunk_encode(t, 1) FROM (SELECT 2 AS t UNION ALL SELECT 1);")
        check(rc != 0 and "ticks must increase" in err, f"rows out of order: {err.strip()}")
        rc, out, err = shell(d.db, "SELECT chunk_encode(t, 'x') FROM (SELECT 1 AS t);")
        check(rc != 0 and "integer" in err, f"a text value: {err.strip()}")
        rc, out, err = shell(d.db, "SELECT quote(chunk_encode(t, 1)) FROM (SELECT 1 AS t) WHERE 0;",
                             "SELECT count(*) FROM chunk_points(NULL);")
        check(rc == 0 and out.split() == ["NULL", "0"], f"no rows: a NULL chunk, which has no points ({out.split()})")
        # the daemon registers the same functions on its own connections: its schema names none,
        # but the daemon kept sampling with them registered
        d.wait_ticks(d.tick_count() + 2, timeout=15)
        check(d.proc.poll() is None, "the daemon keeps sampling")
    finally:
        d.stop()
        d.check_sanitizers()
    finish()


main()
