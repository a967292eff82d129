/*
 * test_query.c - query strings: decoding (+, %XX), empty pairs and values, the strict errors
 * (bad escapes, NUL, an empty key), the bounds (64 pairs, 8192 decoded bytes), repeated keys in
 * order, and the unknown-key check.
 */
#include "testlib.h"
#include "web/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static struct query q; /* large: keep it off the stack */

static int qp(const char *s)
{
    const char *why = NULL;
    int rc = query_parse(s, strlen(s), &q, &why);

    if (rc < 0) {
        CHECK_INT(q.n, 0);
        CHECK(why != NULL && why[0] != '\0');
    }
    return rc;
}

static void test_basic(void)
{
    size_t pos;

    CHECK_INT(qp(""), 0);
    CHECK_INT(q.n, 0);
    CHECK(query_get(&q, "a") == NULL);

    CHECK_INT(qp("start=-1h&end=now&step=60"), 0);
    CHECK_INT(q.n, 3);
    CHECK_STR(q.p[0].key, "start");
    CHECK_STR(q.p[0].value, "-1h");
    CHECK_STR(query_get(&q, "end"), "now");
    CHECK_STR(query_get(&q, "step"), "60");
    CHECK(query_get(&q, "Step") == NULL); /* keys are case-sensitive */

    /* + is a space, %2B is a plus, escapes in keys too, either case of hex digit. */
    CHECK_INT(qp("counter=%5CMemory%5cAvailable+Bytes&t=now%2B1h&%73tep=1%2b1"), 0);
    CHECK_STR(query_get(&q, "counter"), "\\Memory\\Available Bytes");
    CHECK_STR(query_get(&q, "t"), "now+1h");
    CHECK_STR(query_get(&q, "step"), "1+1");
    CHECK_INT(qp("a=%C3%A4&b=%ff"), 0);
    CHECK_STR(query_get(&q, "a"), "\xc3\xa4");
    CHECK_STR(query_get(&q, "b"), "\xff");

    /* Empty pairs are skipped; a pair without `=` or with nothing after it has an empty value. */
    CHECK_INT(qp("a=1&&b=2&"), 0);
    CHECK_INT(q.n, 2);
    CHECK_STR(query_get(&q, "b"), "2");
    CHECK_INT(qp("&&&"), 0);
    CHECK_INT(q.n, 0);
    CHECK_INT(qp("a=&flag&c=="), 0);
    CHECK_INT(q.n, 3);
    CHECK_STR(query_get(&q, "a"), "");
    CHECK_STR(query_get(&q, "flag"), "");
    CHECK_STR(query_get(&q, "c"), "="); /* only the first = splits */
    CHECK_INT(qp("a=b=c"), 0);
    CHECK_STR(query_get(&q, "a"), "b=c");
    CHECK_INT(qp("%3D=%26"), 0);
    CHECK_STR(query_get(&q, "="), "&");

    /* Repeated keys keep their order. */
    CHECK_INT(qp("counter=A&x=1&counter=B&counter=C"), 0);
    CHECK_STR(query_get(&q, "counter"), "A");
    pos = 0;
    CHECK_STR(query_next(&q, "counter", &pos), "A");
    CHECK_STR(query_next(&q, "counter", &pos), "B");
    CHECK_STR(query_next(&q, "counter", &pos), "C");
    CHECK(query_next(&q, "counter", &pos) == NULL);
    CHECK(query_next(&q, "counter", &pos) == NULL);
    pos = 0;
    CHECK(query_next(&q, "nope", &pos) == NULL);

    /* Only len bytes are read. */
    CHECK_INT(query_parse("a=1&b=2", 3, &q, NULL), 0);
    CHECK_INT(q.n, 1);
    CHECK_STR(query_get(&q, "a"), "1");
}

static void test_errors(void)
{
    const char *why = NULL;

    CHECK_INT(qp("a=%zz"), -EINVAL);
    CHECK_INT(qp("a=%"), -EINVAL);
    CHECK_INT(qp("a=%4"), -EINVAL);
    CHECK_INT(qp("a=%4g"), -EINVAL);
    CHECK_INT(qp("a=1%"), -EINVAL);
    CHECK_INT(qp("a%=1"), -EINVAL);
    CHECK_INT(qp("a=%%41"), -EINVAL);
    CHECK_INT(qp("a=%00"), -EINVAL);
    CHECK_INT(qp("%00=1"), -EINVAL);
    CHECK_INT(query_parse("a=1\0b", 5, &q, &why), -EINVAL);
    CHECK_INT(q.n, 0);
    /* An empty key is rejected rather than skipped: it is a client bug. */
    CHECK_INT(qp("=b"), -EINVAL);
    CHECK_INT(qp("a=1&=b"), -EINVAL);
    CHECK_INT(qp("="), -EINVAL);
    /* A later error empties what was parsed before it. */
    CHECK_INT(qp("a=1&b=2&c=%"), -EINVAL);
    CHECK_INT(q.n, 0);
    CHECK(query_get(&q, "a") == NULL);
    CHECK_INT(query_parse("x=%zz", 5, &q, NULL), -EINVAL);
}

static void test_bounds(void)
{
    char *s = malloc(3 * QUERY_MAX_BYTES);
    size_t n = 0;

    /* 64 pairs pass, 65 do not. */
    for (int i = 0; i < QUERY_MAX_PARAMS; i++)
        n += (size_t)sprintf(s + n, "%sk%d=v", i ? "&" : "", i);
    CHECK_INT(query_parse(s, n, &q, NULL), 0);
    CHECK_INT(q.n, QUERY_MAX_PARAMS);
    CHECK_STR(q.p[63].key, "k63");
    s[n] = '&';
    CHECK_INT(query_parse(s, n + 1, &q, NULL), 0); /* a trailing & adds no pair */
    strcpy(s + n, "&k64=v");
    CHECK_INT(query_parse(s, n + 6, &q, NULL), -E2BIG);
    CHECK_INT(q.n, 0);
    strcpy(s + n, "&&&&");
    CHECK_INT(query_parse(s, n + 4, &q, NULL), 0);

    /* 8192 decoded bytes pass, 8193 do not; escapes count decoded. */
    memset(s, 'x', 3 * QUERY_MAX_BYTES);
    s[0] = 'k';
    s[1] = '=';
    CHECK_INT(query_parse(s, QUERY_MAX_BYTES + 1, &q, NULL), 0); /* '=' is not a byte */
    CHECK_INT(strlen(q.p[0].value), QUERY_MAX_BYTES - 1);
    CHECK_INT(query_parse(s, QUERY_MAX_BYTES + 2, &q, NULL), -E2BIG);
    n = 0;
    for (int i = 0; i < QUERY_MAX_BYTES / 2; i++)
        n += (size_t)sprintf(s + n, "%%41");
    CHECK_INT(query_parse(s, n, &q, NULL), 0);
    CHECK_INT(q.n, 1);
    CHECK_INT(strlen(q.p[0].key), QUERY_MAX_BYTES / 2);

    /* Both bounds at once: 64 pairs filling all 8192 bytes still fit in buf with their NULs. */
    n = 0;
    for (int i = 0; i < QUERY_MAX_PARAMS; i++) {
        s[n++] = i ? '&' : 'k';
        if (i)
            s[n++] = 'k';
        s[n++] = '=';
        memset(s + n, 'v', QUERY_MAX_BYTES / QUERY_MAX_PARAMS - 1);
        n += QUERY_MAX_BYTES / QUERY_MAX_PARAMS - 1;
    }
    CHECK_INT(query_parse(s, n, &q, NULL), 0);
    CHECK_INT(q.n, QUERY_MAX_PARAMS);
    CHECK_INT(q.p[63].value + strlen(q.p[63].value) + 1 - q.buf, sizeof(q.buf));
    free(s);
}

static void test_unknown_key(void)
{
    static const char *const known[] = {"counter", "start", "end", "step", NULL};
    static const char *const none[] = {NULL};

    CHECK_INT(qp("counter=A&start=-1h&counter=B"), 0);
    CHECK(query_unknown_key(&q, known) == NULL);
    CHECK_INT(qp("counter=A&strat=-1h&bogus=1"), 0);
    CHECK_STR(query_unknown_key(&q, known), "strat");
    CHECK_STR(query_unknown_key(&q, none), "counter");
    CHECK_INT(qp(""), 0);
    CHECK(query_unknown_key(&q, none) == NULL);
    CHECK_INT(qp("Counter=A"), 0);
    CHECK_STR(query_unknown_key(&q, known), "Counter");
}

int main(void)
{
    test_basic();
    test_errors();
    test_bounds();
    test_unknown_key();
    return tl_done();
}
