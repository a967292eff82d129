#!/usr/bin/env python3
"""Connections closed while idle: the runs table's while no run is open, the HTTP workers' idle read
connections 10 s after the last request; every endpoint still answers after either.

The run manager holds the runs table's own SQLite connection (storage/runs_db.c) only while a run
is open; with none it closes it, which frees its parsed schema, and each runs call of the API then
opens the connection for itself and closes it at its end. /api/v1/health says which:
memory.runs_table_open. A call that used the connection once closed would fail (SQLite answers a
closed handle with SQLITE_MISUSE, a 500 here), so:

1. After the start (the manager has closed the runs left open and found none open): closed.
2. With it closed: every endpoint answers 200 (health, counters, latest, data, export, metrics, the
   dashboard, the runs list), and it is still closed after the runs list.
3. Two runs, opened and ended one after the other, over a closed connection: open while a run is
   open (once the manager has taken it up, it holds the connection), closed again once each has
   settled.
4. With it closed again: each run's report, its export, the comparison of the two, the list, then
   the deletion of one (and its 404 after) all answer as they should.
5. The HTTP workers' read connections (web/http.c): a request right after another reuses the idle
   one (memory.http_readers_opened unchanged); once no request has come for longer than
   READER_IDLE_MS (10 s) the idle one is closed, so the next request opens one (the count grows by
   exactly one) and every endpoint answers 200 after that close.
No time is measured (the waits are past the idle limit, not bounds).
"""
import json
import time
import urllib.parse

from perflogtest import Daemon, check, finish


READER_IDLE_S = 10  # web/http.c READER_IDLE_MS
ENDPOINTS = ["/api/v1/health", "/api/v1/counters",
             "/api/v1/latest?counter=" + urllib.parse.quote("\\Memory\\*"),
             "/api/v1/data?counter=" + urllib.parse.quote("\\Memory\\*") + "&from=now-60&to=now",
             "/api/v1/export?counter=" + urllib.parse.quote("\\Memory\\*") + "&from=now-60&to=now",
             "/metrics", "/", "/api/v1/runs"]


def opened(d):
    return d.get_json("/api/v1/health")[1]["memory"]["http_readers_opened"]


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
    deadline = time.monotonic() + 30  # the manager takes the run up once kicked
    while time.monotonic() < deadline and not table_open(d):
        time.sleep(0.05)
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

        for path in ENDPOINTS:
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

        n0 = opened(d)
        n1 = opened(d)
        check(n1 == n0 and n0 >= 1, f"a request right after another reuses the idle reader: {n0} -> {n1}")
        time.sleep(READER_IDLE_S + 3)
        n2 = opened(d)
        check(n2 == n1 + 1, f"after {READER_IDLE_S + 3} s without a request the idle reader was closed "
              f"and the next request opened one: {n1} -> {n2}")
        time.sleep(READER_IDLE_S + 3)
        for path in ENDPOINTS:
            st, _, body = d.http(path)
            check(st == 200, f"GET {path} after the idle reader was closed: {st} {body[:200]!r}")
        n3 = opened(d)
        check(n3 > n2, f"the endpoints after the close were answered by reopened readers: {n2} -> {n3}")
        d.stop()
        check(d.proc.returncode == 0, f"the daemon exits cleanly: {d.proc.returncode}")
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill9()


if __name__ == "__main__":
    main()
    finish()
