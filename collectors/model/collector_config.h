/*
 * collector_config.h - what a collector is told: the root of /proc and /sys, the device and
 * interface globs, extra PDH paths, and the processes to follow. Data only, so that the
 * configuration and the run manager can name it without depending on a platform's collector.
 */
#ifndef PERFLOG_COLLECTOR_CONFIG_H
#define PERFLOG_COLLECTOR_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define COLLECTOR_MAX_GLOBS 32

struct collector_config {
    const char *root; /* prefix for /proc and /sys, "/" in production, a fixture tree in tests */
    /* fnmatch(3) globs on device and interface names; an empty include list includes all */
    const char *disk_include[COLLECTOR_MAX_GLOBS];
    size_t n_disk_include;
    const char *disk_exclude[COLLECTOR_MAX_GLOBS];
    size_t n_disk_exclude;
    const char *net_include[COLLECTOR_MAX_GLOBS];
    size_t n_net_include;
    const char *net_exclude[COLLECTOR_MAX_GLOBS];
    size_t n_net_exclude;
    /* Extra counter paths to log, as typeperf -cf lists them ("\\LogicalDisk(C:)\\% Free Space").
     * PDH paths: the Windows collector reads them; the Linux one has no use for them. */
    const char *pdh_counters[COLLECTOR_MAX_GLOBS];
    size_t n_pdh_counters;
};

/* A process to follow with all its descendants: a run's pid, and when the run started. */
struct collector_proc_root {
    int pid;
    int64_t since_wall_ms; /* descendants started after this count their I/O from zero */
};

#define COLLECTOR_MAX_ROOTS 64

/*
 * The one deep copy of a configuration: *dst (overwritten) gets its own copy of the root and of
 * every list, at most COLLECTOR_MAX_GLOBS entries each, so it outlives `src` (a reload frees the
 * config it came from). Returns 0, or -ENOMEM with *dst empty. Free with collector_config_free.
 */
int collector_config_copy(struct collector_config *dst, const struct collector_config *src);

/* Free what collector_config_copy made and empty *c. Only for such a copy; accepts NULL. */
void collector_config_free(struct collector_config *c);

#endif
