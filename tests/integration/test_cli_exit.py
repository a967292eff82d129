#!/usr/bin/env python3
"""Exit codes of the client against the real perflogd: a counter path that matches nothing is
named on stderr and exits 1 in `data`, `export` (through the daemon and with --db), `counters`
and `typeperf`, while the paths that match still run; usage errors exit 2.

Needs PERFLOGD and PERFLOG_BUILD_DIR."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402
from test_cli_export import DIRTY, perflog, read_rows  # noqa: E402

NOPE_DISK = "\\PhysicalDisk(sdz)\\Disk Bytes/sec"
TYPO = "\\Memory\\Dirty Byte"


def test_data(d):
    rc, out, err = perflog(d.url, "data", "--from", "-5s", NOPE_DISK)
    check(rc == 1 and NOPE_DISK in err and not out,
          f"data with a path that matches nothing: named, no table, exit 1 (rc {rc}, "
          f"{err.strip()!r}, {len(out)} bytes out)")
    rc, out, err = perflog(d.url, "data", "--from", "-5s", DIRTY, TYPO)
    header = out.decode().splitlines()[0] if out else ""
    check(rc == 1 and TYPO in err and DIRTY in header and header.count("\\Memory") == 1,
          f"data with a valid and a typo path: the valid one's table, the typo named, exit 1 "
          f"(rc {rc}, {err.strip()!r})")
    rc, out, err = perflog(d.url, "data", "--from", "-5s", DIRTY)
    check(rc == 0 and DIRTY in out.decode(), f"data with a valid path exits 0 (rc {rc})")


def test_export(d, tmp):
    dest = os.path.join(tmp, "x.csv")
    rc, out, err = perflog(d.url, "export", "--from", "-5s", "-o", dest, TYPO)
    check(rc == 1 and TYPO in err and not os.path.exists(dest),
          f"export with only a typo path: named, no file, exit 1 (rc {rc}, {err.strip()!r})")
    rc, out, err = perflog(d.url, "export", "--from", "-5s", DIRTY, TYPO)
    header = read_rows(out)[0] if out else []
    check(rc == 1 and TYPO in err and len(header) == 2 and header[1].endswith(DIRTY),
          f"export with a valid and a typo path: the valid column, the typo named, exit 1 "
          f"(rc {rc}, {header}, {err.strip()!r})")
    d.stop()
    try:
        rc, out, err = perflog(d.url, "export", "--db", d.db, "--from", "-1h", TYPO)
        check(rc == 1 and TYPO in err and d.db in err and not out,
              f"export --db with only a typo path: named, exit 1 (rc {rc}, {err.strip()!r})")
        rc, out, err = perflog(d.url, "export", "--db", d.db, "--from", "-1h", DIRTY, TYPO)
        header = read_rows(out)[0] if out else []
        check(rc == 1 and TYPO in err and len(header) == 2,
              f"export --db with a valid and a typo path: the valid column, exit 1 "
              f"(rc {rc}, {header}, {err.strip()!r})")
        rc, out, err = perflog(d.url, "export", "--db", d.db, "--from", "-1h", DIRTY)
        check(rc == 0, f"export --db with a valid path exits 0 (rc {rc}, {err.strip()!r})")
    finally:
        d.start(wait_ticks=2)


def test_counters(d):
    rc, out, err = perflog(d.url, "counters", "\\Nope\\*")
    check(rc == 1 and "\\Nope\\*" in err and not out,
          f"counters '\\Nope\\*': named, exit 1 (rc {rc}, {err.strip()!r})")
    rc, out, err = perflog(d.url, "counters", "--json", "\\Nope\\*")
    check(rc == 1 and "\\Nope\\*" in err, f"counters --json '\\Nope\\*': exit 1 (rc {rc})")
    rc, out, err = perflog(d.url, "counters", "\\Memory\\*")
    check(rc == 0 and DIRTY in out.decode(), f"counters '\\Memory\\*' exits 0 (rc {rc})")


def test_usage(d):
    for args in (["data"], ["data", "--agg", "median", DIRTY], ["export"],
                 ["export", "--tz", "mars", DIRTY], ["counters", "a", "b"],
                 ["typeperf", "-si", "0", DIRTY], ["typeperf"], ["data", "--bogus", DIRTY]):
        rc, out, err = perflog(d.url, *args)
        check(rc == 2 and err, f"usage error {args}: exit 2 (rc {rc}, {err.strip()[:120]!r})")


def main():
    tmp = tempfile.mkdtemp(prefix="perflog-exit-")
    d = Daemon().start(wait_ticks=3)
    try:
        test_data(d)
        test_counters(d)
        test_usage(d)
        test_export(d, tmp)
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
