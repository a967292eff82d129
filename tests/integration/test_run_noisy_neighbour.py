#!/usr/bin/env python3
"""The run's own I/O against everyone else's: a noisy neighbour. During `perflog run -- sleep 3`
a process outside the run's tree writes 128 MiB (buffered, then sync) and then dirties 64 MiB
more, which it leaves dirty (the kernel writes it back some 30 s later). The report must say:

- own.write_bytes < 1 MiB (sleep wrote nothing);
- others.write_bytes >= 120 MiB (the synced 128 MiB reached the device during the run);
- others.top[0] is the neighbour, by pid;
- the settle wait did not wait for the neighbour's data: when the run settled, the neighbour's
  64 MiB was still dirty, by the test's own /proc/meminfo readings (every 100 ms).

On the code before the own-data rule the run waited for the system's dirty level to fall back,
i.e. for the neighbour's pages, and the last check failed. Needs root (/proc/PID/io of another
process, a real disk under /var/tmp)."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
MiB = 1 << 20

NEIGHBOUR = r"""
import os, sys, time
path, done = sys.argv[1], sys.argv[2]
block = b"n" * (1 << 20)
with open(path + ".synced", "wb") as f:
    for _ in range(128):
        f.write(block)
os.sync()
with open(path + ".dirty", "wb") as f:
    for _ in range(64):
        f.write(block)
with open(done, "w") as f:
    f.write(str(int(time.time() * 1000)))
time.sleep(600)
"""


def dirty_kib():
    """Dirty + Writeback of /proc/meminfo, in KiB."""
    v = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, rest = line.split(":", 1)
            if k in ("Dirty", "Writeback"):
                v[k] = int(rest.split()[0])
    return v["Dirty"] + v["Writeback"]


class MeminfoWatch(threading.Thread):
    """The ground truth: (wall ms, Dirty + Writeback KiB) every 100 ms."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples, self.stop = [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((int(time.time() * 1000), dirty_kib()))
            time.sleep(0.1)

    def at(self, t_ms):
        before = [s for s in self.samples if s[0] <= t_ms]
        return before[-1] if before else None


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="perflog-it-noisy-", dir="/var/tmp")
    d = Daemon().start(wait_ticks=2)
    watch = MeminfoWatch()
    neighbour = None
    try:
        subprocess.run(["sync"], check=True)
        watch.start()
        time.sleep(0.3)
        level_kib = dirty_kib()
        env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
        env["PERFLOG_SERVER"] = d.url
        run = subprocess.Popen([PERFLOG, "run", "--quiet", "--json", "--label", "noisy",
                                "--settle-timeout", "120", "--", "sleep", "3"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(0.3)
        done = os.path.join(work, "done")
        neighbour = subprocess.Popen([sys.executable, "-c", NEIGHBOUR,
                                      os.path.join(work, "nb"), done])
        out, err = run.communicate(timeout=300)
        watch.stop.set()
        try:
            rep = json.loads(out)
        except ValueError:
            rep = {}
        check(run.returncode == 0 and rep, f"perflog run -- sleep 3 exits 0 with a JSON report "
              f"({run.returncode}, {err!r})")
        end_ms = (((rep.get("edges") or {}).get("end")) or {}).get("t_ms", 0)
        done_ms = int(open(done).read()) if os.path.exists(done) else None
        check(done_ms is not None and done_ms < end_ms,
              f"the neighbour had written, synced and dirtied its data before the run ended "
              f"({done_ms} < {end_ms})")
        own, others = rep.get("own") or {}, rep.get("others") or {}
        top = others.get("top") or []
        print(f"# own {own}, others {others.get('write_bytes')} B, test pid {os.getpid()}, "
              f"top {top[:3]}")
        check(isinstance(own.get("write_bytes"), int) and own["write_bytes"] < MiB,
              f"own.write_bytes < 1 MiB: {own.get('write_bytes')}")
        check(isinstance(others.get("write_bytes"), int) and others["write_bytes"] >= 120 * MiB,
              f"others.write_bytes >= 120 MiB: {others.get('write_bytes')}")
        check(top and top[0].get("kind") == "process" and
              top[0].get("name", "").endswith(f":{neighbour.pid}"),
              f"others.top[0] is the neighbour (pid {neighbour.pid}): {top[:1]}")
        check(top and top[0].get("write_bytes", 0) >= 190 * MiB,
              f"... with the 192 MiB it wrote: {top[0].get('write_bytes') if top else None}")
        settle = (rep.get("edges") or {}).get("settle") or {}
        settled_ms = settle.get("t_ms")
        truth = watch.at(settled_ms) if settled_ms else None
        check(settle.get("ended_by") == "own_written",
              f"the wait ended on the run's own data: {settle.get('ended_by')}")
        check(truth is not None and truth[1] - level_kib >= 48 * 1024,
              f"when the run settled ({settled_ms}) the neighbour's data was still dirty: "
              f"Dirty + Writeback {truth[1] if truth else None} KiB against {level_kib} KiB at "
              f"the start (ground truth, /proc/meminfo)")
    finally:
        watch.stop.set()
        if neighbour:
            neighbour.kill()
            neighbour.wait()
        d.stop()
        subprocess.run(["rm", "-rf", work])
    d.check_sanitizers()
    finish()


if __name__ == "__main__":
    main()
