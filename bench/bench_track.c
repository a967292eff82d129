/*
 * bench_track.c - the cost per tick of following a run's processes (<= 2 ms per tick
 * with a 200-process tree under a run).
 *
 * Builds a real tree under this process: CHILDREN children with GRANDCHILDREN children each
 * (200 processes by default, plus whatever else runs on the machine, which the tracker lists
 * too), all blocked on a pipe. Then times N collects of the whole collector with the tree
 * followed, and N without following, on the real /proc: median, 90th percentile and minimum of
 * each, and of the tracker's part (the difference of the medians). The first collect, which reads
 * the stat file of every process on the machine once, is timed apart.
 *
 * With GAP_MS > 0 the collects are GAP_MS apart, as the sampler's are: this VM's CPU is much
 * slower after an idle second than in a hot loop, so GAP_MS=1000 gives the per-tick figure.
 *
 * usage: bench_track [N] [CHILDREN] [GRANDCHILDREN] [GAP_MS]   (default 200 20 9 0)
 */
#include "collectors/collector.h"
#include "collectors/model/sample.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* A child that forks `kids` children, then all wait until the pipe's write end, which only the
 * parent keeps, closes. */
static pid_t spawn(int kids, int fd, int wfd)
{
    pid_t pid = fork();
    char c;

    if (pid != 0)
        return pid;
    close(wfd);
    for (int i = 0; i < kids; i++)
        if (fork() == 0) {
            (void)!read(fd, &c, 1);
            _exit(0);
        }
    (void)!read(fd, &c, 1);
    while (wait(NULL) > 0)
        ;
    _exit(0);
}

static int gap_ms;

static void timed(struct collector *c, struct raw_sample *s, int n, int64_t *out)
{
    for (int i = 0; i < n; i++) {
        int64_t t0;

        if (gap_ms > 0)
            usleep((useconds_t)gap_ms * 1000);
        t0 = mono_ns();
        collector_collect(c, s);
        out[i] = mono_ns() - t0;
    }
    qsort(out, (size_t)n, sizeof(*out), cmp_i64);
}

static void print(const char *what, const int64_t *v, int n)
{
    printf("%-28s median %7.3f ms   p90 %7.3f ms   min %7.3f ms\n", what, v[n / 2] / 1e6,
           v[n * 9 / 10] / 1e6, v[0] / 1e6);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200, kids = argc > 2 ? atoi(argv[2]) : 20,
        grand = argc > 3 ? atoi(argv[3]) : 9;
    struct collector_config cfg = {.root = "/"};
    struct collector_proc_root root = {.pid = (int)getpid(), .since_wall_ms = 0};
    struct raw_sample s = {0};
    struct collector *c;
    int64_t *with, *without, first;
    int fds[2];
    size_t procs;

    gap_ms = argc > 4 ? atoi(argv[4]) : 0;
    if (n < 10 || kids < 1 || grand < 0 || pipe(fds) < 0)
        return 2;
    with = calloc((size_t)n, sizeof(*with));
    without = calloc((size_t)n, sizeof(*without));
    c = collector_new(&cfg);
    if (!with || !without || !c)
        return 2;
    for (int i = 0; i < kids; i++)
        spawn(grand, fds[0], fds[1]);
    usleep(300000); /* let every grandchild be forked */
    close(fds[0]);

    timed(c, &s, n, without);
    collector_follow(c, &root, 1);
    first = mono_ns();
    collector_collect(c, &s);
    first = mono_ns() - first;
    procs = s.obj[OBJ_PROCESS].n;
    timed(c, &s, n, with);
    printf("processes followed: %zu (this bench + %d x (1 + %d)); %d collects each, %d ms apart\n",
           procs, kids, grand, n, gap_ms);
    fflush(stdout);
    print("collect, nothing followed", without, n);
    print("collect, tree followed", with, n);
    printf("%-28s %7.3f ms\n", "first collect after a start", first / 1e6);
    printf("%-28s %7.3f ms per tick (difference of the medians)\n", "process tracking",
           (with[n / 2] - without[n / 2]) / 1e6);

    close(fds[1]); /* the tree exits */
    while (wait(NULL) > 0)
        ;
    raw_sample_free(&s);
    collector_free(c);
    free(with);
    free(without);
    return 0;
}
