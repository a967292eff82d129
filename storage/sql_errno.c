/*
 * sql_errno.c - SQLite result codes to negative errno values; see sql_errno.h.
 */
#include "storage/sql_errno.h"

#include <errno.h>
#include <sqlite3.h>

int sql_errno(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
        return -EACCES;
    default:
        return -EIO;
    }
}
