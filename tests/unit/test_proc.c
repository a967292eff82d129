/*
 * test_proc.c - following a run's processes: the /proc/PID/stat and io parsers, and the tracker
 * (collectors/linux/linux_proc.c) on a fixture /proc built here, through delta_tick() to the
 * per-tick values a report sums.
 *
 * The tree: 1 init; 100 perflog (the run's root); 101 sh, child of 100; 102 cat, child of 101;
 * 200 sshd, child of 1, not part of the run. CLK_TCK is read as the tracker reads it.
 */
#include "base/log.h"
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_proc.h"
#include "collectors/model/counters.h"
#include "collectors/model/delta.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOOT_WALL_MS 1000000000LL /* the wall clock at boot, in these tests */

static char root[PATH_MAX];
static long clk_tck;

static void put(int pid, const char *file, const char *text)
{
    char path[PATH_MAX + 64];
    int fd;

    snprintf(path, sizeof(path), "%s/%d", root, pid);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/%d/%s", root, pid, file);
    /* O_TRUNC keeps the inode: the tracker's kept descriptor sees the new text, as in /proc. */
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        perror(path);
        exit(2);
    }
    close(fd);
}

/* A stat line as the kernel prints it (fields 1..22 and a few after), and an io file. */
static void proc(int pid, const char *comm, int ppid, unsigned utime, unsigned stime,
                 unsigned start_ticks)
{
    char line[512];

    snprintf(line, sizeof(line),
             "%d (%s) S %d %d %d 0 -1 4194304 100 0 0 0 %u %u 0 0 20 0 1 0 %u 9000000 300 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             pid, comm, ppid, pid, pid, utime, stime, start_ticks);
    put(pid, "stat", line);
}

static void io(int pid, unsigned long long rchar, unsigned long long wchar,
               unsigned long long read_bytes, unsigned long long write_bytes)
{
    char text[512];

    snprintf(text, sizeof(text),
             "rchar: %llu\nwchar: %llu\nsyscr: %llu\nsyscw: %llu\nread_bytes: %llu\n"
             "write_bytes: %llu\ncancelled_write_bytes: 0\n",
             rchar, wchar, rchar / 4096, wchar / 4096, read_bytes, write_bytes);
    put(pid, "io", text);
}

static void gone(int pid)
{
    char path[PATH_MAX + 64];

    snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
    unlink(path);
    snprintf(path, sizeof(path), "%s/%d/io", root, pid);
    unlink(path);
    snprintf(path, sizeof(path), "%s/%d", root, pid);
    rmdir(path);
}

static const struct raw_row *row_named(const struct raw_object *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->rows[i].name, name) == 0)
            return &o->rows[i];
    return NULL;
}

static const struct tick_row *tick_row_named(const struct tick *t, const char *name)
{
    for (size_t i = 0; i < t->obj[OBJ_PROCESS].n; i++)
        if (strcmp(t->obj[OBJ_PROCESS].rows[i].name, name) == 0)
            return &t->obj[OBJ_PROCESS].rows[i];
    return NULL;
}

static void test_parse_stat(void)
{
    static const char normal[] = "4242 (cat) R 4241 4242 4000 34816 4242 4194304 120 0 0 0 37 "
                                 "205 0 0 20 0 1 0 987654 5767168 204 18446744073709551615\n";
    static const char odd[] = "77 (a) (b c)) S 1 77 77 0 -1 0 0 0 0 0 1 2 0 0 20 0 3 0 55 0 0\n";
    struct pid_stat ps;

    CHECK_INT(linux_parse_pid_stat(normal, sizeof(normal) - 1, &ps), 0);
    CHECK_STR(ps.comm, "cat");
    CHECK_INT(ps.ppid, 4241);
    CHECK_INT(ps.utime_ticks, 37);
    CHECK_INT(ps.stime_ticks, 205);
    CHECK_INT(ps.num_threads, 1);
    CHECK_INT(ps.start_ticks, 987654);
    /* comm ends at the last ')': a name may hold blanks and parentheses */
    CHECK_INT(linux_parse_pid_stat(odd, sizeof(odd) - 1, &ps), 0);
    CHECK_STR(ps.comm, "a) (b c)");
    CHECK_INT(ps.ppid, 1);
    CHECK_INT(ps.num_threads, 3);
    CHECK_INT(ps.start_ticks, 55);
    /* malformed: no ')', too few fields, a letter where ppid is; out untouched */
    ps.ppid = -5;
    CHECK_INT(linux_parse_pid_stat("12 (x S 1 2 3", 13, &ps), -EINVAL);
    CHECK_INT(linux_parse_pid_stat("12 (x) S 1 2 3 4\n", 17, &ps), -EINVAL);
    CHECK_INT(linux_parse_pid_stat(
                  "12 (x) S q 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", 64, &ps),
              -EINVAL);
    CHECK_INT(ps.ppid, -5);
    CHECK_INT(linux_parse_pid_stat("", 0, &ps), -EINVAL);
}

static void test_parse_io(void)
{
    static const char good[] = "rchar: 1000\nwchar: 2000\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\n"
                               "write_bytes: 8192\ncancelled_write_bytes: 4096\n";
    static const char bad[] = "rchar: x\nwchar: 5\nunknown: 7\nread_bytes 9\n";
    struct raw_row row = {0};
    struct linux_parse_status st = {0};

    CHECK_INT(linux_parse_pid_io(good, sizeof(good) - 1, &row, &st), 0);
    CHECK_INT(row.v[PROC_RCHAR], 1000);
    CHECK_INT(row.v[PROC_WCHAR], 2000);
    CHECK_INT(row.v[PROC_SYSCR], 3);
    CHECK_INT(row.v[PROC_SYSCW], 4);
    CHECK_INT(row.v[PROC_READ_BYTES], 4096);
    CHECK_INT(row.v[PROC_WRITE_BYTES], 8192);
    CHECK_INT(row.present, 0x3f);
    CHECK_INT(st.bad_lines, 0);
    memset(&row, 0, sizeof(row));
    CHECK_INT(linux_parse_pid_io(bad, sizeof(bad) - 1, &row, &st), 0);
    CHECK_INT(row.present, 1u << PROC_WCHAR); /* rchar malformed; "read_bytes 9" has no colon */
    CHECK_INT(row.v[PROC_WCHAR], 5);
    CHECK_INT(st.bad_lines, 1);
    CHECK_INT(st.first_bad, 1);
}

static void test_tracker(void)
{
    /* The run started 5 s after boot: processes started later count from zero. */
    struct collector_proc_root r = {.pid = 100, .since_wall_ms = BOOT_WALL_MS + 5000};
    struct proc_tracker *t = proc_tracker_new(root);
    struct delta_state *d = delta_new();
    struct raw_sample s = {0};
    const struct raw_row *row;
    const struct tick_row *tr;
    struct tick *tk;
    unsigned start_before = (unsigned)(2 * clk_tck), start_after = (unsigned)(6 * clk_tck);

    proc(1, "init", 0, 10, 10, 1);
    proc(100, "perflog", 1, 1, 1, start_before);
    proc(101, "sh", 100, 0, 1, start_after);
    proc(102, "cat", 101, (unsigned)clk_tck, (unsigned)clk_tck / 2, start_after);
    proc(200, "sshd", 1, 5, 5, 1);
    io(100, 500, 100, 0, 0);
    io(101, 10, 0, 0, 0);
    io(102, 1 << 20, 0, 1 << 20, 0);
    io(200, 7, 7, 7, 7);

    /* Nothing is read without a root. */
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 7000, 7000, &s.obj[OBJ_PROCESS]), 0);
    CHECK_INT(s.obj[OBJ_PROCESS].n, 0);

    proc_tracker_set_roots(t, &r, 1);
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 7000, 7000, &s.obj[OBJ_PROCESS]), 3);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "sshd:200") == NULL);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "init:1") == NULL);
    row = row_named(&s.obj[OBJ_PROCESS], "cat:102");
    CHECK(row != NULL);
    if (row) {
        CHECK_INT(row->v[PROC_RCHAR], 1 << 20);
        CHECK_INT(row->v[PROC_READ_BYTES], 1 << 20);
        CHECK_INT(row->v[PROC_CPU_MS], 1500); /* 1.5 s of clock ticks */
        CHECK_INT(row->v[PROC_PID], 102);
        CHECK_INT(row->v[PROC_PPID], 101);
        CHECK(row->flags & RAW_FROM_ZERO); /* born after the run started */
        CHECK(!(row->flags & RAW_IN_TOTAL));
    }
    row = row_named(&s.obj[OBJ_PROCESS], "perflog:100");
    CHECK(row != NULL && !(row->flags & RAW_FROM_ZERO)); /* the root predates its first reading */
    tk = delta_tick(d, &s, 0, 1000, 0);
    tr = tk ? tick_row_named(tk, "cat:102") : NULL;
    CHECK(tr != NULL);
    if (tr) { /* the first row of a process born in the run is its whole I/O so far */
        CHECK_INT(tr->v[PROC_RCHAR], 1 << 20);
        CHECK(!(tr->null_mask & (1ull << PROC_RCHAR)));
    }
    tr = tk ? tick_row_named(tk, "perflog:100") : NULL;
    CHECK(tr != NULL && (tr->null_mask & (1ull << PROC_RCHAR))); /* a gap, as any new instance */
    CHECK(tk && tk->obj[OBJ_PROCESS].n == 3);                    /* no _Total */
    tick_free(tk);

    /* sh exits and cat is reparented to init: cat is still followed. A new child of cat is
     * followed from zero; the root's counters grow by what it reaped. */
    gone(101);
    proc(102, "cat", 1, (unsigned)clk_tck * 2, (unsigned)clk_tck, start_after);
    io(102, 3 << 20, 0, 3 << 20, 0);
    proc(103, "dd", 102, 0, 0, start_after + 10);
    io(103, 4096, 4096, 0, 4096);
    io(100, 600, 100, 0, 0);
    raw_sample_clear(&s);
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 8000, 8000, &s.obj[OBJ_PROCESS]), 3);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "sh:101") == NULL);
    row = row_named(&s.obj[OBJ_PROCESS], "cat:102");
    CHECK(row != NULL && row->v[PROC_PPID] == 101); /* the parent as first seen */
    row = row_named(&s.obj[OBJ_PROCESS], "dd:103");
    CHECK(row != NULL && (row->flags & RAW_FROM_ZERO));
    tk = delta_tick(d, &s, 0, 1000, 0);
    tr = tk ? tick_row_named(tk, "cat:102") : NULL;
    CHECK(tr != NULL && tr->v[PROC_RCHAR] == 2 << 20 && tr->v[PROC_CPU_MS] == 1500);
    tr = tk ? tick_row_named(tk, "perflog:100") : NULL;
    CHECK(tr != NULL && tr->v[PROC_RCHAR] == 100);
    tick_free(tk);

    /* pid 102 is reused by an unrelated process (another start time): not followed, and not
     * counted from zero against the old one. A process whose io cannot be read keeps its row. */
    proc(102, "cron", 1, 0, 0, start_after + 500);
    io(102, 99, 99, 99, 99);
    proc(104, "tar", 100, 0, 0, start_after + 20); /* no io file */
    raw_sample_clear(&s);
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 9000, 9000, &s.obj[OBJ_PROCESS]), 3);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "cron:102") == NULL);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "cat:102") == NULL);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "dd:103") != NULL); /* its parent's pid went to cron */
    row = row_named(&s.obj[OBJ_PROCESS], "tar:104");
    CHECK(row != NULL && !(row->present & (1ull << PROC_RCHAR)) &&
          (row->present & (1ull << PROC_CPU_MS)));
    raw_sample_clear(&s);
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 10000, 10000, &s.obj[OBJ_PROCESS]), 3);
    CHECK(row_named(&s.obj[OBJ_PROCESS], "cron:102") == NULL);

    /* The run ends: nothing is followed or read. */
    proc_tracker_set_roots(t, NULL, 0);
    raw_sample_clear(&s);
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 11000, 11000, &s.obj[OBJ_PROCESS]), 0);
    CHECK_INT(s.obj[OBJ_PROCESS].n, 0);

    /* A root that does not exist: no rows, no error. */
    r.pid = 4000000;
    proc_tracker_set_roots(t, &r, 1);
    CHECK_INT(proc_tracker_collect(t, BOOT_WALL_MS + 12000, 12000, &s.obj[OBJ_PROCESS]), 0);

    raw_sample_free(&s);
    delta_free(d);
    proc_tracker_free(t);
}

static void put_loadavg(const char *text)
{
    char path[PATH_MAX + 16];
    FILE *f;

    snprintf(path, sizeof(path), "%s/loadavg", root);
    f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        exit(2);
}

/* /proc is listed again only when /proc/loadavg's newest pid moved: no process was created
 * otherwise, so the listing (the tracker's largest fixed cost) would find nothing new. */
static void test_listing_skipped(void)
{
    struct collector_proc_root r = {.pid = 300, .since_wall_ms = 0};
    struct proc_tracker *t;
    struct raw_object o = {0};

    proc(300, "rsync", 1, 0, 0, 5);
    io(300, 1, 1, 1, 1);
    put_loadavg("0.10 0.20 0.30 1/99 300\n");
    t = proc_tracker_new(root);
    proc_tracker_set_roots(t, &r, 1);
    CHECK_INT(proc_tracker_collect(t, 0, 0, &o), 1);
    proc(301, "rsync", 300, 0, 0, 6); /* not in a listing: loadavg still says 300 */
    io(301, 1, 1, 1, 1);
    o.n = 0;
    CHECK_INT(proc_tracker_collect(t, 0, 0, &o), 1);
    put_loadavg("0.10 0.20 0.30 2/99 301\n");
    o.n = 0;
    CHECK_INT(proc_tracker_collect(t, 0, 0, &o), 2);
    CHECK(row_named(&o, "rsync:301") != NULL);
    /* a new root forces a listing even when no pid was handed out */
    proc(302, "dd", 1, 0, 0, 7);
    io(302, 1, 1, 1, 1);
    r.pid = 302;
    proc_tracker_set_roots(t, &r, 1);
    o.n = 0;
    CHECK_INT(proc_tracker_collect(t, 0, 0, &o), 1);
    CHECK(row_named(&o, "dd:302") != NULL);
    free(o.rows);
    proc_tracker_free(t);
    gone(300);
    gone(301);
    gone(302);
    {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/loadavg", root);
        unlink(path);
    }
}

/* The fixture of test_row_cap: pids CAP_ROOT .. CAP_ROOT + cap + CAP_EXTRA. */
#define CAP_ROOT  5000
#define CAP_EXTRA 10

/* A run on pid 1 follows every process of the machine: one collect emits at most
 * PROC_TRACKER_MAX_ROWS rows however many there are, and emits them all again once they are fewer.
 * (The machines the tests run on have far fewer processes than the cap, hence a fixture.) */
static void test_row_cap(void)
{
    struct collector_proc_root r = {.pid = CAP_ROOT, .since_wall_ms = 0};
    struct proc_tracker *t = proc_tracker_new(root);
    struct raw_object o = {0};
    const int last = CAP_ROOT + PROC_TRACKER_MAX_ROWS + CAP_EXTRA; /* 1 + cap + extra processes */
    int rc;

    proc(CAP_ROOT, "init", 0, 0, 0, 1);
    io(CAP_ROOT, 1, 1, 1, 1);
    for (int pid = CAP_ROOT + 1; pid <= last; pid++) {
        proc(pid, "worker", CAP_ROOT, 0, 0, 2);
        io(pid, 1, 1, 1, 1);
    }
    proc_tracker_set_roots(t, &r, 1);
    CHECK_INT(proc_tracker_collect(t, 0, 0, &o), PROC_TRACKER_MAX_ROWS);
    CHECK_INT(o.n, PROC_TRACKER_MAX_ROWS);
    CHECK(row_named(&o, "init:5000") != NULL);
    o.n = 0; /* the cap holds tick after tick, not only at the first listing */
    CHECK_INT(proc_tracker_collect(t, 0, 0, &o), PROC_TRACKER_MAX_ROWS);
    /* Twenty exit: the rest, fewer than the cap now, are all read again. */
    for (int pid = last - 19; pid <= last; pid++)
        gone(pid);
    o.n = 0;
    rc = proc_tracker_collect(t, 0, 0, &o);
    CHECK_INT(rc, PROC_TRACKER_MAX_ROWS + CAP_EXTRA + 1 - 20);
    CHECK(row_named(&o, "init:5000") != NULL);
    free(o.rows);
    proc_tracker_free(t);
    for (int pid = CAP_ROOT; pid <= last; pid++)
        gone(pid);
}

/* The real /proc: this test process followed as a root, its child found, its I/O counted. */
static void test_real_proc(void)
{
    struct collector_proc_root r = {.pid = (int)getpid(), .since_wall_ms = 0};
    struct proc_tracker *t = proc_tracker_new("/proc");
    struct raw_sample s = {0};
    char name[COUNTER_NAME_MAX];
    int fds[2], found_child = 0;
    pid_t child;

    if (pipe(fds) < 0)
        exit(2);
    child = fork();
    if (child == 0) {
        char c;
        close(fds[1]);
        (void)!read(fds[0], &c, 1); /* wait for the parent's collect */
        _exit(0);
    }
    proc_tracker_set_roots(t, &r, 1);
    CHECK(proc_tracker_collect(t, 0, 0, &s.obj[OBJ_PROCESS]) >= 2);
    snprintf(name, sizeof(name), "test_proc:%d", (int)child);
    found_child = row_named(&s.obj[OBJ_PROCESS], name) != NULL;
    CHECK(found_child);
    snprintf(name, sizeof(name), "test_proc:%d", (int)getpid());
    CHECK(row_named(&s.obj[OBJ_PROCESS], name) != NULL);
    close(fds[1]);
    {
        int st;
        while (waitpid(child, &st, 0) < 0 && errno == EINTR)
            ;
    }
    raw_sample_free(&s);
    proc_tracker_free(t);
}

int main(void)
{
    snprintf(root, sizeof(root), "%s/perflog-proc-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 2;
    }
    log_set_level(LOG_LVL_ERROR);
    clk_tck = sysconf(_SC_CLK_TCK);
    test_parse_stat();
    test_parse_io();
    test_tracker();
    test_listing_skipped();
    test_row_cap();
    test_real_proc();
    for (int pid = 1; pid < 300; pid++)
        gone(pid);
    rmdir(root);
    return tl_done();
}
