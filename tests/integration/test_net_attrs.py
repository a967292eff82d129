"""An interface's MTU and speed as the real daemon reports them, against /sys/class/net read by the
test, while the interface changes: the collector keeps the attribute files open between its re-reads
(every 5 s; docs/design.md), so a kept file must follow the interface it was opened for.

The test runs itself again inside a network namespace of its own (`ip netns exec`, which also mounts
that namespace's /sys), with a daemon and a veth pair there (nothing leaves the namespace):
1. both ends' MTU and Current Bandwidth equal what the test reads from sysfs;
2. an MTU changed on the live interface is reported after the next re-read (a pread on the kept file);
3. the interface deleted and made again under the same name with another MTU: the new MTU (the old
   file reads ENODEV, or the name left /proc/net/dev for a tick and was forgotten);
4. the interface renamed away and a new one given its name within the same second: the new one's
   MTU within 12 re-read periods, when a kept file is opened afresh;
5. the daemon is still sampling, healthy, and stops cleanly.
"""
import os
import subprocess
import sys
import time
import urllib.parse

from netpair import sh
from perflogtest import Daemon, check, finish, require_root

PERIOD_S = 5  # the collector's re-read period of speed and MTU at this few interfaces


def sysfs(dev, attr):
    try:
        with open(f"/sys/class/net/{dev}/{attr}") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def latest(d, dev, counter):
    q = urllib.parse.quote(f"\\Network Interface({dev})\\{counter}")
    status, body = d.get_json("/api/v1/latest?counter=" + q)
    if status != 200 or not body["values"]:
        return None
    return body["values"][0]["value"]


def wait_mtu(d, dev, want, timeout):
    """Poll the newest tick until dev's MTU reads want; returns the last value seen."""
    deadline = time.time() + timeout
    v = None
    while time.time() < deadline:
        v = latest(d, dev, "MTU")
        if v == want:
            break
        time.sleep(0.5)
    return v


def inside(tag):
    """The test proper, inside the namespace."""
    a, b, old, c = (f"{x}{tag}"[:15] for x in ("na", "nb", "no", "nc"))
    sh("ip", "link", "set", "lo", "up")
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    for dev in (a, b):
        sh("ip", "link", "set", dev, "up")
    d = Daemon()
    try:
        d.start(wait_ticks=2)

        # 1. as sysfs says
        for dev in (a, b):
            mtu = sysfs(dev, "mtu")
            check(wait_mtu(d, dev, mtu, 10) == mtu, f"{dev}: MTU as sysfs says ({mtu})")
            speed = sysfs(dev, "speed")
            bw = latest(d, dev, "Current Bandwidth")
            check(speed is not None and speed > 0 and bw == speed * 1e6,
                  f"{dev}: Current Bandwidth is sysfs' speed in bit/s ({speed} Mbit/s, {bw})")

        # 2. an MTU change on the live interface
        sh("ip", "link", "set", a, "mtu", "9000")
        check(sysfs(a, "mtu") == 9000, "sysfs reads the new MTU 9000")
        v = wait_mtu(d, a, 9000, 3 * PERIOD_S)
        check(v == 9000, f"{a}: the changed MTU after a re-read ({v})")

        # 3. deleted and made again under the same name
        sh("ip", "link", "del", a)
        sh("ip", "link", "add", a, "mtu", "1280", "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "up")
        v = wait_mtu(d, a, 1280, 3 * PERIOD_S)
        check(v == 1280, f"{a}: made again with MTU 1280, reported ({v})")

        # 4. renamed away, and its name given to a new interface at once
        sh("ip", "link", "set", a, "down")
        sh("ip", "link", "set", a, "name", old)
        sh("ip", "link", "add", a, "mtu", "1400", "type", "veth", "peer", "name", c)
        sh("ip", "link", "set", a, "up")
        check(sysfs(a, "mtu") == 1400 and sysfs(old, "mtu") == 1280,
              "sysfs: the new interface 1400, the renamed one 1280")
        v = wait_mtu(d, a, 1400, 13 * PERIOD_S + 5)
        check(v == 1400, f"{a}: the new interface's MTU within 12 re-read periods ({v})")
        v = wait_mtu(d, old, 1280, 10)
        check(v == 1280, f"{old}: the renamed interface under its new name ({v})")

        # 5. still sampling, clean stop
        t0 = d.tick_count()
        d.wait_ticks(t0 + 2)
        st, h = d.get_json("/api/v1/health")
        check(st == 200 and h["status"] == "ok", f"health ok, still sampling ({h.get('status')})")
        code = d.stop()
        check(code == 0, f"SIGTERM: exit 0 ({code})")
    finally:
        d.stop()
    finish()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inside":
        inside(sys.argv[2])
        return
    require_root()
    ns = f"plna{os.getpid()}"
    sh("ip", "netns", "add", ns)
    try:
        rc = subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__),
                             "--inside", str(os.getpid())]).returncode
    finally:
        sh("ip", "netns", "del", ns, check=False)
    sys.exit(rc)


if __name__ == "__main__":
    main()
