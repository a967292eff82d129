#!/usr/bin/env python3
"""The wire verdict on a loopback transfer shaped with tc to 100 Mbit/s inside a network
namespace of the test's own: the loopback has no link speed, so its ceiling is the peak second
of a calibration run (`perflog run --label calibration -- TRANSFER`, docs/report.md). Without a
calibration the wire is not measured and is not the verdict; after one, a second transfer's
verdict is the wire, `lo`, at about 100% of the shaped rate. The test's own reading of
/sys/class/net/lo/statistics inside the namespace checks that the transfer ran at the shaped
rate. Only the limit is asserted, not timings. Needs root (ip netns, tc)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
RATE_BITS = 100_000_000
SECONDS = 10

# A receiver and a sender on the namespace's loopback, for SECONDS; prints the bytes received.
TRANSFER = f"""
import socket, threading, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
got = [0]
def rx():
    c, _ = srv.accept()
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        got[0] += len(b)
t = threading.Thread(target=rx); t.start()
s = socket.create_connection(srv.getsockname())
buf = b"x" * (1 << 16)
end = time.monotonic() + {SECONDS}
while time.monotonic() < end:
    s.sendall(buf)
s.close(); t.join()
print(got[0])
"""


def ns_exec(ns, *cmd, **kw):
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True,
                          **kw)


def lo_tx_bytes(ns):
    return int(ns_exec(ns, "cat", "/sys/class/net/lo/statistics/tx_bytes").stdout)


def run(ns, d, label):
    env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
    env["PERFLOG_SERVER"] = d.url
    b0 = lo_tx_bytes(ns)
    p = ns_exec(ns, PERFLOG, "run", "--json", "--label", label, "--", sys.executable, "-c",
                TRANSFER, env=env, timeout=300)
    b1 = lo_tx_bytes(ns)
    try:
        rep = json.loads(p.stdout[p.stdout.index("{"):])
    except ValueError:
        rep = {}
    check(p.returncode == 0 and rep, f"{label}: perflog run exits 0 with a report "
          f"({p.returncode}, {p.stderr[-300:]!r})")
    rate = (b1 - b0) * 8 / max(rep.get("duration_s") or 1, 1e-9)
    v = rep.get("verdict") or {}
    print(f"# {label}: lo carried {rate / 1e6:.1f} Mbit/s by /sys; verdict {v.get('limit')} "
          f"{v.get('instance')} u={v.get('utilisation')} ({v.get('rule')}) top {v.get('top')}")
    check(0.8 * RATE_BITS <= rate <= 1.1 * RATE_BITS,
          f"{label}: the test's own reading: the transfer ran at the shaped rate "
          f"({rate / 1e6:.1f} Mbit/s)")
    return rep, v


def main():
    require_root()
    ns = f"plv{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    d = None
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "mtu", "1500", "up"], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root",
                        "tbf", "rate", "100mbit", "burst", "32kb", "latency", "100ms"],
                       check=True)
        d = Daemon(netns=ns).start(wait_ticks=2)
        _, v = run(ns, d, "before calibration")
        check(v.get("limit") != "wire",
              f"without a calibration the loopback has no ceiling: {v.get('limit')}")
        lo = [e for e in (v.get("top") or []) if e.get("limit") == "wire"]
        check(not lo, f"and the wire is not among the measured utilisations: {v.get('top')}")
        run(ns, d, "calibration")
        rep, v = run(ns, d, "shaped")
        check(v.get("limit") == "wire" and v.get("instance") == "lo",
              f"after a calibration: the wire, lo: {v.get('limit')} {v.get('instance')}")
        check(0.9 <= (v.get("utilisation") or 0) <= 1.1,
              f"at about 100% of the shaped rate: {v.get('utilisation')}")
        figs = [e.get("figure", "") for e in v.get("evidence") or []]
        check(any("calibration run" in f for f in figs),
              f"the evidence names the calibration run: {figs}")
    finally:
        if d:
            d.stop()
        subprocess.run(["ip", "netns", "del", ns])
    finish()


if __name__ == "__main__":
    main()
