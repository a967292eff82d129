/*
 * fuzz_chunk.c - libFuzzer target for the series chunk codec (storage/chunk.c). Two halves,
 * chosen by the first byte:
 *   - even: the rest is a chunk to decode. Decoding reads nothing outside the input, fails only
 *     with the documented errors, and what it accepts encodes again into a chunk that decodes to
 *     the same points;
 *   - odd: the rest is read as points (9 bytes each: a tick step, a presence bit and a value) to
 *     encode; the chunk must decode to exactly those points.
 */
#include "chunk.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CAP 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t ticks[CAP], vals[CAP], ticks2[CAP], vals2[CAP];
static uint8_t pres[CAP], pres2[CAP];

/* Encode `p`, decode it into the second arrays, trap unless every point is the same. */
static void roundtrip(const struct chunk_points *p)
{
    struct chunk_points back = {.ticks = ticks2, .values = vals2, .present = pres2};
    uint8_t *buf = NULL;
    size_t len = 0;

    if (chunk_encode(p, &buf, &len) != 0)
        __builtin_trap();
    if (chunk_decode(buf, len, &back, CAP) != 0 || back.n != p->n)
        __builtin_trap();
    for (size_t i = 0; i < p->n; i++) {
        int present = p->present ? p->present[i] : 1;

        if (ticks2[i] != p->ticks[i] || pres2[i] != present ||
            (present && vals2[i] != p->values[i]))
            __builtin_trap();
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct chunk_points p = {.ticks = ticks, .values = vals, .present = pres};
    int rc;

    if (size < 1)
        return 0;
    if (!(data[0] & 1)) {
        long n = chunk_count(data + 1, size - 1);

        rc = chunk_decode(data + 1, size - 1, &p, CAP);
        if (rc != 0) {
            if ((rc != -EINVAL && rc != -ENOSPC) || p.n != 0)
                __builtin_trap();
            if (rc == -ENOSPC && n <= CAP)
                __builtin_trap();
            return 0;
        }
        if (n != (long)p.n)
            __builtin_trap();
        for (size_t i = 0; i < p.n; i++)
            if (!pres[i] && vals[i] != 0)
                __builtin_trap();
        roundtrip(&p);
        return 0;
    }
    {
        int64_t t = 0;
        size_t n = 0;

        for (size_t off = 1; off + 9 <= size && n < CAP; off += 9, n++) {
            uint64_t v = 0;

            memcpy(&v, data + off + 1, 8);
            t += 1 + (data[off] >> 1); /* steps of 1..128 */
            ticks[n] = t;
            pres[n] = data[off] & 1;
            vals[n] = (int64_t)v;
        }
        if (n == 0)
            return 0;
        p.n = n;
        roundtrip(&p);
    }
    return 0;
}
