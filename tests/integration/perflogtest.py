"""Shared helpers for the integration tests: start the real perflogd on a temporary database, wait for
ticks, read the database with Python's sqlite3 module, stop it.

Every test file is a plain script run by ctest. It uses `check()` to record results and ends with
`finish()`, which prints "N passed, N failed" and exits non-zero on any failure. A test that cannot run
(not root, a tool missing) fails with a message: it never passes silently.
"""
import json
import os
import signal
import socket
import urllib.error
import urllib.request
import signal as _signal  # the Daemon.signal method shadows the module name inside the class body
import sqlite3
import subprocess
import sys
import tempfile
import time

PERFLOGD = os.environ.get("PERFLOGD", "build/perflogd")
SOURCE_DIR = os.environ.get("PERFLOG_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_passed = 0
_failed = 0


def check(cond, what):
    """Record one check; print it either way so the log tells what was measured."""
    global _passed, _failed
    if cond:
        _passed += 1
        print(f"ok: {what}", flush=True)
    else:
        _failed += 1
        print(f"FAIL: {what}", flush=True)
    return cond


def finish():
    print(f"{_passed} passed, {_failed} failed", flush=True)
    sys.exit(1 if _failed or not _passed else 0)


def _die_with_parent():
    """In the child before exec: SIGKILL it when the test process ends, however it ends (a check
    that raises before stop(), ctest's timeout), so no daemon outlives its test and skews the
    measuring tests that follow. prctl(PR_SET_PDEATHSIG) survives exec."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _in_main_thread():
    """PR_SET_PDEATHSIG fires when the forking *thread* ends: a daemon started from a helper thread
    would die with that thread, so only the main thread's children get it."""
    import threading
    return threading.current_thread() is threading.main_thread()


def require_root():
    if os.geteuid() != 0:
        check(False, "this test needs root (it writes to block devices, mounts, or raises priority)")
        finish()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_request(url, method="GET", body=None, headers=None, timeout=30):
    """urllib without its exceptions for 4xx/5xx: returns (status, headers, body bytes)."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def chunk_points(blob):
    """The number of points of a chunk (storage/chunk.h): the unsigned LEB128 varint after the
    version byte."""
    n, shift = 0, 0
    for b in blob[1:11]:
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n
    raise ValueError("not a chunk")


class Daemon:
    """A perflogd process on its own temporary directory and database."""

    def __init__(self, config=None, args=(), db=None, workdir=None, env=None, preload=None,
                 netns=None, addr="127.0.0.1"):
        # netns: run the daemon inside that network namespace (`ip netns exec NS`), listening on
        # addr, an address of the namespace (the two-host tests).
        self.netns = netns
        self.addr = addr
        self.dir = workdir or tempfile.mkdtemp(prefix="perflog-it-")
        self.db = db or os.path.join(self.dir, "perflog.db")
        self.log_path = os.path.join(self.dir, "perflogd.log")
        self.config_path = None
        if config is not None:
            self.config_path = os.path.join(self.dir, "perflogd.json")
            with open(self.config_path, "w") as f:
                json.dump(config, f)
        self.args = list(args)
        # Every daemon gets its own free port, so tests never meet a perflogd on the default
        # 9931 (or each other), unless the test chose an address itself.
        self.port = None
        if "--listen" not in self.args and not (config and "listen" in config):
            self.port = free_port()
            self.args += ["--listen", f"{addr}:{self.port}"]
        elif "--listen" in self.args:
            self.port = int(self.args[self.args.index("--listen") + 1].rsplit(":", 1)[1])
        elif config and "listen" in config:
            self.port = int(config["listen"].rsplit(":", 1)[1])
        self.env = dict(os.environ)
        if env:
            self.env.update(env)
        self.proc = None

    def start(self, wait_ticks=1, timeout=15):
        cmd = [PERFLOGD, "--db", self.db]
        if self.netns:
            cmd = ["ip", "netns", "exec", self.netns] + cmd
        if self.config_path:
            cmd += ["--config", self.config_path]
        cmd += self.args
        self.logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self.logf, stderr=self.logf, env=self.env,
                                     preexec_fn=_die_with_parent if _in_main_thread() else None)
        if wait_ticks:
            self.wait_ticks(wait_ticks, timeout)
        return self

    @property
    def url(self):
        return f"http://{self.addr}:{self.port}"

    def http(self, path, method="GET", body=None, headers=None, timeout=30):
        """One request with a real HTTP client; returns (status, headers, body bytes)."""
        return http_request(self.url + path, method, body, headers, timeout)

    def get_json(self, path, headers=None):
        status, _, body = self.http(path, headers=headers)
        return status, json.loads(body) if body else None

    def wait_ticks(self, n, timeout=15):
        """Wait until at least n ticks are committed (counted from the start of the database)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc and self.proc.poll() is not None:
                raise RuntimeError(f"perflogd exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if self.tick_count() >= n:
                    return
            except sqlite3.Error:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"no {n} ticks within {timeout}s:\n{self.log()}")

    def tick_count(self):
        """Ticks stored, plain and chunked: old ticks move into ticks_chunks (docs/schema.md), whose
        t_ms chunk starts with its point count (storage/chunk.h: a version byte, then n as a
        varint). One statement, so one snapshot: a tick moving between the tiers counts once."""
        try:
            rows = self.query("SELECT count(*), NULL FROM ticks UNION ALL "
                              "SELECT NULL, t_ms FROM ticks_chunks")
        except sqlite3.OperationalError as e:
            if "no such table" not in str(e):
                raise
            rows = self.query("SELECT count(*), NULL FROM ticks")
        return sum(n if n is not None else chunk_points(blob) for n, blob in rows)

    def query(self, sql, params=()):
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def query_chunked(self, sql):
        """Rows of sql (no parameters) from the stock sqlite3 shell with `.load perflog_chunk`, as
        lists of strings ('' for NULL): for the views over chunked data (ticks_all, obj_*_all,
        counter_values), which Python's sqlite3 module cannot load the extension for."""
        ext = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog_chunk")
        r = subprocess.run(["sqlite3", "-readonly", "-bail", "-cmd", ".timeout 10000", self.db,
                            f".load {ext}", sql], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"sqlite3: {r.stderr.strip()}")
        return [line.split("|") for line in r.stdout.splitlines()]

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=_signal.SIGTERM, timeout=15):
        """Stop the daemon; returns its exit code."""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        self.check_sanitizers()
        return self.proc.returncode

    def kill9(self):
        self.proc.kill()
        self.proc.wait()
        self.logf.close()
        self.check_sanitizers()

    def check_sanitizers(self):
        """A sanitizer report in the daemon's log fails the test, whatever the exit code said."""
        reports = [l for l in self.log().splitlines()
                   if "ERROR: AddressSanitizer" in l or "WARNING: ThreadSanitizer" in l
                   or "runtime error:" in l or "ERROR: LeakSanitizer" in l]
        if reports:
            check(False, f"sanitizer report in {self.log_path}: {reports[0]}")

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""


def values(daemon, path, t_from_ms=None, t_to_ms=None):
    """[(t_ms, interval_ms, value)] of one counter path from the counter_values view."""
    sql = "SELECT t_ms, interval_ms, value FROM counter_values WHERE path = ?"
    params = [path]
    if t_from_ms is not None:
        sql += " AND t_ms >= ?"
        params.append(t_from_ms)
    if t_to_ms is not None:
        sql += " AND t_ms <= ?"
        params.append(t_to_ms)
    return daemon.query(sql + " ORDER BY t_ms", params)


def integrate(rows):
    """Sum of rate * interval over rows [(t_ms, interval_ms, value)]: the bytes a rate counter saw."""
    return sum(v * iv / 1000.0 for _, iv, v in rows if v is not None and iv)


def root_block_device(path="."):
    """The whole-disk block device under the filesystem of `path` (default: the current directory),
    e.g. 'vda'."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    dev = os.path.realpath(f"/sys/dev/block/{major}:{minor}")
    # a partition's parent directory is its disk
    if os.path.exists(os.path.join(dev, "partition")):
        dev = os.path.dirname(dev)
    return os.path.basename(dev)


def loop_fs(prefix, size_bytes):
    """A file system of the test's own, that nobody else reads or writes: ext4 on a loop device
    backed by a file on the real disk under /var/tmp. Returns (work, loop, mnt); loop_fs_remove
    takes it down. Needs root."""
    work = tempfile.mkdtemp(prefix=prefix, dir="/var/tmp")
    image, mnt = os.path.join(work, "disk.img"), os.path.join(work, "mnt")
    os.mkdir(mnt)
    with open(image, "wb") as f:
        f.truncate(size_bytes)
    loop = subprocess.run(["losetup", "--find", "--show", image], capture_output=True, text=True,
                          check=True).stdout.strip()
    # Inode tables and journal zeroed by mkfs, and no lazy init at mount: otherwise the kernel's
    # ext4lazyinit thread zeroes the inode tables in the background after the mount, megabytes of
    # writes to this device that nobody asked for (2 MiB of them landed inside a run's edges once).
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop],
                   check=True)
    subprocess.run(["mount", "-o", "noinit_itable", loop, mnt], check=True)
    return work, loop, mnt


def loop_fs_remove(work, loop, mnt):
    subprocess.run(["umount", mnt])
    subprocess.run(["losetup", "-d", loop])
    subprocess.run(["rm", "-rf", work])


def diskstats_bytes(disk, field, path="/proc/diskstats"):
    """The sectors of `field` (0-based column of /proc/diskstats: 5 read, 9 written; 512-byte
    units) of `disk`, in bytes, from `path` (a copy, or the live file)."""
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[2] == disk:
                return int(p[field]) * 512
    raise KeyError(disk)


def ticks(daemon, t_from_ms=None, t_to_ms=None):
    """[(t_ms, interval_ms, missed)] of the ticks table, oldest first, optionally within [from, to]."""
    sql = "SELECT t_ms, interval_ms, missed FROM ticks WHERE 1"
    params = []
    if t_from_ms is not None:
        sql += " AND t_ms >= ?"
        params.append(t_from_ms)
    if t_to_ms is not None:
        sql += " AND t_ms <= ?"
        params.append(t_to_ms)
    return daemon.query(sql + " ORDER BY t_ms", params)


def wait_for_tick_at(daemon, t_ms, timeout=15):
    """Wait until a tick at or after wall time t_ms (ms since the epoch) is committed; returns the
    seconds waited. Raises RuntimeError on timeout or if the daemon exits."""
    start = time.time()
    while time.time() - start < timeout:
        if daemon.proc and daemon.proc.poll() is not None:
            raise RuntimeError(f"perflogd exited with {daemon.proc.returncode}:\n{daemon.log()}")
        try:
            if daemon.query("SELECT count(*) FROM ticks WHERE t_ms >= ?", (t_ms,))[0][0]:
                return time.time() - start
        except sqlite3.Error:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"no tick at or after {t_ms} within {timeout}s:\n{daemon.log()}")


def sleep_until_wall(t):
    """Sleep until wall-clock time t (seconds since the epoch)."""
    while True:
        d = t - time.time()
        if d <= 0:
            return
        time.sleep(min(d, 0.5))


def offset_from_second_ms(t_ms):
    """Distance in ms of a timestamp from the nearest whole second."""
    r = t_ms % 1000
    return min(r, 1000 - r)


def integrity_check(db_path, copy=False):
    """Run PRAGMA integrity_check on db_path with an ordinary read-write sqlite3 connection, as a
    user would; returns its first row ('ok' when sound) or the error text. With copy=True the
    database and its -wal are copied to a temporary directory first, so the check (and its WAL
    recovery and checkpoint on close) leaves the original files exactly as a crash left them."""
    import shutil
    path = db_path
    tmp = None
    if copy:
        tmp = tempfile.mkdtemp(prefix="perflog-ic-")
        path = os.path.join(tmp, os.path.basename(db_path))
        for suffix in ("", "-wal"):
            if os.path.exists(db_path + suffix):
                shutil.copyfile(db_path + suffix, path + suffix)
    try:
        conn = sqlite3.connect(path, timeout=10)
        try:
            return conn.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as e:
        return f"sqlite3 error: {e}"
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def log_lines(daemon, needle):
    """The lines of the daemon's log that contain needle (case-insensitive)."""
    return [ln for ln in daemon.log().splitlines() if needle.lower() in ln.lower()]


def proc_cpu_seconds(pid):
    """User + system CPU seconds used so far by process pid (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
