#!/usr/bin/env python3
"""What a service manager and an operator rely on:
  - `perflogd --version` prints the project's version (the one in CMakeLists.txt);
  - `perflogd --check-config FILE` exits 0 for a good file and 1, naming FILE:LINE:COL and the key,
    for a bad one, without starting anything;
  - SIGHUP re-reads the auth token: the old token stops working and the new one works, with no
    restart (the sampling goes on: no tick missed), and keys that need a restart say so in the log.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import PERFLOGD, SOURCE_DIR, Daemon, check, finish  # noqa: E402


def run(args):
    return subprocess.run([PERFLOGD] + args, capture_output=True, text=True, timeout=20)


def test_version_and_check():
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        version = re.search(r"project\(perflog VERSION ([0-9.]+)", f.read()).group(1)
    r = run(["--version"])
    check(r.returncode == 0 and r.stdout.strip() == f"perflogd {version}",
          f"--version prints 'perflogd {version}' ({r.stdout.strip()!r})")
    d = tempfile.mkdtemp(prefix="perflog-svc-")
    good, bad = os.path.join(d, "good.json"), os.path.join(d, "bad.json")
    with open(good, "w") as f:
        json.dump({"interval_ms": 500, "auth_token": "x", "max_db_bytes": 0}, f)
    with open(bad, "w") as f:
        f.write('{\n  "interval_ms": 500,\n  "retention": {"raw_days": "seven"}\n}\n')
    r = run(["--check-config", good])
    check(r.returncode == 0 and "ok" in r.stdout, f"--check-config good file: exit 0 ({r.returncode}, {r.stdout!r})")
    r = run(["--check-config", bad])
    check(r.returncode == 1 and f"{bad}:3:" in r.stderr and "retention.raw_days" in r.stderr,
          f"--check-config bad file: exit 1 with FILE:LINE and the key ({r.returncode}, {r.stderr.strip()!r})")
    r = run(["--check-config", os.path.join(d, "missing.json")])
    check(r.returncode == 1 and "missing.json" in r.stderr, f"--check-config missing file: exit 1 ({r.stderr.strip()!r})")
    r = run(["--check-config"])
    check(r.returncode == 2, f"--check-config without FILE: usage error, exit 2 ({r.returncode})")
    check(not os.path.exists("perflog.db") or os.path.getmtime("perflog.db") < time.time() - 60,
          "--check-config opened no database")


def test_reload_token():
    d = Daemon(config={"auth_token": "old-token", "auth_read": True}).start(wait_ticks=2)
    try:
        old = {"Authorization": "Bearer old-token"}
        new = {"Authorization": "Bearer new-token"}
        check(d.http("/api/v1/health", headers=old)[0] == 200, "the old token works before the reload")
        with open(d.config_path, "w") as f:
            json.dump({"auth_token": "new-token", "auth_read": True, "http_threads": 3,
                       "listen": f"127.0.0.1:{d.port}"}, f)
        d.signal(1)  # SIGHUP
        deadline = time.time() + 5
        while time.time() < deadline and "configuration reloaded" not in d.log():
            time.sleep(0.1)
        check(d.http("/api/v1/health", headers=old)[0] == 401, "after SIGHUP the old token gets 401")
        st, h = d.get_json("/api/v1/health", headers=new)
        check(st == 200, f"after SIGHUP the new token gets 200 ({st})")
        check(h["missed"] == 0, f"no tick missed across the reload ({h['missed']})")
        log = d.log()
        check("auth token settings changed" in log, "the log says the token settings changed")
        check("take effect only after a restart" in log and "HTTP server settings" in log,
              "a changed http_threads is logged as needing a restart")
        check("old-token" not in log and "new-token" not in log, "the log never prints a token")
    finally:
        check(d.stop() == 0, "perflogd exits 0")


def main():
    test_version_and_check()
    test_reload_token()
    finish()


if __name__ == "__main__":
    main()
