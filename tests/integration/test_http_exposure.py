#!/usr/bin/env python3
"""A listener beyond loopback (docs/configuration.md: auth_token; docs/api.md: 403 forbidden,
health's warnings), with a real remote client: two network namespaces joined by a veth pair
(tests/integration/netpair.py), perflogd in A listening on 0.0.0.0, the client in B.

Without auth_token:
- perflogd logs a warning at start and health lists it under `warnings` (status stays ok);
- from B, GET answers 200, but POST /api/v1/runs and DELETE /api/v1/runs/1 get 403 `forbidden`
  and create or delete nothing;
- from A's own loopback, POST /api/v1/runs still creates a run (201).
With auth_token: no warning; from B, POST without the token gets 401, with it 201.
Needs root (namespaces).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, free_port, require_root  # noqa: E402
from netpair import NetPair, sh  # noqa: E402

CLIENT = r"""
import json, sys, urllib.request, urllib.error
method, url, token = sys.argv[1], sys.argv[2], sys.argv[3]
h = {"Content-Type": "application/json"}
if token:
    h["Authorization"] = "Bearer " + token
body = b'{"label": "remote"}' if method == "POST" else None
req = urllib.request.Request(url, data=body, method=method, headers=h)
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        print(json.dumps([r.status, r.read().decode()]))
except urllib.error.HTTPError as e:
    print(json.dumps([e.code, e.read().decode()]))
"""


def call(np, side, method, url, token=""):
    out = np.exec(side, sys.executable, "-c", CLIENT, method, url, token).stdout
    st, body = json.loads(out)
    try:
        return st, json.loads(body) if body else None
    except ValueError:
        return st, body


class Pair(NetPair):
    """The namespaces and veth pair of NetPair, without its two default daemons."""

    def open(self):
        self.open_netns()
        for side in "ab":
            sh("ip", "-n", self.ns[side], "addr", "add", self.addr[side] + "/24", "dev", self.dev[side])
            sh("ip", "-n", self.ns[side], "link", "set", "lo", "up")
            sh("ip", "-n", self.ns[side], "link", "set", self.dev[side], "up")
        return self


def daemon(np, config):
    port = free_port()
    d = Daemon(config=dict(config, listen=f"0.0.0.0:{port}"), netns=np.ns["a"], addr=np.addr["a"])
    d.start(wait_ticks=1)
    return d


def main():
    require_root()
    np = Pair("hx").open()
    try:
        d = daemon(np, {})
        remote = f"http://{np.addr['a']}:{d.port}"
        local = f"http://127.0.0.1:{d.port}"
        try:
            check("listens beyond loopback without auth_token" in d.log(),
                  "no token on 0.0.0.0: a warning in the log at start")
            st, h = call(np, "b", "GET", remote + "/api/v1/health")
            check(st == 200 and h["status"] == "ok" and len(h["warnings"]) == 1
                  and "auth_token" in h["warnings"][0],
                  f"health from B: 200, status ok, the warning listed ({st} {h and h.get('warnings')})")
            st, e = call(np, "b", "POST", remote + "/api/v1/runs")
            check(st == 403 and e["error"]["code"] == "forbidden",
                  f"POST /api/v1/runs from B without a token: 403 forbidden ({st} {e})")
            st, runs = call(np, "b", "GET", remote + "/api/v1/runs")
            check(st == 200 and runs["runs"] == [], f"... and no run was created ({st} {runs})")
            st, r = call(np, "a", "POST", local + "/api/v1/runs")
            check(st == 201 and r["id"] == 1, f"POST /api/v1/runs from A's loopback: 201 ({st} {r})")
            st, e = call(np, "b", "DELETE", remote + "/api/v1/runs/1")
            check(st == 403 and e["error"]["code"] == "forbidden",
                  f"DELETE /api/v1/runs/1 from B without a token: 403 forbidden ({st} {e})")
            st, r = call(np, "a", "GET", local + "/api/v1/runs/1")
            check(st == 200, f"... and the run is still there ({st})")
        finally:
            check(d.stop() == 0, "perflogd (no token) exits 0")

        d = daemon(np, {"auth_token": "t0ken"})
        remote = f"http://{np.addr['a']}:{d.port}"
        try:
            check("listens beyond loopback" not in d.log(), "with auth_token: no warning in the log")
            st, h = call(np, "b", "GET", remote + "/api/v1/health")
            check(st == 200 and h["warnings"] == [], f"with auth_token: health has no warning ({h and h.get('warnings')})")
            st, e = call(np, "b", "POST", remote + "/api/v1/runs")
            check(st == 401, f"with auth_token: POST from B without it: 401 ({st} {e})")
            st, r = call(np, "b", "POST", remote + "/api/v1/runs", token="t0ken")
            check(st == 201, f"with auth_token: POST from B with it: 201 ({st} {r})")
        finally:
            check(d.stop() == 0, "perflogd (token) exits 0")
    finally:
        np.close()
    finish()


if __name__ == "__main__":
    main()
