#!/usr/bin/env python3
"""The chunk tables' pages if a file's values were chunked in windows of W ticks: each object's
rows of obj_*_all up to tick UPTO, grouped per instance and window, coded with the extension's
chunk_encode into a new file of 2 KiB pages, appended in window order (as merges leave them on a
file written from its first tick); prints each chunk table's pages and unused bytes (dbstat), and
the bytes of the chunks themselves. PERFLOG_CHUNK_EXT names another build's extension (a codec
change measured on the same values).

usage: bench/chunk_windows.py DB UPTO W [W ...]   (needs build/perflog_chunk.so; /usr/bin/python3,
whose sqlite3 module can load extensions). DB is only read.
"""
import os, sqlite3, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
ext = os.environ.get("PERFLOG_CHUNK_EXT", os.path.join(here, "..", "build", "perflog_chunk"))
src, upto, windows = sys.argv[1], int(sys.argv[2]), [int(w) for w in sys.argv[3:]]
for w in windows:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"w{w}.db")
        c = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
        c.enable_load_extension(True)
        c.load_extension(ext)
        c.execute("ATTACH ? AS n", (out,))
        c.execute("PRAGMA n.page_size = 2048")
        tabs = [r[0] for r in c.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'obj_*_chunks'")]
        for t in tabs:
            sql = c.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (t,)).fetchone()[0]
            c.execute(sql.replace(f"CREATE TABLE {t}", f"CREATE TABLE n.{t}", 1))
            c.execute(f"CREATE INDEX n.{t}_last ON {t} (last_tick)")
            cols = [r[1] for r in c.execute(f"PRAGMA table_info({t})")][4:]
            enc = ", ".join(f"chunk_encode(tick, {x})" for x in cols)
            base = t[:-len("_chunks")]
            c.execute(f"""INSERT INTO n.{t} (inst, first_tick, last_tick, {", ".join(cols)})
                SELECT inst, min(tick), max(tick), {enc} FROM
                  (SELECT * FROM {base}_all WHERE tick <= {upto} ORDER BY (tick - 1) / {w}, inst, tick)
                GROUP BY (tick - 1) / {w}, inst ORDER BY (tick - 1) / {w}, inst""")
            c.commit()
        blob = 0
        for t in tabs:
            cols = [r[1] for r in c.execute(f"PRAGMA n.table_info({t})")][4:]
            blob += c.execute(f"SELECT total({' + '.join(f'length({x})' for x in cols)}) "
                              f"FROM n.{t}").fetchone()[0]
        total = 0
        for name, pages, unused in c.execute(
                "SELECT name, count(*), sum(unused) FROM dbstat('n') WHERE name GLOB 'obj_*_chunks' "
                "GROUP BY name ORDER BY name"):
            print(f"window {w}: {name} {pages} pages, {unused} bytes unused")
            total += pages
        print(f"window {w}: chunk tables {total} pages ({total * 2048} bytes) for ticks 1-{upto}, "
              f"{int(blob)} bytes of chunks")
        c.close()
