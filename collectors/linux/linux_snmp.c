/*
 * linux_snmp.c - MIB groups of /proc/net/snmp and /proc/net/netstat: a "Group:" line of column
 * names, then a "Group:" line of values (net/ipv4/proc.c, snmp_seq_show_tcp_udp() and
 * netstat_seq_show()). Columns are found by name, since kernels have added some over time.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

#define MIB_MAX_COLS 16 /* wanted columns of one group at most */

/* One wanted column: its name in the header, the field of OBJ_TCP it fills. */
struct mib_col {
    const char *name;
    enum tcp_field field;
};

/* The group to read: lines starting with `prefix` ("Tcp:"), and the columns wanted of it. */
struct mib_group {
    const char *prefix;
    const struct mib_col *cols;
    size_t ncols;
};

static const struct mib_col tcp_cols[] = {
    {"InSegs", TCP_IN_SEGS},
    {"OutSegs", TCP_OUT_SEGS},
    {"RetransSegs", TCP_RETRANS_SEGS},
    {"CurrEstab", TCP_CURR_ESTAB},
};

static const struct mib_col tcpext_cols[] = {
    {"TCPTimeouts", TCP_TIMEOUTS},
    {"TCPLossProbes", TCP_LOSS_PROBES},
    {"TCPBacklogDrop", TCP_BACKLOG_DROP},
    {"TCPToZeroWindowAdv", TCP_TO_ZERO_WINDOW},
    {"TCPFromZeroWindowAdv", TCP_FROM_ZERO_WINDOW},
    {"ListenDrops", TCP_LISTEN_DROPS},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Column index (0 = first after the prefix) of each wanted column, -1 when the header lacks it. */
static void mib_header(const struct mib_group *g, const char *p, const char *eol, int *col)
{
    for (size_t k = 0; k < g->ncols; k++)
        col[k] = -1;
    for (int i = 0;; i++) {
        const char *name = scan_blanks(p, eol);
        size_t n;

        if (name == eol)
            return;
        p = scan_token(name, eol);
        n = (size_t)(p - name);
        for (size_t k = 0; k < g->ncols; k++)
            if (col[k] < 0 && strlen(g->cols[k].name) == n && memcmp(g->cols[k].name, name, n) == 0)
                col[k] = i;
    }
}

/* Read the wanted columns of a values line. Returns 1, 0 (malformed), -ENOMEM. */
static int mib_values(const struct mib_group *g, const char *p, const char *eol, const int *col,
                      struct raw_object *out)
{
    uint64_t v[MIB_MAX_COLS];
    uint64_t got = 0;
    struct raw_row *r;

    for (int i = 0;; i++) {
        const char *tok = scan_blanks(p, eol);
        size_t k = 0;

        if (tok == eol)
            break;
        while (k < g->ncols && col[k] != i)
            k++;
        if (k < g->ncols) {
            /* Wanted columns are unsigned; others (MaxConn is -1) are not checked. */
            p = scan_u64(tok, eol, &v[k]);
            if (!p)
                return 0;
            got |= 1ull << k;
        } else {
            p = scan_token(tok, eol);
        }
    }
    for (size_t k = 0; k < g->ncols; k++)
        if (col[k] >= 0 && !(got & (1ull << k)))
            return 0; /* fewer values than names */
    if (!got)
        return 1; /* the header names none of them: nothing to report, nothing wrong */
    r = scan_single_row(out);
    if (!r)
        return -ENOMEM;
    for (size_t k = 0; k < g->ncols; k++)
        if (got & (1ull << k)) {
            r->v[g->cols[k].field] = v[k];
            r->present |= 1ull << g->cols[k].field;
        }
    return 1;
}

/* Find the group's header line, read the values line after it; other groups are skipped. */
static int parse_mib(const struct mib_group *g, const char *buf, size_t len, struct raw_object *out,
                     struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0, header_line = 0, plen = strlen(g->prefix);
    int col[MIB_MAX_COLS];

    while (p < end) {
        const char *eol = scan_eol(p, end);
        int rc;

        lineno++;
        if ((size_t)(eol - p) >= plen && memcmp(p, g->prefix, plen) == 0) {
            if (!header_line) {
                mib_header(g, p + plen, eol, col);
                header_line = lineno;
            } else {
                rc = mib_values(g, p + plen, eol, col, out);
                if (rc < 0)
                    return rc;
                if (rc == 0)
                    scan_bad_line(st, lineno);
                return 0; /* nothing after the group is read */
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

int linux_parse_net_snmp(const char *buf, size_t len, struct raw_object *out,
                         struct linux_parse_status *st)
{
    static const struct mib_group tcp = {"Tcp:", tcp_cols, N(tcp_cols)};

    return parse_mib(&tcp, buf, len, out, st);
}

int parse_net_netstat(const char *buf, size_t len, struct raw_object *out,
                      struct linux_parse_status *st)
{
    static const struct mib_group tcpext = {"TcpExt:", tcpext_cols, N(tcpext_cols)};

    return parse_mib(&tcpext, buf, len, out, st);
}
