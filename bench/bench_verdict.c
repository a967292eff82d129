/*
 * bench_verdict.c - how long the verdict of a 10-minute run takes (verdict_compute alone, the
 * report's share of it is in bench_report): 600 one-second ticks of this VM's shape (3 CPU rows,
 * 3 disks, 3 interfaces, memory, TCP) plus the counters a newer collector adds (per-core
 * softirqs and softnet, the dirty thresholds, pressure), random values in their ranges. Prints
 * the median, 90th percentile and minimum of N computations.
 *
 * usage: bench_verdict [N] [SECONDS]   (default 21, 600)
 */
#include "daemon/runs/report_verdict.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_MAX   128
#define OBJ_CPU  "Processor"
#define OBJ_DISK "PhysicalDisk"
#define OBJ_NIC  "Network Interface"

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static char paths[NS_MAX][128];
static struct verdict_series series[NS_MAX];
static size_t ns;

/* A series \obj(inst)\counter (inst NULL: \obj\counter) of n random values in [0, scale]. */
static void add(const char *obj, const char *inst, const char *counter, size_t n, double scale)
{
    double *v = malloc(n * sizeof(*v));

    for (size_t i = 0; i < n; i++)
        v[i] = scale * (double)rand() / RAND_MAX;
    if (inst)
        snprintf(paths[ns], sizeof(paths[ns]), "\\%s(%s)\\%s", obj, inst, counter);
    else
        snprintf(paths[ns], sizeof(paths[ns]), "\\%s\\%s", obj, counter);
    series[ns] = (struct verdict_series){paths[ns], v};
    ns++;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : 600;
    static const char *const cpu[] = {
        "% Processor Time",   "% User Time",         "% Privileged Time",   "% Interrupt Time",
        "% DPC Time",         "NET_RX Softirqs/sec", "NET_TX Softirqs/sec", "BLOCK Softirqs/sec",
        "TIMER Softirqs/sec", "Packets Dropped/sec", "Time Squeezes/sec"};
    static const char *const disk[] = {"% Disk Time",          "Disk Read Bytes/sec",
                                       "Disk Write Bytes/sec", "Avg. Disk Queue Length",
                                       "Avg. Disk sec/Read",   "Avg. Disk sec/Write",
                                       "Disk Flushes/sec"};
    static const char *const nic[] = {"Bytes Received/sec", "Bytes Sent/sec", "Current Bandwidth"};
    const char *cores[] = {"0", "1", "_Total"}, *disks[] = {"vda", "vdb", "_Total"};
    const char *nics[] = {"lo", "eth0", "eth1"};
    int64_t *t = malloc(n * sizeof(*t)), *ns_taken = malloc((size_t)runs * sizeof(int64_t));
    double *tree = malloc(n * sizeof(*tree));

    if (runs < 1 || n < 1 || !t || !ns_taken || !tree)
        return 2;
    for (size_t i = 0; i < n; i++) {
        t[i] = 1796000000000LL + 1000 * (int64_t)(i + 1);
        tree[i] = 100.0 * rand() / RAND_MAX;
    }
    for (size_t c = 0; c < 3; c++)
        for (size_t k = 0; k < sizeof(cpu) / sizeof(cpu[0]); k++)
            add(OBJ_CPU, cores[c], cpu[k], n, 100);
    for (size_t d = 0; d < 3; d++)
        for (size_t k = 0; k < sizeof(disk) / sizeof(disk[0]); k++)
            add(OBJ_DISK, disks[d], disk[k], n, 100);
    for (size_t d = 0; d < 3; d++)
        for (size_t k = 0; k < sizeof(nic) / sizeof(nic[0]); k++)
            add(OBJ_NIC, nics[d], nic[k], n, 1e8);
    add("Memory", NULL, "Dirty Bytes", n, 1e8);
    add("Memory", NULL, "Writeback Bytes", n, 1e7);
    add("Memory", NULL, "Dirty Threshold Bytes", n, 1e9);
    add("Memory", NULL, "Dirty Background Threshold Bytes", n, 5e8);
    add("TCP", NULL, "Segments Sent/sec", n, 1e4);
    add("TCP", NULL, "Segments Retransmitted/sec", n, 10);
    add("Pressure", NULL, "IO Some %", n, 100);
    for (int r = 0; r < runs; r++) {
        struct verdict_in in = {.t_ms = t,
                                .n = n,
                                .from_ms = t[0] - 1000,
                                .to_ms = t[n - 1],
                                .s = series,
                                .ns = ns,
                                .tree_cpu_pct = tree,
                                .tree_top = "cp:1",
                                .tree_io_bytes = 1e9,
                                .files = 1000,
                                .payload_bytes = 1e9,
                                .packets = 1e6,
                                .tail_ms = 30000,
                                .dirty_threshold_bytes = 1e9,
                                .dirty_background_threshold_bytes = 5e8};
        int64_t t0 = mono_ns();
        json_t *v = verdict_compute(&in);

        ns_taken[r] = mono_ns() - t0;
        if (!v)
            return 1;
        json_decref(v);
    }
    qsort(ns_taken, (size_t)runs, sizeof(*ns_taken), cmp_i64);
    printf(
        "verdict of a %zu s run, %zu series: median %.2f ms, p90 %.2f ms, min %.2f ms (%d runs)\n",
        n, ns, ns_taken[runs / 2] / 1e6, ns_taken[(runs * 9) / 10] / 1e6, ns_taken[0] / 1e6, runs);
    return 0;
}
