/*
 * linux_stat.c - /proc/stat, the per-CPU jiffies (Documentation/filesystems/proc.rst, 1.8).
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

/*
 * One "cpu..." line, p just after "cpu". Returns 1 for a row added, 0 for a malformed line (no
 * row), -ENOMEM.
 */
static int stat_cpu_line(const char *p, const char *eol, struct raw_object *out)
{
    const char *id = p;
    struct raw_row *r;
    int n = 0;

    while (p < eol && (unsigned char)(*p - '0') <= 9)
        p++;
    if (p == eol || !scan_is_blank(*p))
        return 0; /* "cpuX" with X not a number, or nothing after the name */
    r = p == id ? raw_object_add(out, "_Total", 6) : raw_object_add(out, id, (size_t)(p - id));
    if (!r)
        return -ENOMEM;
    /* Columns in enum cpu_field order up to steal; guest and guest_nice after it are not read,
     * nor are the fields after CPU_STEAL, which other files fill. */
    while (n <= CPU_STEAL) {
        p = scan_blanks(p, eol);
        if (p == eol)
            break;
        p = scan_u64(p, eol, &r->v[n]);
        if (!p)
            break;
        r->present |= 1ull << n;
        n++;
    }
    if (!p || n <= CPU_IDLE) {
        out->n--; /* non-numeric column, or not even user nice system idle */
        return 0;
    }
    return 1;
}

int linux_parse_proc_stat(const char *buf, size_t len, struct raw_object *out,
                          struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end);
        size_t n = (size_t)(eol - p);

        lineno++;
        if (n >= 3 && memcmp(p, "cpu", 3) == 0) {
            int rc = stat_cpu_line(p + 3, eol, out);
            if (rc < 0)
                return rc;
            if (rc == 0)
                scan_bad_line(st, lineno);
        } else if (n >= 5 && memcmp(p, "intr ", 5) == 0) {
            /* The cpu lines come first; what follows "intr" (one column per IRQ, the bulk of
             * the file on big machines) holds nothing we read. */
            break;
        }
        p = scan_next_line(eol, end);
    }
    return 0;
}
