/*
 * db_lock.h - one perflogd per database: an exclusive lock on a file beside the database
 * (PATH.lock) held for the daemon's whole life, with the holder's pid in it so a second daemon can
 * say who has the database.
 *
 * The lock is advisory and apart from SQLite's own locks: `perflog export --db`, the sqlite3 shell
 * and the API's readers keep reading the database while a daemon holds it. The operating system
 * drops the lock when the holder exits, however it exits (kill -9 included), so a stale file
 * never blocks a new daemon.
 */
#ifndef PERFLOG_DB_LOCK_H
#define PERFLOG_DB_LOCK_H

#include <stddef.h>

struct db_lock;

/*
 * Take the lock of the database at `db_path` and write this process's pid into the lock file.
 * Returns 0 and sets *out; -EBUSY when another process holds it, with "DB: database in use by
 * perflogd pid N" in err; another negative errno with the reason in err when the lock file cannot
 * be opened.
 */
int db_lock_take(const char *db_path, struct db_lock **out, char *err, size_t errlen);

/* Release the lock and free it (the file stays, empty of meaning). Accepts NULL. */
void db_lock_release(struct db_lock *l);

/* For the platform files: the pid written in a lock file's text buf[0..n), or -1; and the
 * message of a database held by `pid` (-1: not known). Pure. */
long db_lock_parse_pid(const char *buf, size_t n);
void db_lock_busy_message(char *err, size_t errlen, const char *db_path, const char *lock_path,
                          long pid);

#endif
