#!/usr/bin/env python3
"""The cross-built Windows programs under wine: perflogd.exe starts on a temporary
database, answers /api/v1/health to a Linux client, stores \\Processor(_Total)\\% Processor Time,
reports each unsupported PDH path by name once and keeps running, flushes on Ctrl+C, and the
database it wrote reads back on Linux with the stock sqlite3 shell. perflog.exe talks to it. The
service glue is exercised as far as wine's service manager goes: install, start, RUNNING once the
first tick is stored, stop with exit code 0, uninstall. A run opened through the API on a Windows
pid follows that process and its child as \\Process(cmd:PID) rows, keeps following the child
when the root is killed, and stops when the run ends. perflog.exe run runs a command in a job
object, passes its output through, ends its run with its exit code and prints the report (test_run).

Wine's PDH knows two counters, \\Processor(_Total)\\% Processor Time and \\System\\System Up Time,
and gives constant raw values for the first; so the processor rows are stored with their raw
fields while the percentage itself has no value (0/0), which the test checks as such.

Wine 8 gives real pids, parent pids and names to Toolhelp, and real creation and exit times to
GetProcessTimes; but its GetProcessTimes gives the *calling* process's CPU times whatever the handle
(a FIXME in wine's dlls/ntdll/unix/process.c, ProcessTimes), and GetProcessIoCounters gives zeros
for every process. So the test checks the CPU and I/O counters only for having values (and the
storage split for having none), not for what they measure.

Environment: PERFLOG_WIN_BIN, the directory holding perflogd.exe and perflog.exe (default
build-win/perflog). Needs wine64 (Debian package wine64), sqlite3 and curl; a missing one fails the
test with the reason. A throwaway WINEPREFIX under /tmp, WINEDEBUG=-all, no X server.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from perflogtest import SOURCE_DIR, check, finish, free_port  # noqa: E402

BIN = os.path.abspath(os.environ.get("PERFLOG_WIN_BIN", os.path.join(SOURCE_DIR, "build-win", "perflog")))
PROC_TOTAL = "\\Processor(_Total)\\% Processor Time"
REJECTED = ["\\PhysicalDisk(*)\\Disk Read Bytes/sec", "\\Memory\\Available Bytes",
            "\\TCPv4\\Segments Received/sec", "\\No Such Object\\Nothing"]


def find_wine():
    for name in ("wine64", "wine"):
        if shutil.which(name):
            return shutil.which(name)
    for path in ("/usr/lib/wine/wine64", "/usr/lib/x86_64-linux-gnu/wine/wine64"):
        if os.access(path, os.X_OK):
            return path
    return None


def fail_now(why):
    check(False, why)
    finish()


def winpath(path):
    """A Linux path as wine's Z: drive shows it."""
    return "Z:" + path.replace("/", "\\")


class Wine:
    def __init__(self, wine, prefix):
        self.wine = wine
        self.env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
        self.env.pop("DISPLAY", None)  # console programs: no X server, and none is wanted
        server = os.path.join(os.path.dirname(os.path.realpath(wine)), "wineserver")
        self.server = server if os.access(server, os.X_OK) else shutil.which("wineserver")

    def run(self, *args, timeout=120):
        return subprocess.run([self.wine, *args], env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def popen(self, args, log):
        return subprocess.Popen([self.wine, *args], env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def server_cmd(self, *args):
        if self.server:
            subprocess.run([self.server, *args], env=self.env, timeout=60)


def wait_health(url, timeout):
    """Poll with the Linux curl until /api/v1/health answers; its JSON or None."""
    end = time.time() + timeout
    while time.time() < end:
        r = subprocess.run(["curl", "-s", "-f", "-m", "2", url + "/api/v1/health"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            try:
                return json.loads(r.stdout)
            except ValueError:
                pass
        time.sleep(0.3)
    return None


def wait_ticks(url, n, timeout):
    end = time.time() + timeout
    h = None
    while time.time() < end:
        h = wait_health(url, 5)
        if h and h.get("ticks", 0) >= n:
            return h
        time.sleep(0.3)
    return h


def sqlite(db, sql):
    r = subprocess.run(["sqlite3", "-batch", db, sql], capture_output=True, text=True)
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def test_console(w, work):
    db = os.path.join(work, "console.db")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    conf = os.path.join(work, "perflogd.json")
    with open(conf, "w") as f:
        json.dump({"pdh_counters": ["\\System\\System Up Time", "\\No Such Object\\Nothing"]}, f)
    log_path = os.path.join(work, "console.log")
    with open(log_path, "w") as log:
        p = w.popen([os.path.join(BIN, "perflogd.exe"), "--config", winpath(conf), "--db", winpath(db),
                     "--listen", f"127.0.0.1:{port}", "--interval", "1000", "--log-level", "debug"], log)
    try:
        t0 = time.time()
        h = wait_health(url, 60)
        check(h is not None and h.get("status") == "ok",
              f"perflogd.exe answers /api/v1/health to the Linux curl ({time.time() - t0:.1f} s after start)")
        h = wait_ticks(url, 4, 30)
        check(h is not None and h.get("ticks", 0) >= 4 and h.get("write_failures") == 0,
              f"ticks are taken and written ({h and h.get('ticks')} ticks, {h and h.get('write_failures')} write failures)")
        check(p.poll() is None, "perflogd.exe is still running after PDH rejected the unsupported paths")
        with open(log_path) as f:
            text = f.read()
        for path in REJECTED:
            n = text.count(f"PDH: counter {path} is not available")
            check(n == 1, f"the unsupported path {path} is reported once by name (seen {n} times)")
        n = text.count("PDH: \\System\\System Up Time = ")
        check(n >= 3, f"the extra path of pdh_counters is read every tick ({n} readings logged)")
        check("recording " + PROC_TOTAL + " only" in text,
              "wine cannot list the Processor instances: perflogd says it records _Total only")

        r = w.run(os.path.join(BIN, "perflog.exe"), "--server", url, "counters", "\\Processor(*)\\*")
        check(r.returncode == 0 and PROC_TOTAL in r.stdout,
              f"perflog.exe counters lists {PROC_TOTAL} (exit {r.returncode}, {r.stdout.strip()[:120]!r} {r.stderr.strip()[:200]!r})")
        r = w.run(os.path.join(BIN, "perflog.exe"), "--server", url, "status")
        check(r.returncode == 0 and r.stdout.strip() != "",
              f"perflog.exe status answers (exit {r.returncode}: {r.stdout.strip()[:80]!r})")
        # one daemon per database: a second one on the same file exits 1 and names the first
        r = w.run(os.path.join(BIN, "perflogd.exe"), "--db", winpath(db), "--listen",
                  f"127.0.0.1:{free_port()}", timeout=60)
        check(r.returncode == 1 and "database in use by perflogd pid " in r.stdout + r.stderr,
              f"a second perflogd.exe on the same database exits 1 with the first one's pid "
              f"(exit {r.returncode}: {(r.stdout + r.stderr).strip()[-160:]!r})")
        test_run(w, work, url)

        # Ctrl+C: wine turns SIGINT into a console Ctrl+C event; the daemon flushes and exits 0.
        p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rc = None
        with open(log_path) as f:
            text = f.read()
        check(rc == 0 and "Ctrl+C: flushing and exiting" in text and "stopped" in text,
              f"Ctrl+C flushes and exits 0 (exit {rc})")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()

    rc, out, err = sqlite(db, f"SELECT count(*), count(value), min(value), max(value) FROM counter_values "
                              f"WHERE path = '{PROC_TOTAL}'")
    check(rc == 0, f"the stock sqlite3 shell reads the database written under wine ({err or 'ok'})")
    n, nval, lo, hi = (out.split("|") + ["", "", "", ""])[:4] if rc == 0 else ("0", "0", "", "")
    check(int(n or 0) >= 3, f"{PROC_TOTAL} is stored: {n} rows")
    # Wine's raw reading never moves, so the share is 0/0: no value. A wine that gives real data
    # must give a percentage.
    check(int(nval or 0) == 0 or (float(lo) >= 0 and float(hi) <= 100),
          f"its values are empty (wine's constant raw data) or percentages: {nval} values in [{lo}, {hi}]")
    # The first tick has no deltas; the later ones hold the raw fields (deltas of 0 under wine).
    rc, out, err = sqlite(db, "SELECT count(*) FROM obj_processor WHERE idle IS NOT NULL AND user IS NOT NULL "
                              "AND system IS NOT NULL")
    check(rc == 0 and int(out or 0) >= 2, f"the raw processor fields are stored ({out} rows; {err or 'ok'})")
    rc, out, err = sqlite(db, "SELECT count(*) FROM counter_values WHERE object = 'PhysicalDisk'")
    check(rc == 0 and out == "0", f"nothing is invented for the rejected objects ({out} PhysicalDisk values)")


def perflog_run(w, url, *args):
    """perflog.exe run ARGS against url, with the shortest settle wait (wine's PDH has no dirty
    data, so every run waits its settle timeout)."""
    return w.run(os.path.join(BIN, "perflog.exe"), "--server", url, "run", "--settle-timeout", "1", *args)


def last_run(url):
    runs = get_json(url, "/api/v1/runs").get("runs") or [{}]
    return get_json(url, f"/api/v1/runs/{max(r.get('id', 0) for r in runs)}")


def test_run(w, work, url):
    """perflog.exe run under wine: CMD's output passed through, its exit status, the run closed on
    the daemon with them, the report; 127 for a missing command; CMD's words quoted so that the C
    runtime splits them back; the tree followed as Process rows; what CMD leaves running ended
    with perflog. Wine 8 fails the job object's I/O accounting query (ERROR_INVALID_FUNCTION):
    perflog.exe then says so and sends no totals, which is what is checked there."""
    t0 = time.time()
    # The dd summary line lets the daemon show that the output's tail reached it.
    cmd = "echo hello& echo 4194304 bytes (4.2 MB, 4.0 MiB) copied, 0.5 s, 8.4 MB/s& echo to-stderr 1>&2& exit 3"
    r = perflog_run(w, url, "--label", "wine run", "--", "cmd", "/c", cmd)
    check(r.returncode == 3, f"perflog.exe run exits with CMD's status 3 (got {r.returncode}: {r.stderr.strip()[-300:]!r})")
    check(r.stdout.startswith("hello") and "to-stderr" in r.stderr,
          f"CMD's stdout and stderr are passed through ({r.stdout[:40]!r}, {r.stderr[:80]!r})")
    run = last_run(url)
    check(run.get("label") == "wine run" and run.get("exit_code") == 3 and run.get("status") == "settled",
          f"the run is on the daemon, ended with exit_code 3 and settled ({str(run)[:200]})")
    check(run.get("command") == f'cmd /c "{cmd}"', f"its command is the Windows command line run ({run.get('command')!r})")
    tool = (run.get("report") or {}).get("tool") or {}
    check(tool.get("name") == "dd" and tool.get("claimed_bytes") == 4194304,
          f"the output's tail went with the end of the run: the daemon read dd's claim from it ({tool})")
    check(f'run {run.get("id")} "wine run" on ' in r.stdout and "exit code 3" in r.stdout,
          f"the report is printed ({r.stdout[r.stdout.find('run '):][:120]!r})")
    source = ((run.get("report") or {}).get("process") or {}).get("source")
    if "I/O accounting is not available" in r.stderr:
        check(source != "client", f"without the job's accounting no I/O totals are sent as measured (source {source})")
    else:
        check(source == "client", f"the job's I/O totals are sent with the run (source {source})")

    # A word outside the ANSI code page: taken from the wide command line, not the C runtime's argv.
    r = perflog_run(w, url, "--", "no-such-command-4711", "\u03a9mega-\u65e5\u672c")
    run = last_run(url)
    check(r.returncode == 127 and "no-such-command-4711: command not found" in r.stderr,
          f"a command that does not exist exits 127 with a message (exit {r.returncode}: {r.stderr.strip()[-120:]!r})")
    check(run.get("exit_code") == 127 and run.get("status") == "failed",
          f"its run is closed as failed with exit_code 127 ({run.get('status')}, {run.get('exit_code')})")
    check(run.get("command") == "no-such-command-4711 \u03a9mega-\u65e5\u672c",
          f"a word outside the ANSI code page keeps its characters ({run.get('command')!r})")

    # CMD is perflog.exe itself, which says back the --server it was given: the word with
    # quotes, spaces and a trailing backslash comes back whole from the C runtime.
    word = 'a "b" c\\'
    r = perflog_run(w, url, "--", winpath(os.path.join(BIN, "perflog.exe")), "--server", word, "status")
    run = last_run(url)
    check(r.returncode == 2 and f"bad server URL '{word}'" in r.stderr,
          f"CMD gets its words as given ({r.stderr.strip()[:120]!r})")
    check(run.get("command", "").endswith(' --server "a \\"b\\" c\\\\" status'),
          f"the command line quotes them as CommandLineToArgvW reads them ({run.get('command')!r})")

    # A copy of 4 MiB that lasts two ticks: cmd.exe and its ping.exe become the run's Process rows.
    # --payload names the directory (FindFirstFile walks it): the file and a small one below.
    payload = os.path.join(work, "payload")
    src, dst = os.path.join(payload, "payload.bin"), os.path.join(work, "copied.bin")
    os.makedirs(os.path.join(payload, "sub"))
    with open(src, "wb") as f:
        f.write(os.urandom(4 << 20))
    with open(os.path.join(payload, "sub", "note.txt"), "w") as f:
        f.write("x" * 100)
    r = perflog_run(w, url, "--json", "--payload", winpath(payload), "--", "cmd", "/c",
                    f"copy /y {winpath(src)} {winpath(dst)} > nul& ping -n 3 127.0.0.1 > nul")
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = {}
    same = os.path.exists(dst) and open(src, "rb").read() == open(dst, "rb").read()
    check(r.returncode == 0 and same, f"the copy runs to its end (exit {r.returncode}, same bytes: {same})")
    run = last_run(url)
    names = sorted(p.get("instance", "").split(":")[0] for p in rep.get("processes", []))
    check({"cmd", "ping", "perflog"} <= set(names),
          f"the run follows perflog.exe, its cmd.exe and that one's ping.exe ({names})")
    own = [p for p in rep.get("processes", []) if p.get("instance", "").startswith("perflog:")]
    check(len(own) == 1 and own[0].get("pid") == run.get("pid"),
          f"the run was opened with perflog.exe's pid, the root of the tree ({run.get('pid')}, {own})")
    pl = rep.get("payload") or {}
    check(pl.get("bytes") == (4 << 20) + 100 and pl.get("files") == 2,
          f"--payload DIR is the size and count of the files under it ({pl})")

    # What CMD leaves running is ended when perflog.exe exits: the job object is closed.
    before = {pid for pid, (name, _) in wine_processes(w).items() if name.lower() == "ping.exe"}
    r = perflog_run(w, url, "-q", "--", "cmd", "/c", "start /b ping -n 60 127.0.0.1 > nul& echo started")
    time.sleep(0.5)
    left = {pid for pid, (name, _) in wine_processes(w).items() if name.lower() == "ping.exe"} - before
    check(r.returncode == 0 and r.stdout.startswith("started") and not left,
          f"a process CMD started in the background ends with perflog.exe (exit {r.returncode}, left {left})")
    print(f"perflog.exe run checks: {time.time() - t0:.1f} s", flush=True)


PDH_UPTIME = "\\System\\System Up Time"
PDH_EXTRAS = [PDH_UPTIME, "\\LogicalDisk(*)\\% Free Space", "\\No Such Extra Object\\Nothing",
              PROC_TOTAL]


def test_pdh_extras(w, work):
    """The extra PDH paths of pdh_counters are series of the log: \\System\\System Up Time (wine's
    PDH knows it) is listed by /api/v1/counters, its values rise one per second in /api/v1/data
    and /api/v1/latest, the CSV export and perflog.exe typeperf have its column, and the stock
    sqlite3 reads the same numbers from counter_values. The wildcard path (wine lists no
    instances) and the unknown one are reported once by name; perflog's own path is stored once.
    Wine formats this integer counter's double wrongly: perflogd says so and reads it as an
    integer (pdh_user.c)."""
    db = os.path.join(work, "extras.db")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    conf = os.path.join(work, "extras.json")
    with open(conf, "w") as f:
        json.dump({"pdh_counters": PDH_EXTRAS}, f)
    log_path = os.path.join(work, "extras.log")
    with open(log_path, "w") as log:
        p = w.popen([os.path.join(BIN, "perflogd.exe"), "--config", winpath(conf), "--db", winpath(db),
                     "--listen", f"127.0.0.1:{port}", "--interval", "1000"], log)
    api_values = {}
    try:
        h = wait_ticks(url, 6, 60)
        if not h:
            check(False, "perflogd.exe answers for the pdh_counters test")
            return
        host = h.get("host", "")
        cat = get_json(url, "/api/v1/counters?match=" + urllib.parse.quote("\\System\\*"))
        want = {"path": PDH_UPTIME, "object": "System", "instance": None, "counter": "System Up Time",
                "unit": "", "kind": "value"}
        check(cat.get("counters") == [want], f"/api/v1/counters lists {PDH_UPTIME} as a value ({cat})")
        cat = get_json(url, "/api/v1/counters?match=" + urllib.parse.quote("\\LogicalDisk(*)\\*"))
        check(cat.get("counters") == [], f"nothing is invented for the wildcard wine cannot list ({cat})")
        with open(log_path) as f:
            text = f.read()
        for path in PDH_EXTRAS[1:3]:
            n = text.count(f"PDH: counter {path} is not available")
            check(n == 1, f"the extra path {path} that wine rejects is reported once by name (seen {n} times)")
        n = text.count(f"PDH: {PROC_TOTAL} is one of perflog's own counters")
        check(n == 1, f"{PROC_TOTAL} in pdh_counters is said once to be perflog's own ({n} times)")
        check("with PDH_FMT_DOUBLE, which no counter gives (a wine bug)" in text,
              "perflogd says wine garbles the double of an integer counter and reads it as an integer")

        data = get_json(url, "/api/v1/data?from=-6s&counter=" + urllib.parse.quote(PDH_UPTIME))
        ts = data.get("timestamps", [])
        series = data.get("series", [])
        vals = series[0].get("values", []) if series else []
        pairs = [(t, v) for t, v in zip(ts, vals) if v is not None]
        api_values = dict(pairs)
        rates = [(b[1] - a[1]) / ((b[0] - a[0]) / 1000.0) for a, b in zip(pairs, pairs[1:]) if b[0] > a[0]]
        check(len(pairs) >= 5 and len(rates) >= 4 and all(0.5 <= r <= 1.5 for r in rates),
              f"/api/v1/data gives {PDH_UPTIME} rising about 1 per second ({pairs[:3]}..., rates {rates})")
        latest = get_json(url, "/api/v1/latest?counter=" + urllib.parse.quote(PDH_UPTIME))
        lv = [v.get("value") for v in latest.get("values", [])]
        check(len(lv) == 1 and isinstance(lv[0], (int, float)) and pairs and lv[0] >= pairs[-1][1],
              f"/api/v1/latest has its newest value ({lv})")
        r = subprocess.run(["curl", "-s", "-m", "10", url + "/api/v1/export?tz=utc&from=-5s&counter=" +
                            urllib.parse.quote(PDH_UPTIME)], capture_output=True)
        lines = r.stdout.decode("utf-8", "replace").split("\r\n")
        column = f'"\\\\{host}{PDH_UPTIME}"'
        check(len(lines) >= 4 and lines[0].endswith("," + column) and
              all(re.fullmatch(r'"[0-9/: .]+","[0-9]+\.000000"', x) for x in lines[1:] if x),
              f"the CSV export has the column {column} and its values ({lines[:3]})")
        r = w.run(os.path.join(BIN, "perflog.exe"), "--server", url, "typeperf", PDH_UPTIME, "-sc", "2")
        out = [x for x in r.stdout.splitlines() if x.strip()]
        check(r.returncode == 0 and len(out) == 4 and out[0] == f'"(PDH-CSV 4.0)",{column}' and
              all(re.fullmatch(r'"[0-9/: .]+","[0-9]+\.000000"', x) for x in out[1:3]) and
              out[3] == "The command completed successfully.",
              f"perflog.exe typeperf prints it as typeperf would (exit {r.returncode}: {out} {r.stderr.strip()[:200]!r})")
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    rc, out, err = sqlite(db, f"SELECT t_ms, value FROM counter_values WHERE path = '{PDH_UPTIME}' ORDER BY t_ms")
    rows = [x.split("|") for x in out.splitlines()] if rc == 0 else []
    stored = {int(t): float(v) for t, v in rows if v != ""}
    check(rc == 0 and len(stored) >= 5, f"sqlite3 on Linux reads {PDH_UPTIME} from counter_values ({len(stored)} values; {err or 'ok'})")
    same = [t for t in api_values if t in stored and stored[t] == api_values[t]]
    check(api_values and len(same) == len(api_values),
          f"counter_values has the numbers the API gave ({len(same)} of {len(api_values)} equal)")
    rc, out, err = sqlite(db, "SELECT count(*) FROM pdh_paths")
    check(rc == 0 and out == "1", f"one extra path is stored, the rejected and the own one are not ({out})")


def get_json(url, path):
    r = subprocess.run(["curl", "-s", "-m", "5", url + path], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": r.stdout[:200]}


def post_json(url, path, body):
    r = subprocess.run(["curl", "-s", "-m", "5", "-X", "POST", "-H", "Content-Type: application/json",
                        "-d", json.dumps(body), url + path], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": r.stdout[:200]}


def wine_processes(w):
    """{pid: (name, parent pid)} of the prefix's processes, from wine's wmic (UTF-16 output)."""
    r = subprocess.run([w.wine, "wmic", "process", "get", "name,parentprocessid,processid"], env=w.env,
                       capture_output=True, timeout=60)
    out = {}
    for line in r.stdout.decode("utf-16-le", "replace").lstrip("\ufeff").splitlines()[1:]:
        f = line.split()
        if len(f) == 3 and f[1].isdigit() and f[2].isdigit():
            out[int(f[2])] = (f[0], int(f[1]))
    return out


def latest_processes(url):
    """{instance: {counter: value}} of the newest tick's Process rows."""
    body = get_json(url, "/api/v1/latest?counter=" + urllib.parse.quote("\\Process(*)\\*"))
    rows = {}
    for v in body.get("values", []):
        m = re.match(r"^\\Process\((.*)\)\\(.*)$", v.get("path", ""))
        if m:
            rows.setdefault(m.group(1), {})[m.group(2)] = v.get("value")
    return rows, body


def test_follow(w, work):
    """A run on a Windows pid: the process and its child become Process rows, with their ids, CPU
    time and I/O (both stand-ins under wine); nothing else is followed; nothing once the run has
    ended."""
    db = os.path.join(work, "follow.db")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = os.path.join(work, "follow.log")
    with open(log_path, "w") as log:
        p = w.popen([os.path.join(BIN, "perflogd.exe"), "--db", winpath(db), "--listen", f"127.0.0.1:{port}",
                     "--interval", "1000"], log)
    keeper = None
    try:
        h = wait_ticks(url, 1, 60)
        if not h:
            check(False, "perflogd.exe answers for the process-following test")
            return
        before = wine_processes(w)
        check(len(before) > 0, f"wine's wmic lists the processes with their parents ({len(before)} of them)")
        # cmd.exe running "cmd /c pause": a root and its child, both waiting on the pipe.
        keeper = subprocess.Popen([w.wine, "cmd", "/c", "cmd /c pause"], env=w.env, stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        root = child = None
        end = time.time() + 30
        while time.time() < end and child is None:
            now = wine_processes(w)
            for pid, (name, ppid) in now.items():
                if (pid not in before and name.lower() == "cmd.exe" and ppid in now and ppid not in before
                        and now[ppid][0].lower() == "cmd.exe"):
                    root, child = ppid, pid
            time.sleep(0.5)
        if child is None:
            check(False, "the new cmd.exe and its child cmd.exe show up in wmic")
            return
        run = post_json(url, "/api/v1/runs", {"label": "wine follow", "pid": root})
        check("id" in run, f"POST /api/v1/runs with the Windows pid {root} opens a run ({run})")
        t0 = wait_health(url, 5)["ticks"]
        wait_ticks(url, t0 + 3, 30)
        rows, body = latest_processes(url)
        r_inst, c_inst = f"cmd:{root}", f"cmd:{child}"
        check(set(rows) == {r_inst, c_inst},
              f"the root cmd.exe and its child, and nothing else, are followed ({sorted(rows)})")
        r, c = rows.get(r_inst, {}), rows.get(c_inst, {})
        check(r.get("ID Process") == root and c.get("ID Process") == child,
              f"\\Process({r_inst})\\ID Process and \\Process({c_inst})\\ID Process are the pids "
              f"({r.get('ID Process')}, {c.get('ID Process')})")
        check(c.get("Creating Process ID") == root,
              f"the child's Creating Process ID is the root's pid ({c.get('Creating Process ID')})")
        cpu = [x.get("% Processor Time") for x in (r, c)]
        # Under wine this is perflogd.exe's own CPU time (see the top): only its presence is checked.
        check(all(isinstance(v, (int, float)) and 0 <= v <= 100 * os.cpu_count() for v in cpu),
              f"% Processor Time has a value from GetProcessTimes ({cpu})")
        io = [x.get(k) for x in (r, c) for k in ("IO Read Bytes/sec", "IO Write Bytes/sec",
                                                 "IO Read Operations/sec", "IO Write Operations/sec")]
        # Wine's GetProcessIoCounters gives zeros: only their presence is checked.
        check(all(isinstance(v, (int, float)) and v >= 0 for v in io),
              f"the IO counters have values from GetProcessIoCounters ({io})")
        storage = [x.get(k) for x in (r, c) for k in ("Storage Read Bytes/sec", "Storage Write Bytes/sec")]
        check(all(v is None for v in storage), f"Windows has no storage split: those stay empty ({storage})")
        cat = get_json(url, "/api/v1/counters?match=" + urllib.parse.quote(f"\\Process(*:{root})\\ID Process"))
        check(len(cat.get("counters", [])) == 1, f"the counter catalogue lists \\Process({r_inst}) ({cat})")

        # The root exits (killed): its child stays followed while the run is open.
        r = w.run("taskkill", "/f", "/pid", str(root), timeout=60)
        t0 = wait_health(url, 5)["ticks"]
        wait_ticks(url, t0 + 2, 30)
        rows, body = latest_processes(url)
        check(set(rows) == {c_inst},
              f"after the root is killed (taskkill exit {r.returncode}) its child alone is followed ({sorted(rows)})")

        ended = post_json(url, f"/api/v1/runs/{run.get('id')}/end", {"exit_code": 0})
        check(ended.get("status") in ("ended", "settling", "settled") or "id" in ended,
              f"the run ends ({str(ended)[:160]})")
        t0 = wait_health(url, 5)["ticks"]
        wait_ticks(url, t0 + 2, 30)
        rows, body = latest_processes(url)
        check(rows == {}, f"no Process rows once the run has ended ({sorted(rows)}; {str(body)[:160]})")
        check(p.poll() is None, "perflogd.exe is still running")
    finally:
        if keeper:
            keeper.stdin.close()
            try:
                keeper.wait(timeout=15)
            except subprocess.TimeoutExpired:
                keeper.kill()
                keeper.wait()
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_service(w, work):
    db = os.path.join(work, "service.db")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    exe = os.path.join(BIN, "perflogd.exe")
    # Wine's services.exe (and the services it runs) shut down once no ordinary Windows process
    # is left in the prefix: a cmd.exe waiting on its stdin keeps one there meanwhile.
    keeper = subprocess.Popen([w.wine, "cmd", "/c", "pause"], env=w.env, stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run_service(w, exe, db, url, port)
    finally:
        keeper.stdin.close()
        try:
            keeper.wait(timeout=15)
        except subprocess.TimeoutExpired:
            keeper.kill()
            keeper.wait()


def run_service(w, exe, db, url, port):
    r = w.run(exe, "--install-service", "--listen", f"127.0.0.1:{port}", "--db", winpath(db))
    check(r.returncode == 0 and "service installed" in r.stdout,
          f"--install-service registers the service (exit {r.returncode}: {r.stdout.strip()} {r.stderr.strip()})")
    try:
        r = w.run("net", "start", "perflogd")
        h = wait_ticks(url, 2, 45)
        check(h is not None and h.get("ticks", 0) >= 2, f"the service runs and answers /api/v1/health (net start: {r.stdout.strip()})")
        state = ""
        end = time.time() + 15
        while time.time() < end and "RUNNING" not in state:
            state = w.run("sc", "query", "perflogd").stdout
            time.sleep(0.3)
        check("RUNNING" in state, "the SCM shows it RUNNING once the first tick is stored")
        r = w.run("net", "stop", "perflogd")
        state = w.run("sc", "query", "perflogd").stdout
        check("STOPPED" in state and "SERVICE_EXIT_CODE  : 0" in state,
              f"net stop stops it with exit code 0 ({' '.join(state.split())[:160]})")
        rc, out, err = sqlite(db, "SELECT count(*) FROM obj_processor")
        check(rc == 0 and int(out or 0) >= 2, f"the service's database reads back on Linux: {out} processor rows")
    finally:
        r = w.run(exe, "--uninstall-service")
        check(r.returncode == 0 and "service removed" in r.stdout,
              f"--uninstall-service removes it (exit {r.returncode}: {r.stderr.strip()})")


def main():
    t_start = time.time()
    wine = find_wine()
    if not wine:
        fail_now("wine64 is not installed (Debian package wine64): the Windows programs cannot be tested")
    for tool in ("sqlite3", "curl"):
        if not shutil.which(tool):
            fail_now(f"{tool} is not installed")
    for exe in ("perflogd.exe", "perflog.exe"):
        if not os.path.isfile(os.path.join(BIN, exe)):
            fail_now(f"{os.path.join(BIN, exe)} does not exist: cross-build it first (docs/windows.md)")
    work = tempfile.mkdtemp(prefix="perflog-wine-")
    w = Wine(wine, os.path.join(work, "prefix"))
    try:
        t0 = time.time()
        r = w.run(os.path.join(BIN, "perflogd.exe"), "--version")
        if r.returncode != 0 or "perflogd" not in r.stdout:
            fail_now(f"wine cannot start perflogd.exe (exit {r.returncode}): {r.stderr.strip()[-400:]}")
        check(True, f"wine starts perflogd.exe: {r.stdout.strip()} ({time.time() - t0:.1f} s with a new prefix)")
        test_console(w, work)
        test_pdh_extras(w, work)
        test_follow(w, work)
        test_service(w, work)
    finally:
        w.server_cmd("-k")
        shutil.rmtree(work, ignore_errors=True)
    print(f"wall time {time.time() - t_start:.1f} s", flush=True)
    finish()


if __name__ == "__main__":
    main()
