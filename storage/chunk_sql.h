/*
 * chunk_sql.h - the series chunk codec (chunk.h) in SQL, on any SQLite connection:
 *
 *   chunk_encode(tick, value)   aggregate: the chunk (BLOB) of the rows it sees, which must come
 *                               in increasing tick order (aggregate over an ordered subquery);
 *                               value may be NULL. NULL when it saw no row.
 *   chunk_points(data)          table-valued function: the points of chunk `data` as rows
 *                               (tick INTEGER, value INTEGER or NULL), in tick order.
 *   chunk_rows(d0, d1, ...)     table-valued function: up to 16 chunks of the same ticks side by
 *                               side, as rows (tick, v0, v1, ... v15), in tick order; a NULL or
 *                               missing argument gives a column of NULLs. The chunk tables'
 *                               views (schema.c) read their rows with it.
 *
 * The same code is built into perflogd (registered on its connections) and, as the loadable
 * extension build/perflog_chunk.so, for the stock shell: `.load build/perflog_chunk`.
 */
#ifndef PERFLOG_CHUNK_SQL_H
#define PERFLOG_CHUNK_SQL_H

#include <sqlite3.h>

/*
 * The chunk steps' edge, as SQL: meta's chunk_tick, the first tick of the span a chunk step has in
 * hand (0 before the first step). Below it every object's rows are chunked, and the raw rows left
 * there are deleted a range of ticks at a time after their span is done; from it on the raw rows
 * are the ones to read, and the chunks the steps wrote of the span in hand wait, unread, until its
 * last step moves the edge past them. So a reader reads raw rows with tick >= edge and chunks with
 * last_tick < edge, and sees each point once (storage/db.c maintain_chunks).
 */
#define CHUNK_EDGE_SQL "(SELECT coalesce(max(value), 0) FROM meta WHERE key = 'chunk_tick')"

/* Register the three functions on `db`. Returns an SQLite result code. */
int chunk_sql_register(sqlite3 *db);

#endif
