/*
 * bench_rollup.c - the writer's storage calls at 256 CPUs, 1000 disks and 1000 interfaces over
 * simulated time, with the running roll-ups and without (batch roll-ups in db_maintain only):
 * the longest single call, which is the writer's longest burst, and the ms per tick in all.
 *
 * usage: bench_rollup DIR [HOURS]   (default 1.25: from 10 min before an hour to 5 min after the
 * next, so a whole hour is rolled up)
 *
 * The first two minutes are counted apart: after a start, the partial first minute is always
 * rolled up in one batch step.
 *
 * Each mode writes the same ticks (random deltas from a fixed seed) two per transaction, as the
 * writer commits them, and runs db_maintain every 30 ticks, as the writer does every 30 s; the
 * time of each db_write_ticks and each db_maintain call is taken on the monotonic clock.
 */
#include "storage/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NCPU  256
#define NDISK 1000
#define NNET  1000

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fill(struct tick_object *to, int o, size_t n, const char *prefix, unsigned *seed)
{
    const struct object_def *od = &counter_objects[o];

    to->rows = calloc(n, sizeof(*to->rows));
    to->n = n;
    for (size_t r = 0; r < n; r++) {
        if (n > 1)
            snprintf(to->rows[r].name, sizeof(to->rows[r].name), "%s%d", prefix, (int)r);
        for (size_t f = 0; f < od->nfields; f++) {
            *seed = *seed * 1103515245u + 12345u;
            to->rows[r].v[f] = (*seed >> 8) % 100000;
        }
    }
}

static struct tick *mk_tick(int64_t wall_ms, int first, unsigned *seed)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = first ? 0 : 1000;
    fill(&t->obj[OBJ_PROCESSOR], OBJ_PROCESSOR, NCPU + 1, "", seed);
    fill(&t->obj[OBJ_DISK], OBJ_DISK, NDISK + 1, "sd", seed);
    fill(&t->obj[OBJ_NET], OBJ_NET, NNET + 1, "eth", seed);
    fill(&t->obj[OBJ_MEMORY], OBJ_MEMORY, 1, "", seed);
    fill(&t->obj[OBJ_TCP], OBJ_TCP, 1, "", seed);
    return t;
}

static int run(const char *dir, int running, int64_t ticks)
{
    char path[4096], err[512];
    struct db_retention keep = {7, 90, 1825, 0, 0};
    struct db *d;
    unsigned seed = 1;
    /* 50 min into an hour: the hour's end comes after the first ten minutes */
    int64_t t0 = (1796000000000LL / 3600000) * 3600000 + 50 * 60000 + 500;
    double longest = 0, longest_maint = 0, longest_start = 0, total = 0;
    int64_t longest_at = 0;

    snprintf(path, sizeof(path), "%s/rollup-%d.db", dir, running);
    remove(path);
    if (db_open(path, "bench", &d, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    db_set_incremental_rollups(d, running);
    for (int64_t i = 0; i < ticks; i += 2) {
        struct tick *t[2] = {mk_tick(t0 + i * 1000, i == 0, &seed),
                             mk_tick(t0 + (i + 1) * 1000, 0, &seed)};
        double a = now_ms(), b;

        if (db_write_ticks(d, t, 2) != 0) {
            fprintf(stderr, "write failed: %s\n", db_errmsg(d));
            return 1;
        }
        b = now_ms() - a;
        total += b;
        if (i < 120 && b > longest_start)
            longest_start = b;
        if (i >= 120 && b > longest) {
            longest = b;
            longest_at = i;
        }
        tick_free(t[0]);
        tick_free(t[1]);
        if (i % 30 == 0) {
            int more;

            do { /* each step is a burst of its own: the writer checks its queue in between */
                a = now_ms();
                more = db_maintain(d, t0 + (i + 1) * 1000, &keep);
                b = now_ms() - a;
                total += b;
                if (i < 120 && b > longest_start)
                    longest_start = b;
                if (i >= 120 && b > longest_maint)
                    longest_maint = b;
            } while (more > 0);
        }
    }
    db_close(d);
    printf("%-8s %6lld ticks: %.3f ms per tick; after the first 2 minutes: longest write %.1f ms "
           "(tick %lld), longest maintenance step %.1f ms; in the first 2 minutes: longest call "
           "%.1f ms\n",
           running ? "running" : "batch", (long long)ticks, total / (double)ticks, longest,
           (long long)longest_at, longest_maint, longest_start);
    remove(path);
    return 0;
}

int main(int argc, char **argv)
{
    double hours = argc > 2 ? atof(argv[2]) : 1.25;
    int64_t ticks = (int64_t)(hours * 3600) / 2 * 2;

    if (argc < 2) {
        fprintf(stderr, "usage: bench_rollup DIR [HOURS]\n");
        return 2;
    }
    return run(argv[1], 0, ticks) || run(argv[1], 1, ticks);
}
