/*
 * linux_scan.h - the few scanning primitives the /proc parsers share, inline because they run for
 * every column of every line on every tick. Private to collectors/linux/.
 *
 * A buffer is [p, end): it need not be NUL-terminated and its last line need not end in '\n'.
 */
#ifndef PERFLOG_LINUX_SCAN_H
#define PERFLOG_LINUX_SCAN_H

#include "collectors/linux/linux_parse.h"

#include <stdint.h>
#include <string.h>

static inline int scan_is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static inline const char *scan_blanks(const char *p, const char *end)
{
    while (p < end && scan_is_blank(*p))
        p++;
    return p;
}

/* The end of the line that starts at p: its '\n', or `end` for an unterminated last line. */
static inline const char *scan_eol(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* The start of the line after the one ending at eol (never past `end`). */
static inline const char *scan_next_line(const char *eol, const char *end)
{
    return eol < end ? eol + 1 : end;
}

/* Skip one token (a run of non-blanks) at p; returns the character after it. */
static inline const char *scan_token(const char *p, const char *end)
{
    while (p < end && !scan_is_blank(*p) && *p != '\n')
        p++;
    return p;
}

/*
 * Parse one unsigned decimal at p, which must then be followed by a blank, '\n' or `end`. Returns
 * the character after it and sets *out, or NULL (with *out untouched) when there is no digit, a
 * non-digit follows, or the number does not fit 64 bits.
 */
static inline const char *scan_u64(const char *p, const char *end, uint64_t *out)
{
    const char *start = p;
    uint64_t v = 0;

    while (p < end && (unsigned char)(*p - '0') <= 9) {
        uint64_t d = (uint64_t)(*p - '0');
        /* 19 digits always fit; only longer numbers need the overflow test. */
        if (p - start >= 19 && (v > (UINT64_MAX - d) / 10))
            return NULL;
        v = v * 10 + d;
        p++;
    }
    if (p == start || (p < end && !scan_is_blank(*p) && *p != '\n'))
        return NULL;
    *out = v;
    return p;
}

/* As scan_u64, for hexadecimal digits without a "0x" (/proc/net/softnet_stat). */
static inline const char *scan_hex_u64(const char *p, const char *end, uint64_t *out)
{
    const char *start = p;
    uint64_t v = 0;

    for (; p < end; p++) {
        unsigned d;

        if ((unsigned char)(*p - '0') <= 9)
            d = (unsigned)(*p - '0');
        else if ((unsigned char)((*p | 0x20) - 'a') <= 5)
            d = (unsigned)((*p | 0x20) - 'a') + 10;
        else
            break;
        if (p - start >= 16)
            return NULL; /* more than 64 bits */
        v = v << 4 | d;
    }
    if (p == start || (p < end && !scan_is_blank(*p) && *p != '\n'))
        return NULL;
    *out = v;
    return p;
}

/*
 * The row of `o` named [name, name + n), added when there is none; NULL on ENOMEM. *hint is where
 * to look first and is left just past the row found: the per-CPU files list CPUs in the order
 * /proc/stat did, so a whole pass over them costs one comparison per CPU, not a search.
 */
static inline struct raw_row *scan_named_row(struct raw_object *o, const char *name, size_t n,
                                             size_t *hint)
{
    struct raw_row *r;

    if (n >= COUNTER_NAME_MAX)
        n = COUNTER_NAME_MAX - 1; /* as raw_object_add truncates it */
    for (size_t k = 0; k < o->n; k++) {
        size_t i = (*hint + k) % o->n;

        if (strncmp(o->rows[i].name, name, n) == 0 && o->rows[i].name[n] == '\0') {
            *hint = i + 1;
            return &o->rows[i];
        }
    }
    r = raw_object_add(o, name, n);
    if (r)
        *hint = o->n;
    return r;
}

/* Count a skipped line; `st` may be NULL. */
static inline void scan_bad_line(struct linux_parse_status *st, size_t lineno)
{
    if (st && st->bad_lines++ == 0)
        st->first_bad = lineno;
}

/* The row of a single-instance object (instance ""), added if `o` has none yet; NULL on ENOMEM. */
static inline struct raw_row *scan_single_row(struct raw_object *o)
{
    return o->n ? &o->rows[0] : raw_object_add(o, "", 0);
}

#endif
