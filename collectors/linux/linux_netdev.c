/*
 * linux_netdev.c - /proc/net/dev: two header lines, then "name: " and sixteen counters, eight
 * received (bytes packets errs drop fifo frame compressed multicast) and eight transmitted (bytes
 * packets errs drop fifo colls carrier compressed), see dev_seq_printf_stats() in
 * net/core/net-procfs.c. Older kernels print no blank between the colon and a wide first number.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

#define NETDEV_COLUMNS 12 /* read up to the transmit drop count */

/* Where each of the first twelve columns goes; -1: checked, not kept. */
static const signed char netdev_field[NETDEV_COLUMNS] = {
    NET_RX_BYTES,   /* receive: bytes */
    NET_RX_PACKETS, /* packets */
    NET_RX_ERRS,    /* errs */
    NET_RX_DROP,    /* drop */
    -1,             /* fifo */
    -1,             /* frame */
    -1,             /* compressed */
    -1,             /* multicast */
    NET_TX_BYTES,   /* transmit: bytes */
    NET_TX_PACKETS, /* packets */
    NET_TX_ERRS,    /* errs */
    NET_TX_DROP,    /* drop */
};

/*
 * Parse one line into a new row of `out`, `colon` being its first ':'. Returns 1 (row added),
 * 0 (malformed, no row), -ENOMEM.
 */
static int netdev_line(const char *p, const char *colon, const char *eol, struct raw_object *out)
{
    const char *name = scan_blanks(p, colon);
    struct raw_row *r;
    uint64_t v;

    /* Interface names hold no blanks or colons (dev_valid_name() in net/core/dev.c). */
    if (name == colon || scan_token(name, colon) != colon)
        return 0;
    r = raw_object_add(out, name, (size_t)(colon - name));
    if (!r)
        return -ENOMEM;
    p = colon + 1;
    for (int i = 0; i < NETDEV_COLUMNS; i++) {
        p = scan_u64(scan_blanks(p, eol), eol, &v);
        if (!p) {
            out->n--;
            return 0;
        }
        if (netdev_field[i] >= 0) {
            r->v[netdev_field[i]] = v;
            r->present |= 1ull << netdev_field[i];
        }
    }
    return 1;
}

int linux_parse_net_dev(const char *buf, size_t len, struct raw_object *out,
                        linux_parse_row_hook keep, void *ctx, struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end);
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        int rc;

        lineno++;
        if (!colon && (memchr(p, '|', (size_t)(eol - p)) || scan_blanks(p, eol) == eol)) {
            p = scan_next_line(eol, end);
            continue; /* a header line ("Inter-|   Receive ..."), or an empty one */
        }
        rc = colon ? netdev_line(p, colon, eol, out) : 0;
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
