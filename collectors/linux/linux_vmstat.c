/*
 * linux_vmstat.c - /proc/vmstat: one "name value" per line (mm/vmstat.c, vmstat_text[]).
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

struct vmstat_key {
    const char *key;
    enum mem_field field;
    int pages; /* a page count, converted to KiB */
};

static const struct vmstat_key vmstat_keys[] = {
    {"nr_dirtied", MEM_DIRTIED_KB, 1},
    {"nr_written", MEM_WRITTEN_KB, 1},
    {"pgpgin", MEM_PGPGIN_KB, 0},
    {"pgpgout", MEM_PGPGOUT_KB, 0},
    {"pgfault", MEM_PGFAULT, 0},
    {"pgmajfault", MEM_PGMAJFAULT, 0},
    /* The writeback thresholds, computed by the kernel at each read (mm/vmstat.c). */
    {"nr_dirty_threshold", MEM_DIRTY_THRESH_KB, 1},
    {"nr_dirty_background_threshold", MEM_DIRTY_BG_THRESH_KB, 1},
};

#define NKEYS (sizeof(vmstat_keys) / sizeof(vmstat_keys[0]))

/* The wanted key named by [p, blank), or NULL. Exact match: "pgfault" is not "pgmajfault", and a
 * name holding a NUL byte matches nothing (strncmp would stop at it and index past the key). */
static const struct vmstat_key *vmstat_find(const char *p, const char *blank)
{
    size_t n = (size_t)(blank - p);

    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(vmstat_keys[i].key) == n && memcmp(vmstat_keys[i].key, p, n) == 0)
            return &vmstat_keys[i];
    return NULL;
}

int linux_parse_vmstat(const char *buf, size_t len, long page_size, struct raw_object *out,
                       struct linux_parse_status *st)
{
    const char *p = buf, *end = buf + len;
    struct raw_row *r = NULL;
    size_t lineno = 0, found = 0;

    if (page_size < 1024 || page_size % 1024)
        return -EINVAL;
    /* Stop once each wanted key has been seen: the file has some two hundred lines. */
    while (p < end && found < NKEYS) {
        const char *eol = scan_eol(p, end);
        const char *key = scan_blanks(p, eol);
        const char *blank = scan_token(key, eol);
        const struct vmstat_key *k;
        uint64_t v;

        lineno++;
        if (key == eol) {
            p = scan_next_line(eol, end);
            continue;
        }
        k = vmstat_find(key, blank);
        if (blank == eol) {
            scan_bad_line(st, lineno); /* a name without a value */
        } else if (k) {
            if (!scan_u64(scan_blanks(blank, eol), eol, &v)) {
                scan_bad_line(st, lineno);
            } else {
                if (!r && !(r = scan_single_row(out)))
                    return -ENOMEM;
                /* pages * page_size / 1024, without overflow for any page count */
                r->v[k->field] = k->pages ? v * (uint64_t)(page_size / 1024) : v;
                r->present |= 1ull << k->field;
                found++;
            }
        }
        p = scan_next_line(eol, end);
    }
    return 0;
}

size_t vmstat_extent(const char *buf, size_t len, int *complete)
{
    const char *p = buf, *end = buf + len;
    size_t found = 0, ext = 0;

    while (p < end && found < NKEYS) {
        const char *eol = scan_eol(p, end);
        const char *key = scan_blanks(p, eol);

        if (vmstat_find(key, scan_token(key, eol))) {
            found++;
            ext = (size_t)(scan_next_line(eol, end) - buf);
        }
        p = scan_next_line(eol, end);
    }
    *complete = found == NKEYS;
    return ext;
}
