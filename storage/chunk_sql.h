/*
 * chunk_sql.h - the series chunk codec (chunk.h) in SQL, on any SQLite connection:
 *
 *   chunk_encode(tick, value)   aggregate: the chunk (BLOB) of the rows it sees, which must come
 *                               in increasing tick order (aggregate over an ordered subquery);
 *                               value may be NULL. NULL when it saw no row.
 *   chunk_points(data)          table-valued function: the points of chunk `data` as rows
 *                               (tick INTEGER, value INTEGER or NULL), in tick order.
 *
 * The same code is built into perflogd (registered on its connections) and, as the loadable
 * extension build/perflog_chunk.so, for the stock shell: `.load build/perflog_chunk`.
 */
#ifndef PERFLOG_CHUNK_SQL_H
#define PERFLOG_CHUNK_SQL_H

#include <sqlite3.h>

/* Register both functions on `db`. Returns an SQLite result code. */
int chunk_sql_register(sqlite3 *db);

#endif
