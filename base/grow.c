/*
 * grow.c - growing arrays; see grow.h.
 */
#include "base/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int grow_array(void *arrayp, size_t *cap, size_t n, size_t size, size_t first)
{
    size_t ncap = *cap ? *cap * 2 : first;
    void *p, *np;

    if (n < *cap)
        return 0;
    if (ncap < *cap || ncap == 0 || size == 0 || ncap > SIZE_MAX / size)
        return -ENOMEM;
    /* The pointer is read and written as bytes: arrayp points to a `struct x *`, not a void *,
     * and an access through another pointer type would break the aliasing rules. */
    memcpy(&p, arrayp, sizeof(p));
    np = realloc(p, ncap * size);
    if (!np)
        return -ENOMEM;
    memcpy(arrayp, &np, sizeof(np));
    *cap = ncap;
    return 0;
}
