#!/usr/bin/env python3
"""`perflog export --db PATH` names the path and the reason when the database cannot be opened:
no such directory, no such file, is a directory, permission denied (run as an unprivileged user),
read-only filesystem (a WAL database on a read-only tmpfs mounted in a private mount namespace).
The database is a real one, written by perflogd. perflogd --db names a directory and a missing
directory too, and leaves no lock file beside a directory.

Needs root, unshare(1), PERFLOGD and PERFLOG_BUILD_DIR."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perflogtest import Daemon, check, finish, require_root  # noqa: E402
from test_cli_export import DIRTY, PERFLOG, client_env  # noqa: E402

NOBODY = 65534


def export_db(path, user=None):
    p = subprocess.run([os.path.abspath(PERFLOG), "export", "--db", path, "--from", "-1h", DIRTY],
                       capture_output=True, timeout=60, env=client_env("http://127.0.0.1:1"),
                       user=user, cwd="/")
    return p.returncode, p.stderr.decode(errors="replace")


def daemon_db(path):
    p = subprocess.run([os.environ["PERFLOGD"], "--db", path, "--listen", "127.0.0.1:1"],
                       capture_output=True, timeout=30)
    return p.returncode, p.stderr.decode(errors="replace")


def main():
    require_root()
    tmp = tempfile.mkdtemp(prefix="perflog-dberr-")
    os.chmod(tmp, 0o755)
    d = Daemon(db=os.path.join(tmp, "perflog.db")).start(wait_ticks=2)
    d.stop()
    db = d.db
    try:
        rc, err = export_db(db)
        check(rc == 0, f"the database itself opens ({err.strip()!r})")

        bad = os.path.join(tmp, "nodir", "perflog.db")
        rc, err = export_db(bad)
        check(rc == 1 and bad in err and "no such directory" in err and os.path.join(tmp, "nodir") in err,
              f"a missing directory: named ({err.strip()!r})")

        bad = os.path.join(tmp, "missing.db")
        rc, err = export_db(bad)
        check(rc == 1 and bad in err and "no such file" in err, f"a missing file: named ({err.strip()!r})")

        rc, err = export_db(tmp)
        check(rc == 1 and tmp in err and "is a directory" in err, f"a directory: named ({err.strip()!r})")

        private = os.path.join(tmp, "private.db")
        shutil.copy(db, private)
        os.chmod(private, 0o600)
        rc, err = export_db(private, user=NOBODY)
        check(rc == 1 and private in err and "permission denied" in err,
              f"a file the user may not read: 'permission denied' ({err.strip()!r})")

        sub = os.path.join(tmp, "sub")
        os.mkdir(sub)
        rc, err = daemon_db(sub)
        check(rc != 0 and sub in err and "is a directory" in err and not os.path.exists(sub + ".lock"),
              f"perflogd --db DIR: 'is a directory', no DIR.lock made (rc {rc}, {err.strip()[-160:]!r})")
        bad = os.path.join(tmp, "nodir", "perflog.db")
        rc, err = daemon_db(bad)
        check(rc != 0 and "no such directory" in err and os.path.join(tmp, "nodir") in err,
              f"perflogd --db in a missing directory: named (rc {rc}, {err.strip()[-160:]!r})")

        ro = os.path.join(tmp, "ro")
        os.mkdir(ro)
        script = (f"mount -t tmpfs tmpfs {ro} && cp {db} {ro}/perflog.db && "
                  f"mount -o remount,ro {ro} && {os.path.abspath(PERFLOG)} export --db "
                  f"{ro}/perflog.db --from -1h '{DIRTY}'")
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                           capture_output=True, timeout=60, env=client_env("http://127.0.0.1:1"))
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 1 and f"{ro}/perflog.db" in err and "read-only filesystem" in err,
              f"a WAL database on a read-only filesystem: named (rc {p.returncode}, {err.strip()!r})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
