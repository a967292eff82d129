/*
 * query.c - the query string of a request URL into decoded pairs (query.h), after the WHATWG URL
 * standard, "application/x-www-form-urlencoded parsing"
 * (https://url.spec.whatwg.org/#urlencoded-parsing), made strict: a bad escape is an error here,
 * where the standard would pass the `%` through, so a mistyped URL gets a 400 and not a surprise.
 */
#include "web/query.h"

#include "base/text.h"

#include <errno.h>
#include <string.h>

/* Where the decoder writes: out->buf[pos], with `bytes` decoded bytes (NULs not counted). */
struct qwriter {
    char *buf;
    size_t pos;
    size_t bytes;
};

/* Decode s[0..n) and append it with its NUL. The caller has made room for the NUL: at most
 * QUERY_MAX_PARAMS pairs, two NULs each, beyond QUERY_MAX_BYTES. */
static int decode(const char *s, size_t n, struct qwriter *w, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)s[i];

        if (ch == '+') {
            ch = ' ';
        } else if (ch == '%') {
            int hi = i + 2 < n ? text_hex_digit(s[i + 1]) : -1;
            int lo = hi >= 0 ? text_hex_digit(s[i + 2]) : -1;

            if (hi < 0 || lo < 0) {
                *why = "bad %-escape (a % must be followed by two hex digits)";
                return -EINVAL;
            }
            ch = hi * 16 + lo;
            i += 2;
        }
        if (ch == 0) {
            *why = "a NUL byte in the query string";
            return -EINVAL;
        }
        if (w->bytes >= QUERY_MAX_BYTES) {
            *why = "query string too long";
            return -E2BIG;
        }
        w->buf[w->pos++] = (char)ch;
        w->bytes++;
    }
    w->buf[w->pos++] = '\0';
    return 0;
}

/* One non-empty `key[=value]` pair. An empty key ("=b") is rejected: no parameter has one, and
 * it is more likely a client bug than something to ignore. */
static int add_pair(const char *s, size_t n, struct query *q, struct qwriter *w, const char **why)
{
    const char *eq = memchr(s, '=', n);
    size_t klen = eq ? (size_t)(eq - s) : n;
    struct query_param *p;
    int rc;

    if (klen == 0) {
        *why = "a parameter without a name";
        return -EINVAL;
    }
    if (q->n >= QUERY_MAX_PARAMS) {
        *why = "too many parameters";
        return -E2BIG;
    }
    p = &q->p[q->n];
    p->key = w->buf + w->pos;
    if ((rc = decode(s, klen, w, why)) < 0)
        return rc;
    p->value = w->buf + w->pos;
    if ((rc = decode(eq ? eq + 1 : s + n, eq ? n - klen - 1 : 0, w, why)) < 0)
        return rc;
    q->n++;
    return 0;
}

int query_parse(const char *s, size_t len, struct query *out, const char **why)
{
    struct qwriter w = {.buf = out->buf};
    const char *dummy;
    size_t start = 0;

    if (!why)
        why = &dummy;
    out->n = 0;
    while (start < len) {
        const char *amp = memchr(s + start, '&', len - start);
        size_t end = amp ? (size_t)(amp - s) : len;
        int rc;

        if (end > start && (rc = add_pair(s + start, end - start, out, &w, why)) < 0) {
            out->n = 0;
            return rc;
        }
        start = end + 1;
    }
    return 0;
}

const char *query_next(const struct query *q, const char *key, size_t *pos)
{
    for (size_t i = *pos; i < q->n; i++) {
        if (strcmp(q->p[i].key, key) == 0) {
            *pos = i + 1;
            return q->p[i].value;
        }
    }
    *pos = q->n;
    return NULL;
}

const char *query_get(const struct query *q, const char *key)
{
    size_t pos = 0;

    return query_next(q, key, &pos);
}

const char *query_unknown_key(const struct query *q, const char *const *known)
{
    for (size_t i = 0; i < q->n; i++) {
        size_t k = 0;

        while (known && known[k] && strcmp(known[k], q->p[i].key) != 0)
            k++;
        if (!known || !known[k])
            return q->p[i].key;
    }
    return NULL;
}
