/*
 * db.h - the SQLite counter log: schema, tick writes, roll-ups and retention.
 *
 * Layout (docs/schema.md has the full description): one `ticks` row per tick holds its real UTC
 * time and real interval; one WITHOUT ROWID table per object holds a row per (tick, instance) with
 * the raw fields as integers (cumulative fields as per-tick deltas, gauges as read). Roll-up tables
 * per object hold min/avg/max of every counter per minute and per hour. The extra PDH series of a
 * Windows config (pdh_counters) have tables of their own (pdh_extra.h), pruned and rolled up with
 * the others. The views counter_values and counter_rollups render it all as plain (path, value)
 * rows for the stock sqlite3 shell.
 *
 * A struct db is used by one thread at a time (the writer); readers open their own connections.
 */
#ifndef PERFLOG_DB_H
#define PERFLOG_DB_H

#include "collectors/model/sample.h"

#include <stdint.h>

#define DB_SCHEMA_VERSION 8

struct db;

struct db_retention {
    int raw_days;      /* per-tick data */
    int minute_days;   /* per-minute roll-ups */
    int hour_days;     /* per-hour roll-ups */
    int64_t max_bytes; /* size cap of the file and its WAL (see db_maintain); 0: none */
    int chunk_after_s; /* raw rows older than this go into the compressed tier; 0: never */
};

/* What the size cap found at the last db_maintain. */
struct db_size {
    int64_t used_bytes; /* pages in use (not on the freelist); the WAL's budget comes on top */
    int64_t file_bytes; /* the main file plus the WAL */
    int over_cap;       /* 1: over max_bytes and nothing more may be pruned */
};

/*
 * Open (creating or upgrading) the database at `path`. `host` is recorded in the meta table.
 * Returns 0 and sets *out, or a negative errno with a message in err (a database from a newer
 * schema version gives -EPROTO).
 */
int db_open(const char *path, const char *host, struct db **out, char *err, size_t errlen);
void db_close(struct db *d); /* accepts NULL */

/*
 * Write ticks[0..n) in one transaction. Returns 0, or -ENOSPC (disk or quota full), -EBUSY
 * (database locked by another process), -EIO (other errors; db_errmsg tells). On error nothing of
 * the batch is stored and the connection is ready for a retry.
 */
int db_write_ticks(struct db *d, struct tick *const *ticks, size_t n);
/*
 * A function db_write_ticks calls inside its transaction after each tick's rows (before the next
 * tick's, or before the commit), or NULL for none. The writer rests there when the transaction
 * has been on the CPU long enough (daemon/writer.c): at 1 000 disks a tick's rows are 5-6 ms, and
 * a transaction of two ticks and its commit was one burst of 12-22 ms. Readers do not wait for a
 * writer's open transaction (WAL); another writer waits up to its busy timeout.
 */
void db_set_tick_pause(struct db *d, void (*pause)(void *arg), void *arg);
/*
 * Write ahead, in a transaction of its own, the running roll-up's buckets that a tick of time
 * wall_ms completes: the minute's, when wall_ms is of a later minute; else the hour's, when wall_ms
 * is of a later hour (one of the two per call), at most 512 buckets a call (db_set_rollup_slice):
 * the last slice finishes the minute (the hour) and moves the roll-up's marks, so readers see
 * the minute whole or not at all. db_write_ticks writes what was not written ahead in the tick's
 * own transaction; the numbers are the same either way. At 1 000 disks each is 2 300 rows, 10-25
 * ms in one transaction: called before the tick, with a rest between, the tick's commit carries
 * its own rows only (daemon/writer.c); a checkpoint that its commit makes due is left to the
 * caller, as a maintenance step's is (db_checkpoint_due). Returns 1 when it wrote something (call
 * again: more slices, or the hour, may be due), 0 when nothing is due, or a negative errno (that
 * call's slice not written; the batch roll-up in db_maintain then takes those ticks, after taking
 * back the slices written before).
 */
int db_rollup_ahead(struct db *d, int64_t wall_ms);
/* Buckets per transaction of db_rollup_ahead (0: the default, 512), for tests. */
void db_set_rollup_slice(struct db *d, size_t rows);
/* Whether the minute roll-up runs as ticks are written (on by default, where the SQLite library
 * sums as it expects) or only in db_maintain's batches: the same numbers either way. */
void db_set_incremental_rollups(struct db *d, int on);

/*
 * Do a bounded step of background work: roll up completed minutes and hours, then prune data
 * older than the retention, then keep the file and its WAL under r->max_bytes. The WAL has a
 * budget of an eighth of the cap (64 KiB to 4 MiB; 4 MiB without a cap): it is checkpointed
 * automatically at half of it and cut back to half of it when it is reset, and no step writes
 * more than about a quarter of it. When the pages in use pass 90% of the rest (the other 10% is
 * room for growth between steps) the oldest raw ticks go first, keeping the newest hour; then the
 * oldest minute buckets, keeping the newest day; then the oldest hour buckets, keeping the newest
 * 30 days. Freed pages go back to the file system (a database
 * created by this version uses incremental auto-vacuum; an older file stops growing but keeps
 * its size). Each call does at most a few thousand rows of work so it never holds
 * the writer for long. `now_ms` is the current UTC time. Returns 1 when work remains, 0 when done,
 * negative errno on error (nothing half-done stays: each step is its own transaction).
 */
int db_maintain(struct db *d, int64_t now_ms, const struct db_retention *r);
/*
 * db_maintain's round of steps (minutes, hours, chunks, merge, retention, size, each its own
 * transaction), split: the call returns 1 after a step that took `split_ns` of the thread's CPU
 * time or more while steps of the round are left, and the next call (db_maintain's too) goes on
 * from the step after it. At 1 000 disks a chunk step and a merge step take 10-25 ms each, and one
 * call held both. Returns as db_maintain does otherwise.
 */
int db_maintain_split(struct db *d, int64_t now_ms, const struct db_retention *r, int64_t split_ns);

/* The writer's work on the connection since the open, by kind, in the thread's CPU time: the
 * ticks' transactions (a checkpoint their commit made included), the roll-up buckets written ahead,
 * each step of db_maintain, and the checkpoints the caller asked for. For /api/v1/health. */
enum db_work_kind {
    DB_WORK_TICKS,
    DB_WORK_AHEAD,
    DB_WORK_MINUTES,
    DB_WORK_HOURS,
    DB_WORK_CHUNKS,
    DB_WORK_MERGE,
    DB_WORK_RETENTION,
    DB_WORK_SIZE,
    DB_WORK_CHECKPOINT,
    DB_WORK_KINDS
};
struct db_work {
    int64_t n;              /* calls (transactions, steps, checkpoints) */
    int64_t cpu_ns, max_ns; /* their CPU time, all told and the longest one */
};
void db_work_get(struct db *d, struct db_work out[DB_WORK_KINDS]);
const char *db_work_name(int kind); /* "ticks", "ahead", "minutes", ... */

/*
 * Checkpoint the WAL into the database and truncate it to zero bytes (SQLITE_CHECKPOINT_TRUNCATE),
 * which gives its space back to the file system. Does not wait for readers. Returns 0, -EBUSY when
 * a reader still uses the WAL, -ENOSPC when the database file could not grow to take the pages (the
 * WAL then stays as it was: nothing is lost), or another negative errno. Call between writes.
 */
int db_checkpoint(struct db *d);
/* Whether the WAL holds enough to be worth db_checkpoint at the end of a maintenance: a quarter
 * of its budget. Each checkpoint costs two fdatasync (the database's, and the WAL's header at its
 * restart) and copies every page the commits since rewrote, whatever their number. */
int db_truncate_due(const struct db *d);
/* Whether the WAL has reached its checkpoint mark; a PASSIVE checkpoint (no wait). */
int db_checkpoint_due(const struct db *d);
int db_checkpoint_passive(struct db *d);

/* The size figures of the last db_maintain (zeros before the first). */
void db_size_get(struct db *d, struct db_size *out);

/* The memory SQLite holds for the connection (sqlite3_db_status): its prepared statements, the
 * schema and the page cache, in bytes, and the number of prepared statements. */
struct db_mem {
    int64_t stmt_bytes, schema_bytes, cache_bytes;
    /* the WAL's writes since the open (storage/walbuf.h): the calls SQLite made, those the file
     * system got, and the bytes */
    int64_t wal_writes_in, wal_writes_out, wal_bytes;
    /* the chunk steps' slices (an object's instances over a span) coded from the span cache and
     * read back from the table since the open, and the cache's bytes now (span_cache.h) */
    int64_t slices_cached, slices_read, span_cache_bytes;
    int stmts;      /* prepared statements on the connection, kept_stmts included */
    int kept_stmts; /* of them, maintenance's kept statements (stmt_cache.h) */
};
void db_mem_get(struct db *d, struct db_mem *out);

const char *db_errmsg(struct db *d);
const char *db_path(struct db *d);

/* Render the SQL schema (tables, then views) into a malloc'd string; for docs and tests. */
char *db_schema_sql(void);

#endif
