/*
 * edge.c - the platform-independent half of the edge readings of collector.h.
 */
#include "collectors/collector.h"

#include <stdlib.h>

const char *const collector_kernel_names[KERNEL_NFIELDS] = {
    [KERNEL_DIRTY_EXPIRE_CENTISECS] = "dirty_expire_centisecs",
    [KERNEL_DIRTY_WRITEBACK_CENTISECS] = "dirty_writeback_centisecs",
    [KERNEL_DIRTY_BACKGROUND_RATIO] = "dirty_background_ratio",
    [KERNEL_DIRTY_BACKGROUND_BYTES] = "dirty_background_bytes",
    [KERNEL_DIRTY_RATIO] = "dirty_ratio",
    [KERNEL_DIRTY_BYTES] = "dirty_bytes",
    [KERNEL_DIRTY_THRESHOLD_BYTES] = "dirty_threshold_bytes",
    [KERNEL_DIRTY_BACKGROUND_THRESHOLD_BYTES] = "dirty_background_threshold_bytes",
};

void collector_edge_reading_free(struct collector_edge_reading *r)
{
    raw_sample_free(&r->sample);
    free(r->procs);
    free(r->cgroups);
    r->procs = NULL;
    r->cgroups = NULL;
    r->nprocs = r->procs_cap = r->ncgroups = r->cgroups_cap = 0;
}
