/*
 * test_pdh_map.c - the PDH-independent half of the Windows collector, run on Linux: counter paths,
 * instance names, the conversion of PDH readings to raw fields, the mapping of the design's paths
 * onto PDH counters (every counter of section 2 gets a value from a full set of readings, except
 * the Linux-only ones), and the Windows glob matcher.
 */
#include "base/glob_match.h"
#include "collectors/model/counters.h"
#include "collectors/windows/pdh_map.h"
#include "testlib.h"

#include <stdlib.h>

static void test_paths(void)
{
    char buf[128];

    CHECK_INT(pdh_map_path("PhysicalDisk", "*", "Disk Read Bytes/sec", buf, sizeof(buf)), 0);
    CHECK_STR(buf, "\\PhysicalDisk(*)\\Disk Read Bytes/sec");
    CHECK_INT(pdh_map_path("Memory", NULL, "Available Bytes", buf, sizeof(buf)), 0);
    CHECK_STR(buf, "\\Memory\\Available Bytes");
    /* Exactly the bytes needed, then one fewer. */
    CHECK_INT(pdh_map_path("A", "b", "C", buf, 8), 0);
    CHECK_STR(buf, "\\A(b)\\C");
    CHECK_INT(pdh_map_path("A", "b", "C", buf, 7), -1);

    CHECK_INT(pdh_map_instance_of("\\\\HOST\\PhysicalDisk(0 C:)\\Disk Reads/sec", buf, sizeof(buf)),
              0);
    CHECK_STR(buf, "0 C:");
    CHECK_INT(pdh_map_instance_of("\\Processor(_Total)\\% Processor Time", buf, sizeof(buf)), 0);
    CHECK_STR(buf, "_Total");
    CHECK_INT(pdh_map_instance_of("\\Thread(svchost/0#1)\\Context Switches/sec", buf, sizeof(buf)),
              0);
    CHECK_STR(buf, "svchost/0#1");
    /* A ')' inside the name: the instance ends at the ')' before the counter. */
    CHECK_INT(pdh_map_instance_of("\\X(a (b))\\C", buf, sizeof(buf)), 0);
    CHECK_STR(buf, "a (b)");
    CHECK_INT(pdh_map_instance_of("\\Memory\\Available Bytes", buf, sizeof(buf)), -1);
    CHECK_INT(pdh_map_instance_of("\\\\HOST", buf, sizeof(buf)), -1);
    CHECK_INT(pdh_map_instance_of("\\X(abcdef)\\C", buf, 6), -1);
    CHECK_INT(pdh_map_instance_of("\\X(abcde)\\C", buf, 6), 0);
}

static void test_instance_names(void)
{
    char out[COUNTER_NAME_MAX], in[200];

    pdh_map_instance_name("Intel(R) Ethernet\\1/2", out, sizeof(out));
    CHECK_STR(out, "Intel[R] Ethernet_1_2");
    pdh_map_instance_name("a\tb", out, sizeof(out));
    CHECK_STR(out, "a_b");
    pdh_map_instance_name("0 C:", out, sizeof(out));
    CHECK_STR(out, "0 C:");
    /* A share keeps its UNC path, as Linux names it; parentheses and controls still go. */
    pdh_map_share_name("\\\\fs1\\data (old)\t", out, sizeof(out));
    CHECK_STR(out, "\\\\fs1\\data [old]_");
    CHECK(pdh_map_object_kind(OBJ_SMB)->unc_names && !pdh_map_object_kind(OBJ_DISK)->unc_names);
    /* 62 ASCII bytes then a 2-byte character: only 63 bytes fit, the character is dropped whole. */
    memset(in, 'x', 62);
    strcpy(in + 62, "\xc3\xa9z");
    pdh_map_instance_name(in, out, sizeof(out));
    CHECK_INT(strlen(out), 62);
    /* 61 ASCII bytes then the same character: it fits exactly. */
    memset(in, 'x', 61);
    strcpy(in + 61, "\xc3\xa9z");
    pdh_map_instance_name(in, out, sizeof(out));
    CHECK_INT(strlen(out), 63);
    CHECK_STR(out + 61, "\xc3\xa9");
    /* A smaller buffer than COUNTER_NAME_MAX is respected. */
    pdh_map_instance_name("abcdef", out, 4);
    CHECK_STR(out, "abc");
}

static const struct pdh_source *find(enum object_id o, const char *counter, int field)
{
    for (size_t i = 0; i < pdh_nsources; i++)
        if (pdh_sources[i].obj == o && strcmp(pdh_sources[i].counter, counter) == 0 &&
            pdh_sources[i].field == field)
            return &pdh_sources[i];
    return NULL;
}

static void test_values(void)
{
    const struct pdh_source *rd = find(OBJ_DISK, "Disk Read Bytes/sec", DISK_RD_SECTORS);
    const struct pdh_source *rms = find(OBJ_DISK, "Avg. Disk sec/Read", DISK_RD_MS);
    const struct pdh_source *busy = find(OBJ_DISK, "% Idle Time", DISK_IO_MS);
    const struct pdh_source *dirty = find(OBJ_MEMORY, "Dirty Pages", MEM_DIRTY_KB);
    const struct pdh_source *avail = find(OBJ_MEMORY, "Available Bytes", MEM_AVAILABLE_KB);
    struct pdh_reading r = {0};
    uint64_t v = 12345;

    CHECK(rd && rms && busy && dirty && avail);
    if (!rd || !rms || !busy || !dirty || !avail)
        return;
    r.first = 1024 * 512 + 100;
    CHECK_INT(pdh_map_value(rd, &r, 4096, &v), 0);
    CHECK_INT(v, 1024);
    r.cstatus = PDH_MAP_CSTATUS_NEW_DATA;
    CHECK_INT(pdh_map_value(rd, &r, 4096, &v), 0);
    /* PDH_CSTATUS_INVALID_DATA and PDH_CSTATUS_NO_INSTANCE are gaps; v is left alone. */
    v = 7;
    r.cstatus = 0xC0000BBAu;
    CHECK_INT(pdh_map_value(rd, &r, 4096, &v), -1);
    r.cstatus = 0x800007D1u;
    CHECK_INT(pdh_map_value(rd, &r, 4096, &v), -1);
    CHECK_INT(v, 7);
    r.cstatus = 0;
    r.first = -1;
    CHECK_INT(pdh_map_value(rd, &r, 4096, &v), -1);

    /* Average timer: 3.5 s of ticks at a 10 MHz time base is 3500 ms; no time base: a gap. */
    r.first = 35000000;
    r.time_base = 10000000;
    CHECK_INT(pdh_map_value(rms, &r, 4096, &v), 0);
    CHECK_INT(v, 3500);
    r.time_base = 0;
    CHECK_INT(pdh_map_value(rms, &r, 4096, &v), -1);
    /* A huge tick count does not overflow, and the 32-bit ms field wraps like the kernel's. */
    r.first = INT64_MAX;
    r.time_base = 3000000000LL;
    CHECK_INT(pdh_map_value(rms, &r, 4096, &v), 0);
    CHECK_INT(v, (uint64_t)(INT64_MAX / 3000000000LL * 1000 +
                            INT64_MAX % 3000000000LL * 1000 / 3000000000LL) &
                     0xffffffffu);

    /* Disk busy time: time stamp - idle, 100 ns -> ms. Idle beyond the stamp is a gap. */
    r.first = 2 * 10000;
    r.second = 50 * 10000;
    CHECK_INT(pdh_map_value(busy, &r, 4096, &v), 0);
    CHECK_INT(v, 48);
    r.first = r.second + 1;
    CHECK_INT(pdh_map_value(busy, &r, 4096, &v), -1);

    /* \Memory\Dirty Bytes = \Cache\Dirty Pages x page size, stored in KiB. */
    r.formatted = 10;
    CHECK_INT(pdh_map_value(dirty, &r, 4096, &v), 0);
    CHECK_INT(v, 40);
    CHECK_INT(pdh_map_value(dirty, &r, 65536, &v), 0);
    CHECK_INT(v, 640);
    r.formatted = 3 * 1024 * 1024;
    CHECK_INT(pdh_map_value(avail, &r, 4096, &v), 0);
    CHECK_INT(v, 3 * 1024);

    CHECK(pdh_map_cstatus_ok(0) && pdh_map_cstatus_ok(1) && !pdh_map_cstatus_ok(0xC0000BBAu));
    CHECK_STR(pdh_map_status_text(0xC0000BB9u), "no such counter");
    CHECK(pdh_map_status_text(0x12345678u) == NULL);
}

/* Wine's PDH_FMT_DOUBLE of an integer counter: the integer's bits as a double. */
static void test_garbled_double(void)
{
    int64_t uptime_ms = 31715026;
    double garbled;

    memcpy(&garbled, &uptime_ms, sizeof(garbled));
    CHECK_INT(pdh_map_double_garbled(garbled), 1);
    CHECK_INT(pdh_map_double_garbled(garbled * 1e-3), 1); /* scaled by 10^-3, as wine does */
    CHECK_INT(pdh_map_double_garbled(0.0), 0);
    CHECK_INT(pdh_map_double_garbled(31715.026), 0);
    CHECK_INT(pdh_map_double_garbled(1e-300), 0); /* small, but a normal number */
    CHECK_INT(pdh_map_double_garbled(-2.5), 0);
}

/* A row with every source read once: value k for source k (the test's own numbers). */
static void full_row(enum object_id o, struct raw_row *row, uint64_t scale_by)
{
    uint64_t pseudo[PDH_FIELD_COUNT - COUNTER_MAX_FIELDS] = {0};
    unsigned pp = 0;

    memset(row, 0, sizeof(*row));
    for (size_t i = 0; i < pdh_nsources; i++) {
        const struct pdh_source *s = &pdh_sources[i];
        uint64_t v = (i + 1) * scale_by;
        if (s->obj != o || s->fallback_of >= 0)
            continue;
        if (s->field >= COUNTER_MAX_FIELDS) {
            pseudo[s->field - COUNTER_MAX_FIELDS] += v;
            pp |= 1u << (s->field - COUNTER_MAX_FIELDS);
        } else {
            row->v[s->field] += v;
            row->present |= 1ull << s->field;
        }
    }
    pdh_map_finish(o, row, pseudo, pp);
}

/* Counters of docs/design.md §2 that have no Windows source: their fields stay without value. */
static int linux_only(const char *counter)
{
    /* The softirq, softnet, dirty threshold, TcpExt, flush and discard counters have no PDH
     * counter of the same meaning (docs/design.md lists them). */
    static const char *const only[] = {
        "Writeback Bytes",
        "Dirtied Bytes/sec",
        "MTU",
        "NET_RX Softirqs/sec",
        "NET_TX Softirqs/sec",
        "BLOCK Softirqs/sec",
        "TIMER Softirqs/sec",
        "Packets Dropped/sec",
        "Time Squeezes/sec",
        "Dirty Threshold Bytes",
        "Dirty Background Threshold Bytes",
        "Timeouts/sec",
        "Loss Probes/sec",
        "Backlog Drops/sec",
        "Zero Window Advertised/sec",
        "Zero Window Reopened/sec",
        "Listen Drops/sec",
        "Disk Flushes/sec",
        "Discards/sec",
        "Avg. Disk sec/Flush",
    };

    for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++)
        if (strcmp(counter, only[i]) == 0)
            return 1;
    return 0;
}

static void test_design_paths(void)
{
    static const enum object_id objs[] = {OBJ_PROCESSOR, OBJ_DISK, OBJ_NET,
                                          OBJ_MEMORY,    OBJ_TCP,  OBJ_SMB};

    /* Every source names a field of its object, or a pseudo-field of the Processor. */
    for (size_t i = 0; i < pdh_nsources; i++) {
        const struct pdh_source *s = &pdh_sources[i];
        CHECK(s->field < (int)counter_objects[s->obj].nfields ||
              (s->obj == OBJ_PROCESSOR && s->field >= COUNTER_MAX_FIELDS &&
               s->field < PDH_FIELD_COUNT));
        CHECK(pdh_map_object_kind(s->obj) != NULL);
        CHECK(s->object[0] && s->counter[0] && s->div > 0);
    }
    CHECK(pdh_map_object_kind(OBJ_PROCESSOR)->keep_total &&
          !pdh_map_object_kind(OBJ_DISK)->keep_total);
    CHECK(pdh_map_object_kind(OBJ_MEMORY)->single && pdh_map_object_kind(OBJ_TCP)->single);

    /* Two full readings, the second twice the first: every counter gets a value from the
     * deltas, except the Linux-only ones. */
    for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++) {
        const struct object_def *od = &counter_objects[objs[k]];
        struct raw_row a, b;
        int64_t v[COUNTER_MAX_FIELDS];
        uint64_t nulls = 0;

        full_row(objs[k], &a, 1000);
        full_row(objs[k], &b, 2000);
        for (size_t f = 0; f < od->nfields; f++) {
            if (!((b.present >> f) & 1))
                nulls |= 1ull << f;
            v[f] = od->fields[f].kind == FIELD_GAUGE ? (int64_t)b.v[f] : (int64_t)(b.v[f] - a.v[f]);
        }
        for (size_t c = 0; c < od->ncounters; c++) {
            double x;
            int has = counter_eval(&od->counters[c], v, nulls, 1000, &x);
            if (has == linux_only(od->counters[c].name))
                fprintf(stderr, "\\%s\\%s: %s\n", od->name, od->counters[c].name,
                        has ? "has a value but no Windows source" : "has no value");
            CHECK(has != linux_only(od->counters[c].name));
        }
    }
}

static void test_processor(void)
{
    const struct object_def *od = &counter_objects[OBJ_PROCESSOR];
    uint64_t pseudo[PDH_FIELD_COUNT - COUNTER_MAX_FIELDS] = {0};
    struct raw_row r;
    int64_t v[COUNTER_MAX_FIELDS] = {0};
    double x = -1;

    /* user 300, privileged 100 of which interrupt 10 and DPC 5, idle 600 (one interval). */
    memset(&r, 0, sizeof(r));
    r.v[CPU_USER] = 300;
    r.v[CPU_IRQ] = 10;
    r.v[CPU_SOFTIRQ] = 5;
    r.v[CPU_IDLE] = 600;
    r.present = 1u << CPU_USER | 1u << CPU_IRQ | 1u << CPU_SOFTIRQ | 1u << CPU_IDLE;
    pseudo[PDH_FIELD_CPU_PRIVILEGED - COUNTER_MAX_FIELDS] = 100;
    pdh_map_finish(OBJ_PROCESSOR, &r, pseudo,
                   1u << (PDH_FIELD_CPU_PRIVILEGED - COUNTER_MAX_FIELDS));
    CHECK_INT(r.v[CPU_SYSTEM], 85);
    CHECK_INT(r.present, (1u << (CPU_STEAL + 1)) - 1); /* the time fields; no softirq counts */
    for (int f = 0; f < CPU_NFIELDS; f++)
        v[f] = (int64_t)r.v[f];
    CHECK(counter_eval(&od->counters[0], v, 0, 1000, &x)); /* % Processor Time */
    CHECK_DBL(x, 40.0, 1e-9);
    CHECK(counter_eval(&od->counters[2], v, 0, 1000, &x)); /* % Privileged Time */
    CHECK_DBL(x, 10.0, 1e-9);

    /* Only "% Processor Time" readable (wine): busy time unsplit, counted as user time. */
    memset(&r, 0, sizeof(r));
    memset(pseudo, 0, sizeof(pseudo));
    r.v[CPU_IDLE] = 750;
    r.present = 1u << CPU_IDLE;
    pseudo[PDH_FIELD_CPU_BUSY - COUNTER_MAX_FIELDS] = 250;
    pdh_map_finish(OBJ_PROCESSOR, &r, pseudo, 1u << (PDH_FIELD_CPU_BUSY - COUNTER_MAX_FIELDS));
    CHECK_INT(r.v[CPU_USER], 250);
    CHECK_INT(r.v[CPU_SYSTEM], 0);
    for (int f = 0; f < CPU_NFIELDS; f++)
        v[f] = (int64_t)r.v[f];
    CHECK(counter_eval(&od->counters[0], v, 0, 1000, &x));
    CHECK_DBL(x, 25.0, 1e-9);

    /* Privileged smaller than its parts (a torn reading): system is 0, never negative. */
    memset(&r, 0, sizeof(r));
    memset(pseudo, 0, sizeof(pseudo));
    r.v[CPU_IRQ] = 10;
    r.present = 1u << CPU_IRQ;
    pseudo[0] = 5;
    pdh_map_finish(OBJ_PROCESSOR, &r, pseudo, 1u);
    CHECK_INT(r.v[CPU_SYSTEM], 0);
    /* No idle time read: the zero fields are not made up either. */
    CHECK(!((r.present >> CPU_NICE) & 1));
}

static void test_globs(void)
{
    CHECK(glob_match("disk*", "Disk0"));
    CHECK(glob_match("[0-3] C:", "2 C:"));
    CHECK(!glob_match("[!0-3]*", "2 C:"));
    CHECK(glob_match("[^a]?", "b1"));
    CHECK(glob_match("*Ethernet*", "Intel[R] Ethernet Connection"));
    CHECK(glob_match("*x*y", "axbxcy"));
    CHECK(!glob_match("*x*y", "axbxc"));
    CHECK(glob_match("a[b", "a[b")); /* an unclosed '[' is a literal */
    CHECK(glob_match("isatap.*", "ISATAP.{1234}"));
    CHECK(glob_match("*", ""));
    CHECK(!glob_match("?", ""));
    CHECK(glob_match("Loopback*", "loopback pseudo-interface 1"));
}

int main(void)
{
    test_paths();
    test_instance_names();
    test_values();
    test_garbled_double();
    test_design_paths();
    test_processor();
    test_globs();
    return tl_done();
}
