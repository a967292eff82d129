#!/usr/bin/env python3
"""The runs table's connection is closed while no run is open, and every endpoint still answers.

The run manager holds the runs table's own SQLite connection (storage/runs_db.c) only while a run
is open; with none it closes it, which frees its parsed schema, and each runs call of the API then
opens the connection for itself and closes it at its end. /api/v1/health says which:
memory.runs_table_open. A call that used the connection once closed would fail (SQLite answers a
closed handle with SQLITE_MISUSE, a 500 here), so:

1. After the start (the manager has closed the runs left open and found none open): closed.
2. With it closed: every endpoint answers 200 (health, counters, latest, data, export, metrics, the
   dashboard, the runs list), and it is still closed after the runs list.
3. Two runs, opened and ended one after the other, over a closed connection: open while a run is
   open (the manager holds it), closed again once each has settled.
4. With it closed again: each run's report, its export, the comparison of the two, the list, then
   the deletion of one (and its 404 after) all answer as they should.
No time is measured.
"""
import json
import time
import urllib.parse

from perflogtest import Daemon, check, finish


def table_open(d):
    return d.get_json("/api/v1/health")[1]["memory"]["runs_table_open"]


def wait_closed(d, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and table_open(d):
        time.sleep(0.1)
    check(table_open(d) is False, f"the runs table's connection is closed {what}")


def run_once(d, label):
    st, _, body = d.http("/api/v1/runs", "POST",
                         json.dumps({"label": label, "command": "true"}).encode())
    check(st == 201, f"run {label} opens over a closed connection: {st} {body!r}")
    rid = json.loads(body)["id"]
    check(table_open(d) is True, f"while run {label} is open the manager holds the connection")
    st, _, body = d.http(f"/api/v1/runs/{rid}/end", "POST", b'{"exit_code": 0}')
    check(st == 200, f"run {label} ends: {st} {body!r}")
    run, deadline = {}, time.monotonic() + 120
    while time.monotonic() < deadline:
        run = d.get_json(f"/api/v1/runs/{rid}")[1] or {}
        if run.get("status") == "settled":
            break
        time.sleep(0.2)
    check(run.get("status") == "settled", f"run {label} settles: {run.get('status')}")
    wait_closed(d, f"once run {label} has settled")
    return rid


def main():
    d = Daemon()
    d.start(wait_ticks=3)
    try:
        h = d.get_json("/api/v1/health")[1]
        check("runs_table_open" in h.get("memory", {}),
              f"/api/v1/health has memory.runs_table_open: {h.get('memory')}")
        wait_closed(d, "after the start, with no run open")

        q = urllib.parse.quote("\\Memory\\*")
        for path in ("/api/v1/health", "/api/v1/counters", f"/api/v1/latest?counter={q}",
                     f"/api/v1/data?counter={q}&from=now-60&to=now",
                     f"/api/v1/export?counter={q}&from=now-60&to=now", "/metrics", "/",
                     "/api/v1/runs"):
            st, _, body = d.http(path)
            check(st == 200, f"GET {path} with the runs table closed: {st} {body[:200]!r}")
        check(table_open(d) is False, "the runs list opened the connection for itself only")

        a = run_once(d, "first")
        b = run_once(d, "second")

        for path in (f"/api/v1/runs/{a}", f"/api/v1/runs/{b}", f"/api/v1/runs/{a}/export",
                     f"/api/v1/runs/compare?ids={a},{b}", "/api/v1/runs"):
            st, _, body = d.http(path)
            check(st == 200, f"GET {path} with the runs table closed: {st} {body[:200]!r}")
        report = d.get_json(f"/api/v1/runs/{a}")[1] or {}
        check(report.get("report") is not None, "run first's stored report is read back")
        runs = (d.get_json("/api/v1/runs")[1] or {}).get("runs") or []
        check(sorted(r["id"] for r in runs) == sorted([a, b]), f"both runs are listed: {runs}")
        st, _, body = d.http(f"/api/v1/runs/{a}", "DELETE")
        check(st in (200, 204), f"DELETE run first with the runs table closed: {st} {body!r}")
        st, _, _ = d.http(f"/api/v1/runs/{a}")
        check(st == 404, f"the deleted run is gone: {st}")
        check(table_open(d) is False, "the API's calls leave the connection closed")
        d.stop()
        check(d.proc.returncode == 0, f"the daemon exits cleanly: {d.proc.returncode}")
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill9()


if __name__ == "__main__":
    main()
    finish()
