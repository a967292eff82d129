/*
 * query.h - the query string of a request URL (after the `?`), split into decoded key/value
 * pairs. Pure; thread-safe; no allocation beyond the caller's struct query.
 *
 * Rules (WHATWG application/x-www-form-urlencoded): pairs are separated by `&`; a pair without `=`
 * has an empty value; `+` is a space; `%XX` is a byte. Empty pairs ("a=1&&b=2") are skipped. A bad
 * escape (`%`, `%4`, `%zz`), a decoded NUL byte, more than QUERY_MAX_PARAMS pairs or more than
 * QUERY_MAX_BYTES decoded bytes in all is an error. Keys may repeat (counter=A&counter=B); order is
 * kept.
 *
 * Also: a pair with an empty key ("=b", "a=1&=b") is -EINVAL rather than skipped, since no
 * parameter has one and it is likelier a client bug; only the first `=` splits ("a=b=c" gives
 * "b=c"); a raw NUL byte is -EINVAL like a decoded one. Keys compare case-sensitively.
 */
#ifndef PERFLOG_QUERY_H
#define PERFLOG_QUERY_H

#include <stddef.h>

#define QUERY_MAX_PARAMS 64
#define QUERY_MAX_BYTES  8192

struct query_param {
    const char *key; /* NUL-terminated, points into query.buf */
    const char *value;
};

struct query {
    size_t n;
    struct query_param p[QUERY_MAX_PARAMS];
    char buf[QUERY_MAX_BYTES + 2 * QUERY_MAX_PARAMS]; /* decoded keys and values */
};

/*
 * Parse s[0..len) (not NUL-terminated, without the leading `?`) into *out. Returns 0, or -EINVAL
 * (bad escape or NUL byte) or -E2BIG (too many pairs or bytes). On error *out is left empty
 * (n = 0) and `why` (may be NULL) receives a static one-line reason.
 */
int query_parse(const char *s, size_t len, struct query *out, const char **why);

/* The first value of `key`, or NULL. */
const char *query_get(const struct query *q, const char *key);

/* Iterate the values of `key`: start with *pos = 0; returns the next value or NULL at the end. */
const char *query_next(const struct query *q, const char *key, size_t *pos);

/* Is every key of q in the NULL-terminated list `known`? Returns NULL if so, else the first
 * unknown key (so a handler can answer 400 "unknown parameter 'x'"). */
const char *query_unknown_key(const struct query *q, const char *const *known);

#endif
