/*
 * bench_report.c - how long a run's report takes to compute (<= 200 ms from end to
 * report for a 10-minute run).
 *
 * Reads a counter log written by bench_seed (which has this VM's shape: 3 CPUs rows, 3 disks,
 * 3 interfaces, memory, TCP) and computes, N times, the report of a run covering the 10 minutes
 * that end 30 s before the log's newest tick, with a 30 s settle tail, as the run manager does
 * once the run has settled (the same report_compute, from the database alone). Prints the median,
 * 90th percentile and minimum.
 *
 * usage: bench_report DB_PATH [N] [RUN_SECONDS]   (default 21, 600)
 */
#include "daemon/runs/report.h"
#include "storage/reader.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static int newest_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    (void)tick;
    (void)interval_ms;
    *(int64_t *)arg = t_ms;
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 21;
    int64_t run_s = argc > 3 ? atoll(argv[3]) : 600, newest = 0, *t;
    struct reader *rd;
    char err[512];
    json_t *rep = NULL;

    if (argc < 2 || n < 1 || run_s < 1) {
        fprintf(stderr, "usage: bench_report DB_PATH [N] [RUN_SECONDS]\n");
        return 2;
    }
    if (reader_open(argv[1], &rd, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench_report: %s\n", err);
        return 1;
    }
    reader_ticks(rd, 0, INT64_MAX, newest_cb, &newest);
    if (!newest || !(t = calloc((size_t)n, sizeof(*t)))) {
        fprintf(stderr, "bench_report: %s has no ticks\n", argv[1]);
        return 1;
    }
    struct report_run run = {.id = 1,
                             .label = "bench",
                             .command = "cp big.iso /mnt/nas/",
                             .status = "settled",
                             .start_ms = newest - 30000 - run_s * 1000,
                             .end_ms = newest - 30000,
                             .settled_ms = newest,
                             .exit_code = 0,
                             .payload_bytes = 734003200,
                             .files = 1,
                             .tool_output = NULL,
                             .io_read_bytes = -1,
                             .io_write_bytes = -1,
                             .storage_read_bytes = -1,
                             .storage_write_bytes = -1,
                             .pid = 4242};
    for (int i = 0; i < n; i++) {
        int64_t t0 = mono_ns();

        json_decref(rep);
        rep = report_compute(rd, NULL, 1000, &run, err, sizeof(err));
        t[i] = mono_ns() - t0;
        if (!rep) {
            fprintf(stderr, "bench_report: %s\n", err);
            return 1;
        }
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_i64);
    printf("report of a %lld s run + 30 s tail from %s: median %.1f ms, p90 %.1f ms, min %.1f ms "
           "(%d runs; %zu disks, %zu interfaces)\n",
           (long long)run_s, argv[1], t[n / 2] / 1e6, t[n * 9 / 10] / 1e6, t[0] / 1e6, n,
           json_array_size(json_object_get(rep, "disks")),
           json_array_size(json_object_get(rep, "interfaces")));
    json_decref(rep);
    free(t);
    reader_close(rd);
    return 0;
}
