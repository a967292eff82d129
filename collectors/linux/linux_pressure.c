/*
 * linux_pressure.c - /proc/pressure/{io,memory,cpu} (Documentation/accounting/psi.rst):
 * "some avg10=A avg60=A avg300=A total=US" and a "full" line of the same form; the cpu file has
 * the full line only on 5.13+, all zeros at the system level, so it is not read.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

/* The fields of the some and full lines of each file; -1: not read. */
static const int psi_map[PSI_NRESOURCES][2] = {
    [PSI_RES_IO] = {PSI_IO_SOME_US, PSI_IO_FULL_US},
    [PSI_RES_MEMORY] = {PSI_MEM_SOME_US, PSI_MEM_FULL_US},
    [PSI_RES_CPU] = {PSI_CPU_SOME_US, -1},
};

/* The value of the "total=" token of [p, eol). Returns 1 and *us, or 0 when there is none. */
static int psi_total(const char *p, const char *eol, uint64_t *us)
{
    while ((p = scan_blanks(p, eol)) < eol) {
        const char *q = scan_token(p, eol);

        if (q - p > 6 && memcmp(p, "total=", 6) == 0)
            return scan_u64(p + 6, q, us) != NULL;
        p = q;
    }
    return 0;
}

int parse_pressure(const char *buf, size_t len, enum psi_resource res, struct raw_object *out,
                   struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0;

    if ((unsigned)res >= PSI_NRESOURCES)
        return -EINVAL;
    while (p < end) {
        const char *eol = scan_eol(p, end), *kind = scan_blanks(p, eol);
        const char *q = scan_token(kind, eol);
        int which = -1, f;
        uint64_t us;
        struct raw_row *r;

        lineno++;
        p = scan_next_line(eol, end);
        if (kind == eol)
            continue;
        if (q - kind == 4 && memcmp(kind, "some", 4) == 0)
            which = 0;
        else if (q - kind == 4 && memcmp(kind, "full", 4) == 0)
            which = 1;
        if (which < 0 || !psi_total(q, eol, &us)) {
            scan_bad_line(st, lineno);
            continue;
        }
        if ((f = psi_map[res][which]) < 0)
            continue;
        if (!(r = scan_single_row(out)))
            return -ENOMEM;
        r->v[f] = us;
        r->present |= 1ull << f;
    }
    return 0;
}
