#!/usr/bin/env python3
"""Whether a run's processes are followed, said where it can be seen (real perflogd, real HTTP):
perflogd follows at most 64 runs' processes at once (COLLECTOR_MAX_ROOTS); the 65th open run is
told so in the answer to its POST /api/v1/runs (`processes.followed` false with a reason) and in its
report (`process.followed`, `process.not_followed_reason`, and a line of `perflog report`), so that
its `processes_followed: 0` is not taken for idle processes. Ending a run frees its slot. A pid
that is no process, and a run without a pid, are told too. A run on pid 1 follows every process of
the machine: sampling stays on schedule (health `missed` does not grow), the report lists them,
and no tick holds more Process rows than the tracker's cap (4096, PROC_TRACKER_MAX_ROWS; a machine
has fewer, so tests/unit/test_proc.c checks the cap itself on a fixture /proc).

Needs PERFLOGD and PERFLOG_BUILD_DIR (for `perflog`)."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, log_lines  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
MAX_ROOTS = 64    # COLLECTOR_MAX_ROOTS, collectors/collector.h
MAX_ROWS = 4096   # PROC_TRACKER_MAX_ROWS, collectors/linux/linux_proc.h
NO_SUCH_PID = 2**31 - 1  # above any pid_max: no process has it


def start_run(d, label, pid=None):
    body = {"label": label, "settle_timeout_s": 1}
    if pid is not None:
        body["pid"] = pid
    status, _, raw = d.http("/api/v1/runs", "POST", json.dumps(body).encode())
    if status != 201:
        check(False, f"POST /api/v1/runs ({label}): 201 ({status} {raw[:200]!r})")
        return None, {}
    ans = json.loads(raw)
    return ans["id"], ans.get("processes") or {}


def end_run(d, run_id):
    status, _, raw = d.http(f"/api/v1/runs/{run_id}/end", "POST", b'{"exit_code": 0}')
    check(status == 200, f"run {run_id} ends ({status} {raw[:200]!r})")


def wait_settled(d, ids, timeout=20):
    """{id: report} once every run in ids has a report (or the timeout passed)."""
    deadline, reports = time.time() + timeout, {}
    while time.time() < deadline and len(reports) < len(ids):
        for run_id in ids:
            if run_id not in reports:
                status, run = d.get_json(f"/api/v1/runs/{run_id}")
                if status == 200 and run.get("status") == "settled" and run.get("report"):
                    reports[run_id] = run["report"]
        time.sleep(0.25)
    check(len(reports) == len(ids), f"all {len(ids)} runs settled ({len(reports)})")
    return reports


def perflog_report(d, run_id):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    p = subprocess.run([PERFLOG, "report", str(run_id)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30, env=env)
    return p.returncode, p.stdout


def test_limit(d, pid, pid2):
    """64 runs followed (all on pid), the 65th not (and why): on pid2, which no other run follows,
    so that its report has no Process rows from the others; ending one frees a slot."""
    followed = []
    for i in range(MAX_ROOTS):
        run_id, procs = start_run(d, f"slot {i}", pid)
        if run_id is None:
            return
        followed.append(run_id)
        if procs.get("followed") is not True:
            check(False, f"run {i + 1} of {MAX_ROOTS} is followed ({procs})")
            return
    check(True, f"the first {MAX_ROOTS} runs on pid {pid} are answered processes.followed true")
    over, procs = start_run(d, "one too many", pid2)
    reason = procs.get("reason") or ""
    check(procs.get("followed") is False and str(MAX_ROOTS) in reason,
          f"the {MAX_ROOTS + 1}th run is answered followed false, with why ({procs})")
    check(log_lines(d, f"run {over}: its processes are not followed"),
          f"the daemon logs that run {over} is not followed")
    # A pid that is no process, a run without a pid: told too, and they take no slot.
    bad, bad_procs = start_run(d, "no such pid", NO_SUCH_PID)
    check(bad_procs.get("followed") is False and "no process" in (bad_procs.get("reason") or ""),
          f"a pid that is no process is answered followed false ({bad_procs})")
    nopid, nopid_procs = start_run(d, "no pid")
    check(nopid_procs.get("followed") is False and "no pid" in (nopid_procs.get("reason") or ""),
          f"a run without a pid is answered followed false ({nopid_procs})")
    end_run(d, followed[0])
    again, again_procs = start_run(d, "after one ended", pid)
    check(again_procs.get("followed") is True,
          f"once a followed run ended, a new run is followed again ({again_procs})")
    still, still_procs = start_run(d, "full again", pid)
    check(still_procs.get("followed") is False,
          f"... and the set is full again after it ({still_procs})")
    # perflog run, while the set is full: it says its command's processes are not followed.
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    p = subprocess.run([PERFLOG, "run", "--quiet", "--settle-timeout", "1", "--", "true"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    check(p.returncode == 0 and f"does not follow CMD's processes: {MAX_ROOTS} runs are followed"
          in p.stderr, f"perflog run says the daemon does not follow its command, and why "
          f"(exit {p.returncode}: {p.stderr.strip()[-300:]!r})")

    # The runs live a few ticks, so that the followed ones have rows of their sleep.
    d.wait_ticks(d.tick_count() + 2)
    for run_id in followed[1:] + [over, bad, nopid, again, still]:
        end_run(d, run_id)
    reports = wait_settled(d, followed + [over, bad, nopid, again, still])
    rep = reports.get(over) or {}
    proc = rep.get("process") or {}
    check(proc.get("followed") is False and str(MAX_ROOTS) in (proc.get("not_followed_reason") or "")
          and rep.get("processes_followed") == 0,
          f"the {MAX_ROOTS + 1}th run's report says not followed and why "
          f"({proc}, processes_followed {rep.get('processes_followed')})")
    code, text = perflog_report(d, over)
    line = [l for l in text.splitlines() if "not followed" in l]
    check(code == 0 and len(line) == 1 and str(MAX_ROOTS) in line[0],
          f"perflog report {over} prints one line about it ({line or text[-300:]!r})")
    rep = reports.get(again) or {}
    proc = rep.get("process") or {}
    check(proc.get("followed") is True and proc.get("not_followed_reason") is None
          and rep.get("processes_followed", 0) >= 1,
          f"the run started in the freed slot is followed, its sleep found ({proc}, "
          f"processes_followed {rep.get('processes_followed')})")
    code, text = perflog_report(d, again)
    check(code == 0 and "not followed" not in text,
          f"perflog report of a followed run says nothing about it ({text[:200]!r})")
    ok = all((reports.get(i) or {}).get("process", {}).get("followed") is True
             for i in followed)
    check(ok, f"the reports of the {MAX_ROOTS} first runs say followed")
    for run_id, want in ((bad, "no process"), (nopid, "no pid")):
        proc = (reports.get(run_id) or {}).get("process") or {}
        check(proc.get("followed") is False and want in (proc.get("not_followed_reason") or ""),
              f"run {run_id}'s report says not followed: {want} ({proc})")


def health(d):
    status, h = d.get_json("/api/v1/health")
    return h if status == 200 else {}


def descendants_of_1():
    """(processes in /proc, how many of them descend from pid 1: not the kernel's threads)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    under = 0
    for pid in parent:
        seen, p = set(), pid
        while p not in (0, 1) and p in parent and p not in seen:
            seen.add(p)
            p = parent[p]
        under += p == 1
    return len(parent), under


def test_pid_1(d):
    """A run on pid 1 follows the machine: on schedule, listed, within the row cap."""
    on_machine, under_1 = descendants_of_1()
    d.wait_ticks(d.tick_count() + 1)
    missed0 = health(d).get("missed")
    run_id, procs = start_run(d, "everything", 1)
    check(procs.get("followed") is True, f"a run on pid 1 is followed ({procs})")
    t0 = time.time()
    n0 = d.tick_count()
    d.wait_ticks(n0 + 5, timeout=20)
    missed1 = health(d).get("missed")
    check(isinstance(missed0, int) and missed1 == missed0,
          f"sampling stays on schedule while following pid 1: missed {missed0} -> {missed1} "
          f"over {time.time() - t0:.1f} s")
    end_run(d, run_id)
    rep = wait_settled(d, [run_id]).get(run_id) or {}
    n = rep.get("processes_followed", 0)
    check(n > 1 and len(rep.get("processes") or []) > 1,
          f"the report lists the machine's processes ({n} followed; {under_1} descendants of pid 1 "
          f"of {on_machine} in /proc, the rest kernel threads under pid 2)")
    status, run = d.get_json(f"/api/v1/runs/{run_id}")
    rows = d.query("SELECT p.tick, count(*) FROM obj_process p JOIN ticks t ON t.id = p.tick "
                   "WHERE t.t_ms BETWEEN ? AND ? GROUP BY p.tick",
                   (run["start_ms"], run["end_ms"]))
    most = max((c for _, c in rows), default=0)
    check(len(rows) >= 3 and most <= MAX_ROWS and most >= min(under_1, MAX_ROWS) // 2,
          f"Process rows per tick: at most {most} in {len(rows)} ticks, within the cap "
          f"{MAX_ROWS}, and at least half of the {under_1} descendants of pid 1 in /proc")


def main():
    d = Daemon().start(wait_ticks=2)
    child = subprocess.Popen(["sleep", "120"])
    child2 = subprocess.Popen(["sleep", "120"])
    t0 = time.time()
    try:
        test_limit(d, child.pid, child2.pid)
        test_pid_1(d)
    finally:
        for c in (child, child2):
            c.kill()
            c.wait()
        code = d.stop()
        check(code == 0, f"perflogd exits 0 on SIGTERM (got {code})")
    print(f"# wall time {time.time() - t0:.1f} s")
    finish()


if __name__ == "__main__":
    main()
