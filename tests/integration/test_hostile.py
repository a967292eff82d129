#!/usr/bin/env python3
"""Hostile load on the HTTP API (docs/design.md §5: "limits answer 413/414/400/503, never a crash").

One live perflogd (default config, but connection_timeout_s 2 and max_connections 64) gets 10 000
malformed, random or valid requests over raw sockets from 16 worker threads (inputs from a seeded
random generator, so every run sends the same requests), while two dozen slowloris connections send a
byte every 0.5 s for ~5 s and a few stalled ones wait for the server's timeout.

Checks:
- perflogd is still running at the end, exits 0 on SIGTERM, and its log holds no sanitizer report;
- every answer that arrives starts with `HTTP/1.x NNN`, NNN 2xx or 4xx (a 5xx or a non-HTTP reply
  fails; the one exception is libmicrohttpd's 505 to a request line naming HTTP/2 or another
  version it does not speak, counted apart); connections closed without an answer are allowed only
  for inputs where no answer is possible (random bytes, garbage, truncated, stalled), and counted;
- 4xx answers on /api/ paths are JSON error objects, except answers libmicrohttpd writes itself
  before our code runs (malformed request line or headers, too-large header, bad chunking), which
  are accepted only for the input kinds that provoke them, and counted;
- valid requests interleaved with the garbage get 200, and a 200 JSON body parses;
- health's `missed` does not move across the load, and the ticks table has no gap (consecutive t_ms
  1000 +- 20 ms apart) over the load window;
- after the load, a normal /api/v1/health answers 200 (how soon is printed).
"""
import collections
import json
import os
import random
import re
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, ticks, wait_for_tick_at  # noqa: E402

N_REQUESTS = 10000
WORKERS = 16
SLOWLORIS = 24  # + STALLED + WORKERS stays below max_connections (64)
STALLED = 6
SEED = 20261129
# every client of this test is 127.0.0.1: the per-address limit must not be the one tested here
CONFIG = {"connection_timeout_s": 2, "max_connections": 64, "max_connections_per_ip": 128}

STATUS_RE = re.compile(rb"^HTTP/1\.[01] (\d{3})[ \r]")
Q = urllib.parse.quote

PATTERNS = ["\\Processor(*)\\% Processor Time", "\\Processor(_Total)\\% Processor Time", "\\Memory\\*",
            "\\PhysicalDisk(*)\\Disk Bytes/sec", "\\Network Interface(*)\\*", "\\*(*)\\*", "\\*\\*", "*", "",
            "\\", "\\\\", "\\(\\)\\", "((((", "))))", "\\Processor(" + "*" * 300 + ")\\x", "\\Memory\\" + "?" * 50,
            "\\NoSuch(*)\\*", "\\Memory\\Dirty Bytes\x00", "\\PhysicalDisk(\u00e9\u4e2d)\\*", "\\a(b)\\c(d)\\e",
            "\\Processor(*)\\*" * 20, "\\%s\\%n\\%x", "\\Memory\\\xff\xfe"]
TIMES = ["now", "now-99999999999d", "-", "1e309", "-1e309", "nan", "inf", "-inf", "0", "-0", "1795974000.5",
         "2026-11-29T18:00:00Z", "2026-13-45T99:99:99Z", "-10m", "now-1h", "-600", "9" * 400, "", "now+5s",
         "-10x", "1e-400", "now-", "--10s", "-9223372036854775808", "18446744073709551616", "1970-01-01T00:00:00Z",
         "-1s", "now-10s", "2026-11-29T18:00:00+25:00", "0x10", " now", "now\x00"]
STEPS = ["1", "0", "-1", "1s", "0.001", "1e9", "60", "5m", "1h", "abc", "1e309", "nan", "", "1d", "0.5s"]
AGGS = ["avg", "min", "max", "foo", "", "AVG", "sum"]
KEYS = ["counter", "match", "from", "to", "step", "agg", "x", "", "counter[]", "format"]
ENDPOINTS = ["/api/v1/data", "/api/v1/latest", "/api/v1/counters"]
VALID = ["/api/v1/health", "/api/v1/counters?match=" + Q("\\PhysicalDisk(*)\\*"),
         "/api/v1/data?counter=" + Q("\\Memory\\Dirty Bytes") + "&from=-10s&to=now",
         "/api/v1/data?counter=" + Q("\\Processor(*)\\% Processor Time") + "&from=-30s&to=now&step=5s&agg=max",
         "/api/v1/latest?counter=" + Q("\\Processor(*)\\% Processor Time"), "/metrics", "/api/v1/counters"]


class Req:
    """One input: what to send and what may come back."""

    def __init__(self, cat, data, path="", method="GET", mode="full", expect_answer=True, mhd_ok=False,
                 allow505=False, valid=False, trunc_at=None):
        self.cat = cat
        self.data = data
        self.api = path.startswith("/api/")
        self.method = method
        self.mode = mode  # full: send, read | half: send, shut down writing, read | trunc: send a prefix, close
        self.expect_answer = expect_answer
        self.mhd_ok = mhd_ok  # libmicrohttpd's own (non-JSON) error page is acceptable for this input
        self.allow505 = allow505
        self.valid = valid  # a well-formed request: must get 200
        self.trunc_at = trunc_at


def req_bytes(method, target, headers=(("Host", "127.0.0.1"),), body=b"", version="HTTP/1.1"):
    head = f"{method} {target} {version}\r\n".encode("latin1", "replace") if isinstance(target, str) else \
        method.encode() + b" " + target + b" " + version.encode() + b"\r\n"
    for k, v in headers:
        head += (k if isinstance(k, bytes) else k.encode("latin1")) + b": " + \
            (v if isinstance(v, bytes) else v.encode("latin1", "replace")) + b"\r\n"
    return head + b"\r\n" + body


def enc(r, v):
    """A query value, percent-encoded as a client would, or (sometimes) raw where that stays one token."""
    if r.random() < 0.8:
        return Q(v, safe="")
    return "".join(c if c.isalnum() or c in "-._~*()\\" else Q(c, safe="") for c in v)


def gen(r, i):
    """The i-th input (deterministic for a given generator state)."""
    x = r.random()
    host = (("Host", "127.0.0.1"), ("Connection", "close")) if r.random() < 0.5 else (("Host", "127.0.0.1"),)
    if x < 0.05:  # random bytes
        return Req("random_bytes", r.randbytes(r.randint(1, 3000)), mode="half", expect_answer=False, mhd_ok=True,
                   allow505=True)
    if x < 0.12:  # garbage request lines
        toks = ["".join(r.choice("ABCXYZ/:.?%# \t\x7f") for _ in range(r.randint(0, 30))) for _ in range(r.randint(1, 5))]
        line = " ".join(toks).encode("latin1") + r.choice([b"\r\n\r\n", b"\n\n", b"\r\n", b"\r\r\r\r", b""])
        return Req("garbage_line", line, mode="half", expect_answer=False, mhd_ok=True, allow505=True)
    if x < 0.18:  # huge or invalid headers
        k = r.randrange(7)
        path = r.choice(VALID)
        if k == 0:
            hs = host + (("X-Big", "a" * r.randint(66000, 200000)),)
        elif k == 1:
            hs = host + ((b"no colon here", b""),)
        elif k == 2:
            hs = host + tuple((f"X-H{j}", "v" * 50) for j in range(r.randint(500, 3000)))
        elif k == 3:
            hs = host + (("X-" + "n" * r.randint(1000, 70000), "v"),)
        elif k == 4:
            hs = host + (("X-Ctl", "".join(chr(r.randint(1, 31)) for _ in range(40))),)
        elif k == 5:
            hs = ((b"Host", b"127.0.0.1"), (b" leading-space", b"x"), (b"X\x80\xff", b"\xfe\xfd"))
        else:
            hs = host + ((":", "empty name"), ("X-A", "a\r\n b"))
        return Req("bad_headers", req_bytes("GET", path, hs), path=path, mhd_ok=True)
    if x < 0.24:  # invalid methods
        m = r.choice(["FOO", "G@T", "DELETE", "POST", "PUT", "PATCH", "OPTIONS", "TRACE", "CONNECT", "get", "M" * 2000,
                      "GET\x01", "BREW", "PROPFIND", "Get"])
        path = r.choice(VALID + ["/nope", "/api/v1/runs"])
        return Req("bad_method", req_bytes(m, path, host), path=path, method=m, mhd_ok=True)
    if x < 0.27:  # HTTP/0.9, HTTP/2 preface, other versions
        k = r.randrange(6)
        if k == 0:
            return Req("http09", b"GET /api/v1/health\r\n", path="/api/v1/health", mode="half", mhd_ok=True)
        if k == 1:
            return Req("http2_preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + r.randbytes(40), mode="half",
                       mhd_ok=True, allow505=True)
        v = r.choice(["HTTP/2", "HTTP/1.2", "HTTP/3.0", "http/1.1", "HTTP/1.10", "HTTP/9.9", "HTTPS/1.1", "HTTP/"])
        return Req("bad_version", req_bytes("GET", "/api/v1/health", host, version=v), path="/api/v1/health",
                   mhd_ok=True, allow505=True)
    if x < 0.35:  # bad percent escapes
        ep = r.choice(ENDPOINTS)
        bad = r.choice(["%", "%4", "%zz", "%00", "%ff%fe", "%%", "%G0", "%0", "%2", "%e9", "%c3%28", "%%%41"])
        k = r.choice(KEYS[:6])
        qs = f"{k}={bad}" if r.random() < 0.7 else f"{bad}={Q(r.choice(PATTERNS), safe='')}"
        if r.random() < 0.2:
            path = ep + bad
            return Req("bad_percent", req_bytes("GET", path, host), path=path)
        path = ep + "?" + qs
        return Req("bad_percent", req_bytes("GET", path, host), path=path)
    if x < 0.39:  # overlong URLs
        ep = r.choice(ENDPOINTS)
        if r.random() < 0.7:
            n = r.randint(8193, 32000)
            path = ep + "?counter=" + "a" * n
            return Req("long_url", req_bytes("GET", path, host), path=path)
        path = ep + "?counter=" + "a" * r.randint(70000, 150000)
        return Req("long_url_mhd", req_bytes("GET", path, host), path=path, mhd_ok=True)
    if x < 0.44:  # big bodies
        path = r.choice(VALID[:3] + ["/api/v1/runs", "/nope"])
        m = r.choice(["POST", "PUT", "GET"])
        k = r.randrange(5)
        if k == 0:  # Content-Length over the limit
            n = r.randint(65537, 300000)
            return Req("body_cl", req_bytes(m, path, host + (("Content-Length", str(n)),), b"x" * n),
                       path=path, method=m)
        if k == 1:  # chunked, over the limit
            chunks = b"".join(b"%x\r\n" % 30000 + b"y" * 30000 + b"\r\n" for _ in range(r.randint(3, 6))) + b"0\r\n\r\n"
            return Req("body_chunked", req_bytes(m, path, host + (("Transfer-Encoding", "chunked"),), chunks),
                       path=path, method=m)
        if k == 2:  # chunked with bad chunk sizes
            size = r.choice([b"ZZZ", b"-5", b"ffffffffffffffffffffffff", b"", b"0x10", b"1;" + b"e" * 5000, b"7fffffffffffffff"])
            body = size + b"\r\nabc\r\n0\r\n\r\n"
            # libmicrohttpd answers most with its own 400/413 page, but closes on some (7fffffffffffffff)
            return Req("body_badchunk", req_bytes(m, path, host + (("Transfer-Encoding", "chunked"),), body),
                       path=path, method=m, mhd_ok=True, expect_answer=False)
        if k == 3:  # bad Content-Length values
            cl = r.choice(["-1", "abc", "99999999999999999999999", "1e5", " 5", "5, 5", "0x10"])
            return Req("body_badcl", req_bytes(m, path, host + (("Content-Length", cl),), b"hello"),
                       path=path, method=m, mhd_ok=True)
        # a big body without Content-Length: the first request is answered, the rest is garbage
        return Req("body_nocl", req_bytes(m, path, host, b"z" * r.randint(65537, 200000)), path=path, method=m)
    if x < 0.69:  # random query strings on data/latest/counters
        ep = r.choice(ENDPOINTS)
        parts = []
        for _ in range(r.randint(0, 7)):
            k = r.choice(KEYS)
            if k in ("counter", "match"):
                v = r.choice(PATTERNS) if r.random() < 0.8 else "".join(chr(r.randint(1, 0x2FF)) for _ in range(r.randint(0, 40)))
            elif k in ("from", "to"):
                v = r.choice(TIMES)
            elif k == "step":
                v = r.choice(STEPS)
            elif k == "agg":
                v = r.choice(AGGS)
            else:
                v = r.choice(TIMES + PATTERNS)
            parts.append(enc(r, k) + ("=" + enc(r, v) if r.random() < 0.95 else ""))
        sep = r.choice(["&", "&", "&", "&&", ";"])
        path = ep + ("?" + sep.join(parts) if parts or r.random() < 0.5 else "")
        m = "HEAD" if r.random() < 0.05 else "GET"
        return Req("random_query", req_bytes(m, path, host), path=path, method=m)
    if x < 0.73:  # NUL bytes
        k = r.randrange(4)
        if k == 0:
            path = b"/api/v1/he\x00alth"
        elif k == 1:
            path = b"/api/v1/data?counter=%5CMemory%5C*\x00&from=-5s"
        else:
            path = b"/api/v1/health"
        hs = host if k < 2 else host + ((b"X-Nul", b"a\x00b"),) if k == 2 else ((b"Ho\x00st", b"127.0.0.1"),)
        return Req("nul_bytes", req_bytes("GET", path, hs), path=path.decode("latin1"), mhd_ok=True)
    if x < 0.79:  # random paths
        k = r.randrange(4)
        if k == 0:
            path = "/" + "".join(r.choice("abc/._-~%20") for _ in range(r.randint(0, 60)))
        elif k == 1:
            path = r.choice(["/api/v1/", "/api/v1/health/", "/api/v1/../v1/health", "//api/v1/health", "/api/v2/health",
                             "/api/v1/runs/1", "/api/v1/runs/../../../etc/passwd", "/../../../etc/passwd", "/api",
                             "/API/V1/HEALTH", "/api/v1/health;x", "/api/v1/health#frag", "/metrics/", "/index.html"])
        elif k == 2:
            path = "/api/v1/" + Q("".join(chr(r.randint(0x20, 0x2FFF)) for _ in range(r.randint(1, 30))))
        else:
            path = "/api/v1/" + "".join(chr(r.randint(0x21, 0x7E)) for _ in range(r.randint(1, 40))).replace("?", "")
        return Req("random_path", req_bytes("GET", path, host), path=path)
    if x < 0.91:  # valid requests, interleaved
        path = r.choice(VALID)
        m = "HEAD" if r.random() < 0.1 else "GET"
        return Req("valid", req_bytes(m, path, host), path=path, method=m, valid=True)
    # truncated: close mid-request-line, mid-header or mid-body
    path = r.choice(VALID)
    if r.random() < 0.5:
        data = req_bytes("GET", path, host + (("X-Pad", "p" * 200),))
        return Req("truncated_header", data, path=path, mode="trunc", expect_answer=False, trunc_at=r.randint(1, len(data) - 3))
    data = req_bytes("POST", "/api/v1/health", host + (("Content-Length", "5000"),), b"b" * 5000)
    return Req("truncated_body", data, path="/api/v1/health", method="POST", mode="trunc", expect_answer=False,
               trunc_at=len(data) - r.randint(1, 4999))


def read_response(s, head_only):
    """(status line bytes, status or None, headers dict, body) of the first answer, or None if the
    connection closed (or reset) without a byte."""
    buf = b""
    try:
        while b"\r\n\r\n" not in buf and len(buf) < (1 << 20):
            c = s.recv(65536)
            if not c:
                break
            buf += c
    except (ConnectionResetError, socket.timeout, TimeoutError):
        pass
    if not buf:
        return None
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    m = STATUS_RE.match(lines[0] + b"\r")
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        hdrs[k.strip().lower().decode("latin1")] = v.strip().decode("latin1")
    status = int(m.group(1)) if m else None
    body = rest
    if status and not head_only and status >= 200 and status not in (204, 304):
        cl = int(hdrs["content-length"]) if hdrs.get("content-length", "").isdigit() else None
        try:
            while cl is None or len(body) < cl:
                c = s.recv(65536)
                if not c:
                    break
                body += c
        except (ConnectionResetError, socket.timeout, TimeoutError):
            pass
        if cl is not None:
            body = body[:cl]
    return lines[0], status, hdrs, body


def is_json_error(body):
    try:
        e = json.loads(body)["error"]
        return isinstance(e["code"], str) and isinstance(e["message"], str) and bool(e["message"])
    except Exception:  # noqa: BLE001
        return False


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = collections.Counter()
        self.failures = {}  # kind -> (count, first example)
        self.dead = False
        self.open = 0  # client sockets open right now, and the most at once
        self.max_open = 0

    def add(self, *keys):
        with self.lock:
            for k in keys:
                self.c[k] += 1

    def fail(self, what, kind=None):
        kind = kind or what.split(":", 1)[0]
        with self.lock:
            self.c["FAILURES"] += 1
            n, ex = self.failures.get(kind, (0, what))
            self.failures[kind] = (n + 1, ex)

    def opened(self, delta):
        with self.lock:
            self.open += delta
            self.max_open = max(self.max_open, self.open)


def judge(t, rq, res):
    """Record one outcome."""
    t.add(f"sent:{rq.cat}")
    if res is None:
        if rq.expect_answer:
            t.fail(f"{rq.cat}: connection closed without an answer to {rq.data[:120]!r}", f"{rq.cat}: no answer")
        else:
            t.add("no_answer", f"no_answer:{rq.cat}")
        return
    line, status, hdrs, body = res
    if status is None:
        t.fail(f"{rq.cat}: non-HTTP reply {line[:80]!r} to {rq.data[:120]!r}")
        return
    cls = status // 100
    if cls == 5:
        if status == 505 and rq.allow505:
            t.add("505_version", f"505:{rq.cat}")
            return
        t.fail(f"{rq.cat}: {status} to {rq.data[:160]!r} (body {body[:160]!r}; at most {t.max_open} client "
               f"connections were open so far, max_connections is {CONFIG['max_connections']})", f"{status}")
        return
    if cls not in (2, 4):
        t.fail(f"{rq.cat}: status {status} (not 2xx/4xx) to {rq.data[:120]!r}")
        return
    t.add(f"{cls}xx", f"{cls}xx:{rq.cat}")
    if rq.valid and status != 200:
        t.fail(f"{rq.cat}: valid request answered {status}: {rq.data[:160]!r} {body[:160]!r}", f"{rq.cat}: {status}")
    is_json = hdrs.get("content-type", "").startswith("application/json")
    head_only = rq.method == "HEAD"
    if rq.api and cls == 4:
        if is_json:
            if not head_only and not is_json_error(body):
                t.fail(f"{rq.cat}: {status} JSON body is not an error object: {body[:160]!r}")
        elif rq.mhd_ok:
            t.add("mhd_own_error", f"mhd_own_error:{rq.cat}")
        else:
            t.fail(f"{rq.cat}: {status} on an /api/ path without a JSON error "
                   f"(Content-Type {hdrs.get('content-type')!r}): {rq.data[:120]!r} -> {body[:120]!r}")
    elif rq.api and status == 200 and is_json and not head_only and rq.method == "GET":
        try:
            json.loads(body)
        except ValueError:
            t.fail(f"{rq.cat}: 200 JSON body does not parse: {body[:160]!r}")


def connect(port, timeout):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def do_one(d, t, rq):
    timeout = 15 if rq.expect_answer else 5
    try:
        s = connect(d.port, timeout)
    except OSError as e:
        t.fail(f"{rq.cat}: cannot connect ({e}); perflogd {'exited ' + str(d.proc.poll()) if d.proc.poll() is not None else 'runs'}")
        if d.proc.poll() is not None:
            t.dead = True
        return
    t.opened(1)
    try:
        if rq.mode == "trunc":
            s.sendall(rq.data[:rq.trunc_at])
            t.add("sent:" + rq.cat, "closed_by_us")
            return
        try:
            s.sendall(rq.data)
            if rq.mode == "half":
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            t.add("send_cut_short")  # the server answered early (413, 431) and closed: read what it said
        judge(t, rq, read_response(s, rq.method == "HEAD"))
    except OSError as e:
        t.fail(f"{rq.cat}: socket error {e!r} on {rq.data[:120]!r}")
    finally:
        s.close()
        t.opened(-1)


def worker(d, t, reqs, idx, lock):
    while not t.dead:
        with lock:
            i = idx[0]
            idx[0] += 1
        if i >= len(reqs):
            return
        do_one(d, t, reqs[i])


def slowloris(d, t, k, stop_at):
    """Send a header a byte every 0.5 s for ~5 s; then finish the request (expect 200) or, for every
    third connection, close mid-header."""
    try:
        s = connect(d.port, 15)
        t.opened(1)
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        while time.time() < stop_at:
            s.sendall(b"s")
            time.sleep(0.5)
        if k % 3 == 2:
            s.close()
            t.opened(-1)
            t.add("sent:slowloris", "closed_by_us")
            return
        s.sendall(b"\r\nConnection: close\r\n\r\n")
        rq = Req("slowloris", b"slowloris", path="/api/v1/health", valid=True)
        judge(t, rq, read_response(s, False))
        s.close()
        t.opened(-1)
    except OSError as e:
        t.fail(f"slowloris {k}: {e!r} (the server closed a connection that sent a byte every 0.5 s?)", "slowloris")


def stalled(d, t, k):
    """Send half a request and go quiet: the server must drop it after its 2 s timeout."""
    try:
        s = connect(d.port, 15)
        t.opened(1)
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 1")
        t0 = time.time()
        res = read_response(s, False)
        waited = time.time() - t0
        s.close()
        t.opened(-1)
        t.add("sent:stalled")
        if res is not None:
            judge(t, Req("stalled", b"stalled", path="/api/v1/health", expect_answer=False, mhd_ok=True), res)
        else:
            t.add("no_answer", "no_answer:stalled")
        if waited > 10:
            t.fail(f"stalled connection {k} not dropped by the server within 10 s ({waited:.1f} s)")
    except OSError as e:
        t.fail(f"stalled {k}: {e!r}", "stalled")


def run_load(d, t, reqs):
    """Send reqs from WORKERS threads while the slowloris and stalled connections run; returns
    when all are done (test_http_idle replays this too)."""
    stop_at = time.time() + 5
    side = [threading.Thread(target=slowloris, args=(d, t, k, stop_at)) for k in range(SLOWLORIS)]
    side += [threading.Thread(target=stalled, args=(d, t, k)) for k in range(STALLED)]
    for th in side:
        th.start()
    idx, lock = [0], threading.Lock()
    workers = [threading.Thread(target=worker, args=(d, t, reqs, idx, lock)) for _ in range(WORKERS)]
    for th in workers:
        th.start()
    for th in workers + side:
        th.join()


def main():
    r = random.Random(SEED)
    reqs = [gen(r, i) for i in range(N_REQUESTS)]
    d = Daemon(config=CONFIG)
    t = Tally()
    try:
        d.start(wait_ticks=3)
        status, h0 = d.get_json("/api/v1/health")
        check(status == 200, f"health before the load: 200 ({status})")
        missed0 = h0["missed"]
        t_load0 = time.time()

        run_load(d, t, reqs)
        t_load1 = time.time()
        print(f"load: {N_REQUESTS} requests + {SLOWLORIS} slowloris + {STALLED} stalled in {t_load1 - t_load0:.1f} s",
              flush=True)

        alive = d.proc.poll() is None
        check(alive, f"perflogd still runs after the load (exit status {d.proc.poll()})")
        if alive:
            t0 = time.time()
            try:
                status, _, body = d.http("/api/v1/health", timeout=15)
            except OSError as e:
                status, body = None, str(e).encode()
            dt = time.time() - t0
            # answered at all (a frozen daemon times out); how soon is printed, not asserted
            check(status == 200, f"health after the load: 200 ({status}, {dt * 1000:.0f} ms)")
            # the ticks of the load window must be committed before they are read
            wait_for_tick_at(d, int(t_load1 * 1000) + 1000, timeout=15)
            time.sleep(1.5)
            status, h1 = d.get_json("/api/v1/health")
            check(h1["missed"] == missed0, f"health 'missed' did not move across the load ({missed0} -> {h1['missed']})")
            rows = ticks(d, int(t_load0 * 1000) - 1000, int(t_load1 * 1000) + 1000)
            # No tick missed or doubled, as docs/design.md defines them (a tick more than half an
            # interval late is missed): a ±20 ms bound failed once under ASan (a tick 54 ms late),
            # which is latency, not a lost tick; the lateness belongs in bench/.
            gaps = [(a[0], b[0]) for a, b in zip(rows, rows[1:]) if not 500 < b[0] - a[0] < 1500]
            check(len(rows) >= int(t_load1 - t_load0) and not gaps,
                  f"ticks table: {len(rows)} ticks over the load window, consecutive t_ms within half an interval of 1000 "
                  f"(gaps: {gaps[:5]})")
            check(sum(row[2] or 0 for row in rows) == 0, "ticks table: no tick of the load window records missed samples")
    finally:
        rc = d.stop()
    check(rc == 0, f"perflogd exits 0 on SIGTERM (got {rc})")

    c = t.c
    print("per category (sent / 2xx / 4xx / mhd own error page / 505 / no answer):")
    cats = sorted({k.split(":", 1)[1] for k in c if k.startswith("sent:")})
    for cat in cats:
        print(f"  {cat:18s} {c['sent:' + cat]:5d} {c['2xx:' + cat]:5d} {c['4xx:' + cat]:5d} "
              f"{c['mhd_own_error:' + cat]:5d} {c['505:' + cat]:4d} {c['no_answer:' + cat]:5d}")
    print(f"totals: 2xx {c['2xx']}, 4xx {c['4xx']}, libmicrohttpd's own error pages {c['mhd_own_error']}, "
          f"505 to HTTP/2 or unknown versions {c['505_version']}, closed without an answer {c['no_answer']}, "
          f"closed by the client (truncated) {c['closed_by_us']}, send cut short by an early answer "
          f"{c['send_cut_short']}", flush=True)
    print(f"client connections open at once: at most {t.max_open}")
    for kind, (n, ex) in sorted(t.failures.items()):
        print(f"  FAILED {n} x [{kind}], e.g. {ex}")
    sent = sum(v for k, v in c.items() if k.startswith("sent:"))
    check(sent >= N_REQUESTS, f"all {N_REQUESTS} requests (+ slow ones) were sent ({sent})")
    check(c["FAILURES"] == 0, f"every answer is HTTP/1.x 2xx/4xx, /api/ errors are JSON, valid requests get 200 "
                              f"({c['FAILURES']} failures)")
    check(c["2xx"] > 0 and c["4xx"] > 0, "the load produced both 2xx and 4xx answers")
    finish()


if __name__ == "__main__":
    main()
