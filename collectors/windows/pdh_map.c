/*
 * pdh_map.c - the PDH counters behind the design's paths, and the pure conversions; see
 * pdh_map.h. Counter types and their raw values: "Counter Types" of the Windows performance
 * counter documentation (learn.microsoft.com/windows/win32/perfctrs/counter-types).
 */
#include "collectors/windows/pdh_map.h"

#include <math.h>
#include <string.h>

#define NONE -1
#define SRC(o, obj, ctr, f, op, mul, div)                                                          \
    {                                                                                              \
        o, obj, ctr, f, op, mul, div, 0, NONE                                                      \
    }
#define SRC32(o, obj, ctr, f, op, mul, div)                                                        \
    {                                                                                              \
        o, obj, ctr, f, op, mul, div, 1, NONE                                                      \
    }

const struct pdh_source pdh_sources[] = {
    /* Processor times are PERF_100NSEC_TIMER counters: FirstValue is the time spent, in 100 ns.
     * "% Processor Time" is the _INV kind: FirstValue is the idle time, SecondValue the 100 ns
     * time stamp, so SecondValue - FirstValue is the busy time when nothing finer is there. */
    SRC(OBJ_PROCESSOR, "Processor", "% Processor Time", CPU_IDLE, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_PROCESSOR, "Processor", "% User Time", CPU_USER, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_PROCESSOR, "Processor", "% Privileged Time", PDH_FIELD_CPU_PRIVILEGED, PDH_OP_FIRST, 1,
        1),
    SRC(OBJ_PROCESSOR, "Processor", "% Interrupt Time", CPU_IRQ, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_PROCESSOR, "Processor", "% DPC Time", CPU_SOFTIRQ, PDH_OP_FIRST, 1, 1),
    {OBJ_PROCESSOR, "Processor", "% Processor Time", PDH_FIELD_CPU_BUSY, PDH_OP_SECOND_FIRST, 1, 1,
     0, CPU_USER},

    /* PhysicalDisk: operation and byte counts are PERF_COUNTER_COUNTER / _BULK_COUNT (FirstValue
     * cumulative); sectors are 512 bytes as in /proc/diskstats. "Avg. Disk sec/Read" is a
     * PERF_AVERAGE_TIMER: FirstValue the summed time in performance-counter ticks. "% Idle
     * Time" is PERF_PRECISION_100NS_TIMER: FirstValue idle 100 ns, SecondValue the time stamp,
     * so their difference is the busy time of io_ticks. "Avg. Disk Queue Length" is
     * PERF_COUNTER_100NS_QUEUELEN_TYPE: FirstValue sums queue length x 100 ns, as time_in_queue
     * sums it in ms. The millisecond fields are 32-bit on Linux and wrap the same way here. */
    SRC(OBJ_DISK, "PhysicalDisk", "Disk Reads/sec", DISK_RD_IOS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_DISK, "PhysicalDisk", "Disk Writes/sec", DISK_WR_IOS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_DISK, "PhysicalDisk", "Disk Read Bytes/sec", DISK_RD_SECTORS, PDH_OP_FIRST, 1, 512),
    SRC(OBJ_DISK, "PhysicalDisk", "Disk Write Bytes/sec", DISK_WR_SECTORS, PDH_OP_FIRST, 1, 512),
    SRC32(OBJ_DISK, "PhysicalDisk", "Avg. Disk sec/Read", DISK_RD_MS, PDH_OP_TIMER_MS, 1, 1),
    SRC32(OBJ_DISK, "PhysicalDisk", "Avg. Disk sec/Write", DISK_WR_MS, PDH_OP_TIMER_MS, 1, 1),
    SRC(OBJ_DISK, "PhysicalDisk", "Current Disk Queue Length", DISK_IN_FLIGHT, PDH_OP_FORMATTED, 1,
        1),
    SRC32(OBJ_DISK, "PhysicalDisk", "% Idle Time", DISK_IO_MS, PDH_OP_SECOND_FIRST, 1, 10000),
    SRC32(OBJ_DISK, "PhysicalDisk", "Avg. Disk Queue Length", DISK_QUEUE_MS, PDH_OP_FIRST, 1,
          10000),

    /* Network Interface: byte and packet counts cumulative; errors and discards are counts kept
     * as levels, as on Linux; Current Bandwidth is bits/s, stored as Mbit/s like sysfs speed. */
    SRC(OBJ_NET, "Network Interface", "Bytes Received/sec", NET_RX_BYTES, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_NET, "Network Interface", "Bytes Sent/sec", NET_TX_BYTES, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_NET, "Network Interface", "Packets Received/sec", NET_RX_PACKETS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_NET, "Network Interface", "Packets Sent/sec", NET_TX_PACKETS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_NET, "Network Interface", "Packets Received Errors", NET_RX_ERRS, PDH_OP_FORMATTED, 1,
        1),
    SRC(OBJ_NET, "Network Interface", "Packets Received Discarded", NET_RX_DROP, PDH_OP_FORMATTED,
        1, 1),
    SRC(OBJ_NET, "Network Interface", "Packets Outbound Errors", NET_TX_ERRS, PDH_OP_FORMATTED, 1,
        1),
    SRC(OBJ_NET, "Network Interface", "Packets Outbound Discarded", NET_TX_DROP, PDH_OP_FORMATTED,
        1, 1),
    SRC(OBJ_NET, "Network Interface", "Current Bandwidth", NET_SPEED_MBPS, PDH_OP_FORMATTED, 1,
        1000000),

    /* Memory: levels in bytes or pages, as KiB; page counts of the fault and paging counters are
     * cumulative. "\Memory\Dirty Bytes" = "\Cache\Dirty Pages" x page size (docs/design.md §2). */
    SRC(OBJ_MEMORY, "Memory", "Available Bytes", MEM_AVAILABLE_KB, PDH_OP_FORMATTED, 1, 1024),
    SRC(OBJ_MEMORY, "Memory", "Cache Bytes", MEM_CACHED_KB, PDH_OP_FORMATTED, 1, 1024),
    SRC(OBJ_MEMORY, "Cache", "Dirty Pages", MEM_DIRTY_KB, PDH_OP_FORMATTED, PDH_MUL_PAGE, 1024),
    SRC(OBJ_MEMORY, "Cache", "Lazy Write Pages/sec", MEM_WRITTEN_KB, PDH_OP_FIRST, PDH_MUL_PAGE,
        1024),
    SRC(OBJ_MEMORY, "Memory", "Pages Input/sec", MEM_PGPGIN_KB, PDH_OP_FIRST, PDH_MUL_PAGE, 1024),
    SRC(OBJ_MEMORY, "Memory", "Pages Output/sec", MEM_PGPGOUT_KB, PDH_OP_FIRST, PDH_MUL_PAGE, 1024),
    SRC(OBJ_MEMORY, "Memory", "Page Faults/sec", MEM_PGFAULT, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_MEMORY, "Memory", "Page Reads/sec", MEM_PGMAJFAULT, PDH_OP_FIRST, 1, 1),

    /* TCP: Linux's Tcp line counts IPv4 and IPv6 together; Windows keeps two objects. */
    SRC(OBJ_TCP, "TCPv4", "Segments Received/sec", TCP_IN_SEGS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_TCP, "TCPv6", "Segments Received/sec", TCP_IN_SEGS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_TCP, "TCPv4", "Segments Sent/sec", TCP_OUT_SEGS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_TCP, "TCPv6", "Segments Sent/sec", TCP_OUT_SEGS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_TCP, "TCPv4", "Segments Retransmitted/sec", TCP_RETRANS_SEGS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_TCP, "TCPv6", "Segments Retransmitted/sec", TCP_RETRANS_SEGS, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_TCP, "TCPv4", "Connections Established", TCP_CURR_ESTAB, PDH_OP_FORMATTED, 1, 1),
    SRC(OBJ_TCP, "TCPv6", "Connections Established", TCP_CURR_ESTAB, PDH_OP_FORMATTED, 1, 1),

    /* SMB Client Shares (Windows 8 / Server 2012 and later): the byte counts are
     * PERF_COUNTER_BULK_COUNT, the request counts PERF_COUNTER_COUNTER, FirstValue cumulative.
     * The request fields are 32 bits wide, as the cifs client's atomic_t counts are on Linux. */
    SRC(OBJ_SMB, "SMB Client Shares", "Read Bytes/sec", SMB_RD_BYTES, PDH_OP_FIRST, 1, 1),
    SRC(OBJ_SMB, "SMB Client Shares", "Write Bytes/sec", SMB_WR_BYTES, PDH_OP_FIRST, 1, 1),
    SRC32(OBJ_SMB, "SMB Client Shares", "Read Requests/sec", SMB_RD_REQS, PDH_OP_FIRST, 1, 1),
    SRC32(OBJ_SMB, "SMB Client Shares", "Write Requests/sec", SMB_WR_REQS, PDH_OP_FIRST, 1, 1),
};

const size_t pdh_nsources = sizeof(pdh_sources) / sizeof(pdh_sources[0]);

/* Objects the table above does not name (added to counters.h later) are zero: not collected. */
static const struct pdh_map_object_kind object_kinds[OBJ_COUNT] = {
    [OBJ_PROCESSOR] = {.single = 0, .keep_total = 1, .globs = 0},
    [OBJ_DISK] = {.single = 0, .keep_total = 0, .globs = 1},
    [OBJ_NET] = {.single = 0, .keep_total = 0, .globs = 2},
    [OBJ_MEMORY] = {.single = 1, .keep_total = 0, .globs = 0},
    [OBJ_TCP] = {.single = 1, .keep_total = 0, .globs = 0},
    [OBJ_SMB] = {.single = 0, .keep_total = 0, .globs = 0, .unc_names = 1},
};

const struct pdh_map_object_kind *pdh_map_object_kind(enum object_id obj)
{
    return (unsigned)obj < OBJ_COUNT ? &object_kinds[obj] : NULL;
}

int pdh_map_cstatus_ok(uint32_t cstatus)
{
    return cstatus == PDH_MAP_CSTATUS_VALID_DATA || cstatus == PDH_MAP_CSTATUS_NEW_DATA;
}

const char *pdh_map_status_text(uint32_t status)
{
    /* Values of pdhmsg.h. */
    switch (status) {
    case 0xC0000BB8u:
        return "no such object";
    case 0xC0000BB9u:
        return "no such counter";
    case 0x800007D1u:
        return "no such instance";
    case 0xC0000BBAu:
        return "the data is not valid";
    case 0xC0000BC0u:
        return "not a valid counter path";
    case 0xC0000BD3u:
        return "not implemented by this PDH";
    case 0x800007D5u:
        return "no data";
    default:
        return NULL;
    }
}

/* v * mul / div without overflowing for any v below 2^64 / max(mul, div) per part. */
static uint64_t scale(uint64_t v, uint64_t mul, uint64_t div)
{
    return v / div * mul + v % div * mul / div;
}

int pdh_map_value(const struct pdh_source *s, const struct pdh_reading *r, uint64_t page_size,
                  uint64_t *out)
{
    uint64_t mul = s->mul == PDH_MUL_PAGE ? page_size : s->mul, div = s->div ? s->div : 1;
    int64_t base;

    if (!pdh_map_cstatus_ok(r->cstatus) || mul == 0)
        return -1;
    switch (s->op) {
    case PDH_OP_FIRST:
        base = r->first;
        break;
    case PDH_OP_SECOND_FIRST:
        if (r->second < r->first)
            return -1;
        base = r->second - r->first;
        break;
    case PDH_OP_TIMER_MS:
        if (r->time_base <= 0 || r->first < 0)
            return -1;
        /* ticks -> ms: split so that ticks * 1000 cannot overflow */
        base = r->first / r->time_base * 1000 + r->first % r->time_base * 1000 / r->time_base;
        break;
    case PDH_OP_FORMATTED:
        base = r->formatted;
        break;
    default:
        return -1;
    }
    if (base < 0)
        return -1;
    *out = scale((uint64_t)base, mul, div);
    if (s->wrap32)
        *out &= 0xffffffffu;
    return 0;
}

int pdh_map_path(const char *object, const char *instance, const char *counter, char *out,
                 size_t cap)
{
    size_t lo = strlen(object), li = instance ? strlen(instance) : 0, lc = strlen(counter);
    size_t need = 1 + lo + (instance ? li + 2 : 0) + 1 + lc + 1;
    char *p = out;

    if (need > cap)
        return -1;
    *p++ = '\\';
    memcpy(p, object, lo);
    p += lo;
    if (instance) {
        *p++ = '(';
        memcpy(p, instance, li);
        p += li;
        *p++ = ')';
    }
    *p++ = '\\';
    memcpy(p, counter, lc);
    p[lc] = '\0';
    return 0;
}

int pdh_map_double_garbled(double v)
{
    return fpclassify(v) == FP_SUBNORMAL;
}

int pdh_map_instance_of(const char *path, char *out, size_t cap)
{
    const char *p = path, *open, *last, *close;
    size_t n;

    if (p[0] == '\\' && p[1] == '\\') { /* "\\MACHINE\..." */
        p = strchr(p + 2, '\\');
        if (!p)
            return -1;
    }
    last = strrchr(p, '\\');
    open = strchr(p, '(');
    if (!last || !open || open > last || last == p || last[-1] != ')')
        return -1;
    close = last - 1;
    n = (size_t)(close - open - 1);
    if (n + 1 > cap)
        return -1;
    memcpy(out, open + 1, n);
    out[n] = '\0';
    return 0;
}

/* pdh_map_instance_name, keeping '\' and '/' when `unc` is set. */
static void instance_name(const char *in, char *out, size_t cap, int unc)
{
    size_t max = cap < COUNTER_NAME_MAX ? cap : COUNTER_NAME_MAX, n = 0;

    if (!max)
        return;
    for (; in[n] && n + 1 < max; n++) {
        unsigned char ch = (unsigned char)in[n];
        out[n] = ch == '('                           ? '['
                 : ch == ')'                         ? ']'
                 : ch < 0x20 || ch == 0x7f           ? '_'
                 : !unc && (ch == '\\' || ch == '/') ? '_'
                                                     : (char)ch;
    }
    /* Cut short: drop a last UTF-8 character that did not fit whole. */
    if (in[n]) {
        size_t lead = n;
        while (lead > 0 && ((unsigned char)out[lead - 1] & 0xc0) == 0x80)
            lead--;
        if (lead > 0 && ((unsigned char)out[lead - 1] & 0xc0) == 0xc0) {
            unsigned char b = (unsigned char)out[lead - 1];
            size_t need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
            if (n - (lead - 1) < need)
                n = lead - 1;
        }
    }
    out[n] = '\0';
}

void pdh_map_instance_name(const char *in, char *out, size_t cap)
{
    instance_name(in, out, cap, 0);
}

void pdh_map_share_name(const char *in, char *out, size_t cap)
{
    instance_name(in, out, cap, 1);
}

static int has(const struct raw_row *row, int f)
{
    return (row->present >> f) & 1;
}

static void set(struct raw_row *row, int f, uint64_t v)
{
    row->v[f] = v;
    row->present |= 1ull << f;
}

static void finish_processor(struct raw_row *row, const uint64_t *pseudo, unsigned pseudo_present)
{
    int priv = (pseudo_present >> (PDH_FIELD_CPU_PRIVILEGED - COUNTER_MAX_FIELDS)) & 1;
    int busy = (pseudo_present >> (PDH_FIELD_CPU_BUSY - COUNTER_MAX_FIELDS)) & 1;
    uint64_t parts;

    if (priv) {
        /* Privileged time includes interrupt and DPC time; Linux's system time does not. */
        parts = (has(row, CPU_IRQ) ? row->v[CPU_IRQ] : 0) +
                (has(row, CPU_SOFTIRQ) ? row->v[CPU_SOFTIRQ] : 0);
        set(row, CPU_SYSTEM,
            pseudo[PDH_FIELD_CPU_PRIVILEGED - COUNTER_MAX_FIELDS] > parts
                ? pseudo[PDH_FIELD_CPU_PRIVILEGED - COUNTER_MAX_FIELDS] - parts
                : 0);
    } else if (busy && !has(row, CPU_USER)) {
        /* Only "% Processor Time" is there (wine has no other): the busy time, unsplit. */
        set(row, CPU_USER, pseudo[PDH_FIELD_CPU_BUSY - COUNTER_MAX_FIELDS]);
        set(row, CPU_SYSTEM, 0);
        set(row, CPU_IRQ, 0);
        set(row, CPU_SOFTIRQ, 0);
    }
    if (has(row, CPU_IDLE)) {
        set(row, CPU_NICE, 0);
        set(row, CPU_IOWAIT, 0);
        set(row, CPU_STEAL, 0);
    }
}

void pdh_map_finish(enum object_id obj, struct raw_row *row, const uint64_t *pseudo,
                    unsigned pseudo_present)
{
    if (obj == OBJ_PROCESSOR)
        finish_processor(row, pseudo, pseudo_present);
    else if (obj == OBJ_MEMORY && has(row, MEM_CACHED_KB))
        set(row, MEM_BUFFERS_KB, 0);
}
