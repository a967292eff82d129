/*
 * linux_softirqs.c - /proc/softirqs (kernel/softirq.c, show_softirqs()): a header of "CPUn" names,
 * one column per possible CPU, then one "NAME:" line per softirq with a count per column.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

static const struct {
    const char *name;
    enum cpu_field field;
} softirq_lines[] = {
    {"NET_RX:", CPU_SI_NET_RX},
    {"NET_TX:", CPU_SI_NET_TX},
    {"BLOCK:", CPU_SI_BLOCK},
    {"TIMER:", CPU_SI_TIMER},
};

#define NLINES (sizeof(softirq_lines) / sizeof(softirq_lines[0]))

/* The wanted softirq named by the token [p, q), or -1. */
static int softirq_find(const char *p, const char *q)
{
    for (size_t i = 0; i < NLINES; i++)
        if (strlen(softirq_lines[i].name) == (size_t)(q - p) &&
            memcmp(softirq_lines[i].name, p, (size_t)(q - p)) == 0)
            return (int)i;
    return -1;
}

/* 1 when every token of the header [h, hend) is "CPU" and digits; counts them in *ncols. */
static int softirq_header(const char *h, const char *hend, size_t *ncols)
{
    size_t n = 0;

    while ((h = scan_blanks(h, hend)) < hend) {
        const char *q = scan_token(h, hend), *d = h + 3;

        if (q - h < 4 || memcmp(h, "CPU", 3) != 0)
            return 0;
        while (d < q && (unsigned char)(*d - '0') <= 9)
            d++;
        if (d != q)
            return 0;
        n++;
        h = q;
    }
    *ncols = n;
    return n > 0;
}

/* 1 when [p, eol) holds exactly ncols numbers. */
static int softirq_values_ok(const char *p, const char *eol, size_t ncols)
{
    uint64_t v;

    for (size_t i = 0; i < ncols; i++) {
        p = scan_u64(scan_blanks(p, eol), eol, &v);
        if (!p)
            return 0;
    }
    return scan_blanks(p, eol) == eol;
}

/* Store one well-formed line: column i to the CPU named by header token i, the sum to _Total. */
static int softirq_store(const char *h, const char *hend, const char *p, const char *eol,
                         enum cpu_field f, struct raw_object *out)
{
    size_t hint = 0;
    uint64_t v = 0, sum = 0;
    struct raw_row *r;

    while ((h = scan_blanks(h, hend)) < hend) {
        const char *q = scan_token(h, hend);

        p = scan_u64(scan_blanks(p, eol), eol, &v);
        if (!(r = scan_named_row(out, h + 3, (size_t)(q - h - 3), &hint)))
            return -ENOMEM;
        r->v[f] = v;
        r->present |= 1ull << f;
        sum = (uint32_t)(sum + v); /* a 32-bit total wraps as its parts do (FIELD_CUM_U32) */
        h = q;
    }
    if (!(r = scan_named_row(out, "_Total", 6, &hint)))
        return -ENOMEM;
    r->v[f] = sum;
    r->present |= 1ull << f;
    return 0;
}

int parse_softirqs(const char *buf, size_t len, struct raw_object *out,
                   struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len, *h, *hend;
    size_t lineno = 1, ncols, found = 0;

    if (len == 0)
        return 0;
    h = p;
    hend = scan_eol(p, end);
    if (!softirq_header(h, hend, &ncols)) {
        scan_bad_line(st, 1);
        return 0; /* without CPU names no column can be placed */
    }
    p = scan_next_line(hend, end);
    while (p < end && found < NLINES) {
        const char *eol = scan_eol(p, end);
        const char *name = scan_blanks(p, eol), *q = scan_token(name, eol);
        int i;

        lineno++;
        i = softirq_find(name, q);
        if (i >= 0) {
            if (!softirq_values_ok(q, eol, ncols)) {
                scan_bad_line(st, lineno);
            } else {
                int rc = softirq_store(h, hend, q, eol, softirq_lines[i].field, out);
                if (rc < 0)
                    return rc;
                found++;
            }
        }
        p = scan_next_line(eol, end);
    }
    return 0;
}
