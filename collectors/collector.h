/*
 * collector.h - the one interface every platform implements.
 *
 * A collector reads the platform's counters into a caller-owned raw_sample: cumulative values as
 * the OS reports them, and levels. It computes no rates (delta.c does). Platform sources live in
 * collectors/linux/ and collectors/windows/ and CMake picks one set; nothing here is #ifdef'd.
 */
#ifndef PERFLOG_COLLECTOR_H
#define PERFLOG_COLLECTOR_H

#include "collectors/model/collector_config.h"
#include "collectors/model/sample.h"

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

/*
 * Out-of-band readings (a run's edges): one reading of the raw cumulative counters at an instant
 * of the caller's choosing, apart from the ticks. An edge reader has its own files, buffers and
 * device caches, so reading one never disturbs the sampler's collector or its delta state; it
 * reads the same disks and interfaces (the same globs) as a collector of the same config.
 */
struct collector_edge;

/* One process as an edge reads it (/proc/PID/stat and io on Linux). */
struct collector_proc_io {
    int pid, ppid;
    char name[COUNTER_NAME_MAX];
    uint64_t start_ticks; /* when it started, clock ticks after boot: tells a reused pid apart */
    uint64_t cpu_ms;
    int have_io; /* 0: its io file could not be read (not root, or it exited meanwhile) */
    uint64_t rchar, wchar, read_bytes, write_bytes;
};

/* One control group's storage bytes (cgroup v2 io.stat or v1 blkio), summed over devices. */
#define COLLECTOR_CGROUP_NAME_MAX 256
struct collector_cgroup_io {
    char name[COLLECTOR_CGROUP_NAME_MAX]; /* "v2:system.slice/x.service", "v1:/user.slice" */
    uint64_t read_bytes, write_bytes;
};

/* The kernel's writeback settings, read at a run's start. Absent values are -1. */
enum collector_kernel_field {
    KERNEL_DIRTY_EXPIRE_CENTISECS,
    KERNEL_DIRTY_WRITEBACK_CENTISECS,
    KERNEL_DIRTY_BACKGROUND_RATIO,
    KERNEL_DIRTY_BACKGROUND_BYTES,
    KERNEL_DIRTY_RATIO,
    KERNEL_DIRTY_BYTES,
    KERNEL_DIRTY_THRESHOLD_BYTES,            /* vmstat nr_dirty_threshold x page size */
    KERNEL_DIRTY_BACKGROUND_THRESHOLD_BYTES, /* vmstat nr_dirty_background_threshold x page */
    KERNEL_NFIELDS
};

/* The names of the fields, as the report's `kernel` and Linux's /proc/sys/vm spell them (the
 * first six are sysctl names; the thresholds are bytes). Immutable. */
extern const char *const collector_kernel_names[KERNEL_NFIELDS];

#define COLLECTOR_EDGE_SCAN 0x1u /* read every process and control group (slow: a /proc walk) */

struct collector_edge_reading {
    int64_t wall_ms, mono_ns;
    struct raw_sample sample; /* raw cumulative values, as collector_collect gives them */
    int64_t kernel[KERNEL_NFIELDS];
    /* With COLLECTOR_EDGE_SCAN: every process that could be read, and every control group with
     * storage bytes. Grown as needed; freed by collector_edge_reading_free. */
    struct collector_proc_io *procs;
    size_t nprocs, procs_cap;
    struct collector_cgroup_io *cgroups;
    size_t ncgroups, cgroups_cap;
};

/* An edge reader for the disks and interfaces of `cfg`. NULL on out of memory. */
struct collector_edge *collector_edge_new(const struct collector_config *cfg);
void collector_edge_free(struct collector_edge *e); /* accepts NULL */

/*
 * Take one reading into `out` (a zeroed or reused reading; cleared first). `flags` is 0 or
 * COLLECTOR_EDGE_SCAN. Returns 0 or a negative errno. `*why` (may be NULL; left alone when
 * there is nothing to say) gets a static text when the platform cannot do part of what was
 * asked (Windows takes no scan). One thread at a time per reader: the caller locks.
 */
int collector_edge_read(struct collector_edge *e, unsigned flags,
                        struct collector_edge_reading *out, const char **why);
void collector_edge_reading_free(struct collector_edge_reading *r); /* keeps r itself */

#endif
