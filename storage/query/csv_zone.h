/*
 * csv_zone.h - what the platform knows of the local time zone at an instant, for csv_zone_at:
 * from TZ, /etc/localtime and the tz database on Linux (csv_zone_posix.c), from the Windows time
 * zone settings on Windows (csv_zone_windows.c).
 */
#ifndef PERFLOG_CSV_ZONE_H
#define PERFLOG_CSV_ZONE_H

#include <time.h>

struct csv_local {
    int bias_min;     /* UTC = local + bias, at that instant */
    int is_dst;       /* daylight saving time in force */
    char name[96];    /* the zone's IANA name ("Europe/Paris") or "" when unknown */
    int name_is_iana; /* 1: `name` is a zone of the tz database, not a POSIX TZ rule string */
    char abbr[96];    /* the zone's name as the C library gives it: "CET", or on Windows its
                       * StandardName/DaylightName ("W. Europe Standard Time") */
};

/* The local zone at `t`. Returns 0, or -1 when the time cannot be converted. Thread-safe. */
int csv_local_zone(time_t t, struct csv_local *out);

#endif
