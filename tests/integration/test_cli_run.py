#!/usr/bin/env python3
"""`perflog run`, `perflog runs` and `perflog report` against the real perflogd (design
sections 1, 5 and 7): the command's output passed through and its exit code kept, a command that
does not exist (127, a message, the run closed as failed), the run list, the report JSON keys, and
the cold vs warm read of acceptance scenario 1 (the cache-served share of the run's own reads).

Needs root (drop_caches), PERFLOGD (the daemon) and PERFLOG_BUILD_DIR (where `perflog` is built)."""
import json
import csv
import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
FILE_BYTES = 512 << 20  # the acceptance scenario 1
REPORT_KEYS = ["id", "label", "host", "command", "exit_code", "start_utc", "end_utc",
               "settled_utc", "duration_s", "tail_s", "disks", "interfaces", "tcp", "cpu", "memory",
               "process", "payload", "tool", "peers", "throughput", "tail", "kernel",
               "windows", "headline"]
SECTION_KEYS = {
    "tcp": ["retransmitted_segments", "sent_segments"],
    "cpu": ["avg_pct", "busiest"],
    "memory": ["cache_growth_bytes", "dirty_bytes_at_end", "writeback_tail_bytes"],
    "process": ["io_read_bytes", "storage_read_bytes", "cache_served_read_pct", "io_write_bytes",
                "storage_write_bytes"],
    "payload": ["bytes", "files", "on_disk_at_end_pct", "write_amplification", "ms_per_file",
                "packets_per_file"],
    "tool": ["name", "claimed_bytes_per_s"],
    "throughput": ["claimed", "returned", "durable", "durable_ms"],
}
DISK_KEYS = ["instance", "read_bytes", "write_bytes", "tail_write_bytes", "avg_read_bytes_per_s",
             "peak_read_bytes_per_s", "avg_write_bytes_per_s", "peak_write_bytes_per_s", "busy_pct",
             "busy_s", "device_bytes_per_s", "peak_second_bytes_per_s"]


def perflog(daemon, *args, timeout=300, stdout=subprocess.PIPE):
    """Run the client against daemon; returns (exit code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = daemon.url
    p = subprocess.run([PERFLOG, *args], stdout=stdout, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def run_json(daemon, run_id):
    status, body = daemon.get_json(f"/api/v1/runs/{run_id}")
    return body if status == 200 else None


def newest_run(daemon):
    status, body = daemon.get_json("/api/v1/runs")
    runs = body.get("runs") if status == 200 and isinstance(body, dict) else None
    return runs[0] if runs else None


def test_exit_code_and_output(d):
    rc, out, err = perflog(d, "run", "--quiet", "--label", "t", "--settle-timeout", "15", "--",
                           "sh", "-c", "echo hello; exit 3")
    check(rc == 3, f"perflog run passes the exit code through (got {rc}; stderr {err!r})")
    check(out.startswith("hello\n"), f"the command's stdout comes first on stdout ({out[:80]!r})")
    run = newest_run(d)
    check(run is not None and run.get("label") == "t", f"the run is listed with its label: {run}")
    if not run:
        return None
    full = run_json(d, run["id"])
    check(full is not None and full.get("exit_code") == 3, f"the run's exit_code is 3: {full}")
    check(full is not None and full.get("status") == "settled",
          f"the run is settled when perflog run returns: {full and full.get('status')}")
    check(full is not None and full.get("command") == "sh -c 'echo hello; exit 3'",
          f"the command is stored shell-quoted: {full and full.get('command')!r}")
    return run["id"]


def test_not_found(d):
    rc, out, err = perflog(d, "run", "--quiet", "--", "perflog-no-such-command-4711")
    check(rc == 127, f"a command that does not exist exits 127 (got {rc})")
    check("perflog-no-such-command-4711" in err and "not found" in err,
          f"and says so on stderr: {err!r}")
    run = newest_run(d)
    full = run_json(d, run["id"]) if run else None
    check(full is not None and (full.get("status") == "failed" or full.get("exit_code") == 127),
          f"its run is closed as failed / exit_code 127: {full}")
    return run["id"] if run else None


def test_runs_and_report(d, run_ids):
    rc, out, err = perflog(d, "runs")
    runs_out = out
    check(rc == 0, f"perflog runs exits 0 ({err!r})")
    ids = {line.split()[0] for line in out.splitlines()[1:] if line.strip()}
    for i in run_ids:
        check(i is not None and str(i) in ids, f"perflog runs lists run {i}: {sorted(ids)}")
    if run_ids[0] is None:
        return
    rc, out, err = perflog(d, "report", str(run_ids[0]), "--json")
    check(rc == 0, f"perflog report ID --json exits 0 ({err!r})")
    try:
        rep = json.loads(out)
    except ValueError:
        check(False, f"perflog report --json prints JSON: {out[:200]!r}")
        return
    v = rep.get("verdict") or {}
    row = [ln for ln in runs_out.splitlines()[1:] if ln.split() and ln.split()[0] == str(run_ids[0])]
    want = v.get("limit", "?") + (f" {v['instance']}" if v.get("instance") else "")
    check(row and f"  {want[:21]}" in row[0],
          f"perflog runs shows run {run_ids[0]}'s limit, {want!r}, as its report's verdict: {row}")
    missing = [k for k in REPORT_KEYS + ["verdict", "tail_verdict"] if k not in rep]
    check(not missing, f"the report has the docs/design.md §7 keys (missing {missing})")
    for section, keys in SECTION_KEYS.items():
        sub = rep.get(section)
        missing = [k for k in keys if not isinstance(sub, dict) or k not in sub]
        check(not missing, f"report.{section} has its keys (missing {missing})")
    disks = rep.get("disks") or []
    check(isinstance(rep.get("disks"), list) and all(all(k in x for k in DISK_KEYS) for x in disks),
          "every report.disks entry has its keys")
    rc, out, err = perflog(d, "report", str(run_ids[0]))
    check(rc == 0 and "cache-served" in out and "busiest core" in out,
          f"perflog report ID prints the text report ({out[:200]!r})")
    # the interfaces that did nothing are hidden, and --all lists them (the daemon samples the
    # loopback at least; the JSON has every interface)
    idle = [n["instance"] for n in rep.get("interfaces") or []
            if not any((n.get(k) or 0) > 0 for k in ("rx_bytes", "tx_bytes", "rx_packets",
                                                      "tx_packets", "errors", "discards"))]
    rc2, out_all, err = perflog(d, "report", "--all", str(run_ids[0]))
    lines = lambda t: [l.split()[0] for l in t.splitlines() if l.startswith("  ") and l.split()]
    check(rc2 == 0 and all(i in lines(out_all) for i in idle)
          and not any(i in lines(out) for i in idle)
          and (not idle or f"({len(idle)} idle interface" in out),
          f"idle interfaces {idle} are hidden, with a count, and perflog report --all lists them")
    rc, out, err = perflog(d, "report", "999999")
    check(rc == 1 and "HTTP 404" in err, f"an unknown run id is a 404 and exit 1 ({rc}, {err!r})")


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def cat_report(d, path):
    """`perflog run --json -- cat PATH`: cat's bytes come first on stdout, then the report, whose
    first line is exactly "{" (only the tail of stdout is kept: cat's output is large)."""
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    p = subprocess.Popen([PERFLOG, "run", "--quiet", "--json", "--payload", path,
                          "--settle-timeout", "30", "--", "cat", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    tail = b""
    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        tail = (tail + chunk)[-(4 << 20):]
    err = p.stderr.read().decode(errors="replace")
    rc = p.wait(timeout=300)
    check(rc == 0, f"perflog run -- cat exits 0 ({err[-300:]!r})")
    start = tail.rfind(b"\n{\n")
    try:
        return json.loads(tail[start + 1:])
    except ValueError:
        check(False, f"perflog run --json ends with the report JSON: {tail[-300:]!r} (stderr: {err[-500:]!r})")
        return None


def test_cold_warm(d):
    """Acceptance 1: a cold read comes from the disk, a warm one from the page cache."""
    path = "/var/tmp/perflog-it-cold-warm.bin"
    try:
        with open(path, "wb") as f:
            for _ in range(FILE_BYTES >> 20):
                f.write(os.urandom((1 << 20) - 1) + b"\n")  # the report then starts a line
        drop_caches()
        rep = cat_report(d, path)
        proc = (rep or {}).get("process") or {}
        srb, pct = proc.get("storage_read_bytes"), proc.get("cache_served_read_pct")
        check(isinstance(srb, int) and srb >= 0.95 * FILE_BYTES,
              f"cold: the run's processes read >= 95% of {FILE_BYTES} B from storage ({srb})")
        check(isinstance(pct, (int, float)) and pct <= 5,
              f"cold: cache-served share <= 5% ({pct})")
        disk = (rep or {}).get("disk_read_bytes")
        check(isinstance(disk, int) and abs(disk - FILE_BYTES) <= 0.05 * FILE_BYTES,
              f"cold: the devices read {FILE_BYTES} B +-5% during the run ({disk})")
        rep = cat_report(d, path)
        proc = (rep or {}).get("process") or {}
        pct = proc.get("cache_served_read_pct")
        check(isinstance(pct, (int, float)) and pct >= 95,
              f"warm: cache-served share >= 95% ({pct}; storage {proc.get('storage_read_bytes')})")
        disk = (rep or {}).get("disk_read_bytes")
        check(isinstance(disk, int) and disk <= 0.05 * FILE_BYTES,
              f"warm: the devices read <= 5% of {FILE_BYTES} B during the run ({disk})")
    finally:
        if os.path.exists(path):
            os.unlink(path)


def test_run_export(d, run_id):
    """Issue 5's run export: GET /api/v1/runs/{id}/export and perflog export --run cover the run
    and its settle tail; without patterns every counter; an unknown run is a 404."""
    run = run_json(d, run_id) or {}
    status, hdr, body = d.http(f"/api/v1/runs/{run_id}/export?tz=utc")
    lines = body.decode(errors="replace").split("\r\n") if status == 200 else []
    head = next(csv.reader([lines[0]])) if lines else []
    check(status == 200 and head and head[0] == "(PDH-CSV 4.0) (Coordinated Universal Time)(0)",
          f"run export: 200 PDH-CSV ({status}, {head[:1]})")
    check(any("Memory\\Dirty Bytes" in h for h in head) and any("PhysicalDisk(" in h for h in head),
          f"run export: every counter without a pattern ({len(head) - 1} columns)")
    rows = [next(csv.reader([l])) for l in lines[1:] if l]
    times = [datetime.datetime.strptime(r[0], "%m/%d/%Y %H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000 for r in rows]
    lo, hi = run.get("start_ms"), run.get("settled_ms") or run.get("end_ms")
    check(rows and lo and hi and all(lo <= t <= hi + 1 for t in times),
          f"run export: every row lies in the run and its tail ({len(rows)} rows, {lo}..{hi})")
    out = os.path.join(d.dir, "run.csv")
    code, _, err = perflog(d, "export", "--run", str(run_id), "--tz", "utc", "-o", out)
    with open(out, "rb") as f:
        check(code == 0 and f.read() == body, f"perflog export --run writes the same bytes ({code}, {err.strip()})")
    code, _, err = perflog(d, "export", "--run", str(run_id), "\\Memory\\Dirty Bytes", "--tz", "utc")
    check(code == 0, f"perflog export --run with a pattern ({code}, {err.strip()})")
    status, _, body = d.http("/api/v1/runs/999999/export")
    check(status == 404 and b'"not_found"' in body, f"run export of an unknown run: 404 ({status})")


def main():
    require_root()
    d = Daemon().start(wait_ticks=2)
    try:
        first = test_exit_code_and_output(d)
        missing = test_not_found(d)
        test_runs_and_report(d, [first, missing])
        test_run_export(d, first)
        test_cold_warm(d)
    finally:
        code = d.stop()
        check(code == 0, f"perflogd exits 0 on SIGTERM (got {code})")
    finish()


if __name__ == "__main__":
    main()
