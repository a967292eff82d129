/*
 * linux_softnet.c - /proc/net/softnet_stat (net/core/net-procfs.c, softnet_seq_show()): one line
 * of %08x columns per online CPU: processed, dropped, time_squeeze, six zeros (fields since
 * removed), received_rps, flow_limit_count, and on 5.10+ the backlog length and the CPU's id;
 * later kernels add more after those.
 * Offline CPUs have no line, so before 5.10 the line index is the CPU id only while every CPU is
 * online, which is the best those kernels tell.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>
#include <stdint.h>

#define SOFTNET_MIN_COLS 3
#define SOFTNET_CPU_COL  12 /* 0-based: the CPU id, where the line has it */
#define SOFTNET_MAX_COLS 64 /* more on one line is not this file */

/* Read one line's columns into x. Returns how many, or 0 when one is not a hex number. */
static size_t softnet_cols(const char *p, const char *eol, uint64_t *x)
{
    size_t n = 0;

    while ((p = scan_blanks(p, eol)) < eol) {
        if (n == SOFTNET_MAX_COLS || !(p = scan_hex_u64(p, eol, &x[n])))
            return 0;
        n++;
    }
    return n;
}

/* v in decimal into buf (21 bytes at least), NUL-terminated; returns the length. Not snprintf: on
 * the sampler's cold wake-up its code was 3% of the sampler's time for the two lines of a 2-CPU
 * machine (bench/README.md). */
static size_t format_u64(char *buf, uint64_t v)
{
    char t[20];
    size_t n = 0;

    do
        t[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = t[n - 1 - i];
    buf[n] = '\0';
    return n;
}

int parse_softnet_stat(const char *buf, size_t len, struct raw_object *out,
                       struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 0, index = 0, hint = 0;
    uint64_t dropped = 0, squeezed = 0;
    int any = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end);
        uint64_t x[SOFTNET_MAX_COLS];
        char id[24];
        size_t n, idlen;
        struct raw_row *r;

        lineno++;
        if (scan_blanks(p, eol) == eol) {
            p = scan_next_line(eol, end);
            continue;
        }
        n = softnet_cols(p, eol, x);
        p = scan_next_line(eol, end);
        if (n < SOFTNET_MIN_COLS) {
            scan_bad_line(st, lineno);
            continue;
        }
        idlen = format_u64(id, n > SOFTNET_CPU_COL ? x[SOFTNET_CPU_COL] : index);
        index++;
        if (!(r = scan_named_row(out, id, idlen, &hint)))
            return -ENOMEM;
        r->v[CPU_NET_DROPPED] = x[1];
        r->v[CPU_NET_SQUEEZED] = x[2];
        r->present |= (1ull << CPU_NET_DROPPED) | (1ull << CPU_NET_SQUEEZED);
        /* The _Total of 32-bit counters wraps like them, so a wrap of one CPU's stays a wrap. */
        dropped = (uint32_t)(dropped + x[1]);
        squeezed = (uint32_t)(squeezed + x[2]);
        any = 1;
    }
    if (any) {
        struct raw_row *r = scan_named_row(out, "_Total", 6, &hint);

        if (!r)
            return -ENOMEM;
        r->v[CPU_NET_DROPPED] = dropped;
        r->v[CPU_NET_SQUEEZED] = squeezed;
        r->present |= (1ull << CPU_NET_DROPPED) | (1ull << CPU_NET_SQUEEZED);
    }
    return 0;
}
