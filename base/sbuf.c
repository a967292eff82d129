/*
 * sbuf.c - growable string; see sbuf.h.
 */
#include "base/sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sbuf_reserve(struct sbuf *b, size_t extra)
{
    size_t cap;
    char *s;

    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    /* Format into the spare room first: most appends fit, and then they cost one pass. */
    if (sbuf_reserve(b, 64) < 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= b->cap - b->len) {
        if (sbuf_reserve(b, (size_t)n) < 0)
            return;
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void sbuf_append(struct sbuf *b, const char *s, size_t n)
{
    if (sbuf_reserve(b, n) < 0)
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sbuf_int(struct sbuf *b, int64_t v)
{
    char buf[24], *p = buf + sizeof(buf);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    sbuf_append(b, p, (size_t)(buf + sizeof(buf) - p));
}

void sbuf_sql_quote(struct sbuf *b, const char *s)
{
    sbuf_printf(b, "'");
    for (const char *p = s; *p; p++)
        sbuf_printf(b, *p == '\'' ? "''" : "%c", *p);
    sbuf_printf(b, "'");
}

int sbuf_ok(const struct sbuf *b)
{
    return !b->oom;
}

char *sbuf_take(struct sbuf *b)
{
    char *s = b->oom ? NULL : b->s;

    if (b->oom)
        free(b->s);
    if (s == NULL && !b->oom)
        s = calloc(1, 1);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
    return s;
}

void sbuf_free(struct sbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
