/*
 * db_lock_windows.c - db_lock.h with LockFileEx: an exclusive lock on one byte far past the pid,
 * since a Windows lock is mandatory for its range and the pid must stay readable by a second
 * daemon. The handle, and with it the lock, goes away when the process ends.
 */
#include "base/log.h"
#include "storage/db_lock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define LOCK_OFFSET 0x40000000u /* the locked byte: past any pid text */

struct db_lock {
    HANDLE h;
};

static HANDLE open_utf8(const char *path)
{
    wchar_t wpath[4200];

    if (!MultiByteToWideChar(CP_UTF8, 0, path, -1, wpath, (int)(sizeof(wpath) / sizeof(wpath[0]))))
        return INVALID_HANDLE_VALUE;
    return CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE,
                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
                       FILE_ATTRIBUTE_NORMAL, NULL);
}

/* The pid the holder wrote, or -1 (it writes it just after taking the lock: wait a little). */
static long holder_pid(HANDLE h)
{
    for (int tries = 0; tries < 20; tries++) {
        OVERLAPPED ov = {0};
        char buf[32];
        DWORD n = 0;

        if (ReadFile(h, buf, sizeof(buf), &n, &ov) && n > 0 && db_lock_parse_pid(buf, n) > 0)
            return db_lock_parse_pid(buf, n);
        Sleep(10);
    }
    return -1;
}

int db_lock_take(const char *db_path, struct db_lock **out, char *err, size_t errlen)
{
    char path[4200], pid[32];
    OVERLAPPED ov = {0};
    struct db_lock *l;
    DWORD n = 0;
    HANDLE h;
    int len;

    snprintf(path, sizeof(path), "%s.lock", db_path);
    h = open_utf8(path);
    if (h == INVALID_HANDLE_VALUE) {
        snprintf(err, errlen, "%s: cannot open the lock file %s (Windows error %lu)", db_path, path,
                 (unsigned long)GetLastError());
        return -EACCES;
    }
    ov.Offset = LOCK_OFFSET;
    if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
        DWORD e = GetLastError();
        long holder;

        if (e != ERROR_LOCK_VIOLATION && e != ERROR_IO_PENDING) {
            snprintf(err, errlen, "%s: cannot lock %s (Windows error %lu)", db_path, path,
                     (unsigned long)e);
            CloseHandle(h);
            return -EIO;
        }
        holder = holder_pid(h);
        db_lock_busy_message(err, errlen, db_path, path, holder);
        CloseHandle(h);
        return -EBUSY;
    }
    len = snprintf(pid, sizeof(pid), "%lu\n", (unsigned long)GetCurrentProcessId());
    memset(&ov, 0, sizeof(ov));
    /* Not fatal (a full disk must not stop a start): the pid only names us to a second daemon. */
    if (!SetEndOfFile(h) || !WriteFile(h, pid, (DWORD)len, &n, &ov) || n != (DWORD)len)
        log_warnx("cannot write the pid into the lock file %s (Windows error %lu)", path,
                  (unsigned long)GetLastError());
    l = malloc(sizeof(*l));
    if (!l) {
        snprintf(err, errlen, "%s: out of memory", db_path);
        CloseHandle(h);
        return -ENOMEM;
    }
    l->h = h;
    *out = l;
    return 0;
}

void db_lock_release(struct db_lock *l)
{
    if (!l)
        return;
    /* Emptied first so nobody reads our pid once we are gone; the file stays in place. */
    SetFilePointer(l->h, 0, NULL, FILE_BEGIN);
    SetEndOfFile(l->h);
    CloseHandle(l->h);
    free(l);
}
