#!/usr/bin/env python3
"""What the client does with what it did not write itself, against a real perflogd and a real
listener: a run's stored peers are fetched by whoever runs `perflog report`, so

- the daemon refuses peers that are not http(s) URLs of the form `perflog run --peer` writes (400);
- `perflog report` sends a peer no token unless one was given for it (--peer URL --peer-token T,
  or PERFLOG_PEER_TOKENS), never PERFLOG_TOKEN, the local daemon's: a python HTTP server on
  127.0.0.1 stands for the peer and records the Authorization header of every request;
- labels, commands and a peer's answer with ESC and BEL are printed escaped by `perflog runs` and
  `perflog report` (text and hosts side by side), never raw;
- {"pid": 2147483648} is answered with the range of pid.
No root needed."""
import http.server
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish  # noqa: E402

PERFLOG = os.path.join(os.environ.get("PERFLOG_BUILD_DIR", "build"), "perflog")
TOKEN = "local-daemon-secret"
PEER_TOKEN = "peer-only-token"
HOSTILE = "\u001b[31m\u0007"  # ESC [31m (red) and BEL
PEER_RUN_ID = 7


class Peer(http.server.BaseHTTPRequestHandler):
    """A perflogd stand-in: GET /api/v1/runs/7 answers a settled run whose report has a hostile
    host name; every request's Authorization header (None when absent) is recorded."""
    seen = []

    def do_GET(self):
        Peer.seen.append((self.path, self.headers.get("Authorization")))
        if self.path != f"/api/v1/runs/{PEER_RUN_ID}":
            self.send_response(404)
            self.end_headers()
            return
        rep = {"id": PEER_RUN_ID, "host": "peer" + HOSTILE, "status": "settled", "label": HOSTILE,
               "command": "cp" + HOSTILE, "disks": [], "interfaces": [], "peers": []}
        body = json.dumps({"id": PEER_RUN_ID, "status": "settled", "report": rep}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def perflog(d, *args, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("PERFLOG_TOKEN", "PERFLOG_PEER_TOKENS")}
    e.update({"PERFLOG_SERVER": d.url, "PERFLOG_TOKEN": TOKEN})
    e.update(env or {})
    p = subprocess.run([PERFLOG, *args], capture_output=True, text=True, timeout=60, env=e)
    return p.returncode, p.stdout, p.stderr


def call(d, path, method="GET", body=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    status, _, raw = d.http(path, method=method, body=data, headers=headers)
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, None


def wait_report(d, rid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, doc = call(d, f"/api/v1/runs/{rid}")
        if st == 200 and doc.get("report") is not None:
            return doc
        time.sleep(0.25)
    return None


def no_raw_controls(text):
    return "\x1b" not in text and "\x07" not in text


def test_peer_form(d):
    bad = ["file:///etc/passwd", "javascript:alert(1)", "ftp://h/api/v1/runs/1",
           "http://user:pw@127.0.0.1:1/api/v1/runs/1", "http://127.0.0.1:99999/api/v1/runs/1",
           "http://h/api/v1/runs/x", "http://h/a?b", "http://h/" + HOSTILE, "http:///api/v1/runs/1"]
    for url in bad:
        st, doc = call(d, "/api/v1/runs", "POST", {"peers": [url]})
        check(st == 400 and doc and doc["error"]["code"] == "bad_body"
              and "peers[0]" in doc["error"]["message"], f"peer {url!r} refused with a JSON 400 ({st} {doc})")
    good = ["http://127.0.0.1:9931", "https://peer.example:9931/perflog/api/v1/runs/3",
            "http://[::1]:9931/api/v1/runs/12"]
    st, doc = call(d, "/api/v1/runs", "POST", {"peers": good})
    check(st == 201, f"the forms perflog run --peer writes are accepted ({st} {doc})")
    st, doc = call(d, "/api/v1/runs", "POST", {"pid": 2147483648})
    msg = doc["error"]["message"] if doc and "error" in doc else ""
    check(st == 400 and "2147483647" in msg, f"pid 2147483648: the message gives the range ({msg!r})")


def test_peer_token(d, peer_url):
    st, doc = call(d, "/api/v1/runs", "POST", {"label": HOSTILE, "command": "cp" + HOSTILE + " a b",
                                                "peers": [f"{peer_url}/api/v1/runs/{PEER_RUN_ID}"],
                                                "settle_timeout_s": 1})
    if not check(st == 201, f"a run whose peer is the test's listener ({st} {doc})"):
        return
    rid = doc["id"]
    st, doc = call(d, f"/api/v1/runs/{rid}/end", "POST", {"exit_code": 0})
    check(st == 200, f"the run ends ({st})")
    check(wait_report(d, rid) is not None, "the run has a report")

    Peer.seen.clear()
    rc, out, err = perflog(d, "report", str(rid))
    check(rc == 0, f"perflog report with PERFLOG_TOKEN set exits 0 ({rc}, {err.strip()})")
    check(len(Peer.seen) == 1 and Peer.seen[0][1] is None,
          f"the peer got no Authorization header, not PERFLOG_TOKEN: {Peer.seen}")
    check(TOKEN not in json.dumps(Peer.seen), "the local token never reached the peer")

    for how, args, env in (("--peer URL --peer-token", ["--peer", peer_url, "--peer-token", PEER_TOKEN], None),
                           ("PERFLOG_PEER_TOKENS", [], {"PERFLOG_PEER_TOKENS": f"http://x:1=no,{peer_url}/={PEER_TOKEN}"})):
        Peer.seen.clear()
        rc, out, err = perflog(d, "report", str(rid), *args, env=env)
        check(rc == 0 and Peer.seen == [(f"/api/v1/runs/{PEER_RUN_ID}", f"Bearer {PEER_TOKEN}")],
              f"with {how}: the peer got exactly its own token ({rc}, {Peer.seen})")

    # output: the label, the command and the peer's host, escaped
    rc, out, err = perflog(d, "report", str(rid))
    check(rc == 0 and no_raw_controls(out) and no_raw_controls(err),
          f"perflog report prints no raw ESC or BEL ({out[:300]!r})")
    check("\\x1b[31m\\x07" in out, "the report shows the label as \\x1b[31m\\x07")
    check("peer\\x1b[31m\\x07" in out and "hosts side by side" in out,
          "hosts side by side shows the peer's host name escaped")
    rc, out, err = perflog(d, "runs")
    check(rc == 0 and no_raw_controls(out), f"perflog runs prints no raw ESC or BEL ({out[:300]!r})")
    check("\\x1b[31m\\x07" in out and "cp\\x1b[31m\\x07 a b" in out,
          "perflog runs shows the label and the command escaped")

    rc, out, err = perflog(d, "report", str(rid), "--peer-token", "x")
    check(rc == 2, f"--peer-token without a --peer before it is a usage error ({rc})")


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Peer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    peer_url = f"http://127.0.0.1:{srv.server_address[1]}"
    d = Daemon(config={"auth_token": TOKEN}).start()
    try:
        test_peer_form(d)
        test_peer_token(d, peer_url)
    finally:
        code = d.stop()
        srv.shutdown()
    check(code == 0, f"perflogd exits 0 ({code})")
    finish()


if __name__ == "__main__":
    main()
