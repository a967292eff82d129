/*
 * tz.c - time zones without the C library's global zone; see tz.h. The TZif layout is RFC 8536
 * (https://www.rfc-editor.org/rfc/rfc8536); the footer's rule is a POSIX TZ string (POSIX.1-2017,
 * Base Definitions 8.3, with RFC 8536's extension of hours to +-167).
 */
#include "storage/query/tz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES    256
#define MAX_TRANS    100000
#define SECS_PER_DAY 86400

/* A POSIX rule's date: Mm.w.d, Jn (1..365, no Feb 29) or n (0..365), then the local time. */
struct rule_date {
    char kind; /* 'M', 'J' or 'n' */
    int m, w, d, n;
    int32_t time_s;
};

struct rule {
    int32_t std_east_s, dst_east_s;
    int has_dst;
    struct rule_date start, end;
};

struct tz_zone {
    char name[TZ_NAME_MAX + 16];
    int database_name;
    size_t ntrans;
    int64_t *trans_s;    /* ascending */
    uint8_t *trans_type; /* index into types */
    size_t ntypes;
    int32_t type_east_s[MAX_TYPES];
    uint8_t type_dst[MAX_TYPES];
    int has_rule;
    struct rule rule;
};

int tz_valid_name(const char *name)
{
    size_t len = strlen(name), comp = 0;

    if (len == 0 || len > TZ_NAME_MAX)
        return 0;
    for (size_t i = 0; i <= len; i++) {
        char c = name[i];

        if (c == '/' || c == '\0') {
            if (comp == 0)
                return 0; /* "", "/x", "x//y", "x/" */
            comp = 0;
            continue;
        }
        if (comp == 0 && (c == '.' || c == '-'))
            return 0; /* "..", ".x", an option-like "-x" */
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '+' || c == '.'))
            return 0;
        comp++;
    }
    return 1;
}

static int two_digits(const char *s)
{
    if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
        return -1;
    return (s[0] - '0') * 10 + (s[1] - '0');
}

int tz_parse_offset(const char *s, int32_t *east_s)
{
    int h, m;

    if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':')
        return -EINVAL;
    h = two_digits(s + 1);
    m = two_digits(s + 4);
    if (h < 0 || m < 0 || m > 59 || h * 60 + m > 14 * 60)
        return -EINVAL;
    *east_s = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return 0;
}

static struct tz_zone *zone_new(const char *name)
{
    struct tz_zone *z = calloc(1, sizeof(*z));

    if (z)
        snprintf(z->name, sizeof(z->name), "%s", name);
    return z;
}

int tz_fixed(int32_t east_s, struct tz_zone **out)
{
    char name[32];
    int32_t a = east_s < 0 ? -east_s : east_s;
    struct tz_zone *z;

    if (east_s == 0)
        snprintf(name, sizeof(name), "UTC");
    else
        snprintf(name, sizeof(name), "UTC%c%02d:%02d", east_s < 0 ? '-' : '+', (int)(a / 3600),
                 (int)(a % 3600 / 60));
    if (!(z = zone_new(name)))
        return -ENOMEM;
    z->ntypes = 1;
    z->type_east_s[0] = east_s;
    *out = z;
    return 0;
}

/* --- the footer's POSIX rule --- */

/* A zone abbreviation: 3+ letters, or <...> quoted (may hold digits and signs). */
static const char *rule_name(const char *p)
{
    const char *b = p;

    if (*p == '<') {
        while (*p && *p != '>')
            p++;
        return *p == '>' && p - b >= 4 ? p + 1 : NULL;
    }
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
        p++;
    return p - b >= 3 ? p : NULL;
}

/* [+-]hh[:mm[:ss]], hours up to max_h, into seconds (the sign as written). POSIX bounds an offset's
 * hours by 24; RFC 8536 lets a rule's time of day reach 167 (a week). */
static const char *rule_time(const char *p, int32_t *secs, int max_h)
{
    int sign = 1, part[3] = {0, 0, 0}, n = 0;

    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    do {
        int v = 0, digits = 0;

        if (n)
            p++; /* the ':' */
        while (*p >= '0' && *p <= '9' && digits < 3) {
            v = v * 10 + (*p++ - '0');
            digits++;
        }
        if (!digits || (n && v > 59) || (!n && v > max_h))
            return NULL;
        part[n++] = v;
    } while (n < 3 && *p == ':');
    *secs = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
    return p;
}

static const char *rule_number(const char *p, int *v, int lo, int hi)
{
    int n = 0, digits = 0;

    while (*p >= '0' && *p <= '9' && digits < 4) {
        n = n * 10 + (*p++ - '0');
        digits++;
    }
    if (!digits || n < lo || n > hi)
        return NULL;
    *v = n;
    return p;
}

static const char *rule_date(const char *p, struct rule_date *d)
{
    d->time_s = 7200; /* 02:00 local unless given */
    if (*p == 'M') {
        d->kind = 'M';
        if (!(p = rule_number(p + 1, &d->m, 1, 12)) || *p != '.' ||
            !(p = rule_number(p + 1, &d->w, 1, 5)) || *p != '.' ||
            !(p = rule_number(p + 1, &d->d, 0, 6)))
            return NULL;
    } else if (*p == 'J') {
        d->kind = 'J';
        if (!(p = rule_number(p + 1, &d->n, 1, 365)))
            return NULL;
    } else {
        d->kind = 'n';
        if (!(p = rule_number(p, &d->n, 0, 365)))
            return NULL;
    }
    if (*p == '/' && !(p = rule_time(p + 1, &d->time_s, 167)))
        return NULL;
    return p;
}

/* "CET-1CEST,M3.5.0,M10.5.0/3" into *r. 0 or -EINVAL. */
static int rule_parse(const char *p, struct rule *r)
{
    int32_t off;

    memset(r, 0, sizeof(*r));
    if (!(p = rule_name(p)) || !(p = rule_time(p, &off, 24)))
        return -EINVAL;
    r->std_east_s = -off; /* POSIX offsets are west of Greenwich */
    if (!*p)
        return 0;
    if (!(p = rule_name(p)))
        return -EINVAL;
    r->has_dst = 1;
    r->dst_east_s = r->std_east_s + 3600;
    if (*p && *p != ',') {
        if (!(p = rule_time(p, &off, 24)))
            return -EINVAL;
        r->dst_east_s = -off;
    }
    if (!*p) { /* no dates: the US rule, as POSIX leaves it to the implementation */
        r->start = (struct rule_date){.kind = 'M', .m = 3, .w = 2, .d = 0, .time_s = 7200};
        r->end = (struct rule_date){.kind = 'M', .m = 11, .w = 1, .d = 0, .time_s = 7200};
        return 0;
    }
    if (*p != ',' || !(p = rule_date(p + 1, &r->start)) || *p != ',' ||
        !(p = rule_date(p + 1, &r->end)) || *p)
        return -EINVAL;
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int64_t year_of_days(int64_t days)
{
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;

    return yoe + era * 400 + (mp >= 10);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The day (days since 1970) the rule date falls on in year y. */
static int64_t rule_day(const struct rule_date *d, int64_t y)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t jan1 = days_from_civil(y, 1, 1), first;
    int wd1, day, len;

    if (d->kind == 'J')
        return jan1 + d->n - 1 + (is_leap(y) && d->n >= 60);
    if (d->kind == 'n')
        return jan1 + d->n;
    first = days_from_civil(y, d->m, 1);
    wd1 = (int)(((first % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
    len = mdays[d->m - 1] + (d->m == 2 && is_leap(y));
    day = 1 + (d->d - wd1 + 7) % 7 + (d->w - 1) * 7;
    while (day > len)
        day -= 7;
    return first + day - 1;
}

static int32_t rule_offset(const struct rule *r, int64_t t_s, int *is_dst)
{
    int64_t y, start, end;
    int dst;

    if (!r->has_dst) {
        *is_dst = 0;
        return r->std_east_s;
    }
    y = year_of_days((t_s + r->std_east_s) / SECS_PER_DAY -
                     ((t_s + r->std_east_s) % SECS_PER_DAY < 0));
    /* the start is in standard time, the end in daylight time, both local */
    start = rule_day(&r->start, y) * SECS_PER_DAY + r->start.time_s - r->std_east_s;
    end = rule_day(&r->end, y) * SECS_PER_DAY + r->end.time_s - r->dst_east_s;
    dst = start < end ? (t_s >= start && t_s < end) : !(t_s >= end && t_s < start);
    *is_dst = dst;
    return dst ? r->dst_east_s : r->std_east_s;
}

/* --- TZif --- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct tzif_counts {
    uint32_t isut, isstd, leap, time, type, chars;
};

/* A header at buf[0..len): its counts and the size of the data block after it; -EINVAL. */
static int tzif_header(const unsigned char *buf, size_t len, int wide, struct tzif_counts *c,
                       size_t *data_len)
{
    uint64_t n;

    if (len < 44 || memcmp(buf, "TZif", 4))
        return -EINVAL;
    c->isut = be32(buf + 20);
    c->isstd = be32(buf + 24);
    c->leap = be32(buf + 28);
    c->time = be32(buf + 32);
    c->type = be32(buf + 36);
    c->chars = be32(buf + 40);
    if (c->type == 0 || c->type > MAX_TYPES || c->time > MAX_TRANS || c->chars > 65536 ||
        c->leap > 1000 || (c->isut && c->isut != c->type) || (c->isstd && c->isstd != c->type))
        return -EINVAL;
    n = (uint64_t)c->time * (wide ? 9 : 5) + (uint64_t)c->type * 6 + c->chars +
        (uint64_t)c->leap * (wide ? 12 : 8) + c->isstd + c->isut;
    if (n > len - 44)
        return -EINVAL;
    *data_len = (size_t)n;
    return 0;
}

int tz_from_tzif(const char *name, const unsigned char *buf, size_t len, struct tz_zone **out)
{
    struct tzif_counts c;
    size_t data_len, wide_at;
    const unsigned char *d;
    struct tz_zone *z;
    int wide = 0, rc;

    if (tzif_header(buf, len, 0, &c, &data_len) < 0)
        return -EINVAL;
    wide_at = 44 + data_len;
    if (buf[4] >= '2') { /* the 64-bit block follows the 32-bit one */
        if (tzif_header(buf + wide_at, len - wide_at, 1, &c, &data_len) < 0)
            return -EINVAL;
        wide = 1;
        d = buf + wide_at + 44;
    } else {
        d = buf + 44;
    }
    if (c.leap) /* the "right/" zones count leap seconds: their times are not Unix times */
        return -EINVAL;
    if (!(z = zone_new(name)))
        return -ENOMEM;
    z->database_name = 1;
    z->ntrans = c.time;
    z->ntypes = c.type;
    z->trans_s = malloc((c.time ? c.time : 1) * sizeof(*z->trans_s));
    z->trans_type = malloc(c.time ? c.time : 1);
    rc = z->trans_s && z->trans_type ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < c.time; i++) {
        z->trans_s[i] = wide ? be64(d + i * 8) : (int32_t)be32(d + i * 4);
        if (i && z->trans_s[i] <= z->trans_s[i - 1])
            rc = -EINVAL;
    }
    d += (size_t)c.time * (wide ? 8 : 4);
    for (size_t i = 0; rc == 0 && i < c.time; i++)
        if ((z->trans_type[i] = d[i]) >= c.type)
            rc = -EINVAL;
    d += c.time;
    for (size_t i = 0; rc == 0 && i < c.type; i++) {
        int32_t off = (int32_t)be32(d + i * 6);

        if (off < -25 * 3600 || off > 26 * 3600 || d[i * 6 + 4] > 1 || d[i * 6 + 5] >= c.chars)
            rc = -EINVAL;
        z->type_east_s[i] = off;
        z->type_dst[i] = d[i * 6 + 4];
    }
    if (rc == 0 && wide) { /* the footer: "\nRULE\n" after the 64-bit block */
        const unsigned char *f = buf + wide_at + 44 + data_len, *end = buf + len;
        const unsigned char *nl =
            f < end && *f == '\n' ? memchr(f + 1, '\n', (size_t)(end - f - 1)) : NULL;
        char rule[128];

        if (nl && nl - f - 1 > 0 && (size_t)(nl - f - 1) < sizeof(rule)) {
            memcpy(rule, f + 1, (size_t)(nl - f - 1));
            rule[nl - f - 1] = '\0';
            if (rule_parse(rule, &z->rule) < 0)
                rc = -EINVAL;
            else
                z->has_rule = 1;
        }
    }
    if (rc < 0) {
        tz_free(z);
        return rc;
    }
    *out = z;
    return 0;
}

int tz_load(const char *spec, struct tz_zone **out)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    int32_t east;
    int rc;

    if (spec[0] == '+' || spec[0] == '-')
        return tz_parse_offset(spec, &east) < 0 ? -EINVAL : tz_fixed(east, out);
    if (!tz_valid_name(spec))
        return -EINVAL;
    if ((rc = tz_read_zone_file(spec, &buf, &len)) < 0)
        return rc;
    rc = tz_from_tzif(spec, buf, len, out);
    free(buf);
    return rc;
}

int32_t tz_offset_at(const struct tz_zone *z, int64_t t_s, int *is_dst)
{
    size_t lo = 0, hi = z->ntrans;
    int dst_unused;

    if (!is_dst)
        is_dst = &dst_unused;
    if (z->ntrans && t_s >= z->trans_s[z->ntrans - 1] && z->has_rule)
        return rule_offset(&z->rule, t_s, is_dst);
    if (!z->ntrans || t_s < z->trans_s[0]) {
        if (!z->ntrans && z->has_rule)
            return rule_offset(&z->rule, t_s, is_dst);
        *is_dst = z->type_dst[0]; /* RFC 8536 3.2: type 0 before the first transition */
        return z->type_east_s[0];
    }
    while (hi - lo > 1) { /* the last transition at or before t_s */
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans_s[mid] <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    *is_dst = z->type_dst[z->trans_type[lo]];
    return z->type_east_s[z->trans_type[lo]];
}

const char *tz_name(const struct tz_zone *z)
{
    return z->name;
}

int tz_is_database_name(const struct tz_zone *z)
{
    return z->database_name;
}

struct tz_zone *tz_copy(const struct tz_zone *z)
{
    struct tz_zone *c = malloc(sizeof(*c));
    size_t n = z->ntrans ? z->ntrans : 1;

    if (!c)
        return NULL;
    *c = *z;
    c->trans_s = NULL;
    c->trans_type = NULL;
    if (z->trans_s) {
        c->trans_s = malloc(n * sizeof(*c->trans_s));
        c->trans_type = malloc(n);
        if (!c->trans_s || !c->trans_type) {
            tz_free(c);
            return NULL;
        }
        memcpy(c->trans_s, z->trans_s, z->ntrans * sizeof(*c->trans_s));
        memcpy(c->trans_type, z->trans_type, z->ntrans);
    }
    return c;
}

void tz_free(struct tz_zone *z)
{
    if (!z)
        return;
    free(z->trans_s);
    free(z->trans_type);
    free(z);
}
