/*
 * pdh_extra.h - storage of the extra PDH series (collector.h: pdh_counters): their SQL and their
 * writes. Used by schema.c (tables, views, roll-ups) and db.c (writes); readers read them with
 * reader.h.
 *
 * An extra series is one PDH path with PDH's formatted value per tick. pdh_paths names each path
 * once (id, path, and its parts as pdh_path.h cuts them); pdh_values holds one REAL per (tick,
 * path), NULL for a tick where PDH had no value; pdh_values_1m and pdh_values_1h hold n (values in
 * the bucket), min, avg and max per (bucket, path). Raw and roll-up tables are keyed like the
 * object tables (tick, bucket_ms), so retention and the size cap prune them the same way
 * (schema.h: schema_value_table).
 */
#ifndef PERFLOG_PDH_EXTRA_H
#define PERFLOG_PDH_EXTRA_H

#include "base/sbuf.h"
#include "collectors/model/sample.h"

#include <sqlite3.h>
#include <stdint.h>

#define PDH_EXTRA_TABLE "pdh_values" /* the raw tier; roll-ups add _1m and _1h */

/* CREATE TABLE IF NOT EXISTS for pdh_paths, pdh_values and its roll-ups. */
void pdh_extra_tables(struct sbuf *b);
/* One SELECT with the columns of counter_values, for its UNION ALL. */
void pdh_extra_values_view(struct sbuf *b);
/* One SELECT with the columns of counter_rollups for tier `suffix` ("1m" or "1h"). */
void pdh_extra_rollups_view(struct sbuf *b, const char *suffix);
/* INSERT ... SELECT that rolls the values of ticks (?1, ?2] up into minutes. */
void pdh_extra_rollup_minute(struct sbuf *b);
/* INSERT ... SELECT that rolls minute buckets [?1, ?2) up into hours. */
void pdh_extra_rollup_hour(struct sbuf *b);

struct pdh_extra_store;

/* The writes on `conn`, prepared on the first tick with extras (the tables must exist by then:
 * the writer makes them, schema_value_tables). Returns 0 and sets *out, or -ENOMEM. */
int pdh_extra_store_new(sqlite3 *conn, struct pdh_extra_store **out);
void pdh_extra_store_free(struct pdh_extra_store *s); /* accepts NULL */

/*
 * Store the extras of tick `t` as rows of tick `tick_id`, inside the caller's transaction: a path
 * seen for the first time gets its pdh_paths row. A path that does not cut (pdh_path.h) is
 * skipped; a path given twice in one tick keeps its first value. Returns 0 or a negative errno.
 */
int pdh_extra_store_write(struct pdh_extra_store *s, int64_t tick_id, const struct tick *t);

/* Forget the cached path ids, after a rollback took their rows away. */
void pdh_extra_store_forget(struct pdh_extra_store *s);

#endif
