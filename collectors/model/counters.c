/*
 * counters.c - object, field and counter definitions, and the two renderings of a formula.
 */
#include "collectors/model/counters.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B(f) (1u << (f))

static const struct field_def cpu_fields[CPU_NFIELDS] = {
    [CPU_USER] = {"user", FIELD_CUM_U64},
    [CPU_NICE] = {"nice", FIELD_CUM_U64},
    [CPU_SYSTEM] = {"system", FIELD_CUM_U64},
    [CPU_IDLE] = {"idle", FIELD_CUM_U64},
    [CPU_IOWAIT] = {"iowait", FIELD_CUM_U64},
    [CPU_IRQ] = {"irq", FIELD_CUM_U64},
    [CPU_SOFTIRQ] = {"softirq", FIELD_CUM_U64},
    [CPU_STEAL] = {"steal", FIELD_CUM_U64},
    /* The kernel counts softirqs and softnet events in unsigned ints (kstat_softirqs_cpu(),
     * struct softnet_data), so they wrap at 32 bits. */
    [CPU_SI_NET_RX] = {"si_net_rx", FIELD_CUM_U32},
    [CPU_SI_NET_TX] = {"si_net_tx", FIELD_CUM_U32},
    [CPU_SI_BLOCK] = {"si_block", FIELD_CUM_U32},
    [CPU_SI_TIMER] = {"si_timer", FIELD_CUM_U32},
    [CPU_NET_DROPPED] = {"net_dropped", FIELD_CUM_U32},
    [CPU_NET_SQUEEZED] = {"net_squeezed", FIELD_CUM_U32},
};

/* All jiffies of a CPU. Guest time is already counted in user (and guest_nice in nice) by the
 * kernel (Documentation/filesystems/proc.rst), so the guest columns are not added again. */
#define CPU_ALL                                                                                    \
    (B(CPU_USER) | B(CPU_NICE) | B(CPU_SYSTEM) | B(CPU_IDLE) | B(CPU_IOWAIT) | B(CPU_IRQ) |        \
     B(CPU_SOFTIRQ) | B(CPU_STEAL))
#define CPU_PCT(n, mask)                                                                           \
    {                                                                                              \
        n, "%", "percent", (mask), DEN_FIELDS, CPU_ALL, 100.0, 0                                   \
    }

static const struct counter_def cpu_counters[] = {
    CPU_PCT("% Processor Time", CPU_ALL & ~(B(CPU_IDLE) | B(CPU_IOWAIT))),
    CPU_PCT("% User Time", B(CPU_USER) | B(CPU_NICE)),
    CPU_PCT("% Privileged Time", B(CPU_SYSTEM) | B(CPU_IRQ) | B(CPU_SOFTIRQ)),
    CPU_PCT("% Interrupt Time", B(CPU_IRQ)),
    CPU_PCT("% DPC Time", B(CPU_SOFTIRQ)),
    CPU_PCT("% Idle Time", B(CPU_IDLE) | B(CPU_IOWAIT)),
    CPU_PCT("% IO Wait Time", B(CPU_IOWAIT)),
    CPU_PCT("% Steal Time", B(CPU_STEAL)),
    {"NET_RX Softirqs/sec", "softirqs/s", "rate", B(CPU_SI_NET_RX), DEN_SECONDS, 0, 1.0, 0},
    {"NET_TX Softirqs/sec", "softirqs/s", "rate", B(CPU_SI_NET_TX), DEN_SECONDS, 0, 1.0, 0},
    {"BLOCK Softirqs/sec", "softirqs/s", "rate", B(CPU_SI_BLOCK), DEN_SECONDS, 0, 1.0, 0},
    {"TIMER Softirqs/sec", "softirqs/s", "rate", B(CPU_SI_TIMER), DEN_SECONDS, 0, 1.0, 0},
    {"Packets Dropped/sec", "packets/s", "rate", B(CPU_NET_DROPPED), DEN_SECONDS, 0, 1.0, 0},
    {"Time Squeezes/sec", "events/s", "rate", B(CPU_NET_SQUEEZED), DEN_SECONDS, 0, 1.0, 0},
};

/* /proc/diskstats (Documentation/admin-guide/iostats.rst). The millisecond fields are printed
 * from 32-bit unsigned ints by the kernel and wrap after about 49.7 days; the others are
 * unsigned long. Sectors are always 512 bytes there, whatever the device's block size. */
static const struct field_def disk_fields[DISK_NFIELDS] = {
    [DISK_RD_IOS] = {"rd_ios", FIELD_CUM_U64},
    [DISK_RD_MERGES] = {"rd_merges", FIELD_CUM_U64},
    [DISK_RD_SECTORS] = {"rd_sectors", FIELD_CUM_U64},
    [DISK_RD_MS] = {"rd_ms", FIELD_CUM_U32},
    [DISK_WR_IOS] = {"wr_ios", FIELD_CUM_U64},
    [DISK_WR_MERGES] = {"wr_merges", FIELD_CUM_U64},
    [DISK_WR_SECTORS] = {"wr_sectors", FIELD_CUM_U64},
    [DISK_WR_MS] = {"wr_ms", FIELD_CUM_U32},
    [DISK_IN_FLIGHT] = {"in_flight", FIELD_GAUGE},
    [DISK_IO_MS] = {"io_ms", FIELD_CUM_U32},
    [DISK_QUEUE_MS] = {"queue_ms", FIELD_CUM_U32},
    [DISK_DISCARD_IOS] = {"discard_ios", FIELD_CUM_U64},
    [DISK_FLUSH_IOS] = {"flush_ios", FIELD_CUM_U64},
    [DISK_FLUSH_MS] = {"flush_ms", FIELD_CUM_U32},
};

static const struct counter_def disk_counters[] = {
    {"Disk Read Bytes/sec", "bytes/s", "rate", B(DISK_RD_SECTORS), DEN_SECONDS, 0, 512.0, 0},
    {"Disk Write Bytes/sec", "bytes/s", "rate", B(DISK_WR_SECTORS), DEN_SECONDS, 0, 512.0, 0},
    {"Disk Bytes/sec", "bytes/s", "rate", B(DISK_RD_SECTORS) | B(DISK_WR_SECTORS), DEN_SECONDS, 0,
     512.0, 0},
    {"Disk Reads/sec", "ops/s", "rate", B(DISK_RD_IOS), DEN_SECONDS, 0, 1.0, 0},
    {"Disk Writes/sec", "ops/s", "rate", B(DISK_WR_IOS), DEN_SECONDS, 0, 1.0, 0},
    {"Disk Transfers/sec", "ops/s", "rate", B(DISK_RD_IOS) | B(DISK_WR_IOS), DEN_SECONDS, 0, 1.0,
     0},
    {"% Disk Time", "%", "percent", B(DISK_IO_MS), DEN_MS, 0, 100.0, CF_CLAMP100},
    {"% Idle Time", "%", "percent", B(DISK_IO_MS), DEN_MS, 0, 100.0, CF_CLAMP100 | CF_COMPLEMENT},
    {"Avg. Disk Queue Length", "requests", "gauge", B(DISK_QUEUE_MS), DEN_MS, 0, 1.0, 0},
    {"Current Disk Queue Length", "requests", "gauge", B(DISK_IN_FLIGHT), DEN_ONE, 0, 1.0, 0},
    {"Avg. Disk sec/Read", "s", "gauge", B(DISK_RD_MS), DEN_FIELDS, B(DISK_RD_IOS), 0.001,
     CF_ZERO_IF_DEN0 | CF_PER_OP},
    {"Avg. Disk sec/Write", "s", "gauge", B(DISK_WR_MS), DEN_FIELDS, B(DISK_WR_IOS), 0.001,
     CF_ZERO_IF_DEN0 | CF_PER_OP},
    {"Disk Flushes/sec", "ops/s", "rate", B(DISK_FLUSH_IOS), DEN_SECONDS, 0, 1.0, 0},
    {"Discards/sec", "ops/s", "rate", B(DISK_DISCARD_IOS), DEN_SECONDS, 0, 1.0, 0},
    {"Avg. Disk sec/Flush", "s", "gauge", B(DISK_FLUSH_MS), DEN_FIELDS, B(DISK_FLUSH_IOS), 0.001,
     CF_ZERO_IF_DEN0 | CF_PER_OP},
};

/* /proc/net/dev counters are unsigned long on 64-bit kernels. The error and drop counts are
 * reported as cumulative counts, as Windows does, so they are kept as levels. */
static const struct field_def net_fields[NET_NFIELDS] = {
    [NET_RX_BYTES] = {"rx_bytes", FIELD_CUM_U64},
    [NET_RX_PACKETS] = {"rx_packets", FIELD_CUM_U64},
    [NET_RX_ERRS] = {"rx_errs", FIELD_GAUGE},
    [NET_RX_DROP] = {"rx_drop", FIELD_GAUGE},
    [NET_TX_BYTES] = {"tx_bytes", FIELD_CUM_U64},
    [NET_TX_PACKETS] = {"tx_packets", FIELD_CUM_U64},
    [NET_TX_ERRS] = {"tx_errs", FIELD_GAUGE},
    [NET_TX_DROP] = {"tx_drop", FIELD_GAUGE},
    [NET_SPEED_MBPS] = {"speed_mbps", FIELD_GAUGE},
    [NET_MTU] = {"mtu", FIELD_GAUGE, FIELDF_NO_TOTAL},
};

static const struct counter_def net_counters[] = {
    {"Bytes Received/sec", "bytes/s", "rate", B(NET_RX_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Bytes Sent/sec", "bytes/s", "rate", B(NET_TX_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Bytes Total/sec", "bytes/s", "rate", B(NET_RX_BYTES) | B(NET_TX_BYTES), DEN_SECONDS, 0, 1.0,
     0},
    {"Packets Received/sec", "packets/s", "rate", B(NET_RX_PACKETS), DEN_SECONDS, 0, 1.0, 0},
    {"Packets Sent/sec", "packets/s", "rate", B(NET_TX_PACKETS), DEN_SECONDS, 0, 1.0, 0},
    {"Packets/sec", "packets/s", "rate", B(NET_RX_PACKETS) | B(NET_TX_PACKETS), DEN_SECONDS, 0, 1.0,
     0},
    {"Packets Received Errors", "packets", "count", B(NET_RX_ERRS), DEN_ONE, 0, 1.0, 0},
    {"Packets Received Discarded", "packets", "count", B(NET_RX_DROP), DEN_ONE, 0, 1.0, 0},
    {"Packets Outbound Errors", "packets", "count", B(NET_TX_ERRS), DEN_ONE, 0, 1.0, 0},
    {"Packets Outbound Discarded", "packets", "count", B(NET_TX_DROP), DEN_ONE, 0, 1.0, 0},
    {"Current Bandwidth", "bits/s", "gauge", B(NET_SPEED_MBPS), DEN_ONE, 0, 1e6, 0},
    {"MTU", "bytes", "gauge", B(NET_MTU), DEN_ONE, 0, 1.0, 0},
};

/* /proc/meminfo is in KiB; the collector converts /proc/vmstat page counts to KiB as well so
 * that every memory field has one unit. pgpgin/pgpgout are already KiB. */
static const struct field_def mem_fields[MEM_NFIELDS] = {
    [MEM_AVAILABLE_KB] = {"available_kb", FIELD_GAUGE},
    [MEM_CACHED_KB] = {"cached_kb", FIELD_GAUGE},
    [MEM_BUFFERS_KB] = {"buffers_kb", FIELD_GAUGE},
    [MEM_DIRTY_KB] = {"dirty_kb", FIELD_GAUGE},
    [MEM_WRITEBACK_KB] = {"writeback_kb", FIELD_GAUGE},
    [MEM_DIRTIED_KB] = {"dirtied_kb", FIELD_CUM_U64},
    [MEM_WRITTEN_KB] = {"written_kb", FIELD_CUM_U64},
    [MEM_PGPGIN_KB] = {"pgpgin_kb", FIELD_CUM_U64},
    [MEM_PGPGOUT_KB] = {"pgpgout_kb", FIELD_CUM_U64},
    [MEM_PGFAULT] = {"pgfault", FIELD_CUM_U64},
    [MEM_PGMAJFAULT] = {"pgmajfault", FIELD_CUM_U64},
    [MEM_DIRTY_THRESH_KB] = {"dirty_thresh_kb", FIELD_GAUGE},
    [MEM_DIRTY_BG_THRESH_KB] = {"dirty_bg_thresh_kb", FIELD_GAUGE},
};

static const struct counter_def mem_counters[] = {
    {"Available Bytes", "bytes", "gauge", B(MEM_AVAILABLE_KB), DEN_ONE, 0, 1024.0, 0},
    {"Cache Bytes", "bytes", "gauge", B(MEM_CACHED_KB) | B(MEM_BUFFERS_KB), DEN_ONE, 0, 1024.0, 0},
    {"Dirty Bytes", "bytes", "gauge", B(MEM_DIRTY_KB), DEN_ONE, 0, 1024.0, 0},
    {"Writeback Bytes", "bytes", "gauge", B(MEM_WRITEBACK_KB), DEN_ONE, 0, 1024.0, 0},
    {"Dirtied Bytes/sec", "bytes/s", "rate", B(MEM_DIRTIED_KB), DEN_SECONDS, 0, 1024.0, 0},
    {"Written Back Bytes/sec", "bytes/s", "rate", B(MEM_WRITTEN_KB), DEN_SECONDS, 0, 1024.0, 0},
    {"Page In Bytes/sec", "bytes/s", "rate", B(MEM_PGPGIN_KB), DEN_SECONDS, 0, 1024.0, 0},
    {"Page Out Bytes/sec", "bytes/s", "rate", B(MEM_PGPGOUT_KB), DEN_SECONDS, 0, 1024.0, 0},
    {"Page Faults/sec", "faults/s", "rate", B(MEM_PGFAULT), DEN_SECONDS, 0, 1.0, 0},
    {"Major Page Faults/sec", "faults/s", "rate", B(MEM_PGMAJFAULT), DEN_SECONDS, 0, 1.0, 0},
    {"Dirty Threshold Bytes", "bytes", "gauge", B(MEM_DIRTY_THRESH_KB), DEN_ONE, 0, 1024.0, 0},
    {"Dirty Background Threshold Bytes", "bytes", "gauge", B(MEM_DIRTY_BG_THRESH_KB), DEN_ONE, 0,
     1024.0, 0},
};

static const struct field_def tcp_fields[TCP_NFIELDS] = {
    [TCP_IN_SEGS] = {"in_segs", FIELD_CUM_U64},
    [TCP_OUT_SEGS] = {"out_segs", FIELD_CUM_U64},
    [TCP_RETRANS_SEGS] = {"retrans_segs", FIELD_CUM_U64},
    [TCP_CURR_ESTAB] = {"curr_estab", FIELD_GAUGE},
    [TCP_TIMEOUTS] = {"timeouts", FIELD_CUM_U64},
    [TCP_LOSS_PROBES] = {"loss_probes", FIELD_CUM_U64},
    [TCP_BACKLOG_DROP] = {"backlog_drop", FIELD_CUM_U64},
    [TCP_TO_ZERO_WINDOW] = {"to_zero_window", FIELD_CUM_U64},
    [TCP_FROM_ZERO_WINDOW] = {"from_zero_window", FIELD_CUM_U64},
    [TCP_LISTEN_DROPS] = {"listen_drops", FIELD_CUM_U64},
};

static const struct counter_def tcp_counters[] = {
    {"Segments Received/sec", "segments/s", "rate", B(TCP_IN_SEGS), DEN_SECONDS, 0, 1.0, 0},
    {"Segments Sent/sec", "segments/s", "rate", B(TCP_OUT_SEGS), DEN_SECONDS, 0, 1.0, 0},
    {"Segments Retransmitted/sec", "segments/s", "rate", B(TCP_RETRANS_SEGS), DEN_SECONDS, 0, 1.0,
     0},
    {"Connections Established", "connections", "gauge", B(TCP_CURR_ESTAB), DEN_ONE, 0, 1.0, 0},
    {"Timeouts/sec", "events/s", "rate", B(TCP_TIMEOUTS), DEN_SECONDS, 0, 1.0, 0},
    {"Loss Probes/sec", "events/s", "rate", B(TCP_LOSS_PROBES), DEN_SECONDS, 0, 1.0, 0},
    {"Backlog Drops/sec", "packets/s", "rate", B(TCP_BACKLOG_DROP), DEN_SECONDS, 0, 1.0, 0},
    {"Zero Window Advertised/sec", "events/s", "rate", B(TCP_TO_ZERO_WINDOW), DEN_SECONDS, 0, 1.0,
     0},
    {"Zero Window Reopened/sec", "events/s", "rate", B(TCP_FROM_ZERO_WINDOW), DEN_SECONDS, 0, 1.0,
     0},
    {"Listen Drops/sec", "connections/s", "rate", B(TCP_LISTEN_DROPS), DEN_SECONDS, 0, 1.0, 0},
};

/* /proc/PID/io and stat (Documentation/filesystems/proc.rst). The parent's id is the one seen
 * when the process was first followed: a reparented orphan keeps its real parent, so a run's
 * process tree can be rebuilt from stored rows. */
static const struct field_def proc_fields[PROC_NFIELDS] = {
    [PROC_RCHAR] = {"rchar", FIELD_CUM_U64},
    [PROC_WCHAR] = {"wchar", FIELD_CUM_U64},
    [PROC_SYSCR] = {"syscr", FIELD_CUM_U64},
    [PROC_SYSCW] = {"syscw", FIELD_CUM_U64},
    [PROC_READ_BYTES] = {"read_bytes", FIELD_CUM_U64},
    [PROC_WRITE_BYTES] = {"write_bytes", FIELD_CUM_U64},
    [PROC_CPU_MS] = {"cpu_ms", FIELD_CUM_U64},
    [PROC_PID] = {"pid", FIELD_GAUGE, FIELDF_NO_TOTAL},
    [PROC_PPID] = {"ppid", FIELD_GAUGE, FIELDF_NO_TOTAL},
};

/* % Processor Time is of one CPU, as perfmon's Process object has it: 200 is two busy cores. */
static const struct counter_def proc_counters[] = {
    {"IO Read Bytes/sec", "bytes/s", "rate", B(PROC_RCHAR), DEN_SECONDS, 0, 1.0, 0},
    {"IO Write Bytes/sec", "bytes/s", "rate", B(PROC_WCHAR), DEN_SECONDS, 0, 1.0, 0},
    {"IO Read Operations/sec", "ops/s", "rate", B(PROC_SYSCR), DEN_SECONDS, 0, 1.0, 0},
    {"IO Write Operations/sec", "ops/s", "rate", B(PROC_SYSCW), DEN_SECONDS, 0, 1.0, 0},
    {"% Processor Time", "%", "percent", B(PROC_CPU_MS), DEN_MS, 0, 100.0, 0},
    {"Storage Read Bytes/sec", "bytes/s", "rate", B(PROC_READ_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Storage Write Bytes/sec", "bytes/s", "rate", B(PROC_WRITE_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"ID Process", "id", "gauge", B(PROC_PID), DEN_ONE, 0, 1.0, 0},
    {"Creating Process ID", "id", "gauge", B(PROC_PPID), DEN_ONE, 0, 1.0, 0},
};

/* /proc/fs/cifs/Stats (fs/smb/client/cifs_debug.c): the byte counts are the tree connection's
 * __u64 bytes_read and bytes_written; the request counts are atomic_t. The names are those of
 * Windows' SMB Client Shares object. */
static const struct field_def smb_fields[SMB_NFIELDS] = {
    [SMB_RD_BYTES] = {"rd_bytes", FIELD_CUM_U64},
    [SMB_WR_BYTES] = {"wr_bytes", FIELD_CUM_U64},
    [SMB_RD_REQS] = {"rd_reqs", FIELD_CUM_U32},
    [SMB_WR_REQS] = {"wr_reqs", FIELD_CUM_U32},
};

static const struct counter_def smb_counters[] = {
    {"Data Bytes/sec", "bytes/s", "rate", B(SMB_RD_BYTES) | B(SMB_WR_BYTES), DEN_SECONDS, 0, 1.0,
     0},
    {"Read Bytes/sec", "bytes/s", "rate", B(SMB_RD_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Write Bytes/sec", "bytes/s", "rate", B(SMB_WR_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Data Requests/sec", "requests/s", "rate", B(SMB_RD_REQS) | B(SMB_WR_REQS), DEN_SECONDS, 0,
     1.0, 0},
    {"Read Requests/sec", "requests/s", "rate", B(SMB_RD_REQS), DEN_SECONDS, 0, 1.0, 0},
    {"Write Requests/sec", "requests/s", "rate", B(SMB_WR_REQS), DEN_SECONDS, 0, 1.0, 0},
};

/* /proc/self/mountstats (fs/nfs/super.c nfs_show_stats(), net/sunrpc/stats.c
 * rpc_clnt_show_stats()): unsigned long and u64 counts, the times in ms. */
static const struct field_def nfs_fields[NFS_NFIELDS] = {
    [NFS_RD_BYTES] = {"rd_bytes", FIELD_CUM_U64},
    [NFS_WR_BYTES] = {"wr_bytes", FIELD_CUM_U64},
    [NFS_APP_RD_BYTES] = {"app_rd_bytes", FIELD_CUM_U64},
    [NFS_APP_WR_BYTES] = {"app_wr_bytes", FIELD_CUM_U64},
    [NFS_OPS] = {"ops", FIELD_CUM_U64},
    [NFS_RTT_MS] = {"rtt_ms", FIELD_CUM_U64},
    [NFS_EXE_MS] = {"exe_ms", FIELD_CUM_U64},
};

static const struct counter_def nfs_counters[] = {
    {"Read Bytes/sec", "bytes/s", "rate", B(NFS_RD_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Write Bytes/sec", "bytes/s", "rate", B(NFS_WR_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Ops/sec", "ops/s", "rate", B(NFS_OPS), DEN_SECONDS, 0, 1.0, 0},
    {"Avg. RTT sec/Op", "s", "gauge", B(NFS_RTT_MS), DEN_FIELDS, B(NFS_OPS), 0.001,
     CF_ZERO_IF_DEN0 | CF_PER_OP},
    {"Avg. Execute sec/Op", "s", "gauge", B(NFS_EXE_MS), DEN_FIELDS, B(NFS_OPS), 0.001,
     CF_ZERO_IF_DEN0 | CF_PER_OP},
    {"Application Read Bytes/sec", "bytes/s", "rate", B(NFS_APP_RD_BYTES), DEN_SECONDS, 0, 1.0, 0},
    {"Application Write Bytes/sec", "bytes/s", "rate", B(NFS_APP_WR_BYTES), DEN_SECONDS, 0, 1.0, 0},
};

/* Documentation/accounting/psi.rst: total= is the stalled time in microseconds, so a share of
 * an interval in ms is us * 100 / 1000 / ms. "some": at least one task stalled; "full": all
 * non-idle tasks stalled at once. */
static const struct field_def psi_fields[PSI_NFIELDS] = {
    [PSI_IO_SOME_US] = {"io_some_us", FIELD_CUM_U64},
    [PSI_IO_FULL_US] = {"io_full_us", FIELD_CUM_U64},
    [PSI_MEM_SOME_US] = {"mem_some_us", FIELD_CUM_U64},
    [PSI_MEM_FULL_US] = {"mem_full_us", FIELD_CUM_U64},
    [PSI_CPU_SOME_US] = {"cpu_some_us", FIELD_CUM_U64},
};

#define PSI_PCT(n, f)                                                                              \
    {                                                                                              \
        n, "%", "percent", B(f), DEN_MS, 0, 0.1, CF_CLAMP100                                       \
    }

static const struct counter_def psi_counters[] = {
    PSI_PCT("IO Some %", PSI_IO_SOME_US),      PSI_PCT("IO Full %", PSI_IO_FULL_US),
    PSI_PCT("Memory Some %", PSI_MEM_SOME_US), PSI_PCT("Memory Full %", PSI_MEM_FULL_US),
    PSI_PCT("CPU Some %", PSI_CPU_SOME_US),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const struct object_def counter_objects[OBJ_COUNT] = {
    [OBJ_PROCESSOR] = {"Processor", "obj_processor", 0, cpu_fields, N(cpu_fields), cpu_counters,
                       N(cpu_counters)},
    [OBJ_DISK] = {"PhysicalDisk", "obj_disk", 0, disk_fields, N(disk_fields), disk_counters,
                  N(disk_counters)},
    [OBJ_NET] = {"Network Interface", "obj_net", 0, net_fields, N(net_fields), net_counters,
                 N(net_counters)},
    [OBJ_MEMORY] = {"Memory", "obj_memory", 1, mem_fields, N(mem_fields), mem_counters,
                    N(mem_counters)},
    [OBJ_TCP] = {"TCP", "obj_tcp", 1, tcp_fields, N(tcp_fields), tcp_counters, N(tcp_counters)},
    [OBJ_PROCESS] = {"Process", "obj_process", 0, proc_fields, N(proc_fields), proc_counters,
                     N(proc_counters)},
    [OBJ_PRESSURE] = {"Pressure", "obj_pressure", 1, psi_fields, N(psi_fields), psi_counters,
                      N(psi_counters)},
    [OBJ_SMB] = {"SMB Client Shares", "obj_smb", 0, smb_fields, N(smb_fields), smb_counters,
                 N(smb_counters)},
    [OBJ_NFS] = {"NFS Client", "obj_nfs", 0, nfs_fields, N(nfs_fields), nfs_counters,
                 N(nfs_counters)},
};

int counter_object_find(const char *name)
{
    for (int i = 0; i < OBJ_COUNT; i++)
        if (strcmp(counter_objects[i].name, name) == 0)
            return i;
    return -1;
}

/* A sum of fields as SQLite computes counter_sql's `a+b+...`: in 64-bit integers, left to right,
 * until one addition overflows; from there on in doubles (SQLite's integer + integer is REAL on
 * overflow, and REAL + integer is REAL). */
struct field_sum {
    int real;
    int64_t i;
    double r;
};

/* Sum the fields of `mask` into *sum; returns 0 when one of them has no value. Walks the set bits
 * only, lowest first: the same additions in the same order as a scan of every field, without the
 * tests of the unset ones (the writer evaluates every counter of every row for its roll-ups). */
static int sum_fields(uint32_t mask, const int64_t *v, uint64_t null_mask, struct field_sum *sum)
{
    struct field_sum s = {0, 0, 0.0};
    uint32_t m = mask & ((1u << COUNTER_MAX_FIELDS) - 1);
    int i;

    if (null_mask & m)
        return 0;
    if (!m) {
        *sum = s;
        return 1;
    }
    i = __builtin_ctz(m);
    s.i = v[i];
    for (m &= m - 1; m; m &= m - 1) {
        i = __builtin_ctz(m);
        if (s.real)
            s.r += (double)v[i];
        else if (__builtin_add_overflow(s.i, v[i], &s.i)) {
            /* s.i is unspecified now: start again from the operands in doubles */
            s.real = 1;
            s.r = 0.0;
            for (int j = 0, k = 0; j <= i; j++)
                if (mask & (1u << j))
                    s.r = k++ ? s.r + (double)v[j] : (double)v[j];
        }
    }
    *sum = s;
    return 1;
}

/*
 * num * scale as counter_sql's SQL computes it. It prints the scale with %.17g, which writes a
 * whole number below 1e17 as an integer literal; SQLite then multiplies two integers exactly
 * and rounds the product once (in doubles only on overflow), where (double)num * scale would
 * round num first once it is past 2^53.
 */
static double scaled(int64_t num, double scale)
{
    int64_t s, p;

    if (scale != (double)(int64_t)scale || scale >= 1e17 || scale <= -1e17)
        return (double)num * scale;
    s = (int64_t)scale;
    if (__builtin_mul_overflow(num, s, &p))
        return (double)num * (double)s;
    return (double)p;
}

/*
 * The operation order here is mirrored exactly by counter_sql(): num * scale (see scaled), then
 * one division by the denominator, then clamp, then complement.
 */
int counter_eval(const struct counter_def *c, const int64_t *v, uint64_t null_mask,
                 int64_t interval_ms, double *out)
{
    struct field_sum num, den_sum;
    double x, den;

    if (!sum_fields(c->num, v, null_mask, &num))
        return 0;
    x = num.real ? num.r * c->scale : scaled(num.i, c->scale);
    switch (c->den) {
    case DEN_ONE:
        break;
    case DEN_SECONDS:
        if (interval_ms <= 0)
            return 0;
        den = (double)interval_ms / 1000.0;
        x = x / den;
        break;
    case DEN_MS:
        if (interval_ms <= 0)
            return 0;
        x = x / (double)interval_ms;
        break;
    case DEN_FIELDS:
        if (!sum_fields(c->den_fields, v, null_mask, &den_sum))
            return 0;
        if (den_sum.real ? den_sum.r == 0.0 : den_sum.i == 0) {
            if (!(c->flags & CF_ZERO_IF_DEN0))
                return 0;
            x = 0.0;
        } else {
            x = x / (den_sum.real ? den_sum.r : (double)den_sum.i);
        }
        break;
    }
    if ((c->flags & CF_CLAMP100) && x > 100.0)
        x = 100.0;
    if (c->flags & CF_COMPLEMENT)
        x = 100.0 - x;
    *out = x;
    return 1;
}

int counter_num_den(const struct counter_def *c, const int64_t *v, uint64_t null_mask, double *num,
                    double *den)
{
    struct field_sum n, d;

    if (!sum_fields(c->num, v, null_mask, &n) || !sum_fields(c->den_fields, v, null_mask, &d))
        return 0;
    *num = n.real ? n.r : (double)n.i;
    *den = d.real ? d.r : (double)d.i;
    return 1;
}

static int field_sum_sql(const struct object_def *o, uint32_t mask, const char *alias, char *buf,
                         size_t cap)
{
    size_t len = 0;
    int first = 1, n;

    for (size_t i = 0; i < o->nfields; i++) {
        if (!(mask & (1u << i)))
            continue;
        n = snprintf(buf + len, cap - len, "%s%s%s%s", first ? "" : "+", alias, *alias ? "." : "",
                     o->fields[i].column);
        if (n < 0 || (size_t)n >= cap - len)
            return -ENOSPC;
        len += (size_t)n;
        first = 0;
    }
    return 0;
}

/*
 * The scale as an SQL literal that SQLite reads as the same double: a whole number below 1e17 as
 * an integer literal (so num * scale stays an exact integer product, see scaled()), anything else
 * with the fewest digits that read back to it (0.1, not 0.10000000000000001).
 */
static void scale_sql(double scale, char *buf, size_t cap)
{
    if (scale == (double)(int64_t)scale && scale < 1e17 && scale > -1e17) {
        snprintf(buf, cap, "%.17g", scale);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, scale);
        if (strtod(buf, NULL) == scale)
            return;
    }
}

/*
 * The short form. It relies on SQLite's NULL rules, which make the long form's guards
 * (counter_sql_ref) redundant: arithmetic on a NULL is NULL, and a division by zero, integer or
 * real, is NULL. So "CASE WHEN iv>0 THEN x/(iv/1000.0) END" is x/(max(iv,0)/1000.0) (max of a
 * NULL is NULL; a non-positive interval divides by 0.0), "CASE WHEN n IS NULL OR d IS NULL THEN
 * NULL WHEN d=0 THEN NULL ELSE x/(d*1.0) END" is x/(d*1.0), and num*1 is num (a lone column as
 * +column, which like num*1 has no affinity: a comparison with the value converts nothing
 * differently). Every operation that remains is the long form's, on the same operands in the
 * same order, so the value and its type are the same (tests/unit/test_db_chunks.c compares the
 * two over edge values).
 *
 * This builds the parts: `term` is num * scale, as a term a division can follow; `div` is the
 * division that follows it ("" for a gauge). A counter whose value is not term || div (a ratio
 * that gives 0 for a zero denominator) has all of it in term and returns 0; otherwise 1.
 */
static int short_parts(const struct object_def *o, const struct counter_def *c, const char *alias,
                       const char *interval_expr, char *term, size_t tcap, char *div, size_t dcap)
{
    char num[512], den[512], sc[32], t[560];
    int n, sum, dsum, split = 1;

    if (field_sum_sql(o, c->num, alias, num, sizeof(num)) < 0)
        return -ENOSPC;
    sum = strchr(num, '+') != NULL;
    scale_sql(c->scale, sc, sizeof(sc));
    if (strcmp(sc, "1") == 0)
        n = snprintf(t, sizeof(t), sum ? "(%s)" : c->den == DEN_ONE ? "+%s" : "%s", num);
    else
        n = snprintf(t, sizeof(t), sum ? "(%s)*%s" : "%s*%s", num, sc);
    if (n < 0 || (size_t)n >= sizeof(t))
        return -ENOSPC;
    switch (c->den) {
    case DEN_ONE:
        n = snprintf(div, dcap, "%s", "");
        break;
    case DEN_SECONDS:
        n = snprintf(div, dcap, "/(max(%s,0)/1000.0)", interval_expr);
        break;
    case DEN_MS:
        n = snprintf(div, dcap, "/(max(%s,0)*1.0)", interval_expr);
        break;
    case DEN_FIELDS:
        if (field_sum_sql(o, c->den_fields, alias, den, sizeof(den)) < 0)
            return -ENOSPC;
        dsum = strchr(den, '+') != NULL;
        n = snprintf(div, dcap, dsum ? "/((%s)*1.0)" : "/(%s*1.0)", den);
        if (n < 0 || (size_t)n >= dcap)
            return -ENOSPC;
        if (c->flags & CF_ZERO_IF_DEN0) {
            /* + binds tighter than = and IS: the sums need no parentheses there */
            n = snprintf(term, tcap, "CASE WHEN %s=0 AND %s IS NOT NULL THEN 0.0 ELSE %s%s END",
                         den, num, t, div);
            if (n < 0 || (size_t)n >= tcap)
                return -ENOSPC;
            div[0] = '\0';
            return 0;
        }
        break;
    default:
        return -EINVAL;
    }
    if (n < 0 || (size_t)n >= dcap)
        return -ENOSPC;
    n = snprintf(term, tcap, "%s", t);
    if (n < 0 || (size_t)n >= tcap)
        return -ENOSPC;
    return split;
}

int counter_sql_wrap(const struct counter_def *c, const char *x, char *buf, size_t cap)
{
    int n;

    if (c->flags & CF_CLAMP100)
        n = snprintf(buf, cap, "%smin(%s,100.0)", (c->flags & CF_COMPLEMENT) ? "100.0-" : "", x);
    else if (c->flags & CF_COMPLEMENT)
        n = snprintf(buf, cap, "100.0-(%s)", x);
    else
        n = snprintf(buf, cap, "%s", x);
    return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

int counter_sql_split(const struct object_def *o, const struct counter_def *c, const char *alias,
                      const char *interval_expr, char *term, size_t tcap, char *div, size_t dcap)
{
    int rc = short_parts(o, c, alias, interval_expr, term, tcap, div, dcap);

    return rc < 0 ? rc : rc == 1 && div[0] != '\0';
}

int counter_sql(const struct object_def *o, const struct counter_def *c, const char *alias,
                const char *interval_expr, char *buf, size_t cap)
{
    char term[1400], div[600], x[2000];
    int rc = short_parts(o, c, alias, interval_expr, term, sizeof(term), div, sizeof(div));

    if (rc < 0)
        return rc;
    if ((size_t)snprintf(x, sizeof(x), "%s%s", term, div) >= sizeof(x))
        return -ENOSPC;
    return counter_sql_wrap(c, x, buf, cap);
}

int counter_sql_ref(const struct object_def *o, const struct counter_def *c, const char *alias,
                    const char *interval_expr, char *buf, size_t cap)
{
    char num[512], den[512], x[1400];
    int n;

    if (field_sum_sql(o, c->num, alias, num, sizeof(num)) < 0)
        return -ENOSPC;
    /* %.17g round-trips a double exactly, so SQLite multiplies by the same constant. */
    switch (c->den) {
    case DEN_ONE:
        n = snprintf(x, sizeof(x), "((%s)*%.17g)", num, c->scale);
        break;
    case DEN_SECONDS:
        n = snprintf(x, sizeof(x), "(CASE WHEN %s>0 THEN ((%s)*%.17g)/(%s/1000.0) END)",
                     interval_expr, num, c->scale, interval_expr);
        break;
    case DEN_MS:
        n = snprintf(x, sizeof(x), "(CASE WHEN %s>0 THEN ((%s)*%.17g)/(%s*1.0) END)", interval_expr,
                     num, c->scale, interval_expr);
        break;
    case DEN_FIELDS:
        if (field_sum_sql(o, c->den_fields, alias, den, sizeof(den)) < 0)
            return -ENOSPC;
        n = snprintf(x, sizeof(x),
                     "(CASE WHEN (%s) IS NULL OR (%s) IS NULL THEN NULL WHEN (%s)=0 THEN %s "
                     "ELSE ((%s)*%.17g)/((%s)*1.0) END)",
                     num, den, den, (c->flags & CF_ZERO_IF_DEN0) ? "0.0" : "NULL", num, c->scale,
                     den);
        break;
    default:
        return -EINVAL;
    }
    if (n < 0 || (size_t)n >= sizeof(x))
        return -ENOSPC;
    if (c->flags & CF_CLAMP100)
        n = snprintf(buf, cap, "%s(min(%s,100.0))", (c->flags & CF_COMPLEMENT) ? "100.0-" : "", x);
    else
        n = snprintf(buf, cap, "%s%s", (c->flags & CF_COMPLEMENT) ? "100.0-" : "", x);
    if (n < 0 || (size_t)n >= cap)
        return -ENOSPC;
    return 0;
}

int counter_per_op_sql(const struct object_def *o, const struct counter_def *c, const char *alias,
                       char *avg, size_t acap, char *ops, size_t ocap)
{
    char num[512], den[512], sc[64], tn[640], td[640];
    int n;

    if (!(c->flags & CF_PER_OP) || field_sum_sql(o, c->num, alias, num, sizeof(num)) < 0 ||
        field_sum_sql(o, c->den_fields, alias, den, sizeof(den)) < 0)
        return -ENOSPC;
    scale_sql(c->scale, sc, sizeof(sc));
    /* the totals over the rows that have both: a row without one has no value of the counter */
    n = snprintf(tn, sizeof(tn), "total(CASE WHEN (%s) IS NOT NULL THEN (%s) END)", den, num);
    if (n < 0 || (size_t)n >= sizeof(tn))
        return -ENOSPC;
    n = snprintf(td, sizeof(td), "total(CASE WHEN (%s) IS NOT NULL THEN (%s) END)", num, den);
    if (n < 0 || (size_t)n >= sizeof(td))
        return -ENOSPC;
    n = snprintf(avg, acap,
                 "CASE WHEN count((%s)+(%s))>0 THEN CASE WHEN %s=0 THEN 0.0 ELSE %s*%s/%s END END",
                 num, den, td, tn, sc, td);
    if (n < 0 || (size_t)n >= acap)
        return -ENOSPC;
    n = snprintf(ops, ocap, "CASE WHEN count((%s)+(%s))>0 THEN %s END", num, den, td);
    if (n < 0 || (size_t)n >= ocap)
        return -ENOSPC;
    return 0;
}
