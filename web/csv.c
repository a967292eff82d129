/*
 * csv.c - PDH-CSV 4.0 cells and the time zone cell of the header; see csv.h and docs/design.md §6.
 *
 * The zone name follows what perfmon/relog write on Windows: GetTimeZoneInformation's StandardName
 * or DaylightName and Bias (UTC = local + bias). On Linux the zone is an IANA name; it is mapped to
 * the Windows zone with the table below, taken from CLDR's windowsZones.xml
 * (https://github.com/unicode-org/cldr/blob/main/common/supplemental/windowsZones.xml).
 */
#include "csv.h"

#include "csv_zone.h"
#include "tz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UTC_NAME "Coordinated Universal Time"

/* IANA zone -> Windows zone (its StandardName). CLDR maps each Windows zone to the zones of every
 * territory that uses it; this is the subset of those that hosts are likely to run in, plus the
 * older tzdata names (Asia/Calcutta, Europe/Kiev, ...) that CLDR still uses as the canonical ones.
 */
static const struct {
    const char *iana, *windows;
} zone_map[] = {
    /* UTC and its aliases; "UTC0" is a POSIX TZ string glibc accepts. */
    {"UTC", UTC_NAME},
    {"UTC0", UTC_NAME},
    {"Etc/UTC", UTC_NAME},
    {"Etc/UCT", UTC_NAME},
    {"Etc/Universal", UTC_NAME},
    {"Etc/Zulu", UTC_NAME},
    {"Etc/GMT", UTC_NAME},
    {"GMT", UTC_NAME},
    {"Universal", UTC_NAME},
    {"Zulu", UTC_NAME},
    /* United States. */
    {"America/New_York", "Eastern Standard Time"},
    {"America/Detroit", "Eastern Standard Time"},
    {"America/Kentucky/Louisville", "Eastern Standard Time"},
    {"America/Indiana/Indianapolis", "US Eastern Standard Time"},
    {"America/Indianapolis", "US Eastern Standard Time"},
    {"America/Chicago", "Central Standard Time"},
    {"America/Denver", "Mountain Standard Time"},
    {"America/Boise", "Mountain Standard Time"},
    {"America/Phoenix", "US Mountain Standard Time"},
    {"America/Los_Angeles", "Pacific Standard Time"},
    {"America/Anchorage", "Alaskan Standard Time"},
    {"America/Juneau", "Alaskan Standard Time"},
    {"America/Adak", "Aleutian Standard Time"},
    {"Pacific/Honolulu", "Hawaiian Standard Time"},
    {"US/Eastern", "Eastern Standard Time"},
    {"US/Central", "Central Standard Time"},
    {"US/Mountain", "Mountain Standard Time"},
    {"US/Arizona", "US Mountain Standard Time"},
    {"US/Pacific", "Pacific Standard Time"},
    {"US/Alaska", "Alaskan Standard Time"},
    {"US/Hawaii", "Hawaiian Standard Time"},
    {"EST5EDT", "Eastern Standard Time"},
    {"CST6CDT", "Central Standard Time"},
    {"MST7MDT", "Mountain Standard Time"},
    {"PST8PDT", "Pacific Standard Time"},
    /* Canada, Mexico, Central and South America. */
    {"America/Toronto", "Eastern Standard Time"},
    {"America/Montreal", "Eastern Standard Time"},
    {"America/Winnipeg", "Central Standard Time"},
    {"America/Regina", "Canada Central Standard Time"},
    {"America/Edmonton", "Mountain Standard Time"},
    {"America/Vancouver", "Pacific Standard Time"},
    {"America/Halifax", "Atlantic Standard Time"},
    {"America/St_Johns", "Newfoundland Standard Time"},
    {"America/Mexico_City", "Central Standard Time (Mexico)"},
    {"America/Bogota", "SA Pacific Standard Time"},
    {"America/Lima", "SA Pacific Standard Time"},
    {"America/Caracas", "Venezuela Standard Time"},
    {"America/Santiago", "Pacific SA Standard Time"},
    {"America/Sao_Paulo", "E. South America Standard Time"},
    {"America/Buenos_Aires", "Argentina Standard Time"},
    {"America/Argentina/Buenos_Aires", "Argentina Standard Time"},
    /* Europe. */
    {"Europe/London", "GMT Standard Time"},
    {"Europe/Dublin", "GMT Standard Time"},
    {"Europe/Lisbon", "GMT Standard Time"},
    {"Atlantic/Reykjavik", "Greenwich Standard Time"},
    {"Europe/Berlin", "W. Europe Standard Time"},
    {"Europe/Amsterdam", "W. Europe Standard Time"},
    {"Europe/Vienna", "W. Europe Standard Time"},
    {"Europe/Zurich", "W. Europe Standard Time"},
    {"Europe/Rome", "W. Europe Standard Time"},
    {"Europe/Stockholm", "W. Europe Standard Time"},
    {"Europe/Oslo", "W. Europe Standard Time"},
    {"Europe/Luxembourg", "W. Europe Standard Time"},
    {"Europe/Malta", "W. Europe Standard Time"},
    {"Europe/Paris", "Romance Standard Time"},
    {"Europe/Madrid", "Romance Standard Time"},
    {"Europe/Brussels", "Romance Standard Time"},
    {"Europe/Copenhagen", "Romance Standard Time"},
    {"Europe/Budapest", "Central Europe Standard Time"},
    {"Europe/Prague", "Central Europe Standard Time"},
    {"Europe/Bratislava", "Central Europe Standard Time"},
    {"Europe/Belgrade", "Central Europe Standard Time"},
    {"Europe/Ljubljana", "Central Europe Standard Time"},
    {"Europe/Warsaw", "Central European Standard Time"},
    {"Europe/Zagreb", "Central European Standard Time"},
    {"Europe/Sarajevo", "Central European Standard Time"},
    {"Europe/Skopje", "Central European Standard Time"},
    {"Europe/Helsinki", "FLE Standard Time"},
    {"Europe/Kiev", "FLE Standard Time"},
    {"Europe/Kyiv", "FLE Standard Time"},
    {"Europe/Riga", "FLE Standard Time"},
    {"Europe/Tallinn", "FLE Standard Time"},
    {"Europe/Vilnius", "FLE Standard Time"},
    {"Europe/Sofia", "FLE Standard Time"},
    {"Europe/Athens", "GTB Standard Time"},
    {"Europe/Bucharest", "GTB Standard Time"},
    {"Europe/Chisinau", "E. Europe Standard Time"},
    {"Europe/Istanbul", "Turkey Standard Time"},
    {"Europe/Minsk", "Belarus Standard Time"},
    {"Europe/Kaliningrad", "Kaliningrad Standard Time"},
    {"Europe/Moscow", "Russian Standard Time"},
    /* Africa and the Middle East. */
    {"Africa/Johannesburg", "South Africa Standard Time"},
    {"Africa/Cairo", "Egypt Standard Time"},
    {"Africa/Lagos", "W. Central Africa Standard Time"},
    {"Africa/Nairobi", "E. Africa Standard Time"},
    {"Africa/Casablanca", "Morocco Standard Time"},
    {"Asia/Jerusalem", "Israel Standard Time"},
    {"Asia/Riyadh", "Arab Standard Time"},
    {"Asia/Dubai", "Arabian Standard Time"},
    {"Asia/Tehran", "Iran Standard Time"},
    /* Asia and the Pacific. */
    {"Asia/Karachi", "Pakistan Standard Time"},
    {"Asia/Kolkata", "India Standard Time"},
    {"Asia/Calcutta", "India Standard Time"},
    {"Asia/Dhaka", "Bangladesh Standard Time"},
    {"Asia/Bangkok", "SE Asia Standard Time"},
    {"Asia/Jakarta", "SE Asia Standard Time"},
    {"Asia/Ho_Chi_Minh", "SE Asia Standard Time"},
    {"Asia/Saigon", "SE Asia Standard Time"},
    {"Asia/Shanghai", "China Standard Time"},
    {"Asia/Hong_Kong", "China Standard Time"},
    {"Asia/Taipei", "Taipei Standard Time"},
    {"Asia/Singapore", "Singapore Standard Time"},
    {"Asia/Kuala_Lumpur", "Singapore Standard Time"},
    {"Asia/Manila", "Singapore Standard Time"},
    {"Asia/Seoul", "Korea Standard Time"},
    {"Asia/Tokyo", "Tokyo Standard Time"},
    {"Australia/Perth", "W. Australia Standard Time"},
    {"Australia/Darwin", "AUS Central Standard Time"},
    {"Australia/Adelaide", "Cen. Australia Standard Time"},
    {"Australia/Brisbane", "E. Australia Standard Time"},
    {"Australia/Sydney", "AUS Eastern Standard Time"},
    {"Australia/Melbourne", "AUS Eastern Standard Time"},
    {"Australia/Hobart", "Tasmania Standard Time"},
    {"Pacific/Auckland", "New Zealand Standard Time"},
};

static const char *sep_of(enum csv_format f)
{
    return f == CSV_TAB ? "\t" : ",";
}

/* Append s with every '"' doubled (RFC 4180, which PDH follows), without the enclosing quotes. */
static void put_escaped(struct sbuf *b, const char *s)
{
    const char *q;

    while ((q = strchr(s, '"')) != NULL) {
        sbuf_append(b, s, (size_t)(q - s) + 1);
        sbuf_append(b, "\"", 1);
        s = q + 1;
    }
    sbuf_append(b, s, strlen(s));
}

static void put_quoted(struct sbuf *b, const char *s)
{
    sbuf_append(b, "\"", 1);
    put_escaped(b, s);
    sbuf_append(b, "\"", 1);
}

/* Copy s into out[cap], cut short if need be (cap > 0). */
static void copy_str(char *out, size_t cap, const char *s)
{
    size_t n = strnlen(s, cap - 1);

    memcpy(out, s, n);
    out[n] = '\0';
}

static const char *windows_zone(const char *iana)
{
    for (size_t i = 0; i < sizeof(zone_map) / sizeof(zone_map[0]); i++)
        if (strcmp(zone_map[i].iana, iana) == 0)
            return zone_map[i].windows;
    return NULL;
}

/* "X Standard Time" -> "X Daylight Time": Windows' DaylightName for nearly every zone. */
static void daylight_name(const char *standard, char *out, size_t cap)
{
    const char *p = strstr(standard, "Standard");

    if (!p) {
        copy_str(out, cap, standard);
        return;
    }
    snprintf(out, cap, "%.*sDaylight%s", (int)(p - standard), standard, p + strlen("Standard"));
}

void csv_zone_at(int utc, int64_t t_ms, struct csv_zone *out)
{
    struct csv_local lz;
    const char *win;
    time_t t;

    if (utc) {
        copy_str(out->name, sizeof(out->name), UTC_NAME);
        out->bias_min = 0;
        return;
    }
    t = (time_t)(t_ms >= 0 ? t_ms / 1000 : -((-t_ms + 999) / 1000));
    if (csv_local_zone(t, &lz) < 0) {
        copy_str(out->name, sizeof(out->name), UTC_NAME);
        out->bias_min = 0;
        return;
    }
    out->bias_min = lz.bias_min;
    win = lz.name[0] ? windows_zone(lz.name) : NULL;
    if (win && lz.is_dst)
        daylight_name(win, out->name, sizeof(out->name));
    else if (win)
        copy_str(out->name, sizeof(out->name), win);
    else if (lz.name_is_iana)
        copy_str(out->name, sizeof(out->name), lz.name);
    else
        copy_str(out->name, sizeof(out->name), lz.abbr);
}

void csv_zone_in(const struct tz_zone *z, int64_t t_ms, struct csv_zone *out)
{
    int64_t t = t_ms >= 0 ? t_ms / 1000 : -((-t_ms + 999) / 1000);
    int dst = 0;
    const char *win = tz_is_database_name(z) ? windows_zone(tz_name(z)) : NULL;

    out->bias_min = -(int)(tz_offset_at(z, t, &dst) / 60);
    if (win && dst)
        daylight_name(win, out->name, sizeof(out->name));
    else if (win)
        copy_str(out->name, sizeof(out->name), win);
    else if (!strcmp(tz_name(z), "UTC"))
        copy_str(out->name, sizeof(out->name), UTC_NAME);
    else
        copy_str(out->name, sizeof(out->name), tz_name(z));
}

void csv_first_cell(struct sbuf *b, enum csv_format f, const struct csv_zone *zone)
{
    const char *tag = f == CSV_TAB ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)";

    if (!zone) {
        put_quoted(b, tag);
        return;
    }
    sbuf_printf(b, "\"%s (", tag);
    put_escaped(b, zone->name);
    sbuf_printf(b, ")(%d)\"", zone->bias_min);
}

void csv_path_cell(struct sbuf *b, enum csv_format f, const char *host, const char *path)
{
    sbuf_append(b, sep_of(f), 1);
    sbuf_append(b, "\"", 1);
    if (host && *host) {
        sbuf_append(b, "\\\\", 2);
        put_escaped(b, host);
        if (path[0] != '\\')
            sbuf_append(b, "\\", 1);
    }
    put_escaped(b, path);
    sbuf_append(b, "\"", 1);
}

void csv_format_time(int64_t t_ms, int utc, char *out, size_t cap)
{
    /* Floor division: the millisecond part stays in 0..999 for times before 1970 too. */
    int64_t s = t_ms >= 0 ? t_ms / 1000 : -((-t_ms + 999) / 1000);
    int ms = (int)(t_ms - s * 1000);
    time_t t = (time_t)s;
    struct tm tm;

    if (!cap)
        return;
    if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm))) {
        out[0] = '\0';
        return;
    }
    snprintf(out, cap, "%02d/%02d/%04d %02d:%02d:%02d.%03d", tm.tm_mon + 1, tm.tm_mday,
             tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void csv_time_cell(struct sbuf *b, int64_t t_ms, int utc)
{
    char buf[48];

    csv_format_time(t_ms, utc, buf, sizeof(buf));
    put_quoted(b, buf);
}

void csv_time_cell_in(struct sbuf *b, int64_t t_ms, const struct tz_zone *z)
{
    int64_t s = t_ms >= 0 ? t_ms / 1000 : -((-t_ms + 999) / 1000);
    char buf[48];

    /* the wall clock of the zone is UTC shifted by its offset at that instant */
    csv_format_time(t_ms + (int64_t)tz_offset_at(z, s, NULL) * 1000, 1, buf, sizeof(buf));
    put_quoted(b, buf);
}

void csv_value_cell(struct sbuf *b, enum csv_format f, double v)
{
    char buf[64];
    const char *p = buf;
    int n;

    sbuf_append(b, sep_of(f), 1);
    if (!isfinite(v)) {
        sbuf_append(b, "\" \"", 3);
        return;
    }
    n = snprintf(buf, sizeof(buf), "%.6f", v);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        /* Too long to be a negative zero (|v| >= 1e56): print it whole. */
        sbuf_printf(b, "\"%.6f\"", v);
        return;
    }
    /* -0.0, and negatives that round to zero, print as typeperf's "0.000000". */
    if (strcmp(buf, "-0.000000") == 0)
        p++;
    sbuf_append(b, "\"", 1);
    sbuf_append(b, p, strlen(p));
    sbuf_append(b, "\"", 1);
}

void csv_end_line(struct sbuf *b)
{
    sbuf_append(b, "\r\n", 2);
}
