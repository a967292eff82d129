/*
 * linux_diskstats.c - /proc/diskstats (Documentation/admin-guide/iostats.rst): major, minor,
 * name, then the I/O statistics: eleven columns on every kernel, then four discard columns on
 * 4.18+ and two flush columns on 5.5+. A kernel without a group leaves its fields not present (no
 * value, not zero).
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

#define DISK_EXTRA_COLS 6 /* discards: ios merges sectors ms; flushes: ios ms */

/* The discard and flush groups after the eleven columns at p. Returns 0 for a non-numeric one. */
static int disk_extra(const char *p, const char *eol, struct raw_row *r)
{
    uint64_t x[DISK_EXTRA_COLS];
    int n = 0;

    while (n < DISK_EXTRA_COLS && (p = scan_blanks(p, eol)) < eol) {
        p = scan_u64(p, eol, &x[n]);
        if (!p)
            return 0;
        n++;
    }
    if (n >= 4) {
        r->v[DISK_DISCARD_IOS] = x[0];
        r->present |= 1ull << DISK_DISCARD_IOS;
    }
    if (n >= 6) {
        r->v[DISK_FLUSH_IOS] = x[4];
        r->v[DISK_FLUSH_MS] = x[5];
        r->present |= (1ull << DISK_FLUSH_IOS) | (1ull << DISK_FLUSH_MS);
    }
    return 1;
}

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
    for (int f = 0; f <= DISK_QUEUE_MS; f++) {
        p = scan_u64(scan_blanks(p, eol), eol, &r->v[f]);
        if (!p) {
            out->n--;
            return 0;
        }
    }
    r->present = (1ull << (DISK_QUEUE_MS + 1)) - 1;
    return disk_extra(p, eol, r) ? 1 : (out->n--, 0);
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
