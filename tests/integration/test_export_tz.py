#!/usr/bin/env python3
"""GET /api/v1/export?tz=ZONE against the real perflogd, compared with `perflog export --db`:

- tz=Europe/Paris, tz=+05:30, tz=-03:00 and a fixture zone: the daemon's CSV equals, byte for byte
  (every time, every value, the header's zone cell), the one `perflog export --db --tz ZONE`
  writes from the same database file over the same range;
- `perflog export --tz local` through the daemon (which sends the client's own zone, named by
  TZ) equals `perflog export --db --tz local` (the client's C library converting), while the
  daemon itself runs in UTC;
- the fixture zone, Test/Shift, is compiled with zic at the start of the test so that it changes
  from UTC+1 (TST) to UTC+2 with daylight saving time (TDT) a few seconds later: the exported range
  crosses that change, and each row's time is its UTC time plus one hour before it and two after;
- `--from`/`--to` typed as local times are read in the `--tz` zone (and errors show them in it);
- zones that are not zones, or that try to leave the tz database's directory, get a 400 JSON error
  naming the tz parameter, and `perflog export --tz` with one exits 2.

The daemon and the clients read the zones from a TZDIR of this test's own (the fixture zone, and
copies of Europe/Paris, America/New_York, Asia/Tokyo and Etc/UTC). Needs PERFLOGD, PERFLOG_BUILD_DIR and zic (libc-bin)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402
from test_cli_export import DIRTY, parse_time, perflog, read_rows  # noqa: E402

ZONEINFO = "/usr/share/zoneinfo"


def make_tzdir(shift_at):
    """A TZDIR with Test/Shift changing to daylight time at the Unix second shift_at."""
    tzdir = tempfile.mkdtemp(prefix="perflog-tz-")
    until = datetime.fromtimestamp(shift_at, timezone.utc).strftime("%Y %b %d %H:%M:%Su")
    src = os.path.join(tzdir, "shift.zi")
    with open(src, "w") as f:
        # standard time UTC+1, then from `until` the same with one hour of daylight saving
        f.write(f"Zone Test/Shift 1:00 - TST {until}\n\t\t1:00 1:00 TDT\n")
    subprocess.run(["zic", "-d", tzdir, src], check=True)
    for name in ("Europe/Paris", "Etc/UTC", "America/New_York", "Asia/Tokyo"):
        os.makedirs(os.path.join(tzdir, os.path.dirname(name)), exist_ok=True)
        shutil.copyfile(os.path.join(ZONEINFO, name), os.path.join(tzdir, name))
    return tzdir


def wait_stored(d, t_to_ms, timeout=15):
    """Until the database file has a tick at or after t_to_ms (the --db export sees the range)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if d.query("SELECT count(*) FROM ticks WHERE t_ms >= ?", (t_to_ms,))[0][0]:
            return True
        time.sleep(0.2)
    return False


def test_same_as_db(d, tzdir, frm, to):
    for zone in ("Europe/Paris", "Test/Shift", "+05:30", "-03:00", "utc"):
        rc1, daemon_csv, err1 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to, "--tz",
                                        zone, TZDIR=tzdir)
        rc2, db_csv, err2 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to, "--tz", zone,
                                    "--db", d.db, TZDIR=tzdir)
        rows = read_rows(daemon_csv)
        check(rc1 == 0 and rc2 == 0 and len(rows) >= 8 and daemon_csv == db_csv,
              f"--tz {zone}: the daemon's export equals export --db, byte for byte "
              f"({len(rows)} lines; rc {rc1}/{rc2} {err1.strip()[:120]!r} {err2.strip()[:120]!r})")


def test_local(d, tzdir, frm, to):
    for zone in ("Test/Shift", "Europe/Paris"):
        rc1, daemon_csv, err1 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to,
                                        TZDIR=tzdir, TZ=zone)
        rc2, db_csv, err2 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to, "--db", d.db,
                                    TZDIR=tzdir, TZ=zone)
        check(rc1 == 0 and rc2 == 0 and daemon_csv == db_csv and len(read_rows(db_csv)) >= 8,
              f"--tz local with TZ={zone}: the daemon's export (tz={zone} sent) equals "
              f"export --db --tz local (the C library's local time) "
              f"(rc {rc1}/{rc2}, {err1.strip()[:120]!r})")


def test_local_sent(d, tzdir, frm, to):
    """The zone the client sends is its own: a zone only the client has reaches the daemon, which
    names it; a zone without a name (a POSIX rule in TZ) is converted by the client instead."""
    client_dir = tempfile.mkdtemp(prefix="perflog-tz-client-")
    try:
        shutil.copytree(tzdir, client_dir, dirs_exist_ok=True)
        src = os.path.join(client_dir, "only.zi")
        with open(src, "w") as f:
            f.write("Zone Test/ClientOnly 3:00 - TCO\n")
        subprocess.run(["zic", "-d", client_dir, src], check=True)
        rc, out, err = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to,
                               TZDIR=client_dir, TZ="Test/ClientOnly")
        check(rc == 1 and "Test/ClientOnly" in err and not out,
              f"--tz local sends the client's zone name: a daemon without that zone names it "
              f"(rc {rc}, {err.strip()[:160]!r})")
    finally:
        shutil.rmtree(client_dir, ignore_errors=True)
    rule = "XST-3XDT,M3.5.0,M10.5.0/3"
    rc1, daemon_csv, err1 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to, TZ=rule)
    rc2, db_csv, err2 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to, "--db", d.db,
                                TZ=rule)
    check(rc1 == 0 and rc2 == 0 and daemon_csv == db_csv and b"(XST)(-180)" in daemon_csv,
          f"TZ={rule} (no name to send): the client converts, equal to export --db "
          f"(rc {rc1}/{rc2}, {daemon_csv[:60]!r})")


def test_range_in_zone(d, tzdir, frm, to):
    """--from/--to typed as local times are read in the --tz zone, whatever the client's TZ."""
    from zoneinfo import ZoneInfo
    for zone in ("Europe/Paris", "America/New_York"):
        def wall(t):
            return datetime.fromtimestamp(int(t), ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")
        rc1, by_wall, err1 = perflog(d.url, "export", DIRTY, "--from", wall(frm), "--to", wall(to),
                                     "--tz", zone, TZDIR=tzdir, TZ="Asia/Tokyo")
        rc2, by_unix, err2 = perflog(d.url, "export", DIRTY, "--from", frm, "--to", to,
                                     "--tz", zone, TZDIR=tzdir, TZ="Asia/Tokyo")
        check(rc1 == 0 and by_wall == by_unix and len(read_rows(by_unix)) >= 8,
              f"--tz {zone} --from '{wall(frm)}': read in {zone}, the same rows as Unix seconds "
              f"(rc {rc1}, {err1.strip()[:160]!r})")
    rc, out, err = perflog(d.url, "export", DIRTY, "--from", "2026-12-01 12:00", "--to",
                           "2026-12-01 11:00", "--tz", "Europe/Paris")
    check(rc == 2 and "2026-12-01T12:00:00.000+01:00" in err,
          f"--tz Europe/Paris: an error shows the times in that zone ({err.strip()[:200]!r})")


def test_dst_crossing(d, tzdir, frm, to, shift_ms):
    q = f"/api/v1/export?counter={urllib.parse.quote(DIRTY)}&from={frm}&to={to}"
    s1, _, local = d.http(q + "&tz=Test%2FShift")
    s2, _, utc = d.http(q + "&tz=utc")
    lrows, urows = read_rows(local)[1:], read_rows(utc)[1:]
    before = after = bad = 0
    for lr, ur in zip(lrows, urows):
        t = parse_time(ur[0])
        shift = parse_time(lr[0]) - t
        want = 7200_000 if t >= shift_ms else 3600_000
        before += t < shift_ms
        after += t >= shift_ms
        bad += shift != want or lr[1:] != ur[1:]
    check(s1 == 200 and s2 == 200 and len(lrows) == len(urows) and before >= 2 and after >= 2
          and bad == 0,
          f"tz=Test/Shift across its change to daylight time: UTC+1 before, UTC+2 after, same "
          f"values ({before} rows before, {after} after, {bad} wrong)")
    header = read_rows(local)[0][0]
    check(header == "(PDH-CSV 4.0) (Test/Shift)(-60)",
          f"the header's zone cell is the zone at the first row, before the change ({header!r})")


def test_bad_zones(d):
    q = f"/api/v1/export?counter={urllib.parse.quote(DIRTY)}&from=-5s&tz="
    for zone in ("../../../../etc/passwd", "/etc/passwd", "Europe/../../../../etc/shadow",
                 "Europe%2F..%2F..%2F..%2Fetc%2Fpasswd", "zone1970.tab", "Mars/Olympus",
                 "%2B25:00", "05:30", "right/UTC", "Europe", "CET%0A"):
        status, headers, body = d.http(q + zone)
        try:
            msg = json.loads(body)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            msg = None
        check(status == 400 and msg is not None and msg.startswith("tz: ")
              and b"root:" not in body,
              f"tz={zone}: 400 with a JSON error naming tz ({status}, {body[:120]!r})")
    rc, out, err = perflog(d.url, "export", DIRTY, "--tz", "../../etc/passwd")
    check(rc == 2 and "--tz" in err and not out,
          f"perflog export --tz ../../etc/passwd: exit 2 naming --tz (rc {rc}, {err.strip()!r})")


def main():
    shift_at = int(time.time()) + 8
    tzdir = make_tzdir(shift_at)
    d = Daemon(env={"TZ": "UTC", "TZDIR": tzdir}).start(wait_ticks=2)
    try:
        status, health = d.get_json("/api/v1/health")
        check(status == 200 and health.get("tz_database") is True,
              f"health says the daemon reads zone names (tz_database {health.get('tz_database')})")
        while time.time() < shift_at + 6:
            time.sleep(0.5)
        frm, to = str(shift_at - 6), str(shift_at + 5)
        check(wait_stored(d, (shift_at + 5) * 1000), "the range is in the database file")
        test_same_as_db(d, tzdir, frm, to)
        test_local(d, tzdir, frm, to)
        test_local_sent(d, tzdir, frm, to)
        test_range_in_zone(d, tzdir, frm, to)
        test_dst_crossing(d, tzdir, frm, to, shift_at * 1000)
        test_bad_zones(d)
    finally:
        d.stop()
        shutil.rmtree(tzdir, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
