/*
 * pdh_map.h - the PDH-independent half of the Windows collector: which PDH counters feed which
 * raw field of counters.h, counter path building, instance naming, and turning one PDH reading
 * into a raw field. Pure C without Windows headers, so it is unit-tested on Linux
 * (tests/unit/test_pdh_map.c); pdh_collector.c does the PDH calls.
 *
 * The stored semantics are Linux's: cumulative fields hold what the OS counts (PDH's raw
 * FirstValue of a cumulative counter, in the unit counters.h gives the field), gauges hold
 * levels. Processor time is in 100 ns units (collector_cpu_ticks_per_s() = 10^7).
 */
#ifndef PERFLOG_PDH_MAP_H
#define PERFLOG_PDH_MAP_H

#include "collectors/model/sample.h"

#include <stddef.h>
#include <stdint.h>

/* How a field is computed from one counter's reading. */
enum pdh_op {
    PDH_OP_FIRST,        /* raw FirstValue (a cumulative count, or a raw level) */
    PDH_OP_SECOND_FIRST, /* raw SecondValue - FirstValue: busy time of an _INV timer */
    PDH_OP_TIMER_MS,     /* raw FirstValue in performance-counter ticks (an average timer's
                          * sum), as milliseconds: FirstValue * 1000 / time base */
    PDH_OP_FORMATTED,    /* the formatted value (PDH_FMT_LARGE): a level */
};

/* One PDH counter feeding one raw field: field = op(reading) * mul / div, summed over every
 * source of the same field and instance (TCPv4 + TCPv6). */
struct pdh_source {
    enum object_id obj;
    const char *object;  /* English PDH object name: "PhysicalDisk" */
    const char *counter; /* English PDH counter name: "Disk Read Bytes/sec" */
    int field;           /* index into the object's fields, or PDH_FIELD_* below */
    enum pdh_op op;
    uint64_t mul, div; /* mul PDH_MUL_PAGE: the page size */
    unsigned wrap32;   /* 1: the field is FIELD_CUM_U32; keep the value modulo 2^32 */
    int fallback_of;   /* -1, or a field: use this source only when that field's source is
                        * not available (PDH rejected it) */
};

#define PDH_MUL_PAGE 0

/* Pseudo-fields kept apart until pdh_map_finish derives the real ones (Processor). */
#define PDH_FIELD_CPU_PRIVILEGED (COUNTER_MAX_FIELDS + 0) /* system + irq + softirq */
#define PDH_FIELD_CPU_BUSY       (COUNTER_MAX_FIELDS + 1) /* all - idle, when nothing finer */
#define PDH_FIELD_COUNT          (COUNTER_MAX_FIELDS + 2)

/* The sources of the design's paths (docs/design.md §2), and their number. Immutable. */
extern const struct pdh_source pdh_sources[];
extern const size_t pdh_nsources;

/* How an object's instances are named: one instance, every instance ('*', expanded by PDH), and
 * whether PDH's own "_Total" instance is kept (Processor) or dropped because delta.c sums the
 * instances into "_Total" as it does on Linux (PhysicalDisk). */
struct pdh_map_object_kind {
    int single;     /* no "(instance)" part */
    int keep_total; /* keep PDH's "_Total" row; else drop it and flag rows RAW_IN_TOTAL */
    int globs;      /* 0: none, 1: the disk globs, 2: the interface globs */
    int unc_names;  /* instances are shares, \\server\share: named by pdh_map_share_name */
};
const struct pdh_map_object_kind *pdh_map_object_kind(enum object_id obj);

/* A reading of one counter, as PdhGetRawCounterValue / PdhGetFormattedCounterValue give it. */
struct pdh_reading {
    uint32_t cstatus;  /* CStatus of the raw value (or of the formatted one) */
    int64_t first;     /* FirstValue */
    int64_t second;    /* SecondValue */
    int64_t formatted; /* largeValue, PDH_OP_FORMATTED only */
    int64_t time_base; /* PdhGetCounterTimeBase, PDH_OP_TIMER_MS only (ticks per second) */
};

/* PDH_CSTATUS_VALID_DATA and PDH_CSTATUS_NEW_DATA (pdhmsg.h): the only statuses with a value. */
#define PDH_MAP_CSTATUS_VALID_DATA 0x00000000u
#define PDH_MAP_CSTATUS_NEW_DATA   0x00000001u

/* 1 when a reading with this CStatus has a value; any other status (INVALID_DATA, NO_INSTANCE,
 * NO_OBJECT, ...) is a gap: the field has no value this tick. Pure. */
int pdh_map_cstatus_ok(uint32_t cstatus);

/* 1 when a formatted PDH_FMT_DOUBLE value cannot be a counter's: a subnormal number (below
 * 2.2e-308). Wine 8's PdhGetFormattedCounterValue gives an integer counter's value (\System\System
 * Up Time) as the bits of the integer read as a double, which is such a number; the caller then
 * takes PDH_FMT_LARGE instead. Pure. */
int pdh_map_double_garbled(double v);

/* A short text for a PDH status (PDH_CSTATUS_NO_COUNTER: "no such counter"), or NULL for one
 * it does not know (the caller then shows the number). Pure. */
const char *pdh_map_status_text(uint32_t status);

/* The field value of reading `r` for source `s` (`page_size` in bytes). Returns 0 and sets *out, or
 * -1 for a gap (bad status, a negative or impossible value, a zero time base). Pure. */
int pdh_map_value(const struct pdh_source *s, const struct pdh_reading *r, uint64_t page_size,
                  uint64_t *out);

/*
 * "\Object(instance)\Counter", or "\Object\Counter" when instance is NULL. Writes at most cap
 * bytes including the NUL. Returns 0, or -1 when it did not fit. Pure.
 */
int pdh_map_path(const char *object, const char *instance, const char *counter, char *out,
                 size_t cap);

/*
 * The instance part of a full counter path ("\\HOST\PhysicalDisk(0 C:)\Disk Reads/sec" gives
 * "0 C:"; "Obj(parent/inst#1)" gives "parent/inst#1"): from the first '(' after the object name
 * to the ')' that precedes the last '\'. Returns 0, or -1 when the path has no instance part or
 * it does not fit in cap. Pure.
 */
int pdh_map_instance_of(const char *path, char *out, size_t cap);

/*
 * The instance name perflog stores and shows in its own paths: PDH's name with the characters
 * that would break a "\Object(instance)\Counter" path replaced the way PDH itself does for
 * counter paths ('(' -> '[', ')' -> ']', '\' and '/' and control characters -> '_'), cut to
 * COUNTER_NAME_MAX - 1 bytes without splitting a UTF-8 character. Pure.
 */
void pdh_map_instance_name(const char *in, char *out, size_t cap);

/* pdh_map_instance_name for the instances of SMB Client Shares, which are UNC paths: their '\'
 * and '/' are kept, so a share has the name it has on Linux (\\fs1\data); a path's instance
 * still cuts right, since it runs to the ')' before the last '\' (pdh_path.h). Pure. */
void pdh_map_share_name(const char *in, char *out, size_t cap);

/*
 * Derive the stored fields of a row from what the sources put in it. `pseudo` holds the
 * PDH_FIELD_* values (bit i - COUNTER_MAX_FIELDS of pseudo_present set when read). Processor:
 * system = privileged - interrupt - DPC; nice, iowait and steal do not exist on Windows and are 0
 * so the shares add up; with only "% Processor Time" readable, busy time counts as user time.
 * Memory: buffers are part of Cache Bytes (0). Pure.
 */
void pdh_map_finish(enum object_id obj, struct raw_row *row, const uint64_t *pseudo,
                    unsigned pseudo_present);

#endif
