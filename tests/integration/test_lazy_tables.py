#!/usr/bin/env python3
"""An object's tables come with its first instance (docs/schema.md, *How it is stored*), with the
real perflogd on the real /proc and a real SQLite file read by a second connection, as a user's
shell would: a new file has the tables of the objects this machine has and none of those it has
not (no SMB share, NFS mount, followed process or extra PDH path here); counter_values and
counter_rollups answer all the same; a run that follows a process brings the Process tables in one
transaction with its first rows, and the views show them to a connection that was open before,
with no error; a restart keeps them; the file stays intact.

Needs PERFLOGD."""
import json
import os
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, integrity_check, log_lines  # noqa: E402

ALWAYS = ["obj_processor", "obj_disk", "obj_net", "obj_memory", "obj_tcp"]
SETS = {  # the tables of one value table's set (schema_value_tables)
    "obj_process": ["obj_process", "obj_process_chunks", "obj_process_1m", "obj_process_1h"],
    "obj_smb": ["obj_smb", "obj_smb_chunks", "obj_smb_1m", "obj_smb_1h"],
    "obj_nfs": ["obj_nfs", "obj_nfs_chunks", "obj_nfs_1m", "obj_nfs_1h"],
    "pdh_values": ["pdh_paths", "pdh_values", "pdh_values_1m", "pdh_values_1h"],
}


def tables(d):
    return {r[0] for r in d.query("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')")}


def main():
    d = Daemon().start(wait_ticks=3)
    have = tables(d)
    for t in ALWAYS:
        check(t in have and f"{t}_chunks" in have and f"{t}_1m" in have and f"{t}_all" in have,
              f"a new file has {t} and its chunks, roll-ups and view")
    for name, group in SETS.items():
        check(not any(t in have for t in group), f"a new file has none of the {name} tables "
              f"({sorted(t for t in group if t in have)})")
    check("obj_process_all" not in have, "nor the view obj_process_all")
    made = log_lines(d, ": creating ")
    check(len(made) == 1 and "first values of Processor, PhysicalDisk, Network Interface, Memory, TCP"
          in made[0] and made[0].endswith("creating their tables"),
          f"the first tick's tables are made in one schema change, logged once ({made})")

    # A reader's connection, open before the Process tables come (a user's shell).
    conn = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True, timeout=10)
    q_proc = "SELECT count(*) FROM counter_values WHERE object = 'Process'"
    q_cpu = "SELECT count(*) FROM counter_values WHERE object = 'Processor'"
    check(conn.execute(q_proc).fetchone()[0] == 0, "counter_values: no Process rows yet")
    check(conn.execute(q_cpu).fetchone()[0] > 0, "counter_values: Processor rows")
    conn.execute("SELECT count(*) FROM counter_rollups").fetchone()
    try:
        conn.execute("SELECT count(*) FROM obj_process").fetchone()
        check(False, "obj_process is not there yet")
    except sqlite3.OperationalError as e:
        check("no such table: obj_process" in str(e), f"obj_process is not there yet ({e})")
    status, body = d.get_json("/api/v1/counters")
    check(status == 200, f"/api/v1/counters answers on a file without Process tables ({status})")

    # A run that follows a process: its first rows bring the Process tables.
    p = subprocess.Popen([sys.executable, "-c", "import time\nfor _ in range(40):\n"
                          "    open('/proc/self/stat').read(); time.sleep(0.1)\n"])
    status, _, raw = d.http("/api/v1/runs", "POST",
                            json.dumps({"label": "lazy tables", "pid": p.pid}).encode())
    check(status == 201, f"a run with a pid opens ({status} {raw[:200]!r})")
    run_id = json.loads(raw)["id"] if status == 201 else None
    deadline = time.time() + 20
    n = 0
    while time.time() < deadline:
        n = conn.execute(q_proc).fetchone()[0]
        if n > 0:
            break
        time.sleep(0.2)
    check(n > 0, f"the open connection sees Process rows through counter_values ({n})")
    have = tables(d)
    check(all(t in have for t in SETS["obj_process"]) and "obj_process_all" in have,
          "the Process tables and view came with its first rows")
    check(not any(t in have for t in SETS["obj_smb"] + SETS["obj_nfs"] + SETS["pdh_values"]),
          "the other absent objects still have no tables")
    rows = d.query("SELECT count(*) FROM obj_process o JOIN instances i ON i.id = o.inst "
                   "WHERE i.name = ?", (f"python3:{p.pid}",))
    check(rows[0][0] > 0, f"obj_process holds the followed process's rows ({rows[0][0]})")
    check(conn.execute(q_cpu).fetchone()[0] > 0, "counter_values still has Processor rows")
    check(len(log_lines(d, "first values of Process: creating its tables")) == 1,
          "the log says once that the Process tables were made")
    p.wait(timeout=30)
    if run_id is not None:
        status, _, _ = d.http(f"/api/v1/runs/{run_id}/end", "POST",
                              json.dumps({"exit_code": 0}).encode())
        check(status == 200, f"the run ends ({status})")
    conn.close()

    # A restart keeps them, and makes no others.
    d.stop()
    d.start(wait_ticks=d.tick_count() + 2)
    have = tables(d)
    check(all(t in have for t in SETS["obj_process"]), "after a restart the Process tables stay")
    check(not any(t in have for t in SETS["obj_smb"]), "after a restart still no SMB tables")
    n = d.query(q_proc)[0][0]
    check(n > 0, f"after a restart counter_values has the Process rows ({n})")
    check(d.stop() == 0, "perflogd exits 0")
    check(integrity_check(d.db) == "ok", "the file passes integrity_check")
    finish()


if __name__ == "__main__":
    main()
