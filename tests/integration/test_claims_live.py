#!/usr/bin/env python3
"""The claims of fio (normal text, terse and JSON), rsync (--info=progress2 and its summary) and
pv (its progress line, forced with -f), each run for real under `perflog run` against a real
daemon on a few MiB in a temporary directory: the report's `tool` claim must be what the tool
printed, read here from the captured output with regular expressions of this file's own,
independent of daemon/runs/claims.c. The units are the tools' own: fio's "MiB" and "MB", rsync's
summary in bytes, pv's "MiB" (powers of 1024).
Needs fio, rsync and pv (packaging/build-deps.txt)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
MIB = 1 << 20
PREFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
          "Ki": 1024, "Mi": MIB, "Gi": 1024 * MIB, "Ti": MIB * MIB}


def run(d, label, cmd):
    """`perflog run --label LABEL -- CMD` in the C locale, then its report as JSON: (the tool's
    stdout as perflog passed it through, its stderr, the report's `tool` object)."""
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env.update(PERFLOG_SERVER=d.url, LC_ALL="C")
    p = subprocess.run([PERFLOG, "run", "--quiet", "--label", label, "--settle-timeout", "30",
                        "--", *cmd], capture_output=True, text=True, timeout=300, env=env)
    check(p.returncode == 0, f"{label}: perflog run exits 0 ({p.returncode}, {p.stderr[-300:]!r})")
    ids = re.findall(r"^run (\d+) \"" + re.escape(label) + "\"", p.stdout, re.M)
    rep = subprocess.run([PERFLOG, "report", "--json", ids[-1] if ids else "0"],
                         capture_output=True, text=True, timeout=60, env=env)
    try:
        tool = json.loads(rep.stdout).get("tool") or {}
    except ValueError:
        tool = {}
    return p.stdout, p.stderr, tool


def same(label, tool, name, rate, nbytes, secs=None):
    """The report's claim is the printed one (rates as printed: 1e-6 relative)."""
    got = tool.get("claimed_bytes_per_s")
    check(tool.get("name") == name, f"{label}: the claim is {name}'s ({tool})")
    check(rate is not None and isinstance(got, (int, float)) and abs(got - rate) <= 1e-6 * rate,
          f"{label}: claimed {got} B/s = printed {rate} B/s")
    if nbytes is not None:
        check(tool.get("claimed_bytes") == round(nbytes),
              f"{label}: claimed {tool.get('claimed_bytes')} B = printed {round(nbytes)} B")
    if secs is not None:
        got = tool.get("claimed_seconds")
        check(isinstance(got, (int, float)) and abs(got - secs) <= 1e-6 * secs + 1e-9,
              f"{label}: claimed {got} s = printed {secs} s")


def fio_text(out):
    """The "Run status group" lines: READ/WRITE bw and io, longest run, summed."""
    rate = nbytes = ms = 0.0
    found = False
    for m in re.finditer(r"^ +(READ|WRITE): bw=([\d.]+)([kKMGT]?i?)B/s .*, io=([\d.]+)"
                         r"([kKMGT]?i?)B .*, run=\d+-(\d+)msec$", out, re.M):
        found = True
        rate += float(m.group(2)) * PREFIX[m.group(3)]
        nbytes += float(m.group(4)) * PREFIX[m.group(5)]
        ms = max(ms, float(m.group(6)))
    return (rate, nbytes, ms / 1000) if found else (None, None, None)


def fio_terse(out):
    """Terse version 3 (HOWTO): read KiB and KiB/s in fields 6 and 7, write's 41 fields later."""
    rate = nbytes = 0.0
    found = False
    for line in out.splitlines():
        f = line.split(";")
        if len(f) > 90 and f[0] == "3" and f[1].startswith("fio-"):
            found = True
            rate += (int(f[6]) + int(f[47])) * 1024.0
            nbytes += (int(f[5]) + int(f[46])) * 1024.0
    return (rate, nbytes) if found else (None, None)


def main():
    for tool in ("fio", "rsync", "pv"):
        if not shutil.which(tool):
            check(False, f"{tool} is not installed (apt-get install {tool}; packaging/build-deps.txt)")
    if not all(shutil.which(t) for t in ("fio", "rsync", "pv")):
        finish()
    work = tempfile.mkdtemp(prefix="perflog-it-claims-live-", dir="/var/tmp")
    src = os.path.join(work, "src")
    os.mkdir(src)
    for i in range(4):
        with open(os.path.join(src, f"f{i}"), "wb") as f:
            f.write(os.urandom(2 * MIB))
    d = Daemon().start(wait_ticks=2)
    started = time.time()
    fio = ["fio", "--name=live", f"--filename={work}/fio.bin", "--rw=write", "--bs=1M",
           "--size=8M", "--ioengine=psync", "--end_fsync=1"]
    try:
        out, err, tool = run(d, "fio-text", fio)
        rate, nbytes, secs = fio_text(out)
        check(rate is not None, f"fio printed its group summary: {out[-300:]!r}")
        same("fio-text", tool, "fio", rate, nbytes, secs)

        out, err, tool = run(d, "fio-terse", fio + ["--output-format=terse"])
        rate, nbytes = fio_terse(out)
        check(rate is not None, f"fio printed a terse line: {out[:200]!r}")
        same("fio-terse", tool, "fio", rate, nbytes)

        out, err, tool = run(d, "fio-json", fio + ["--output-format=json"])
        try:
            job = json.loads(out[:out.rfind("\nrun ")])["jobs"][0]["write"]
            rate, nbytes = float(job["bw_bytes"]), job["io_bytes"]
        except (ValueError, KeyError, IndexError) as e:
            check(False, f"fio printed its JSON ({e}): {out[:200]!r}")
            rate = nbytes = None
        same("fio-json", tool, "fio", rate, nbytes)

        # rsync: progress lines, then the summary, which wins; its bytes are the progress'
        out, err, tool = run(d, "rsync", ["rsync", "-a", "-v", "--info=progress2", src + "/",
                                          os.path.join(work, "dst") + "/"])
        summary = re.findall(r"^sent ([\d,]+) bytes  received ([\d,]+) bytes  ([\d,.]+) "
                             r"bytes/sec$", out, re.M)
        progress = re.findall(r"^ *([\d,]+) +100% +[\d.]+[kMG]B/s +\d+:\d\d:\d\d \(xfr#",
                              out.replace("\r", "\n"), re.M)
        check(summary and progress, f"rsync printed progress lines and its summary: {out[-300:]!r}")
        if summary and progress:
            sent, recv, rate = (float(x.replace(",", "")) for x in summary[-1])
            same("rsync", tool, "rsync", rate, float(progress[-1].replace(",", "")),
                 (sent + recv) / rate)
            check(float(progress[-1].replace(",", "")) == 8 * MIB,
                  f"rsync's progress counted the 4 files' {8 * MIB} bytes")

        # pv: stderr is a pipe under perflog run, so -f; the last '\r' update has the average
        # 8 MiB at 4 MiB/s: about 2 s, so pv writes several '\r' updates
        files = " ".join(f"{src}/f{i}" for i in range(4))
        out, err, tool = run(d, "pv", ["sh", "-c", f"pv -f -L 4m {files} > {work}/pv.out"])
        ups = re.findall(r"([\d.]+) ?([KMGT]i)?B \d+:\d\d:\d\d \[ *([\d.]+) ?([KMGT]i)?B/s\]",
                         err.replace("\r", "\n"))
        check(len(ups) >= 2, f"pv printed its '\\r' updates through perflog run: {err[-300:]!r}")
        if ups:
            b, bu, r, ru = ups[-1]
            rate, nbytes = float(r) * PREFIX[ru], float(b) * PREFIX[bu]
            same("pv", tool, "pv", rate, nbytes, nbytes / rate)
            check(nbytes == 8 * MIB, f"pv's last update counted the 4 files' {8 * MIB} bytes")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        check(d.stop() == 0, f"perflogd exits 0 on SIGTERM, after {time.time() - started:.1f} s")
    finish()


if __name__ == "__main__":
    main()
