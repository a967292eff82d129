#!/usr/bin/env python3
"""The web dashboard end to end, in Debian's chromium driven by playwright-core.

Two daemons: one on a database seeded with 24 h of 1 s ticks (bench/bench_seed), for the live view,
the 24 h range, a run made while dd writes a file (its shading, its report against
/api/v1/runs/{id}, its CSV and JSON downloads), the dark theme and the page without uPlot; and one
with auth_token and auth_read, where the page must ask for the token and then work. The browser part
is tests/integration/dashboard_e2e.cjs; this script starts the daemons, runs it and counts its checks.
Screenshots and downloads go to BUILD/test-output/dashboard/ (CI keeps them as artefacts).

Needs /usr/bin/chromium (apt-get install chromium), node, and web/dashboard/node_modules
(`npm ci --prefix web/dashboard`), and a perflogd built after that npm ci (uPlot embedded). Any of
them missing is a failure that says so, never a skip.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import json

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import SOURCE_DIR, Daemon, check, finish  # noqa: E402

CHROMIUM = os.environ.get("PERFLOG_CHROMIUM", "/usr/bin/chromium")
DASH_DIR = os.path.join(SOURCE_DIR, "web", "dashboard")
PLAYWRIGHT = os.path.join(DASH_DIR, "node_modules", "playwright-core")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboard_e2e.cjs")
BUILD_DIR = os.environ.get("PERFLOG_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
OUT_DIR = os.path.join(BUILD_DIR, "test-output", "dashboard")
TOKEN = "e2e-dashboard-token"


def prerequisites():
    ok = check(os.access(CHROMIUM, os.X_OK), f"chromium is installed at {CHROMIUM} (apt-get install chromium)")
    node = shutil.which("node")
    ok &= check(node is not None, "node is installed (apt-get install nodejs; npm comes with it)")
    ok &= check(os.path.isdir(PLAYWRIGHT),
                f"playwright-core is in {PLAYWRIGHT} (run: npm ci --prefix web/dashboard)")
    seed = os.path.join(BUILD_DIR, "bench", "bench_seed")
    ok &= check(os.access(seed, os.X_OK), f"bench_seed is built ({seed})")
    return ok, node, seed


def run_browser(node, mode, daemon, workdir, token=None):
    """Run dashboard_e2e.cjs and turn its CHECK lines into checks; returns its FIGURE lines."""
    cfg = {"mode": mode, "url": daemon.url, "outdir": OUT_DIR, "chromium": CHROMIUM,
           "playwright": PLAYWRIGHT, "workdir": workdir, "token": token}
    t0 = time.time()
    try:
        p = subprocess.run([node, SCRIPT, json.dumps(cfg)], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        check(False, f"{mode}: the browser test finished within 300 s")
        return {}
    figures = {}
    checks = 0
    for line in p.stdout.splitlines():
        if line.startswith("CHECK "):
            status, _, what = line[6:].partition(" ")
            check(status == "ok", f"{mode}: {what}")
            checks += 1
        elif line.startswith("FIGURE "):
            _, name, value = line.split(" ", 2)
            figures[name] = value
        else:
            print(f"  {line}")
    if p.stderr.strip():
        print(p.stderr[-3000:])
    check(p.returncode == 0 and checks > 0,
          f"{mode}: dashboard_e2e.cjs ran ({checks} checks, exit {p.returncode}, {time.time() - t0:.1f} s)")
    return figures


def main():
    t_start = time.time()
    ok, node, seed = prerequisites()
    if not ok:
        finish()
    os.makedirs(OUT_DIR, exist_ok=True)
    # dd writes its file on a real disk, not on a tmpfs /tmp, so the run has dirty pages to settle
    workdir = tempfile.mkdtemp(prefix="perflog-dash-", dir="/var/tmp")
    db = os.path.join(workdir, "perflog.db")
    t0 = time.time()
    r = subprocess.run([seed, db, "24"], capture_output=True, text=True)
    if not check(r.returncode == 0, f"bench_seed wrote 24 h of ticks ({r.stdout.strip() or r.stderr.strip()})"):
        finish()
    seeded = 86400
    print(f"seeded in {time.time() - t0:.1f} s")

    main_d = Daemon(db=db, workdir=workdir)
    auth_d = Daemon(config={"auth_token": TOKEN, "auth_read": True})
    figures = {}
    try:
        main_d.start(wait_ticks=0)
        auth_d.start(wait_ticks=0)
        main_d.wait_ticks(seeded + 2, timeout=30)
        auth_d.wait_ticks(2)
        st, hdr, body = main_d.http("/ui/dashboard.js")
        if not check(st == 200 and b"https://github.com/leeoniya/uPlot" in body,
                     f"uPlot is embedded in this perflogd (GET /ui/dashboard.js: {st}, {len(body)} bytes; "
                     "run `npm ci --prefix web/dashboard`, then build again)"):
            finish()
        figures = run_browser(node, "main", main_d, workdir)
        run_browser(node, "auth", auth_d, workdir, token=TOKEN)
    finally:
        rc1 = main_d.stop()
        rc2 = auth_d.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(auth_d.dir, ignore_errors=True)
    check(rc1 == 0 and rc2 == 0, f"both daemons exit 0 on SIGTERM ({rc1}, {rc2})")
    fresh = [figures.get(f"first_paint_ms_new_context_{i}", "?") for i in (1, 2, 3)]
    fcp = [figures.get(f"first_contentful_paint_ms_new_context_{i}", "?") for i in (1, 2, 3)]
    print(f"first paint of the live view: median {figures.get('first_paint_ms', '?')} ms of {', '.join(fresh)} ms "
          f"(new browser contexts; first contentful paint {', '.join(fcp)} ms); in the just-started browser "
          f"{figures.get('first_paint_ms_cold_browser', '?')} ms")
    print(f"24 h range: {figures.get('day_render_ms', '?')} ms for {figures.get('day_series', '?')} series of "
          f"{figures.get('day_points_per_series', '?')} points")
    print(f"screenshots: {OUT_DIR}; wall time {time.time() - t_start:.1f} s")
    finish()


if __name__ == "__main__":
    main()
