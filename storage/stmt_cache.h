/*
 * stmt_cache.h - kept prepared statements for SQL a connection runs again and again but not on
 * every tick: the writer's maintenance (meta reads and writes, the roll-up, chunk and retention
 * queries) ran every statement through sqlite3_prepare_v2 and sqlite3_finalize each time, and
 * parsing was about a tenth of the writer's time on this machine (bench/README.md).
 *
 * A fixed number of slots keyed by the SQL text; the least recently used statement is finalized
 * when a new text needs its slot. Statements are prepared with SQLITE_PREPARE_PERSISTENT and, like
 * any prepared statement, SQLite re-prepares them itself after a schema change.
 *
 * Use: st = stmt_cache_get(...); bind; step; read the columns; sqlite3_reset(st). A statement left
 * un-reset keeps its read transaction open: stmt_cache_get resets and unbinds it before it hands
 * it out again, but a caller resets it as soon as it is done. Not thread-safe: one cache per
 * connection, used by one thread at a time, like the connection.
 */
#ifndef PERFLOG_STMT_CACHE_H
#define PERFLOG_STMT_CACHE_H

#include <sqlite3.h>
#include <stdint.h>

#define STMT_CACHE_SLOTS 48

struct stmt_cache {
    sqlite3 *conn;
    struct {
        char *sql; /* NULL: free */
        sqlite3_stmt *st;
        uint64_t used; /* the clock at the last get */
    } slot[STMT_CACHE_SLOTS];
    uint64_t clock;
    uint64_t prepares; /* statements prepared (a miss each), for tests and benchmarks */
};

void stmt_cache_init(struct stmt_cache *c, sqlite3 *conn);

/* The kept statement of `sql`, reset and with no bindings, prepared on the first use. NULL when it
 * does not prepare (then *rc is SQLite's result code, and nothing is kept) or out of memory
 * (*rc = SQLITE_NOMEM). */
sqlite3_stmt *stmt_cache_get(struct stmt_cache *c, const char *sql, int *rc);

/* The statements kept now. */
int stmt_cache_count(const struct stmt_cache *c);

/* Finalize every statement (before the connection closes, or to drop what a schema change made
 * useless); the cache stays usable. */
void stmt_cache_clear(struct stmt_cache *c);

#endif
