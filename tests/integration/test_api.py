#!/usr/bin/env python3
"""The HTTP API of docs/design.md §5 against the real perflogd, with a real HTTP client (urllib, plus
raw sockets where urllib would not send what we want).

- every endpoint: health, counters (wildcards), data (raw, bucketed, roll-up tiers, agg), latest,
  /metrics, HEAD;
- /api/v1/data equals the counter_values view for the same window, value for value;
- every error path: bad time, bad pattern, bad step/agg, unknown parameter, point limit (400 naming
  the limit), wrong method (405 with Allow), unknown path (404), oversized body (413) and URL (414),
  connection limit (503), missing/wrong token (401) with auth_token and auth_read;
- every error is a JSON {"error": {"code", "message"}}, and the sampler missed no tick meanwhile.
"""
import json
import os
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, http_request  # noqa: E402

Q = urllib.parse.quote


def is_json_error(status, body, want_status, want_code=None):
    try:
        e = json.loads(body)["error"]
        ok = isinstance(e["code"], str) and isinstance(e["message"], str) and e["message"]
    except Exception:  # noqa: BLE001
        return False
    return status == want_status and ok and (want_code is None or e["code"] == want_code)


def expect_error(d, path, want_status, want_code=None, what="", **kw):
    status, headers, body = d.http(path, **kw)
    check(is_json_error(status, body, want_status, want_code),
          f"{what or path[:80]}: {want_status} {want_code or ''} JSON error (got {status} {body[:160]!r})")
    return status, headers, body


def raw_request(port, data, read=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    out = b""
    if read:
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except socket.timeout:
            pass
    s.close()
    return out


def test_endpoints(d):
    status, h = d.get_json("/api/v1/health")
    check(status == 200 and h["status"] == "ok", f"health: 200 ok ({status} {h})")
    for k in ("version", "host", "interval_ms", "uptime_s", "last_sample_utc", "missed", "queued",
              "unwritten", "database"):
        check(k in h, f"health has '{k}'")
    check(h["database"]["path"] == d.db and h["database"]["size_bytes"] > 0, "health names the database and its size")
    check(h["interval_ms"] == 1000, "health: interval_ms 1000")

    status, c = d.get_json("/api/v1/counters?match=" + Q("\\PhysicalDisk(*)\\Disk Bytes/sec"))
    paths = [x["path"] for x in c["counters"]]
    db_inst = sorted(r[0] for r in d.query("SELECT DISTINCT instance FROM counter_values WHERE object='PhysicalDisk'"))
    check(status == 200 and paths and all(p.startswith("\\PhysicalDisk(") and p.endswith(")\\Disk Bytes/sec") for p in paths),
          f"counters: the wildcard matches only that counter ({paths})")
    check(sorted(x["instance"] for x in c["counters"]) == db_inst,
          f"counters: the instances are the database's ({db_inst})")
    status, c = d.get_json("/api/v1/counters?match=" + Q("\\memory\\dirt*"))
    check([x["path"] for x in c["counters"]] == ["\\Memory\\Dirty Bytes", "\\Memory\\Dirtied Bytes/sec",
                                                 "\\Memory\\Dirty Threshold Bytes",
                                                 "\\Memory\\Dirty Background Threshold Bytes"],
          f"counters: case-insensitive, single-instance object, instance null ({c['counters']})")
    check(all(x["instance"] is None and x["object"] == "Memory" for x in c["counters"]), "counters: Memory instance is null")
    status, c = d.get_json("/api/v1/counters")
    check(len(c["counters"]) >= 30 and c["host"], f"counters: everything without a pattern ({len(c['counters'])})")
    status, c = d.get_json("/api/v1/counters?match=" + Q("\\NoSuchObject(*)\\*"))
    check(status == 200 and c["counters"] == [], "counters: a pattern that matches nothing is an empty list")

    status, l = d.get_json("/api/v1/latest?counter=" + Q("\\Processor(*)\\% Processor Time"))
    newest = d.query("SELECT max(t_ms) FROM ticks")[0][0]
    check(status == 200 and l["t_ms"] >= newest, f"latest: the newest tick ({l['t_ms']} >= stored {newest})")
    ncpu = os.cpu_count()
    check(len(l["values"]) == ncpu + 1, f"latest: one value per core plus _Total ({len(l['values'])})")
    check(all(0 <= v["value"] <= 100 for v in l["values"]), "latest: CPU percentages in 0..100")
    # latest is served from memory: it can be newer than anything committed, never older
    status, hh, body = d.http("/api/v1/latest", method="HEAD")
    check(status == 200 and body == b"", "HEAD /api/v1/latest: 200 without a body")

    status, hdr, body = d.http("/metrics")
    text = body.decode()
    check(status == 200 and hdr.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
          f"/metrics: text exposition content type ({hdr.get('Content-Type')})")
    check("# TYPE perflog_disk_read_bytes_total counter" in text and 'perflog_cpu_seconds_total{cpu="0",mode="user"}' in text,
          "/metrics: node_exporter-style families")


def test_data_equals_view(d):
    d.wait_ticks(8)
    t1 = d.query("SELECT max(t_ms) FROM ticks")[0][0]
    t0 = t1 - 6000
    pats = ["\\Processor(*)\\% Processor Time", "\\Memory\\Dirty Bytes", "\\PhysicalDisk(*)\\Disk Bytes/sec",
            "\\Network Interface(*)\\Bytes Total/sec"]
    qs = "&".join("counter=" + Q(p) for p in pats) + f"&from={t0 / 1000}&to={t1 / 1000}"
    status, r = d.get_json("/api/v1/data?" + qs)
    check(status == 200 and r["tier"] == "raw", f"data: 200, raw tier ({status})")
    view = d.query("SELECT t_ms FROM ticks WHERE t_ms BETWEEN ? AND ? ORDER BY t_ms", (t0, t1))
    check(r["timestamps"] == [v[0] for v in view], f"data: timestamps are the stored ticks ({len(view)})")
    compared = mismatched = 0
    for s in r["series"]:
        rows = dict(d.query("SELECT t_ms, value FROM counter_values WHERE path = ? AND t_ms BETWEEN ? AND ?",
                            (s["path"], t0, t1)))
        for t, v in zip(r["timestamps"], s["values"]):
            compared += 1
            if rows.get(t) != v:
                mismatched += 1
                if mismatched < 5:
                    print(f"  mismatch {s['path']} @{t}: api {v!r} view {rows.get(t)!r}")
    check(compared >= 6 * 5 and mismatched == 0,
          f"data: every value equals the counter_values view exactly ({compared} compared, {mismatched} differ)")

    # time forms: RFC 3339, Unix seconds, now, relative
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 / 1000)) + f".{t0 % 1000:03d}Z"
    for f, t in ((iso, f"{t1 / 1000}"), ("-10s", "now"), ("now-10s", "now"), ("-10", "now")):
        status, r2 = d.get_json(f"/api/v1/data?counter={Q(pats[1])}&from={Q(f)}&to={Q(t)}")
        check(status == 200 and len(r2["timestamps"]) >= 5, f"data: from={f} to={t} accepted ({status}, {len(r2.get('timestamps', []))} points)")

    # bucketed: 2 s buckets from the raw tier; avg/min/max agree with the raw values in the bucket
    path = "\\Processor(_Total)\\% Processor Time"
    base = f"/api/v1/data?counter={Q(path)}&from={t0 / 1000}&to={t1 / 1000}&step=2s"
    got = {a: d.get_json(base + f"&agg={a}")[1] for a in ("avg", "min", "max")}
    raw = d.query("SELECT t_ms, value FROM counter_values WHERE path = ? AND t_ms BETWEEN ? AND ? AND value IS NOT NULL",
                  (path, t0 // 2000 * 2000, t1 // 2000 * 2000 + 1999))
    ok = got["avg"]["step_ms"] == 2000 and got["avg"]["tier"] == "raw"
    for i, ts in enumerate(got["avg"]["timestamps"]):
        vals = [v for t, v in raw if ts <= t < ts + 2000]
        if not vals:
            ok &= got["avg"]["series"][0]["values"][i] is None
            continue
        ok &= abs(got["avg"]["series"][0]["values"][i] - sum(vals) / len(vals)) < 1e-9
        ok &= got["min"]["series"][0]["values"][i] == min(vals) and got["max"]["series"][0]["values"][i] == max(vals)
    check(ok, "data: step=2s buckets hold the avg/min/max of the raw values in [t, t+2s)")
    for step, tier in (("60", "1m"), ("5m", "1m"), ("1h", "1h"), ("90s", "raw")):
        status, r3 = d.get_json(f"/api/v1/data?counter={Q(path)}&from=-3h&to=now&step={step}")
        vals = [v for v in r3["series"][0]["values"] if v is not None]
        check(status == 200 and r3["tier"] == tier and vals and all(0 <= v <= 100 for v in vals),
              f"data: step={step} uses the {tier} tier and has values ({status}, {r3.get('tier')}, {len(vals)} values)")


def test_errors(d):
    path = Q("\\Memory\\Dirty Bytes")
    for frm, what in (("yesterday", "words"), ("2026-02-30T00:00:00Z", "Feb 30"), ("1e9", "exponent"),
                      ("", "empty")):
        expect_error(d, f"/api/v1/data?counter={path}&from={Q(frm)}", 400, "bad_time", f"data: bad time ({what})")
    expect_error(d, f"/api/v1/data?counter={path}&from=now&to=-1h", 400, "bad_time", "data: from after to")
    expect_error(d, "/api/v1/data?counter=" + Q("Memory\\Dirty Bytes"), 400, "bad_pattern", "data: pattern without a backslash")
    expect_error(d, "/api/v1/data?counter=" + Q("\\PhysicalDisk(vda\\Disk Bytes/sec"), 400, "bad_pattern", "data: unbalanced parenthesis")
    expect_error(d, "/api/v1/latest?counter=" + Q("\\\\"), 400, "bad_pattern", "latest: empty object")
    expect_error(d, "/api/v1/data", 400, "bad_parameter", "data: counter is required")
    expect_error(d, f"/api/v1/data?counter={path}&step=0", 400, "bad_step", "data: step 0")
    expect_error(d, f"/api/v1/data?counter={path}&agg=median", 400, "bad_parameter", "data: unknown agg")
    expect_error(d, f"/api/v1/data?counter={path}&form=-1h", 400, "bad_parameter", "data: unknown parameter")
    expect_error(d, f"/api/v1/data?counter={path}&from=%zz", 400, "bad_query", "data: bad percent escape")
    st, _, body = expect_error(d, f"/api/v1/data?counter={path}&from=-30d", 400, "too_many_points", "data: over the point limit")
    check(b"100000" in body, f"data: the point-limit error names the limit ({body[:200]!r})")
    st, hdr, _ = expect_error(d, "/api/v1/health", 405, "method_not_allowed", "POST /api/v1/health", method="POST", body=b"{}")
    check("GET" in hdr.get("Allow", ""), f"405 has an Allow header ({hdr.get('Allow')})")
    expect_error(d, "/api/v1/health", 405, "method_not_allowed", "DELETE /api/v1/health", method="DELETE")
    expect_error(d, "/api/v1/nothing", 404, "not_found")
    st, hdr, body = d.http("/")
    check(st == 200 and hdr.get("Content-Type", "").startswith("text/html") and body.startswith(b"<!doctype html>"),
          f"GET /: the dashboard page ({st}, {hdr.get('Content-Type')})")
    expect_error(d, "/index.html", 404, "not_found", "GET /index.html (the page is /)")
    expect_error(d, "/api/v1/health?" + "a" * 9000, 414, "uri_too_long", "a 9000-byte URL")
    expect_error(d, "/api/v1/health", 413, "body_too_large", "a 70 KiB body", method="POST", body=b"x" * 70000)
    # a body that claims to be small but keeps coming (chunked, no Content-Length)
    resp = raw_request(d.port, b"POST /api/v1/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                       b"".join(b"%x\r\n%s\r\n" % (8192, b"y" * 8192) for _ in range(10)) + b"0\r\n\r\n")
    check(resp.startswith(b"HTTP/1.1 413") and b'"body_too_large"' in resp,
          f"a chunked 80 KiB body: 413 JSON ({resp[:60]!r})")


def test_auth():
    d = Daemon(config={"auth_token": "s3cret", "auth_read": False}).start(wait_ticks=2)
    try:
        st, _ = d.get_json("/api/v1/health")
        check(st == 200, "auth_token without auth_read: GET needs no token")
        expect_error(d, "/api/v1/health", 405, None, "a POST with the token reaches routing",
                     method="POST", body=b"{}", headers={"Authorization": "Bearer s3cret"})
    finally:
        d.stop()
    d = Daemon(config={"auth_token": "s3cret", "auth_read": True}).start(wait_ticks=2)
    try:
        expect_error(d, "/api/v1/health", 401, "unauthorized", "auth_read: no token")
        expect_error(d, "/api/v1/health", 401, "unauthorized", "auth_read: wrong token", headers={"Authorization": "Bearer s3creT"})
        expect_error(d, "/api/v1/health", 401, "unauthorized", "auth_read: token prefix", headers={"Authorization": "Bearer s3c"})
        expect_error(d, "/api/v1/health", 401, "unauthorized", "auth_read: longer token", headers={"Authorization": "Bearer s3crett"})
        expect_error(d, "/metrics", 401, "unauthorized", "auth_read: /metrics too")
        st, _ = d.get_json("/api/v1/health", headers={"Authorization": "Bearer s3cret"})
        check(st == 200, "auth_read: the right token gets 200")
    finally:
        d.stop()


def test_connection_limit():
    d = Daemon(config={"max_connections": 3, "connection_timeout_s": 3}).start(wait_ticks=2)
    try:
        idle = [socket.create_connection(("127.0.0.1", d.port)) for _ in range(3)]
        time.sleep(0.3)
        resp = raw_request(d.port, b"GET /api/v1/counters HTTP/1.1\r\nHost: x\r\n\r\n")
        check(resp.startswith(b"HTTP/1.1 503") and b'"too_many_connections"' in resp,
              f"a 4th connection over max_connections 3: 503 JSON ({resp[:80]!r})")
        resp = raw_request(d.port, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        check(resp.startswith(b"HTTP/1.1 200"),
              f"a health check over max_connections 3 still gets through: 200 ({resp[:80]!r})")
        time.sleep(4.5)  # the idle ones time out (connection_timeout_s 3)
        for s in idle:
            s.settimeout(1)
            try:
                closed = s.recv(1) == b""
            except OSError:
                closed = True
            check(closed, "an idle connection is closed after connection_timeout_s")
            s.close()
        st, _ = d.get_json("/api/v1/health")
        check(st == 200, "after the idle ones are gone, requests are served again")
    finally:
        d.stop()


def main():
    d = Daemon().start(wait_ticks=3)
    try:
        test_endpoints(d)
        test_data_equals_view(d)
        test_errors(d)
        st, h = d.get_json("/api/v1/health")
        check(h["missed"] == 0, f"no tick missed during the requests ({h['missed']})")
        check(http_request(d.url + "/api/v1/health")[0] == 200, "still serving")
    finally:
        rc = d.stop()
    check(rc == 0, f"perflogd exits 0 on SIGTERM ({rc})")
    test_auth()
    test_connection_limit()
    finish()


if __name__ == "__main__":
    main()
