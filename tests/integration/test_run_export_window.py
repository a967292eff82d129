#!/usr/bin/env python3
"""A run's export window, through the daemon and from the file: a run left open when perflogd stops
comes back 'interrupted' with the end the restart gave it. GET /api/v1/runs/{id}/export then ends at
that end_ms, not at now (while the new daemon keeps adding ticks after it), and `perflog export --db
FILE --run ID` writes the very same bytes.

Needs PERFLOGD and PERFLOG_BUILD_DIR (the `perflog` client)."""
import calendar
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
COUNTER = "\\Memory\\Dirty Bytes"


def row_ms(line):
    """'"MM/DD/YYYY HH:MM:SS.mmm",...' (UTC) -> ms since the epoch."""
    whole, ms = line.split(",", 1)[0].strip('"').split(".")
    return calendar.timegm(time.strptime(whole, "%m/%d/%Y %H:%M:%S")) * 1000 + int(ms)


def main():
    d = Daemon().start(wait_ticks=2)
    st, _, body = d.http("/api/v1/runs", "POST", json.dumps({"label": "left open"}).encode(),
                         {"Content-Type": "application/json"})
    rid = json.loads(body)["id"]
    time.sleep(3)
    check(d.stop() == 0, "SIGTERM with a run open: exit 0")
    d2 = Daemon(db=d.db, workdir=d.dir)
    try:
        d2.start(wait_ticks=d.tick_count() + 1)
        doc = None
        for _ in range(150):
            _, doc = d2.get_json(f"/api/v1/runs/{rid}")
            if doc and doc.get("status") == "interrupted":
                break
            time.sleep(0.1)
        check(doc and doc["status"] == "interrupted" and doc["end_ms"] and doc["settled_ms"] is None,
              f"after the restart the run is 'interrupted' with an end and no settle time "
              f"({ {k: doc.get(k) for k in ('status', 'start_ms', 'end_ms', 'settled_ms')} if doc else doc})")
        end_ms = doc["end_ms"]
        d2.wait_ticks(d.tick_count() + 3)
        later = d2.query("SELECT count(*) FROM ticks WHERE t_ms > ?", (end_ms,))[0][0]
        check(later >= 3, f"the new daemon stored ticks after the run's end ({later})")

        q = urllib.parse.urlencode([("counter", COUNTER), ("tz", "utc")])
        st, _, http_body = d2.http(f"/api/v1/runs/{rid}/export?{q}")
        lines = http_body.decode().split("\r\n")[1:-1]
        last = row_ms(lines[-1]) if lines else None
        check(st == 200 and lines and doc["start_ms"] - 1000 <= row_ms(lines[0]) and last <= end_ms,
              f"GET /api/v1/runs/{rid}/export ends at the run's end_ms {end_ms}, not at now "
              f"(HTTP {st}, {len(lines)} rows, last at {last})")

        p = subprocess.run([PERFLOG, "export", "--db", d2.db, "--run", str(rid), "--tz", "utc",
                            COUNTER], capture_output=True, timeout=60, env=dict(os.environ, TZ="UTC"))
        cli_rows = p.stdout.count(b"\r\n") - 1
        check(p.returncode == 0 and p.stdout == http_body,
              f"`perflog export --db --run {rid}` writes the same bytes as the daemon (exit "
              f"{p.returncode}, {cli_rows} against {len(lines)} rows; "
              f"{p.stderr.decode(errors='replace')[:200]})")
    finally:
        d2.stop()
    finish()


if __name__ == "__main__":
    main()
