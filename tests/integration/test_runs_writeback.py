#!/usr/bin/env python3
"""A copy run settles for real: 300 MiB of buffered writes on /var/tmp, left dirty when the run
ends, must be written back before the run settles. The run is 'ending' while the pages are dirty,
settles within 90 s (the kernel writes them back after dirty_expire_centisecs, 30 s by default),
after its end, with a report, and the machine's Dirty + Writeback stayed above the start level
after the end, so the daemon really waited.

Split from test_runs.py: the wait is the kernel's, so scripts/test.sh runs this in the release pass
only; the run manager's settle loop runs under the sanitizers in test_runs (a quiet settle) and
test_run_edges_direct (a settle ended by the cap). Needs root (dd onto a real block device)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402
from test_runs import call, dirty_bytes  # noqa: E402


def test_dirty_settle(d):
    path = "/var/tmp/perflog-test-runs.bin"
    os.sync()
    time.sleep(2)
    level = dirty_bytes(d)
    st, _, doc = call(d, "/api/v1/runs", "POST", {"label": "dd 300 MiB", "command": "dd", "payload_bytes": 300 << 20})
    rid = doc["id"]
    try:
        r = os.system(f"dd if=/dev/zero of={path} bs=1M count=300 status=none")
        check(r == 0, f"dd wrote 300 MiB to {path}")
        st, _, doc = call(d, f"/api/v1/runs/{rid}/end", "POST", {"exit_code": 0})
        check(st == 200 and doc["status"] == "ending", f"ended while pages are dirty: 'ending' ({doc['status']})")
        highest = 0
        deadline = time.time() + 90
        while time.time() < deadline:
            v = dirty_bytes(d)
            if v is not None:
                highest = max(highest, v)
            st, _, doc = call(d, f"/api/v1/runs/{rid}")
            if doc["status"] == "settled" and doc["report"] is not None:
                break
            time.sleep(0.25)
        check(doc["status"] == "settled", f"settled within 90 s ({doc['status']})")
        if doc["settled_ms"] is not None:
            tail = doc["settled_ms"] - doc["end_ms"]
            check(tail > 0, f"settled after the end ({tail} ms of tail)")
        check(doc["report"] is not None, "the settled run has a report")
        check(level is not None and highest > level + (64 << 20),
              f"dirty + writeback stayed above the start level after the end, so it really waited "
              f"(level {level}, highest {highest})")
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass



def main():
    require_root()
    d = Daemon().start(wait_ticks=2)
    try:
        test_dirty_settle(d)
    finally:
        rc = d.stop()
    check(rc == 0, f"perflogd exits 0 ({rc})")
    finish()


if __name__ == "__main__":
    main()
