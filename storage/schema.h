/*
 * schema.h - SQL text generated from the counter table (collectors/counters.c).
 * Everything appends to a caller-owned sbuf; the int functions return 0 or -1 (out of memory, or a
 * formula too long to render).
 */
#ifndef PERFLOG_SCHEMA_H
#define PERFLOG_SCHEMA_H

#include "counters.h"
#include "sbuf.h"

/*
 * The tables that hold values: one per object (counters.h), then the extra PDH series
 * (pdh_extra.h). Each has a raw tier keyed by `tick` and roll-up tiers NAME_1m and NAME_1h keyed
 * by `bucket_ms`, so roll-ups, retention and the size cap treat them alike.
 */
#define SCHEMA_NVALUE_TABLES (OBJ_COUNT + 1)
#define SCHEMA_PDH_TABLE     OBJ_COUNT /* index of the extra PDH series' table */

/* Name of value table i (0 <= i < SCHEMA_NVALUE_TABLES). */
const char *schema_value_table(int i);

/* CREATE TABLE IF NOT EXISTS for every table and index of the current schema version. */
void schema_tables(struct sbuf *b);
/* Refill the `counters` table (path parts, unit, kind, roll-up column of every counter). */
void schema_counters_rows(struct sbuf *b);
/* Give every instance a `series` row per counter of its object (after schema_counters_rows:
 * counters added since the last open get theirs too), and (re)create the trigger that does the
 * same for each new instance. Idempotent. */
void schema_series(struct sbuf *b);
/* DROP and CREATE the views counter_values and counter_rollups (their paths come from series). */
int schema_views(struct sbuf *b);
/* INSERT ... SELECT that rolls ticks (?1, ?2] of value table `i` up into its per-minute table. */
int schema_rollup_minute(struct sbuf *b, int i);
/* INSERT ... SELECT that rolls minute buckets [?1, ?2) of value table `i` up into hours. */
int schema_rollup_hour(struct sbuf *b, int i);

#endif
