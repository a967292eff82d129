#!/usr/bin/env python3
"""The HTTP request path under hostile clients (docs/configuration.md: header_timeout_s,
max_connections_per_ip; docs/api.md: errors).

1. Memory: 20 000 requests `GET /api/v1/health?` + 7000 `&` (a query libmicrohttpd cannot hold in
   its per-connection pool) and 2000 requests with 3000 headers (a connection libmicrohttpd drops
   while reading headers). Each query request gets an answer; perflogd's RSS grows by less than
   2 MiB over them (8 MiB under TSan, see tsan_build); an ASan build reports no leak at exit
   (Daemon.stop checks the log).
2. Malformed requests: each case states its outcome: a JSON 4xx from perflog, libmicrohttpd's own
   error page (it answers before any of perflog's code runs, so the body cannot be JSON), or a
   close without an answer (after header_timeout_s, where libmicrohttpd accepts no answer).
3. Slowloris: 256 connections from 127.0.0.2..127.0.0.9 (32 per address, the default per-address
   limit; all of 127.0.0.0/8 is loopback) each send a header byte every 0.5 s. A 33rd connection
   from one of those addresses is refused; health checks from 127.0.0.1 answer 200 in under 1 s
   throughout (over max_connections 256, on the reserve kept for health); every slowloris
   connection is closed by the server within header_timeout_s (+2 s) although it never went idle;
   no tick is missed. SIGTERM with all of that open exits 0 before header_timeout_s could have cut
   them (it does not wait for them).
4. `listen [::]` is dual-stack: an IPv4 client reaches it.
"""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, ticks  # noqa: E402

# An ASan build keeps freed memory in quarantine (256 MiB by default), which would hide the RSS
# figure; with no quarantine its RSS tracks what is really held. Harmless for a release build.
ASAN_ENV = {"ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") +
                             ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0").lstrip(":")}

def tsan_build():
    """ThreadSanitizer's shadow memory grows with every heap address the allocator hands out, so
    under TSan the RSS bound is 8 MiB (the leak this catches was 7 KB a request: 140 MB)."""
    cache = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "CMakeCache.txt")
    try:
        with open(cache) as f:
            return "PERFLOG_TSAN:BOOL=ON" in f.read()
    except OSError:
        return False


RSS_BOUND_KIB = 8192 if tsan_build() else 2048

AMPS = b"GET /api/v1/health?" + b"&" * 7000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
MANY_HEADERS = (b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n" +
                b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 40) for i in range(3000)) + b"\r\n")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def exchange(port, data, timeout=10, src="127.0.0.1"):
    """Send data on a new connection, read until the server closes or a full answer arrived.
    Returns (status or None, headers dict, body bytes, seconds until the server closed or None)."""
    t0 = time.time()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src != "127.0.0.1":  # bind() before connect() is slow with thousands of ports in TIME_WAIT
        s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    buf, closed_after = b"", None
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        while True:
            c = s.recv(65536)
            if not c:
                closed_after = time.time() - t0
                break
            buf += c
            head, sep, body = buf.partition(b"\r\n\r\n")
            if sep:
                hd = {k.strip().lower(): v.strip() for k, _, v in
                      (ln.decode("latin1").partition(":") for ln in head.split(b"\r\n")[1:])}
                if hd.get("content-length", "").isdigit() and len(body) >= int(hd["content-length"]):
                    break
    except ConnectionResetError:
        closed_after = time.time() - t0
    except socket.timeout:
        pass
    s.close()
    if not buf.startswith(b"HTTP/1."):
        return None, {}, buf, closed_after
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    hd = {k.strip().lower(): v.strip() for k, _, v in (ln.decode("latin1").partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), hd, body, closed_after


def is_json_error(hd, body, code=None):
    import json
    if not hd.get("content-type", "").startswith("application/json"):
        return False
    try:
        e = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(e.get("message"), str) and (code is None or e.get("code") == code)


def health_ok(d, what):
    st, _, _, _ = exchange(d.port, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    check(st == 200, f"{what} ({st})")


def test_memory():
    d = Daemon(env=ASAN_ENV).start(wait_ticks=2)
    try:
        for _ in range(500):  # warm-up: the pool threads' readers, malloc's arenas
            exchange(d.port, AMPS)
        r0 = rss_kib(d.proc.pid)
        statuses = {}
        t0 = time.time()
        for _ in range(20000):
            st, hd, body, _ = exchange(d.port, AMPS)
            k = st if st == 200 and body.startswith(b"{") else (st, body[:60])
            statuses[k] = statuses.get(k, 0) + 1
        r1 = rss_kib(d.proc.pid)
        print(f"20000 requests of 7000 '&' in {time.time() - t0:.1f} s: answers {statuses}", flush=True)
        check(statuses == {200: 20000}, f"every request with 7000 '&' gets a 200 JSON answer ({statuses})")
        check(r1 - r0 < RSS_BOUND_KIB, f"RSS grows by less than {RSS_BOUND_KIB // 1024} MiB over "
                                       f"20000 such requests ({r0} KiB -> {r1} KiB, +{r1 - r0} KiB)")
        outcomes = {}
        for _ in range(2000):
            st, hd, body, _ = exchange(d.port, MANY_HEADERS)
            outcomes[st] = outcomes.get(st, 0) + 1
        r2 = rss_kib(d.proc.pid)
        # libmicrohttpd's pool cannot hold 3000 headers: it answers its own 431 (or closes).
        check(set(outcomes) <= {431, None}, f"3000 headers: libmicrohttpd's 431 or a close ({outcomes})")
        check(r2 - r1 < RSS_BOUND_KIB, f"RSS grows by less than {RSS_BOUND_KIB // 1024} MiB over "
                                       f"2000 requests dropped while their headers were read "
                                       f"({r1} KiB -> {r2} KiB)")
        health_ok(d, "health still answers 200")
    finally:
        rc = d.stop()
    check(rc == 0, f"perflogd exits 0 (an ASan build: with no leak report) ({rc})")
    print(f"FIGURE leak test RSS: before {r0} KiB, after 20000 requests {r1} KiB, after 2000 more "
          f"{r2} KiB", flush=True)


H = b"Host: x\r\n"
# (name, request, outcome): ("json", status, code) | ("mhd", status) | ("close",)
MALFORMED = [
    ("7000 empty parameters", AMPS, ("ok", 200)),
    ("1000 parameters", b"GET /api/v1/health?" + b"&".join(b"a%d=1" % i for i in range(1000)) +
     b" HTTP/1.1\r\n" + H + b"\r\n", ("json", 400, "bad_query")),
    ("920 parameters over max_url_bytes", b"GET /api/v1/counters?" +
     b"&".join(b"match=%d" % i for i in range(920)) + b" HTTP/1.1\r\n" + H + b"\r\n",
     ("json", 414, "uri_too_long")),
    ("Transfer-Encoding: gzip", b"POST /api/v1/runs HTTP/1.1\r\n" + H +
     b"Transfer-Encoding: gzip\r\n\r\nabc", ("json", 400, "bad_transfer_encoding")),
    ("Transfer-Encoding: chunked, chunked", b"POST /api/v1/runs HTTP/1.1\r\n" + H +
     b"Transfer-Encoding: chunked, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
     ("json", 400, "bad_transfer_encoding")),
    ("TE: chunked, chunked (a header about the answer, ignored)", b"GET /api/v1/health HTTP/1.1\r\n" +
     H + b"TE: chunked, chunked\r\n\r\n", ("ok", 200)),
    # libmicrohttpd reads the 2^64-1 byte chunk and gives no way to answer in the middle of a
    # body: the header timeout ends it.
    ("chunk size ffffffffffffffff", b"POST /api/v1/runs HTTP/1.1\r\n" + H +
     b"Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc\r\n0\r\n\r\n", ("close",)),
    # The request line is refused by libmicrohttpd's version check before any callback runs.
    ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", ("mhd", 505)),
    ("HTTP/9.9", b"GET /api/v1/health HTTP/9.9\r\n" + H + b"\r\n", ("mhd", 505)),
    ("a 40 KB header (over half of libmicrohttpd's 64 KiB pool)", b"GET /api/v1/health HTTP/1.1\r\n" + H +
     b"X-Big: " + b"a" * 40000 + b"\r\n\r\n", ("json", 431, "headers_too_large")),
    ("a 100 KB header", b"GET /api/v1/health HTTP/1.1\r\n" + H + b"X-Big: " + b"a" * 100000 +
     b"\r\n\r\n", ("mhd", 431)),
    ("3000 headers", MANY_HEADERS, ("mhd", 431)),
    ("URL of 20 000 bytes", b"GET /api/v1/health?x=" + b"a" * 20000 + b" HTTP/1.1\r\n" + H + b"\r\n",
     ("json", 414, "uri_too_long")),
    ("URL of 100 000 bytes (over libmicrohttpd's buffer)", b"GET /api/v1/health?x=" + b"a" * 100000 +
     b" HTTP/1.1\r\n" + H + b"\r\n", ("mhd", 414)),
]


def test_malformed():
    d = Daemon(config={"header_timeout_s": 3}, env=ASAN_ENV).start(wait_ticks=2)
    try:
        for name, data, want in MALFORMED:
            st, hd, body, closed = exchange(d.port, data, timeout=15)
            got = f"{st} {hd.get('content-type')} {body[:100]!r}, closed after {closed}"
            if want[0] == "ok":
                check(st == want[1] and hd.get("content-type", "").startswith("application/json"),
                      f"{name}: {want[1]} JSON ({got})")
            elif want[0] == "json":
                check(st == want[1] and is_json_error(hd, body, want[2]),
                      f"{name}: JSON {want[1]} {want[2]} ({got})")
            elif want[0] == "mhd":
                check(st == want[1], f"{name}: libmicrohttpd's own {want[1]} page, before perflog's "
                                     f"code runs ({got})")
            else:
                check(st is None and closed is not None and closed < 3 + 2.5,
                      f"{name}: closed without an answer within header_timeout_s 3 (+2.5 s) ({got})")
        health_ok(d, "health answers 200 after the malformed requests")
    finally:
        rc = d.stop()
    check(rc == 0, f"perflogd exits 0 after the malformed requests ({rc})")


class Slowloris:
    """n connections per source address, each sending a header byte every `every` s."""

    def __init__(self, port, sources, n, every=0.5):
        self.port, self.every = port, every
        self.socks = []  # [socket, opened_at, closed_by_server_at]
        for src in sources:
            for _ in range(n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.bind((src, 0))
                s.connect(("127.0.0.1", port))
                s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                s.setblocking(False)
                self.socks.append([s, time.time(), None])
        self.stop = False
        self.th = threading.Thread(target=self.run)
        self.th.start()

    def run(self):
        while not self.stop:
            now = time.time()
            for e in self.socks:
                if e[2] is not None:
                    continue
                try:
                    if e[0].recv(4096) == b"":
                        e[2] = now
                        continue
                except BlockingIOError:
                    pass
                except OSError:
                    e[2] = now
                    continue
                try:
                    e[0].send(b"s")
                except OSError:
                    e[2] = now
            time.sleep(self.every)

    def open_count(self):
        return sum(1 for e in self.socks if e[2] is None)

    def close(self):
        self.stop = True
        self.th.join()
        for e in self.socks:
            e[0].close()


def test_slowloris():
    timeout_s = 8
    d = Daemon(config={"header_timeout_s": timeout_s}, env=ASAN_ENV).start(wait_ticks=2)
    sl = None
    try:
        _, h0 = d.get_json("/api/v1/health")
        t0 = time.time()
        sources = [f"127.0.0.{i}" for i in range(2, 10)]
        sl = Slowloris(d.port, sources, 32)
        time.sleep(0.5)
        check(sl.open_count() == 256, f"256 slowloris connections open from 8 addresses ({sl.open_count()})")
        st, _, _, closed = exchange(d.port, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n",
                                    timeout=5, src="127.0.0.2")
        check(st is None and closed is not None,
              f"a 33rd connection from 127.0.0.2 is closed unanswered (max_connections_per_ip 32) "
              f"({st}, closed after {closed})")
        lat = []
        while time.time() - t0 < timeout_s - 2:
            t1 = time.time()
            st, hd, body, _ = exchange(d.port, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
            lat.append((time.time() - t1, st))
            time.sleep(0.2)
        ok = [x for x, st in lat if st == 200]
        worst = max(x for x, _ in lat)
        p99 = sorted(x for x, _ in lat)[max(0, int(len(lat) * 0.99) - 1)]
        check(len(ok) == len(lat) and worst < 1,
              f"{len(lat)} health checks with 256 slowloris connections open: all 200, in under 1 s "
              f"(worst {worst * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, statuses {set(s for _, s in lat)})")
        print(f"FIGURE health-check p99 during the slowloris test: {p99 * 1000:.1f} ms "
              f"(worst {worst * 1000:.1f} ms, {len(lat)} checks)", flush=True)
        still = sl.open_count()
        check(still == 256, f"the slowloris connections were still open while health was checked ({still})")
        deadline = t0 + timeout_s + 3
        while time.time() < deadline and sl.open_count():
            time.sleep(0.2)
        cut = [e[2] - e[1] for e in sl.socks if e[2] is not None]
        check(len(cut) == 256 and max(cut) < timeout_s + 2.5,
              f"every slowloris connection is closed by the server after header_timeout_s {timeout_s} "
              f"(+2.5 s) although it kept sending ({len(cut)} closed, the last after "
              f"{max(cut) if cut else -1:.1f} s, the first after {min(cut) if cut else -1:.1f} s)")
        check(min(cut) >= timeout_s - 0.5 if cut else False,
              "no slowloris connection was cut before header_timeout_s")
        sl.close()
        t_end = time.time()
        time.sleep(2.5)
        _, h1 = d.get_json("/api/v1/health")
        check(h1["missed"] == h0["missed"], f"no tick missed ({h0['missed']} -> {h1['missed']})")
        rows = ticks(d, int(t0 * 1000), int(t_end * 1000))
        # "not missed" is the demand here; the jitter bound of a tick is test_scheduler's
        gaps = [(a[0], b[0]) for a, b in zip(rows, rows[1:]) if b[0] - a[0] > 1500]
        check(len(rows) >= int(t_end - t0) - 1 and not gaps and not any(r[2] for r in rows),
              f"{len(rows)} ticks over the slowloris window, none missing (gaps {gaps[:4]})")
        # SIGTERM while 256 slowloris connections are open again
        sl = Slowloris(d.port, sources, 32)
        time.sleep(0.5)
        t1 = time.time()
        d.signal(15)
        try:
            d.proc.wait(30)
        except Exception:  # noqa: BLE001
            pass
        took = time.time() - t1
        # The bound is the behaviour's, not the host's speed: a daemon that waited for these
        # connections would exit only once header_timeout_s had cut them.
        print(f"SIGTERM with 256 slowloris connections open: exit after {took:.2f} s", flush=True)
        check(d.proc.returncode == 0 and took < timeout_s,
              f"SIGTERM with 256 slowloris connections open: exit 0 before header_timeout_s "
              f"{timeout_s} could cut them ({d.proc.returncode}, {took:.2f} s)")
    finally:
        if sl:
            sl.close()
        d.stop()


def test_dual_stack():
    port = None
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.bind(("::", 0))
        port = s.getsockname()[1]
    d = Daemon(args=["--listen", f"[::]:{port}"], env=ASAN_ENV).start(wait_ticks=1)
    try:
        st, _, _, _ = exchange(port, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        check(st == 200, f"listen [::]: an IPv4 client (127.0.0.1) gets 200 ({st})")
        with socket.create_connection(("::1", port), timeout=5) as s:
            s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            got = s.recv(100)
        check(got.startswith(b"HTTP/1.1 200"), f"listen [::]: an IPv6 client (::1) gets 200 ({got[:20]!r})")
    finally:
        d.stop()


def main():
    test_memory()
    test_malformed()
    test_slowloris()
    test_dual_stack()
    finish()


if __name__ == "__main__":
    main()
