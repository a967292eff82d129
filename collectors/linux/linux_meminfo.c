/*
 * linux_meminfo.c - /proc/meminfo (Documentation/filesystems/proc.rst, "meminfo"): one
 * "Key:   value kB" per line, values in KiB.
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

struct meminfo_key {
    const char *key;
    enum mem_field field;
};

static const struct meminfo_key meminfo_keys[] = {
    {"MemAvailable", MEM_AVAILABLE_KB}, {"Buffers", MEM_BUFFERS_KB},
    {"Cached", MEM_CACHED_KB},          {"Dirty", MEM_DIRTY_KB},
    {"Writeback", MEM_WRITEBACK_KB},
};

#define NKEYS (sizeof(meminfo_keys) / sizeof(meminfo_keys[0]))

/* The wanted key named by [p, colon), or NULL. Exact match: "Cached" is not "SwapCached"; a name
 * holding a NUL byte matches nothing. */
static const struct meminfo_key *meminfo_find(const char *p, const char *colon)
{
    size_t n = (size_t)(colon - p);

    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(meminfo_keys[i].key) == n && memcmp(meminfo_keys[i].key, p, n) == 0)
            return &meminfo_keys[i];
    return NULL;
}

int linux_parse_meminfo(const char *buf, size_t len, struct raw_object *out,
                        struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    struct raw_row *r = NULL;
    size_t lineno = 0, found = 0;

    /* The wanted keys are all near the top; stop once each has been seen. */
    while (p < end && found < NKEYS) {
        const char *eol = scan_eol(p, end);
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        const struct meminfo_key *k;
        uint64_t v;

        lineno++;
        if (!colon) {
            if (scan_blanks(p, eol) != eol)
                scan_bad_line(st, lineno);
            p = scan_next_line(eol, end);
            continue;
        }
        k = meminfo_find(p, colon);
        if (k) {
            if (!scan_u64(scan_blanks(colon + 1, eol), eol, &v)) {
                scan_bad_line(st, lineno);
            } else {
                if (!r && !(r = scan_single_row(out)))
                    return -ENOMEM;
                r->v[k->field] = v;
                r->present |= 1ull << k->field;
                found++;
            }
        }
        p = scan_next_line(eol, end);
    }
    return 0;
}
