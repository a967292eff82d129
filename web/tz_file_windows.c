/*
 * tz_file_windows.c - Windows has no tz database: named zones are unknown there (the fixed
 * offsets, tz=+05:30, still work). Its own zone names are not IANA names.
 */
#include "tz.h"

#include <errno.h>

int tz_read_zone_file(const char *name, unsigned char **buf, size_t *len)
{
    (void)name;
    (void)buf;
    (void)len;
    return -ENOENT;
}
