#!/usr/bin/env python3
"""The dashboard's comparison of runs, in Debian's chromium driven by playwright-core
(tests/integration/dashboard_e2e.cjs, mode "compare"): two real runs (an O_DIRECT dd and a
buffered one synced before it returns) made with perflog run; the page then ticks both in the run
list and compares them: both runs on the disk chart (and the network, dirty/writeback and CPU
ones), x in seconds from each run's start, from 0; the table beside it shows the numbers of
GET /api/v1/runs/compare. /#run=N and /#compare=A,B open the page in that state, and back and
forward walk the views. Measures nothing: no timing is checked.

Needs what test_dashboard.py needs (chromium, node, web/dashboard/node_modules, a perflogd with uPlot
embedded); any of them missing is a failure that says so, never a skip."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402
from test_dashboard import OUT_DIR, prerequisites, run_browser  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")


def main():
    ok, node, _ = prerequisites()
    if not ok:
        finish()
    os.makedirs(OUT_DIR, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="perflog-dash-cmp-", dir="/var/tmp")
    d = Daemon()
    try:
        d.start(wait_ticks=2)
        st, _, body = d.http("/ui/dashboard.js")
        if not check(st == 200 and b"https://github.com/leeoniya/uPlot" in body,
                     "uPlot is embedded in this perflogd (run `npm ci --prefix web/dashboard`, then build again)"):
            finish()
        env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
        env["PERFLOG_SERVER"] = d.url
        for label, flag in (("direct", "oflag=direct"), ("buffered", "conv=fsync")):
            out = os.path.join(workdir, label + ".bin")
            # a second of sleep first: each run spans a few ticks to draw
            p = subprocess.run([PERFLOG, "run", "--quiet", "--json", "--label", label, "--", "sh", "-c",
                                f"sleep 1; dd if=/dev/zero of={out} bs=1M count=32 {flag}"],
                               capture_output=True, text=True, timeout=300, env=env)
            check(p.returncode == 0, f"perflog run {label} exits 0 ({p.returncode}: {p.stderr[-300:]})")
        run_browser(node, "compare", d, workdir)
    finally:
        rc = d.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    check(rc == 0, f"the daemon exits 0 on SIGTERM ({rc})")
    d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
