/*
 * sbuf.h - a growable string for building SQL text and HTTP answers. Appends after an allocation
 * failure are ignored and remembered, so callers check once at the end (sbuf_ok).
 */
#ifndef PERFLOG_SBUF_H
#define PERFLOG_SBUF_H

#include "base/printf_attr.h"

#include <stddef.h>
#include <stdint.h>

struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
};

void sbuf_printf(struct sbuf *b, const char *fmt, ...) PERFLOG_PRINTF(2, 3);
void sbuf_append(struct sbuf *b, const char *s, size_t n); /* n bytes of s */
void sbuf_int(struct sbuf *b, int64_t v);                  /* decimal, without printf */
/* Append `s` as an SQL string literal: quoted, with ' doubled. */
void sbuf_sql_quote(struct sbuf *b, const char *s);
int sbuf_ok(const struct sbuf *b); /* 1 unless an allocation failed */
char *sbuf_take(struct sbuf *b);   /* the string (caller frees), or NULL after a failure */
void sbuf_free(struct sbuf *b);

#endif
