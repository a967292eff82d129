/*
 * linux_sysfs.c - one-value sysfs attributes (Documentation/ABI/testing/sysfs-class-net).
 */
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <errno.h>

int linux_parse_sysfs_int(const char *buf, size_t len, int64_t *out)
{
    const char *p = buf, *end = buf + len;
    int neg = 0;
    uint64_t v;

    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    p = scan_u64(p, end, &v);
    if (!p || v > (uint64_t)INT64_MAX)
        return -EINVAL;
    /* Nothing but the closing newline (and blanks) may follow. */
    while (p < end && (scan_is_blank(*p) || *p == '\n'))
        p++;
    if (p != end)
        return -EINVAL;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}
