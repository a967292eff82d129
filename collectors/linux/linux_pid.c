/*
 * linux_pid.c - /proc/PID/stat and /proc/PID/io (Documentation/filesystems/proc.rst, tables 1-2
 * and 1-4, "/proc/<pid>/io").
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"
#include "collectors/model/pid_io.h"

#include <errno.h>
#include <string.h>

/*
 * stat is "pid (comm) state ppid ...": comm may hold blanks and parentheses, so it ends at the
 * LAST ')'. The fields after it are counted from 3 (state) as proc(5) numbers them.
 */
int linux_parse_pid_stat(const char *buf, size_t len, struct pid_stat *out)
{
    const char *end = buf + len, *open = memchr(buf, '(', len), *close = NULL, *p;
    uint64_t v[PID_STAT_LAST_FIELD + 1] = {0};
    size_t n;

    for (p = end; p > buf; p--)
        if (p[-1] == ')') {
            close = p - 1;
            break;
        }
    if (!open || !close || close < open)
        return -EINVAL;
    p = scan_blanks(close + 1, end);
    if (p >= end || scan_is_blank(*p))
        return -EINVAL;
    p = scan_token(p, end); /* field 3: the state letter */
    for (int f = 4; f <= PID_STAT_LAST_FIELD; f++) {
        p = scan_blanks(p, end);
        /* Field 4 (ppid) and the others we read are never negative; some we skip can be. */
        if (f == 4 || f == 14 || f == 15 || f == 20 || f == 22) {
            p = scan_u64(p, end, &v[f]);
            if (!p)
                return -EINVAL;
        } else {
            const char *q = scan_token(p, end);
            if (q == p)
                return -EINVAL;
            p = q;
        }
    }
    n = (size_t)(close - open - 1);
    if (n >= sizeof(out->comm))
        n = sizeof(out->comm) - 1;
    memcpy(out->comm, open + 1, n);
    out->comm[n] = '\0';
    out->ppid = (int)v[4];
    out->utime_ticks = v[14];
    out->stime_ticks = v[15];
    out->num_threads = v[20];
    out->start_ticks = v[22];
    return 0;
}

/* The field of the Process object each key of /proc/PID/io fills (pid_io.h's order). */
static const enum proc_field io_fields[PID_IO_COUNT] = {
    [PID_IO_RCHAR] = PROC_RCHAR,           [PID_IO_WCHAR] = PROC_WCHAR,
    [PID_IO_SYSCR] = PROC_SYSCR,           [PID_IO_SYSCW] = PROC_SYSCW,
    [PID_IO_READ_BYTES] = PROC_READ_BYTES, [PID_IO_WRITE_BYTES] = PROC_WRITE_BYTES,
};

int linux_parse_pid_io(const char *buf, size_t len, struct raw_row *row,
                       struct linux_parse_status *st)
{
    struct pid_io io;

    pid_io_parse(buf, len, &io);
    for (int k = 0; k < PID_IO_COUNT; k++)
        if (io.present & 1u << k) {
            row->v[io_fields[k]] = io.v[k];
            row->present |= 1ull << io_fields[k];
        }
    if (io.bad_lines && st) {
        if (!st->bad_lines)
            st->first_bad = io.first_bad;
        st->bad_lines += io.bad_lines;
    }
    return 0;
}
