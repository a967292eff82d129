/*
 * linux_diskstats.c - /proc/diskstats (Documentation/admin-guide/iostats.rst): major, minor,
 * name, then the I/O statistics. Kernels 4.18+ add four discard columns and 5.5+ two flush columns
 * after the eleven read here.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

/*
 * Parse one line into a new row of `out`. Returns 1 (row added), 0 (malformed, no row), -ENOMEM.
 */
static int disk_line(const char *p, const char *eol, struct raw_object *out)
{
    const char *name;
    struct raw_row *r;
    uint64_t dev;

    /* Major and minor numbers: checked, not kept (the name identifies the device). */
    for (int i = 0; i < 2; i++) {
        p = scan_u64(scan_blanks(p, eol), eol, &dev);
        if (!p)
            return 0;
    }
    name = scan_blanks(p, eol);
    p = scan_token(name, eol);
    if (p == name)
        return 0;
    r = raw_object_add(out, name, (size_t)(p - name));
    if (!r)
        return -ENOMEM;
    for (int f = 0; f < DISK_NFIELDS; f++) {
        p = scan_u64(scan_blanks(p, eol), eol, &r->v[f]);
        if (!p) {
            out->n--;
            return 0;
        }
    }
    r->present = (1ull << DISK_NFIELDS) - 1;
    return 1;
}

int linux_parse_diskstats(const char *buf, size_t len, struct raw_object *out,
                          linux_parse_row_hook keep, void *ctx, struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end);
        int rc;

        lineno++;
        if (scan_blanks(p, eol) == eol) {
            p = scan_next_line(eol, end);
            continue; /* an empty line is not a device */
        }
        rc = disk_line(p, eol, out);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            scan_bad_line(st, lineno);
        } else if (keep) {
            rc = keep(ctx, &out->rows[out->n - 1]);
            if (rc < 0)
                return rc;
            if (rc == 0)
                out->n--;
        }
        p = scan_next_line(eol, end);
    }
    return 0;
}
