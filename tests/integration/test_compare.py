#!/usr/bin/env python3
"""Runs side by side: two real runs, an O_DIRECT dd and a buffered one (its data synced before it
returns, so the run settles at once), compared by `perflog compare` (text, --json, --csv) and by
GET /api/v1/runs/compare. Every figure must be the very value of the same run's own report
(GET /api/v1/runs/{id}), found there by the figure's name, not through the compare code's table:
the test knows where each named figure lives in the report itself. The ratios must be each value
over the first run's, null where the first is 0 or null. Then the bad inputs: an unknown id (404
naming it), one id (400), more than 20 (400), a duplicate, junk. Nothing here is timed."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
SIZE_MIB = 16

# Where the test expects each scalar figure in a report (docs/report.md), independently of
# daemon/runs/report_compare.c; per-device figures are "disk.DEV.FIELD", "nic.DEV.FIELD" and
# "netfs.SHARE.FIELD".
SCALARS = {
    "verdict.limit": ("verdict", "limit"),
    "verdict.instance": ("verdict", "instance"),
    "tail_verdict.limit": ("tail_verdict", "limit"),
    "throughput.claimed": ("throughput", "claimed"),
    "throughput.returned": ("throughput", "returned"),
    "throughput.durable": ("throughput", "durable"),
    "duration_s": ("duration_s",),
    "tail_s": ("tail_s",),
    "cache_served_read_pct": ("process", "cache_served_read_pct"),
    "payload.ms_per_file": ("payload", "ms_per_file"),
    "payload.packets_per_file": ("payload", "packets_per_file"),
    "cpu.busiest.instance": ("cpu", "busiest", "instance"),
    "cpu.busiest.avg_pct": ("cpu", "busiest", "avg_pct"),
    "cpu.busiest.privileged_pct": ("cpu", "busiest", "privileged_pct"),
    "cpu.busiest.dominant_softirq": ("cpu", "busiest", "dominant_softirq"),
    "cpu.busiest.dropped_packets": ("cpu", "busiest", "dropped_packets"),
    "stalls.io_some_pct": ("stalls", "io_some_pct"),
    "stalls.io_full_pct": ("stalls", "io_full_pct"),
    "stalls.disk_flushes": ("stalls", "disk_flushes"),
    "kernel.throttled_ticks": ("kernel", "throttled_ticks"),
    "tcp.retransmitted_segments": ("tcp", "retransmitted_segments"),
    "own.read_bytes": ("own", "read_bytes"),
    "own.write_bytes": ("own", "write_bytes"),
    "others.read_bytes": ("others", "read_bytes"),
    "others.write_bytes": ("others", "write_bytes"),
}


def in_report(rep, name):
    """The value the named figure has in report rep (None when absent)."""
    if name in SCALARS:
        v = rep
        for k in SCALARS[name]:
            v = v.get(k) if isinstance(v, dict) else None
        return v
    kind, rest = name.split(".", 1)
    dev, field = rest.rsplit(".", 1)
    for e in rep.get({"disk": "disks", "nic": "interfaces", "netfs": "netfs"}[kind]) or []:
        if e.get("instance") == dev:
            return e.get(field)
    return None


def perflog(d, *args):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    return subprocess.run([PERFLOG, *args], capture_output=True, text=True, timeout=300, env=env)


def check_figures(cmp, reports, how):
    names = [f["name"] for f in cmp["figures"]]
    check(set(SCALARS) <= set(names), f"{how}: every headline figure is there ({names})")
    check(any(n.startswith("disk.") and n.endswith(".read_bytes") for n in names) or
          any(n.startswith("disk.") and n.endswith(".write_bytes") for n in names),
          f"{how}: a disk's bytes are there")
    check([r["id"] for r in cmp["runs"]] == [r["id"] for r in reports], f"{how}: the runs in order")
    for f in cmp["figures"]:
        want = [in_report(r, f["name"]) for r in reports]
        check(f["values"] == want, f"{how}: {f['name']} = the reports' {want} (got {f['values']})")
        first = want[0]
        for i, (v, ratio) in enumerate(zip(want, f["ratios"])):
            if isinstance(v, (int, float)) and isinstance(first, (int, float)) and first != 0 \
                    and not isinstance(v, bool):
                check(ratio is not None and abs(ratio - v / first) <= 1e-9 * max(1, abs(v / first)),
                      f"{how}: {f['name']} ratio {i} = {v}/{first} (got {ratio})")
            else:
                check(ratio is None, f"{how}: {f['name']} ratio {i} null ({v}/{first}, got {ratio})")


def main():
    work = tempfile.mkdtemp(prefix="perflog-it-compare-", dir="/var/tmp")
    d = Daemon().start(wait_ticks=2)
    try:
        ids = []
        for label, flag in (("direct", "oflag=direct"), ("buffered", "conv=fsync")):
            out = os.path.join(work, label + ".bin")
            p = perflog(d, "run", "--quiet", "--json", "--label", label, "--bytes",
                        str(SIZE_MIB << 20), "--", "dd", "if=/dev/zero", f"of={out}", "bs=1M",
                        f"count={SIZE_MIB}", flag)
            check(p.returncode == 0, f"perflog run {label} exits 0 ({p.returncode}: {p.stderr})")
            ids.append(json.loads(p.stdout)["id"])
        reports = []
        for i in ids:
            st, run = d.get_json(f"/api/v1/runs/{i}")
            check(st == 200 and isinstance(run.get("report"), dict), f"run {i} has its report")
            reports.append(run["report"])
        check(reports[0]["command"] != reports[1]["command"] and reports[0] != reports[1],
              "two different runs")

        q = ",".join(map(str, ids))
        st, api = d.get_json(f"/api/v1/runs/compare?ids={q}")
        check(st == 200, f"GET /api/v1/runs/compare?ids={q} is 200 ({st})")
        check(api["runs"] == reports, "the API's runs are the runs' own reports")
        check_figures(api, reports, "API")
        moved = [f["name"] for f in api["figures"]
                 if isinstance(f["ratios"][1], float) and f["ratios"][1] != 1.0]
        check(len(moved) >= 3, f"the ratios tell the runs apart: {moved}")

        p = perflog(d, "compare", "--json", *map(str, ids))
        check(p.returncode == 0, f"perflog compare --json exits 0 ({p.stderr})")
        check_figures(json.loads(p.stdout), reports, "perflog compare --json")

        p = perflog(d, "compare", "--csv", *map(str, ids))
        check(p.returncode == 0, f"perflog compare --csv exits 0 ({p.stderr})")
        rows = list(csv.reader(io.StringIO(p.stdout)))
        check(rows[0] == ["figure", "unit", f"run {ids[0]}", f"run {ids[1]}", f"ratio {ids[1]}"],
              f"the CSV header ({rows[0]})")
        by_name = {r[0]: r for r in rows[1:]}
        check(set(by_name) == {f["name"] for f in api["figures"]}, "the CSV has the API's rows")
        for f in api["figures"]:
            r = by_name[f["name"]]
            for k, v in enumerate(f["values"]):
                cell = r[2 + k]
                if v is None:
                    check(cell == "", f"CSV {f['name']} run {k}: empty for null ({cell!r})")
                elif isinstance(v, str):
                    check(cell == v, f"CSV {f['name']} run {k} = {v!r} ({cell!r})")
                else:
                    check(float(cell) == float(v), f"CSV {f['name']} run {k} = {v} ({cell})")
            ratio = f["ratios"][1]
            check((r[4] == "") if ratio is None else float(r[4]) == ratio,
                  f"CSV {f['name']} ratio = {ratio} ({r[4]!r})")

        p = perflog(d, "compare", *map(str, ids))
        check(p.returncode == 0, f"perflog compare exits 0 ({p.stderr})")
        print(p.stdout)
        lines = p.stdout.splitlines()
        check(f"run {ids[0]}" in lines[0] and f"run {ids[1]}" in lines[0], "the text heads")
        ratio = next(f for f in api["figures"] if f["name"] == "throughput.returned")["ratios"][1]
        row = next(ln for ln in lines if ln.startswith("returned "))
        check(f"x{ratio:.3g}" in row, f"the text shows the returned ratio x{ratio:.3g} ({row})")

        # the same runs named by URL, as runs of another host are
        p = perflog(d, "compare", "--json", f"{d.url}/api/v1/runs/{ids[0]}",
                    f"http://localhost:{d.port}/api/v1/runs/{ids[1]}")
        check(p.returncode == 0, f"perflog compare of two servers' runs exits 0 ({p.stderr})")
        check_figures(json.loads(p.stdout), reports, "perflog compare, two servers")

        p = perflog(d, "compare", "--json", "--label", "*")
        check(p.returncode == 0, f"perflog compare --label '*' exits 0 ({p.stderr})")
        check([r["id"] for r in json.loads(p.stdout)["runs"]] == ids, "--label picks both, oldest first")

        # runs of two hosts: a run with a peer (perflog run --peer), compared with --peers and
        # with --server given again for the peer's run
        d2 = Daemon().start(wait_ticks=1)
        try:
            p = perflog(d, "run", "--quiet", "--json", "--label", "two hosts", "--peer", d2.url,
                        "--", "dd", "if=/dev/zero", f"of={os.path.join(work, 'peer.bin')}",
                        "bs=1M", "count=4", "conv=fsync")
            check(p.returncode == 0, f"perflog run --peer exits 0 ({p.stderr[-300:]})")
            main_id = json.loads(p.stdout)["id"]
            _, main_run = d.get_json(f"/api/v1/runs/{main_id}")
            peer_id = int(main_run["peers"][0].rsplit("/", 1)[1])
            _, peer_run = d2.get_json(f"/api/v1/runs/{peer_id}")
            for args, how in ((["--peers", str(main_id)], "--peers"),
                              ([str(main_id), "--server", d2.url, str(peer_id)], "--server twice")):
                p = perflog(d, "compare", "--json", *args)
                check(p.returncode == 0, f"perflog compare {how} exits 0 ({p.stderr})")
                check_figures(json.loads(p.stdout), [main_run["report"], peer_run["report"]],
                              f"perflog compare {how}")
        finally:
            d2.stop()

        # bad input
        st, e = d.get_json("/api/v1/runs/compare?ids=%d,999999" % ids[0])
        check(st == 404 and "999999" in e["error"]["message"], f"an unknown id: 404 naming it ({st} {e})")
        st, e = d.get_json("/api/v1/runs/compare?ids=%d" % ids[0])
        check(st == 400 and "compare needs two or more runs" in e["error"]["message"],
              f"one id: 400 ({st} {e})")
        many = ",".join(str(i) for i in range(1, 22))
        st, e = d.get_json(f"/api/v1/runs/compare?ids={many}")
        check(st == 400 and "at most 20" in e["error"]["message"], f"21 ids: 400 ({st} {e})")
        for bad in ("1,1", "1,x", "0,1", "1,,2", "1,2,", "-1,2", "", "01,2", "1,2&ids=3",
                    "1" * 16 + ",2"):
            st, e = d.get_json(f"/api/v1/runs/compare?ids={bad}")
            check(st == 400 and e["error"]["code"] == "bad_parameter",
                  f"ids={bad}: 400 bad_parameter ({st} {str(e)[:200]})")
        st, e = d.get_json("/api/v1/runs/compare?id=1,2")
        check(st == 400, f"an unknown parameter: 400 ({st})")
        p = perflog(d, "compare", str(ids[0]))
        check(p.returncode == 2 and "two or more runs" in p.stderr, f"compare one run: exit 2 ({p.stderr})")
        p = perflog(d, "compare", str(ids[0]), "999999")
        check(p.returncode == 1 and "999999" in p.stderr, f"compare an unknown run: exit 1 ({p.stderr})")
        p = perflog(d, "compare", *[str(i) for i in range(1, 22)])
        check(p.returncode == 2 and "at most 20" in p.stderr, f"compare 21 runs: exit 2 ({p.stderr})")
        p = perflog(d, "compare", str(ids[0]), str(ids[0]))
        check(p.returncode == 2 and "twice" in p.stderr, f"compare a run twice: exit 2 ({p.stderr})")
    finally:
        d.stop()
        subprocess.run(["rm", "-rf", work])
    d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
