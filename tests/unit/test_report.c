/*
 * test_report.c - report_compute on a real temporary database and live store filled with
 * hand-made ticks whose answers are known: vda writes exactly 100 MiB over the 10 s run at
 * 10 MiB/s (one tick late, so one interval is 2 s), then 5 MiB in the 5 s tail; dirty data ramps
 * up in the run and drains in the tail; core 1 is 90 % busy, 40 % of it privileged. Also a run
 * with no data (every figure null, every key present). Then the figures of docs/report.md on
 * fixture series: durable_ms, the tail's two phases, the headline rule, levels relative to the
 * start and the window (edges or ticks) each family of figures comes from.
 */
#include "daemon/runs/report.h"
#include "storage/db.h"
#include "storage/query/live.h"
#include "testlib.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0       1795968000000LL /* 2026-11-29T16:00:00Z */
#define NTICK    30              /* ticks 0..29, one a second; tick 17 is missing (late) */
#define NDB      26              /* ticks 0..25 go to the database */
#define LIVE_CAP 8               /* ticks 22..29 are in memory */
#define MIB      1048576LL
#define START    (T0 + 10000)
#define END      (T0 + 20000)
#define SETTLED  (T0 + 25000)

static char dir[] = "/tmp/perflog-test-report-XXXXXX";
static struct tick *all[NTICK];
static size_t nall;

static struct tick_row *add_row(struct tick *t, int obj, const char *name)
{
    struct tick_object *o = &t->obj[obj];
    struct tick_row *r;

    o->rows = realloc(o->rows, (o->n + 1) * sizeof(*o->rows));
    r = &o->rows[o->n++];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    return r;
}

static void cpu_row(struct tick *t, const char *name, int64_t user, int64_t sys, int64_t idle,
                    int64_t m)
{
    struct tick_row *r = add_row(t, OBJ_PROCESSOR, name);

    r->v[CPU_USER] = user * m;
    r->v[CPU_SYSTEM] = sys * m;
    r->v[CPU_IDLE] = idle * m;
}

static void disk_row(struct tick *t, const char *name, int64_t rd_sectors, int64_t wr_sectors,
                     int64_t io_ms, int64_t wr_ios)
{
    struct tick_row *r = add_row(t, OBJ_DISK, name);

    r->v[DISK_RD_SECTORS] = rd_sectors;
    r->v[DISK_WR_SECTORS] = wr_sectors;
    r->v[DISK_IO_MS] = io_ms;
    r->v[DISK_WR_IOS] = wr_ios;
    r->v[DISK_RD_IOS] = rd_sectors / 8;
}

/* Tick i (at T0 + i s). `run`: 10 < i <= 20, `tail`: 20 < i <= 25. Deltas scale with the
 * interval (m seconds) so rates stay as stated. */
static struct tick *mk_tick(int i, int64_t interval_ms)
{
    struct tick *t = calloc(1, sizeof(*t));
    int run = i > 10 && i <= 20, tail = i > 20 && i <= 25;
    int64_t m = interval_ms / 1000, vda_rd = run && i <= 14 ? 10240 * m : 0;
    int64_t vda_wr = run ? 20480 * m : tail ? 2048 : i > 25 ? 4096 : 0;
    int64_t sdb_rd = run ? 2048 * m : 0, rx = i == 15 ? 3000000 : 1500000;
    struct tick_row *r;

    t->refs = 1;
    t->wall_ms = T0 + i * 1000LL;
    t->interval_ms = interval_ms;
    cpu_row(t, "0", 10, 0, 90, m);
    cpu_row(t, "1", 50, 40, 10, m);
    /* core 1 in the run: NET_RX 5000/s, BLOCK 100/s, TIMER 250/s; 2 drops/s, 1 squeeze/s */
    t->obj[OBJ_PROCESSOR].rows[1].v[CPU_SI_NET_RX] = run ? 5000 * m : 0;
    t->obj[OBJ_PROCESSOR].rows[1].v[CPU_SI_BLOCK] = run ? 100 * m : 0;
    t->obj[OBJ_PROCESSOR].rows[1].v[CPU_SI_TIMER] = 250 * m;
    t->obj[OBJ_PROCESSOR].rows[1].v[CPU_NET_DROPPED] = run ? 2 * m : 0;
    t->obj[OBJ_PROCESSOR].rows[1].v[CPU_NET_SQUEEZED] = run ? 1 * m : 0;
    cpu_row(t, "_Total", 60, 40, 100, m);
    disk_row(t, "vda", vda_rd, vda_wr, run ? 500 * m : 0, run ? 80 * m : 0);
    t->obj[OBJ_DISK].rows[0].v[DISK_FLUSH_IOS] = run ? 30 * m : 0; /* 300 flushes in the run */
    disk_row(t, "sdb", sdb_rd, 0, 0, 0);
    t->obj[OBJ_DISK].rows[1].null_mask = 1u << DISK_FLUSH_IOS; /* a kernel without the column */
    disk_row(t, "_Total", vda_rd + sdb_rd, vda_wr, run ? 500 * m : 0, run ? 80 * m : 0);
    r = add_row(t, OBJ_NET, "eth0");
    r->v[NET_RX_BYTES] = run ? rx * m : 0;
    r->v[NET_RX_PACKETS] = run ? rx / 1500 * m : 0;
    r->v[NET_TX_BYTES] = run ? 64000 * m : 0;
    r->v[NET_TX_PACKETS] = run ? 1000 * m : 0;
    r->v[NET_RX_ERRS] = 5 + (i <= 10 ? 0 : i <= 20 ? i - 10 : 10); /* cumulative: +10 in the run */
    r->v[NET_RX_DROP] = 7;
    r->v[NET_SPEED_MBPS] = 1000;
    r->v[NET_MTU] = 1500;
    r = add_row(t, OBJ_NET, "lo");
    r->v[NET_RX_BYTES] = r->v[NET_TX_BYTES] = run ? 100 * m : 0;
    r->v[NET_RX_PACKETS] = r->v[NET_TX_PACKETS] = run ? 1 * m : 0;
    r->null_mask = 1u << NET_SPEED_MBPS; /* lo has no speed */
    r = add_row(t, OBJ_MEMORY, "");
    r->v[MEM_CACHED_KB] = 1000000 + 10240 * (i <= 10 ? 0 : i <= 20 ? i - 10 : 10);
    r->v[MEM_BUFFERS_KB] = 1000;
    r->v[MEM_DIRTY_KB] = i <= 10   ? 100
                         : i <= 20 ? 100 + 6144 * (i - 10)
                         : i <= 25 ? 61540 - 12288 * (i - 20)
                                   : 100;
    r->v[MEM_WRITEBACK_KB] = i == 20 ? 2000 : tail && i < 25 ? 1000 : 0;
    r->v[MEM_WRITTEN_KB] = tail ? 1024 : 0;
    r->v[MEM_AVAILABLE_KB] = 4000000;
    r->v[MEM_DIRTY_THRESH_KB] = 50000; /* Dirty reaches it at ticks 19 and 20 */
    r = add_row(t, OBJ_PRESSURE, "");
    r->v[PSI_IO_SOME_US] = run ? 300000 * m : 0; /* 30% of the run */
    r->v[PSI_IO_FULL_US] = run ? 100000 * m : 0; /* 10% */
    r = add_row(t, OBJ_TCP, "");
    r->v[TCP_OUT_SEGS] = run ? 1000 * m : 0;
    r->v[TCP_RETRANS_SEGS] = run ? 2 * m : 0;
    /* An SMB share read at 1.4 MB/s in 10 requests a second (and its _Total, not listed); an NFS
     * mount written at 100 kB/s in 20 calls of 2 ms RTT (3 ms execute) a second, but 60 calls of
     * 10 ms (15 ms) in tick 15. */
    for (int k = 0; k < 2; k++) {
        r = add_row(t, OBJ_SMB, k ? "_Total" : "\\\\fs1\\data");
        r->v[SMB_RD_BYTES] = run ? 1400000 * m : 0;
        r->v[SMB_RD_REQS] = run ? 10 * m : 0;
    }
    r = add_row(t, OBJ_NFS, "srv:/x");
    r->v[NFS_WR_BYTES] = run ? 100000 * m : 0;
    r->v[NFS_OPS] = !run ? 0 : i == 15 ? 60 : 20 * m;
    r->v[NFS_RTT_MS] = !run ? 0 : i == 15 ? 600 : 40 * m;
    r->v[NFS_EXE_MS] = !run ? 0 : i == 15 ? 900 : 60 * m;
    return t;
}

static struct reader *make_db(struct live **live)
{
    struct reader *rd = NULL;
    char err[512], path[300];
    struct db *d;
    size_t ndb = 0;

    for (int i = 0; i < NTICK; i++) {
        if (i == 17)
            continue; /* late: tick 18 covers 2 s */
        all[nall++] = mk_tick(i, i == 0 ? 0 : i == 18 ? 2000 : 1000);
        if (i < NDB)
            ndb = nall;
    }
    snprintf(path, sizeof(path), "%s/report.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(db_write_ticks(d, all, ndb), 0);
    db_close(d);
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    *live = live_new(LIVE_CAP);
    for (size_t i = 0; i < nall; i++)
        live_publish_ref(*live, all[i]);
    return rd;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    CHECK(v != NULL);
    return json_is_number(v) ? json_number_value(v) : -12345.0;
}

/* An integer key: byte and packet counts must be JSON integers. */
static long long integer(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    CHECK(json_is_integer(v));
    return json_is_integer(v) ? (long long)json_integer_value(v) : -12345;
}

#define CHECK_REL(a, b) CHECK_DBL((a), (b), 1e-9 * fabs(b))

static const json_t *find_inst(const json_t *arr, const char *inst)
{
    size_t i;
    const json_t *v;

    json_array_foreach(arr, i, v)
    {
        if (!strcmp(json_string_value(json_object_get(v, "instance")), inst))
            return v;
    }
    return NULL;
}

/* Every key of docs/design.md §7 is there. */
static void check_keys(const json_t *r)
{
    static const char *const top[] = {
        "id",          "label",      "host",     "command", "exit_code",  "start_utc",  "end_utc",
        "settled_utc", "duration_s", "tail_s",   "disks",   "interfaces", "tcp",        "cpu",
        "memory",      "process",    "payload",  "tool",    "peers",      "throughput", "tail",
        "kernel",      "windows",    "headline", "netfs",   "stalls"};
    static const char *const sub[][6] = {
        {"tcp", "retransmitted_segments", "sent_segments"},
        {"cpu", "avg_pct", "busiest"},
        {"memory", "cache_growth_bytes", "dirty_bytes_at_end", "writeback_tail_bytes"},
        {"process", "io_read_bytes", "storage_read_bytes", "cache_served_read_pct",
         "io_write_bytes", "storage_write_bytes"},
        {"payload", "bytes", "files", "on_disk_at_end_pct", "write_amplification", "ms_per_file"},
        {"payload", "packets_per_file"},
        {"tool", "name", "claimed_bytes_per_s"},
        {"throughput", "claimed", "returned", "durable", "durable_ms"},
        {"tail", "wait_ms", "write_ms", "write_bytes_per_s", "peak_write_bytes_per_s"},
        {"kernel", "throttled"},
        {"windows", "totals", "rates", "levels", "durable_ms", "tail"},
        {"headline", "kind", "bytes_per_s", "capped_at_peak_second"},
    };
    static const char *const busiest[] = {"instance", "avg_pct", "privileged_pct"};
    static const char *const disk[] = {"instance",
                                       "read_bytes",
                                       "write_bytes",
                                       "tail_write_bytes",
                                       "avg_read_bytes_per_s",
                                       "peak_read_bytes_per_s",
                                       "avg_write_bytes_per_s",
                                       "peak_write_bytes_per_s",
                                       "busy_pct",
                                       "busy_s",
                                       "device_bytes_per_s",
                                       "peak_second_bytes_per_s"};
    static const char *const net[] = {"instance",
                                      "rx_bytes",
                                      "tx_bytes",
                                      "rx_packets",
                                      "tx_packets",
                                      "rx_bytes_per_packet",
                                      "tx_bytes_per_packet",
                                      "peak_rx_bytes_per_s",
                                      "peak_tx_bytes_per_s",
                                      "errors",
                                      "discards"};
    const json_t *v;
    size_t i;

    for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
        if (!json_object_get(r, top[k])) {
            fprintf(stderr, "missing key %s\n", top[k]);
            CHECK(0);
        }
    for (size_t k = 0; k < sizeof(sub) / sizeof(sub[0]); k++)
        for (size_t j = 1; j < 6 && sub[k][j]; j++)
            if (!json_object_get(json_object_get(r, sub[k][0]), sub[k][j])) {
                fprintf(stderr, "missing key %s.%s\n", sub[k][0], sub[k][j]);
                CHECK(0);
            }
    for (size_t k = 0; k < 3; k++)
        CHECK(json_object_get(json_object_get(json_object_get(r, "cpu"), "busiest"), busiest[k]));
    json_array_foreach(json_object_get(r, "disks"), i, v)
    {
        for (size_t k = 0; k < sizeof(disk) / sizeof(disk[0]); k++)
            CHECK(json_object_get(v, disk[k]) != NULL);
    }
    json_array_foreach(json_object_get(r, "interfaces"), i, v)
    {
        for (size_t k = 0; k < sizeof(net) / sizeof(net[0]); k++)
            CHECK(json_object_get(v, net[k]) != NULL);
    }
    CHECK(json_is_array(json_object_get(r, "peers")));
}

static struct report_run base_run(void)
{
    struct report_run run = {.id = 7,
                             .label = "dd 200M",
                             .command = "dd if=/dev/zero of=/mnt/x bs=1M count=200",
                             .host = NULL,
                             .status = "settled",
                             .start_ms = START,
                             .end_ms = END,
                             .settled_ms = SETTLED,
                             .exit_code = 0,
                             .payload_bytes = 200 * MIB,
                             .files = 100,
                             .tool_output = "200+0 records in\n200+0 records out\n209715200 bytes "
                                            "(210 MB, 200 MiB) copied, 10 s, 21.0 MB/s\n",
                             .io_read_bytes = 100 * MIB,
                             .io_write_bytes = 200 * MIB,
                             .storage_read_bytes = 5 * MIB,
                             .storage_write_bytes = 0};
    return run;
}

static void test_known(struct reader *rd, struct live *live)
{
    struct report_run run = base_run();
    char err[256] = "";
    json_t *r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    const json_t *d, *n, *o;

    CHECK(r != NULL);
    if (!r) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    check_keys(r);
    CHECK_INT(integer(r, "id"), 7);
    CHECK_STR(json_string_value(json_object_get(r, "host")), "testhost");
    CHECK_STR(json_string_value(json_object_get(r, "start_utc")), "2026-11-29T16:00:10.000Z");
    CHECK_STR(json_string_value(json_object_get(r, "end_utc")), "2026-11-29T16:00:20.000Z");
    CHECK_STR(json_string_value(json_object_get(r, "settled_utc")), "2026-11-29T16:00:25.000Z");
    CHECK_INT(integer(r, "exit_code"), 0);
    CHECK_REL(num(r, "duration_s"), 10.0);
    CHECK_REL(num(r, "tail_s"), 5.0);

    CHECK_INT(json_array_size(json_object_get(r, "disks")), 2); /* vda, sdb; not _Total */
    d = find_inst(json_object_get(r, "disks"), "vda");
    CHECK(d != NULL);
    if (d) {
        CHECK_INT(integer(d, "read_bytes"), 20 * MIB);
        CHECK_INT(integer(d, "write_bytes"), 100 * MIB);
        CHECK_INT(integer(d, "tail_write_bytes"), 5 * MIB);
        CHECK_REL(num(d, "avg_write_bytes_per_s"), 10.0 * MIB);
        CHECK_REL(num(d, "peak_write_bytes_per_s"), 10.0 * MIB);
        CHECK_REL(num(d, "avg_read_bytes_per_s"), 2.0 * MIB);
        CHECK_REL(num(d, "peak_read_bytes_per_s"), 5.0 * MIB);
        CHECK_REL(num(d, "busy_pct"), 50.0);
        CHECK_INT(integer(d, "write_ops"), 800);
    }
    d = find_inst(json_object_get(r, "disks"), "sdb");
    if (d) {
        CHECK_INT(integer(d, "read_bytes"), 10 * MIB);
        CHECK_INT(integer(d, "write_bytes"), 0);
        CHECK_INT(integer(d, "tail_write_bytes"), 0);
    }
    CHECK_INT(integer(r, "disk_read_bytes"), 30 * MIB);

    CHECK_INT(json_array_size(json_object_get(r, "interfaces")), 2);
    n = find_inst(json_object_get(r, "interfaces"), "eth0");
    CHECK(n != NULL);
    if (n) {
        CHECK_INT(integer(n, "rx_bytes"), 16500000);
        CHECK_INT(integer(n, "rx_packets"), 11000);
        CHECK_INT(integer(n, "tx_bytes"), 640000);
        CHECK_INT(integer(n, "tx_packets"), 10000);
        CHECK_REL(num(n, "rx_bytes_per_packet"), 1500.0);
        CHECK_REL(num(n, "tx_bytes_per_packet"), 64.0);
        CHECK_REL(num(n, "peak_rx_bytes_per_s"), 3000000.0);
        CHECK_REL(num(n, "peak_tx_bytes_per_s"), 64000.0);
        CHECK_INT(integer(n, "errors"), 10);
        CHECK_INT(integer(n, "discards"), 0);
        CHECK_REL(num(n, "peak_bandwidth_pct"), 2.4);
        CHECK_REL(num(n, "bandwidth_bits_per_s"), 1e9);
    }
    n = find_inst(json_object_get(r, "interfaces"), "lo");
    if (n) {
        CHECK_INT(integer(n, "rx_packets"), 10);
        CHECK(json_is_null(json_object_get(n, "peak_bandwidth_pct")));
    }

    /* The share's and the mount's bytes against eth0's 16500000 + 640000 (lo left out). */
    CHECK_INT(json_array_size(json_object_get(r, "netfs")), 2);
    n = find_inst(json_object_get(r, "netfs"), "\\\\fs1\\data");
    CHECK(n != NULL);
    if (n) {
        CHECK_STR(json_string_value(json_object_get(n, "kind")), "smb");
        CHECK_INT(integer(n, "read_bytes"), 14000000);
        CHECK_INT(integer(n, "write_bytes"), 0);
        CHECK_INT(integer(n, "requests"), 100);
        CHECK_REL(num(n, "bytes_per_request"), 140000.0);
        CHECK_REL(num(n, "bytes_per_nic_byte"), 14000000.0 / 17140000.0);
        CHECK_REL(num(n, "peak_read_bytes_per_s"), 1400000.0);
        CHECK(json_is_null(json_object_get(n, "avg_rtt_s"))); /* cifs Stats has no times */
    }
    n = find_inst(json_object_get(r, "netfs"), "srv:/x");
    CHECK(n != NULL);
    if (n) {
        CHECK_STR(json_string_value(json_object_get(n, "kind")), "nfs");
        CHECK_INT(integer(n, "write_bytes"), 1000000);
        CHECK_INT(integer(n, "requests"), 240); /* 20 a second for 10 s, 40 more in tick 15 */
        /* weighted by calls: (40 x 10 + 560) ms over 240 calls, not the ticks' 2.8 ms mean */
        CHECK_REL(num(n, "avg_rtt_s"), 0.004);
        CHECK_REL(num(n, "avg_execute_s"), 0.006);
        CHECK_REL(num(n, "bytes_per_nic_byte"), 1000000.0 / 17140000.0);
    }

    o = json_object_get(r, "tcp");
    CHECK_INT(integer(o, "retransmitted_segments"), 20);
    CHECK_INT(integer(o, "sent_segments"), 10000);

    o = json_object_get(r, "cpu");
    CHECK_REL(num(o, "avg_pct"), 50.0);
    o = json_object_get(o, "busiest");
    CHECK_STR(json_string_value(json_object_get(o, "instance")), "1");
    CHECK_REL(num(o, "avg_pct"), 90.0);
    CHECK_REL(num(o, "privileged_pct"), 40.0);
    CHECK_STR(json_string_value(json_object_get(o, "dominant_softirq")), "NET_RX");
    CHECK_REL(num(o, "dominant_softirqs_per_s"), 5000.0);
    CHECK_INT(integer(o, "dropped_packets"), 20);
    CHECK_INT(integer(o, "time_squeezes"), 10);

    o = json_object_get(r, "stalls");
    CHECK_REL(num(o, "io_some_pct"), 30.0);
    CHECK_REL(num(o, "io_full_pct"), 10.0);
    CHECK_REL(num(o, "memory_some_pct"), 0.0);
    CHECK_INT(integer(o, "disk_flushes"), 300); /* vda; sdb has no flush counter */
    CHECK_INT(integer(find_inst(json_object_get(r, "disks"), "vda"), "flushes"), 300);
    CHECK(json_is_null(json_object_get(find_inst(json_object_get(r, "disks"), "sdb"), "flushes")));

    o = json_object_get(r, "memory");
    CHECK_INT(integer(o, "cache_growth_bytes"), 100 * MIB);
    /* a change from the start's 100 KiB */
    CHECK_INT(integer(o, "dirty_bytes_at_end"), (61540 + 2000 - 100) * 1024LL);
    CHECK_INT(integer(o, "dirty_bytes_at_start"), 100 * 1024LL);
    CHECK(json_is_false(json_object_get(o, "dirty_high_at_start")));
    CHECK_INT(integer(o, "writeback_tail_bytes"), 5 * MIB);

    o = json_object_get(r, "process");
    CHECK_INT(integer(o, "io_read_bytes"), 100 * MIB);
    CHECK_INT(integer(o, "storage_read_bytes"), 5 * MIB);
    CHECK_REL(num(o, "cache_served_read_pct"), 95.0);

    o = json_object_get(r, "payload");
    CHECK_INT(integer(o, "bytes"), 200 * MIB);
    CHECK_INT(integer(o, "files"), 100);
    CHECK_REL(num(o, "on_disk_at_end_pct"), 50.0);
    CHECK_REL(num(o, "write_amplification"), 105.0 / 200.0);
    CHECK_REL(num(o, "ms_per_file"), 100.0);
    /* eth0's packets; lo's 10 + 10 are perflog's own requests, not the copy's */
    CHECK_REL(num(o, "packets_per_file"), (11000 + 10000) / 100.0);

    o = json_object_get(r, "tool");
    CHECK_STR(json_string_value(json_object_get(o, "name")), "dd");
    CHECK_REL(num(o, "claimed_bytes_per_s"), 21e6);
    CHECK(json_object_get(o, "measured_bytes_per_s") == NULL); /* payload / duration: gone */
    CHECK_INT(json_array_size(json_object_get(r, "peers")), 0);

    /* Dirty + writeback relative to the start: 13288 KiB at tick 24, 0 at tick 25; the 8 MiB
     * slack is crossed (13288 - 8192) / 13288 of the way, 384 ms after tick 24. */
    o = json_object_get(r, "throughput");
    CHECK_INT(integer(o, "durable_ms"), 14384);
    CHECK_REL(num(o, "durable"), 200.0 * MIB / 14.384);
    CHECK_REL(num(o, "returned"), 20.0 * MIB);
    CHECK_REL(num(o, "claimed"), 21e6);
    /* The excess falls from the end on (63440 KiB at tick 20, 50152 at 21): no wait. The write
     * ran to the durable moment; the devices wrote 1 MiB/s in it (the fixture's tail). */
    o = json_object_get(r, "tail");
    CHECK_INT(integer(o, "wait_ms"), 0);
    CHECK_INT(integer(o, "write_ms"), 4384);
    CHECK_INT(integer(o, "write_bytes"), 63440 * 1024LL);
    CHECK_REL(num(o, "peak_write_bytes_per_s"), 1.0 * MIB);
    /* the client's storage writes are 0: a read, whose headline is the devices' read rate */
    o = json_object_get(r, "headline");
    CHECK_STR(json_string_value(json_object_get(o, "kind")), "device_read");
    CHECK_REL(num(o, "bytes_per_s"), 3.0 * MIB);
    CHECK(json_is_false(json_object_get(o, "capped_at_peak_second")));
    o = json_object_get(r, "windows");
    CHECK_STR(json_string_value(json_object_get(o, "totals")), "ticks");
    CHECK_STR(json_string_value(json_object_get(o, "levels")), "ticks");
    CHECK_STR(json_string_value(json_object_get(o, "durable_ms")), "ticks");
    /* no threshold from the edges, but each tick's own: Dirty reached it in two ticks */
    CHECK(json_is_true(json_object_get(json_object_get(r, "kernel"), "throttled")));
    CHECK_INT(integer(json_object_get(r, "kernel"), "throttled_ticks"), 2);
    d = find_inst(json_object_get(r, "disks"), "vda");
    if (d) {
        /* 50 % busy over the 10 s run (and idle in the tail): 5 s for 120 MiB + 5 MiB */
        CHECK_REL(num(d, "busy_s"), 5.0);
        CHECK_REL(num(d, "device_bytes_per_s"), 125.0 * MIB / 5.0);
        CHECK_REL(num(d, "peak_second_bytes_per_s"), 15.0 * MIB);
    }
    if (getenv("REPORT_VERBOSE")) {
        char *js = json_dumps(r, JSON_INDENT(1));

        printf("%s\n", js);
        free(js);
    }
    json_decref(r);

    /* without memory, or without a database: the same figures from what is left */
    r = report_compute(rd, NULL, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (r) {
        d = find_inst(json_object_get(r, "disks"), "vda");
        CHECK(d != NULL);
        if (d) {
            CHECK_INT(integer(d, "write_bytes"), 100 * MIB);
            CHECK_INT(integer(d, "tail_write_bytes"), 5 * MIB);
        }
        json_decref(r);
    }
}

/* A command that returns mid-tick: the levels "at exit" come from the tick after it, whose
 * interval holds the command's last moments, not from the tick before. */
static void test_end_mid_tick(struct reader *rd, struct live *live)
{
    struct report_run run = base_run();
    char err[256];
    json_t *r;
    const json_t *o;

    run.end_ms = END - 300;
    r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (!r)
        return;
    o = json_object_get(r, "memory");
    /* tick 20's dirty + writeback, not tick 19's (100 + 6144 * 9 KiB and no writeback) */
    CHECK_INT(integer(o, "dirty_bytes_at_end"), (61540 + 2000 - 100) * 1024LL);
    CHECK_INT(integer(o, "cache_growth_bytes"), 100 * MIB);
    o = find_inst(json_object_get(r, "interfaces"), "eth0");
    CHECK(o != NULL);
    if (o)
        CHECK_INT(integer(o, "errors"), 10);
    /* the ticks' 30 MiB over their own 10 s, not over the 9.7 s the command ran: whole ticks'
     * bytes over the exact duration came out above the devices' own peak */
    o = json_object_get(r, "headline");
    CHECK_REL(num(o, "bytes_per_s"), 3.0 * MIB);
    json_decref(r);
}

/* The tail of a run not settled yet runs to the newest tick. */
static void test_unsettled(struct reader *rd, struct live *live)
{
    struct report_run run = base_run();
    char err[256];
    json_t *r;
    const json_t *d;

    run.settled_ms = -1;
    r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK(json_is_null(json_object_get(r, "settled_utc")));
    CHECK_REL(num(r, "tail_s"), 9.0);
    d = find_inst(json_object_get(r, "disks"), "vda");
    if (d)
        CHECK_INT(integer(d, "tail_write_bytes"), 5 * MIB + 4 * 2 * MIB);
    json_decref(r);
}

/* No data for the range, no payload, no process numbers, no tool output: nulls, every key. */
static void test_missing(struct reader *rd, struct live *live)
{
    struct report_run run = {.id = 8,
                             .start_ms = T0 + 3600000,
                             .end_ms = T0 + 3610000,
                             .settled_ms = -1,
                             .exit_code = -1,
                             .payload_bytes = -1,
                             .files = -1,
                             .io_read_bytes = -1,
                             .io_write_bytes = -1,
                             .storage_read_bytes = -1,
                             .storage_write_bytes = -1};
    char err[256];
    json_t *r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    const json_t *o;

    CHECK(r != NULL);
    if (!r)
        return;
    check_keys(r);
    CHECK_INT(json_array_size(json_object_get(r, "disks")), 0);
    CHECK_INT(json_array_size(json_object_get(r, "interfaces")), 0);
    CHECK(json_is_null(json_object_get(r, "exit_code")));
    CHECK(json_is_null(json_object_get(r, "label")));
    CHECK(json_is_null(json_object_get(json_object_get(r, "tcp"), "sent_segments")));
    CHECK(json_is_null(json_object_get(json_object_get(r, "cpu"), "avg_pct")));
    o = json_object_get(json_object_get(r, "cpu"), "busiest");
    CHECK(json_is_null(json_object_get(o, "instance")));
    CHECK(json_object_get(o, "dominant_softirq") == NULL); /* no core: nothing to name */
    o = json_object_get(r, "stalls");
    CHECK(json_is_null(json_object_get(o, "io_some_pct")));
    CHECK(json_is_null(json_object_get(o, "disk_flushes")));
    CHECK(json_is_null(json_object_get(json_object_get(r, "kernel"), "throttled_ticks")));
    o = json_object_get(r, "memory");
    CHECK(json_is_null(json_object_get(o, "cache_growth_bytes")));
    CHECK(json_is_null(json_object_get(o, "dirty_bytes_at_end")));
    o = json_object_get(r, "process");
    CHECK(json_is_null(json_object_get(o, "io_read_bytes")));
    CHECK(json_is_null(json_object_get(o, "cache_served_read_pct")));
    o = json_object_get(r, "payload");
    CHECK(json_is_null(json_object_get(o, "bytes")));
    CHECK(json_is_null(json_object_get(o, "on_disk_at_end_pct")));
    CHECK(json_is_null(json_object_get(o, "write_amplification")));
    CHECK(json_is_null(json_object_get(o, "ms_per_file")));
    CHECK(json_is_null(json_object_get(o, "packets_per_file")));
    o = json_object_get(r, "tool");
    CHECK(json_is_null(json_object_get(o, "name")));
    CHECK(json_is_null(json_object_get(o, "claimed_bytes_per_s")));
    o = json_object_get(r, "throughput");
    CHECK(json_is_null(json_object_get(o, "durable")));
    CHECK(json_is_null(json_object_get(o, "durable_ms")));
    CHECK(json_is_null(json_object_get(o, "returned")));
    CHECK(json_is_null(json_object_get(json_object_get(r, "headline"), "bytes_per_s")));
    json_decref(r);

    /* no sources at all */
    r = report_compute(NULL, NULL, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (r)
        check_keys(r);
    json_decref(r);
    run.start_ms = -1;
    CHECK(report_compute(rd, live, 1000, &run, err, sizeof(err)) == NULL);
}

/* Reads served from cache: clamped to 0..100, null without reads. */
static void test_cache_share(struct reader *rd)
{
    struct report_run run = base_run();
    char err[256];
    json_t *r;

    run.storage_read_bytes = 200 * MIB; /* read-ahead: more from storage than read */
    r = report_compute(rd, NULL, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (r)
        CHECK_REL(num(json_object_get(r, "process"), "cache_served_read_pct"), 0.0);
    json_decref(r);
    run.io_read_bytes = 0;
    r = report_compute(rd, NULL, 1000, &run, err, sizeof(err));
    if (r)
        CHECK(
            json_is_null(json_object_get(json_object_get(r, "process"), "cache_served_read_pct")));
    json_decref(r);
}

/* "process.followed" and its reason: a run not followed says why (the client prints it), so
 * that "processes_followed": 0 is not read as idle processes. */
static void test_followed(struct reader *rd)
{
    static const struct {
        int64_t pid;
        int followed;
        const char *why;
        int want; /* 1 true, 0 false, -1 null */
        const char *want_why;
    } cases[] = {
        {0, 0, NULL, 0, "the run gave no pid"},
        {1234, 1, NULL, 1, NULL},
        {1234, -1, "64 runs are followed already", 0, "64 runs are followed already"},
        {1234, -1, NULL, 0, "perflogd could not follow its pid"},
        {1234, 0, NULL, -1, "perflogd stopped while the run was open"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct report_run run = base_run();
        char err[256];
        json_t *r, *p, *f, *why;

        run.pid = cases[i].pid;
        run.followed = cases[i].followed;
        run.not_followed_reason = cases[i].why;
        r = report_compute(rd, NULL, 1000, &run, err, sizeof(err));
        CHECK(r != NULL);
        if (!r)
            continue;
        p = json_object_get(r, "process");
        f = json_object_get(p, "followed");
        why = json_object_get(p, "not_followed_reason");
        CHECK(cases[i].want == 1   ? json_is_true(f)
              : cases[i].want == 0 ? json_is_false(f)
                                   : json_is_null(f));
        if (cases[i].want_why)
            CHECK(json_is_string(why) && strncmp(json_string_value(why), cases[i].want_why,
                                                 strlen(cases[i].want_why)) == 0);
        else
            CHECK(json_is_null(why));
        json_decref(r);
    }
}

/* ---- the figures on fixture series ---- */

/* A lazy write: cp returns at 1.88 s with 1 GiB dirty; the kernel leaves it 29 s, then writes
 * 400 MiB in the second before 31 s and the rest in the next. */
#define LAZY_N 33
static size_t lazy_series(struct report_point *p)
{
    size_t n = 0;

    for (int i = 1; i <= LAZY_N; i++) {
        double ex = i == 1 ? 0 : i <= 30 ? 1024.0 * MIB : i == 31 ? 600.0 * MIB : 0;
        double wr = i == 31 ? 400.0 * MIB : i == 32 ? 600.0 * MIB : i == 2 ? 0 : 0.1 * MIB;

        p[n++] = (struct report_point){i * 1000LL, ex, wr, 1.0};
    }
    return n;
}

static void test_durable_at(void)
{
    struct report_point p[LAZY_N + 1];
    size_t n = lazy_series(p);
    double slack = report_level_slack(1024.0 * MIB);

    CHECK_REL(slack, 0.05 * 1024.0 * MIB);
    CHECK_REL(report_level_slack(10.0 * MIB), 8.0 * MIB); /* the floor */
    CHECK_REL(report_level_slack(NAN), 8.0 * MIB);
    /* 600 MiB at 31 s, 0 at 32 s: 51.2 MiB is crossed 548.8 / 600 of the way */
    CHECK_INT(report_durable_at(p, n, 1880, slack), 31915);
    /* a settle reading at 31.4 s that saw it down brings the moment into [31 s, 31.4 s] */
    p[n] = (struct report_point){31400, 0, NAN, 0};
    for (size_t i = n; i > 0 && p[i].t_ms < p[i - 1].t_ms; i--) {
        struct report_point t = p[i];

        p[i] = p[i - 1];
        p[i - 1] = t;
    }
    CHECK_INT(report_durable_at(p, n + 1, 1880, slack), 31366);
    /* never down in the points */
    CHECK_INT(report_durable_at(p, 30, 1880, slack), -1);
    /* down already at the end (an O_DIRECT write): the end itself */
    for (size_t i = 0; i < n; i++)
        p[i].excess_bytes = i == 0 ? 0 : 2.0 * MIB;
    CHECK_INT(report_durable_at(p, n, 1880, slack), 1880);
    p[1].t_ms = 1880; /* the end reading itself */
    CHECK_INT(report_durable_at(p, n, 1880, slack), 1880);
    /* no level known */
    for (size_t i = 0; i < n; i++)
        p[i].excess_bytes = NAN;
    CHECK_INT(report_durable_at(p, n, 1880, slack), -1);
}

static void test_tail_phases(void)
{
    struct report_point p[LAZY_N];
    size_t n = lazy_series(p);
    double slack = report_level_slack(1024.0 * MIB);
    struct report_tail t;

    /* 1 GiB sits until the point at 30 s. The next tick's drop, 424 MiB, takes 707 ms at the
     * devices' 600 MiB/s peak: the write began at 30.293 s and ended at the durable moment,
     * 31.915 s. The journal's 0.1 MiB/s of the wait does not end it. */
    report_tail_phases(p, n, 1880, 31915, slack, &t);
    CHECK_REL(t.wait_ms, 30293.0 - 1880.0);
    CHECK_REL(t.write_ms, 31915.0 - 30293.0);
    CHECK_REL(t.write_bytes, 1024.0 * MIB);
    CHECK_REL(t.write_bytes_per_s, 1024.0 * MIB / 1.622);
    CHECK_REL(t.peak_write_bytes_per_s, 600.0 * MIB);
    /* A neighbour's burst of device writes in the wait does not end it either: the run's own
     * data did not move. */
    p[10].write_bytes_per_s = 300.0 * MIB;
    report_tail_phases(p, n, 1880, 31915, slack, &t);
    CHECK_REL(t.wait_ms, 30293.0 - 1880.0);
    p[10].write_bytes_per_s = 0.1 * MIB;
    /* without a durable moment the write runs to the last point */
    report_tail_phases(p, n, 1880, -1, slack, &t);
    CHECK_REL(t.write_ms, 33000.0 - 30293.0);
    /* flat to the end: all wait */
    report_tail_phases(p, 25, 1880, -1, slack, &t);
    CHECK_REL(t.wait_ms, 25000.0 - 1880.0);
    CHECK_REL(t.write_ms, 0.0);
    /* Falling from the end on (the writeback started in the run): the write starts one drop
     * (128 MiB at 128 MiB/s) before the tick at 3 s, where the wait (nothing known before the
     * first point after the end, at 2 s) ends at the latest. */
    for (size_t i = 0; i < n; i++) {
        p[i].excess_bytes = i == 0 ? 512.0 * MIB : i < 5 ? (512.0 - 128.0 * i) * MIB : 0;
        p[i].write_bytes_per_s = i < 5 ? 128.0 * MIB : 0;
    }
    report_tail_phases(p, n, 1880, 5000, slack, &t);
    CHECK_REL(t.wait_ms, 2000.0 - 1880.0);
    CHECK_REL(t.write_ms, 5000.0 - 2000.0);
    CHECK_REL(t.peak_write_bytes_per_s, 128.0 * MIB);
    /* A write that ends between a tick and a settle reading: the tick after the reading, whose
     * interval holds the write, gives the peak. */
    {
        struct report_point q[] = {{1000, 0, 0, 1},
                                   {2000, 500 * MIB, 0, 1},
                                   {3000, 500 * MIB, 0, 1},
                                   {3400, 0, NAN, 0},
                                   {4000, 0, 500 * MIB, 1}};

        report_tail_phases(q, 5, 1500, 3400, slack, &t);
        CHECK_REL(t.wait_ms, 3000.0 - 1500.0);
        CHECK_REL(t.write_ms, 400.0);
        CHECK_REL(t.write_bytes, 500.0 * MIB);
        CHECK_REL(t.peak_write_bytes_per_s, 500.0 * MIB);
    }
    /* no point after the end: nothing known */
    report_tail_phases(p, 1, 1880, -1, slack, &t);
    CHECK(isnan(t.wait_ms) && isnan(t.write_ms));
}

static void test_headline(void)
{
    struct report_headline h;

    report_pick_headline(1, 33.0 * MIB, 500.0 * MIB, 580.0 * MIB, &h);
    CHECK_STR(h.kind, "durable");
    CHECK_REL(h.bytes_per_s, 33.0 * MIB);
    CHECK_INT(h.capped, 0);
    report_pick_headline(0, 33.0 * MIB, 500.0 * MIB, 580.0 * MIB, &h);
    CHECK_STR(h.kind, "device_read");
    CHECK_REL(h.bytes_per_s, 500.0 * MIB);
    /* whole-tick bytes over a short exact duration: never above the busiest second */
    report_pick_headline(0, NAN, 677.0 * MIB, 582.0 * MIB, &h);
    CHECK_REL(h.bytes_per_s, 582.0 * MIB);
    CHECK_INT(h.capped, 1);
    report_pick_headline(1, NAN, 1.0, 1.0, &h);
    CHECK(isnan(h.bytes_per_s));
    report_pick_headline(1, 5.0, 1.0, NAN, &h); /* no peak known: nothing to cap at */
    CHECK_REL(h.bytes_per_s, 5.0);
}

/* An edge reading of the run's fixture: vda's counters, the memory levels, the CPU. */
static json_t *edge(int64_t t_ms, json_int_t rd, json_int_t wr, json_int_t busy_ms,
                    json_int_t dirty, json_int_t cached, json_int_t written, json_int_t cpu_ms)
{
    return json_pack("{sI s{s{sIsIsIsIsIsI}} s{sIsIsIsIsIsIsIsI} s{sIsIsIsI}}", "t_ms",
                     (json_int_t)t_ms, "disks", "vda", "read_bytes", rd, "write_bytes", wr,
                     "read_ops", rd / 4096, "write_ops", wr / 65536, "busy_ms", busy_ms, "queue_ms",
                     busy_ms, "mem", "dirty_bytes", dirty, "writeback_bytes", (json_int_t)0,
                     "cached_bytes", cached, "written_bytes", written, "dirtied_bytes", written,
                     "pgpgout_bytes", written, "dirty_threshold_bytes", (json_int_t)(200 * MIB),
                     "dirty_background_threshold_bytes", (json_int_t)(100 * MIB), "cpu", "user_ms",
                     cpu_ms, "system_ms", cpu_ms / 2, "idle_ms", (json_int_t)999999, "iowait_ms",
                     (json_int_t)5000);
}

/* With edge readings the totals are theirs (exact, not whole ticks), the levels are changes from
 * the start reading, and "windows" says so; the rates still come from the ticks. */
static void test_edges(struct reader *rd, struct live *live)
{
    struct report_run run = base_run();
    char err[256];
    json_t *edges = json_pack(
        "{so so so s{sIsI}}", "start", edge(START, 1000, 5000, 100, 50 * MIB, 900 * MIB, 0, 1000),
        "end",
        edge(END, 1000 + 7 * MIB, 5000 + 99 * MIB, 4100, 70 * MIB, 990 * MIB, 40 * MIB, 9000),
        "settle",
        edge(SETTLED - 400, 1000 + 7 * MIB, 5000 + 104 * MIB, 4600, 50 * MIB, 990 * MIB, 45 * MIB,
             9500),
        "kernel", "dirty_expire_centisecs", (json_int_t)3000, "dirty_threshold_bytes",
        (json_int_t)(60 * MIB));
    json_t *r;
    const json_t *o, *d;

    /* sdb stands for a stacked device here: the collector left it out of _Total */
    for (const char *const *k = (const char *const[]){"start", "end", "settle", NULL}; *k; k++) {
        json_t *disks = json_object_get(json_object_get(edges, *k), "disks");

        json_object_set_new(json_object_get(disks, "vda"), "in_total", json_integer(1));
        json_object_set_new(disks, "sdb",
                            json_pack("{sIsIsI}", "read_bytes",
                                      (json_int_t)(strcmp(*k, "start") ? MIB : 0), "write_bytes",
                                      (json_int_t)0, "in_total", (json_int_t)0));
    }
    run.edges = edges;
    run.storage_write_bytes = 200 * MIB; /* it wrote: the headline is durable */
    r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (!r) {
        json_decref(edges);
        return;
    }
    check_keys(r);
    d = find_inst(json_object_get(r, "disks"), "vda");
    CHECK(d != NULL);
    if (d) {
        CHECK_INT(integer(d, "read_bytes"), 7 * MIB);
        CHECK_INT(integer(d, "write_bytes"), 99 * MIB);
        CHECK_INT(integer(d, "tail_write_bytes"), 5 * MIB);
        CHECK_INT(integer(d, "write_ops"), 99 * MIB / 65536 - 0);
        CHECK_REL(num(d, "busy_s"), 4.5);
        CHECK_REL(num(d, "device_bytes_per_s"), (7.0 + 99 + 5) * MIB / 4.5);
        CHECK_REL(num(d, "peak_write_bytes_per_s"), 10.0 * MIB); /* the ticks' */
    }
    CHECK_INT(integer(r, "disk_write_bytes"), 99 * MIB);
    CHECK_INT(integer(r, "disk_read_bytes"), 7 * MIB); /* vda only: sdb is not in _Total */
    d = find_inst(json_object_get(r, "disks"), "sdb");
    if (d) /* its own row still has its bytes, from the edges */
        CHECK_INT(integer(d, "read_bytes"), 1 * MIB);
    CHECK_REL(num(json_object_get(r, "cpu"), "cpu_s"), 12.0); /* 8 s user + 4 s system */
    o = json_object_get(r, "memory");
    CHECK_INT(integer(o, "dirty_bytes_at_start"), 50 * MIB);
    CHECK_INT(integer(o, "dirty_bytes_at_end"), 20 * MIB);
    CHECK(json_is_true(json_object_get(o, "dirty_high_at_start"))); /* >= half of 100 MiB */
    CHECK_INT(integer(o, "cache_growth_bytes"), 90 * MIB);
    CHECK_INT(integer(o, "writeback_run_bytes"), 40 * MIB);
    CHECK_INT(integer(o, "writeback_tail_bytes"), 5 * MIB);
    o = json_object_get(r, "kernel");
    CHECK_INT(integer(o, "dirty_expire_centisecs"), 3000);
    CHECK(json_is_true(json_object_get(o, "throttled"))); /* 70 MiB dirty >= 60 MiB */
    o = json_object_get(r, "windows");
    CHECK_STR(json_string_value(json_object_get(o, "totals")), "edges");
    CHECK_STR(json_string_value(json_object_get(o, "tail_totals")), "edges");
    CHECK_STR(json_string_value(json_object_get(o, "levels")), "edges");
    CHECK_STR(json_string_value(json_object_get(o, "rates")), "ticks");
    /* Relative to 50 MiB every tick of the fixture is below the start level: down at the end
     * (the end reading's 20 MiB excess is above the 8 MiB slack, the tick after it below). */
    /* the end reading, 20 MiB above the start, and tick 21, below it, bracket the moment */
    o = json_object_get(r, "throughput");
    CHECK(json_is_integer(json_object_get(o, "durable_ms")));
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "windows"), "durable_ms")),
              "edges");
    o = json_object_get(r, "headline");
    CHECK_STR(json_string_value(json_object_get(o, "kind")), "durable");
    json_decref(r);

    /* without the settle reading the tail's totals are the ticks' */
    json_object_del(edges, "settle");
    r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (r) {
        o = json_object_get(r, "windows");
        CHECK_STR(json_string_value(json_object_get(o, "totals")), "edges");
        CHECK_STR(json_string_value(json_object_get(o, "tail_totals")), "ticks");
        d = find_inst(json_object_get(r, "disks"), "vda");
        if (d)
            CHECK_INT(integer(d, "tail_write_bytes"), 5 * MIB);
        json_decref(r);
    }
    json_decref(edges);
}

/* Another writer's dirty data keeps the level up to the end of the tail: the settle reading that
 * found the run's own bytes written gives the moment, when the cache fell by those bytes too. */
static void test_durable_by_own(struct reader *rd, struct live *live)
{
    struct report_run run = base_run();
    char err[256];
    json_t *edges = json_pack("{so so so}", "start", edge(START, 0, 0, 0, 0, 0, 0, 0), "end",
                              edge(END, 0, 0, 0, 60 * MIB, 0, 0, 0), "settle",
                              edge(T0 + 22000, 0, 0, 0, 30 * MIB, 0, 0, 0));
    json_t *r;
    const json_t *o;

    json_object_set_new(json_object_get(edges, "settle"), "ended_by", json_string("own_written"));
    run.edges = edges;
    run.settled_ms = T0 + 22000; /* ticks 21 and 22: 49 and 37 MiB above the start */
    run.storage_write_bytes = 30 * MIB;
    r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (r) {
        o = json_object_get(r, "throughput");
        CHECK_INT(integer(o, "durable_ms"), 12000);
        CHECK_STR(json_string_value(json_object_get(json_object_get(r, "windows"), "durable_ms")),
                  "edges");
        json_decref(r);
    }
    /* 200 MiB of its own against a cache that fell by ~32 MiB: the devices' bytes were others' */
    run.storage_write_bytes = 200 * MIB;
    r = report_compute(rd, live, 1000, &run, err, sizeof(err));
    CHECK(r != NULL);
    if (r) {
        CHECK(json_is_null(json_object_get(json_object_get(r, "throughput"), "durable_ms")));
        json_decref(r);
    }
    json_decref(edges);
}

int main(void)
{
    struct live *live = NULL;
    struct reader *rd;
    char cmd[300];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    rd = make_db(&live);
    if (rd && live) {
        test_known(rd, live);
        test_unsettled(rd, live);
        test_end_mid_tick(rd, live);
        test_missing(rd, live);
        test_cache_share(rd);
        test_followed(rd);
        test_edges(rd, live);
        test_durable_by_own(rd, live);
    }
    test_durable_at();
    test_tail_phases();
    test_headline();
    reader_close(rd);
    live_free(live);
    for (size_t i = 0; i < nall; i++)
        tick_free(all[i]);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
