#!/usr/bin/env python3
"""Chunked and plain storage give the same answers, through a real perflogd and a real HTTP client.

bench/bench_seed writes 2 h of 1 s ticks and a run in them (status `interrupted`, no report yet,
so the daemon computes it from the stored data when it starts). Two copies of the file: one stays
plain, the other goes through the writer's chunking (bench_seed DB 0 SECONDS: the rows older than
30 min move into the compressed tier). A daemon on each (the plain one with
retention.chunk_after_minutes 0) then answers, byte for byte the same:
  - /api/v1/data over a window that holds chunked and plain ticks, for every object's counters;
  - /api/v1/export of that window, and the run's /api/v1/runs/{id}/export;
  - the run's report (GET /api/v1/runs/{id}, `report`).
The stock shell without the extension reads the plain copy's counter_values and names chunk_series
on the chunked copy; with `.load build/perflog_chunk` both give the same rows.

The chunked copy's ticks of the chunked rows are chunked too (ticks_chunks), and ticks_all gives
the same ticks as the plain copy's; the answers above come from them.

The daemon on the chunked copy then chunks the rest itself (the default keeps 1 to 6 minutes plain),
resting between its steps (/api/v1/health wakeups.writer_rests).

Then a live daemon chunks on its own: its clocks 60 times faster ($PERFLOGD_TEST_CLOCK_SPEED),
retention.chunk_after_minutes 1; counter_values and ticks_all of its first 150 ticks, read while they
are plain, are the same once its writer has moved the first window (600 ticks) and then its ticks into
chunks, every slice of them coded from the rows the writer kept (/api/v1/health
database.chunk_slices), none read back. A DELETE and an UPDATE of its plain rows from the stock
sqlite3 shell then reach its chunks (the writer's kept copy of those rows is not coded over them),
and those spans are read back from the table.

Needs PERFLOGD and PERFLOG_BUILD_DIR (bench/bench_seed, perflog_chunk.so)."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

BUILD = os.environ.get("PERFLOG_BUILD_DIR", "build")
SEED = os.path.join(BUILD, "bench", "bench_seed")
EXT = os.path.join(BUILD, "perflog_chunk")
# bench_seed's instances by name: the daemons also sample this machine, whose devices come and go
# (other tests' interfaces), and a pattern with * would list those too
PATS = ["\\Memory\\*", "\\TCP\\*"] + [f"\\{o}({i})\\*" for o, insts in (
    ("Processor", ("0", "1", "_Total")), ("PhysicalDisk", ("vda", "vdb", "_Total")),
    ("Network Interface", ("lo", "eth0", "_Total"))) for i in insts]
MIN = 60000


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def get(d, path):
    status, _, body = d.http(path, timeout=60)
    return status, body


def report_of(d, run_id):
    """The run's report once the run manager has stored it (it does at its start)."""
    deadline = time.time() + 20
    while time.time() < deadline:
        status, body = d.get_json(f"/api/v1/runs/{run_id}")
        if status == 200 and body.get("report") is not None:
            return body["report"]
        time.sleep(0.2)
    return None


def shell(db, sql, load):
    pre = [f".load {EXT}"] if load else []
    r = subprocess.run(["sqlite3", "-bail", db] + pre + [sql], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def live_chunking(work):
    db = os.path.join(work, "live.db")
    os.makedirs(os.path.join(work, "l"), exist_ok=True)
    d = Daemon(config={"retention": {"chunk_after_minutes": 1}}, db=db, workdir=os.path.join(work, "l"),
               env={"PERFLOGD_TEST_CLOCK_SPEED": "60"})
    try:
        # the first fresh span (ticks 1-60) can go once its last tick is a minute old: at tick
        # ~120, a second or more from here
        d.start(wait_ticks=40, timeout=40)
        x = d.query("SELECT t_ms FROM ticks WHERE id = 40")[0][0]
        q = f"SELECT t_ms, path, value FROM counter_values WHERE t_ms <= {x} ORDER BY t_ms, path;"
        tq = "SELECT id, t_ms, interval_ms, missed FROM ticks_all WHERE id <= 40 ORDER BY id;"
        rc1, before, err1 = shell(db, q, True)
        _, ticks_before, _ = shell(db, tq, True)
        tables = [t for (t,) in d.query("SELECT name FROM sqlite_master WHERE name GLOB '*_chunks'")]
        chunks = sum(d.query(f"SELECT count(*) FROM {t}")[0][0] for t in tables)
        check(len(tables) > 5 and chunks == 0, "nothing was chunked yet when the first 40 ticks were read")
        deadline, span_done = time.time() + 60, 0
        while time.time() < deadline and not span_done:
            time.sleep(0.5)
            span_done = d.query("SELECT count(*) FROM ticks_chunks WHERE first_id = 1 AND last_id = 600")[0][0]
        check(span_done, "the daemon's writer chunked its first 600 ticks, rows and then ticks, "
                         "in fresh spans merged into one chunk")
        # every row was written by this daemon: each slice is coded from the rows its writer kept
        # (storage/span_cache.h), none read back; health says so as of the writer's last maintenance
        deadline, h = time.time() + 20, {}
        while time.time() < deadline:
            h = d.get_json("/api/v1/health")[1]
            if h.get("database", {}).get("chunk_slices", {}).get("cached", 0) > 0:
                break
            time.sleep(0.5)
        slices = h.get("database", {}).get("chunk_slices", {})
        kept = h.get("memory", {}).get("writer_span_cache_bytes", 0)
        check(slices.get("cached", 0) > 0 and slices.get("read") == 0 and kept > 0,
              f"the chunk steps coded the writer's kept rows: {slices} slices, {kept} bytes kept")
        merged = d.query("SELECT count(*) FROM obj_processor_chunks WHERE first_tick = 1 AND last_tick = 600")[0][0]
        fresh = d.query("SELECT count(*) FROM obj_processor_chunks WHERE first_tick > 1 AND last_tick <= 600")[0][0]
        check(merged >= 1 and fresh == 0, f"one processor chunk an instance for ticks 1-600 ({merged}), "
                                          f"no fresh one left in them ({fresh})")
        rc2, after, err2 = shell(db, q, True)
        raw = d.query("SELECT (SELECT count(*) FROM obj_processor WHERE tick <= 600), "
                      "(SELECT count(*) FROM obj_processor_chunks)")[0]
        check(raw[0] == 0 and raw[1] > 0, f"their raw rows are gone, {raw[1]} processor chunks hold them")
        plain_ticks = d.query("SELECT count(*) FROM ticks WHERE id <= 600")[0][0]
        rc3, ticks_after, err3 = shell(db, tq, True)
        check(plain_ticks == 0 and rc3 == 0 and ticks_before.count("\n") == 40 and ticks_after == ticks_before,
              f"their ticks left `ticks` ({plain_ticks} remain); ticks_all gives the same 40 ({err3.strip()})")
        check(rc1 == 0 and rc2 == 0 and before.count("\n") > 800 and before == after,
              f"counter_values of the first 40 ticks: the same {before.count(chr(10))} rows before and "
              f"after ({err1.strip()}{err2.strip()})")
        shell_edits(d, db)
    finally:
        d.stop()


def shell_edits(d, db):
    """A DELETE and an UPDATE of plain rows from the stock sqlite3 shell, while the live daemon
    runs, reach its chunks: its writer had already kept those rows for its chunk steps
    (storage/span_cache.h), and it must not code the kept copy over the shell's edits
    (storage/db.c, spans_check_others)."""
    read0 = d.get_json("/api/v1/health")[1]["database"]["chunk_slices"]["read"]
    edited = None
    for _ in range(20):  # the newest plain ticks; again if the writer chunked them meanwhile
        m = d.query("SELECT max(tick) FROM obj_processor")[0][0]
        a, b, c = m - 8, m - 6, m - 4
        inst = d.query(f"SELECT min(inst) FROM obj_processor WHERE tick = {c}")[0][0]
        script = (f"BEGIN IMMEDIATE;\nDELETE FROM obj_processor WHERE tick BETWEEN {a} AND {b};\n"
                  f"SELECT changes();\nUPDATE obj_processor SET user = 123456789 WHERE tick = {c} "
                  f"AND inst = {inst};\nSELECT changes();\nCOMMIT;\n")
        r = subprocess.run(["sqlite3", "-bail", "-cmd", ".timeout 10000", db], input=script,
                           capture_output=True, text=True, timeout=60)
        counts = r.stdout.split()
        if r.returncode == 0 and len(counts) == 2 and int(counts[0]) > 0 and counts[1] == "1":
            edited = (a, b, c, inst, int(counts[0]))
            break
    check(edited is not None, f"the shell deleted plain processor rows and changed a value ({r.stderr.strip()})")
    if edited is None:
        return
    a, b, c, inst, deleted = edited
    rows_q = (f"SELECT tick, inst, user, system, idle FROM obj_processor_all WHERE tick BETWEEN {a - 2} "
              f"AND {c + 2} ORDER BY tick, inst;")
    plain = d.query_chunked(rows_q)
    deadline, left = time.time() + 60, None
    while time.time() < deadline:
        left = d.query(f"SELECT count(*) FROM obj_processor WHERE tick <= {c + 2}")[0][0]
        if left == 0:
            break
        time.sleep(0.5)
    check(left == 0, f"the writer chunked the edited ticks ({left} raw rows left)")
    chunked = d.query_chunked(rows_q)
    ticks = sorted({int(r[0]) for r in chunked})
    changed = [r for r in chunked if int(r[0]) == c and int(r[1]) == inst]
    check(not any(a <= t <= b for t in ticks) and a - 1 in ticks and c in ticks,
          f"the {deleted} rows the shell deleted (ticks {a}-{b}) stayed deleted: ticks {ticks}")
    check(len(changed) == 1 and changed[0][2] == "123456789",
          f"the value the shell changed stayed changed: {changed}")
    check(len(plain) > 0 and chunked == plain,
          f"obj_processor_all around the edits: the same {len(plain)} rows plain and chunked")
    deadline, read1 = time.time() + 20, read0
    while time.time() < deadline and read1 <= read0:  # health has it as of the last maintenance
        read1 = d.get_json("/api/v1/health")[1]["database"]["chunk_slices"]["read"]
        time.sleep(0.3)
    check(read1 > read0, f"the chunk steps read the edited spans back from the table ({read0} -> {read1} slices)")


def main():
    work = tempfile.mkdtemp(prefix="perflog-dense-")
    plain_db, dense_db = os.path.join(work, "plain.db"), os.path.join(work, "dense.db")
    daemons = []
    try:
        out = subprocess.run([SEED, plain_db, "2"], capture_output=True, text=True, timeout=300)
        check(out.returncode == 0, f"bench_seed wrote 2 h of ticks ({out.stdout.strip()}{out.stderr.strip()})")
        probe = Daemon(db=plain_db, workdir=work)
        lo, hi = probe.query("SELECT min(t_ms), max(t_ms) FROM ticks")[0]
        run_start, run_end = hi - 100 * MIN, hi - 70 * MIN
        conn = sqlite3.connect(plain_db)
        conn.execute("INSERT INTO runs (id, label, command, host, status, start_ms, end_ms) "
                     "VALUES (1, 'seeded', 'cp a b', 'bench', 'interrupted', ?, ?)",
                     (run_start, run_end))
        conn.commit()
        conn.close()
        shutil.copyfile(plain_db, dense_db)
        out = subprocess.run([SEED, dense_db, "0", "1800"], capture_output=True, text=True,
                             timeout=300)
        check(out.returncode == 0, f"the writer's chunking ran ({out.stdout.strip()}{out.stderr.strip()})")
        dense = Daemon(db=dense_db, workdir=work)
        chunked = dense.query("SELECT (SELECT count(*) FROM obj_disk_chunks), "
                              "(SELECT min(tick) FROM obj_disk), (SELECT count(*) FROM ticks)")[0]
        check(chunked[0] > 0 and chunked[1] > 3600,
              f"the dense copy holds chunks ({chunked[0]} of disks) and raw rows only from tick {chunked[1]}")
        tchunks = dense.query("SELECT count(*), min(first_id), max(last_id), (SELECT min(id) FROM ticks) "
                              "FROM ticks_chunks")[0]
        check(tchunks[0] >= 9 and tchunks[1] == 1 and tchunks[3] == tchunks[2] + 1 == chunked[1],
              f"and its ticks up to the raw rows' are chunked too ({tchunks[0]} ticks chunks, ids "
              f"{tchunks[1]}-{tchunks[2]}; plain from {tchunks[3]})")
        tq = "SELECT id, t_ms, interval_ms, missed FROM ticks_all ORDER BY id;"
        (rc1, t1, e1), (rc2, t2, e2) = shell(plain_db, tq, True), shell(dense_db, tq, True)
        check(rc1 == 0 and rc2 == 0 and t1.count("\n") == 7200 and t1 == t2,
              f"ticks_all: the same {t1.count(chr(10))} ticks from both ({e1.strip()}{e2.strip()})")

        # The stock shell: plain counter_values without the extension; chunks need it.
        q = (f"SELECT t_ms, path, value FROM counter_values WHERE object = 'PhysicalDisk' "
             f"AND t_ms BETWEEN {lo + 10 * MIN} AND {lo + 12 * MIN} ORDER BY t_ms, path;")
        rc1, plain_rows, err1 = shell(plain_db, q, False)
        rc2, _, err2 = shell(dense_db, q, False)
        rc3, dense_rows, err3 = shell(dense_db, q, True)
        check(rc1 == 0 and plain_rows.count("\n") > 1000,
              f"a shell without the extension reads plain counter_values ({err1.strip()})")
        check(rc2 != 0 and "chunk_series" in err2, f"without it, chunked data names what is missing: {err2.strip()}")
        check(rc3 == 0 and dense_rows == plain_rows,
              f"with .load, the chunked copy gives the same {plain_rows.count(chr(10))} rows ({err3.strip()})")

        for sub in ("p", "d"):
            os.makedirs(os.path.join(work, sub), exist_ok=True)
        # No live interfaces: tests beside this one add and remove theirs (veth pairs, a
        # namespace's), and an interface that one daemon saw and the other did not would be one
        # more column in one export (the export's columns are every instance the file knows).
        live = {"interfaces": {"exclude": ["*"]}}
        p = Daemon(config={"retention": {"chunk_after_minutes": 0}, **live}, db=plain_db,
                   workdir=os.path.join(work, "p"))
        d = Daemon(config=live, db=dense_db, workdir=os.path.join(work, "d"))
        daemons = [p, d]
        for x in daemons:
            x.start(wait_ticks=0)
        for x in daemons:
            deadline = time.time() + 20
            while time.time() < deadline:
                try:
                    if x.http("/api/v1/health", timeout=2)[0] == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.1)

        frm, to = iso(lo + 20 * MIN), iso(hi - 10 * MIN)  # 30 min chunked, 20 min plain
        data_q = urllib.parse.urlencode([("counter", c) for c in PATS] + [("from", frm), ("to", to)])
        exp_q = urllib.parse.urlencode([("counter", c) for c in PATS] +
                                       [("from", frm), ("to", to), ("tz", "utc")])
        for what, path in (("/api/v1/data", "/api/v1/data?" + data_q),
                           ("/api/v1/data at 1 min", "/api/v1/data?" + data_q + "&step=60"),
                           ("/api/v1/export", "/api/v1/export?" + exp_q),
                           ("the run's export", "/api/v1/runs/1/export?tz=utc")):
            (s1, b1), (s2, b2) = get(p, path), get(d, path)
            if b1 != b2 and s1 == s2 == 200 and path.startswith("/api/v1/data"):  # say where
                j1, j2 = json.loads(b1), json.loads(b2)
                for a, b in zip(j1["series"], j2["series"]):
                    if a != b:
                        diffs = [(i, x, y) for i, (x, y) in enumerate(zip(a["values"], b["values"])) if x != y]
                        print("  differs:", a["path"], len(a["values"]), len(b["values"]), diffs[:5], {k: (a[k], b.get(k)) for k in a if k != "values" and a[k] != b.get(k)})
            check(s1 == 200 and s2 == 200 and len(b1) > 10000 and b1 == b2,
                  f"{what}: the same {len(b1)} bytes from chunked and plain storage ({s1}, {s2}; {b2[:200]!r})")
        r1, r2 = report_of(p, 1), report_of(d, 1)
        check(r1 is not None and r2 is not None and json.dumps(r1, sort_keys=True) == json.dumps(r2, sort_keys=True),
              f"the run report is the same from both ({len(json.dumps(r1 or {}))} bytes)")
        check(d.query("SELECT count(*) FROM obj_disk_chunks")[0][0] >= chunked[0],
              "the daemon kept the chunks")
        # its own writer chunks the 30 min left plain (the default keeps 1 to 6 minutes): dozens of
        # steps back to back, which it breaks with a rest after every 10 ms of them
        deadline, plain = time.time() + 90, None
        while time.time() < deadline:
            plain = d.query("SELECT count(*) FROM ticks")[0][0]
            if plain < 700:
                break
            time.sleep(0.5)
        health = d.get_json("/api/v1/health")[1]
        rests = health.get("wakeups", {}).get("writer_rests")
        check(plain is not None and plain < 700 and isinstance(rests, int) and rests >= 1,
              f"the daemon chunked its 30 min backlog ({plain} plain ticks left), resting "
              f"{rests} times between its steps")
        # The writer's account of its work by kind (storage/db.h db_work_get), as of its last
        # maintenance: the backlog's chunk and merge steps are in it, each kind's longest call
        # within its total.
        ww = health.get("writer_work", {})
        # the account is as of the writer's last commit: the step that took the last rows may
        # have committed an instant before it is published
        deadline = time.time() + 10
        while (ww.get("chunks", {}).get("n", 0) < 1 or ww.get("merge", {}).get("n", 0) < 1) and \
                time.time() < deadline:
            time.sleep(0.2)
            ww = d.get_json("/api/v1/health")[1].get("writer_work", {})
        kinds = ["ticks", "ahead", "minutes", "hours", "chunks", "merge", "retention", "size",
                 "checkpoint"]
        check(sorted(ww) == sorted(kinds) and
              all(0 <= ww[k]["max_ms"] <= ww[k]["cpu_ms"] + 1e-9 for k in kinds) and
              ww["chunks"]["n"] >= 1 and ww["chunks"]["cpu_ms"] > 0 and
              ww["merge"]["n"] >= 1 and ww["ticks"]["n"] >= 1,
              f"/api/v1/health writer_work counts the backlog's steps by kind: {ww}")
        for x in daemons:
            x.stop()
        daemons = []
        live_chunking(work)
    finally:
        for x in daemons:
            x.stop()
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
