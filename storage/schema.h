/*
 * schema.h - SQL text generated from the counter table (collectors/counters.c).
 * Everything appends to a caller-owned sbuf; the int functions return 0 or -1 (out of memory, or a
 * formula too long to render).
 */
#ifndef PERFLOG_SCHEMA_H
#define PERFLOG_SCHEMA_H

#include "base/sbuf.h"
#include "collectors/model/counters.h"

/*
 * The tables that hold values: one per object (counters.h), then the extra PDH series
 * (pdh_extra.h). Each has a raw tier keyed by `tick` and roll-up tiers NAME_1m and NAME_1h keyed
 * by `bucket_ms`, so roll-ups, retention and the size cap treat them alike.
 */
#define SCHEMA_NVALUE_TABLES (OBJ_COUNT + 1)
#define SCHEMA_PDH_TABLE     OBJ_COUNT /* index of the extra PDH series' table */

/* Name of value table i (0 <= i < SCHEMA_NVALUE_TABLES). */
const char *schema_value_table(int i);

/*
 * The SELECT of an object's chunked rows, columns (tick, inst, then the raw fields in table
 * order), from `OBJ_chunks c` and its chunk_rows `r`; `where` (e.g. " WHERE c.last_tick >= ?1")
 * is appended as it is. The view OBJ_all is the raw table UNION ALL this.
 */
void schema_chunk_select(struct sbuf *b, const struct object_def *od, const char *where);
/* "SELECT tick, inst, <the raw fields> FROM OBJ": the same columns from the raw table. */
void schema_raw_select(struct sbuf *b, const struct object_def *od);
/* The same with NULL for the fields whose bit is clear in `present`: the columns a file of an
 * older perflogd lacks (fields are only ever appended). */
void schema_raw_select_fields(struct sbuf *b, const struct object_def *od, uint64_t present);

/*
 * DROP and CREATE the view OBJ_all of object `obj`: its raw rows, and when `chunked` also its
 * chunked ones (UNION ALL the above). counter_values reads every object through it. A view
 * without chunks needs no chunk_rows, so the stock sqlite3 shell reads a database that has none
 * without loading the extension.
 */
void schema_all_view(struct sbuf *b, int obj, int chunked);

/* CREATE TABLE IF NOT EXISTS ticks_chunks and its index: the compressed tier of `ticks`. */
void schema_ticks_tables(struct sbuf *b);
/* DROP and CREATE the view ticks_all (id, t_ms, interval_ms, missed): the plain ticks, and when
 * `chunked` also the chunked ones (through chunk_rows), like schema_all_view. */
void schema_ticks_view(struct sbuf *b, int chunked);
/* CREATE TABLE IF NOT EXISTS for every table and index of the current schema version but the
 * value tables' (schema_value_tables). */
void schema_tables(struct sbuf *b);
/* CREATE TABLE IF NOT EXISTS for value table i's tables and indexes: an object's raw table, its
 * chunks and their index, its minute and hour roll-ups (for SCHEMA_PDH_TABLE: pdh_paths,
 * pdh_values and its roll-ups). The writer makes them when the object's first instance comes,
 * so a machine without SMB shares, NFS mounts, followed processes or extra PDH paths keeps no
 * empty tables for them (each b-tree is a page at least, and every connection parses it). */
void schema_value_tables(struct sbuf *b, int i);
/* Refill the `counters` table (path parts, unit, kind, roll-up column of every counter). */
void schema_counters_rows(struct sbuf *b);
/* Give every instance a `series` row per counter of its object (after schema_counters_rows:
 * counters added since the last open get theirs too), and (re)create the trigger that does the
 * same for each new instance. Idempotent. */
void schema_series(struct sbuf *b);
/* DROP and CREATE the views counter_values and counter_rollups (their paths come from series).
 * counter_values reads the chunks of object o (through chunk_rows) when bit o of `chunked` is
 * set, so a database without chunks needs no extension. Only the value tables whose bit i is set
 * in `present` have their SELECTs (the others have no tables); with none, the views give no rows.
 */
int schema_views(struct sbuf *b, uint64_t chunked, uint64_t present);
/* For tests only: CREATE TEMP VIEW `values_name` and `rollups_name`, the same views in the form
 * they had before they were one SELECT per object (one SELECT per counter), so a test can
 * compare the two value for value. */
int schema_views_per_counter(struct sbuf *b, uint64_t chunked, uint64_t present,
                             const char *values_name, const char *rollups_name);
/* INSERT ... SELECT that rolls ticks (?1, ?2] of value table `i` up into its per-minute table. */
int schema_rollup_minute(struct sbuf *b, int i);
/* INSERT of one bucket of tier `suffix` ("1m", "1h") of object table `obj` (bucket_ms, inst, n,
 * then min, avg and max of each counter), merged like the batch roll-ups' rows: the running
 * roll-ups' output. */
int schema_rollup_values(struct sbuf *b, int obj, const char *suffix);
/* INSERT ... SELECT that rolls minute buckets [?1, ?2) of value table `i` up into hours: of its
 * instances [?3, ?4) for an object table (the extra PDH series' take ?1 and ?2 only). */
int schema_rollup_hour(struct sbuf *b, int i);

#endif
