/*
 * csv_zone_windows.c - the local zone on Windows. The offset at the instant comes from the C
 * runtime (localtime_s, then _mkgmtime on the result), the names from GetTimeZoneInformation:
 * StandardName/DaylightName are exactly the names perfmon and relog write in a PDH-CSV header.
 */
#include "storage/query/csv_zone.h"

#include <stdint.h>
#include <string.h>
#include <windows.h>

static void utf8_of(const WCHAR *w, char *out, size_t cap)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)cap, NULL, NULL);

    if (n <= 0)
        out[0] = '\0';
}

int csv_local_zone(time_t t, struct csv_local *out)
{
    TIME_ZONE_INFORMATION tzi;
    struct tm tm;
    time_t as_utc;

    _tzset();
    if (localtime_s(&tm, &t) != 0)
        return -1;
    out->is_dst = tm.tm_isdst > 0; /* before _mkgmtime, which normalises tm */
    /* The local broken-down time read as if it were UTC, minus the instant: the offset east. */
    as_utc = _mkgmtime(&tm);
    if (as_utc == (time_t)-1)
        return -1;
    out->bias_min = (int)(-(int64_t)(as_utc - t) / 60);
    out->name[0] = '\0';
    out->name_is_iana = 0;
    if (GetTimeZoneInformation(&tzi) == TIME_ZONE_ID_INVALID) {
        out->abbr[0] = '\0';
        return 0;
    }
    utf8_of(out->is_dst ? tzi.DaylightName : tzi.StandardName, out->abbr, sizeof(out->abbr));
    return 0;
}
