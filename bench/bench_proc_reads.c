/*
 * bench_proc_reads.c - what the kernel's side of a tick costs, hot and cold: the /proc files the
 * Linux collector reads every tick (the default set; FILE... instead), each kept open and read
 * from its start with one pread, as collectors/linux does. A round reads them all; ROUNDS rounds
 * are timed back to back (hot: the kernel's code and data in the caches), then with a sleep of
 * 100 ms and of 1 s before each round (cold: as the sampler reads them, once a second). Prints
 * the median and the 90th percentile of a round's wall time, and the CPU time (getrusage) per
 * round, which is most of the sampler thread's cost per tick on a small machine (bench/README.md).
 *
 *     bench_proc_reads [ROUNDS [FILE...]]   (default 40 rounds: about 45 s)
 */
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 32

static const char *const default_files[] = {
    "/proc/stat",        "/proc/softirqs",        "/proc/net/softnet_stat", "/proc/diskstats",
    "/proc/net/dev",     "/proc/meminfo",         "/proc/vmstat",           "/proc/net/snmp",
    "/proc/pressure/io", "/proc/pressure/memory", "/proc/pressure/cpu",
};

/* One round: every file from its start, until a read returns 0 or a short count. */
static void round_once(const int *fds, size_t n, char *buf, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        off_t off = 0;
        ssize_t r;

        while ((r = pread(fds[i], buf, cap, off)) > 0) {
            off += r;
            if ((size_t)r < cap)
                break;
        }
    }
}

static void series(const char *label, const int *fds, size_t n, int rounds, long sleep_us)
{
    static char buf[1 << 16];
    int64_t *t = calloc((size_t)rounds, sizeof(*t)), cpu = 0;

    if (!t) {
        perror("calloc");
        exit(1);
    }
    round_once(fds, n, buf, sizeof(buf)); /* the first read of each file sets up its seq_file */
    for (int k = 0; k < rounds; k++) {
        int64_t t0, c0;

        if (sleep_us > 0)
            usleep((useconds_t)sleep_us);
        c0 = cpu_ns();
        t0 = now_ns();
        round_once(fds, n, buf, sizeof(buf));
        t[k] = now_ns() - t0;
        cpu += cpu_ns() - c0;
    }
    qsort(t, (size_t)rounds, sizeof(*t), cmp_i64);
    printf("%-22s median %7.1f us, p90 %7.1f us, CPU %7.1f us a round (%d rounds)\n", label,
           (double)t[rounds / 2] / 1e3, (double)t[rounds * 9 / 10] / 1e3,
           (double)cpu / rounds / 1e3, rounds);
    free(t);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    const char *files[MAX_FILES];
    int fds[MAX_FILES];
    size_t n = 0;

    if (rounds < 1) {
        fprintf(stderr, "usage: bench_proc_reads [ROUNDS [FILE...]]\n");
        return 2;
    }
    if (argc > 2)
        for (int i = 2; i < argc && n < MAX_FILES; i++)
            files[n++] = argv[i];
    else
        for (size_t i = 0; i < sizeof(default_files) / sizeof(default_files[0]); i++)
            files[n++] = default_files[i];
    for (size_t i = 0; i < n; i++) {
        fds[i] = open(files[i], O_RDONLY | O_CLOEXEC);
        if (fds[i] < 0) {
            fprintf(stderr, "bench_proc_reads: %s: %s\n", files[i], strerror(errno));
            return 1;
        }
    }
    printf("%zu files, one pread each from the start\n", n);
    series("back to back (hot)", fds, n, rounds * 25, 0);
    series("100 ms apart", fds, n, rounds, 100000);
    series("1 s apart (a tick)", fds, n, rounds, 1000000);
    for (size_t i = 0; i < n; i++)
        close(fds[i]);
    return 0;
}
