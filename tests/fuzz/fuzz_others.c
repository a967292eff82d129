/*
 * fuzz_others.c - libFuzzer target for the pure parsers of collectors/linux/linux_others.c (cgroup
 * v2 io.stat, cgroup v1 blkio.throttle.io_service_bytes, "key value" files). Beyond "no crash, no
 * UB": only the documented errors, the outputs untouched on failure, and the same answer twice.
 */
#include "collectors/linux/linux_others.h"

#include <errno.h>
#include <stdint.h>

#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*pair_parser)(const char *buf, size_t len, uint64_t *r, uint64_t *w);

static void check_pair(pair_parser parse, const char *s, size_t len)
{
    uint64_t r = SENTINEL, w = SENTINEL, r2 = 0, w2 = 0;
    int rc = parse(s, len, &r, &w);

    if (rc != 0) {
        if (rc != -EINVAL || r != SENTINEL || w != SENTINEL)
            __builtin_trap();
        return;
    }
    if (parse(s, len, &r2, &w2) != 0 || r2 != r || w2 != w)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    uint64_t v = SENTINEL;
    int rc;

    check_pair(others_parse_io_stat, s, size);
    check_pair(others_parse_blkio_bytes, s, size);
    rc = others_parse_key(s, size, "nr_dirty_threshold", &v);
    if ((rc != 0 && rc != -ENOENT) || (rc != 0 && v != SENTINEL))
        __builtin_trap();
    return 0;
}
