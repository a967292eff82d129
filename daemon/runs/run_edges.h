/*
 * run_edges.h - a run's edges: one out-of-band reading of the raw counters when a run starts,
 * ends and settles (collector.h, collector_edge_*), turned into the JSON stored with the run
 * (docs/report.md, "edges"). The 1 s ticks are not touched: an edge is a reading of its own.
 */
#ifndef PERFLOG_RUN_EDGES_H
#define PERFLOG_RUN_EDGES_H

#include "collectors/collector.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct run_edges;

/* An edge taker reading the disks and interfaces of `cfg`. NULL on out of memory. */
struct run_edges *run_edges_new(const struct collector_config *cfg);
void run_edges_free(struct run_edges *re); /* accepts NULL */

/* Read the disks and interfaces of `cfg` from the next edge on (a reload changed the globs).
 * Returns 0, or -ENOMEM with the old ones kept. Thread-safe. */
int run_edges_reconfigure(struct run_edges *re, const struct collector_config *cfg);

/*
 * Take one edge now: the EDGE object of docs/report.md (t_ms, mono_ns, disks, nics, cpu, mem,
 * procs: `root_pid` and its descendants, none when root_pid <= 0) and, with `scan`, "io_scan":
 * the storage bytes of every process and control group that has done any, which the report uses
 * to name the others. With `kernel` non-NULL, *kernel gets the writeback settings (KERNEL).
 * Returns a new object, or NULL with the reason in `why`. Thread-safe (one lock inside).
 */
json_t *run_edges_take(struct run_edges *re, int64_t root_pid, int scan, json_t **kernel, char *why,
                       size_t whylen);

/* What the settle wait looks at, read cheaply (no process walk): {"t_ms", "disks"} as in an EDGE.
 * Returns a new object or NULL. Thread-safe. */
json_t *run_edges_now(struct run_edges *re);

#endif
