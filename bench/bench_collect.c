/*
 * bench_collect.c - time one collector_collect(): median, 90th percentile and minimum over N
 * collects of the tree under ROOT (default "/", the machine itself), with the default exclusions,
 * and the first collect alone (it also classifies devices and reads sysfs). Also the CPU time
 * (user + system, getrusage) per collect, which is what a tick costs the sampler thread: wall time
 * includes waits for the 2-core machine's other loads, CPU time less so.
 *
 *     bench_collect [ROOT [N]]
 */
#include "base/log.h"
#include "bench_util.h"
#include "collectors/collector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv)
{
    struct collector_config cfg = {.root = argc > 1 ? argv[1] : "/"};
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    struct raw_sample s = {0};
    struct collector *c;
    int64_t *elapsed_ns;
    int64_t first_ns, cpu0_ns;
    size_t rows = 0;
    int rc;

    if (n < 1)
        n = 1;
    cfg.disk_exclude[0] = "loop*";
    cfg.disk_exclude[1] = "ram*";
    cfg.disk_exclude[2] = "zram*";
    cfg.n_disk_exclude = 3;
    log_set_level(LOG_LVL_WARN);
    c = collector_new(&cfg);
    elapsed_ns = calloc((size_t)n, sizeof(*elapsed_ns));
    if (!c || !elapsed_ns)
        return 1;
    /* The first collect also classifies every device and reads every interface's sysfs files. */
    first_ns = now_ns();
    rc = collector_collect(c, &s);
    first_ns = now_ns() - first_ns;
    cpu0_ns = cpu_ns();
    for (long i = 0; i < n; i++) {
        int64_t t0 = now_ns();
        rc = collector_collect(c, &s);
        elapsed_ns[i] = now_ns() - t0;
    }
    cpu0_ns = cpu_ns() - cpu0_ns;
    for (int o = 0; o < OBJ_COUNT; o++)
        rows += s.obj[o].n;
    qsort(elapsed_ns, (size_t)n, sizeof(*elapsed_ns), cmp_i64);
    printf("root %s: %d objects, %zu rows; collect median %.1f us, p90 %.1f us, min %.1f us "
           "(%ld runs); first collect %.1f us; CPU %.1f us per collect\n",
           cfg.root, rc, rows, elapsed_ns[n / 2] / 1e3, elapsed_ns[n * 9 / 10] / 1e3,
           elapsed_ns[0] / 1e3, n, first_ns / 1e3, (double)cpu0_ns / (double)n / 1e3);
    free(elapsed_ns);
    raw_sample_free(&s);
    collector_free(c);
    return rc < 0;
}
