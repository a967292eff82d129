/*
 * bench_edge.c - the cost of a run's edge: median, 90th percentile and minimum in µs over N
 * edges of the tree under ROOT (default "/", the machine itself), with the default exclusions.
 * Times the full edge the API takes at a run's start and end (run_edges_take: the raw counters,
 * the writeback settings, every process's /proc/PID/io and every control group, as JSON) and the
 * light reading the settle wait takes every 250 ms (run_edges_now), after one warm-up edge.
 *
 *     bench_edge [ROOT [N]]
 *
 * For 256 CPUs, 1000 disks and 1000 interfaces: `bench_growth DIR 5`, then
 * `bench_edge DIR/root-8` (the tree bench_growth leaves there).
 */
#include "base/log.h"
#include "bench_util.h"
#include "daemon/runs/run_edges.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void report(const char *what, int64_t *ns, long n)
{
    qsort(ns, (size_t)n, sizeof(*ns), cmp_i64);
    printf("%-34s median %9.1f us  p90 %9.1f us  min %9.1f us  (n=%ld)\n", what,
           (double)ns[n / 2] / 1e3, (double)ns[n * 9 / 10] / 1e3, (double)ns[0] / 1e3, n);
}

int main(int argc, char **argv)
{
    struct collector_config cfg = {.root = argc > 1 ? argv[1] : "/"};
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
    struct run_edges *re;
    int64_t *full_ns, *light_ns;
    size_t bytes = 0;
    char why[160];
    json_t *e;

    if (n < 1)
        n = 1;
    cfg.disk_exclude[0] = "loop*";
    cfg.disk_exclude[1] = "ram*";
    cfg.disk_exclude[2] = "zram*";
    cfg.n_disk_exclude = 3;
    log_set_level(LOG_LVL_ERROR);
    re = run_edges_new(&cfg);
    full_ns = calloc((size_t)n, sizeof(*full_ns));
    light_ns = calloc((size_t)n, sizeof(*light_ns));
    if (!re || !full_ns || !light_ns)
        return 1;
    json_decref(run_edges_take(re, getpid(), 1, NULL, why, sizeof(why))); /* classifies devices */
    for (long i = 0; i < n; i++) {
        int64_t t0 = now_ns();
        json_t *k = NULL;
        char *s;

        e = run_edges_take(re, getpid(), 1, &k, why, sizeof(why));
        full_ns[i] = now_ns() - t0;
        if (!e) {
            fprintf(stderr, "edge failed: %s\n", why);
            return 1;
        }
        if (i == 0 && (s = json_dumps(e, JSON_COMPACT))) {
            bytes = strlen(s);
            free(s);
        }
        json_decref(e);
        json_decref(k);
        t0 = now_ns();
        json_decref(run_edges_now(re));
        light_ns[i] = now_ns() - t0;
    }
    printf("# root %s: one edge as stored is %zu bytes of JSON\n", cfg.root, bytes);
    report("full edge (start/end/settle)", full_ns, n);
    report("light reading (settle wait)", light_ns, n);
    run_edges_free(re);
    free(full_ns);
    free(light_ns);
    return 0;
}
