/*
 * pid_io.c - /proc/PID/io; see pid_io.h.
 */
#include "collectors/model/pid_io.h"

#include <string.h>

static const char *const pid_io_names[PID_IO_COUNT] = {
    [PID_IO_RCHAR] = "rchar",           [PID_IO_WCHAR] = "wchar",
    [PID_IO_SYSCR] = "syscr",           [PID_IO_SYSCW] = "syscw",
    [PID_IO_READ_BYTES] = "read_bytes", [PID_IO_WRITE_BYTES] = "write_bytes",
};

/* The number in p[0..end) after blanks, ending at a blank or `end`. 0, or -1 when there is none or
 * it does not fit 64 bits. */
static int value_of(const char *p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    const char *start;

    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    start = p;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        uint64_t d = (uint64_t)(*p - '0');

        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (p == start || (p < end && *p != ' ' && *p != '\t' && *p != '\r'))
        return -1;
    *out = v;
    return 0;
}

void pid_io_parse(const char *buf, size_t len, struct pid_io *out)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0;

    memset(out, 0, sizeof(*out));
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end, *colon = memchr(p, ':', (size_t)(eol - p));

        lineno++;
        for (int k = 0; colon && k < PID_IO_COUNT; k++) {
            size_t kn = strlen(pid_io_names[k]);

            if ((size_t)(colon - p) != kn || memcmp(p, pid_io_names[k], kn) != 0)
                continue;
            if (value_of(colon + 1, eol, &out->v[k]) < 0) {
                if (out->bad_lines++ == 0)
                    out->first_bad = lineno;
            } else {
                out->present |= 1u << k;
            }
            break;
        }
        p = nl ? nl + 1 : end;
    }
}
