/*
 * linux_others.h - who else did storage I/O: every process's /proc/PID/io and every control
 * group's storage bytes (cgroup v2 io.stat, cgroup v1 blkio.throttle.io_service_bytes), read for
 * a run's edges. Pure parsers plus the two directory walks. Private to collectors/linux/.
 */
#ifndef PERFLOG_LINUX_OTHERS_H
#define PERFLOG_LINUX_OTHERS_H

#include "collectors/collector.h"

#include <stddef.h>
#include <stdint.h>

/*
 * cgroup v2 io.stat (Documentation/admin-guide/cgroup-v2.rst, "io.stat"): one line per device,
 * "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N"; the bytes of every device are summed
 * into *read_bytes and *write_bytes. Keys it does not know are skipped. Returns 0, or -EINVAL
 * when a line has a malformed rbytes/wbytes value (the outputs untouched). Pure.
 */
int others_parse_io_stat(const char *buf, size_t len, uint64_t *read_bytes, uint64_t *write_bytes);

/*
 * cgroup v1 blkio.throttle.io_service_bytes (Documentation/admin-guide/cgroup-v1/blkio-
 * controller.rst): "MAJ:MIN Read N", "MAJ:MIN Write N", Sync, Async, Discard, Total lines per
 * device and one "Total N" line; the Read and Write lines are summed. Returns 0 or -EINVAL (a
 * Read or Write line without a number; the outputs untouched). Pure.
 */
int others_parse_blkio_bytes(const char *buf, size_t len, uint64_t *read_bytes,
                             uint64_t *write_bytes);

/* The value of `key` in a "key value" file such as /proc/vmstat: 0 and *out, or -ENOENT. Pure. */
int others_parse_key(const char *buf, size_t len, const char *key, uint64_t *out);

/*
 * Append every process of `proc_dir` (e.g. "/proc") to out->procs: its stat, and its io when it
 * can be read. A process that exits during the walk is left out. Returns the number added or
 * -ENOMEM.
 */
int others_scan_procs(const char *proc_dir, struct collector_edge_reading *out);

/*
 * Append every control group under `cgroup_dir` (e.g. "/sys/fs/cgroup") with storage bytes
 * (non-zero) to out->cgroups: v2 io.stat where the unified hierarchy is mounted at cgroup_dir or
 * cgroup_dir/unified, v1 blkio.throttle.io_service_bytes under cgroup_dir/blkio. Names are the
 * group's path below its hierarchy ("/" for the root), v1 ones prefixed "blkio:". Returns the
 * number added or -ENOMEM.
 */
int others_scan_cgroups(const char *cgroup_dir, struct collector_edge_reading *out);

#endif
