/*
 * test_linux_parse.c - the pure /proc and /sys parsers on fixture buffers: the real files of a
 * test machine (fixtures/linux/base) and edited copies for older kernels and malformed lines
 * (fixtures/linux/odd). Expected values are read off the fixture files by hand.
 */
#include "collectors/linux/linux_parse.h"
#include "testlib.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B(f) (1ull << (f))

static char *load(const char *rel, size_t *len)
{
    char path[1024];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/linux/%s", FIXTURES_DIR, rel);
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        exit(2);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static const struct raw_row *row(const struct raw_object *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->rows[i].name, name) == 0)
            return &o->rows[i];
    return NULL;
}

static void reset(struct raw_object *o, struct linux_parse_status *st)
{
    o->n = 0;
    memset(st, 0, sizeof(*st));
}

/* Parse a fixture with a parser that takes no hook. */
typedef int (*plain_parser)(const char *, size_t, struct raw_object *, struct linux_parse_status *);

static int parse_file(plain_parser p, const char *rel, struct raw_object *o,
                      struct linux_parse_status *st)
{
    size_t len;
    char *buf = load(rel, &len);
    int rc;

    reset(o, st);
    rc = p(buf, len, o, st);
    free(buf);
    return rc;
}

static void test_stat(void)
{
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;
    /* /proc/stat gives the time fields; the softirq and softnet ones come from other files. */
    const uint64_t all = (1ull << (CPU_STEAL + 1)) - 1;

    /* The real file: cpu, cpu0, cpu1. */
    CHECK_INT(parse_file(linux_parse_proc_stat, "base/proc/stat", &o, &st), 0);
    CHECK_INT(o.n, 3);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "_Total");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->flags, 0); /* the kernel's own total: not summed again by delta.c */
        CHECK_INT(r->present, all);
        CHECK_INT(r->v[CPU_USER], 1881);
        CHECK_INT(r->v[CPU_NICE], 0);
        CHECK_INT(r->v[CPU_SYSTEM], 1279);
        CHECK_INT(r->v[CPU_IDLE], 139315);
        CHECK_INT(r->v[CPU_IOWAIT], 327);
        CHECK_INT(r->v[CPU_IRQ], 0);
        CHECK_INT(r->v[CPU_SOFTIRQ], 35);
        CHECK_INT(r->v[CPU_STEAL], 8);
    }
    CHECK_STR(o.rows[1].name, "0");
    CHECK_STR(o.rows[2].name, "1");
    CHECK_INT(o.rows[2].v[CPU_IDLE], 69088);
    CHECK_INT(o.rows[2].v[CPU_IOWAIT], 317);

    /* Linux 2.4: four columns; the rest is not present rather than zero. */
    CHECK_INT(parse_file(linux_parse_proc_stat, "odd/stat-2.4", &o, &st), 0);
    CHECK_INT(o.n, 2);
    CHECK_INT(st.bad_lines, 0);
    CHECK_INT(o.rows[0].present, B(CPU_USER) | B(CPU_NICE) | B(CPU_SYSTEM) | B(CPU_IDLE));
    CHECK_INT(o.rows[0].v[CPU_IDLE], 5000);
    CHECK_INT(o.rows[0].v[CPU_IOWAIT], 0);

    /* Linux 2.6.10: seven columns, no steal. */
    CHECK_INT(parse_file(linux_parse_proc_stat, "odd/stat-2.6.10", &o, &st), 0);
    CHECK_INT(o.n, 2);
    CHECK_INT(o.rows[1].present, all & ~B(CPU_STEAL));
    CHECK_INT(o.rows[1].v[CPU_SOFTIRQ], 4);

    /* cpu1 (3 columns), cpuX (no number), cpu2 (a negative column) are skipped; cpu4, after
     * "intr", is not read at all. */
    CHECK_INT(parse_file(linux_parse_proc_stat, "odd/stat-malformed", &o, &st), 0);
    CHECK_INT(o.n, 3);
    CHECK_STR(o.rows[0].name, "_Total");
    CHECK_STR(o.rows[1].name, "0");
    CHECK_STR(o.rows[2].name, "3");
    CHECK_INT(st.bad_lines, 3);
    CHECK_INT(st.first_bad, 3);
    CHECK(row(&o, "4") == NULL);

    CHECK_INT(parse_file(linux_parse_proc_stat, "odd/empty", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 0);

    /* No final newline, tabs as separators. */
    reset(&o, &st);
    CHECK_INT(linux_parse_proc_stat("cpu\t1 2 3 4 5 6 7 8 9 10", 24, &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].v[CPU_STEAL], 8);
    CHECK_INT(o.rows[0].present, all);
    free(o.rows);
}

static int keep_whole(void *ctx, struct raw_row *r)
{
    int *calls = ctx;

    (*calls)++;
    if (strcmp(r->name, "vda") != 0)
        return 0;
    r->flags |= RAW_IN_TOTAL;
    return 1;
}

static int hook_fails(void *ctx, struct raw_row *r)
{
    (void)ctx;
    (void)r;
    return -EIO;
}

static void test_diskstats(void)
{
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;
    size_t len;
    char *buf = load("base/proc/diskstats", &len);
    int calls = 0;

    /* Every line of the real file, 20 columns each (Linux 5.5+). */
    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 10);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "vda");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->present, (1ull << DISK_NFIELDS) - 1);
        CHECK_INT(r->v[DISK_RD_IOS], 34560);
        CHECK_INT(r->v[DISK_RD_MERGES], 6698);
        CHECK_INT(r->v[DISK_RD_SECTORS], 3123634);
        CHECK_INT(r->v[DISK_RD_MS], 12502);
        CHECK_INT(r->v[DISK_WR_IOS], 3135);
        CHECK_INT(r->v[DISK_WR_MERGES], 5703);
        CHECK_INT(r->v[DISK_WR_SECTORS], 450304);
        CHECK_INT(r->v[DISK_WR_MS], 2520);
        CHECK_INT(r->v[DISK_IN_FLIGHT], 0);
        CHECK_INT(r->v[DISK_IO_MS], 4416);
        CHECK_INT(r->v[DISK_QUEUE_MS], 15511);   /* column 14, not the discard ones after it */
        CHECK_INT(r->v[DISK_DISCARD_IOS], 4196); /* column 15 */
        CHECK_INT(r->v[DISK_FLUSH_IOS], 394);    /* column 19 */
        CHECK_INT(r->v[DISK_FLUSH_MS], 24);      /* column 20 */
        CHECK_INT(r->flags, 0);
    }

    /* The hook sees every well-formed row and decides. */
    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats(buf, len, &o, keep_whole, &calls, &st), 0);
    CHECK_INT(calls, 10);
    CHECK_INT(o.n, 1);
    CHECK_STR(o.rows[0].name, "vda");
    CHECK_INT(o.rows[0].flags, RAW_IN_TOTAL);
    CHECK_INT(o.rows[0].v[DISK_QUEUE_MS], 15511);

    /* A hook error stops the parse. */
    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats(buf, len, &o, hook_fails, NULL, &st), -EIO);
    free(buf);

    /* Linux before 4.18: exactly 14 columns. */
    buf = load("odd/diskstats-4.14", &len);
    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 2);
    CHECK_INT(o.rows[1].v[DISK_RD_IOS], 21);
    CHECK_INT(o.rows[1].v[DISK_QUEUE_MS], 31);
    /* no discard or flush columns: those counters have no value, rather than 0 */
    CHECK_INT(o.rows[1].present, (1ull << (DISK_QUEUE_MS + 1)) - 1);
    free(buf);

    /* Linux 4.18 to 5.4: the discard columns, no flush ones; a later kernel's extra columns are
     * not read; a non-numeric discard column makes the line malformed. */
    buf = load("odd/diskstats-4.18", &len);
    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 2);
    CHECK_INT(st.bad_lines, 1);
    CHECK_INT(st.first_bad, 3);
    CHECK_INT(o.rows[0].present, ((1ull << (DISK_QUEUE_MS + 1)) - 1) | B(DISK_DISCARD_IOS));
    CHECK_INT(o.rows[0].v[DISK_DISCARD_IOS], 12);
    CHECK_INT(o.rows[1].present, (1ull << DISK_NFIELDS) - 1);
    CHECK_INT(o.rows[1].v[DISK_DISCARD_IOS], 32);
    CHECK_INT(o.rows[1].v[DISK_FLUSH_IOS], 36);
    CHECK_INT(o.rows[1].v[DISK_FLUSH_MS], 37);
    free(buf);

    /* sdb too short, sdc non-numeric, sdd bad major, sdf beyond 64 bits; the empty line is not
     * a device; sde holds the largest 64-bit value. */
    buf = load("odd/diskstats-malformed", &len);
    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 3);
    CHECK_STR(o.rows[0].name, "sda");
    CHECK_STR(o.rows[1].name, "sde");
    CHECK_STR(o.rows[2].name, "vda");
    CHECK(o.rows[1].v[DISK_RD_SECTORS] == UINT64_MAX);
    CHECK_INT(o.rows[2].v[DISK_IO_MS], 4294967000LL);
    CHECK_INT(st.bad_lines, 4);
    CHECK_INT(st.first_bad, 2);
    free(buf);

    reset(&o, &st);
    CHECK_INT(linux_parse_diskstats("", 0, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 0);
    free(o.rows);
}

static int drop_lo(void *ctx, struct raw_row *r)
{
    (void)ctx;
    return strcmp(r->name, "lo") != 0;
}

static void test_net_dev(void)
{
    const uint64_t counters = (1ull << (NET_TX_DROP + 1)) - 1;
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;
    size_t len;
    char *buf = load("base/proc/net/dev", &len);

    reset(&o, &st);
    CHECK_INT(linux_parse_net_dev(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 4);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "eth0");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->present, counters); /* speed and MTU come from sysfs */
        CHECK_INT(r->v[NET_RX_BYTES], 21875448);
        CHECK_INT(r->v[NET_RX_PACKETS], 502);
        CHECK_INT(r->v[NET_RX_ERRS], 0);
        CHECK_INT(r->v[NET_TX_BYTES], 25747);
        CHECK_INT(r->v[NET_TX_PACKETS], 295);
    }
    CHECK(row(&o, "lo") && row(&o, "lo")->v[NET_TX_BYTES] == 3267);

    reset(&o, &st);
    CHECK_INT(linux_parse_net_dev(buf, len, &o, drop_lo, NULL, &st), 0);
    CHECK_INT(o.n, 3);
    CHECK(row(&o, "lo") == NULL);
    free(buf);

    /* Old kernels: no blank after the colon when the number is wide. */
    buf = load("odd/netdev-old", &len);
    reset(&o, &st);
    CHECK_INT(linux_parse_net_dev(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 2);
    r = row(&o, "eth0");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->v[NET_RX_BYTES], 98765432109LL);
        CHECK_INT(r->v[NET_RX_ERRS], 1);
        CHECK_INT(r->v[NET_RX_DROP], 2);
        CHECK_INT(r->v[NET_TX_BYTES], 12345678);
        CHECK_INT(r->v[NET_TX_PACKETS], 1500);
        CHECK_INT(r->v[NET_TX_ERRS], 3);
        CHECK_INT(r->v[NET_TX_DROP], 4);
    }
    free(buf);

    /* eth0 too short, eth1 without a colon, eth2 negative, an empty name. */
    buf = load("odd/netdev-malformed", &len);
    reset(&o, &st);
    CHECK_INT(linux_parse_net_dev(buf, len, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 2);
    CHECK_STR(o.rows[0].name, "lo");
    CHECK_STR(o.rows[1].name, "wlan0");
    CHECK_INT(o.rows[1].v[NET_TX_PACKETS], 80);
    CHECK_INT(st.bad_lines, 4);
    CHECK_INT(st.first_bad, 4);
    free(buf);

    reset(&o, &st);
    CHECK_INT(linux_parse_net_dev("", 0, &o, NULL, NULL, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 0);
    free(o.rows);
}

static int vmstat_4k(const char *buf, size_t len, struct raw_object *o,
                     struct linux_parse_status *st)
{
    return linux_parse_vmstat(buf, len, 4096, o, st);
}

static void test_memory(void)
{
    const uint64_t meminfo_all = B(MEM_AVAILABLE_KB) | B(MEM_CACHED_KB) | B(MEM_BUFFERS_KB) |
                                 B(MEM_DIRTY_KB) | B(MEM_WRITEBACK_KB);
    const uint64_t vmstat_counts = B(MEM_DIRTIED_KB) | B(MEM_WRITTEN_KB) | B(MEM_PGPGIN_KB) |
                                   B(MEM_PGPGOUT_KB) | B(MEM_PGFAULT) | B(MEM_PGMAJFAULT);
    const uint64_t vmstat_all = vmstat_counts | B(MEM_DIRTY_THRESH_KB) | B(MEM_DIRTY_BG_THRESH_KB);
    struct raw_object o = {0};
    struct linux_parse_status st;
    size_t len;
    char *buf;

    CHECK_INT(parse_file(linux_parse_meminfo, "base/proc/meminfo", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_STR(o.rows[0].name, "");
    CHECK_INT(o.rows[0].present, meminfo_all);
    CHECK_INT(o.rows[0].v[MEM_AVAILABLE_KB], 24337408);
    CHECK_INT(o.rows[0].v[MEM_BUFFERS_KB], 1796);
    CHECK_INT(o.rows[0].v[MEM_CACHED_KB], 277780); /* not SwapCached */
    CHECK_INT(o.rows[0].v[MEM_DIRTY_KB], 1176);
    CHECK_INT(o.rows[0].v[MEM_WRITEBACK_KB], 0); /* not WritebackTmp */

    /* vmstat fills the same single row; page counts become KiB (4 KiB pages: x4). */
    buf = load("base/proc/vmstat", &len);
    memset(&st, 0, sizeof(st));
    CHECK_INT(linux_parse_vmstat(buf, len, 4096, &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, meminfo_all | vmstat_all);
    CHECK_INT(o.rows[0].v[MEM_AVAILABLE_KB], 24337408);
    CHECK_INT(o.rows[0].v[MEM_DIRTIED_KB], 81721 * 4);
    CHECK_INT(o.rows[0].v[MEM_WRITTEN_KB], 56071 * 4);
    CHECK_INT(o.rows[0].v[MEM_PGPGIN_KB], 1561817);
    CHECK_INT(o.rows[0].v[MEM_PGPGOUT_KB], 225152);
    CHECK_INT(o.rows[0].v[MEM_PGFAULT], 1473081);
    CHECK_INT(o.rows[0].v[MEM_PGMAJFAULT], 1400);
    CHECK_INT(o.rows[0].v[MEM_DIRTY_THRESH_KB], 1219546 * 4);
    CHECK_INT(o.rows[0].v[MEM_DIRTY_BG_THRESH_KB], 609028 * 4);
    CHECK_INT(st.bad_lines, 0);

    /* 64 KiB pages (arm64, ppc64): x64; and vmstat alone makes the row. */
    reset(&o, &st);
    CHECK_INT(linux_parse_vmstat(buf, len, 65536, &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, vmstat_all);
    CHECK_INT(o.rows[0].v[MEM_DIRTIED_KB], 81721 * 64);
    CHECK_INT(o.rows[0].v[MEM_PGPGIN_KB], 1561817);
    CHECK_INT(linux_parse_vmstat(buf, len, 1000, &o, &st), -EINVAL);

    /* The collector reads only as far as the last wanted line: pgmajfault ends at "1400\n". */
    {
        const char *last = strstr(buf, "pgmajfault 1400\n");
        int complete = -1;

        CHECK(last != NULL);
        if (last)
            CHECK_INT(vmstat_extent(buf, len, &complete), (last - buf) + 16);
        CHECK_INT(complete, 1);
        /* A prefix cut before it is not complete; linux_parse_vmstat then misses pgmajfault. */
        if (last) {
            CHECK_INT(vmstat_extent(buf, (size_t)(last - buf), &complete),
                      last - buf); /* pgfault */
            CHECK_INT(complete, 0);
        }
    }
    free(buf);

    /* Before Linux 3.14 there is no MemAvailable; SwapCached and WritebackTmp come before the
     * keys they end or start like. */
    CHECK_INT(parse_file(linux_parse_meminfo, "odd/meminfo-3.10", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, meminfo_all & ~B(MEM_AVAILABLE_KB));
    CHECK_INT(o.rows[0].v[MEM_CACHED_KB], 200000);
    CHECK_INT(o.rows[0].v[MEM_WRITEBACK_KB], 3);
    CHECK_INT(st.bad_lines, 0);

    CHECK_INT(parse_file(linux_parse_meminfo, "odd/meminfo-malformed", &o, &st), 0);
    CHECK_INT(o.rows[0].present, meminfo_all & ~B(MEM_AVAILABLE_KB));
    CHECK_INT(o.rows[0].v[MEM_BUFFERS_KB], 10000);
    CHECK_INT(o.rows[0].v[MEM_WRITEBACK_KB], 5);
    CHECK_INT(st.bad_lines, 2);
    CHECK_INT(st.first_bad, 2);

    CHECK_INT(parse_file(vmstat_4k, "odd/vmstat-malformed", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, vmstat_counts & ~(B(MEM_DIRTIED_KB) | B(MEM_PGPGIN_KB)));
    CHECK_INT(o.rows[0].v[MEM_WRITTEN_KB], 200);
    CHECK_INT(o.rows[0].v[MEM_PGPGOUT_KB], 70);
    CHECK_INT(o.rows[0].v[MEM_PGMAJFAULT], 9);
    CHECK_INT(st.bad_lines, 2);
    CHECK_INT(st.first_bad, 2);

    /* A name holding a NUL byte names no key (the fuzzer read past a key's end on one). */
    {
        static const char vm[] =
            "nr_dirtied\0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx 5\nnr_written 7\n";
        static const char mi[] =
            "Cached\0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: 5 kB\nDirty: 3 kB\n";

        reset(&o, &st);
        CHECK_INT(linux_parse_vmstat(vm, sizeof(vm) - 1, 4096, &o, &st), 0);
        CHECK_INT(o.n, 1);
        CHECK_INT(o.rows[0].present, B(MEM_WRITTEN_KB));
        CHECK_INT(o.rows[0].v[MEM_WRITTEN_KB], 28);
        reset(&o, &st);
        CHECK_INT(linux_parse_meminfo(mi, sizeof(mi) - 1, &o, &st), 0);
        CHECK_INT(o.n, 1);
        CHECK_INT(o.rows[0].present, B(MEM_DIRTY_KB));
    }

    /* An empty file gives no row at all. */
    CHECK_INT(parse_file(linux_parse_meminfo, "odd/empty", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(parse_file(vmstat_4k, "odd/empty", &o, &st), 0);
    CHECK_INT(o.n, 0);
    free(o.rows);
}

static void test_snmp(void)
{
    const uint64_t all = (1ull << (TCP_CURR_ESTAB + 1)) - 1; /* the Tcp: group's fields */
    struct raw_object o = {0};
    struct linux_parse_status st;
    static const char bad_value[] = "Tcp: InSegs OutSegs RetransSegs CurrEstab\nTcp: 1 2x 3 4\n";
    static const char no_values[] = "Tcp: InSegs OutSegs RetransSegs CurrEstab\nUdp: A\nUdp: 1\n";

    CHECK_INT(parse_file(linux_parse_net_snmp, "base/proc/net/snmp", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_STR(o.rows[0].name, "");
    CHECK_INT(o.rows[0].present, all);
    CHECK_INT(o.rows[0].v[TCP_IN_SEGS], 502);
    CHECK_INT(o.rows[0].v[TCP_OUT_SEGS], 288);
    CHECK_INT(o.rows[0].v[TCP_RETRANS_SEGS], 0);
    CHECK_INT(o.rows[0].v[TCP_CURR_ESTAB], 0);
    CHECK_INT(st.bad_lines, 0);

    /* Columns are found by name, wherever they are. */
    CHECK_INT(parse_file(linux_parse_net_snmp, "odd/snmp-reordered", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, all);
    CHECK_INT(o.rows[0].v[TCP_CURR_ESTAB], 7);
    CHECK_INT(o.rows[0].v[TCP_RETRANS_SEGS], 3);
    CHECK_INT(o.rows[0].v[TCP_IN_SEGS], 1000);
    CHECK_INT(o.rows[0].v[TCP_OUT_SEGS], 900);

    /* A column the header does not name is not present. */
    CHECK_INT(parse_file(linux_parse_net_snmp, "odd/snmp-no-retrans", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, all & ~B(TCP_RETRANS_SEGS));
    CHECK_INT(o.rows[0].v[TCP_OUT_SEGS], 20);
    CHECK_INT(st.bad_lines, 0);

    /* Fewer values than names: the line is skipped, so is the row. */
    CHECK_INT(parse_file(linux_parse_net_snmp, "odd/snmp-malformed", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 1);
    CHECK_INT(st.first_bad, 2);

    reset(&o, &st);
    CHECK_INT(linux_parse_net_snmp(bad_value, sizeof(bad_value) - 1, &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.first_bad, 2);

    reset(&o, &st);
    CHECK_INT(linux_parse_net_snmp(no_values, sizeof(no_values) - 1, &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 1);
    CHECK_INT(st.first_bad, 1);

    CHECK_INT(parse_file(linux_parse_net_snmp, "odd/empty", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 0);
    free(o.rows);
}

static void test_sysfs_int(void)
{
    int64_t v = 42;

    CHECK_INT(linux_parse_sysfs_int("1000\n", 5, &v), 0);
    CHECK_INT(v, 1000);
    CHECK_INT(linux_parse_sysfs_int("-1\n", 3, &v), 0);
    CHECK_INT(v, -1);
    CHECK_INT(linux_parse_sysfs_int("9000", 4, &v), 0);
    CHECK_INT(v, 9000);
    v = 42;
    CHECK_INT(linux_parse_sysfs_int("", 0, &v), -EINVAL);
    CHECK_INT(linux_parse_sysfs_int("\n", 1, &v), -EINVAL);
    CHECK_INT(linux_parse_sysfs_int("abc\n", 4, &v), -EINVAL);
    CHECK_INT(linux_parse_sysfs_int("10 20\n", 6, &v), -EINVAL);
    CHECK_INT(linux_parse_sysfs_int("-\n", 2, &v), -EINVAL);
    CHECK_INT(linux_parse_sysfs_int("9223372036854775808\n", 20, &v), -EINVAL);
    CHECK_INT(v, 42); /* untouched on failure */
}

static void test_softirqs(void)
{
    const uint64_t si = B(CPU_SI_NET_RX) | B(CPU_SI_NET_TX) | B(CPU_SI_BLOCK) | B(CPU_SI_TIMER);
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;
    size_t len;
    char *buf;

    /* The real file after /proc/stat: its rows gain the softirq fields, none is added. */
    CHECK_INT(parse_file(linux_parse_proc_stat, "base/proc/stat", &o, &st), 0);
    CHECK_INT(o.n, 3);
    buf = load("base/proc/softirqs", &len);
    memset(&st, 0, sizeof(st));
    CHECK_INT(parse_softirqs(buf, len, &o, &st), 0);
    free(buf);
    CHECK_INT(o.n, 3);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "1");
    CHECK(r && (r->present & si) == si && (r->present & B(CPU_USER)));
    if (r) {
        CHECK_INT(r->v[CPU_SI_NET_RX], 9653905);
        CHECK_INT(r->v[CPU_SI_NET_TX], 46);
        CHECK_INT(r->v[CPU_SI_BLOCK], 5075792);
        CHECK_INT(r->v[CPU_SI_TIMER], 541205);
    }
    r = row(&o, "_Total");
    CHECK(r && (r->present & si) == si);
    if (r)
        CHECK_INT(r->v[CPU_SI_NET_RX], 9651681 + 9653905);

    /* Alone, it makes the rows; TIMER is read, NET_TX (too few columns), NET_RX (a non-number)
     * and BLOCK (too many) are malformed. */
    CHECK_INT(parse_file(parse_softirqs, "odd/softirqs-malformed", &o, &st), 0);
    CHECK_INT(o.n, 4);
    CHECK_INT(st.bad_lines, 3);
    CHECK_INT(st.first_bad, 4);
    r = row(&o, "2");
    CHECK(r && r->present == B(CPU_SI_TIMER) && r->v[CPU_SI_TIMER] == 30);
    r = row(&o, "_Total");
    CHECK(r && r->present == B(CPU_SI_TIMER) && r->v[CPU_SI_TIMER] == 60);

    /* The _Total of 32-bit counts is kept to 32 bits. */
    reset(&o, &st);
    CHECK_INT(parse_softirqs("CPU0 CPU1\nNET_RX: 4294967295 2\n", 31, &o, &st), 0);
    r = row(&o, "_Total");
    CHECK(r && r->v[CPU_SI_NET_RX] == 1);

    /* Without the header no column can be placed. */
    CHECK_INT(parse_file(parse_softirqs, "odd/softirqs-noheader", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 1);
    CHECK_INT(parse_file(parse_softirqs, "odd/empty", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 0);
    free(o.rows);
}

static void test_softnet(void)
{
    const uint64_t sn = B(CPU_NET_DROPPED) | B(CPU_NET_SQUEEZED);
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;

    /* The real file (Linux 6.18, 15 columns, the CPU in column 13). */
    CHECK_INT(parse_file(parse_softnet_stat, "base/proc/net/softnet_stat", &o, &st), 0);
    CHECK_INT(o.n, 3);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "1");
    CHECK(r && r->present == sn && r->v[CPU_NET_DROPPED] == 0 && r->v[CPU_NET_SQUEEZED] == 0x36);
    r = row(&o, "_Total");
    CHECK(r && r->v[CPU_NET_SQUEEZED] == 0x47 + 0x36);

    /* CPU 1 offline: three lines for CPUs 0, 2 and 3, named by column 13, not by line. */
    CHECK_INT(parse_file(parse_softnet_stat, "odd/softnet_stat-offline", &o, &st), 0);
    CHECK_INT(o.n, 4);
    CHECK_INT(st.bad_lines, 0);
    CHECK(row(&o, "1") == NULL);
    r = row(&o, "2");
    CHECK(r && r->v[CPU_NET_DROPPED] == 3 && r->v[CPU_NET_SQUEEZED] == 4);
    r = row(&o, "3");
    CHECK(r && r->v[CPU_NET_DROPPED] == 0xfffffff0 && r->v[CPU_NET_SQUEEZED] == 10);
    r = row(&o, "_Total"); /* 1 + 3 + 0xfffffff0 wraps to 0xfffffff4 within 32 bits */
    CHECK(r && r->v[CPU_NET_DROPPED] == 0xfffffff4 && r->v[CPU_NET_SQUEEZED] == 16);

    /* Before 5.10: 11 columns, no CPU column, so the line index names the CPU. */
    CHECK_INT(parse_file(parse_softnet_stat, "odd/softnet_stat-4.19", &o, &st), 0);
    CHECK_INT(o.n, 3);
    r = row(&o, "1");
    CHECK(r && r->v[CPU_NET_DROPPED] == 4 && r->v[CPU_NET_SQUEEZED] == 5);

    /* CPU ids of several digits, and the largest the column can hold, named in decimal. */
    {
        static const char text[] =
            "00000001 00000002 00000003 0 0 0 0 0 0 0 0 0 000001f4 0 0\n"
            "00000004 00000005 00000006 0 0 0 0 0 0 0 0 0 0000000a 0 0\n"
            "00000007 00000008 00000009 0 0 0 0 0 0 0 0 0 ffffffffffffffff 0 0\n";

        reset(&o, &st);
        CHECK_INT(parse_softnet_stat(text, sizeof(text) - 1, &o, &st), 0);
        CHECK_INT(o.n, 4);
        r = row(&o, "500");
        CHECK(r && r->v[CPU_NET_DROPPED] == 2 && r->v[CPU_NET_SQUEEZED] == 3);
        r = row(&o, "10");
        CHECK(r && r->v[CPU_NET_DROPPED] == 5);
        r = row(&o, "18446744073709551615");
        CHECK(r && r->v[CPU_NET_SQUEEZED] == 9);
    }

    /* Two columns, a non-hex one: skipped; a short line of 4 columns is still three enough; the
     * blank line is not a CPU. */
    CHECK_INT(parse_file(parse_softnet_stat, "odd/softnet_stat-malformed", &o, &st), 0);
    CHECK_INT(st.bad_lines, 2);
    CHECK_INT(st.first_bad, 2);
    r = row(&o, "0");
    CHECK(r && r->v[CPU_NET_DROPPED] == 2);
    r = row(&o, "1");
    CHECK(r && r->v[CPU_NET_DROPPED] == 7); /* the line that names CPU 1 */
    free(o.rows);
}

static void test_netstat(void)
{
    const uint64_t ext = B(TCP_TIMEOUTS) | B(TCP_LOSS_PROBES) | B(TCP_BACKLOG_DROP) |
                         B(TCP_TO_ZERO_WINDOW) | B(TCP_FROM_ZERO_WINDOW) | B(TCP_LISTEN_DROPS);
    struct raw_object o = {0};
    struct linux_parse_status st;

    CHECK_INT(parse_file(parse_net_netstat, "base/proc/net/netstat", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(st.bad_lines, 0);
    CHECK_INT(o.rows[0].present, ext);
    CHECK_INT(o.rows[0].v[TCP_TIMEOUTS], 11);
    CHECK_INT(o.rows[0].v[TCP_LOSS_PROBES], 2857);
    CHECK_INT(o.rows[0].v[TCP_BACKLOG_DROP], 0);
    CHECK_INT(o.rows[0].v[TCP_TO_ZERO_WINDOW], 58887);
    CHECK_INT(o.rows[0].v[TCP_FROM_ZERO_WINDOW], 58818);
    CHECK_INT(o.rows[0].v[TCP_LISTEN_DROPS], 0);

    /* Linux 3.2: no loss probes nor zero-window events yet; found by name, not position. */
    CHECK_INT(parse_file(parse_net_netstat, "odd/netstat-3.2", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, B(TCP_TIMEOUTS) | B(TCP_BACKLOG_DROP) | B(TCP_LISTEN_DROPS));
    CHECK_INT(o.rows[0].v[TCP_LISTEN_DROPS], 4);
    CHECK_INT(o.rows[0].v[TCP_TIMEOUTS], 6);
    CHECK_INT(o.rows[0].v[TCP_BACKLOG_DROP], 8);

    /* /proc/net/snmp has no TcpExt group: no row. */
    CHECK_INT(parse_file(parse_net_netstat, "base/proc/net/snmp", &o, &st), 0);
    CHECK_INT(o.n, 0);
    free(o.rows);
}

static int psi_io(const char *b, size_t n, struct raw_object *o, struct linux_parse_status *st)
{
    return parse_pressure(b, n, PSI_RES_IO, o, st);
}

static int psi_cpu(const char *b, size_t n, struct raw_object *o, struct linux_parse_status *st)
{
    return parse_pressure(b, n, PSI_RES_CPU, o, st);
}

static void test_pressure(void)
{
    struct raw_object o = {0};
    struct linux_parse_status st;
    size_t len;
    char *buf;

    CHECK_INT(parse_file(psi_io, "base/proc/pressure/io", &o, &st), 0);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, B(PSI_IO_SOME_US) | B(PSI_IO_FULL_US));
    CHECK_INT(o.rows[0].v[PSI_IO_SOME_US], 333340541);
    CHECK_INT(o.rows[0].v[PSI_IO_FULL_US], 140597146);
    /* The three files fill one row. */
    buf = load("base/proc/pressure/memory", &len);
    CHECK_INT(parse_pressure(buf, len, PSI_RES_MEMORY, &o, &st), 0);
    free(buf);
    buf = load("base/proc/pressure/cpu", &len);
    CHECK_INT(parse_pressure(buf, len, PSI_RES_CPU, &o, &st), 0);
    CHECK_INT(parse_pressure(buf, len, PSI_NRESOURCES, &o, &st), -EINVAL);
    free(buf);
    CHECK_INT(o.n, 1);
    CHECK_INT(o.rows[0].present, (1ull << PSI_NFIELDS) - 1); /* cpu's full line is not read */
    CHECK_INT(o.rows[0].v[PSI_MEM_SOME_US], 0);
    CHECK_INT(o.rows[0].v[PSI_MEM_FULL_US], 0);
    CHECK_INT(o.rows[0].v[PSI_CPU_SOME_US], 3223568823);
    CHECK_INT(st.bad_lines, 0);

    /* Before 5.13 the cpu file has no full line. */
    CHECK_INT(parse_file(psi_cpu, "odd/pressure-cpu-5.2", &o, &st), 0);
    CHECK_INT(o.rows[0].present, B(PSI_CPU_SOME_US));
    CHECK_INT(o.rows[0].v[PSI_CPU_SOME_US], 777);

    /* A some line without total=, a line of another kind; the last lacks its newline. */
    CHECK_INT(parse_file(psi_io, "odd/pressure-malformed", &o, &st), 0);
    CHECK_INT(st.bad_lines, 2);
    CHECK_INT(st.first_bad, 2);
    CHECK_INT(o.rows[0].v[PSI_IO_SOME_US], 12);
    CHECK_INT(o.rows[0].v[PSI_IO_FULL_US], 3);
    CHECK_INT(parse_file(psi_io, "odd/empty", &o, &st), 0);
    CHECK_INT(o.n, 0);
    free(o.rows);
}

int main(void)
{
    test_stat();
    test_diskstats();
    test_net_dev();
    test_memory();
    test_snmp();
    test_softirqs();
    test_softnet();
    test_netstat();
    test_pressure();
    test_sysfs_int();
    return tl_done();
}
