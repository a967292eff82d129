#!/usr/bin/env python3
"""The client's times against the real perflogd:

- each local-time form (`2026-12-01 19:55:00`, `2026-12-01T19:55`, `19:50`, `yesterday 19:00`,
  `today`) gives the instant it names in the client's zone, with TZ set to two different zones
  (seen in the from-after-to error, which prints both times as ISO 8601 with the zone's offset);
- a time that cannot be read is a usage error (exit 2), also `--from yesterday-ish`;
- one zone rule: `export --tz local` through a daemon running in another zone equals
  `export --db --tz local` for the same range, byte for byte.

Needs PERFLOGD and PERFLOG_BUILD_DIR."""
import datetime
import os
import re
import shutil
import sys
import tempfile
import time
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402
from test_cli_export import DIRTY, perflog  # noqa: E402

ZONES = ["Europe/Berlin", "America/Los_Angeles"]
ISO = re.compile(r"\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(?:Z|[+-]\d\d:\d\d))\)")


def instant_of_error(d, tz, form):
    """The --from instant the client read `form` as, from its from-after-to error."""
    rc, out, err = perflog(d.url, "data", "--from", form, "--to", "1000", DIRTY, TZ=tz)
    m = ISO.search(err)
    if rc != 2 or not m:
        return None, rc, err
    return datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")), rc, err


def expected(z, form, now):
    """The instant `form` names in zone z when the clock reads `now` (aware, in z)."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return {
        "2026-12-01 19:55:00": datetime.datetime(2026, 12, 1, 19, 55, tzinfo=z),
        "2026-12-01T19:55": datetime.datetime(2026, 12, 1, 19, 55, tzinfo=z),
        "2026-07-01 08:30": datetime.datetime(2026, 7, 1, 8, 30, tzinfo=z),  # summer time
        "19:50": today.replace(hour=19, minute=50),
        "yesterday 19:00": (today - datetime.timedelta(days=1)).replace(hour=19),
        "today": today,
        "2026-12-01T19:55:00Z": datetime.datetime(2026, 12, 1, 19, 55, tzinfo=datetime.timezone.utc),
    }[form]


FORMS = ["2026-12-01 19:55:00", "2026-12-01T19:55", "2026-07-01 08:30", "19:50",
         "yesterday 19:00", "today", "2026-12-01T19:55:00Z"]


def test_forms(d):
    for tz in ZONES:
        z = zoneinfo.ZoneInfo(tz)
        for form in FORMS:
            # the day may turn in z while the client runs: either day's reading is right
            before = expected(z, form, datetime.datetime.now(z))
            got, rc, err = instant_of_error(d, tz, form)
            after = expected(z, form, datetime.datetime.now(z))
            w = got if got in (before, after) else before
            check(got is not None and got == w and got.utcoffset() == w.utcoffset(),
                  f"TZ={tz}: '{form}' is {w.isoformat()} (the client read {got}; "
                  f"rc {rc}, {err.strip()[:160]!r})")


def test_bad_times(d):
    for form in ("yesterday-ish", "25:00", "2026-02-30 10:00", "today 7pm"):
        rc, out, err = perflog(d.url, "data", "--from", form, DIRTY)
        check(rc == 2 and form in err and "cannot read" in err,
              f"data --from '{form}': a usage error, exit 2 (rc {rc}, {err.strip()[:120]!r})")
    rc, out, err = perflog(d.url, "export", "--from", "soon", DIRTY)
    check(rc == 2 and "soon" in err, f"export --from soon: exit 2 (rc {rc})")
    rc, out, err = perflog(d.url, "data", "--from", "+5m", DIRTY, TZ="Europe/Berlin")
    check(rc == 2 and re.search(r"\+5m \(\d{4}-\d\d-\d\dT[0-9:.]+\+01:00\) is after", err),
          f"--from +5m: the error shows ISO 8601 times in the user's zone, not raw ms "
          f"({err.strip()!r})")


def test_zone_rule(d, tmp):
    """The daemon runs in Asia/Tokyo; the client in two other zones."""
    d.wait_ticks(d.tick_count() + 6)
    t1 = int(time.time()) - 1
    t0 = t1 - 5
    d.wait_ticks(d.tick_count() + 2)
    for tz in ZONES:
        rc, via, err = perflog(d.url, "export", "--tz", "local", "--from", str(t0), "--to",
                               str(t1), DIRTY, TZ=tz)
        rc2, direct, err2 = perflog(d.url, "export", "--db", d.db, "--tz", "local", "--from",
                                    str(t0), "--to", str(t1), DIRTY, TZ=tz)
        name = "W. Europe Standard Time" if tz == "Europe/Berlin" else "Pacific Standard Time"
        check(rc == 0 and rc2 == 0 and via == direct and name.encode() in via.split(b"\r\n")[0]
              and via.count(b"\r\n") >= 5,
              f"TZ={tz}, daemon in Asia/Tokyo: export --tz local through the daemon == export "
              f"--db --tz local ({via[:90]!r} vs {direct[:90]!r}; {err.strip()} {err2.strip()})")
        rc, via_utc, err = perflog(d.url, "export", "--tz", "utc", "--from", str(t0), "--to",
                                   str(t1), DIRTY, TZ=tz)
        rc2, direct_utc, err2 = perflog(d.url, "export", "--db", d.db, "--tz", "utc", "--from",
                                        str(t0), "--to", str(t1), DIRTY, TZ=tz)
        check(rc == 0 and via_utc == direct_utc and via_utc != via,
              f"TZ={tz}: export --tz utc through the daemon == from the file, and differs from "
              f"local")


def main():
    tmp = tempfile.mkdtemp(prefix="perflog-times-")
    d = Daemon(env={"TZ": "Asia/Tokyo"}).start(wait_ticks=3)
    try:
        test_forms(d)
        test_bad_times(d)
        test_zone_rule(d, tmp)
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
