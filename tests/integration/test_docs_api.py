#!/usr/bin/env python3
"""docs/api.md's curl examples, run against a live perflogd, so the API documentation cannot rot.

Every ```sh block of docs/api.md is one example: a single curl command (backslash continuations
allowed) against http://127.0.0.1:9931, with a comment line `# expect: STATUS [ERROR_CODE]`. Blocks
that use $PERFLOG_TOKEN or say `# server: auth` run against a daemon with
{"auth_token": "doc-token", "auth_read": true} (PERFLOG_TOKEN=doc-token in their environment);
the others against a daemon without authentication. Each daemon has its own free port, which
replaces 9931 in the command, and ` -o BODYFILE -w '%{http_code}'` is appended (curl uses the last
-w, so an example may print the status itself).

Checked for each example: curl exits 0, the status is the block's `# expect:`, the body is JSON
(the error shape, and its code when the block names one, for 4xx/5xx) or, for a 200 from /metrics,
Prometheus text with `# TYPE perflog_` lines, or for a 200 from `/` or `/ui/...` the dashboard's
HTML page or one of its files; the block is followed by its example response in a
```json or ```text block, and every ```json block of the page parses. The test fails when the page
has no example, or when an endpoint of the route table in web/api.c has no example answering 200.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import SOURCE_DIR, Daemon, check, finish  # noqa: E402

DOC = os.path.join(SOURCE_DIR, "docs", "api.md")
ROUTES_SRC = os.path.join(SOURCE_DIR, "web", "api.c")
BASE = "http://127.0.0.1:9931"
TOKEN = "doc-token"
# The route table of today; the test also reads web/api.c, so a new route needs an example too.
KNOWN_ROUTES = ["/api/v1/health", "/api/v1/counters", "/api/v1/data", "/api/v1/latest", "/api/v1/export",
                "/metrics", "/"]

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
EXPECT = re.compile(r"^#\s*expect:\s*(\d{3})(?:\s+([a-z_]+))?\s*$")
SERVER = re.compile(r"^#\s*server:\s*(\S+)\s*$")
URL_PATH = re.compile(re.escape(BASE) + r"(/[^?'\"\s]*)")
OUTPUT_OPT = re.compile(r"(^|\s)(-o|--output|-O|--remote-name|-D|--dump-header|-i|--include|-I|--head)(\s|$)")


def fenced_blocks(text):
    """[(lang, body, line)] of the page's fenced blocks, in order."""
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def parse_example(body, line):
    """An sh block as a dict, or a string saying what is wrong with it."""
    expect = code = server = None
    lines = []
    for ln in body.splitlines():
        s = ln.strip()
        if s.startswith("#"):
            m = EXPECT.match(s)
            if m:
                if expect is not None:
                    return f"line {line}: two '# expect:' lines"
                expect, code = int(m.group(1)), m.group(2)
            m = SERVER.match(s)
            if m:
                server = m.group(1)
            continue
        if s:
            lines.append(ln)
    if expect is None:
        return f"line {line}: no '# expect: STATUS' line"
    if server not in (None, "auth"):
        return f"line {line}: unknown '# server: {server}' (only 'auth' exists)"
    cmd = re.sub(r"\\\n\s*", " ", "\n".join(lines)).strip()
    if not cmd.startswith("curl ") or "\n" in cmd:
        return f"line {line}: not a single curl command: {cmd[:120]!r}"
    if OUTPUT_OPT.search(cmd):
        return f"line {line}: the example sets curl's output itself (-o/-O/-D/-i/-I): {cmd[:120]!r}"
    m = URL_PATH.search(cmd)
    if not m:
        return f"line {line}: no URL on {BASE}: {cmd[:120]!r}"
    auth = server == "auth" or "PERFLOG_TOKEN" in cmd
    return {"line": line, "cmd": cmd, "expect": expect, "code": code, "path": m.group(1), "auth": auth}


def route_table():
    try:
        with open(ROUTES_SRC) as f:
            # the exact paths of the table (a path with an {id} or {name} hole has no fixed URL)
            found = re.findall(r'\.path\s*=\s*"(/[^"{]*)"', f.read())
    except OSError:
        found = []
    check(set(KNOWN_ROUTES) <= set(found), f"the route table of web/api.c is readable ({found})")
    return sorted(set(found) | set(KNOWN_ROUTES))


def run_example(ex, daemon, workdir, n):
    body_path = os.path.join(workdir, f"body-{n}")
    cmd = ex["cmd"].replace(BASE, daemon.url) + f" -o {shlex.quote(body_path)} -w '%{{http_code}}'"
    env = dict(os.environ)
    env.pop("PERFLOG_TOKEN", None)
    if ex["auth"]:
        env["PERFLOG_TOKEN"] = TOKEN
    what = f"api.md line {ex['line']}: {ex['cmd'][:100]}"
    try:
        p = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        check(False, f"{what}: curl did not finish within 60 s")
        return
    try:
        with open(body_path, "rb") as f:
            body = f.read()
    except OSError:
        body = b""
    out = p.stdout.decode(errors="replace").strip()
    if not check(p.returncode == 0, f"{what}: curl exits 0 ({p.returncode}, {p.stderr[:200]!r})"):
        return
    check(out == str(ex["expect"]), f"{what}: status {ex['expect']} (got {out!r}, body {body[:200]!r})")
    if ex["path"] == "/metrics" and ex["expect"] == 200:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        check("# TYPE perflog_" in text, f"{what}: Prometheus text with '# TYPE perflog_' ({len(body)} bytes)")
        return
    if (ex["path"] == "/" or ex["path"].startswith("/ui/")) and ex["expect"] == 200:
        # the dashboard: its page is HTML, its files scripts and styles (never JSON)
        if ex["path"] == "/":
            check(body.startswith(b"<!doctype html>"), f"{what}: the dashboard's HTML page ({body[:60]!r})")
        else:
            check(len(body) > 0 and not body.lstrip().startswith(b"{"), f"{what}: a file of the dashboard ({body[:60]!r})")
        return
    csv_path = ex["path"] == "/api/v1/export" or (ex["path"].startswith("/api/v1/runs/")
                                                   and ex["path"].endswith("/export"))
    if csv_path and ex["expect"] == 200:
        # a run of the examples lasts milliseconds: its log may hold the header only
        rows = 1 if ex["path"].startswith("/api/v1/runs/") else 2
        check(body.startswith((b'"(PDH-CSV 4.0) (', b'"(PDH-TSV 4.0) (')) and body.endswith(b"\r\n")
              and body.count(b"\r\n") >= rows,
              f"{what}: a PDH-CSV/TSV log with a header (and rows), CRLF ({body[:120]!r})")
        return
    try:
        doc = json.loads(body)
    except ValueError:
        check(False, f"{what}: the body is JSON ({body[:200]!r})")
        return
    if ex["expect"] >= 400:
        err = doc.get("error") if isinstance(doc, dict) else None
        ok = isinstance(err, dict) and isinstance(err.get("code"), str) and isinstance(err.get("message"), str)
        check(ok and (ex["code"] is None or err["code"] == ex["code"]),
              f"{what}: a JSON error{' ' + ex['code'] if ex['code'] else ''} ({body[:200]!r})")
    else:
        check(isinstance(doc, dict) and "error" not in doc, f"{what}: a JSON object, not an error ({body[:120]!r})")


def main():
    if not check(shutil.which("curl") is not None, "curl is installed (packaging/build-deps.txt; apt-get install curl)"):
        finish()
    try:
        with open(DOC, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        check(False, f"{DOC} is readable ({e})")
        finish()

    blocks = fenced_blocks(text)
    examples = []
    for i, (lang, body, line) in enumerate(blocks):
        if lang == "json":
            try:
                json.loads(body)
                ok = True
            except ValueError as e:
                ok = False
                print(f"  {e}")
            check(ok, f"api.md line {line}: the ```json block is valid JSON")
        if lang != "sh":
            continue
        ex = parse_example(body, line)
        if not check(isinstance(ex, dict), f"api.md line {line}: a well-formed example ({ex if isinstance(ex, str) else 'ok'})"):
            continue
        nxt = blocks[i + 1][0] if i + 1 < len(blocks) else None
        check(nxt in ("json", "text"), f"api.md line {line}: followed by its example response (next block: {nxt!r})")
        examples.append(ex)

    check(len(examples) > 0, f"docs/api.md has curl examples ({len(examples)})")
    for route in route_table():
        n = sum(1 for ex in examples if ex["path"] == route and ex["expect"] == 200)
        check(n > 0, f"{route} has an example answering 200 in docs/api.md ({n})")
    if not examples:
        finish()

    plain = Daemon()
    auth = Daemon(config={"auth_token": TOKEN, "auth_read": True})
    workdir = tempfile.mkdtemp(prefix="perflog-docs-")
    try:
        plain.start(wait_ticks=0)
        auth.start(wait_ticks=0)
        plain.wait_ticks(3)
        auth.wait_ticks(3)
        for n, ex in enumerate(examples):
            run_example(ex, auth if ex["auth"] else plain, workdir, n)
    finally:
        rc_plain = plain.stop()
        rc_auth = auth.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    check(rc_plain == 0 and rc_auth == 0, f"both daemons exit 0 on SIGTERM ({rc_plain}, {rc_auth})")
    print(f"{len(examples)} examples run ({sum(1 for e in examples if e['auth'])} with authentication)")
    finish()


if __name__ == "__main__":
    main()
