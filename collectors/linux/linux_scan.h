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
