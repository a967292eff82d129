/*
 * db_lock.c - the platform-independent half of db_lock.h: the lock file's text and the message.
 */
#include "storage/db_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long db_lock_parse_pid(const char *buf, size_t n)
{
    char text[32], *end;
    long pid;

    if (n == 0 || n >= sizeof(text))
        return -1;
    memcpy(text, buf, n);
    text[n] = '\0';
    pid = strtol(text, &end, 10);
    return end != text && pid > 0 && (*end == '\n' || *end == '\0') ? pid : -1;
}

void db_lock_busy_message(char *err, size_t errlen, const char *db_path, const char *lock_path,
                          long pid)
{
    if (pid > 0)
        snprintf(err, errlen, "%s: database in use by perflogd pid %ld (lock file %s)", db_path,
                 pid, lock_path);
    else
        snprintf(err, errlen, "%s: database in use by another perflogd (lock file %s)", db_path,
                 lock_path);
}
