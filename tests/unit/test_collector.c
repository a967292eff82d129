/*
 * test_collector.c - the Linux collector on fixture trees, through delta_tick() and counter_eval()
 * to the numbers a user sees.
 *
 * Each case copies a tree of fixtures/linux into a temporary directory, collects, then overwrites
 * files in place (same inode: the collector keeps its /proc files open) from a "-t2"/"-t3" tree or
 * by hand, and collects again. Expected values are computed by hand from the fixture files; the
 * comments show the arithmetic.
 */
#include "base/log.h"
#include "collectors/collector.h"
#include "collectors/linux/linux_collector.h"
#include "collectors/model/counters.h"
#include "collectors/model/delta.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FX FIXTURES_DIR "/linux"

/* Objects a collect reads: all but Process, which has rows only while a run's processes are
 * followed (test_proc.c), and the SMB and NFS clients, which have rows only while a share or an
 * NFS mount is listed (none in these trees but netfs/). */
#define SYSTEM_OBJECTS (OBJ_COUNT - 3)

/* ---- files ---- */

/* out = a "/" b; a test tree path never comes near PATH_MAX, so a longer one is a test bug. */
static void join(char *out, const char *a, const char *b)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", a, b);

    if (n < 0 || n >= PATH_MAX) {
        fprintf(stderr, "path too long: %s/%s\n", a, b);
        exit(2);
    }
}

static void write_file(const char *path, const char *data, size_t len)
{
    /* O_TRUNC on an existing file keeps its inode, as an edit of a /proc file would. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    close(fd);
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[PATH_MAX];

    join(path, root, rel);
    write_file(path, text, strlen(text));
}

static void copy_file(const char *src, const char *dst)
{
    char buf[65536];
    ssize_t n;
    int fd = open(src, O_RDONLY);

    if (fd < 0 || (n = read(fd, buf, sizeof(buf))) < 0 || n == (ssize_t)sizeof(buf)) {
        fprintf(stderr, "cannot read %s\n", src);
        exit(2);
    }
    close(fd);
    write_file(dst, buf, (size_t)n);
}

/* Copy the tree `src` over `dst`: directories are created, files overwritten in place. */
static void copy_tree(const char *src, const char *dst)
{
    DIR *d = opendir(src);
    struct dirent *de;

    if (!d) {
        fprintf(stderr, "cannot open %s\n", src);
        exit(2);
    }
    mkdir(dst, 0755);
    while ((de = readdir(d))) {
        char s[PATH_MAX], t[PATH_MAX];
        struct stat sb;

        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        join(s, src, de->d_name);
        join(t, dst, de->d_name);
        if (stat(s, &sb) == 0 && S_ISDIR(sb.st_mode))
            copy_tree(s, t);
        else
            copy_file(s, t);
    }
    closedir(d);
}

static void rm_tree(const char *path)
{
    struct stat sb;
    DIR *d;
    struct dirent *de;

    if (lstat(path, &sb) < 0)
        return;
    if (!S_ISDIR(sb.st_mode)) {
        unlink(path);
        return;
    }
    if ((d = opendir(path))) {
        while ((de = readdir(d))) {
            char p[PATH_MAX];
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            join(p, path, de->d_name);
            rm_tree(p);
        }
        closedir(d);
    }
    rmdir(path);
}

static void rm_rel(const char *root, const char *rel)
{
    char path[PATH_MAX];

    join(path, root, rel);
    rm_tree(path);
}

static void mkdir_rel(const char *root, const char *rel)
{
    char path[PATH_MAX];

    join(path, root, rel);
    mkdir(path, 0755);
}

/* ---- a collector on a temporary copy of a fixture tree ---- */

struct env {
    char root[PATH_MAX];
    struct collector *c;
    struct delta_state *d;
    struct raw_sample s;
    struct tick *t;
    int rc; /* of the last collect */
};

static const char *const default_exclude[] = {"loop*", "ram*", "zram*"};

static void env_open_cfg(struct env *e, const char *tree, struct collector_config *cfg)
{
    char src[PATH_MAX];

    memset(e, 0, sizeof(*e));
    snprintf(e->root, sizeof(e->root), "%s/perflog-test-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(e->root)) {
        perror("mkdtemp");
        exit(2);
    }
    join(src, FX, tree);
    copy_tree(src, e->root);
    cfg->root = e->root;
    e->c = collector_new(cfg);
    e->d = delta_new();
    if (!e->c || !e->d)
        exit(2);
}

/* The default configuration: loop, ram and zram devices excluded, as the config file does. */
static void env_open(struct env *e, const char *tree)
{
    struct collector_config cfg = {0};

    for (size_t i = 0; i < 3; i++)
        cfg.disk_exclude[i] = default_exclude[i];
    cfg.n_disk_exclude = 3;
    env_open_cfg(e, tree, &cfg);
}

/* Overwrite files of the copy with those of another fixture tree. */
static void env_overlay(struct env *e, const char *tree)
{
    char src[PATH_MAX];

    join(src, FX, tree);
    copy_tree(src, e->root);
}

/* Collect and turn the reading into a tick, `interval_ms` after the previous one. */
static void env_tick(struct env *e, int64_t interval_ms)
{
    tick_free(e->t);
    e->rc = collector_collect(e->c, &e->s);
    e->t = delta_tick(e->d, &e->s, 0, interval_ms, 0);
    if (!e->t)
        exit(2);
}

static void env_close(struct env *e)
{
    tick_free(e->t);
    raw_sample_free(&e->s);
    delta_free(e->d);
    collector_free(e->c);
    rm_tree(e->root);
}

static const struct raw_row *raw_find(const struct env *e, enum object_id o, const char *inst)
{
    for (size_t i = 0; i < e->s.obj[o].n; i++)
        if (strcmp(e->s.obj[o].rows[i].name, inst) == 0)
            return &e->s.obj[o].rows[i];
    return NULL;
}

static const struct tick_row *tick_find(const struct env *e, enum object_id o, const char *inst)
{
    for (size_t i = 0; i < e->t->obj[o].n; i++)
        if (strcmp(e->t->obj[o].rows[i].name, inst) == 0)
            return &e->t->obj[o].rows[i];
    return NULL;
}

/* 1 and *out: the counter has a value; 0: it has none; -1: no such instance or counter. */
static int value(const struct env *e, enum object_id o, const char *inst, const char *counter,
                 double *out)
{
    const struct object_def *od = &counter_objects[o];
    const struct tick_row *r = tick_find(e, o, inst);

    if (!r)
        return -1;
    for (size_t i = 0; i < od->ncounters; i++)
        if (strcmp(od->counters[i].name, counter) == 0)
            return counter_eval(&od->counters[i], r->v, r->null_mask, e->t->interval_ms, out);
    return -1;
}

#define CHECK_VAL(e, o, inst, counter, expect)                                                     \
    do {                                                                                           \
        double v_ = 0, x_ = (expect);                                                              \
        int rc_ = value(e, o, inst, counter, &v_);                                                 \
        if (rc_ != 1)                                                                              \
            fprintf(stderr, "  (%s %s: %s)\n", inst, counter,                                      \
                    rc_ < 0 ? "no such instance" : "no value");                                    \
        CHECK_INT(rc_, 1);                                                                         \
        if (rc_ == 1)                                                                              \
            CHECK_DBL(v_, x_, 1e-9 * (x_ < 0 ? -x_ : x_) + 1e-12);                                 \
    } while (0)

#define CHECK_NOVAL(e, o, inst, counter)                                                           \
    do {                                                                                           \
        double v_ = 0;                                                                             \
        CHECK_INT(value(e, o, inst, counter, &v_), 0);                                             \
    } while (0)

#define CHECK_ABSENT(e, o, inst) CHECK(tick_find(e, o, inst) == NULL)

/* Flags of a raw row: -1 when absent. */
static long raw_flags(const struct env *e, enum object_id o, const char *inst)
{
    const struct raw_row *r = raw_find(e, o, inst);
    return r ? (long)r->flags : -1;
}

/* ---- log capture ---- */

static char log_path[PATH_MAX];
static int log_fd = -1;

static void log_capture(enum log_level lvl)
{
    snprintf(log_path, sizeof(log_path), "%s/perflog-log-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    log_fd = mkstemp(log_path);
    if (log_fd < 0)
        exit(2);
    log_set_fd(log_fd);
    log_set_level(lvl);
}

static void log_release(void)
{
    log_set_fd(-1);
    log_set_level(LOG_LVL_INFO);
    close(log_fd);
    unlink(log_path);
    log_fd = -1;
}

/* Lines of the captured log holding every one of `a` and `b` (b may be NULL). */
static int log_count(const char *a, const char *b)
{
    char line[2048];
    FILE *f = fopen(log_path, "r");
    int n = 0;

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, a) && (!b || strstr(line, b)))
            n++;
    fclose(f);
    return n;
}

/* ---- cases ---- */

static void test_delta_field(void)
{
    int64_t d = -7;

    /* Gauges are levels: a lower value is just lower. */
    CHECK_INT(delta_field(FIELD_GAUGE, 100, 40, &d), 1);
    CHECK_INT(d, 40);
    /* 64-bit counters: going down is a reset, never a wrap. */
    CHECK_INT(delta_field(FIELD_CUM_U64, 10, 15, &d), 1);
    CHECK_INT(d, 5);
    CHECK_INT(delta_field(FIELD_CUM_U64, 15, 15, &d), 1);
    CHECK_INT(d, 0);
    d = -7;
    CHECK_INT(delta_field(FIELD_CUM_U64, 15, 10, &d), 0);
    CHECK_INT(delta_field(FIELD_CUM_U64, UINT64_MAX - 5, 3, &d), 0);
    CHECK_INT(delta_field(FIELD_CUM_U64, 0, UINT64_MAX, &d), 0); /* does not fit the delta */
    CHECK_INT(delta_field(FIELD_CUM_U64, 1, (uint64_t)INT64_MAX + 1, &d), 1);
    CHECK_INT(d, INT64_MAX);
    /* 32-bit counters: going down is a wrap, 2^32 - prev + cur. */
    CHECK_INT(delta_field(FIELD_CUM_U32, 4294967290u, 5, &d), 1);
    CHECK_INT(d, 11);
    CHECK_INT(delta_field(FIELD_CUM_U32, 4294967295u, 0, &d), 1);
    CHECK_INT(d, 1);
    CHECK_INT(delta_field(FIELD_CUM_U32, 0, 4294967295u, &d), 0); /* a "wrap" of more than half */
    CHECK_INT(delta_field(FIELD_CUM_U32, 0, 2147483647u, &d), 1);
    CHECK_INT(d, 2147483647);
    CHECK_INT(delta_field(FIELD_CUM_U32, 100, 50, &d), 0); /* went back a little: a reset */
    CHECK_INT(delta_field(FIELD_CUM_U32, 5, 4294967296ull, &d), 0); /* not a 32-bit value */
    CHECK_INT(delta_field(FIELD_CUM_U32, 4294967296ull, 5, &d), 0);
}

/* The first sample: no rates yet, levels are there; which devices are seen and summed. */
static void test_first_sample(void)
{
    struct env e;

    env_open(&e, "multi");
    env_tick(&e, 0);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);

    /* Whole disks, stacked ones (dm-0 on sda1, md0 on sdb+vda); no partition (sda1), none of
     * the excluded loop0, ram0, zram0. */
    CHECK_INT(e.s.obj[OBJ_DISK].n, 5);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "sda"), RAW_IN_TOTAL);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "sdb"), RAW_IN_TOTAL);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "vda"), RAW_IN_TOTAL);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "dm-0"), 0);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "md0"), 0);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "sda1"), -1);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "loop0"), -1);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "ram0"), -1);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "zram0"), -1);
    CHECK_NOVAL(&e, OBJ_DISK, "sda", "Disk Write Bytes/sec");
    CHECK_NOVAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec");
    CHECK_NOVAL(&e, OBJ_DISK, "sda", "% Disk Time");
    CHECK_VAL(&e, OBJ_DISK, "sda", "Current Disk Queue Length", 1);
    CHECK_VAL(&e, OBJ_DISK, "dm-0", "Current Disk Queue Length", 1);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Current Disk Queue Length", 1); /* sda 1 + sdb 0 + vda 0 */

    /* CPUs: the kernel's total and two; percentages need two readings. */
    CHECK_INT(e.s.obj[OBJ_PROCESSOR].n, 3);
    CHECK_INT(raw_flags(&e, OBJ_PROCESSOR, "_Total"), 0);
    CHECK_NOVAL(&e, OBJ_PROCESSOR, "_Total", "% Processor Time");
    CHECK_NOVAL(&e, OBJ_PROCESSOR, "1", "% Idle Time");

    /* Interfaces: all but lo count in _Total. */
    CHECK_INT(e.s.obj[OBJ_NET].n, 5);
    CHECK_INT(raw_flags(&e, OBJ_NET, "lo"), 0);
    CHECK_INT(raw_flags(&e, OBJ_NET, "eth0"), RAW_IN_TOTAL);
    CHECK_INT(raw_flags(&e, OBJ_NET, "ifb0"), RAW_IN_TOTAL);
    CHECK_NOVAL(&e, OBJ_NET, "eth0", "Bytes Received/sec");
    CHECK_VAL(&e, OBJ_NET, "eth0", "Current Bandwidth", 1e9); /* speed 1000 Mbit/s */
    CHECK_VAL(&e, OBJ_NET, "eth0", "MTU", 1500);
    CHECK_VAL(&e, OBJ_NET, "eth1", "Current Bandwidth", 1e10);
    CHECK_VAL(&e, OBJ_NET, "eth1", "MTU", 9000);
    CHECK_VAL(&e, OBJ_NET, "lo", "MTU", 65536);
    CHECK_NOVAL(&e, OBJ_NET, "lo", "Current Bandwidth");           /* no speed file */
    CHECK_VAL(&e, OBJ_NET, "_Total", "Current Bandwidth", 1.1e10); /* eth0 + eth1 */
    CHECK_NOVAL(&e, OBJ_NET, "_Total", "MTU");
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Received Errors", 1);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Received Discarded", 2);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Outbound Errors", 3);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Outbound Discarded", 4);

    /* Memory levels in bytes: kB * 1024. */
    CHECK_VAL(&e, OBJ_MEMORY, "", "Available Bytes", 8000000.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Cache Bytes", (200000.0 + 2000) * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Dirty Bytes", 1000.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Writeback Bytes", 24.0 * 1024);
    CHECK_NOVAL(&e, OBJ_MEMORY, "", "Dirtied Bytes/sec");
    CHECK_VAL(&e, OBJ_TCP, "", "Connections Established", 3);
    CHECK_NOVAL(&e, OBJ_TCP, "", "Segments Received/sec");
    env_close(&e);
}

/* Two readings one second apart: every object's rates, and a 32-bit wrap on vda. */
static void test_rates(void)
{
    const double page = (double)sysconf(_SC_PAGESIZE);
    struct env e;
    struct stat before, after;
    char path[PATH_MAX];

    struct collector_proc_root run = {.pid = 1}; /* the tree has no pid 1: no Process rows */

    env_open(&e, "multi");
    collector_follow(e.c, &run, 1); /* a run in progress: TcpExt is read too */
    env_tick(&e, 0);
    join(path, e.root, "proc/diskstats");
    stat(path, &before);
    env_overlay(&e, "multi-t2");
    stat(path, &after);
    CHECK(before.st_ino == after.st_ino); /* edited in place, as the kernel's files are */
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);

    /* cpu0: user +60 nice 0 system +20 idle +100 iowait +10 irq +2 softirq +8 steal 0 = 200. */
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% Processor Time", 45); /* (200 - 110) / 200 */
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% User Time", 30);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% Privileged Time", 15); /* 20 + 2 + 8 */
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% Interrupt Time", 1);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% DPC Time", 4);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% Idle Time", 55);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% IO Wait Time", 5);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% Steal Time", 0);
    /* cpu1: user +20 system +10 idle +160 steal +10 = 200. */
    CHECK_VAL(&e, OBJ_PROCESSOR, "1", "% Processor Time", 20);
    CHECK_VAL(&e, OBJ_PROCESSOR, "1", "% Steal Time", 5);
    CHECK_VAL(&e, OBJ_PROCESSOR, "1", "% Idle Time", 80);
    /* cpu: user +80 system +30 idle +260 iowait +10 irq +2 softirq +8 steal +10 = 400. */
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% Processor Time", 32.5); /* 130 / 400 */
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% User Time", 20);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% Privileged Time", 10);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% Idle Time", 67.5);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% IO Wait Time", 2.5);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% Steal Time", 2.5);

    /* sda: rd_ios +100 rd_sectors +2048 rd_ms +50, wr_ios +200 wr_sectors +8192 wr_ms +400,
     * in_flight 2, io_ms +600, queue_ms +900. */
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Read Bytes/sec", 2048.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Write Bytes/sec", 8192.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Bytes/sec", 10240.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Reads/sec", 100);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Writes/sec", 200);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Transfers/sec", 300);
    CHECK_VAL(&e, OBJ_DISK, "sda", "% Disk Time", 60);
    CHECK_VAL(&e, OBJ_DISK, "sda", "% Idle Time", 40);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Avg. Disk Queue Length", 0.9);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Current Disk Queue Length", 2);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Avg. Disk sec/Read", 0.0005); /* 50 ms / 100 */
    CHECK_VAL(&e, OBJ_DISK, "sda", "Avg. Disk sec/Write", 0.002); /* 400 ms / 200 */
    /* sdb did nothing: zeros, and 0 s per (no) read. */
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Disk Read Bytes/sec", 0);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Avg. Disk sec/Read", 0);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "% Idle Time", 100);
    /* vda: io_ms 4294967000 -> 500 and queue_ms 4294967290 -> 10 wrapped at 2^32:
     * +796 and +16. rd_sectors +80 rd_ios +10 rd_ms +20, wr_sectors +240 wr_ios +30 wr_ms +30. */
    CHECK_VAL(&e, OBJ_DISK, "vda", "% Disk Time", 79.6);
    CHECK_VAL(&e, OBJ_DISK, "vda", "Avg. Disk Queue Length", 0.016);
    CHECK_VAL(&e, OBJ_DISK, "vda", "Disk Read Bytes/sec", 80.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "vda", "Disk Write Bytes/sec", 240.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "vda", "Avg. Disk sec/Read", 0.002);
    CHECK_VAL(&e, OBJ_DISK, "vda", "Avg. Disk sec/Write", 0.001);
    /* Stacked devices have their own values... */
    CHECK_VAL(&e, OBJ_DISK, "dm-0", "Disk Write Bytes/sec", 8192.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "md0", "Disk Write Bytes/sec", 800.0 * 512);
    /* ...but _Total is sda + sdb + vda only (not dm-0, md0, nor the excluded loop0). */
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Read Bytes/sec", (2048.0 + 0 + 80) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec", (8192.0 + 0 + 240) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Bytes/sec", (2128.0 + 8432) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Reads/sec", 110);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Writes/sec", 230);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "% Disk Time", 100); /* 139.6, capped */
    CHECK_VAL(&e, OBJ_DISK, "_Total", "% Idle Time", 0);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Avg. Disk Queue Length", 0.916); /* (900 + 16) / 1000 */
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Current Disk Queue Length", 3);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Avg. Disk sec/Read", 0.070 / 110);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Avg. Disk sec/Write", 0.430 / 230);

    /* Interfaces: eth0 rx +125000 B +100 p, tx +25000 B +50 p; eth1 rx +1000000 +700, tx
     * +500000 +400; wlan0 rx +5000 +10, tx +2000 +5; lo +1000 each way (not in _Total). */
    CHECK_VAL(&e, OBJ_NET, "eth0", "Bytes Received/sec", 125000);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Bytes Sent/sec", 25000);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Bytes Total/sec", 150000);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Received/sec", 100);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Sent/sec", 50);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets/sec", 150);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Packets Outbound Discarded", 5);
    CHECK_VAL(&e, OBJ_NET, "lo", "Bytes Received/sec", 1000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 125000.0 + 1000000 + 5000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Sent/sec", 25000.0 + 500000 + 2000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Packets Received/sec", 100.0 + 700 + 10);

    /* Memory: nr_dirtied +1000 pages, nr_written +500 pages, pgpgin +4096 KiB, pgpgout +8192
     * KiB, pgfault +3000, pgmajfault +7. */
    CHECK_VAL(&e, OBJ_MEMORY, "", "Dirtied Bytes/sec", 1000 * page);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Written Back Bytes/sec", 500 * page);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Page In Bytes/sec", 4096.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Page Out Bytes/sec", 8192.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Page Faults/sec", 3000);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Major Page Faults/sec", 7);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Dirty Bytes", 5000.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Writeback Bytes", 100.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Cache Bytes", (210000.0 + 2000) * 1024);

    /* TCP: InSegs +500, OutSegs +300, RetransSegs +2, CurrEstab 4. */
    CHECK_VAL(&e, OBJ_TCP, "", "Segments Received/sec", 500);
    CHECK_VAL(&e, OBJ_TCP, "", "Segments Sent/sec", 300);
    CHECK_VAL(&e, OBJ_TCP, "", "Segments Retransmitted/sec", 2);
    CHECK_VAL(&e, OBJ_TCP, "", "Connections Established", 4);

    /* TcpExt, found by name: TCPTimeouts +5, TCPLossProbes +8, TCPBacklogDrop +1, the two
     * zero-window events +4 each, ListenDrops +2. */
    CHECK_VAL(&e, OBJ_TCP, "", "Timeouts/sec", 5);
    CHECK_VAL(&e, OBJ_TCP, "", "Loss Probes/sec", 8);
    CHECK_VAL(&e, OBJ_TCP, "", "Backlog Drops/sec", 1);
    CHECK_VAL(&e, OBJ_TCP, "", "Zero Window Advertised/sec", 4);
    CHECK_VAL(&e, OBJ_TCP, "", "Zero Window Reopened/sec", 4);
    CHECK_VAL(&e, OBJ_TCP, "", "Listen Drops/sec", 2);

    /* Softirqs: cpu0 NET_RX +5000 TIMER +250 NET_TX +1 BLOCK +40; cpu1 NET_RX 4294967000 -> 200
     * wrapped at 2^32: +496, NET_TX +3. _Total is their sum, wrapping the same way. */
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "NET_RX Softirqs/sec", 5000);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "TIMER Softirqs/sec", 250);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "NET_TX Softirqs/sec", 1);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "BLOCK Softirqs/sec", 40);
    CHECK_VAL(&e, OBJ_PROCESSOR, "1", "NET_RX Softirqs/sec", 496);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "NET_RX Softirqs/sec", 5496);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "NET_TX Softirqs/sec", 4);
    /* softnet_stat: cpu0 dropped +3 squeezed +7, cpu1 squeezed +2. */
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "Packets Dropped/sec", 3);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "Time Squeezes/sec", 7);
    CHECK_VAL(&e, OBJ_PROCESSOR, "1", "Packets Dropped/sec", 0);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "Time Squeezes/sec", 9);

    /* Pressure: io some +250000 us full +100000, memory some +10000, cpu some +500000 in 1 s. */
    CHECK_VAL(&e, OBJ_PRESSURE, "", "IO Some %", 25);
    CHECK_VAL(&e, OBJ_PRESSURE, "", "IO Full %", 10);
    CHECK_VAL(&e, OBJ_PRESSURE, "", "Memory Some %", 1);
    CHECK_VAL(&e, OBJ_PRESSURE, "", "Memory Full %", 0);
    CHECK_VAL(&e, OBJ_PRESSURE, "", "CPU Some %", 50);

    /* Dirty thresholds are levels (pages to bytes): 1200000 and 609028 pages. */
    CHECK_VAL(&e, OBJ_MEMORY, "", "Dirty Threshold Bytes", 1200000 * page);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Dirty Background Threshold Bytes", 609028 * page);

    /* sda: discards +10, flushes +100 taking +200 ms; sdb has the columns, all zero. */
    CHECK_VAL(&e, OBJ_DISK, "sda", "Discards/sec", 10);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Flushes/sec", 100);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Avg. Disk sec/Flush", 0.002);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Disk Flushes/sec", 0);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Flushes/sec", 100);

    /* The run ends: /proc/net/netstat is not read any more (it costs more than all the rest of
     * the new counters), the snmp counters go on. */
    collector_follow(e.c, NULL, 0);
    env_tick(&e, 1000);
    CHECK_NOVAL(&e, OBJ_TCP, "", "Timeouts/sec");
    CHECK(!(e.s.obj[OBJ_TCP].rows[0].present & (1ull << TCP_TIMEOUTS)));
    CHECK_VAL(&e, OBJ_TCP, "", "Segments Received/sec", 0);
    env_close(&e);
}

/* A 64-bit counter going down (sdb re-created, eth1's driver reloaded): no value that tick,
 * values again at the next. */
static void test_reset(void)
{
    struct env e;

    env_open(&e, "multi");
    env_tick(&e, 0);
    env_overlay(&e, "reset-t2");
    env_tick(&e, 1000);
    CHECK_NOVAL(&e, OBJ_DISK, "sdb", "Disk Read Bytes/sec");
    CHECK_NOVAL(&e, OBJ_DISK, "sdb", "Disk Reads/sec");
    CHECK_NOVAL(&e, OBJ_DISK, "sdb", "% Disk Time"); /* a 32-bit field of a reset row too */
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Current Disk Queue Length", 0);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Write Bytes/sec", 8192.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Read Bytes/sec", (2048.0 + 80) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec", (8192.0 + 240) * 512);
    CHECK_NOVAL(&e, OBJ_NET, "eth1", "Bytes Received/sec");
    CHECK_VAL(&e, OBJ_NET, "eth0", "Bytes Received/sec", 125000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 125000.0 + 5000);

    /* Two seconds later: sdb rd_sectors 24 -> 104, wr_sectors 16 -> 176, rd_ios 3 -> 13,
     * io_ms 3 -> 23, queue_ms 3 -> 33; eth1 rx 1000 -> 21000, tx 500 -> 4500. */
    env_overlay(&e, "reset-t3");
    env_tick(&e, 2000);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Disk Read Bytes/sec", 80.0 * 512 / 2);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Disk Write Bytes/sec", 160.0 * 512 / 2);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Disk Reads/sec", 5);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "% Disk Time", 1);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Avg. Disk Queue Length", 0.015);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Write Bytes/sec", 0);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec", 160.0 * 512 / 2);
    CHECK_VAL(&e, OBJ_NET, "eth1", "Bytes Received/sec", 10000);
    CHECK_VAL(&e, OBJ_NET, "eth1", "Bytes Sent/sec", 2000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 10000);
    env_close(&e);
}

/* Devices and interfaces come and go between ticks, without a restart. */
static void test_hotplug(void)
{
    struct env e;

    env_open(&e, "multi");
    env_tick(&e, 0);
    /* sdb is renamed sdc (same counters), nvme0n1 is added, md0 is removed; eth1 is renamed
     * enp1s0. */
    rm_rel(e.root, "sys/block/sdb");
    rm_rel(e.root, "sys/block/md0");
    rm_rel(e.root, "sys/class/net/eth1");
    env_overlay(&e, "hotplug-t2");
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    CHECK_ABSENT(&e, OBJ_DISK, "sdb");
    CHECK_ABSENT(&e, OBJ_DISK, "md0");
    CHECK_INT(raw_flags(&e, OBJ_DISK, "sdc"), RAW_IN_TOTAL);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "nvme0n1"), RAW_IN_TOTAL);
    CHECK_NOVAL(&e, OBJ_DISK, "sdc", "Disk Write Bytes/sec"); /* new name: no rate yet */
    CHECK_NOVAL(&e, OBJ_DISK, "nvme0n1", "Disk Read Bytes/sec");
    CHECK_VAL(&e, OBJ_DISK, "nvme0n1", "Current Disk Queue Length", 3);
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Write Bytes/sec", 8192.0 * 512);
    /* _Total: the members with a delta (sda, vda), none of the new names' totals as a spike. */
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec", (8192.0 + 240) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Read Bytes/sec", (2048.0 + 80) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Current Disk Queue Length", 2 + 0 + 1 + 3);
    CHECK_ABSENT(&e, OBJ_NET, "eth1");
    CHECK_NOVAL(&e, OBJ_NET, "enp1s0", "Bytes Received/sec");
    CHECK_VAL(&e, OBJ_NET, "enp1s0", "Current Bandwidth", 1e10); /* read at first sight */
    CHECK_VAL(&e, OBJ_NET, "enp1s0", "MTU", 9000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 125000.0 + 5000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Current Bandwidth", 1.1e10); /* eth0 + enp1s0 */

    /* sdc wr_sectors +16000, nvme0n1 +128000; enp1s0 rx +400000. sdb comes back, stacked this
     * time: it was forgotten, so it is classified again and stays out of _Total (its 4 requests
     * in flight are not added). */
    env_overlay(&e, "hotplug-t3");
    env_tick(&e, 1000);
    CHECK_VAL(&e, OBJ_DISK, "sdc", "Disk Write Bytes/sec", 16000.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "nvme0n1", "Disk Write Bytes/sec", 128000.0 * 512);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "sdb"), 0);
    CHECK_VAL(&e, OBJ_DISK, "sdb", "Current Disk Queue Length", 4);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec", (16000.0 + 128000) * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Current Disk Queue Length", 1);
    CHECK_VAL(&e, OBJ_NET, "enp1s0", "Bytes Received/sec", 400000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 400000);
    env_close(&e);
}

/* Optional sysfs files: missing, unreadable, "-1"; each logged once per interface and file. */
static void test_sysfs_optional(void)
{
    struct env e;

    log_capture(LOG_LVL_DEBUG);
    env_open(&e, "multi");
    collector_set_sysfs_period(e.c, 0);              /* re-read on every collect */
    mkdir_rel(e.root, "sys/class/net/lo/speed");     /* a directory: the read fails (EISDIR) */
    put(e.root, "sys/class/net/eth1/speed", "-1\n"); /* speed unknown */
    rm_rel(e.root, "sys/class/net/eth0/mtu");
    env_tick(&e, 0);
    env_overlay(&e, "multi-t2");
    rm_rel(e.root, "sys/class/net/eth0/mtu");
    env_tick(&e, 1000);
    env_tick(&e, 1000);
    /* wlan0 has no speed file: no bandwidth, everything else as usual. */
    CHECK_NOVAL(&e, OBJ_NET, "wlan0", "Current Bandwidth");
    CHECK_VAL(&e, OBJ_NET, "wlan0", "MTU", 1500);
    CHECK_VAL(&e, OBJ_NET, "wlan0", "Bytes Received/sec", 0);
    CHECK_NOVAL(&e, OBJ_NET, "eth1", "Current Bandwidth");
    CHECK_VAL(&e, OBJ_NET, "eth1", "MTU", 9000);
    CHECK_NOVAL(&e, OBJ_NET, "lo", "Current Bandwidth");
    CHECK_NOVAL(&e, OBJ_NET, "eth0", "MTU");
    CHECK_VAL(&e, OBJ_NET, "eth0", "Current Bandwidth", 1e9);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Current Bandwidth", 1e9);
    /* Three reads each, one log line each. */
    CHECK_INT(log_count("wlan0/speed", "info"), 1);
    CHECK_INT(log_count("lo/speed", "warn"), 1);
    CHECK_INT(log_count("eth1/speed", "debug"), 1);
    CHECK_INT(log_count("eth0/mtu", "info"), 1);
    CHECK_INT(log_count("ifb0/speed", NULL), 1);
    CHECK_INT(log_count("eth0/speed", NULL), 0);

    /* wlan0 gets a speed, then loses it: logged again only after it had worked. */
    put(e.root, "sys/class/net/wlan0/speed", "54\n");
    env_tick(&e, 1000);
    CHECK_VAL(&e, OBJ_NET, "wlan0", "Current Bandwidth", 54e6);
    CHECK_INT(log_count("wlan0/speed", NULL), 1);
    rm_rel(e.root, "sys/class/net/wlan0/speed");
    env_tick(&e, 1000);
    env_tick(&e, 1000);
    CHECK_NOVAL(&e, OBJ_NET, "wlan0", "Current Bandwidth");
    CHECK_INT(log_count("wlan0/speed", NULL), 2);
    env_close(&e);
    log_release();

    /* With the default period, values are cached between reads. */
    env_open(&e, "multi");
    env_tick(&e, 0);
    put(e.root, "sys/class/net/eth0/speed", "100\n");
    env_tick(&e, 1000);
    CHECK_VAL(&e, OBJ_NET, "eth0", "Current Bandwidth", 1e9);
    env_close(&e);
}

/*
 * Speed and MTU are re-read every sysfs period stretched to 20 ms per interface known (the
 * collector's NET_PROBE_MS_PER_IF): with the fixture's five interfaces a 10 ms period becomes
 * 100 ms, with 200 more 4.1 s, with 200 more that the config excludes 100 ms again. Each case
 * reads twice 250 ms apart after a first collect, the speed changed before the second: re-read
 * with five, still the old value with 205, re-read with 5 of 205 selected.
 */
static void test_sysfs_period_stretch(void)
{
    const struct timespec pause = {0, 250 * 1000000L};
    char path[PATH_MAX], line[128];
    struct env e;

    for (int pass = 0; pass < 3; pass++) {
        int many = pass == 1; /* 205 selected */
        struct collector_config cfg = {0};

        cfg.net_exclude[0] = "vif*";
        cfg.n_net_exclude = pass == 2;
        env_open_cfg(&e, "multi", &cfg);
        collector_set_sysfs_period(e.c, 10);
        if (pass) {
            log_set_level(LOG_LVL_ERROR); /* 200 interfaces without sysfs files */
            join(path, e.root, "proc/net/dev");
            FILE *f = fopen(path, "a");
            if (!f)
                exit(2);
            for (int i = 0; i < 200; i++) {
                snprintf(line, sizeof(line), "vif%d: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", i);
                fputs(line, f);
            }
            fclose(f);
        }
        env_tick(&e, 0);
        nanosleep(&pause, NULL);
        env_tick(&e, 250); /* due again: the period of the first reading was shorter */
        CHECK(raw_find(&e, OBJ_NET, "eth0") &&
              raw_find(&e, OBJ_NET, "eth0")->v[NET_SPEED_MBPS] == 1000);
        put(e.root, "sys/class/net/eth0/speed", "100\n");
        nanosleep(&pause, NULL);
        env_tick(&e, 250);
        CHECK_INT(e.s.obj[OBJ_NET].n, many ? 205 : 5);
        CHECK(raw_find(&e, OBJ_NET, "eth0") &&
              raw_find(&e, OBJ_NET, "eth0")->v[NET_SPEED_MBPS] == (many ? 1000u : 100u));
        log_set_level(LOG_LVL_INFO);
        env_close(&e);
    }
}

/* Descriptors of this process open on files of ROOT/sys/class/net/IF/ (the test holds none). */
static int net_fds(const struct env *e)
{
    char link[300], prefix[PATH_MAX], target[PATH_MAX];
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    size_t plen;
    int n = 0;

    join(prefix, e->root, "sys/class/net/");
    plen = strlen(prefix);
    if (!d)
        exit(2);
    while ((de = readdir(d))) {
        ssize_t k;

        snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
        if (de->d_name[0] == '.' || (k = readlink(link, target, sizeof(target) - 1)) <= 0)
            continue;
        target[k] = '\0';
        if (strncmp(target, prefix, plen) == 0 && strchr(target + plen, '/'))
            n++;
    }
    closedir(d);
    return n;
}

static int64_t net_attr(const struct env *e, const char *ifname, int field)
{
    const struct raw_row *r = raw_find(e, OBJ_NET, ifname);

    return r && (r->present & (1ull << field)) ? (int64_t)r->v[field] : -1;
}

/*
 * Speed and MTU files stay open between reads (linux_collector.c, NET_ATTR_*). With a re-read
 * period of 250 ms (the first one spread over up to two periods), a kept file is opened afresh 12
 * periods (3 s) after it was opened: eth0's speed file replaced by a new one (as when an interface
 * takes the name of one renamed away) is read through the old one until then, and the new one
 * after. An interface gone from /proc/net/dev has its files closed; no more than the budget (128,
 * then 512) are kept, and every interface still gets its values; the collector's end closes them
 * all.
 */
static void test_sysfs_kept(size_t budget)
{
    const struct timespec period = {0, 600 * 1000000L}, reopen = {3, 0};
    char path[PATH_MAX], tmp[PATH_MAX], line[160];
    struct env e;
    FILE *f;

    env_open(&e, "multi");
    collector_set_sysfs_period(e.c, 250);
    collector_set_attr_fds_max(e.c, budget);
    env_tick(&e, 0);
    CHECK_INT(net_fds(&e), 7); /* speed and mtu of eth0 and eth1, mtu of lo, ifb0 and wlan0 */
    CHECK_INT(net_attr(&e, "eth0", NET_SPEED_MBPS), 1000);
    join(tmp, e.root, "sys/class/net/eth0/speed.new");
    write_file(tmp, "100\n", 4);
    join(path, e.root, "sys/class/net/eth0/speed");
    if (rename(tmp, path) < 0)
        exit(2);
    nanosleep(&period, NULL); /* past the first re-read, at most two periods after the open */
    env_tick(&e, 600);
    CHECK_INT(net_attr(&e, "eth0", NET_SPEED_MBPS), 1000);
    CHECK_INT(net_fds(&e), 7);
    nanosleep(&reopen, NULL);
    env_tick(&e, 3000);
    CHECK_INT(net_attr(&e, "eth0", NET_SPEED_MBPS), 100);
    CHECK_INT(net_attr(&e, "eth1", NET_MTU), 9000);
    CHECK_INT(net_fds(&e), 7);

    /* eth1 leaves /proc/net/dev: its two files are closed. */
    join(path, e.root, "proc/net/dev");
    f = fopen(path, "w");
    if (!f)
        exit(2);
    fputs("Inter-|\n face |\n", f);
    fputs("    lo: 3000 30 0 0 0 0 0 0 3000 30 0 0 0 0 0 0\n", f);
    fputs("  eth0: 1000000 1000 1 2 0 0 0 0 500000 800 3 4 0 0 0 0\n", f);
    fputs(" wlan0: 50000 100 0 0 0 0 0 0 20000 80 0 0 0 0 0 0\n", f);
    fputs("  ifb0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", f);
    /* 300 more, each with an mtu file: `budget` files at most stay open. */
    for (int i = 0; i < 300; i++) {
        snprintf(line, sizeof(line), "sys/class/net/vif%d", i);
        mkdir_rel(e.root, line);
        snprintf(line, sizeof(line), "sys/class/net/vif%d/mtu", i);
        snprintf(tmp, sizeof(tmp), "%d\n", 1000 + i);
        put(e.root, line, tmp);
        fprintf(f, "vif%d: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", i);
    }
    fclose(f);
    env_tick(&e, 1000);
    CHECK_INT(raw_find(&e, OBJ_NET, "eth1") == NULL, 1);
    /* eth1's two close at the end of the pass that no longer saw it: of 128 open with them, 126;
     * under a budget of 512 all 300 new ones stay, with lo's, eth0's, wlan0's and ifb0's five */
    CHECK_INT(net_fds(&e), budget == 128 ? 126 : 305);
    for (int i = 0; i < 300; i++) {
        snprintf(line, sizeof(line), "vif%d", i);
        CHECK_INT(net_attr(&e, line, NET_MTU), 1000 + i);
    }
    collector_free(e.c);
    e.c = NULL;
    CHECK_INT(net_fds(&e), 0);
    env_close(&e);
}

/* The kept files' budget follows the descriptor limit, which the collector raises to the hard one
 * (up to 65 536): an eighth of it, within 128..4096. */
static void test_sysfs_budget(void)
{
    struct rlimit was, rl;
    struct env e;
    rlim_t want;

    CHECK_INT(getrlimit(RLIMIT_NOFILE, &was), 0);
    rl = was;
    rl.rlim_cur = was.rlim_max < 1024 ? was.rlim_max : 1024; /* a service's default soft limit */
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
    env_open(&e, "multi");
    CHECK_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
    CHECK(rl.rlim_cur == (was.rlim_max > 65536 ? 65536 : was.rlim_max));
    want = rl.rlim_cur == RLIM_INFINITY ? 4096 : rl.rlim_cur / 8;
    want = want < 128 ? 128 : want > 4096 ? 4096 : want;
    CHECK_INT(collector_attr_fds_max(e.c), want);
    env_close(&e);
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &was), 0);
}

/* Malformed lines: skipped, the rest parsed, one warning per file for the collector's life. */
static void test_malformed(void)
{
    struct env e;

    log_capture(LOG_LVL_INFO);
    env_open(&e, "multi");
    env_tick(&e, 0);
    env_overlay(&e, "multi-t2");
    env_overlay(&e, "malformed"); /* cpu1, sdb, eth1 and meminfo's Dirty are broken */
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    /* cpu1's stat line is broken: it has only what /proc/softirqs and softnet_stat give. */
    CHECK_NOVAL(&e, OBJ_PROCESSOR, "1", "% Processor Time");
    CHECK_VAL(&e, OBJ_PROCESSOR, "1", "NET_RX Softirqs/sec", 496);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "% Processor Time", 45);
    CHECK_VAL(&e, OBJ_PROCESSOR, "_Total", "% Processor Time", 32.5);
    CHECK_ABSENT(&e, OBJ_DISK, "sdb");
    CHECK_VAL(&e, OBJ_DISK, "sda", "Disk Write Bytes/sec", 8192.0 * 512);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Write Bytes/sec", (8192.0 + 240) * 512);
    CHECK_ABSENT(&e, OBJ_NET, "eth1");
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 125000.0 + 5000);
    CHECK_NOVAL(&e, OBJ_MEMORY, "", "Dirty Bytes");
    CHECK_VAL(&e, OBJ_MEMORY, "", "Writeback Bytes", 100.0 * 1024);
    CHECK_VAL(&e, OBJ_MEMORY, "", "Cache Bytes", (210000.0 + 2000) * 1024);
    env_tick(&e, 1000);
    env_tick(&e, 1000);
    CHECK_INT(log_count("malformed", NULL), 4);
    CHECK_INT(log_count("proc/stat", "line 3"), 1);
    CHECK_INT(log_count("proc/diskstats", "line 3"), 1);
    CHECK_INT(log_count("proc/net/dev", "line 5"), 1);
    CHECK_INT(log_count("proc/meminfo", "line 19"), 1);
    env_close(&e);
    log_release();
}

/* Include and exclude globs, from the configuration. */
static void test_globs(void)
{
    struct collector_config cfg = {0};
    struct env e;

    cfg.disk_include[0] = "sd*";
    cfg.disk_include[1] = "vd*";
    cfg.n_disk_include = 2;
    cfg.disk_exclude[0] = "sdb";
    cfg.n_disk_exclude = 1;
    cfg.net_include[0] = "eth*";
    cfg.net_include[1] = "lo";
    cfg.n_net_include = 2;
    cfg.net_exclude[0] = "eth1";
    cfg.n_net_exclude = 1;
    env_open_cfg(&e, "multi", &cfg);
    env_tick(&e, 0);
    CHECK_INT(e.s.obj[OBJ_DISK].n, 2);
    CHECK(raw_find(&e, OBJ_DISK, "sda") && raw_find(&e, OBJ_DISK, "vda"));
    CHECK_INT(e.s.obj[OBJ_NET].n, 2);
    CHECK(raw_find(&e, OBJ_NET, "eth0") && raw_find(&e, OBJ_NET, "lo"));
    env_overlay(&e, "multi-t2");
    env_tick(&e, 1000);
    CHECK_VAL(&e, OBJ_NET, "_Total", "Bytes Received/sec", 125000);
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Read Bytes/sec", (2048.0 + 80) * 512);
    env_close(&e);

    /* No globs at all: loop0, ram0 and zram0 are whole disks like any other. */
    memset(&cfg, 0, sizeof(cfg));
    env_open_cfg(&e, "multi", &cfg);
    env_tick(&e, 0);
    CHECK_INT(e.s.obj[OBJ_DISK].n, 8);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "loop0"), RAW_IN_TOTAL);
    CHECK_INT(raw_flags(&e, OBJ_DISK, "zram0"), RAW_IN_TOTAL);
    env_overlay(&e, "multi-t2");
    env_tick(&e, 1000);
    /* sda 2048 + vda 80 + loop0 80000 + ram0 80 + zram0 80 sectors read */
    CHECK_VAL(&e, OBJ_DISK, "_Total", "Disk Read Bytes/sec", (2048.0 + 80 + 80000 + 80 + 80) * 512);
    env_close(&e);
}

/* A /proc file missing or unreadable: its object is empty, the rest is read; it is logged once,
 * reopened at each collect, and read again when it is back. */
static void test_missing_file(void)
{
    char src[PATH_MAX], dst[PATH_MAX];
    struct env e;

    struct collector_proc_root run = {.pid = 1};

    log_capture(LOG_LVL_INFO);
    env_open(&e, "multi");
    collector_follow(e.c, &run, 1); /* TcpExt is read during runs only */
    rm_rel(e.root, "proc/net/snmp");
    rm_rel(e.root, "proc/net/netstat");
    env_tick(&e, 0);
    CHECK_INT(e.rc, SYSTEM_OBJECTS - 1);
    CHECK_INT(e.s.obj[OBJ_TCP].n, 0);
    CHECK_INT(e.s.obj[OBJ_DISK].n, 5);
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS - 1);
    CHECK_INT(log_count("proc/net/snmp", "cannot open"), 1);
    CHECK_INT(log_count("proc/net/netstat", "not on this system"), 1);
    env_overlay(&e, "multi-t2");
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    CHECK_VAL(&e, OBJ_TCP, "", "Connections Established", 4);
    CHECK_INT(log_count("proc/net/snmp", "again"), 1);
    /* netstat is back too, but an optional file the first probe did not find is never asked
     * for again: no TcpExt fields, no second message. */
    CHECK(!(e.s.obj[OBJ_TCP].rows[0].present & (1ull << TCP_TIMEOUTS)));
    CHECK_INT(log_count("proc/net/netstat", NULL), 1);
    env_close(&e);

    /* A kernel without PSI (before 4.20, or booted with psi=0): no Pressure object, probed at
     * the first collect only, the rest read as usual. */
    env_open(&e, "multi");
    rm_rel(e.root, "proc/pressure");
    env_tick(&e, 0);
    CHECK_INT(e.rc, SYSTEM_OBJECTS - 1);
    CHECK_INT(e.s.obj[OBJ_PRESSURE].n, 0);
    env_overlay(&e, "multi-t2");
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS - 1);
    CHECK_INT(e.s.obj[OBJ_PRESSURE].n, 0);
    CHECK_INT(log_count("proc/pressure/io", "not on this system"), 1);
    CHECK_VAL(&e, OBJ_PROCESSOR, "0", "NET_RX Softirqs/sec", 5000);

    env_close(&e);

    /* diskstats opens but cannot be read (a directory: EISDIR): the fd is closed and the file
     * reopened at each collect, until it reads again. */
    env_open(&e, "multi");
    rm_rel(e.root, "proc/diskstats");
    mkdir_rel(e.root, "proc/diskstats");
    env_tick(&e, 0);
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS - 1);
    CHECK_INT(e.s.obj[OBJ_DISK].n, 0);
    CHECK_INT(log_count("proc/diskstats", "cannot read"), 1);
    rm_rel(e.root, "proc/diskstats");
    join(src, FX, "multi/proc/diskstats");
    join(dst, e.root, "proc/diskstats");
    copy_file(src, dst);
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    CHECK_INT(e.s.obj[OBJ_DISK].n, 5);
    env_close(&e);
    log_release();

    /* Nothing to read at all: a negative errno. */
    env_open(&e, "odd");
    env_tick(&e, 0);
    CHECK(e.rc < 0);
    env_close(&e);
}

/* Files far larger than the read buffer: it grows, and the last line is still read. 4000
 * partitions (no /sys/block entry) come before the one whole disk; 2000 interfaces. */
static void test_large_files(void)
{
    const size_t nparts = 4000, nifs = 2000;
    size_t cap = 512 * 1024, len = 0;
    char *text = malloc(cap);
    char path[PATH_MAX];
    struct env e;

    if (!text)
        exit(2);
    env_open(&e, "multi");
    log_set_level(LOG_LVL_ERROR); /* 2000 interfaces without a speed file */
    for (size_t i = 0; i < nparts; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "   8 %7zu sdq%zu 1 2 3 4 5 6 7 8 9 10 11 0 0 0 0 0 0\n", i, i);
    len += (size_t)snprintf(text + len, cap - len,
                            "   8       0 sda 1 2 3 4 5 6 7 8 9 10 12345 0 0 0 0 0 0\n");
    join(path, e.root, "proc/diskstats");
    write_file(path, text, len);
    len = (size_t)snprintf(text, cap, "Inter-| Receive | Transmit\n face |bytes | bytes\n");
    for (size_t i = 0; i < nifs; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "if%zu: %zu 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", i, i);
    join(path, e.root, "proc/net/dev");
    write_file(path, text, len);
    env_tick(&e, 0);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    CHECK_INT(e.s.obj[OBJ_DISK].n, 1);
    CHECK(raw_find(&e, OBJ_DISK, "sda") &&
          raw_find(&e, OBJ_DISK, "sda")->v[DISK_QUEUE_MS] == 12345);
    CHECK_INT(e.s.obj[OBJ_NET].n, nifs);
    CHECK(raw_find(&e, OBJ_NET, "if1999") &&
          raw_find(&e, OBJ_NET, "if1999")->v[NET_RX_BYTES] == 1999);
    log_set_level(LOG_LVL_INFO);
    env_close(&e);
    free(text);
}

/* The machine's own /proc and /sys: the objects are there and make sense. */
static void test_real_root(void)
{
    struct collector_config cfg = {.root = "/"};
    struct collector *c = collector_new(&cfg);
    struct raw_sample s = {0};
    const struct raw_object *cpu = &s.obj[OBJ_PROCESSOR];
    int rc;

    CHECK(c != NULL);
    if (!c)
        return;
    rc = collector_collect(c, &s);
    CHECK_INT(rc, SYSTEM_OBJECTS);
    CHECK(cpu->n >= 2);
    CHECK(cpu->n > 0 && strcmp(cpu->rows[0].name, "_Total") == 0);
    CHECK_INT(s.obj[OBJ_MEMORY].n, 1);
    CHECK(s.obj[OBJ_MEMORY].n && (s.obj[OBJ_MEMORY].rows[0].present & (1ull << MEM_PGFAULT)));
    CHECK_INT(s.obj[OBJ_TCP].n, 1);
    rc = collector_collect(c, &s);
    CHECK_INT(rc, SYSTEM_OBJECTS);
    raw_sample_free(&s);
    collector_free(c);
    collector_free(NULL);
}

/* Copy one fixture file (FX-relative) to ROOT/rel, in place. */
static void put_fixture(const struct env *e, const char *fx_rel, const char *rel)
{
    char src[PATH_MAX], dst[PATH_MAX];

    join(src, FX, fx_rel);
    join(dst, e->root, rel);
    copy_file(src, dst);
}

static size_t rows_of(const struct env *e, enum object_id o)
{
    return e->s.obj[o].n;
}

/*
 * The network file system clients' files are read only while they list a share or mount, and
 * probed again only when the mount table changes: files that appear without a change of
 * proc/self/mounts are not seen (the collector does not retry them every tick), and are seen at
 * the first collect after it changes. netfs-t2/ is netfs/ plus known deltas, collected 2 s later.
 */
static void test_netfs_probe(void)
{
    struct env e;
    const struct raw_row *r;

    env_open(&e, "multi");
    mkdir_rel(e.root, "proc/self");
    mkdir_rel(e.root, "proc/fs");
    put(e.root, "proc/self/mounts", "proc /proc proc rw 0 0\n");
    put_fixture(&e, "odd/mountstats-no-nfs", "proc/self/mountstats");
    env_tick(&e, 1000); /* the first collect probes: no cifs module, no NFS mount */
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    CHECK_INT(rows_of(&e, OBJ_SMB), 0);
    CHECK_INT(rows_of(&e, OBJ_NFS), 0);

    /* The module loads and the mounts' lines appear, but the mount table has not changed. */
    mkdir_rel(e.root, "proc/fs/cifs");
    put_fixture(&e, "netfs/proc/fs/cifs/Stats", "proc/fs/cifs/Stats");
    put_fixture(&e, "netfs/proc/self/mountstats", "proc/self/mountstats");
    env_tick(&e, 1000);
    CHECK_INT(rows_of(&e, OBJ_SMB), 0);
    CHECK_INT(rows_of(&e, OBJ_NFS), 0);

    /* Now it has (a longer file: its size changes whatever the mtime's granularity). */
    put_fixture(&e, "netfs/proc/self/mounts", "proc/self/mounts");
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS + 2);
    CHECK_INT(rows_of(&e, OBJ_SMB), 2);
    CHECK_INT(rows_of(&e, OBJ_NFS), 2);
    r = raw_find(&e, OBJ_SMB, "\\\\fs1\\data");
    CHECK(r && r->v[SMB_RD_BYTES] == 104857600 + 1000);
    r = raw_find(&e, OBJ_NFS, "nfs3srv:/export/home");
    CHECK(r && r->v[NFS_OPS] == 1110);
    CHECK(tick_find(&e, OBJ_SMB, "_Total") != NULL);

    /* Active files are read at every collect: 2 s later (netfs-t2 minus netfs). */
    env_overlay(&e, "netfs-t2");
    env_tick(&e, 2000);
    CHECK_VAL(&e, OBJ_SMB, "\\\\fs1\\data", "Read Bytes/sec", 2097152 / 2.0);
    CHECK_VAL(&e, OBJ_SMB, "\\\\fs1\\data", "Read Requests/sec", 8 / 2.0);
    CHECK_VAL(&e, OBJ_SMB, "\\\\fs1\\data", "Write Bytes/sec", 0.0);
    /* -2147483646 to -2147483642: 4 write requests across 2^31 */
    CHECK_VAL(&e, OBJ_SMB, "\\\\nas\\old share", "Write Requests/sec", 4 / 2.0);
    CHECK_VAL(&e, OBJ_SMB, "\\\\nas\\old share", "Write Bytes/sec", 4096 / 2.0);
    CHECK_VAL(&e, OBJ_SMB, "_Total", "Data Bytes/sec", (2097152 + 4096) / 2.0);
    CHECK_VAL(&e, OBJ_SMB, "_Total", "Data Requests/sec", (8 + 4) / 2.0);
    CHECK_VAL(&e, OBJ_NFS, "nfs3srv:/export/home", "Read Bytes/sec", 1048576 / 2.0);
    CHECK_VAL(&e, OBJ_NFS, "nfs3srv:/export/home", "Application Read Bytes/sec", 1048576 / 2.0);
    CHECK_VAL(&e, OBJ_NFS, "nfs3srv:/export/home", "Ops/sec", 10 / 2.0);
    CHECK_VAL(&e, OBJ_NFS, "nfs3srv:/export/home", "Avg. RTT sec/Op", 0.050 / 10);
    CHECK_VAL(&e, OBJ_NFS, "nfs3srv:/export/home", "Avg. Execute sec/Op", 0.060 / 10);
    CHECK_VAL(&e, OBJ_NFS, "nfs4srv:/", "Write Bytes/sec", 2097152 / 2.0);
    CHECK_VAL(&e, OBJ_NFS, "nfs4srv:/", "Avg. RTT sec/Op", 0.040 / 2);
    CHECK_VAL(&e, OBJ_NFS, "nfs4srv:/", "Avg. Execute sec/Op", 0.044 / 2);
    /* _Total weighs each mount's time by its calls: (50 + 40) ms over 12 calls */
    CHECK_VAL(&e, OBJ_NFS, "_Total", "Avg. RTT sec/Op", 0.090 / 12);
    CHECK_VAL(&e, OBJ_NFS, "_Total", "Ops/sec", 12 / 2.0);

    /* Unmounted, module unloaded: gone at the next collect after the mount table changed. */
    rm_rel(e.root, "proc/fs/cifs/Stats");
    put_fixture(&e, "odd/mountstats-no-nfs", "proc/self/mountstats");
    put(e.root, "proc/self/mounts", "proc /proc proc rw 0 0\n");
    env_tick(&e, 1000);
    CHECK_INT(e.rc, SYSTEM_OBJECTS);
    CHECK_INT(rows_of(&e, OBJ_SMB), 0);
    CHECK_INT(rows_of(&e, OBJ_NFS), 0);

    /* And not read again until the next change. */
    put_fixture(&e, "netfs/proc/fs/cifs/Stats", "proc/fs/cifs/Stats");
    put_fixture(&e, "netfs/proc/self/mountstats", "proc/self/mountstats");
    env_tick(&e, 1000);
    CHECK_INT(rows_of(&e, OBJ_SMB), 0);
    CHECK_INT(rows_of(&e, OBJ_NFS), 0);
    env_close(&e);
}

int main(void)
{
    test_delta_field();
    test_first_sample();
    test_rates();
    test_reset();
    test_hotplug();
    test_sysfs_optional();
    test_sysfs_period_stretch();
    test_sysfs_kept(128);
    test_sysfs_kept(512);
    test_sysfs_budget();
    test_malformed();
    test_globs();
    test_missing_file();
    test_large_files();
    test_real_root();
    test_netfs_probe();
    return tl_done();
}
