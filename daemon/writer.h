/*
 * writer.h - the thread that owns the database connection: it writes queued ticks, holds them when
 * the database cannot take them (full disk, locked file) and retries, and runs roll-ups and
 * retention between writes.
 */
#ifndef PERFLOG_WRITER_H
#define PERFLOG_WRITER_H

#include "daemon/queue.h"
#include "storage/db.h"

#include <stdint.h>

struct writer_settings {
    /* A tick waits at most commit_interval_ms - tick_interval_ms (gathered with the ones after
     * it) before it is committed, so a crash loses at most commit_interval_ms of ticks; 0: commit
     * each tick. tick_interval_ms is the sampling interval. */
    int64_t commit_interval_ms;
    int64_t tick_interval_ms;
    struct db_retention retention;
};

struct writer_stats {
    uint64_t written;        /* ticks committed since start */
    uint64_t write_failures; /* failed write attempts */
    int failing;             /* 1 while the database refuses writes */
    int last_error;          /* negative errno of the last failure, 0 if none */
    int64_t last_commit_wall_ms;
    int64_t db_used_bytes; /* at the last maintenance (db_size); 0 before */
    int db_over_cap;       /* 1: over max_db_bytes with nothing more to prune */
    /* SQLite's memory on the writer's connection at the last maintenance (db_mem_get); 0
     * before: its prepared statements, the schema, the page cache */
    int64_t db_stmt_bytes, db_schema_bytes, db_cache_bytes;
    int64_t wal_writes_in, wal_writes_out, wal_bytes;     /* struct db_mem's, same time */
    int64_t slices_cached, slices_read, span_cache_bytes; /* struct db_mem's, same time */
    uint64_t maint_rests;   /* rests between maintenance steps (MAINT_BURST_MS reached) */
    uint64_t maint_resumes; /* maintenance backlogs taken up again right after a write */
    uint64_t tick_rests;    /* rests inside a transaction of ticks (TICK_BURST_MS reached) */
    struct db_work work[DB_WORK_KINDS]; /* db_work_get after the last batch or maintenance */
};

struct writer;

/* Start the writer; it takes ownership of `db` and closes it when stopped. */
struct writer *writer_start_take(struct db *db, struct tick_queue *q,
                                 const struct writer_settings *s, char *err, size_t errlen);
void writer_reconfigure(struct writer *w, const struct writer_settings *s); /* thread-safe */
void writer_get_stats(struct writer *w, struct writer_stats *out);          /* thread-safe */

/*
 * Stop: write what is still queued (trying for up to `flush_timeout_ms` if the database refuses),
 * close the database and free the writer. Returns the number of ticks that could not be written.
 * The sampler must be stopped first. Accepts NULL.
 */
uint64_t writer_stop(struct writer *w, int64_t flush_timeout_ms);

#endif
