"""Two "hosts" on one machine for the two-host runs: network namespaces A and B joined
by a veth pair, a perflogd in each (its own database, listening on its namespace's address), and a
`perflog` client that runs inside a namespace. Traffic between A and B never leaves the pair.

Offloads: TSO, GSO and GRO are turned off on both veth ends (ethtool -K), so every packet the
counters see is a real, MTU-sized-at-most packet, as on a physical NIC; with them on, veth passes
64 KiB super-packets and bytes per packet would not depend on the MTU. IPv6 is disabled in both
namespaces so no router solicitations or MLD reports add packets of their own.

Names include the test's pid, so parallel runs never collide; close() removes everything that
open() made, whatever failed in between.
"""
import os
import subprocess

from perflogtest import Daemon

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
SUBNET = "10.213.0"  # private to the two namespaces: nothing outside them routes it
OFFLOADS = ("tso", "gso", "gro")


def sh(*cmd, check=True, **kw):
    """Run a command; raise with its stderr when it fails and check is set."""
    p = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


class NetPair:
    def __init__(self, tag="pl"):
        base = f"{tag}{os.getpid()}"
        self.ns = {"a": base + "a", "b": base + "b"}
        self.dev = {"a": base + "a0", "b": base + "b0"}  # at most 15 characters
        self.addr = {"a": SUBNET + ".1", "b": SUBNET + ".2"}
        self.daemons = {}
        self.made = []

    def open(self):
        """Create the namespaces, the veth pair and start both daemons."""
        self.open_netns()
        for side in "ab":
            ns = self.ns[side]
            for key in ("all", "default"):
                self.exec(side, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
            self.exec(side, "sysctl", "-qw", f"net.ipv6.conf.{self.dev[side]}.disable_ipv6=1")
            sh("ip", "-n", ns, "addr", "add", self.addr[side] + "/24", "dev", self.dev[side])
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", self.dev[side], "up")
            args = ["ethtool", "-K", self.dev[side]]
            for o in OFFLOADS:
                args += [o, "off"]
            self.exec(side, *args)
        # Each daemon listens on its namespace's address, which is not loopback: a POST from there
        # needs the daemon's token, and a peer gets only the token given for it.
        for side in "ab":
            d = Daemon(netns=self.ns[side], addr=self.addr[side],
                       config={"auth_token": f"netpair-token-{side}"})
            self.daemons[side] = d
            d.start(wait_ticks=2)
        return self

    def open_netns(self):
        """Only the namespaces and the veth pair joining them."""
        for side in "ab":
            sh("ip", "netns", "add", self.ns[side])
            self.made.append(self.ns[side])
        sh("ip", "link", "add", self.dev["a"], "netns", self.ns["a"], "type", "veth", "peer",
           "name", self.dev["b"], "netns", self.ns["b"])
        return self

    def offloads(self, side):
        """The offload lines of `ethtool -k` on side's veth end, for the log."""
        out = self.exec(side, "ethtool", "-k", self.dev[side]).stdout
        return [l.strip() for l in out.splitlines()
                if l.split(":")[0].strip() in ("tcp-segmentation-offload",
                                               "generic-segmentation-offload",
                                               "generic-receive-offload")]

    def set_mtu(self, mtu):
        for side in "ab":
            sh("ip", "-n", self.ns[side], "link", "set", self.dev[side], "mtu", str(mtu))

    def exec(self, side, *cmd, check=True, **kw):
        return sh("ip", "netns", "exec", self.ns[side], *cmd, check=check, **kw)

    def popen(self, side, *cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.ns[side], *cmd], **kw)

    def perflog(self, side, *args, timeout=300):
        """`perflog ARGS` inside side's namespace against its daemon: (exit code, stdout, stderr)."""
        env = {k: v for k, v in os.environ.items() if k != "PERFLOG_TOKEN"}
        env["PERFLOG_SERVER"] = self.daemons[side].url
        env["PERFLOG_TOKEN"] = f"netpair-token-{side}"
        env["PERFLOG_PEER_TOKENS"] = ",".join(f"{d.url}=netpair-token-{s}"
                                              for s, d in self.daemons.items() if s != side)
        p = subprocess.run(["ip", "netns", "exec", self.ns[side], PERFLOG, *args],
                           capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr

    def close(self):
        """Stop the daemons (returns their exit codes) and delete the namespaces; deleting a
        namespace deletes its veth end, which takes the other end with it."""
        codes = {}
        for side, d in self.daemons.items():
            try:
                codes[side] = d.stop()
            except Exception as e:  # keep cleaning up
                codes[side] = f"stop failed: {e}"
        for ns in self.made:
            sh("ip", "netns", "del", ns, check=False)
        return codes
