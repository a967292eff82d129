/*
 * csv_zone_posix.c - the local zone on Linux: glibc's localtime_r for the offset, and the zone's
 * IANA name found as glibc finds the zone (TZ, /etc/localtime, /etc/timezone).
 */
#include "storage/query/csv_zone.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copy s into out[cap], cut short if need be (cap > 0). */
static void copy_str(char *out, size_t cap, const char *s)
{
    size_t n = strnlen(s, cap - 1);

    memcpy(out, s, n);
    out[n] = '\0';
}

/* The part of a zone file path after "zoneinfo/", without the "posix/" or "right/" subtrees. */
static int name_from_path(const char *path, char *out, size_t cap)
{
    const char *p = strstr(path, "zoneinfo/");

    if (!p)
        return -1;
    p += strlen("zoneinfo/");
    if (strncmp(p, "posix/", 6) == 0)
        p += 6;
    else if (strncmp(p, "right/", 6) == 0)
        p += 6;
    if (!*p)
        return -1;
    copy_str(out, cap, p);
    return 0;
}

static int name_from_link(const char *link, char *out, size_t cap)
{
    char target[512];
    ssize_t n = readlink(link, target, sizeof(target) - 1);

    if (n <= 0)
        return -1;
    target[n] = '\0';
    return name_from_path(target, out, cap);
}

static int name_from_file(const char *file, char *out, size_t cap)
{
    char line[128];
    FILE *fp = fopen(file, "re");
    int rc = -1;

    if (!fp)
        return -1;
    if (fgets(line, sizeof(line), fp)) {
        line[strcspn(line, " \t\r\n")] = '\0';
        if (line[0]) {
            copy_str(out, cap, line);
            rc = 0;
        }
    }
    fclose(fp);
    return rc;
}

/*
 * The IANA name of the local zone, found as glibc finds the zone: TZ (a leading ':' dropped; empty
 * means UTC; a path names a zone file), else /etc/localtime, whose link target names the zone, else
 * Debian's /etc/timezone. Returns 0, or -1 when no name is known. The name may still be a POSIX TZ
 * string ("JST-9"); zone_is_iana tells.
 */
static int local_zone_name(char *out, size_t cap)
{
    const char *tz = getenv("TZ");

    if (tz && !*tz) {
        copy_str(out, cap, "UTC");
        return 0;
    }
    if (tz && *tz == ':')
        tz++;
    if (tz && *tz) {
        if (name_from_path(tz, out, cap) == 0)
            return 0;
        if (*tz == '/')
            return name_from_link(tz, out, cap);
        copy_str(out, cap, tz);
        return 0;
    }
    if (name_from_link("/etc/localtime", out, cap) == 0)
        return 0;
    return name_from_file("/etc/timezone", out, cap);
}

/* Whether name is a zone of the tz database (a file under TZDIR), not a POSIX rule string. */
static int zone_is_iana(const char *name)
{
    const char *dir = getenv("TZDIR");
    char path[512];
    int n;

    if (!name[0] || name[0] == '/' || strstr(name, "..") || strpbrk(name, ",<>"))
        return 0;
    n = snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
    return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

int csv_local_zone(time_t t, struct csv_local *out)
{
    struct tm tm;

    /* Re-read TZ so the header and the rows (localtime_r, which does not) agree with it. */
    tzset();
    if (!localtime_r(&t, &tm))
        return -1;
    out->bias_min = (int)(-tm.tm_gmtoff / 60);
    out->is_dst = tm.tm_isdst > 0;
    if (local_zone_name(out->name, sizeof(out->name)) < 0)
        out->name[0] = '\0';
    out->name_is_iana = zone_is_iana(out->name);
    copy_str(out->abbr, sizeof(out->abbr), tm.tm_zone ? tm.tm_zone : "");
    return 0;
}
