/*
 * schema.h - SQL text generated from the counter table (collectors/counters.c).
 * Everything appends to a caller-owned sbuf; the int functions return 0 or -1 (out of memory, or a
 * formula too long to render).
 */
#ifndef PERFLOG_SCHEMA_H
#define PERFLOG_SCHEMA_H

#include "sbuf.h"

/* CREATE TABLE IF NOT EXISTS for every table and index of the current schema version. */
void schema_tables(struct sbuf *b);
/* Refill the `counters` table (path parts, unit, kind, roll-up column of every counter). */
void schema_counters_rows(struct sbuf *b);
/* DROP and CREATE the views counter_values and counter_rollups. */
int schema_views(struct sbuf *b);
/* INSERT ... SELECT that rolls ticks (?1, ?2] of object `obj` up into its per-minute table. */
int schema_rollup_minute(struct sbuf *b, int obj);
/* INSERT ... SELECT that rolls minute buckets [?1, ?2) of object `obj` up into hours. */
int schema_rollup_hour(struct sbuf *b, int obj);

#endif
