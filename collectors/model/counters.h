/*
 * counters.h - the one table that says what perflog measures.
 *
 * Every object (Processor, PhysicalDisk, ...) has a fixed list of raw fields, read by the platform
 * collectors, and a list of perfmon-style counters computed from them. The storage layer keeps the
 * raw fields (cumulative ones as per-tick deltas, gauges as they are) and renders each counter's
 * formula to SQL for the counter_values view; the C side evaluates the same formula with
 * counter_eval(). Both do the same floating-point operations in the same order, so the view and the
 * API return bit-identical numbers. Paths and semantics follow docs/design.md §2.
 */
#ifndef PERFLOG_COUNTERS_H
#define PERFLOG_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define COUNTER_MAX_FIELDS 16
#define COUNTER_NAME_MAX   64 /* instance names, including the terminating NUL */

enum object_id {
    OBJ_PROCESSOR,
    OBJ_DISK,
    OBJ_NET,
    OBJ_MEMORY,
    OBJ_TCP,
    OBJ_PROCESS,
    OBJ_PRESSURE,
    OBJ_SMB, /* SMB Client Shares: one instance per share, "\\server\share" */
    OBJ_NFS, /* NFS Client: one instance per mounted device, "server:/export" */
    OBJ_COUNT
};

enum field_kind {
    FIELD_CUM_U64, /* cumulative; going down means reset: no value this tick */
    FIELD_CUM_U32, /* cumulative, 32 bits wide in the kernel; going down means it wrapped */
    FIELD_GAUGE,   /* a level, stored as read */
};

#define FIELDF_NO_TOTAL 0x1u /* a _Total instance has no value for it (MTU) */

struct field_def {
    const char *column; /* SQL column name */
    enum field_kind kind;
    unsigned flags;
};

enum counter_den {
    DEN_ONE,     /* gauge: value = num * scale */
    DEN_SECONDS, /* rate: value = num * scale / (interval_ms / 1000.0) */
    DEN_MS,      /* share of time: value = num * scale / interval_ms */
    DEN_FIELDS,  /* ratio: value = num * scale / sum(den fields) */
};

#define CF_ZERO_IF_DEN0 0x1u /* a zero denominator gives 0 (no I/O: 0 s/read) instead of none */
#define CF_CLAMP100     0x2u /* cap at 100 (busy time can exceed the interval by rounding) */
#define CF_COMPLEMENT   0x4u /* report 100 - value (idle = 100 - busy), after clamping */
/* A time per operation (s/read): over more than one tick (a roll-up, a coarse step of /data) its
 * average is the total of the numerator over the total of the denominator, the operations, as one
 * sample over the whole span would give and sar's await is; a mean of the per-tick values would
 * count a tick without any operation (0 s/read) as much as one with thousands. DEN_FIELDS with
 * CF_ZERO_IF_DEN0 only, and neither clamped nor complemented. */
#define CF_PER_OP 0x8u

struct counter_def {
    const char *name; /* perfmon counter name, e.g. "Disk Read Bytes/sec" */
    const char *unit; /* "bytes/s", "%", "bytes", "ops/s", "s", "count", "bits/s", ... */
    const char *kind; /* "rate", "gauge", "percent", "count" */
    uint32_t num;     /* bit mask of fields summed into the numerator */
    enum counter_den den;
    uint32_t den_fields; /* bit mask, DEN_FIELDS only */
    double scale;
    unsigned flags;
};

struct object_def {
    const char *name;  /* perfmon object name, e.g. "PhysicalDisk" */
    const char *table; /* SQL table holding its raw fields */
    int single;        /* 1: one instance, path has no "(instance)" part */
    const struct field_def *fields;
    size_t nfields;
    const struct counter_def *counters;
    size_t ncounters;
};

/* Field indices, per object, in the order of the object's field table. */
enum cpu_field {
    CPU_USER,
    CPU_NICE,
    CPU_SYSTEM,
    CPU_IDLE,
    CPU_IOWAIT,
    CPU_IRQ,
    CPU_SOFTIRQ,
    CPU_STEAL,
    CPU_SI_NET_RX, /* softirqs raised, /proc/softirqs (Linux only) */
    CPU_SI_NET_TX,
    CPU_SI_BLOCK,
    CPU_SI_TIMER,
    CPU_NET_DROPPED,  /* /proc/net/softnet_stat: packets dropped at the backlog queue */
    CPU_NET_SQUEEZED, /* net_rx_action ran out of budget or time with work left */
    CPU_NFIELDS
};
enum disk_field {
    DISK_RD_IOS,
    DISK_RD_MERGES,
    DISK_RD_SECTORS,
    DISK_RD_MS,
    DISK_WR_IOS,
    DISK_WR_MERGES,
    DISK_WR_SECTORS,
    DISK_WR_MS,
    DISK_IN_FLIGHT,
    DISK_IO_MS,
    DISK_QUEUE_MS,
    DISK_DISCARD_IOS, /* kernels 4.18+ */
    DISK_FLUSH_IOS,   /* kernels 5.5+ */
    DISK_FLUSH_MS,
    DISK_NFIELDS
};
enum net_field {
    NET_RX_BYTES,
    NET_RX_PACKETS,
    NET_RX_ERRS,
    NET_RX_DROP,
    NET_TX_BYTES,
    NET_TX_PACKETS,
    NET_TX_ERRS,
    NET_TX_DROP,
    NET_SPEED_MBPS,
    NET_MTU,
    NET_NFIELDS
};
enum mem_field {
    MEM_AVAILABLE_KB,
    MEM_CACHED_KB,
    MEM_BUFFERS_KB,
    MEM_DIRTY_KB,
    MEM_WRITEBACK_KB,
    MEM_DIRTIED_KB,
    MEM_WRITTEN_KB,
    MEM_PGPGIN_KB,
    MEM_PGPGOUT_KB,
    MEM_PGFAULT,
    MEM_PGMAJFAULT,
    MEM_DIRTY_THRESH_KB,    /* nr_dirty_threshold: writers are throttled above it */
    MEM_DIRTY_BG_THRESH_KB, /* nr_dirty_background_threshold: background writeback starts */
    MEM_NFIELDS
};
enum tcp_field {
    TCP_IN_SEGS,
    TCP_OUT_SEGS,
    TCP_RETRANS_SEGS,
    TCP_CURR_ESTAB,
    TCP_TIMEOUTS, /* TcpExt of /proc/net/netstat (Linux only) from here on */
    TCP_LOSS_PROBES,
    TCP_BACKLOG_DROP,
    TCP_TO_ZERO_WINDOW,
    TCP_FROM_ZERO_WINDOW,
    TCP_LISTEN_DROPS,
    TCP_NFIELDS
};
/* A process of a run in progress (instances "name:pid"); /proc/PID/io and /proc/PID/stat. */
enum proc_field {
    PROC_RCHAR,       /* bytes read through read(2) and friends, page cache or not */
    PROC_WCHAR,       /* bytes written through write(2) and friends */
    PROC_SYSCR,       /* read system calls */
    PROC_SYSCW,       /* write system calls */
    PROC_READ_BYTES,  /* bytes the process caused to be fetched from storage */
    PROC_WRITE_BYTES, /* bytes the process caused to be sent to storage (dirtied) */
    PROC_CPU_MS,      /* user + system time, ms */
    PROC_PID,         /* the process id */
    PROC_PPID,        /* the parent's process id when first seen */
    PROC_NFIELDS
};

/* An SMB share of the cifs client (/proc/fs/cifs/Stats). The request counts are the kernel's
 * atomic_t, printed with %d: 32 bits wide, so they wrap. */
enum smb_field {
    SMB_RD_BYTES, /* bytes read from the share */
    SMB_WR_BYTES, /* bytes written to it */
    SMB_RD_REQS,  /* read requests sent */
    SMB_WR_REQS,  /* write requests sent */
    SMB_NFIELDS
};
/* An NFS mount (/proc/self/mountstats: its bytes: line and its per-op statistics summed). */
enum nfs_field {
    NFS_RD_BYTES,     /* serverreadbytes: read from the server by READ calls */
    NFS_WR_BYTES,     /* serverwritebytes: sent to the server by WRITE calls */
    NFS_APP_RD_BYTES, /* normalreadbytes + directreadbytes: what applications read */
    NFS_APP_WR_BYTES, /* normalwritebytes + directwritebytes: what applications wrote */
    NFS_OPS,          /* RPC calls completed, every operation */
    NFS_RTT_MS,       /* their summed round-trip time, ms */
    NFS_EXE_MS,       /* their summed time from queueing to completion, ms */
    NFS_NFIELDS
};
/* Pressure stall information, /proc/pressure/{io,memory,cpu} (Linux 4.20+): total= us stalled. */
enum psi_field {
    PSI_IO_SOME_US,
    PSI_IO_FULL_US,
    PSI_MEM_SOME_US,
    PSI_MEM_FULL_US,
    PSI_CPU_SOME_US,
    PSI_NFIELDS
};

/* The object table, indexed by enum object_id. Immutable; thread-safe. */
extern const struct object_def counter_objects[OBJ_COUNT];

/*
 * Evaluate counter `c` from one stored row: `v` holds the stored values (deltas for cumulative
 * fields, levels for gauges), bit i of `null_mask` set means field i has no value this tick.
 * `interval_ms` is the tick's real elapsed time (<= 0: none, so rates have no value).
 * Returns 1 and sets *out, or 0 when the counter has no value for this row.
 */
int counter_eval(const struct counter_def *c, const int64_t *v, uint64_t null_mask,
                 int64_t interval_ms, double *out);

/*
 * The numerator and the denominator of per-operation counter `c` (CF_PER_OP) from one stored
 * row, each as a double: the field sums as counter_eval takes them, converted as SQLite's total()
 * converts an integer. Returns 1, or 0 when the row has no value for one of them (then the row
 * has no value of the counter either).
 */
int counter_num_den(const struct counter_def *c, const int64_t *v, uint64_t null_mask, double *num,
                    double *den);

/*
 * Per-operation counter `c` of object `o` (CF_PER_OP) over a group of rows, as SQL aggregates of
 * the columns (qualified by `alias`, or not when it is ""): into `avg`, the total of the
 * numerator times the scale over the total of the denominator, over the rows that have both (0.0
 * when that is 0, NULL when no row has both), and into `ops`, that total of the denominator (NULL
 * when no row has both). The same operations in the same order as a running sum of
 * counter_num_den's values, then num * scale / den. Returns 0, or -ENOSPC.
 */
int counter_per_op_sql(const struct object_def *o, const struct counter_def *c, const char *alias,
                       char *avg, size_t acap, char *ops, size_t ocap);

/*
 * Render counter `c` of object `o` as an SQL expression over the columns of `o->table` (qualified
 * by `alias`, or not at all when it is "") and `interval_expr` (the tick's interval in ms). Writes
 * at most `cap` bytes including the NUL. Returns 0, or -ENOSPC if it did not fit.
 */
int counter_sql(const struct object_def *o, const struct counter_def *c, const char *alias,
                const char *interval_expr, char *buf, size_t cap);

/*
 * counter_sql's value in parts, so that counters with the same division can share it: when it
 * is term / divisor, writes term (num * scale) and div (the division, e.g. "/(max(iv,0)/1000.0)")
 * and returns 1; the value is then counter_sql_wrap(c, term || div). Returns 0 when it is not
 * (a gauge, or a ratio that gives 0 for a zero denominator), or -ENOSPC.
 */
int counter_sql_split(const struct object_def *o, const struct counter_def *c, const char *alias,
                      const char *interval_expr, char *term, size_t tcap, char *div, size_t dcap);

/* The clamp and complement of counter c around its value's SQL x: "min(x,100.0)", "100.0-...".
 * Returns 0, or -ENOSPC. */
int counter_sql_wrap(const struct counter_def *c, const char *x, char *buf, size_t cap);

/*
 * The same counter in the long form the views had before issue 18: every NULL and zero guarded
 * by a CASE, the scale printed with %.17g. Only the tests use it, as the reference that the short
 * form (counter_sql) must match value for value and type for type.
 */
int counter_sql_ref(const struct object_def *o, const struct counter_def *c, const char *alias,
                    const char *interval_expr, char *buf, size_t cap);

/* Find an object by its perfmon name; returns its id or -1. */
int counter_object_find(const char *name);

#endif
