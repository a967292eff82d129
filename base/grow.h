/*
 * grow.h - room for one more element at the end of a growing array, the one copy of the
 * "double the capacity, realloc, keep the old block on failure" every list of the code needs.
 */
#ifndef PERFLOG_GROW_H
#define PERFLOG_GROW_H

#include <stddef.h>

/*
 * `arrayp` is the address of the array pointer (a `struct x **`, passed as void *), `*cap` its
 * capacity in elements of `size` bytes, `n` how many are used. When n < *cap nothing changes;
 * else the array is reallocated to twice *cap (`first` when *cap is 0) and *arrayp and *cap are
 * updated. Returns 0, or -ENOMEM (out of memory, or the size would overflow) with *arrayp and *cap
 * unchanged: the old array is still the caller's. The new elements are not initialised.
 */
int grow_array(void *arrayp, size_t *cap, size_t n, size_t size, size_t first);

#endif
