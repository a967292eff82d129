/*
 * linux_snmp.c - the TCP group of /proc/net/snmp: a "Tcp:" line of column names, then a "Tcp:"
 * line of values (net/ipv4/proc.c, snmp_seq_show_tcp_udp()). Columns are found by name, since
 * kernels have added some over time.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

static const char *const tcp_names[TCP_NFIELDS] = {
    [TCP_IN_SEGS] = "InSegs",
    [TCP_OUT_SEGS] = "OutSegs",
    [TCP_RETRANS_SEGS] = "RetransSegs",
    [TCP_CURR_ESTAB] = "CurrEstab",
};

/* Column index (0 = first after "Tcp:") of each field, -1 when the header does not name it. */
static void snmp_header(const char *p, const char *eol, int col[TCP_NFIELDS])
{
    for (int f = 0; f < TCP_NFIELDS; f++)
        col[f] = -1;
    for (int i = 0;; i++) {
        const char *name = scan_blanks(p, eol);

        if (name == eol)
            return;
        p = scan_token(name, eol);
        for (int f = 0; f < TCP_NFIELDS; f++)
            if (col[f] < 0 && strlen(tcp_names[f]) == (size_t)(p - name) &&
                memcmp(tcp_names[f], name, (size_t)(p - name)) == 0)
                col[f] = i;
    }
}

/* Read the wanted columns of a values line. Returns 1, 0 (malformed), -ENOMEM. */
static int snmp_values(const char *p, const char *eol, const int col[TCP_NFIELDS],
                       struct raw_object *out)
{
    uint64_t v[TCP_NFIELDS];
    uint64_t present = 0;
    struct raw_row *r;

    for (int i = 0;; i++) {
        const char *tok = scan_blanks(p, eol);
        int f = 0;

        if (tok == eol)
            break;
        while (f < TCP_NFIELDS && col[f] != i)
            f++;
        if (f < TCP_NFIELDS) {
            /* Wanted columns are unsigned; others (MaxConn is -1) are not checked. */
            p = scan_u64(tok, eol, &v[f]);
            if (!p)
                return 0;
            present |= 1ull << f;
        } else {
            p = scan_token(tok, eol);
        }
    }
    for (int f = 0; f < TCP_NFIELDS; f++)
        if (col[f] >= 0 && !(present & (1ull << f)))
            return 0; /* fewer values than names */
    if (!present)
        return 1; /* the header names none of them: nothing to report, nothing wrong */
    r = scan_single_row(out);
    if (!r)
        return -ENOMEM;
    for (int f = 0; f < TCP_NFIELDS; f++)
        if (present & (1ull << f))
            r->v[f] = v[f];
    r->present |= present;
    return 1;
}

int linux_parse_net_snmp(const char *buf, size_t len, struct raw_object *out,
                         struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0, header_line = 0;
    int col[TCP_NFIELDS];

    while (p < end) {
        const char *eol = scan_eol(p, end);
        int rc;

        lineno++;
        if (eol - p >= 4 && memcmp(p, "Tcp:", 4) == 0) {
            if (!header_line) {
                snmp_header(p + 4, eol, col);
                header_line = lineno;
            } else {
                rc = snmp_values(p + 4, eol, col, out);
                if (rc < 0)
                    return rc;
                if (rc == 0)
                    scan_bad_line(st, lineno);
                return 0; /* nothing after the TCP group is read */
            }
        } else if (header_line) {
            scan_bad_line(st, header_line); /* a header with no values line */
            return 0;
        }
        p = scan_next_line(eol, end);
    }
    if (header_line)
        scan_bad_line(st, header_line);
    return 0;
}
