/*
 * collector.h - the one interface every platform implements.
 *
 * A collector reads the platform's counters into a caller-owned raw_sample: cumulative values as
 * the OS reports them, and levels. It computes no rates (delta.c does). Platform sources live in
 * collectors/linux/ and collectors/windows/ and CMake picks one set; nothing here is #ifdef'd.
 */
#ifndef PERFLOG_COLLECTOR_H
#define PERFLOG_COLLECTOR_H

#include "collector_config.h"
#include "sample.h"

#include <stddef.h>
#include <stdint.h>

struct collector;

/* Create a collector; copies what it needs from `cfg`. NULL on out of memory. */
struct collector *collector_new(const struct collector_config *cfg);

/*
 * Read every object into `out` (cleared first). A file that cannot be read leaves its object empty
 * and is logged once until it can be read again; a malformed line is skipped with one warning.
 * Returns the number of objects read, or a negative errno if none could be. Not thread-safe: one
 * thread (the sampler) owns a collector.
 */
int collector_collect(struct collector *c, struct raw_sample *out);

void collector_free(struct collector *c); /* accepts NULL */

/*
 * Follow these processes (at most COLLECTOR_MAX_ROOTS; the rest are ignored) and every process
 * descended from them, from the next collect on: each becomes a row of OBJ_PROCESS named
 * "comm:pid". A process keeps being followed after its parent exits, until it exits itself or its
 * root is no longer given. n = 0 stops following and releases what following held. Not
 * thread-safe: call it from the thread that collects, between collects.
 */
void collector_follow(struct collector *c, const struct collector_proc_root *roots, size_t n);

/* The unit of the Processor object's cumulative fields, in ticks per second: USER_HZ on Linux,
 * 10^7 on Windows, where PDH counts processor time in 100 ns units. Thread-safe. */
long collector_cpu_ticks_per_s(void);

/* 1 when `name` passes the include/exclude globs (exclude wins). Pure. */
int collector_name_selected(const char *name, const char *const *include, size_t n_include,
                            const char *const *exclude, size_t n_exclude);

#endif
