#!/usr/bin/env python3
"""Acceptance scenario 6: the throughput dd and fio print, run live under
`perflog run`, is parsed from their real output and shown next to the measured one, in the JSON
report (`tool`) and in the text of `perflog run` and `perflog report`.

Both write 256 MiB with O_DIRECT onto the disk under /var/tmp, so the device's writes during the
run are the tool's: the claim is checked against what the tool printed (parsed here independently
from the captured output), against the run's measured rate (the tool times itself inside the run,
so its rate is at least the run's) and against the device.
Needs root, dd (coreutils) and fio."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root, root_block_device  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
SIZE = 256 << 20
SI = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
IEC = {"Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4}


def perflog(d, *args, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    p = subprocess.run([PERFLOG, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def dd_printed(err):
    """dd's own last line, e.g. '268435456 bytes (268 MB, 256 MiB) copied, 0.41 s, 655 MB/s':
    (bytes, bytes/s), read here with a regular expression independent of daemon/runs/claims.c."""
    m = None
    for m in re.finditer(r"^(\d+) bytes .* copied, ([\d.,]+) s, ([\d.,]+) ([kKMGT]?i?)B/s$",
                         err, re.M):
        pass
    if not m:
        return None, None
    unit = m.group(4)
    scale = IEC.get(unit) or SI.get(unit)
    return int(m.group(1)), float(m.group(3).replace(",", ".")) * scale


def run_tool(d, label, cmd):
    """`perflog run` (text) around cmd, then `perflog report ID --json`: (stdout, stderr, report,
    the 'throughput' lines of both texts)."""
    rc, out, err = perflog(d, "run", "--quiet", "--label", label, "--bytes", str(SIZE),
                           "--settle-timeout", "30", "--", *cmd)
    check(rc == 0, f"{label}: perflog run exits 0 ({rc}, {err[-300:]!r})")
    m = None
    for m in re.finditer(r"^run (\d+) \"" + label + "\"", out, re.M):
        pass
    rid = m.group(1) if m else "?"
    rc, js, e2 = perflog(d, "report", "--json", rid)
    try:
        rep = json.loads(js)
    except ValueError:
        rep = {}
    check(rc == 0 and rep.get("label") == label, f"{label}: perflog report {rid} --json ({e2!r})")
    rc, text, e3 = perflog(d, "report", rid)
    lines = [l.strip() for t in (out, text) for l in t.splitlines()
             if l.strip().startswith("throughput")]
    return out, err, rep, lines


def check_claim(label, name, rep, printed_bytes, printed_rate, lines, disk):
    tool = rep.get("tool") or {}
    # "returned": the payload (--bytes) over the time until the command returned
    claimed = tool.get("claimed_bytes_per_s")
    measured = (rep.get("throughput") or {}).get("returned")
    check(tool.get("name") == name, f"{label}: the claim is {name}'s: {tool}")
    check(printed_rate and isinstance(claimed, (int, float))
          and abs(claimed - printed_rate) <= 0.001 * printed_rate,
          f"{label}: claimed {claimed} B/s is what {name} printed ({printed_rate} B/s)")
    check(tool.get("claimed_bytes") == printed_bytes == SIZE,
          f"{label}: claimed bytes {tool.get('claimed_bytes')} = printed {printed_bytes} = {SIZE}")
    # The tool times itself inside the run, which also holds its start-up (fio's is ~0.3 s) and
    # perflog's requests: bytes over the tool's own seconds are at least the measured rate, and
    # the printed rate is that, rounded (dd prints 2 or 3 digits: within 5%). A run 10 times
    # longer than the tool's own time would mean the run window is wrong.
    secs = tool.get("claimed_seconds")
    exact = SIZE / secs if isinstance(secs, (int, float)) and secs > 0 else None
    check(exact is not None and isinstance(claimed, (int, float))
          and abs(claimed - exact) <= 0.05 * exact,
          f"{label}: claimed {claimed} B/s is {SIZE} B / the tool's {secs} s ({exact}), rounded")
    # (the run's times are whole milliseconds: its span may read up to 1 ms short)
    check(isinstance(measured, (int, float)) and exact is not None
          and measured <= exact * (1 + 0.001 / secs) and exact <= 10 * measured,
          f"{label}: claimed {claimed / 2**20 if claimed else 0:.1f} MiB/s ({name}'s "
          f"{exact / 2**20 if exact else 0:.1f} MiB/s) vs measured "
          f"{measured / 2**20 if measured else 0:.1f} MiB/s over the run's "
          f"{rep.get('duration_s')} s")
    dev = next((x for x in rep.get("disks") or [] if x.get("instance") == disk), {})
    w = dev.get("write_bytes")
    check(isinstance(w, int) and 0.95 * SIZE <= w <= 1.25 * SIZE,
          f"{label}: {disk} wrote {w} B during the run (O_DIRECT: the {SIZE} B, +25% at most for "
          "the filesystem and other writers)")
    shown = [l for l in lines if f"({name})" in l and "claimed -" not in l]
    check(len(shown) == 2, f"{label}: perflog run and perflog report print the claim next to the "
                           f"measured rate: {lines}")
    return claimed, measured


def main():
    require_root()
    if not shutil.which("fio"):
        check(False, "fio is not installed (apt-get install fio; packaging/build-deps.txt)")
        finish()
    work = tempfile.mkdtemp(prefix="perflog-it-claims-", dir="/var/tmp")
    disk = root_block_device(work)
    d = Daemon().start(wait_ticks=2)
    started = time.time()
    try:
        target = os.path.join(work, "dd.bin")
        out, err, rep, lines = run_tool(d, "dd", [
            "dd", "if=/dev/zero", f"of={target}", "bs=1M", f"count={SIZE >> 20}", "oflag=direct"])
        nbytes, rate = dd_printed(err)
        check(rate is not None, f"dd printed its summary through perflog run: {err[-200:]!r}")
        c, m = check_claim("dd", "dd", rep, nbytes, rate, lines, disk)
        print(f"dd: claimed {c} B/s, measured {m} B/s; printed {err.strip().splitlines()[-1]!r}",
              flush=True)

        target = os.path.join(work, "fio.bin")
        out, err, rep, lines = run_tool(d, "fio", [
            "fio", "--name=claims", f"--filename={target}", "--rw=write", "--bs=1M",
            f"--size={SIZE}", "--direct=1", "--ioengine=psync", "--output-format=json"])
        try:
            fio = json.loads(out[:out.rfind("\nrun ")])
            job = fio["jobs"][0]["write"]
            nbytes, rate = job["io_bytes"], float(job["bw_bytes"])
        except (ValueError, KeyError, IndexError) as e:
            check(False, f"fio printed its JSON through perflog run ({e}): {out[:200]!r}")
            nbytes = rate = None
        c, m = check_claim("fio", "fio", rep, nbytes, rate, lines, disk)
        print(f"fio: claimed {c} B/s, measured {m} B/s; printed bw_bytes {rate}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        code = d.stop()
        check(code == 0, f"perflogd exits 0 on SIGTERM (got {code})")
        print(f"wall time {time.time() - started:.1f} s", flush=True)
    finish()


if __name__ == "__main__":
    main()
