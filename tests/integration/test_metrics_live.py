#!/usr/bin/env python3
"""/metrics of the live perflogd (docs/design.md §5): passes `promtool check metrics` (exit 0, no lint
problem printed), carries the node_exporter-compatible names for the real devices, and its `_total`
counters are the raw /proc values (a disk's written bytes = /proc/diskstats sectors * 512, read just
before and just after the scrape) and monotonic across two scrapes 2 s apart.
"""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, root_block_device  # noqa: E402

PROMTOOL = "/usr/bin/promtool"
SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$")


def parse(text):
    """{'name{labels}': float} of every sample line."""
    out = {}
    for ln in text.splitlines():
        if not ln or ln.startswith("#"):
            continue
        m = SAMPLE_RE.match(ln)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def diskstats(dev):
    """(read bytes, written bytes) of dev from /proc/diskstats."""
    with open("/proc/diskstats") as f:
        for ln in f:
            p = ln.split()
            if p[2] == dev:
                return int(p[5]) * 512, int(p[9]) * 512
    raise KeyError(dev)


def lo_rx():
    with open("/proc/net/dev") as f:
        for ln in f:
            if ln.strip().startswith("lo:"):
                return int(ln.split(":", 1)[1].split()[0])
    raise KeyError("lo")


def main():
    promtool = PROMTOOL if os.access(PROMTOOL, os.X_OK) else shutil.which("promtool")
    if not promtool:
        check(False, "promtool is installed (apt-get install -y prometheus)")
        finish()
    disk = root_block_device("/var/tmp")
    print(f"root block device: {disk}", flush=True)
    d = Daemon()
    try:
        d.start(wait_ticks=3)
        # The counter's value at scrape time comes from the newest tick (at most ~1 s old): /proc read
        # 2 s before the scrape is <= it, /proc read right after the scrape is >= it.
        before = diskstats(disk)
        lo_before = lo_rx()
        time.sleep(2)
        status, hdr, body = d.http("/metrics")
        after = diskstats(disk)
        lo_after = lo_rx()
        text = body.decode()
        check(status == 200, f"/metrics: 200 ({status}, {len(body)} bytes)")

        t0 = time.time()
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
        out = (p.stdout + p.stderr).decode(errors="replace").strip()
        print(f"promtool check metrics: exit {p.returncode} in {time.time() - t0:.2f} s; output: {out!r}", flush=True)
        check(p.returncode == 0, f"promtool check metrics exits 0 (got {p.returncode})")
        check(out == "", f"promtool prints no lint problem ({out[:500]!r})")

        s1 = parse(text)
        names = {
            f'perflog_disk_read_bytes_total{{device="{disk}"}}',
            f'perflog_disk_written_bytes_total{{device="{disk}"}}',
            f'perflog_disk_reads_completed_total{{device="{disk}"}}',
            'perflog_network_receive_bytes_total{device="lo"}',
            'perflog_network_transmit_bytes_total{device="lo"}',
            'perflog_cpu_seconds_total{cpu="0",mode="idle"}',
            'perflog_cpu_seconds_total{cpu="0",mode="user"}',
            "perflog_memory_available_bytes",
        }
        for n in sorted(names):
            check(n in s1, f"/metrics has {n} ({s1.get(n)})")
        for t in ("perflog_disk_written_bytes_total counter", "perflog_cpu_seconds_total counter",
                  "perflog_network_receive_bytes_total counter"):
            check(f"# TYPE {t}" in text, f"/metrics: # TYPE {t}")

        for i, what in ((0, "read"), (1, "written")):
            key = f'perflog_disk_{what}_bytes_total{{device="{disk}"}}'
            v = s1.get(key)
            check(v is not None and before[i] <= v <= after[i],
                  f"{key} = {v:.0f} lies between /proc/diskstats * 512 2 s before ({before[i]}) and right after "
                  f"the scrape ({after[i]}; {after[i] - (v or 0):.0f} bytes of I/O since the tick)")
            check(v == int(v), f"{key} is an exact integer ({v})")
        v = s1.get('perflog_network_receive_bytes_total{device="lo"}')
        check(v is not None and lo_before <= v <= lo_after,
              f"lo received bytes {v} between /proc/net/dev before ({lo_before}) and after ({lo_after})")

        time.sleep(2)
        status, _, body2 = d.http("/metrics")
        s2 = parse(body2.decode())
        counters = {n for n in re.findall(r"^# TYPE (\S+) counter$", text, re.M)}
        compared, back = 0, []
        for k, v in s1.items():
            if k.split("{", 1)[0] in counters and k in s2:
                compared += 1
                if s2[k] < v:
                    back.append((k, v, s2[k]))
        check(compared > 50 and not back, f"{compared} counter series are monotonic across two scrapes 2 s apart "
                                          f"(went back: {back[:5]})")
        ticks1 = s1.get("perflog_sampler_ticks_total")
        ticks2 = s2.get("perflog_sampler_ticks_total")
        check(ticks1 is not None and ticks2 is not None and 1 <= ticks2 - ticks1 <= 3,
              f"perflog_sampler_ticks_total advanced by ~2 between the scrapes ({ticks1} -> {ticks2})")
    finally:
        rc = d.stop()
    check(rc == 0, f"perflogd exits 0 on SIGTERM (got {rc})")
    finish()


if __name__ == "__main__":
    main()
