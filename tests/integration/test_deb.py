"""The .deb: build it with CPack, check its control data and contents, install it with dpkg on this
machine, run perflogd the way the packaged systemd unit does (its ExecStart, as its user, with the
packaged config; CI has no systemd as PID 1), then purge it and show that nothing is left.

Needs root (dpkg -i / --purge on the real system) and dpkg-dev (dpkg-shlibdeps, for Depends). The
package is purged in a `finally`, so a failed run leaves the machine as it found it. Runs of this test
on the same machine (other build directories, other checkouts) are serialised by a lock file, since
they install and purge the same package.
"""
import fcntl
import glob
import gzip
import json
import os
import pwd
import grp
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import check, finish, free_port, http_request, require_root  # noqa: E402

BUILD_DIR = os.environ.get("PERFLOG_BUILD_DIR", "build")
SOURCE_DIR = os.environ.get("PERFLOG_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PKG = "perflog"
USER = "perflog"
UNIT_PATH = "/lib/systemd/system/perflogd.service"
CONF_PATH = "/etc/perflog/perflogd.json"
STATE_DIR = "/var/lib/perflog"
DB_PATH = "/var/lib/perflog/perflog.db"
LOCK_PATH = "/run/lock/perflog-test-deb.lock"
CHUNK_EXT = "/usr/lib/perflog/perflog_chunk.so"
# Everything the package puts on the system; all of it must be gone after dpkg --purge.
INSTALLED_PATHS = ["/usr/bin/perflogd", "/usr/bin/perflog", UNIT_PATH, CONF_PATH, "/etc/perflog",
                   STATE_DIR, "/usr/share/man/man8/perflogd.8.gz", "/usr/share/man/man1/perflog.1.gz",
                   "/usr/share/doc/perflog", CHUNK_EXT, "/usr/lib/perflog"]
# Where a package's leftovers would be: searched for names containing "perflog" before the install
# and after the purge. Debian policy keeps nothing of a purged package here (dpkg.log keeps lines
# about it, but no file of it).
LEFTOVER_ROOTS = ["/etc", "/usr", "/lib", "/var/lib", "/var/cache", "/var/log", "/opt", "/srv"]


def run(cmd, timeout=300, **kw):
    """subprocess.run with text output; returns the CompletedProcess."""
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, **kw)


def dpkg(args, timeout=600):
    """dpkg ARGS, waiting (up to 5 min) for the dpkg lock if apt or another dpkg holds it."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    deadline = time.time() + 300
    while True:
        r = run(["dpkg"] + args, timeout=timeout, env=env)
        locked = r.returncode != 0 and "lock" in r.stderr and "locked" in r.stderr
        if not locked or time.time() > deadline:
            return r
        time.sleep(2)


def pkg_status():
    """dpkg's status of the package ('' when dpkg does not know it)."""
    r = run(["dpkg-query", "-W", "-f", "${Status}", PKG])
    return r.stdout.strip() if r.returncode == 0 else ""


def pkg_present():
    """True when the package is installed or has files or config left (anything but purged)."""
    st = pkg_status()
    return bool(st) and not st.endswith("not-installed")


def project_version():
    """The version of project() in the build's cache, i.e. of the top-level CMakeLists.txt."""
    with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("CMAKE_PROJECT_VERSION:"):
                return line.split("=", 1)[1].strip()
    raise RuntimeError("no CMAKE_PROJECT_VERSION in CMakeCache.txt")


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def group_exists(name):
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def leftovers():
    """Paths under LEFTOVER_ROOTS whose name contains 'perflog'."""
    found = set()
    for root in LEFTOVER_ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            for n in dirnames + filenames:
                if "perflog" in n:
                    found.add(os.path.join(dirpath, n))
    return found


def read_unit(path):
    """The [Service] section of a systemd unit as {key: [values...]}, with continuation lines
    joined and comments dropped."""
    keys, section, pending = {}, None, ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if pending:
                line = pending + line
                pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            s = line.strip()
            if not s or s[0] in "#;":
                continue
            if s.startswith("["):
                section = s
                continue
            if section == "[Service]" and "=" in s:
                k, v = s.split("=", 1)
                keys.setdefault(k.strip(), []).append(v.strip())
    return keys


def exec_start_argv(unit, user_home):
    """ExecStart of the unit as the argv systemd would run: prefixes (-@:+!) dropped, specifiers and
    the environment variables systemd sets for the service expanded."""
    values = [v for v in unit.get("ExecStart", []) if v]
    if len(values) != 1:
        raise RuntimeError(f"expected one ExecStart in the unit, got {values}")
    cmdline = values[0].lstrip("-@:+!")
    specifiers = {"%%": "%", "%S": "/var/lib", "%t": "/run", "%C": "/var/cache", "%L": "/var/log",
                  "%E": "/etc", "%n": "perflogd.service", "%N": "perflogd", "%p": "perflogd",
                  "%u": unit.get("User", [USER])[-1], "%h": user_home}
    cmdline = re.sub(r"%.", lambda m: specifiers.get(m.group(0), m.group(0)), cmdline)
    env = {}
    for kind, base in (("State", "/var/lib"), ("Runtime", "/run"), ("Cache", "/var/cache"),
                       ("Logs", "/var/log"), ("Configuration", "/etc")):
        dirs = " ".join(unit.get(f"{kind}Directory", [])).split()
        if dirs:
            env[f"{kind.upper()}_DIRECTORY"] = ":".join(os.path.join(base, d) for d in dirs)
    for e in unit.get("Environment", []):
        for item in shlex.split(e):
            k, _, v = item.partition("=")
            env[k] = v
    argv = []
    for word in shlex.split(cmdline):
        def expand(m):
            name = m.group(1) or m.group(2)
            if name not in env:
                raise RuntimeError(f"ExecStart uses ${name}, which the test does not know")
            return env[name]
        argv.append(re.sub(r"\$\{(\w+)\}|\$(\w+)", expand, word))
    return argv, env


def health(url):
    status, _, body = http_request(url + "/api/v1/health", timeout=5)
    return status, (json.loads(body) if body else None)


def main():
    require_root()
    for tool in ("cpack", "dpkg", "dpkg-deb", "dpkg-shlibdeps", "setpriv"):
        if not shutil.which(tool):
            check(False, f"{tool} is installed (packaging/build-deps.txt: dpkg-dev, util-linux, cmake)")
            finish()
    version = project_version()
    lock = open(LOCK_PATH, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # another run of this test (another build dir) waits here
    work = tempfile.mkdtemp(prefix="perflog-deb-")
    daemon = None
    try:
        if pkg_present():
            r = dpkg(["--purge", PKG])
            check(r.returncode == 0, f"purged the {PKG} package left from an earlier run ({r.stderr.strip()})")
        if user_exists(USER):
            print(f"note: a user {USER} exists before the install; the purge removes it")
        baseline = leftovers()

        # --- build the package -------------------------------------------------------------------
        out_dir = os.path.join(BUILD_DIR, "deb-test")
        shutil.rmtree(out_dir, ignore_errors=True)
        r = run(["cpack", "--config", "CPackConfig.cmake", "-G", "DEB", "-B", out_dir], cwd=BUILD_DIR)
        if not check(r.returncode == 0, "cpack -G DEB succeeds"):
            print(r.stdout, r.stderr)
            return
        debs = glob.glob(os.path.join(out_dir, "*.deb"))
        if not check(len(debs) == 1, f"cpack made one .deb: {debs}"):
            return
        deb = debs[0]
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        check(os.path.basename(deb) == f"{PKG}_{version}_{arch}.deb",
              f"file name is Debian's default: {os.path.basename(deb)}")

        # --- control data ------------------------------------------------------------------------
        info = run(["dpkg-deb", "-I", deb]).stdout
        print(info)
        fields = {}
        for line in run(["dpkg-deb", "-f", deb]).stdout.splitlines():
            if line and not line[0].isspace() and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.strip()
        check(fields.get("Package") == PKG, f"Package: {fields.get('Package')}")
        check(fields.get("Version") == version, f"Version {fields.get('Version')} = project version {version}")
        check(fields.get("Architecture") == arch, f"Architecture: {fields.get('Architecture')}")
        check(fields.get("Section") == "admin", f"Section: {fields.get('Section')}")
        check("<" in fields.get("Maintainer", "") and "@" in fields.get("Maintainer", ""),
              f"Maintainer: {fields.get('Maintainer')}")
        depends = fields.get("Depends", "")
        for lib in ("libc6", "libsqlite3", "libjansson", "libmicrohttpd", "adduser"):
            check(lib in depends, f"Depends names {lib} (dpkg-shlibdeps): {depends}")
        installed_kib = fields.get("Installed-Size", "?")
        print(f"figure: Installed-Size of {os.path.basename(deb)}: {installed_kib} KiB; "
              f".deb file {os.path.getsize(deb)} bytes")

        ctl = os.path.join(work, "control")
        run(["dpkg-deb", "-e", deb, ctl])
        with open(os.path.join(ctl, "conffiles")) as f:
            conffiles = f.read().split()
        check(conffiles == [CONF_PATH], f"conffiles lists the config: {conffiles}")
        for script in ("postinst", "prerm", "postrm"):
            p = os.path.join(ctl, script)
            ok = os.path.exists(p) and os.stat(p).st_mode & 0o777 == 0o755
            check(ok, f"maintainer script {script} is in the package, mode 0755")

        # --- contents ----------------------------------------------------------------------------
        listing = {}
        for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines():
            parts = line.split(None, 5)
            listing[parts[5].split(" -> ")[0].lstrip(".").rstrip("/") or "/"] = (parts[0], parts[1])
        for path, mode in (("/usr/bin/perflogd", "-rwxr-xr-x"), ("/usr/bin/perflog", "-rwxr-xr-x"),
                           (CHUNK_EXT, "-rw-r--r--"),
                           (UNIT_PATH, "-rw-r--r--"), (CONF_PATH, "-rw-r-----"),
                           ("/usr/share/man/man8/perflogd.8.gz", "-rw-r--r--"),
                           ("/usr/share/man/man1/perflog.1.gz", "-rw-r--r--"),
                           ("/usr/share/doc/perflog/README.md", "-rw-r--r--"),
                           ("/usr/share/doc/perflog/configuration.md", "-rw-r--r--"),
                           ("/usr/share/doc/perflog/perflogd.example.json", "-rw-r--r--")):
            check(listing.get(path) == (mode, "root/root"),
                  f"{path} in the package, {mode} root/root: {listing.get(path)}")
        check(STATE_DIR not in listing, f"{STATE_DIR} is not shipped (the postinst makes it, the purge removes it)")
        fsys = os.path.join(work, "fsys")
        run(["dpkg-deb", "-x", deb, fsys])
        for page, th in (("usr/share/man/man8/perflogd.8.gz", ".TH PERFLOGD 8"),
                         ("usr/share/man/man1/perflog.1.gz", ".TH PERFLOG 1")):
            with gzip.open(os.path.join(fsys, page), "rt") as f:
                head = f.readline()
            check(head.startswith(th) and f'"perflog {version}"' in head,
                  f"/{page} is a gzipped man page of version {version}: {head.strip()}")
        with open(os.path.join(fsys, CONF_PATH.lstrip("/"))) as f:
            conf = json.load(f)
        with open(os.path.join(SOURCE_DIR, "config", "perflogd.example.json")) as f:
            example = json.load(f)
        check(set(conf) == set(example), "the packaged config has every key of the example config")
        check(conf.get("db") == DB_PATH and conf.get("listen") == "127.0.0.1:9931",
              f"the packaged config: db {conf.get('db')}, listen {conf.get('listen')}")
        check({k: v for k, v in conf.items() if k != "db"} == {k: v for k, v in example.items() if k != "db"},
              "the packaged config's other keys have their defaults")

        # --- install -----------------------------------------------------------------------------
        r = dpkg(["-i", deb])
        print(r.stdout.strip())
        if not check(r.returncode == 0, f"dpkg -i succeeds {r.stderr.strip()}"):
            return
        check(pkg_status() == "install ok installed", f"dpkg status: {pkg_status()}")
        conff = run(["dpkg-query", "-W", "-f", "${Conffiles}", PKG]).stdout
        check(CONF_PATH in conff, f"dpkg registered the conffile: {conff.strip()}")
        if not check(user_exists(USER), f"the postinst created the user {USER}"):
            return
        pw = pwd.getpwnam(USER)
        check(pw.pw_uid < 1000 and pw.pw_dir == STATE_DIR and pw.pw_shell.endswith("nologin"),
              f"{USER} is a system user, home {pw.pw_dir}, shell {pw.pw_shell}, uid {pw.pw_uid}")
        check(group_exists(USER) and grp.getgrnam(USER).gr_gid == pw.pw_gid,
              f"the group {USER} exists and is the user's primary group")
        st = os.stat(STATE_DIR)
        check(st.st_uid == pw.pw_uid and st.st_gid == pw.pw_gid and st.st_mode & 0o777 == 0o750,
              f"{STATE_DIR} is perflog:perflog 0750 (uid {st.st_uid}, gid {st.st_gid}, {oct(st.st_mode & 0o777)})")
        # the config may hold auth_token: not readable by every local user
        st = os.stat(CONF_PATH)
        check(st.st_uid == 0 and st.st_gid == pw.pw_gid and st.st_mode & 0o777 == 0o640,
              f"{CONF_PATH} is root:{USER} 0640 (uid {st.st_uid}, gid {st.st_gid}, {oct(st.st_mode & 0o777)})")
        for prog in ("perflogd", "perflog"):
            r = run([f"/usr/bin/{prog}", "--version"])
            check(r.returncode == 0 and r.stdout.strip() == f"{prog} {version}",
                  f"/usr/bin/{prog} --version prints the project version: {r.stdout.strip()!r}")
        # The stock shell reads the compressed tier with the packaged module (the line the man page
        # gives): a chunk of known points encoded and decoded by it.
        r = run(["sqlite3", ":memory:", f".load {CHUNK_EXT[:-3]}",
                 "SELECT group_concat(tick || ':' || ifnull(value, 'NULL'), ',') FROM chunk_points("
                 "(SELECT chunk_encode(t, v) FROM (SELECT 1 AS t, 5 AS v UNION ALL SELECT 2, NULL"
                 " UNION ALL SELECT 4, -9223372036854775808 ORDER BY 1)))"], timeout=60)
        check(r.returncode == 0 and r.stdout.strip() == "1:5,2:NULL,4:-9223372036854775808",
              f"sqlite3 loads {CHUNK_EXT} and its chunks round-trip: {r.stdout.strip()!r} {r.stderr.strip()}")
        if not check(os.path.exists(UNIT_PATH), f"{UNIT_PATH} is installed"):
            return

        # --- run it as the unit does -------------------------------------------------------------
        unit = read_unit(UNIT_PATH)
        user = unit.get("User", [USER])[-1]
        check(user == USER, f"the unit runs as {user} (User=), the packaged user")
        argv, unit_env = exec_start_argv(unit, pw.pw_dir)
        check(argv[0] == "/usr/bin/perflogd", f"ExecStart runs /usr/bin/perflogd: {argv}")
        check("--config" in argv and argv[argv.index("--config") + 1] == CONF_PATH,
              f"ExecStart passes --config {CONF_PATH}")
        # The packaged config listens on 127.0.0.1:9931, which a perflogd of this machine may hold:
        # the one deviation from ExecStart is --listen on a free port, appended so it overrides it.
        port = free_port()
        argv += ["--listen", f"127.0.0.1:{port}"]
        url = f"http://127.0.0.1:{port}"
        # As systemd starts it: the unit's user and its groups, an environment of its own (plus the
        # sanitizer options of ASan/TSan builds), the working directory /.
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "HOME": pw.pw_dir, "USER": USER, "LOGNAME": USER, "SHELL": pw.pw_shell}
        env.update(unit_env)
        env.update({k: v for k, v in os.environ.items() if k.endswith("SAN_OPTIONS")})
        cmd = ["setpriv", f"--reuid={USER}", f"--regid={unit.get('Group', [USER])[-1]}",
               "--init-groups", "--"] + argv
        print("running:", " ".join(shlex.quote(a) for a in cmd))
        log_path = os.path.join(work, "perflogd.log")
        logf = open(log_path, "wb")
        daemon = subprocess.Popen(cmd, stdout=logf, stderr=logf, env=env,
                                  cwd=unit.get("WorkingDirectory", ["/"])[-1])

        def log():
            with open(log_path, "rb") as f:
                return f.read().decode(errors="replace")

        h, deadline = None, time.time() + 30
        while time.time() < deadline and daemon.poll() is None:
            try:
                status, h = health(url)
                if status == 200 and h.get("last_sample_ms") and os.path.exists(DB_PATH):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        if not check(daemon.poll() is None and h is not None,
                     f"perflogd answers /api/v1/health on {url}"):
            print(log())
            return
        print("health:", json.dumps(h))
        check(h.get("status") == "ok", f"health status: {h.get('status')} {h.get('problems')}")
        check(h.get("version") == version, f"health version: {h.get('version')}")
        check((h.get("database") or {}).get("path") == DB_PATH,
              f"database path: {(h.get('database') or {}).get('path')}")
        with open(f"/proc/{daemon.pid}/status") as f:
            uids = [ln.split()[1:] for ln in f if ln.startswith(("Uid:", "Gid:"))]
        check(all(int(x) == pw.pw_uid for x in uids[0]) and all(int(x) == pw.pw_gid for x in uids[1]),
              f"perflogd (pid {daemon.pid}) runs as {USER}: uids {uids[0]}, gids {uids[1]}")
        st = os.stat(DB_PATH)
        check(st.st_uid == pw.pw_uid and st.st_gid == pw.pw_gid,
              f"{DB_PATH} belongs to {USER} (uid {st.st_uid}, gid {st.st_gid})")
        r = run(["/usr/bin/perflog", "--server", url, "status"], timeout=60)
        print(r.stdout + r.stderr)
        check(r.returncode == 0 and DB_PATH in r.stdout,
              f"/usr/bin/perflog --server {url} status exits 0 ({r.returncode}) and names the database")
        daemon.send_signal(signal.SIGTERM)
        try:
            rc = daemon.wait(20)
        except subprocess.TimeoutExpired:
            daemon.kill()
            rc = daemon.wait()
        logf.close()
        daemon = None
        text = log()
        print(text)
        check(rc == 0, f"perflogd exits 0 on SIGTERM: {rc}")
        sanitizer = [ln for ln in text.splitlines() if "Sanitizer" in ln or "runtime error:" in ln]
        check(not sanitizer, f"no sanitizer report in perflogd's log: {sanitizer[:1]}")

        # --- purge -------------------------------------------------------------------------------
        r = dpkg(["--purge", PKG])
        print(r.stdout.strip(), r.stderr.strip())
        check(r.returncode == 0, "dpkg --purge perflog succeeds")
        check(not pkg_present(), f"dpkg no longer knows the package: {pkg_status()!r}")
        for p in INSTALLED_PATHS:
            check(not os.path.lexists(p), f"{p} is gone")
        check(not user_exists(USER), f"the user {USER} is gone")
        check(not group_exists(USER), f"the group {USER} is gone")
        for f in ("/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow"):
            with open(f) as fh:
                check(not any(ln.startswith(USER + ":") for ln in fh), f"no {USER} entry in {f}")
        left = sorted(leftovers() - baseline)
        # What policy keeps of a purged package: nothing (dpkg.log keeps a record, not a file).
        check(not left, f"nothing named perflog is left under {', '.join(LEFTOVER_ROOTS)}: {left}")
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        if pkg_present():
            r = dpkg(["--purge", PKG])
            print(f"cleanup: dpkg --purge {PKG}: exit {r.returncode} {r.stderr.strip()}")
        shutil.rmtree(work, ignore_errors=True)
        lock.close()


main()
finish()
