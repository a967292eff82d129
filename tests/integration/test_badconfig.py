#!/usr/bin/env python3
"""Bad configurations: each kind gives its own clear one-line error and a non-zero exit.

`perflogd --config FILE` is run (in an empty working directory, without --db, so a start that went
ahead would create ./perflog.db there) on files with: a syntax error, a trailing comma, a comment,
an unknown key (top level and nested, with a suggestion), a duplicate key, wrong types (string for
an integer, a fraction, null, a string for a list), out-of-range values (interval_ms 50,
max_held_ticks 5), retention tiers in the wrong order, a bad glob, a bad log level, bad listen
addresses, a top-level array, an empty file, a UTF-16 file, a missing file and a directory; and
with bad command-line options (--interval abc, --interval 50, --bogus, --listen nope, --log-level
loud, --db "", options without their value). Checks per case: exit code 2 (README: a bad file stops
start-up with exit code 2), stderr is one line (usage may follow for a bad option) that names
FILE:LINE:COLUMN at the offending key and the key itself, or the option; nothing on stdout; the
process exits at once; and no database file (nor -wal/-shm) was created anywhere in the directory.
A database path that cannot be opened is a different failure (exit 1, the path named), also without
leaving files behind. A control run with a good config file starts and samples, so the failures are
the config's fault and not the binary's.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import PERFLOGD, Daemon, check, finish  # noqa: E402

PERFLOGD_ABS = os.path.abspath(PERFLOGD)

# name, file content (bytes or str), expected (line, column) or None, substrings stderr must contain
FILE_CASES = [
    ("syntax", '{\n  "interval_ms": 1000,\n  "db": "x.db"\n  "log_level": "info"\n}\n', (4, None),
     ["syntax error", "'db'"]),
    ("trailing-comma", '{\n  "interval_ms": 1000,\n  "log_level": "info",\n}\n', (3, 22),
     ["syntax error", "trailing comma"]),
    ("comment", '{\n  // sample faster\n  "interval_ms": 500\n}\n', (2, 3), ["syntax error", "comments"]),
    ("unknown-key", '{\n  "interval_ms": 1000,\n  "retension": {"raw_days": 3}\n}\n', (3, 3),
     ["unknown key 'retension'", "did you mean 'retention'"]),
    ("unknown-nested-key", '{\n  "retention": {\n    "raw_days": 7,\n    "minute_dayz": 90\n  }\n}\n', (4, 5),
     ["unknown key 'retention.minute_dayz'", "minute_days"]),
    ("duplicate-key", '{\n  "interval_ms": 1000,\n  "interval_ms": 500\n}\n', (3, 3),
     ["duplicate key 'interval_ms'", "line 2"]),
    ("type-string-for-int", '{\n  "db": "x.db",\n  "interval_ms": "500"\n}\n', (3, 3),
     ["key 'interval_ms'", "expected an integer", '"500"']),
    ("type-fraction", '{\n  "max_held_ticks": 12.5\n}\n', (2, 3), ["key 'max_held_ticks'", "integer", "12.5"]),
    ("type-null", '{\n  "interval_ms": null\n}\n', (2, 3), ["key 'interval_ms'", "null"]),
    ("type-string-for-list", '{\n  "disks": {"exclude": "loop*"}\n}\n', (2, 13),
     ["key 'disks.exclude'", "array"]),
    ("interval-too-small", '{\n  "db": "x.db",\n    "interval_ms": 50\n}\n', (3, 5),
     ["key 'interval_ms'", "100 to 3600000", "got 50"]),
    ("interval-too-large", '{"interval_ms": 3600001}', (1, 2), ["key 'interval_ms'", "3600001"]),
    ("held-too-small", '{\n  "max_held_ticks": 5\n}\n', (2, 3), ["key 'max_held_ticks'", "got 5"]),
    ("retention-order", '{\n  "retention": {"raw_days": 30, "minute_days": 10}\n}\n', (2, 33),
     ["key 'retention.minute_days'", "raw_days"]),
    ("bad-glob", '{\n  "disks": {\n    "exclude": ["loop*", "sd[a-"]\n  }\n}\n', (3, 26),
     ["key 'disks.exclude[1]'", "bad glob"]),
    ("bad-log-level", '{\n  "log_level": "loud"\n}\n', (2, 3), ["key 'log_level'", '"loud"']),
    ("listen-port-range", '{\n  "listen": "127.0.0.1:99999"\n}\n', (2, 3), ["key 'listen'", "99999", "port"]),
    ("listen-no-port", '{\n  "listen": "localhost"\n}\n', (2, 3), ["key 'listen'", "PORT"]),
    ("listen-bad-host", '{\n  "listen": "300.1.2.3:80"\n}\n', (2, 3), ["key 'listen'", "300.1.2.3"]),
    ("listen-ipv6-no-brackets", '{\n  "listen": "::1:9931"\n}\n', (2, 3), ["key 'listen'", "::1:9931"]),
    ("top-level-array", '[\n  {"interval_ms": 1000}\n]\n', (1, 1), ["top level", "object"]),
    ("empty", "", (1, 1), ["empty"]),
    ("blank", "  \n\n", (1, 1), ["empty"]),
    ("utf16", b"\xff\xfe{\x00}\x00", (1, 1), ["UTF-16"]),
]


def run(args, cwd, timeout=10):
    """perflogd with args: (exit status, stdout, stderr, seconds). A perflogd that does not exit on
    its own (started, or blocked) raises TimeoutExpired after `timeout` s: how soon it exits is
    printed, not asserted."""
    t0 = time.time()
    r = subprocess.run([PERFLOGD_ABS] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       errors="replace")
    return r.returncode, r.stdout, r.stderr, time.time() - t0


def leftovers(d):
    return sorted(f for f in os.listdir(d) if re.search(r"\.db(-wal|-shm|-journal)?$", f))


def one_case(name, cwd, args, want_rc, want_pos, want_text, file_name=None):
    rc, out, err, took = run(args, cwd)
    first = err.splitlines()[0] if err else ""
    ok = True
    problems = []
    if rc != want_rc:
        problems.append(f"exit {rc} (want {want_rc})")
    if out:
        problems.append(f"stdout not empty: {out[:80]!r}")
    if not first.startswith("perflogd: "):
        problems.append("stderr does not start with 'perflogd: '")
    if file_name:
        m = re.match(r"perflogd: (.+?):(\d+):(\d+): ", first)
        if want_pos is None:
            if not first.startswith(f"perflogd: {file_name}: "):
                problems.append(f"message does not start with the file name {file_name!r}")
        elif not m or m.group(1) != file_name:
            problems.append(f"message does not start with {file_name}:LINE:COLUMN")
        else:
            line, col = int(m.group(2)), int(m.group(3))
            if line != want_pos[0] or (want_pos[1] is not None and col != want_pos[1]):
                problems.append(f"position {line}:{col} (want {want_pos[0]}:{want_pos[1] or 'any'})")
        if len(err.splitlines()) != 1:
            problems.append(f"{len(err.splitlines())} lines on stderr (want 1)")
    for t in want_text:
        if t.lower() not in first.lower():
            problems.append(f"no {t!r} in the message")
    left = leftovers(cwd)
    if left:
        problems.append(f"database files created: {left}")
    ok = not problems
    check(ok, f"{name}: exit {rc}, {took * 1000:.0f} ms: {first}" + ("" if ok else "  <-- " + "; ".join(problems)))
    return ok


def check_config_cases(base, files, good):
    """--check-config: a FIFO (nobody writes to it) is refused at once, the command-line options are
    checked with the file, and every error of a file is listed, numbers as they were written."""
    cwd = os.path.join(base, "check-config")
    os.mkdir(cwd)
    fifo = os.path.join(files, "fifo.json")
    os.mkfifo(fifo)
    try:
        rc, out, err, took = run(["--check-config", fifo], cwd, timeout=10)
    except subprocess.TimeoutExpired:
        rc, out, err, took = None, "", "(still blocked after 10 s)", 10
    check(rc == 1 and f"perflogd: {fifo}: is a FIFO" in err and not out,
          f"--check-config FIFO: exit {rc} in {took * 1000:.0f} ms: {err.strip()}")
    rc, out, err, took = run(["--check-config", files], cwd)
    check(rc == 1 and "is a directory" in err, f"--check-config DIR: exit {rc}: {err.strip()}")

    rc, out, err, took = run(["--check-config", good, "--listen", "127.0.0.1:99999"], cwd)
    check(rc == 1 and "--listen" in err and "99999" in err and "ok" not in out,
          f"--check-config FILE --listen 127.0.0.1:99999: exit {rc}: {err.strip()}")
    rc, out, err, took = run(["--interval", "50", "--check-config", good], cwd)
    check(rc == 1 and "--interval" in err, f"--interval 50 --check-config FILE: exit {rc}: {err.strip()}")
    rc, out, err, took = run(["--check-config", good, "--interval", "250"], cwd)
    check(rc == 0 and out.strip() == f"{good}: ok", f"--check-config FILE --interval 250: exit {rc}: {out.strip()}")

    three = os.path.join(files, "three.json")
    with open(three, "w") as f:
        f.write('{\n  "interval_ms": 5e2,\n  "log_level": "loud",\n  "retention": {"raw_days": 0},\n'
                '  "db": "x.db"\n}\n')
    rc, out, err, took = run(["--check-config", three], cwd)
    lines = err.splitlines()
    want = [f"perflogd: {three}:2:3: key 'interval_ms': expected an integer from 100 to 3600000, got 5e2",
            f"perflogd: {three}:3:3: key 'log_level': ",
            f"perflogd: {three}:4:17: key 'retention.raw_days': "]
    check(rc == 1 and len(lines) == 3 and all(l.startswith(w) for l, w in zip(lines, want)),
          f"a file with three errors: three lines, in file order, 5e2 as written: {lines}")
    rc, out, err, took = run(["--config", three], cwd)
    check(rc == 2 and len(err.splitlines()) == 3 and not leftovers(cwd),
          f"the same file at start-up: exit {rc}, the three lines, no database")


def main():
    base = tempfile.mkdtemp(prefix="perflog-badconfig-")
    files = os.path.join(base, "files")
    os.mkdir(files)

    # control: a good file starts and samples (db in the case directory)
    good = os.path.join(files, "good.json")
    with open(good, "w") as f:
        f.write('{\n  "interval_ms": 500,\n  "log_level": "info",\n'
                '  "pdh_counters": ["\\\\System\\\\System Up Time"]\n}\n')
    d = Daemon(args=["--config", good], workdir=os.path.join(base, "good"))
    os.makedirs(d.dir, exist_ok=True)
    try:
        d.start(wait_ticks=2, timeout=10)
        check(True, "control: a good config file starts perflogd and it samples")
    except RuntimeError as e:
        check(False, f"control: a good config file starts perflogd: {e}")
    check(d.stop() == 0, "control: SIGTERM exit 0")
    n = d.log().count("pdh_counters (1 path) are PDH paths, read on Windows only; ignored here")
    check(n == 1, f"control: pdh_counters on Linux start with one warning saying they are ignored ({n})")

    for name, content, pos, texts in FILE_CASES:
        path = os.path.join(files, f"{name}.json")
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        cwd = os.path.join(base, name)
        os.mkdir(cwd)
        # relative FILE, as a user types it: the message must name it as given
        rel = os.path.relpath(path, cwd)
        one_case(name, cwd, ["--config", rel], 2, pos, texts, file_name=rel)

    # files that cannot be read as a config
    cwd = os.path.join(base, "missing")
    os.mkdir(cwd)
    missing = os.path.join(files, "does-not-exist.json")
    one_case("missing-file", cwd, ["--config", missing], 2, None, ["cannot open", "No such file"],
             file_name=missing)
    cwd = os.path.join(base, "directory")
    os.mkdir(cwd)
    one_case("directory", cwd, ["--config", files], 2, None, ["directory"], file_name=files)

    # command-line options
    cli_cases = [
        ("--interval abc", ["--interval", "abc"], ["--interval", "integer", '"abc"']),
        ("--interval 50", ["--interval", "50"], ["--interval", "100 to 3600000", '"50"']),
        ("--interval=1000.5", ["--interval=1000.5"], ["--interval", '"1000.5"']),
        ("--interval (no value)", ["--interval"], ["--interval", "needs a value"]),
        ("--bogus", ["--bogus"], ["unknown option", "--bogus"]),
        ("-x", ["-x"], ["unknown option", "-x"]),
        ("--listen nope", ["--listen", "nope"], ["--listen", '"nope"']),
        ("--listen :0", ["--listen", "127.0.0.1:0"], ["--listen", "port"]),
        ("--log-level loud", ["--log-level", "loud"], ["--log-level", '"loud"']),
        ("--db ''", ["--db", ""], ["--db"]),
        ("--config (no file)", ["--config"], ["--config", "FILE"]),
    ]
    for name, args, texts in cli_cases:
        cwd = os.path.join(base, "cli-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"))
        os.mkdir(cwd)
        one_case(name, cwd, args, 2, None, texts)

    # a good file with a bad option: the option wins the blame
    cwd = os.path.join(base, "good-file-bad-option")
    os.mkdir(cwd)
    one_case("good file + --interval 99", cwd, ["--config", good, "--interval", "99"], 2, None, ["--interval", '"99"'])

    check_config_cases(base, files, good)

    # not a config error: the database cannot be opened (its directory does not exist)
    cwd = os.path.join(base, "db-nodir")
    os.mkdir(cwd)
    rc, out, err, took = run(["--db", os.path.join(cwd, "no", "such", "dir", "x.db")], cwd)
    check(rc not in (0, None) and "no/such/dir/x.db" in err and not leftovers(cwd),
          f"unopenable database: exit {rc}, names the path, no files left: {err.strip()[:200]}")

    finish()


if __name__ == "__main__":
    main()
