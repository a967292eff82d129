#!/usr/bin/env python3
"""perflogd speaks the service manager's notify protocol (sd_notify(3)) on a NOTIFY_SOCKET of ours.

The test binds an AF_UNIX datagram socket, starts perflogd with NOTIFY_SOCKET pointing at it,
WATCHDOG_USEC=1000000 (1 s) and no WATCHDOG_PID, and timestamps every datagram:
  1. READY=1 arrives, and not before the first tick is in the database (the database is read the
     moment READY=1 arrives: ticks >= 1); the same datagram carries a STATUS= line.
  2. WATCHDOG=1 arrives at least once a second: every gap <= 1.5 s over 5 s.
  3. The sampler is stalled with the test hook (PERFLOGD_TEST_STALL_FILE names a file; creating
     it blocks the sampler loop before its next tick): the pings stop, none for 3 s. Removing the
     file: they resume within 1.5 s, every gap <= 1.5 s again.
  4. SIGHUP: RELOADING=1, then READY=1.
  5. SIGTERM: STOPPING=1, exit code 0.
Then the abstract-namespace form (NOTIFY_SOCKET=@name): READY=1, WATCHDOG=1 and STOPPING=1 arrive.
And WATCHDOG_PID naming another process: READY=1 still comes, but no WATCHDOG=1 (the watchdog is
not ours).
"""
import os
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402


class Listener:
    """A NOTIFY_SOCKET: collects (monotonic time, message) of every datagram on a thread. When
    READY=1 first arrives, the daemon's database is read at once (ticks_at_ready)."""

    def __init__(self, address, db):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.settimeout(0.1)
        self.db = db
        self.msgs = []
        self.ticks_at_ready = None
        self.lock = threading.Lock()
        self.done = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            t = time.monotonic()
            msg = data.decode(errors="replace")
            if self.ticks_at_ready is None and "READY=1" in msg.split("\n"):
                try:
                    conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5)
                    self.ticks_at_ready = conn.execute("SELECT count(*) FROM ticks").fetchone()[0]
                    conn.close()
                except sqlite3.Error as e:
                    self.ticks_at_ready = f"no database yet ({e})"
            with self.lock:
                self.msgs.append((t, msg))

    def close(self):
        self.done = True
        self.thread.join()
        self.sock.close()

    def with_key(self, key, since=0.0, until=float("inf")):
        """Times of the messages that have a line starting with key, e.g. 'WATCHDOG=1'."""
        with self.lock:
            return [t for t, m in self.msgs
                    if since <= t <= until and any(ln.startswith(key) for ln in m.split("\n"))]

    def lines(self, since=0.0):
        with self.lock:
            return [ln for t, m in self.msgs if t >= since for ln in m.split("\n")]

    def wait_for(self, key, since=0.0, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ts = self.with_key(key, since)
            if ts:
                return ts[0]
            time.sleep(0.02)
        return None


def gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


def notify_env(address, stall_file=None):
    env = {"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "1000000"}
    if stall_file:
        env["PERFLOGD_TEST_STALL_FILE"] = stall_file
    return env


def start(d):
    d.env.pop("WATCHDOG_PID", None)
    d.start(wait_ticks=0)


def test_path_socket():
    tmp = tempfile.mkdtemp(prefix="perflog-notify-")
    path, stall = os.path.join(tmp, "notify.sock"), os.path.join(tmp, "stall")
    d = Daemon(config={"interval_ms": 1000}, env=notify_env(path, stall))
    lis = Listener(path, d.db)
    start(d)

    # 1. READY=1 after the first tick is stored, with a STATUS= line
    t_ready = lis.wait_for("READY=1")
    if not check(t_ready is not None, "READY=1 arrives within 15 s"):
        print(d.log())
        return
    check(isinstance(lis.ticks_at_ready, int) and lis.ticks_at_ready >= 1,
          f"ticks in the database when READY=1 arrived: {lis.ticks_at_ready} (want >= 1)")
    status = [ln for ln in lis.lines() if ln.startswith("STATUS=")]
    check(status and status[0].startswith("STATUS=sampling every 1000 ms;")
          and "ticks stored" in status[0],
          f"a STATUS= line: {status[0] if status else None!r}")

    # 2. WATCHDOG=1 at least once a second
    time.sleep(5.0)
    pings = lis.with_key("WATCHDOG=1", t_ready, t_ready + 5.0)
    g = gaps([t_ready] + pings)
    check(len(pings) >= 4 and max(g) <= 1.5,
          f"WATCHDOG=1 every <= 1.5 s over 5 s: {len(pings)} pings, longest gap {max(g):.2f} s")

    # 3. stall the sampler: the pings stop; unstall: they resume
    open(stall, "w").close()
    t_stall = time.monotonic()
    # The loop is caught before its next tick, at most one interval (1 s) from now; pings sent
    # while it waits for that tick still count as alive.
    time.sleep(4.5)
    quiet_from = t_stall + 1.2
    during = lis.with_key("WATCHDOG=1", quiet_from, quiet_from + 3.0)
    last_before = lis.with_key("WATCHDOG=1", t_stall)
    check(not during,
          f"stalled sampler: no WATCHDOG=1 for 3 s ({len(during)} pings between "
          f"+1.2 and +4.2 s after the stall; last ping "
          f"{(last_before[-1] - t_stall) if last_before else float('nan'):+.2f} s)")
    os.unlink(stall)
    t_unstall = time.monotonic()
    time.sleep(4.0)
    after = lis.with_key("WATCHDOG=1", t_unstall, t_unstall + 4.0)
    g = gaps([t_unstall] + after)
    check(after and max(g) <= 1.5,
          f"after the stall the pings resume: {len(after)} pings in 4 s, first "
          f"{(after[0] - t_unstall) if after else float('nan'):.2f} s after, longest gap "
          f"{max(g) if after else float('nan'):.2f} s")
    missed = d.query("SELECT coalesce(sum(missed), 0) FROM ticks")[0][0]
    check(missed >= 2, f"the stalled ticks are counted as missed: {missed}")

    # 4. SIGHUP: RELOADING=1 then READY=1
    t_hup = time.monotonic()
    d.signal(signal.SIGHUP)
    t_rel, t_rdy = lis.wait_for("RELOADING=1", t_hup, 5), lis.wait_for("READY=1", t_hup, 5)
    check(t_rel is not None and t_rdy is not None and t_rel <= t_rdy,
          f"SIGHUP: RELOADING=1 then READY=1 ({[ln for ln in lis.lines(t_hup) if not ln.startswith('WATCHDOG')]})")

    # 5. SIGTERM: STOPPING=1 and exit 0
    t_term = time.monotonic()
    rc = d.stop()
    check(lis.with_key("STOPPING=1", t_term), "SIGTERM: STOPPING=1 sent")
    check(rc == 0, f"SIGTERM: exit code {rc} (want 0)")
    lis.close()


def test_abstract_socket():
    name = f"@perflog-test-{os.getpid()}-{time.monotonic_ns()}"
    d = Daemon(config={"interval_ms": 1000}, env=notify_env(name))
    lis = Listener("\0" + name[1:], d.db)
    start(d)
    t_ready = lis.wait_for("READY=1")
    check(t_ready is not None and isinstance(lis.ticks_at_ready, int) and lis.ticks_at_ready >= 1,
          f"abstract socket {name}: READY=1 after the first tick ({lis.ticks_at_ready} ticks)")
    time.sleep(2.5)
    pings = lis.with_key("WATCHDOG=1")
    check(len(pings) >= 2, f"abstract socket: WATCHDOG=1 arrives ({len(pings)} in about 3 s)")
    t_term = time.monotonic()
    rc = d.stop()
    check(lis.with_key("STOPPING=1", t_term) and rc == 0,
          f"abstract socket: STOPPING=1 and exit code {rc}")
    lis.close()


def test_watchdog_pid_other():
    tmp = tempfile.mkdtemp(prefix="perflog-notify-")
    path = os.path.join(tmp, "notify.sock")
    d = Daemon(config={"interval_ms": 1000}, env=notify_env(path))
    lis = Listener(path, d.db)
    d.env["WATCHDOG_PID"] = "1"  # the watchdog is meant for another process
    d.start(wait_ticks=0)
    t_ready = lis.wait_for("READY=1")
    time.sleep(3.0)
    pings = lis.with_key("WATCHDOG=1")
    check(t_ready is not None and not pings,
          f"WATCHDOG_PID=1 (not perflogd): READY=1 {'arrives' if t_ready else 'missing'}, "
          f"{len(pings)} WATCHDOG=1 (want 0)")
    rc = d.stop()
    check(rc == 0, f"exit code {rc}")
    lis.close()


def main():
    test_path_socket()
    test_abstract_socket()
    test_watchdog_pid_other()
    finish()


if __name__ == "__main__":
    main()
