/*
 * walbuf.h - a SQLite VFS over the default one that hands a commit's WAL frames to the file system
 * in a few large writes instead of two writes a frame (a frame's header, then its page).
 *
 * Why: SQLite writes each WAL frame with two calls of xWrite, so a commit of n pages costs 2n
 * pwrite() calls. On this project's target machines a system call is the dearest part of a small
 * commit (bench/README.md: the writer's commits were 14 pwrite() a tick on the real machine, 124
 * at 256 CPUs / 1000 disks / 1000 NICs, and a chunk step's DELETE commits hundreds of pages).
 *
 * How it stays correct: bytes are held only while the connection holds the WAL's write lock, and
 * only as one contiguous run. They reach the file before SQLite publishes them, whatever comes
 * first: the page that follows a commit frame's header (so a failed write fails the commit, as it
 * would have without the buffer), a memory barrier on the wal-index (SQLite's last step before
 * it publishes a new WAL header to readers), the release of any wal-index lock, and every other
 * call on the WAL file (read, sync, truncate, size, file control, close). A reader, in this
 * process or another, therefore never sees a frame that is not in the file, and a crash loses
 * only what a crash in the middle of SQLite's own writes would.
 *
 * A WAL file buffers only once walbuf_attach has paired it with its connection's database file;
 * until then, and for every other file, each call goes straight to the default VFS.
 */
#ifndef PERFLOG_WALBUF_H
#define PERFLOG_WALBUF_H

#include <sqlite3.h>
#include <stdint.h>

#define WALBUF_VFS_NAME "perflog-walbuf"

/* Register the VFS (not as the default). Thread-safe, idempotent. Returns a SQLite result code. */
int walbuf_register(void);

/*
 * Pair the WAL file of `conn`'s main database with its database file, so its writes are
 * gathered. Call after the connection is in WAL mode, opened with WALBUF_VFS_NAME. Returns
 * SQLITE_OK, or SQLITE_NOTFOUND when the connection does not use this VFS or has no WAL file
 * open (nothing is gathered then; everything still works).
 */
int walbuf_attach(sqlite3 *conn);

struct walbuf_stats {
    uint64_t writes_in;  /* xWrite calls SQLite made on the attached WAL file */
    uint64_t writes_out; /* write calls made on the file system for them */
    uint64_t bytes;      /* bytes written */
};

/* The attached WAL file's counts (zeros when none). Call on the connection's own thread. */
void walbuf_get_stats(sqlite3 *conn, struct walbuf_stats *out);

#endif
