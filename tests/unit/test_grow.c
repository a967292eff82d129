/*
 * test_grow.c - grow_array (base/grow.c): doubling from `first`, no change while there is room,
 * the elements kept across a move, and the overflow refused with the array left as it was.
 */
#include "base/grow.h"
#include "testlib.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

struct item {
    int64_t a, b;
};

int main(void)
{
    struct item *v = NULL, *before;
    size_t n = 0, cap = 0;

    CHECK_INT(grow_array(&v, &cap, n, sizeof(*v), 4), 0);
    CHECK(v != NULL);
    CHECK_INT(cap, 4);
    for (int i = 0; i < 100; i++) {
        CHECK_INT(grow_array(&v, &cap, n, sizeof(*v), 4), 0);
        CHECK(n < cap);
        v[n++] = (struct item){i, -i};
    }
    CHECK_INT(cap, 128); /* 4, 8, ..., 128 */
    for (size_t i = 0; i < n; i++)
        CHECK(v[i].a == (int64_t)i && v[i].b == -(int64_t)i);
    /* room left: nothing changes */
    before = v;
    CHECK_INT(grow_array(&v, &cap, 50, sizeof(*v), 4), 0);
    CHECK(v == before);
    CHECK_INT(cap, 128);
    /* a size that would overflow: -ENOMEM, the array and its capacity untouched */
    cap = SIZE_MAX / 2 + 1;
    CHECK_INT(grow_array(&v, &cap, cap, sizeof(*v), 4), -ENOMEM);
    CHECK(v == before);
    CHECK(cap == SIZE_MAX / 2 + 1);
    cap = 128;
    CHECK_INT(grow_array(&v, &cap, cap, SIZE_MAX / 200, 4), -ENOMEM);
    CHECK(v == before && cap == 128);
    free(v);
    return tl_done();
}
