#!/usr/bin/env python3
"""The fleet path: a real Prometheus server scrapes two perflogd instances every second while dd writes
to the root block device with O_DIRECT for ~70 s.

- Prometheus' query API sees both instances (two distinct `instance` labels, up == 1) and
  perflog_disk_written_bytes_total of both;
- for each instance, rate(perflog_disk_written_bytes_total{device=<disk>}[1m]) at a whole second T
  agrees within 2% with perflog's own average of \\PhysicalDisk(<disk>)\\Disk Write Bytes/sec over the
  ticks in (T-60 s, T] from /api/v1/data, and that minute carried real traffic (> 10 MB/s).
"""
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, free_port, http_request, require_root, root_block_device, sleep_until_wall  # noqa: E402

PROMETHEUS = "/usr/bin/prometheus"
WINDOW = 60
LEAD = 6  # seconds of I/O before the compared minute starts
TOL = 0.02
MIN_RATE = 10e6
Q = urllib.parse.quote


def prom_query(base, expr, t=None):
    qs = "query=" + Q(expr) + (f"&time={t}" if t is not None else "")
    status, _, body = http_request(f"{base}/api/v1/query?{qs}", timeout=10)
    r = json.loads(body)
    if status != 200 or r.get("status") != "success":
        raise RuntimeError(f"query {expr!r}: {status} {body[:300]!r}")
    return r["data"]["result"]


def dd_loop(path, stop, stats):
    """O_DIRECT overwrites of the first 32 MiB of the file, ten or so a second, until stop is set:
    steady traffic (a few hundred MB/s) without hammering the CI machine's disk at full speed."""
    while not stop.is_set():
        p = subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", "count=32", "oflag=direct",
                            "conv=notrunc", "status=none"], capture_output=True)
        stats["runs"] += 1
        if p.returncode != 0:
            stats["errors"].append(p.stderr.decode(errors="replace")[:200])
            stop.wait(0.5)
        stop.wait(0.05)


def main():
    require_root()
    if not os.access(PROMETHEUS, os.X_OK):
        check(False, f"{PROMETHEUS} is installed (apt-get install -y prometheus)")
        finish()
    t_start = time.time()
    work = tempfile.mkdtemp(prefix="perflog-fleet-", dir="/var/tmp")
    disk = root_block_device(work)
    print(f"workdir {work} on block device {disk}", flush=True)
    daemons = [Daemon(workdir=os.path.join(work, n)) for n in ("a", "b")]
    for dm in daemons:
        os.makedirs(dm.dir, exist_ok=True)
    prom = None
    stop = threading.Event()
    stats = {"runs": 0, "errors": []}
    dd = None
    try:
        for dm in daemons:
            dm.start(wait_ticks=1)
        targets = [f"127.0.0.1:{dm.port}" for dm in daemons]
        ppath = os.path.join(work, "prometheus.yml")
        with open(ppath, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: perflog\n    static_configs:\n"
                    f"      - targets: [{', '.join(repr(x) for x in targets)}]\n")
        pport = free_port()
        base = f"http://127.0.0.1:{pport}"
        plog = open(os.path.join(work, "prometheus.log"), "wb")
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={ppath}", f"--storage.tsdb.path={work}/tsdb",
                                 f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"],
                                stdout=plog, stderr=plog)
        t0 = time.time()
        ready = False
        while time.time() - t0 < 30 and prom.poll() is None:
            try:
                if http_request(f"{base}/-/ready", timeout=2)[0] == 200:
                    ready = True
                    break
            except OSError:
                pass
            time.sleep(0.2)
        check(ready, f"prometheus ready on {base} in {time.time() - t0:.1f} s")
        if not ready:
            return

        datafile = os.path.join(work, "direct.bin")
        dd = threading.Thread(target=dd_loop, args=(datafile, stop, stats))
        t_io0 = time.time()
        dd.start()
        T = math.ceil(t_io0) + LEAD + WINDOW
        print(f"I/O from {t_io0:.1f}; compared window ({T - WINDOW}, {T}]", flush=True)
        sleep_until_wall(T + 2)
        stop.set()
        dd.join()
        t_io1 = time.time()
        print(f"dd: {stats['runs']} passes of 32 MiB in {t_io1 - t_io0:.1f} s, errors {stats['errors'][:2]}", flush=True)
        check(not stats["errors"], "dd ran without errors")
        sleep_until_wall(T + 4)  # the tick at T is committed, and Prometheus scraped past T

        up = prom_query(base, 'up{job="perflog"}')
        inst = sorted(s["metric"]["instance"] for s in up)
        check(inst == sorted(targets) and all(s["value"][1] == "1" for s in up),
              f"up{{job=\"perflog\"}}: both instances, up == 1 ({[(s['metric']['instance'], s['value'][1]) for s in up]})")
        w = prom_query(base, f'perflog_disk_written_bytes_total{{device="{disk}"}}')
        check(sorted({s["metric"]["instance"] for s in w}) == sorted(targets),
              f"perflog_disk_written_bytes_total{{device=\"{disk}\"}} has series for both instances "
              f"({[s['metric']['instance'] for s in w]})")

        for dm, target in zip(daemons, targets):
            sel = f'perflog_disk_written_bytes_total{{device="{disk}",instance="{target}"}}'
            r = prom_query(base, f"rate({sel}[{WINDOW}s])", T)
            inc = prom_query(base, f"increase({sel}[{WINDOW}s])", T)
            raw = prom_query(base, f"{sel}[{WINDOW}s]", T)
            prate = float(r[0]["value"][1]) if r else float("nan")
            pinc = float(inc[0]["value"][1]) if inc else float("nan")
            samples = raw[0]["values"] if raw else []
            phase = sorted({round(float(ts) % 1, 3) for ts, _ in samples})
            path = f"\\PhysicalDisk({disk})\\Disk Write Bytes/sec"
            status, data = dm.get_json(f"/api/v1/data?counter={Q(path)}&from={T - WINDOW}&to={T}")
            pts = [(t, v) for t, v in zip(data["timestamps"], data["series"][0]["values"])
                   if (T - WINDOW) * 1000 < t <= T * 1000] if status == 200 and data["series"] else []
            vals = [v for _, v in pts if v is not None]
            own = sum(vals) / len(vals) if vals else float("nan")
            print(f"{target}: prometheus rate {prate / 1e6:.3f} MB/s, increase {pinc / 1e6:.1f} MB from "
                  f"{len(samples)} scrapes (scrape phase {phase[:3]} s after the second); perflog average "
                  f"{own / 1e6:.3f} MB/s = {sum(vals) / 1e6:.1f} MB over {len(vals)} ticks", flush=True)
            # A tick that comes late under load (the ASan pass runs two daemons, Prometheus and dd on
            # two cores) is stored as one longer interval, so a minute may hold 59 values.
            check(len(vals) >= WINDOW - 2, f"{target}: perflog has a value for (nearly) each of the {WINDOW} "
                                           f"ticks ({len(vals)})")
            check(len(samples) >= WINDOW - 3, f"{target}: Prometheus scraped about every second ({len(samples)} samples)")
            check(own > MIN_RATE, f"{target}: the minute carried real traffic ({own / 1e6:.1f} MB/s > {MIN_RATE / 1e6:.0f})")
            rel = (prate - own) / own if own else float("inf")
            check(abs(rel) <= TOL, f"{target}: rate() {prate / 1e6:.3f} MB/s agrees with perflog's average "
                                   f"{own / 1e6:.3f} MB/s ({rel * 100:+.2f}%, tolerance {TOL * 100:.0f}%)")
    finally:
        stop.set()
        if dd:
            dd.join()
        if prom and prom.poll() is None:
            prom.send_signal(signal.SIGTERM)
            try:
                prom.wait(15)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        for dm in daemons:
            rc = dm.stop()
            check(rc == 0, f"perflogd {dm.port} exits 0 on SIGTERM (got {rc})")
        shutil.rmtree(work, ignore_errors=True)
    print(f"total {time.time() - t_start:.1f} s", flush=True)
    finish()


if __name__ == "__main__":
    main()
