#!/usr/bin/env python3
"""After large answers, perflogd's memory returns near its idle level.

A daemon samples the real machine every 100 ms, so that the last 10 minutes of the disk, processor,
memory and interface counters make a large /api/v1/data answer within seconds. Over real HTTP:

1. /api/v1/health has memory.heap_in_use_bytes (glibc's figure: bytes malloc has handed out).
2. Idle level: after one large answer (32 KiB or more, web/http.c TRIM_BODY_BYTES, so the writer
   trims the heap after it; the first also opens the read connection the pool keeps), the heap in
   use and the process's anonymous resident memory (RssAnon, /proc/PID/status) are read.
3. Three clients ask for the large answer four times each, at once: every answer is 200. The HTTP
   workers then hold more than one read connection, each with its parsed schema and page cache.
4. Once the pool's spare connections have been idle past their 10 s (web/http.c SPARE_READER_MS),
   four more answers, one after another: the heap in use is back within 768 KiB of the idle level
   (the spare read connections are closed, the kept one's page cache is emptied after each
   request), and the anonymous resident memory exceeds the heap in use by less than 3 MiB (freed
   memory goes back to the system instead of staying in per-thread arenas at its peak; glibc's
   malloc only: a sanitizer build, whose allocator keeps freed memory on purpose, says so and
   does not make this check). In a sanitizer build the heap in use is the sanitizer's count.
5. /api/v1/health has memory.writer_sqlite: what SQLite holds for the writer's connection. Its
   prepared statements take under 1 MiB: the roll-up statements are prepared when used, and with
   running roll-ups the batch ones are finalized once the batch has caught up (storage/db.c; all
   of them prepared at open held 1.9 MiB).
Memory figures only; no time is measured.
"""
import subprocess
import threading
import time
import urllib.parse

from perflogtest import PERFLOGD, Daemon, check, finish

COUNTERS = ["\\PhysicalDisk(*)\\*", "\\Processor(*)\\*", "\\Memory\\*",
            "\\Network Interface(*)\\*"]
DATA = "/api/v1/data?" + "&".join("counter=" + urllib.parse.quote(c) for c in COUNTERS) + \
    "&from=now-600&to=now"
SPARE_S = 10  # web/http.c SPARE_READER_MS
HEAP_MARGIN = 768 << 10
HELD_MAX = 3 << 20
STMT_MAX = 1 << 20


def rss_anon(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) << 10
    return -1


def sanitized(binary):
    """The binary links ASan's runtime (ldd), whose allocator replaces glibc's."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=10).stdout
    return "libasan.so" in out or "libtsan.so" in out


def heap(d):
    return d.get_json("/api/v1/health")[1]["memory"]["heap_in_use_bytes"]


def settle(d):
    """The writer gives freed memory back at its idle point, after its next commit."""
    d.wait_ticks(d.tick_count() + 25, timeout=30)


def main():
    d = Daemon(args=["--interval", "100"]).start(wait_ticks=1)
    try:
        d.wait_ticks(100, timeout=60)
        st, _, body = d.http(DATA)
        check(st == 200 and len(body) >= 32768,
              f"a large /api/v1/data answer: status {st}, {len(body)} bytes")
        h = heap(d)
        check(isinstance(h, int) and h > 0, f"/api/v1/health memory.heap_in_use_bytes: {h}")
        if not isinstance(h, int):
            return
        settle(d)
        h0, a0 = heap(d), rss_anon(d.proc.pid)
        print(f"idle: heap in use {h0 >> 10} KiB, RssAnon {a0 >> 10} KiB", flush=True)

        statuses = []

        def client():
            for _ in range(4):
                statuses.append(d.http(DATA)[0])

        clients = [threading.Thread(target=client) for _ in range(3)]
        for c in clients:
            c.start()
        peak = heap(d)
        for c in clients:
            c.join()
        check(statuses == [200] * 12, f"12 answers to 3 clients at once: {statuses}")
        print(f"during the burst: heap in use {peak >> 10} KiB", flush=True)

        time.sleep(SPARE_S + 1)
        for _ in range(4):
            d.http(DATA)
        settle(d)
        h1, a1 = heap(d), rss_anon(d.proc.pid)
        print(f"after: heap in use {h1 >> 10} KiB, RssAnon {a1 >> 10} KiB", flush=True)
        check(h1 - h0 < HEAP_MARGIN,
              f"the heap in use is back near its idle level: {(h1 - h0) >> 10:+d} KiB "
              f"(< {HEAP_MARGIN >> 10} KiB)")
        if sanitized(PERFLOGD):
            # ASan's allocator keeps freed memory in quarantine on purpose, and its shadow is
            # anonymous memory too: the check is glibc's malloc's, so it is not made (nor counted).
            print("not checked: memory held beyond the heap (a sanitizer build)", flush=True)
        else:
            check(a1 - h1 < HELD_MAX,
                  f"resident anonymous memory beyond the heap in use: {(a1 - h1) >> 10} KiB "
                  f"(< {HELD_MAX >> 10} KiB)")
        ws = d.get_json("/api/v1/health")[1]["memory"].get("writer_sqlite")
        print(f"writer's connection: {ws}", flush=True)
        check(isinstance(ws, dict) and all(isinstance(ws.get(k), int) for k in
                                           ("statements_bytes", "schema_bytes", "cache_bytes")),
              f"/api/v1/health memory.writer_sqlite: {ws}")
        if isinstance(ws, dict) and isinstance(ws.get("statements_bytes"), int):
            check(0 < ws["statements_bytes"] < STMT_MAX,
                  f"the writer's prepared statements: {ws['statements_bytes'] >> 10} KiB "
                  f"(< {STMT_MAX >> 10} KiB)")
    finally:
        rc = d.stop()
    check(rc == 0, f"SIGTERM: exit {rc}")
    finish()


if __name__ == "__main__":
    main()
