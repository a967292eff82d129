"""An interface's MTU and speed as the real daemon reports them, against /sys/class/net read by the
test, while the interface changes. On the real root the collector re-reads an interface's speed and
MTU when rtnetlink sends a link message for it (collectors/linux/linux_linkwatch.h), through files
opened afresh, and otherwise every 60 s (docs/design.md): so every tick taken after a change reports
it, where a re-read on the period alone would report the old value for up to a minute.

The test runs itself again inside a network namespace of its own (`ip netns exec`, which also mounts
that namespace's /sys), with a daemon and a veth pair there (nothing leaves the namespace):
1. both ends' MTU and Current Bandwidth equal what the test reads from sysfs;
2. an MTU changed on the live interface: every tick after the change has the new MTU;
3. the interface deleted and made again under the same name with another MTU: every tick after it
   has the new MTU;
4. the interface renamed away and a new one given its name at once: every tick after it has the
   new one's MTU under the name, and the renamed one's under its new name (a kept file of the old
   device, which moved with the rename, is not read for the new one);
5. the daemon is still sampling, healthy, and stops cleanly.
"""
import os
import subprocess
import sys
import time
import urllib.parse

from netpair import sh
from perflogtest import Daemon, check, finish, require_root, values, wait_for_tick_at

AFTER_TICKS = 3  # ticks checked after each change


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


def mtu_after(d, dev, t_ms):
    """The MTU values of dev in the first AFTER_TICKS ticks taken after wall time t_ms."""
    wait_for_tick_at(d, t_ms + AFTER_TICKS * 1000, timeout=AFTER_TICKS + 15)
    return [v for _, _, v in values(d, f"\\Network Interface({dev})\\MTU", t_ms + 1)][:AFTER_TICKS]


def check_after(d, dev, t_ms, want, what):
    got = mtu_after(d, dev, t_ms)
    check(len(got) == AFTER_TICKS and all(v == want for v in got),
          f"{dev}: {what}: every tick after the change has MTU {want} ({got})")


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
        t = time.time() * 1000
        check(sysfs(a, "mtu") == 9000, "sysfs reads the new MTU 9000")
        check_after(d, a, t, 9000, "MTU changed on the live interface")

        # 3. deleted and made again under the same name
        sh("ip", "link", "del", a)
        sh("ip", "link", "add", a, "mtu", "1280", "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "up")
        t = time.time() * 1000
        check_after(d, a, t, 1280, "deleted and made again with MTU 1280")

        # 4. renamed away, and its name given to a new interface at once
        sh("ip", "link", "set", a, "down")
        sh("ip", "link", "set", a, "name", old)
        sh("ip", "link", "add", a, "mtu", "1400", "type", "veth", "peer", "name", c)
        sh("ip", "link", "set", a, "up")
        t = time.time() * 1000
        check(sysfs(a, "mtu") == 1400 and sysfs(old, "mtu") == 1280,
              "sysfs: the new interface 1400, the renamed one 1280")
        check_after(d, a, t, 1400, "its name given to a new interface")
        check_after(d, old, t, 1280, "renamed away")

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
