/*
 * fuzz_query.c - libFuzzer target for query.c. Checks that on success every key and value is a
 * NUL-terminated string inside q.buf, keys are non-empty and the bounds hold; that on failure n is
 * 0 and a reason is given; and that percent-encoding the parsed pairs again gives a query string
 * that parses to the same pairs.
 */
#include "web/query.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct query q, again;
static char enc[3 * (QUERY_MAX_BYTES + 2 * QUERY_MAX_PARAMS)];

/* The length of a string that must end inside buf, or a trap. */
static size_t inside(const struct query *qq, const char *p)
{
    const char *end = qq->buf + sizeof(qq->buf), *nul;

    if (p < qq->buf || p >= end)
        __builtin_trap();
    nul = memchr(p, '\0', (size_t)(end - p));
    if (!nul)
        __builtin_trap();
    return (size_t)(nul - p);
}

static size_t encode(char *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;

        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.') {
            out[n++] = (char)ch;
        } else if (ch == ' ') {
            out[n++] = '+';
        } else {
            out[n++] = '%';
            out[n++] = hex[ch >> 4];
            out[n++] = hex[ch & 15];
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *why = NULL;
    size_t total = 0, n = 0;
    int rc = query_parse((const char *)data, size, &q, &why);

    if (rc != 0) {
        if ((rc != -EINVAL && rc != -E2BIG) || q.n != 0 || why == NULL)
            __builtin_trap();
        return 0;
    }
    if (q.n > QUERY_MAX_PARAMS)
        __builtin_trap();
    for (size_t i = 0; i < q.n; i++) {
        size_t kl = inside(&q, q.p[i].key), vl = inside(&q, q.p[i].value);

        if (kl == 0)
            __builtin_trap();
        total += kl + vl;
        if (i > 0)
            enc[n++] = '&';
        n += encode(enc + n, q.p[i].key);
        enc[n++] = '=';
        n += encode(enc + n, q.p[i].value);
    }
    if (total > QUERY_MAX_BYTES)
        __builtin_trap();

    if (query_parse(enc, n, &again, NULL) != 0 || again.n != q.n)
        __builtin_trap();
    for (size_t i = 0; i < q.n; i++) {
        size_t pos = 0;

        if (strcmp(again.p[i].key, q.p[i].key) || strcmp(again.p[i].value, q.p[i].value))
            __builtin_trap();
        if (query_next(&q, q.p[i].key, &pos) != query_get(&q, q.p[i].key))
            __builtin_trap();
    }
    if (q.n > 0) {
        const char *known[] = {q.p[0].key, NULL};
        const char *unknown = query_unknown_key(&q, known);

        if (unknown && strcmp(unknown, q.p[0].key) == 0)
            __builtin_trap();
    }
    return 0;
}
