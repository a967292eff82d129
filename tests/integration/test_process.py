#!/usr/bin/env python3
"""Process tracking under runs (docs/design.md §2 `Process`), with the real perflogd on the
real /proc: a run follows its pid and every descendant as `\\Process(name:pid)\\...` counters; a
process born during the run counts its I/O from zero; the report lists the run's processes and,
for a run opened through the API alone (no client I/O numbers), takes its process numbers from
the root process; two overlapping runs keep their processes apart, in reports and exports; nothing
is followed once the runs end.

Needs PERFLOGD and PERFLOG_BUILD_DIR (for `perflog`)."""
import csv
import io
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
FILE_BYTES = 48 << 20
# Reads FILE in 1 MiB chunks, then stays alive so that at least one tick sees its totals.
READER = ("import sys, time\n"
          "with open(sys.argv[1], 'rb', buffering=0) as f:\n"
          "    while f.read(1 << 20): pass\n"
          "time.sleep(float(sys.argv[2]))\n")


def perflog(daemon, *args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = daemon.url
    p = subprocess.run([PERFLOG, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def data_total(d, path, t_from, t_to):
    """Sum of rate x interval of one counter over (t_from, t_to], from /api/v1/data."""
    q = urllib.parse.urlencode({"counter": path, "from": f"{t_from / 1000:.3f}",
                                "to": f"{t_to / 1000:.3f}"})
    status, body = d.get_json(f"/api/v1/data?{q}")
    if status != 200 or not body.get("series"):
        return None
    ts, vals = body["timestamps"], body["series"][0]["values"]
    total, prev = 0.0, None
    for t, v in zip(ts, vals):
        if v is not None and prev is not None:
            total += v * (t - prev) / 1000.0
        prev = t
    return total


def near(x, want, tol):
    return isinstance(x, (int, float)) and abs(x - want) <= tol


def test_client_run(d, path):
    """perflog run: the reader (a grandchild, born in the run) is followed and its reads are all
    counted, in the report, in /api/v1/data and in the run's export."""
    code, out, err = perflog(d, "run", "--json", "--settle-timeout", "10", "--", "sh", "-c",
                             f"sleep 1.2; python3 -c \"$0\" {path} 1.6", READER)
    check(code == 0, f"perflog run exits 0 ({code}, {err[-300:]!r})")
    try:
        rep = json.loads(out)
        rep = rep.get("report", rep)
    except ValueError:
        check(False, f"perflog run --json prints the report ({out[:200]!r})")
        return None
    procs = rep.get("processes") or []
    names = [p.get("instance", "") for p in procs]
    py = [p for p in procs if p.get("instance", "").startswith("python3:")]
    check(rep.get("processes_followed", 0) >= 3 and any(n.startswith("sh:") for n in names)
          and any(n.startswith("perflog:") for n in names),
          f"the run's tree is followed: perflog, sh, python3 ({names})")
    check(len(py) == 1, f"one python3 process in the report ({names})")
    if not py:
        return rep
    got = py[0].get("io_read_bytes")
    # python3 reads its own modules too (a few MiB at most)
    check(isinstance(got, int) and FILE_BYTES <= got <= FILE_BYTES + (8 << 20),
          f"python3 read the {FILE_BYTES} B file, counted from zero though born mid-run ({got})")
    check(isinstance(py[0].get("cpu_s"), (int, float)) and py[0]["cpu_s"] >= 0,
          f"its CPU seconds are there ({py[0].get('cpu_s')})")
    code, text, err = perflog(d, "report", str(rep["id"]))
    check(code == 0 and "followed" in text and py[0]["instance"] in text,
          f"perflog report lists the followed processes ({text[-400:]!r})")
    start = rep.get("start_utc")
    status, run = d.get_json(f"/api/v1/runs/{rep['id']}")
    t_from, t_to = run["start_ms"] - 1000, run["end_ms"] + 2000
    via_data = data_total(d, f"\\Process({py[0]['instance']})\\IO Read Bytes/sec", t_from, t_to)
    check(via_data is not None and near(via_data, got, 0.01 * got + 4096),
          f"/api/v1/data gives the same bytes for \\Process({py[0]['instance']}) ({via_data} vs {got})")
    pid = py[0]["instance"].split(":")[1]
    status, body = d.get_json("/api/v1/counters?match=" + urllib.parse.quote(
        f"\\Process(*:{pid})\\ID Process"))
    check(status == 200 and len(body.get("counters", [])) == 1,
          f"the counter catalogue has \\Process(python3:{pid}) ({start}, {body})")
    return rep


def test_api_run_and_overlap(d, path):
    """Two runs opened through the API, on two processes, overlapping: each report has its own
    process only, the process numbers come from the root (no client numbers were sent), and the
    run exports carry only their own Process columns."""
    procs, ids = [], []
    for delay in ("2.2", "2.2"):
        p = subprocess.Popen([sys.executable, "-c",
                              "import sys, time\nsys.stdin.read(1)\ntime.sleep(1.2)\n" + READER,
                              path, delay], stdin=subprocess.PIPE)
        procs.append(p)
        status, _, raw = d.http("/api/v1/runs", "POST", json.dumps({"label": f"api {p.pid}",
                                                                     "pid": p.pid}).encode())
        check(status == 201, f"POST /api/v1/runs with a pid: 201 ({status} {raw[:200]!r})")
        ids.append(json.loads(raw)["id"])
    for p in procs:
        p.stdin.write(b"x")
        p.stdin.close()
    for p in procs:
        p.wait(timeout=60)
    d.wait_ticks(1)
    reports = []
    for run_id in ids:
        status, _, raw = d.http(f"/api/v1/runs/{run_id}/end", "POST",
                                json.dumps({"exit_code": 0}).encode())
        check(status == 200, f"run {run_id} ends ({status})")
    for run_id, p in zip(ids, procs):
        deadline, rep = time.time() + 60, None
        while time.time() < deadline:
            status, rep = d.get_json(f"/api/v1/runs/{run_id}")
            if rep.get("status") == "settled":
                break
            time.sleep(0.5)
        rep = rep.get("report") or {}
        reports.append(rep)
        names = [x.get("instance") for x in rep.get("processes") or []]
        check(names == [f"python3:{p.pid}"] or names == [f"python:{p.pid}"] or
              (len(names) == 1 and names[0].endswith(f":{p.pid}")),
              f"run {run_id} lists only its own process {p.pid} ({names})")
        proc = rep.get("process") or {}
        got = proc.get("io_read_bytes")
        check(proc.get("source") == "process counters" and isinstance(got, int)
              and FILE_BYTES <= got <= FILE_BYTES + (8 << 20),
              f"run {run_id}: process numbers from the root's counters ({proc})")
        status, _, body = d.http(f"/api/v1/runs/{run_id}/export?tz=utc")
        head = next(csv.reader(io.StringIO(body.decode(errors="replace")))) if status == 200 else []
        pcols = [h for h in head if "\\Process(" in h]
        check(pcols and all(f":{p.pid})" in h for h in pcols),
              f"run {run_id}'s export has its own Process columns only ({pcols[:3]}...)")
    return ids


def test_nothing_followed_after(d):
    """Once every run has ended, the ticks carry no Process rows."""
    d.wait_ticks(2)
    status, body = d.get_json("/api/v1/latest")
    paths = [c.get("path", "") for c in body.get("values", [])] if status == 200 else []
    check(status == 200 and paths and not any("\\Process(" in p for p in paths),
          f"no Process counter in /api/v1/latest once the runs ended ({len(paths)} counters)")


def main():
    d = Daemon().start(wait_ticks=2)
    path = os.path.join(d.dir, "data.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(FILE_BYTES))
    try:
        test_client_run(d, path)
        test_api_run_and_overlap(d, path)
        test_nothing_followed_after(d)
    finally:
        code = d.stop()
        check(code == 0, f"perflogd exits 0 on SIGTERM (got {code})")
        d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
