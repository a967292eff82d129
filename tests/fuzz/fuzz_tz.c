/*
 * fuzz_tz.c - libFuzzer target for tz.c. The input is a TZif file of `size` bytes (ASan catches a
 * read past it). Checks that tz_from_tzif returns 0 or -EINVAL (never more), and that a zone it
 * accepts gives an offset within a day of UTC at instants from 1800 to 2200 (its footer's POSIX
 * rule past the last transition), from the zone and from its copy alike. Seeds: the tz database's
 * Europe/ zones (scripts/fuzz.sh).
 */
#include "tz.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tz_zone *z = NULL, *c;
    int rc = tz_from_tzif("fuzz", data, size, &z);

    if (rc != 0 && rc != -EINVAL && rc != -ENOMEM)
        abort();
    if (rc != 0)
        return 0;
    c = tz_copy(z);
    for (int64_t t = -5364662400LL; t < 7258118400LL; t += 86400LL * 97 + 3607) {
        int dst = -1;
        int32_t off = tz_offset_at(z, t, &dst);

        if (off < -26 * 3600 || off > 26 * 3600 || (dst != 0 && dst != 1))
            abort();
        if (c && tz_offset_at(c, t, NULL) != off)
            abort();
    }
    tz_free(c);
    tz_free(z);
    return 0;
}
