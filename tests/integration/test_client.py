#!/usr/bin/env python3
"""The perflog client CLI against the real perflogd: status (reachable or not, --server and
PERFLOG_SERVER), counters (like typeperf -q, compared with the database), data (a table whose values
are those of the counter_values view), the server's error message on a bad time, and the token of a
daemon with auth_token/auth_read.

Needs PERFLOGD (the daemon) and PERFLOG_BUILD_DIR (where the `perflog` client is built)."""
import calendar
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, values  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
DIRTY = "\\Memory\\Dirty Bytes"
CPU_TOTAL = "\\Processor(_Total)\\% Processor Time"
DISK_BYTES = "\\PhysicalDisk(*)\\Disk Bytes/sec"
ROW = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d{3})?\s+(\S+)\s*$")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PERFLOG_SERVER", "PERFLOG_TOKEN")}
    env.update(extra)
    return env


def perflog(*args, env=None, timeout=60):
    """Run the client; returns (exit code, stdout, stderr)."""
    p = subprocess.run([PERFLOG, *args], capture_output=True, text=True, timeout=timeout,
                       env=env if env is not None else client_env())
    return p.returncode, p.stdout, p.stderr


def wait_listening(port, daemon, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if daemon.proc.poll() is not None:
            raise RuntimeError(f"perflogd exited with {daemon.proc.returncode}:\n{daemon.log()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"perflogd does not listen on 127.0.0.1:{port}:\n{daemon.log()}")


def status_until_ok(server, env=None, tries=10):
    """perflog status, retried for a few seconds while the daemon settles (it may report degraded
    right after the start); returns the last (rc, out, err)."""
    for _ in range(tries):
        r = perflog("--server", server, "status", env=env) if server else perflog("status", env=env)
        if r[0] == 0:
            return r
        time.sleep(0.5)
    return r


def test_unreachable():
    port = free_port()
    rc, out, err = perflog("--server", f"http://127.0.0.1:{port}", "status")
    check(rc != 0, f"status with nothing on port {port}: exit {rc} (non-zero)")
    check("is perflogd running?" in err, f"status, unreachable: stderr says 'is perflogd running?': {err.strip()!r}")
    rc, out, err = perflog("status", env=client_env(PERFLOG_SERVER=f"http://127.0.0.1:{port}"))
    check(rc != 0 and f"127.0.0.1:{port}" in err, f"PERFLOG_SERVER is used: exit {rc}, {err.strip()!r}")


def test_status(daemon, server):
    rc, out, err = status_until_ok(server)
    print(out, flush=True)
    check(rc == 0, f"perflog --server {server} status: exit {rc}; stderr {err.strip()!r}")
    host = socket.gethostname()
    check(host in out, f"status names the host {host!r}")
    dbs = {daemon.db, os.path.realpath(daemon.db)}
    check(any(d in out for d in dbs), f"status names the database {daemon.db}")
    rc2, out2, err2 = status_until_ok(None, env=client_env(PERFLOG_SERVER=server))
    check(rc2 == 0 and host in out2 and any(d in out2 for d in dbs),
          f"PERFLOG_SERVER={server} perflog status: exit {rc2}, {err2.strip()!r}")
    rc3, out3, _ = perflog("--server", server, "status", "--json")
    try:
        health = json.loads(out3)
    except ValueError:
        health = {}
    check(health.get("host") == host and "status" in health,
          f"status --json prints the health JSON (exit {rc3}): {out3[:300]!r}")


def test_counters(daemon, server):
    rc, out, err = perflog("--server", server, "counters")
    lines = out.splitlines()
    check(rc == 0 and DIRTY in lines and CPU_TOTAL in lines,
          f"perflog counters lists {DIRTY} and {CPU_TOTAL} (exit {rc}, {len(lines)} lines, "
          f"stderr {err.strip()!r})")
    check(all(ln.startswith("\\") and "\t" not in ln for ln in lines),
          "every line of perflog counters is a bare path, like typeperf -q")

    rc, out, err = perflog("--server", server, "counters", DISK_BYTES)
    lines = out.splitlines()
    pat = re.compile(r"^\\PhysicalDisk\((.+)\)\\Disk Bytes/sec$")
    check(rc == 0 and lines and all(pat.match(ln) for ln in lines),
          f"perflog counters '{DISK_BYTES}' lists only such paths (exit {rc}): {lines}; {err.strip()!r}")
    listed = {pat.match(ln).group(1) for ln in lines if pat.match(ln)}
    stored = {r[0] for r in daemon.query(
        "SELECT DISTINCT instance FROM counter_values WHERE object='PhysicalDisk'")}
    check(listed == stored, f"its instances {sorted(listed)} are the database's {sorted(stored)}")


def parse_table(out):
    """[(utc seconds, value or None)] of the rows of a one-series `perflog data --utc` table."""
    rows = []
    for ln in out.splitlines():
        m = ROW.match(ln)
        if not m:
            continue
        t = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
        v = None if m.group(3) == "-" else float(m.group(3))
        rows.append((t, v))
    return rows


def same_value(printed, stored):
    if printed is None or stored is None:
        return printed is None and stored is None
    return abs(printed - stored) <= max(0.051, 5e-6 * abs(stored))


def test_data(daemon, server):
    daemon.wait_ticks(6)
    rc, out, err = perflog("--server", server, "data", DIRTY, "--from", "-5s", "--to", "now", "--utc")
    rows = parse_table(out)
    check(rc == 0 and len(rows) >= 3,
          f"perflog data '{DIRTY}' --from -5s --to now: exit {rc}, {len(rows)} rows (>= 3); "
          f"stderr {err.strip()!r}")
    print(out, flush=True)
    check(bool(out) and DIRTY in out.splitlines()[0], f"the table header names {DIRTY}")
    # A row the API served may be a moment ahead of what a reader sees in the file: wait a tick.
    daemon.wait_ticks(daemon.tick_count() + 1)
    stored = values(daemon, DIRTY)
    matched = 0
    for t, v in rows:
        # the table shows the nearest whole second; the tick may be a little before or after it
        near = [val for t_ms, _, val in stored if abs(t_ms - t * 1000) <= 1000]
        if any(same_value(v, s) for s in near):
            matched += 1
        else:
            check(False, f"row {t} {v}: no counter_values row near it with that value: {near}")
    check(rows and matched == len(rows), f"{matched} of {len(rows)} rows equal the counter_values view")

    rc, out2, err2 = perflog("--server", server, "data", DIRTY, "--from", "-5s")
    check(rc == 0 and len(parse_table(out2)) >= 3, "perflog data in local time prints rows too")


def test_bad_time(server):
    # the client reads --from itself (in its own zone), so a time it cannot read is a usage error
    rc, out, err = perflog("--server", server, "data", DIRTY, "--from", "yesterday-ish")
    check(rc == 2 and "yesterday-ish" in err and "cannot read" in err,
          f"perflog data --from yesterday-ish: exit {rc} (2), names the time: {err.strip()!r}")


def test_auth():
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    d = Daemon(config={"auth_token": "s3cret", "auth_read": True},
               args=["--listen", f"127.0.0.1:{port}"])
    try:
        d.start(wait_ticks=2)
        wait_listening(port, d)
        rc, out, err = perflog("--server", server, "status")
        check(rc != 0 and "PERFLOG_TOKEN" in err,
              f"status without a token: exit {rc}, stderr mentions PERFLOG_TOKEN: {err.strip()!r}")
        rc, out, err = status_until_ok(server, env=client_env(PERFLOG_TOKEN="s3cret"))
        check(rc == 0, f"PERFLOG_TOKEN=s3cret perflog status: exit {rc}; {err.strip()!r}")
        rc, out, err = perflog("--server", server, "--token", "s3cret", "counters")
        check(rc == 0 and DIRTY in out.splitlines(), f"--token s3cret counters: exit {rc}; {err.strip()!r}")
        rc, out, err = perflog("status", env=client_env(PERFLOG_SERVER=server, PERFLOG_TOKEN="wrong"))
        check(rc != 0 and "PERFLOG_TOKEN" in err, f"a wrong token: exit {rc}, {err.strip()!r}")
    finally:
        check(d.stop() == 0, "perflogd with auth_token exits 0 on SIGTERM")


def main():
    check(os.access(PERFLOG, os.X_OK), f"the client is built at {PERFLOG}")
    test_unreachable()
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    d = Daemon(args=["--listen", f"127.0.0.1:{port}"])
    try:
        d.start(wait_ticks=3)
        wait_listening(port, d)
        test_status(d, server)
        test_counters(d, server)
        test_data(d, server)
        test_bad_time(server)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        check(False, f"{type(e).__name__}: {e}")
    finally:
        check(d.stop() == 0, "perflogd exits 0 on SIGTERM")
    try:
        test_auth()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        check(False, f"{type(e).__name__}: {e}")
    finish()


if __name__ == "__main__":
    main()
