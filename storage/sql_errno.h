/*
 * sql_errno.h - an SQLite result code as the negative errno the storage layer returns.
 */
#ifndef PERFLOG_SQL_ERRNO_H
#define PERFLOG_SQL_ERRNO_H

/* SQLITE_FULL -> -ENOSPC, BUSY/LOCKED -> -EBUSY, NOMEM -> -ENOMEM, READONLY/PERM/CANTOPEN ->
 * -EACCES, anything else -> -EIO. Extended codes are accepted. Pure. */
int sql_errno(int rc);

#endif
