"""The last ten minutes answer the same from memory and from SQLite.

The daemon keeps only its newest ticks in memory (the ones not yet written, and a few seconds more)
and serves the rest of a range from the database. This test runs the real perflogd on a fixture
/proc tree whose network counters a thread keeps moving, with an interface (eth9) that appears and
vanishes while the daemon runs, then asks /api/v1/data for the last 10 minutes, /api/v1/latest and
/metrics over real HTTP, and compares every value with the rows it reads itself from the SQLite
file (counter_values, ticks) and, for the raw readings of /metrics, with the numbers it wrote into
the fixture files.
"""
import os
import shutil
import tempfile
import threading
import time
import urllib.parse

from perflogtest import Daemon, SOURCE_DIR, check, finish, wait_for_tick_at

Q = urllib.parse.quote
PATTERN = "\\Network Interface(*)\\*"
APPEAR_S, VANISH_S, FREEZE_S = 1.5, 4.0, 14.0  # eth9's life, and when the counters stop moving
ROUNDS = 12  # answers taken 130 ms apart: several phases of the 2 s commits

DEV_HEAD = ("Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
            "drop fifo colls carrier compressed\n")


def dev_line(name, rx, rxp, tx, txp):
    # fixed widths: the file is rewritten in place, and a line keeps its length
    return f"{name:>6}: {rx:12d} {rxp:9d} 0 0 0 0 0 0 {tx:12d} {txp:9d} 0 0 0 0 0 0\n"


class Mover(threading.Thread):
    """Rewrites proc/net/dev in place every 100 ms (the collector keeps it open and reads it with
    pread, so a rename would not be seen): eth0 and eth9 count up by
    uneven steps, eth9 exists only between APPEAR_S and VANISH_S; stops moving at FREEZE_S."""

    def __init__(self, root):
        super().__init__(daemon=True)
        self.root, self.stop, self.t0 = root, threading.Event(), time.time()
        self.eth0 = [21875448, 502, 25747, 295]
        self.eth9 = [0, 0, 0, 0]
        self.frozen = threading.Event()

    def write(self, with_eth9):
        net = os.path.join(self.root, "sys/class/net/eth9")
        if with_eth9 and not os.path.isdir(net):
            shutil.copytree(os.path.join(self.root, "sys/class/net/eth0"), net)
        body = DEV_HEAD + dev_line("lo", 3267, 29, 3267, 29) + dev_line("eth0", *self.eth0)
        if with_eth9:
            body += dev_line("eth9", *self.eth9)
        fd = os.open(os.path.join(self.root, "proc/net/dev"), os.O_WRONLY)
        try:
            os.pwrite(fd, body.encode(), 0)
            os.ftruncate(fd, len(body))
        finally:
            os.close(fd)
        if not with_eth9 and os.path.isdir(net):
            shutil.rmtree(net)

    def run(self):
        k = 0
        while not self.stop.is_set():
            age = time.time() - self.t0
            if age >= FREEZE_S:
                self.frozen.set()
                return
            k += 1
            self.eth0 = [self.eth0[0] + 1000 + (k * 7919) % 65536, self.eth0[1] + k % 5,
                         self.eth0[2] + (k * 104729) % 9973, self.eth0[3] + k % 3]
            eth9 = APPEAR_S <= age < VANISH_S
            if eth9:
                self.eth9 = [self.eth9[0] + 4096 * (k % 9), self.eth9[1] + 3,
                             self.eth9[2] + 17 * k, self.eth9[3] + 1]
            self.write(eth9)
            time.sleep(0.1)


def db_values(d, t_from, t_to):
    """{(path, t_ms): value} of the network counters in [t_from, t_to], as the view gives them."""
    rows = d.query("SELECT path, t_ms, value FROM counter_values WHERE object = 'Network Interface' "
                   "AND t_ms BETWEEN ? AND ?", (t_from, t_to))
    return {(p, t): v for p, t, v in rows}


def ticks_between(d, t_from, t_to):
    return [t for (t,) in d.query("SELECT t_ms FROM ticks WHERE t_ms BETWEEN ? AND ? ORDER BY t_ms",
                                  (t_from, t_to))]


def data_answer(d):
    """One /api/v1/data request for the last 10 minutes: its timestamps and its
    {(path, t_ms): value} without nulls."""
    status, r = d.get_json(f"/api/v1/data?counter={Q(PATTERN)}&from=now-600&to=now")
    if status != 200:
        raise RuntimeError(f"/api/v1/data answered {status}: {r}")
    ts = r["timestamps"]
    return ts, {(s["path"], t): v for s in r["series"] for t, v in zip(ts, s["values"]) if v is not None}


def main():
    work = tempfile.mkdtemp(prefix="perflog-live-")
    root = os.path.join(work, "root")
    shutil.copytree(os.path.join(SOURCE_DIR, "tests/fixtures/linux/base"), root)
    mover = Mover(root)
    mover.write(False)
    # A tick every 250 ms with the default 2 s commits: up to 7 ticks wait in the queue, unwritten,
    # which memory must hold until the writer has them in the file.
    d = Daemon(args=["--root", root, "--interval", "250"], workdir=work)
    try:
        d.start(wait_ticks=0)
        mover.start()
        mover.frozen.wait(FREEZE_S + 10)
        newest_raw = list(mover.eth0)
        time.sleep(2.5)  # two ticks read the frozen files

        # ---- /api/v1/data over the last 10 minutes, against the rows of the file ----
        # Twelve answers over some 2 s, at different phases of the writer's commits, so answers
        # taken while ticks wait in the queue are among them; checked once all are written.
        holes, mismatches, counts = [], [], []
        answers = []
        for _ in range(ROUNDS):
            answers.append(data_answer(d))
            time.sleep(0.13)
        wait_for_tick_at(d, max(ts[-1] for ts, _ in answers))
        for ts, got in answers:
            want = db_values(d, ts[0], ts[-1])
            counts.append(len(ts))
            holes += [] if ts == ticks_between(d, ts[0], ts[-1]) else [ts]
            mismatches += [(k, v, got.get(k)) for k, v in want.items() if v is not None and got.get(k) != v]
            mismatches += [(k, want.get(k), v) for k, v in got.items() if want.get(k) != v]
        check(min(counts) >= 20, f"every answer holds the daemon's ~{FREEZE_S:.0f}+ s of ticks ({counts})")
        check(not holes, f"every answer's timestamps are the ticks of the file, none missing "
                         f"({len(holes)} of {ROUNDS} answers differ)")
        check(not mismatches, f"every value of every answer is the file's and the file's are in the "
                              f"answer ({len(got)} values in the last; first mismatch {mismatches[:1]})")
        moving = [v for (p, _), v in got.items() if p.endswith("(eth0)\\Bytes Received/sec") and v]
        check(len(moving) >= 30, f"eth0's bytes received moved in most ticks ({len(moving)} non-zero)")
        eth9 = sorted({t for (p, t), v in got.items() if "(eth9)" in p and v is not None})
        check(len(eth9) >= 3, f"eth9, which appeared and vanished, has values in the window ({len(eth9)} ticks)")
        check(eth9 and eth9[-1] < ts[-1] - 10000,
              "eth9 vanished more than 10 s before the newest tick: its values were read back "
              "after leaving memory")
        path9 = "\\Network Interface(eth9)\\Bytes Received/sec"
        status, r9 = d.get_json(f"/api/v1/data?counter={Q(path9)}&from=now-600&to=now")
        got9 = [(t, v) for t, v in zip(r9["timestamps"], r9["series"][0]["values"]) if v is not None] \
            if status == 200 and r9["series"] else []
        want9 = sorted((t, v) for (p, t), v in want.items() if p == path9 and v is not None)
        check(got9 and got9 == want9, f"eth9 asked for alone gives the file's values ({got9} / {want9})")

        # ---- /api/v1/latest: the newest tick, as the file has it once written ----
        status, lt = d.get_json(f"/api/v1/latest?counter={Q(PATTERN)}")
        check(status == 200 and lt.get("t_ms"), f"/api/v1/latest answers 200 with a tick ({status})")
        wait_for_tick_at(d, lt["t_ms"])
        want = db_values(d, lt["t_ms"], lt["t_ms"])
        got = {(v["path"], lt["t_ms"]): v["value"] for v in lt["values"]}
        check(got == {k: v for k, v in want.items() if k[0] in {p for p, _ in got}} and
              {p for p, _ in want} == {p for p, _ in got},
              f"/api/v1/latest gives the file's values of its tick ({len(got)} values)")
        check(not any("(eth9)" in p for p, _ in got), "/api/v1/latest has no vanished interface")

        # ---- /metrics: the raw readings of the newest tick are the files' numbers ----
        status, _, body = d.http("/metrics")
        text = body.decode()
        line = f'perflog_network_receive_bytes_total{{device="eth0"}} {newest_raw[0]}'
        check(status == 200 and line in text.splitlines(), f"/metrics has {line}")
        line = f'perflog_network_transmit_packets_total{{device="eth0"}} {newest_raw[3]}'
        check(line in text.splitlines(), f"/metrics has {line}")
        check('device="eth9"' not in text, "/metrics has no vanished interface")
    finally:
        mover.stop.set()
        d.stop()
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
