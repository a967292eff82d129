/*
 * linux_parse.h - pure parsers for the Linux /proc and /sys files perflog reads.
 *
 * Each parser reads one file's contents from [buf, buf + len) (no NUL needed, the last line may
 * lack its '\n') and appends raw rows to a caller-owned raw_object, setting the `present` bit of
 * every field it read; fields are indexed by the enums of counters.h. None does I/O, logs, or keeps
 * state: the collector decides what to read, what to keep and what to log. All are thread-safe.
 *
 * A malformed line (too few columns, a non-numeric field) is skipped and counted in the
 * linux_parse_status; every other line is still parsed. On error (-ENOMEM, or an error returned by
 * a row hook) the rows appended so far are left in `out` and the caller drops them.
 */
#ifndef PERFLOG_LINUX_PARSE_H
#define PERFLOG_LINUX_PARSE_H

#include "collectors/model/sample.h"

#include <stddef.h>
#include <stdint.h>

/* What a parser skipped. The caller zeroes it; parsers only add to it. */
struct linux_parse_status {
    size_t bad_lines; /* malformed lines skipped */
    size_t first_bad; /* 1-based line number of the first one; 0: none */
};

/*
 * Called by the parsers of multi-instance device files for every well-formed row, after its name
 * and fields are filled in: the hook may set row->flags and add fields (sysfs values). Returns 1 to
 * keep the row, 0 to drop it (excluded, not a whole device), or a negative errno to stop parsing.
 */
typedef int (*linux_parse_row_hook)(void *ctx, struct raw_row *row);

/*
 * /proc/stat -> OBJ_PROCESSOR. The "cpu" line becomes instance "_Total" (the kernel's own total,
 * so not flagged RAW_IN_TOTAL) and "cpuN" instance "N"; fields user nice system idle iowait irq
 * softirq steal (guest and guest_nice are already inside user and nice). Kernels that print fewer
 * columns leave the missing fields not present; fewer than four is malformed. Returns 0 or -ENOMEM.
 */
int linux_parse_proc_stat(const char *buf, size_t len, struct raw_object *out,
                          struct linux_parse_status *st);

/*
 * /proc/diskstats -> OBJ_DISK, fields rd_ios .. queue_ms from columns 4..14
 * (Documentation/admin-guide/iostats.rst); discard_ios from column 15 where the line has the four
 * discard columns 15..18 (4.18+), flush_ios and flush_ms from columns 19 and 20 where it has them
 * (5.5+); a line without them leaves those fields not present. `keep`
 * (NULL: keep all) selects rows and sets their flags. Returns 0, -ENOMEM or the hook's error.
 */
int linux_parse_diskstats(const char *buf, size_t len, struct raw_object *out,
                          linux_parse_row_hook keep, void *ctx, struct linux_parse_status *st);

/*
 * /proc/net/dev -> OBJ_NET, receive bytes packets errs drop and transmit bytes packets errs drop.
 * The two header lines are recognised by their '|'. `keep` as for linux_parse_diskstats; speed and
 * MTU come from sysfs and are the hook's to add. Returns 0, -ENOMEM or the hook's error.
 */
int linux_parse_net_dev(const char *buf, size_t len, struct raw_object *out,
                        linux_parse_row_hook keep, void *ctx, struct linux_parse_status *st);

/*
 * /proc/meminfo -> the single OBJ_MEMORY row (instance "", added unless `out` has a row already):
 * MemAvailable, Cached, Buffers, Dirty, Writeback, all in KiB. A key the kernel does not print
 * (MemAvailable before 3.14) is not present. Returns 0 or -ENOMEM.
 */
int linux_parse_meminfo(const char *buf, size_t len, struct raw_object *out,
                        struct linux_parse_status *st);

/*
 * /proc/vmstat -> the single OBJ_MEMORY row, as linux_parse_meminfo: nr_dirtied and nr_written are
 * page counts, converted to KiB with `page_size` (bytes), as are nr_dirty_threshold and
 * nr_dirty_background_threshold (levels); pgpgin and pgpgout are already KiB; pgfault
 * and pgmajfault are counts. Returns 0, -EINVAL for a page_size that is not a multiple of 1024,
 * or -ENOMEM.
 */
int linux_parse_vmstat(const char *buf, size_t len, long page_size, struct raw_object *out,
                       struct linux_parse_status *st);

/*
 * How much of /proc/vmstat linux_parse_vmstat needs: the offset past the line of the last key it
 * reads that [buf, buf + len) holds; *complete is 1 when it holds every one of them (once each),
 * else 0.
 */
size_t vmstat_extent(const char *buf, size_t len, int *complete);

/*
 * /proc/net/snmp -> the single OBJ_TCP row (instance ""): InSegs OutSegs RetransSegs CurrEstab,
 * found by name in the "Tcp:" header line and read from the "Tcp:" line after it. A column the
 * header does not name is not present; a values line too short or non-numeric where a wanted
 * column is, is malformed and gives no row. Returns 0 or -ENOMEM.
 */
int linux_parse_net_snmp(const char *buf, size_t len, struct raw_object *out,
                         struct linux_parse_status *st);

/*
 * /proc/net/netstat -> the single OBJ_TCP row: TCPTimeouts TCPLossProbes TCPBacklogDrop
 * TCPToZeroWindowAdv TCPFromZeroWindowAdv ListenDrops of the "TcpExt:" header and values lines,
 * found by name as linux_parse_net_snmp does. Returns 0 or -ENOMEM.
 */
int parse_net_netstat(const char *buf, size_t len, struct raw_object *out,
                      struct linux_parse_status *st);

/*
 * /proc/softirqs -> OBJ_PROCESSOR: the NET_RX NET_TX BLOCK TIMER counts of each "CPUn" column to
 * the row named "n" (added when /proc/stat did not give one), their sum to "_Total" (as a 32-bit
 * value, wrapping like its parts). A header that is not all "CPUn" makes the file unreadable (one
 * bad line); a softirq line with a non-number or the wrong number of columns is malformed.
 * Returns 0 or -ENOMEM.
 */
int parse_softirqs(const char *buf, size_t len, struct raw_object *out,
                   struct linux_parse_status *st);

/*
 * /proc/net/softnet_stat -> OBJ_PROCESSOR: dropped and time_squeeze (columns 2 and 3, hex) of
 * each line to the row of its CPU, which is column 13 where the line has 13 columns or more
 * (5.10+) and the line's index among the lines otherwise; their sums to "_Total" (32 bits, as
 * parse_softirqs). A line with fewer than 3 columns or a non-hex one is malformed. Returns 0 or
 * -ENOMEM.
 */
int parse_softnet_stat(const char *buf, size_t len, struct raw_object *out,
                       struct linux_parse_status *st);

/* The three files of /proc/pressure. */
enum psi_resource { PSI_RES_IO, PSI_RES_MEMORY, PSI_RES_CPU, PSI_NRESOURCES };

/*
 * /proc/pressure/<res> -> the single OBJ_PRESSURE row: the total= microseconds of the "some" and
 * "full" lines into the resource's fields (cpu: "some" only). A line that is neither, or has no
 * total=, is malformed. Returns 0, -EINVAL for an unknown `res`, or -ENOMEM.
 */
int parse_pressure(const char *buf, size_t len, enum psi_resource res, struct raw_object *out,
                   struct linux_parse_status *st);

/* What perflog reads of /proc/PID/stat. */
#define PID_STAT_LAST_FIELD 22 /* starttime, as proc(5) numbers the fields */
struct pid_stat {
    char comm[COUNTER_NAME_MAX];
    int ppid;
    uint64_t utime_ticks, stime_ticks; /* clock ticks (sysconf(_SC_CLK_TCK)) */
    uint64_t num_threads;
    uint64_t start_ticks; /* when the process started, clock ticks after boot */
};

/*
 * /proc/PID/stat: the command name (between the first '(' and the last ')', so a name holding
 * ") (" is kept whole; truncated to fit), the parent, user and system time, threads and start
 * time. Returns 0 and fills *out, or -EINVAL (out untouched) for a line it cannot read.
 */
int linux_parse_pid_stat(const char *buf, size_t len, struct pid_stat *out);

/*
 * /proc/PID/io -> fields rchar wchar syscr syscw read_bytes write_bytes (enum proc_field) of `row`,
 * setting their present bits; other keys are ignored, a malformed value is counted in `st` and
 * its field left not present. Returns 0.
 */
int linux_parse_pid_io(const char *buf, size_t len, struct raw_row *row,
                       struct linux_parse_status *st);

/*
 * A sysfs attribute holding one decimal integer, optionally negative, and a '\n' (e.g.
 * /sys/class/net/IF/speed, which is "-1" when the speed is unknown). Returns 0 and sets *out, or
 * -EINVAL (out untouched).
 */
int linux_parse_sysfs_int(const char *buf, size_t len, int64_t *out);

#endif
