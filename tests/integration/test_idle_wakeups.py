#!/usr/bin/env python3
"""An idle perflogd wakes nothing but its sampler and writer.

1. A daemon with no run open and no service manager (NOTIFY_SOCKET unset) is left idle for 32 s:
   the run manager's and the main thread's wake-ups (wakeups.runs, wakeups.main in
   /api/v1/health) do not grow at all, and their on-CPU time over the last 20 s (the first 12 s
   hold the HTTP sweeper's close of the idle read connection, 10 s after a request; the first field of
   /proc/PID/task/TID/schedstat, the threads found by name; the main thread is TID == PID) is
   under 2% of the sampler's.
2. A run is opened and ended over the API: the run manager wakes for it, and the run settles with
   a report and a settle edge as before. Once it has settled, the manager sleeps again: no
   wake-ups over the next 5 s.
3. Signals still reach a main thread that waits without a deadline: SIGHUP reloads (the log says
   so), SIGTERM flushes (the ticks in the database cover the last ones announced) and exits 0.
4. Under a service manager (NOTIFY_SOCKET of ours, no watchdog) the main thread wakes only for its
   STATUS= line, every 5 s: at most 10 / 5 + 1 wake-ups in 10 s after READY=1, and a STATUS=
   datagram for each.
"""
import json
import os
import signal
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, log_lines  # noqa: E402

IDLE_S = 20
READER_IDLE_S = 10  # web/http.c READER_IDLE_MS
STATUS_EVERY_S = 5


def threads(pid):
    """{name: [tid, ...]} of process pid, with the main thread under "main"."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        out.setdefault("main" if int(tid) == pid else name, []).append(int(tid))
    return out


def cpu_ns(pid, tids):
    total = 0
    for tid in tids:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def wakeups(d):
    return d.get_json("/api/v1/health")[1]["wakeups"]


def idle_and_run():
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    d = Daemon()
    d.env = env
    d.start(wait_ticks=2)
    try:
        pid = d.proc.pid
        names = threads(pid)
        for name in ("perflog-runs", "perflog-sample", "perflog-write", "perflog-sweep"):
            check(len(names.get(name, [])) == 1, f"one thread is named {name}: {sorted(names)}")
        want = {"main": names["main"], "runs": names.get("perflog-runs", []),
                "sampler": names.get("perflog-sample", []), "sweep": names.get("perflog-sweep", [])}
        w0 = wakeups(d)
        # That request left an idle read connection, which the sweeper closes READER_IDLE_S
        # later (once; test_idle_close checks it): the CPU is read after that.
        time.sleep(READER_IDLE_S + 2)
        c0 = {k: cpu_ns(pid, v) for k, v in want.items()}
        time.sleep(IDLE_S)
        w1 = wakeups(d)
        c1 = {k: cpu_ns(pid, v) for k, v in want.items()}
        used = {k: c1[k] - c0[k] for k in want}
        print(f"# idle {IDLE_S} s: wake-ups {w0} -> {w1}; on-CPU ns {used}")
        check(w1["runs"] == w0["runs"],
              f"the run manager does not wake with no run open: {w0['runs']} -> {w1['runs']}")
        check(w1["main"] == w0["main"],
              f"the main thread does not wake without a signal: {w0['main']} -> {w1['main']}")
        check(w1["writer_tick_rests"] == w0["writer_tick_rests"],
              f"the writer does not rest inside its transactions of this machine's ticks (a "
              f"fraction of a ms each; it rests after 4 ms): {w0['writer_tick_rests']} -> "
              f"{w1['writer_tick_rests']}")
        check(used["sampler"] > 0, f"the sampler ran: {used['sampler']} ns")
        check(used["runs"] + used["main"] < 0.02 * used["sampler"],
              f"run manager + main use under 2% of the sampler's CPU: "
              f"{used['runs'] + used['main']} ns vs {used['sampler']} ns")
        # The HTTP sweeper watches open connections only; the two health requests above opened
        # and closed theirs, so it slept through the rest (it used ~80% of the sampler's CPU when
        # it woke every 250 ms regardless), once it had closed the idle read connection.
        check(used["sweep"] < 0.05 * used["sampler"],
              f"the HTTP sweeper sleeps with no connection open: {used['sweep']} ns vs "
              f"{used['sampler']} ns of the sampler")

        st, _, body = d.http("/api/v1/runs", "POST", b'{"label": "idle", "command": "true"}')
        check(st == 201, f"a run opens: {st} {body!r}")
        rid = json.loads(body)["id"]
        st, _, body = d.http(f"/api/v1/runs/{rid}/end", "POST", b'{"exit_code": 0}')
        check(st == 200, f"the run ends: {st} {body!r}")
        run, deadline = {}, time.monotonic() + 60
        while time.monotonic() < deadline:
            run = d.get_json(f"/api/v1/runs/{rid}")[1] or {}
            if run.get("status") == "settled":
                break
            time.sleep(0.2)
        w2 = wakeups(d)
        check(run.get("status") == "settled", f"the run settles: {run.get('status')}")
        check(w2["runs"] >= w1["runs"] + 2,
              f"the run manager woke for the open and the end: {w1['runs']} -> {w2['runs']}")
        settle = ((run.get("report") or {}).get("edges") or {}).get("settle") or {}
        check(settle.get("ended_by") in ("own_written", "dirty_level", "timeout"),
              f"the settle edge says which rule ended the wait: {settle.get('ended_by')}")
        time.sleep(5)
        w3 = wakeups(d)
        check(w3["runs"] == w2["runs"],
              f"once the run has settled the manager sleeps again: {w2['runs']} -> {w3['runs']}")
        check(w3["main"] == w0["main"], f"the main thread still slept: {w3['main']}")

        d.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not log_lines(d, "SIGHUP: reloading"):
            time.sleep(0.1)
        check(log_lines(d, "SIGHUP: reloading"), "SIGHUP reaches the sleeping main thread")
        check(wakeups(d)["main"] == w3["main"] + 1, "the reload was one wake-up of the main thread")
        seen = d.get_json("/api/v1/health")[1]["ticks"]
        rc = d.stop(signal.SIGTERM)
        check(rc == 0, f"SIGTERM: exit code 0 ({rc})")
        check(log_lines(d, "SIGTERM: flushing and exiting"), "SIGTERM flushes and exits")
        n = d.tick_count()
        check(n >= seen, f"the ticks announced before SIGTERM are in the database: {n} >= {seen}")
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill9()


def under_service_manager():
    tmp = tempfile.mkdtemp(prefix="perflog-it-wake-")
    addr = os.path.join(tmp, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(addr)
    sock.settimeout(15)
    env = {k: v for k, v in os.environ.items() if k != "WATCHDOG_USEC"}
    env["NOTIFY_SOCKET"] = addr
    d = Daemon()
    d.env = env
    d.start(wait_ticks=1)
    try:
        msg = ""
        while "READY=1" not in msg.split("\n"):
            msg = sock.recv(4096).decode(errors="replace")
        w0 = wakeups(d)["main"]
        t0 = time.monotonic()
        statuses = 0
        while time.monotonic() - t0 < 2 * STATUS_EVERY_S:
            sock.settimeout(max(0.01, 2 * STATUS_EVERY_S - (time.monotonic() - t0)))
            try:
                if "STATUS=" in sock.recv(4096).decode(errors="replace"):
                    statuses += 1
            except socket.timeout:
                break
        w1 = wakeups(d)["main"]
        print(f"# under a service manager: {w1 - w0} main wake-ups, {statuses} STATUS= lines in "
              f"{2 * STATUS_EVERY_S} s")
        check(w1 - w0 <= 2 * STATUS_EVERY_S // STATUS_EVERY_S + 1,
              f"the main thread wakes only for STATUS= every {STATUS_EVERY_S} s: {w1 - w0}")
        check(statuses >= 1 and statuses >= w1 - w0 - 1,
              f"each wake-up sent its STATUS= line: {statuses} lines, {w1 - w0} wake-ups")
        check(d.stop(signal.SIGTERM) == 0, "SIGTERM under a service manager: exit code 0")
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill9()
        sock.close()


def main():
    idle_and_run()
    under_service_manager()
    finish()


if __name__ == "__main__":
    main()
