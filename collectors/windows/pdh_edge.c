/*
 * pdh_edge.c - out-of-band edge readings on Windows (collector.h, collector_edge_*).
 *
 * An edge reader is a PDH collector of its own (its own query and counter handles, so the
 * sampler's are never touched): one extra collect at the instant of the edge gives the raw
 * cumulative disk, interface and processor counters, as the ticks read them. Windows has no
 * writeback settings like Linux's vm.dirty_* and PDH no per-process storage bytes of every
 * process, so the kernel fields stay absent (-1) and no scan is taken.
 */
#include "collectors/collector.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <windows.h>

struct collector_edge {
    struct collector *c;
};

struct collector_edge *collector_edge_new(const struct collector_config *cfg)
{
    struct collector_edge *e = calloc(1, sizeof(*e));

    if (e && !(e->c = collector_new(cfg))) {
        free(e);
        return NULL;
    }
    return e;
}

void collector_edge_free(struct collector_edge *e)
{
    if (!e)
        return;
    collector_free(e->c);
    free(e);
}

int collector_edge_read(struct collector_edge *e, unsigned flags,
                        struct collector_edge_reading *out, const char **why)
{
    FILETIME ft;
    ULARGE_INTEGER u;
    LARGE_INTEGER qpc, freq;
    int rc;

    if ((flags & COLLECTOR_EDGE_SCAN) && why)
        *why = "Windows: edges take no scan of every process's storage bytes";
    out->nprocs = out->ncgroups = 0;
    GetSystemTimePreciseAsFileTime(&ft);
    u.LowPart = ft.dwLowDateTime;
    u.HighPart = ft.dwHighDateTime;
    /* FILETIME counts 100 ns since 1601-01-01; the Unix epoch is 11644473600 s later. */
    out->wall_ms = (int64_t)(u.QuadPart / 10000) - 11644473600000LL;
    QueryPerformanceCounter(&qpc);
    QueryPerformanceFrequency(&freq);
    out->mono_ns = (int64_t)((double)qpc.QuadPart * 1e9 / (double)freq.QuadPart);
    for (int i = 0; i < KERNEL_NFIELDS; i++)
        out->kernel[i] = -1;
    rc = collector_collect(e->c, &out->sample);
    return rc < 0 ? rc : 0;
}
