/*
 * linux_pid.c - /proc/PID/stat and /proc/PID/io (Documentation/filesystems/proc.rst, tables 1-2
 * and 1-4, "/proc/<pid>/io").
 */
#include "linux_parse.h"
#include "linux_scan.h"

#include <errno.h>
#include <string.h>

/*
 * stat is "pid (comm) state ppid ...": comm may hold blanks and parentheses, so it ends at the
 * LAST ')'. The fields after it are counted from 3 (state) as proc(5) numbers them.
 */
int parse_pid_stat(const char *buf, size_t len, struct pid_stat *out)
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

struct io_key {
    const char *key;
    enum proc_field field;
};

static const struct io_key io_keys[] = {
    {"rchar", PROC_RCHAR}, {"wchar", PROC_WCHAR},           {"syscr", PROC_SYSCR},
    {"syscw", PROC_SYSCW}, {"read_bytes", PROC_READ_BYTES}, {"write_bytes", PROC_WRITE_BYTES},
};

/* io is "key: value" lines; cancelled_write_bytes is not wanted (see the counter table). */
int parse_pid_io(const char *buf, size_t len, struct raw_row *row, struct parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end), *colon = memchr(p, ':', (size_t)(eol - p));

        lineno++;
        for (size_t i = 0; colon && i < sizeof(io_keys) / sizeof(io_keys[0]); i++) {
            size_t kn = strlen(io_keys[i].key);
            uint64_t v;

            if ((size_t)(colon - p) != kn || memcmp(p, io_keys[i].key, kn) != 0)
                continue;
            if (!scan_u64(scan_blanks(colon + 1, eol), eol, &v)) {
                st->bad_lines++;
                if (!st->first_bad)
                    st->first_bad = lineno;
                break;
            }
            row->v[io_keys[i].field] = v;
            row->present |= 1ull << io_keys[i].field;
            break;
        }
        p = scan_next_line(eol, end);
    }
    return 0;
}
