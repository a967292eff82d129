#!/usr/bin/env python3
"""The minute roll-ups' cells: what SQLite stores, against two denser forms of the same minutes.

usage: bench/rollup_cells.py DB [--ext PATH]   (PATH: perflog_chunk without .so; default
                                                $PERFLOG_BUILD_DIR or ./build, /perflog_chunk)

For every obj_*_1m table of DB (a copy, or a daemon's file read-only), the bytes of its counter
cells (cK_min, cK_avg, cK_max) as SQLite's record format holds them: one serial-type byte each in
the row's header, plus 0 bytes for NULL, 0 and 1, 1-6 bytes for an integral value (a whole REAL
in a REAL column is stored as an integer), 8 for a REAL with a fraction. Against:

  gorilla     each column of each instance over its minutes in bucket order, coded as Facebook's
              Gorilla codes doubles (the first value in 64 bits, then the XOR with the previous
              one: 1 bit when equal, else 2 control bits and the meaningful bits, with a 5+6-bit
              window header when the window changes; NULL as 1 bit): a compressed tier of the
              roll-ups as they are;
  field sums  cK_min and cK_max as they are, and in place of the averages the raw fields'
              integer sums over the minute and the sum of its ticks' interval_ms (from which
              every counter's time-weighted average is its formula over the sums, and a gauge's
              mean is the sum over n). Read from the raw ticks (obj_*_all, ticks_all): only the
              minutes whose ticks are still kept count. Sums are counted at SQLite's integer
              sizes; a field NULL in some of a minute's ticks but not all would need a count of
              its own, which the "mixed" figure counts.

Prints bytes per table and in all, and each form's share of what is stored. Header bytes of the
row, the key (bucket_ms, inst) and n are the same in every form and are not counted.
"""
import argparse, os, sqlite3, struct, sys


def integer_bytes(i):
    """Bytes of an integer in a SQLite record: serial-type byte + its 0-8 content bytes."""
    if i in (0, 1):
        return 1
    for n, lim in ((1, 2**7), (2, 2**15), (3, 2**23), (4, 2**31), (6, 2**47)):
        if -lim <= i < lim:
            return 1 + n
    return 9


def cell_bytes(v):
    """Bytes of one value in a REAL column: a whole one is stored as an integer."""
    if v is None:
        return 1
    if float(v).is_integer() and -(2**47) <= v < 2**47:
        return integer_bytes(int(v))
    return 9


def int_bytes(v):
    """Bytes of one value in an INTEGER column (a REAL sum only on overflow)."""
    if v is None:
        return 1
    return 9 if isinstance(v, float) else integer_bytes(v)


def gorilla_bytes(vals):
    bits, prev, lead, trail = 0, None, None, None
    for v in vals:
        if v is None:
            bits += 1
            continue
        x = struct.unpack("<Q", struct.pack("<d", float(v)))[0]
        if prev is None:
            bits += 64
        else:
            d = x ^ prev
            if d == 0:
                bits += 1
            else:
                lz = min(64 - d.bit_length(), 31)
                tz = (d & -d).bit_length() - 1
                if lead is not None and lz >= lead and tz >= trail:
                    bits += 2 + 64 - lead - trail
                else:
                    bits += 2 + 5 + 6 + 64 - lz - tz
                    lead, trail = lz, tz
        prev = x
    return bits / 8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    build = os.environ.get("PERFLOG_BUILD_DIR", "build")
    ap.add_argument("--ext", default=os.path.join(build, "perflog_chunk"))
    a = ap.parse_args()
    db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    db.enable_load_extension(True)
    db.load_extension(os.path.abspath(a.ext))
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'obj_*_1m' ORDER BY 1")]
    tot = {"stored": 0, "gorilla": 0.0, "rows": 0, "with_raw": 0, "stored_raw": 0, "sums": 0,
           "mixed": 0}
    print(f"{'table':<20} {'rows':>5} {'stored':>8} {'gorilla':>8} | {'rows*':>5} {'stored*':>8} "
          f"{'sums*':>8} {'mixed':>5}")
    for t in tables:
        raw = t[:-3]
        cols = [r[0] for r in db.execute(f"SELECT name FROM pragma_table_info('{t}')")]
        cells = [c for c in cols if c[0] == "c" and c[-4:] in ("_min", "_avg", "_max")]
        rows = db.execute(f"SELECT * FROM {t} ORDER BY inst, bucket_ms").fetchall()
        stored = sum(cell_bytes(r[cols.index(c)]) for r in rows for c in cells)
        by_inst = {}
        for r in rows:
            by_inst.setdefault(r[cols.index("inst")], []).append(r)
        gor = sum(gorilla_bytes([r[cols.index(c)] for r in rs]) for rs in by_inst.values()
                  for c in cells)
        fields = [r[0] for r in db.execute(f"SELECT name FROM pragma_table_info('{raw}')")
                  if r[0] not in ("tick", "inst")]
        sel = ", ".join(f"sum({f}), count({f})" for f in fields)
        q = (f"SELECT {sel}, sum(t.interval_ms), count(*) FROM {raw}_all o JOIN ticks_all t "
             f"ON t.id = o.tick WHERE o.inst = ? AND t.t_ms >= ? AND t.t_ms < ?")
        nraw = stored_raw = sums = mixed = 0
        for r in rows:
            s = db.execute(q, (r[cols.index("inst")], r[0], r[0] + 60000)).fetchone()
            if not s[-1]:
                continue  # the minute's ticks are gone (retention)
            nraw += 1
            kept = sum(cell_bytes(r[cols.index(c)]) for c in cells if not c.endswith("_avg"))
            stored_raw += kept + sum(cell_bytes(r[cols.index(c)]) for c in cells
                                     if c.endswith("_avg"))
            sums += kept + int_bytes(s[-2])
            for i in range(len(fields)):
                sums += int_bytes(s[2 * i])
                if 0 < s[2 * i + 1] < s[-1]:
                    mixed += 1
        print(f"{t:<20} {len(rows):>5} {stored:>8} {gor:>8.0f} | {nraw:>5} {stored_raw:>8} "
              f"{sums:>8} {mixed:>5}")
        for k, v in (("stored", stored), ("gorilla", gor), ("rows", len(rows)), ("with_raw", nraw),
                     ("stored_raw", stored_raw), ("sums", sums), ("mixed", mixed)):
            tot[k] += v
    print(f"{'all':<20} {tot['rows']:>5} {tot['stored']:>8} {tot['gorilla']:>8.0f} | "
          f"{tot['with_raw']:>5} {tot['stored_raw']:>8} {tot['sums']:>8} {tot['mixed']:>5}")
    if tot["stored"]:
        print(f"gorilla / stored: {tot['gorilla'] / tot['stored']:.3f}")
    if tot["stored_raw"]:
        print(f"field sums / stored (the {tot['with_raw']} rows whose ticks are kept, *): "
              f"{tot['sums'] / tot['stored_raw']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
