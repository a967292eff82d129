/*
 * timeparse.c - the time and duration forms of the HTTP API (timeparse.h). Civil dates are turned
 * into days with Howard Hinnant's days_from_civil
 * (http://howardhinnant.github.io/date_algorithms.html), so no libc time function and no TZ setting
 * is involved. Every multiplication and addition on a client's number is checked before it is done:
 * a too-large number is -ERANGE, never a wrap.
 */
#include "collectors/model/timeparse.h"

#include <errno.h>
#include <stdio.h>

#define MS_PER_S   INT64_C(1000)
#define MS_PER_DAY INT64_C(86400000)
/* 1970-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z */
#define TP_MIN_MS INT64_C(0)
#define TP_MAX_MS INT64_C(253402300799999)
/* "at most 10 years": ten years of 365 days plus the three leap days ten years can hold. */
#define TP_DURATION_MAX_MS (INT64_C(3653) * MS_PER_DAY)

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Exactly n digits at s, as a number (n <= 4, no overflow possible); -1 if one is not a digit. */
static int fixed_digits(const char *s, size_t n)
{
    int v = 0;

    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* A run of at least one digit at s[*i..len) into *out; -EINVAL if there is none, -ERANGE if it does
 * not fit in an int64_t. */
static int parse_uint(const char *s, size_t len, size_t *i, int64_t *out)
{
    size_t start = *i;
    int64_t v = 0;

    while (*i < len && is_digit(s[*i])) {
        int d = s[*i] - '0';

        if (v > (INT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
        (*i)++;
    }
    if (*i == start)
        return -EINVAL;
    *out = v;
    return 0;
}

/* ".ddd" with 1..9 digits at s[*i..len), kept to the millisecond (truncated). No dot: 0. */
static int parse_fraction(const char *s, size_t len, size_t *i, int64_t *ms)
{
    size_t start;
    int64_t v = 0;

    *ms = 0;
    if (*i >= len || s[*i] != '.')
        return 0;
    start = ++(*i);
    while (*i < len && is_digit(s[*i])) {
        if (*i - start < 3)
            v = v * 10 + (s[*i] - '0');
        (*i)++;
    }
    if (*i == start || *i - start > 9)
        return -EINVAL;
    for (size_t n = *i - start; n < 3; n++)
        v *= 10;
    *ms = v;
    return 0;
}

/* The unit suffix s[i..len) in ms; a missing unit is seconds. -EINVAL for anything else. */
static int parse_unit(const char *s, size_t len, size_t i, int64_t *unit_ms)
{
    size_t n = len - i;

    if (n == 0) {
        *unit_ms = MS_PER_S;
        return 0;
    }
    if (n == 2 && s[i] == 'm' && s[i + 1] == 's') {
        *unit_ms = 1;
        return 0;
    }
    if (n != 1)
        return -EINVAL;
    switch (s[i]) {
    case 's':
        *unit_ms = MS_PER_S;
        return 0;
    case 'm':
        *unit_ms = 60 * MS_PER_S;
        return 0;
    case 'h':
        *unit_ms = 3600 * MS_PER_S;
        return 0;
    case 'd':
        *unit_ms = MS_PER_DAY;
        return 0;
    case 'w':
        *unit_ms = 7 * MS_PER_DAY;
        return 0;
    default:
        return -EINVAL;
    }
}

/* An unsigned whole amount with an optional unit ("10m", "600", "500ms"), filling all of
 * s[0..len), in ms. */
static int parse_amount(const char *s, size_t len, int64_t *out_ms)
{
    size_t i = 0;
    int64_t v, unit_ms;
    int rc;

    if ((rc = parse_uint(s, len, &i, &v)) < 0)
        return rc;
    if ((rc = parse_unit(s, len, i, &unit_ms)) < 0)
        return rc;
    if (v > INT64_MAX / unit_ms)
        return -ERANGE;
    *out_ms = v * unit_ms;
    return 0;
}

static int is_leap(int y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The inverse (Hinnant's civil_from_days), for any day count an int64_t of ms can give. */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* RFC 3339 section 5.6 date-time: YYYY-MM-DD(T|t| )hh:mm:ss[.frac](Z|z|+hh:mm|-hh:mm). Leap
 * seconds (ss = 60) are not accepted: the samples never carry one. */
static int parse_rfc3339(const char *s, size_t len, int64_t *out_ms)
{
    int y, mo, d, h, mi, sec, off_min = 0;
    int64_t frac_ms, ms;
    size_t i = 19;

    if (len < 20 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':')
        return -EINVAL;
    if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
        return -EINVAL;
    y = fixed_digits(s, 4);
    mo = fixed_digits(s + 5, 2);
    d = fixed_digits(s + 8, 2);
    h = fixed_digits(s + 11, 2);
    mi = fixed_digits(s + 14, 2);
    sec = fixed_digits(s + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
        sec > 59)
        return -EINVAL;
    if (d > days_in_month(y, mo))
        return -EINVAL;
    if (parse_fraction(s, len, &i, &frac_ms) < 0)
        return -EINVAL;
    if (i + 1 == len && (s[i] == 'Z' || s[i] == 'z')) {
        off_min = 0;
    } else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh = fixed_digits(s + i + 1, 2), om = fixed_digits(s + i + 4, 2);

        if (oh < 0 || oh > 23 || om < 0 || om > 59)
            return -EINVAL;
        off_min = (oh * 60 + om) * (s[i] == '-' ? -1 : 1);
    } else {
        return -EINVAL;
    }
    /* Years 0000..9999 keep every term far from overflow. */
    ms = days_from_civil(y, mo, d) * MS_PER_DAY + ((h * 60 + mi) * 60 + sec) * MS_PER_S + frac_ms;
    ms -= (int64_t)off_min * 60 * MS_PER_S;
    *out_ms = ms;
    return 0;
}

/* Unix seconds with up to 9 fraction digits: "1795974000", "1795974000.5". */
static int parse_unix(const char *s, size_t len, int64_t *out_ms)
{
    size_t i = 0;
    int64_t secs, frac_ms;
    int rc;

    if ((rc = parse_uint(s, len, &i, &secs)) < 0)
        return rc;
    if ((rc = parse_fraction(s, len, &i, &frac_ms)) < 0)
        return rc;
    if (i != len)
        return -EINVAL;
    if (secs > (INT64_MAX - frac_ms) / MS_PER_S)
        return -ERANGE;
    *out_ms = secs * MS_PER_S + frac_ms;
    return 0;
}

/* now_ms plus or minus an amount ("+30s", "-10m", "-600"); s[0] is the sign. */
static int parse_relative(const char *s, size_t len, int64_t now_ms, int64_t *out_ms)
{
    int64_t off;
    int rc;

    if (len < 2 || (s[0] != '+' && s[0] != '-'))
        return -EINVAL;
    if ((rc = parse_amount(s + 1, len - 1, &off)) < 0)
        return rc;
    if (s[0] == '-') {
        if (now_ms < INT64_MIN + off)
            return -ERANGE;
        *out_ms = now_ms - off;
    } else {
        if (now_ms > INT64_MAX - off)
            return -ERANGE;
        *out_ms = now_ms + off;
    }
    return 0;
}

int tp_parse_time(const char *s, size_t len, int64_t now_ms, int64_t *out_ms)
{
    int64_t ms = 0;
    int rc;

    if (len == 0)
        return -EINVAL;
    if (len >= 3 && s[0] == 'n' && s[1] == 'o' && s[2] == 'w') {
        if (len == 3) {
            ms = now_ms;
            rc = 0;
        } else {
            rc = parse_relative(s + 3, len - 3, now_ms, &ms);
        }
    } else if (s[0] == '+' || s[0] == '-') {
        rc = parse_relative(s, len, now_ms, &ms);
    } else if (len > 4 && s[4] == '-') {
        rc = parse_rfc3339(s, len, &ms);
    } else {
        rc = parse_unix(s, len, &ms);
    }
    if (rc < 0)
        return rc;
    if (ms < TP_MIN_MS || ms > TP_MAX_MS)
        return -ERANGE;
    *out_ms = ms;
    return 0;
}

int tp_parse_duration(const char *s, size_t len, int64_t *out_ms)
{
    int64_t ms;
    int rc;

    if ((rc = parse_amount(s, len, &ms)) < 0)
        return rc;
    if (ms == 0)
        return -EINVAL;
    if (ms > TP_DURATION_MAX_MS)
        return -ERANGE;
    *out_ms = ms;
    return 0;
}

char *tp_format_utc(int64_t ms, char *buf, size_t cap)
{
    int64_t secs = ms / MS_PER_S, rem = ms % MS_PER_S, days, sod, y;
    int m, d;

    if (rem < 0) {
        rem += MS_PER_S;
        secs--;
    }
    days = secs / 86400;
    sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    civil_from_days(days, &y, &m, &d);
    if (cap > 0)
        snprintf(buf, cap, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)y, m, d,
                 (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)rem);
    return buf;
}

/* "hh:mm[:ss[.frac]]" filling s[0..len), as ms since midnight. */
static int parse_clock(const char *s, size_t len, int64_t *out_ms)
{
    int h, mi, sec = 0;
    int64_t frac_ms = 0;
    size_t i = 5;

    if (len < 5 || s[2] != ':')
        return -EINVAL;
    h = fixed_digits(s, 2);
    mi = fixed_digits(s + 3, 2);
    if (len > 5) {
        if (len < 8 || s[5] != ':')
            return -EINVAL;
        sec = fixed_digits(s + 6, 2);
        i = 8;
        if (parse_fraction(s, len, &i, &frac_ms) < 0 || i != len)
            return -EINVAL;
    }
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
        return -EINVAL;
    *out_ms = ((h * 60 + mi) * 60 + sec) * MS_PER_S + frac_ms;
    return 0;
}

/* "YYYY-MM-DD" at s as days since 1970-01-01. */
static int parse_date(const char *s, size_t len, int64_t *days)
{
    int y, mo, d;

    if (len < 10 || s[4] != '-' || s[7] != '-')
        return -EINVAL;
    y = fixed_digits(s, 4);
    mo = fixed_digits(s + 5, 2);
    d = fixed_digits(s + 8, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return -EINVAL;
    *days = days_from_civil(y, mo, d);
    return 0;
}

/* A zone's offset kept within a day either way, so that no sum with it can overflow. */
static int clamp_offset(int off_min)
{
    return off_min < -1440 ? -1440 : off_min > 1440 ? 1440 : off_min;
}

/* A local wall-clock time (ms since 1970-01-01 as if it were UTC) to UTC: the offset at a first
 * guess, then at the result, which settles the instants near a DST change. */
static int64_t local_to_utc(int64_t local_ms, const struct tp_zone *z)
{
    int64_t guess =
        local_ms - (int64_t)clamp_offset(z->offset_min(local_ms, z->arg)) * 60 * MS_PER_S;
    int off2 = clamp_offset(z->offset_min(guess, z->arg));
    int64_t second = local_ms - (int64_t)off2 * 60 * MS_PER_S;

    /* a time a DST change skips or repeats: the first guess's reading */
    if (clamp_offset(z->offset_min(second, z->arg)) != off2)
        return guess;
    return second;
}

/* Is s[0..len) the word w, followed by the end or a space (then *rest is past it)? */
static int word(const char *s, size_t len, const char *w, size_t *rest)
{
    size_t n = 0;

    while (w[n])
        n++;
    if (len < n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != w[i])
            return 0;
    if (len == n || s[n] == ' ') {
        *rest = len == n ? n : n + 1;
        return 1;
    }
    return 0;
}

/* Has the RFC 3339 form at s a zone suffix (Z or an offset) after the time? */
static int has_zone(const char *s, size_t len)
{
    return len > 19 &&
           (s[len - 1] == 'Z' || s[len - 1] == 'z' ||
            (len >= 25 && (s[len - 6] == '+' || s[len - 6] == '-') && s[len - 3] == ':'));
}

int tp_parse_time_local(const char *s, size_t len, int64_t now_ms, const struct tp_zone *zone,
                        int64_t *out_ms)
{
    int64_t days, clock_ms = 0, local_now, ms;
    size_t rest = 0;
    int rc;

    if (!zone || len == 0)
        return tp_parse_time(s, len, now_ms, out_ms);
    /* today's local date, for the forms that need it; a "now" outside the years the parser
     * knows has none */
    if (now_ms >= TP_MIN_MS - MS_PER_DAY && now_ms <= TP_MAX_MS + MS_PER_DAY) {
        local_now =
            now_ms + (int64_t)clamp_offset(zone->offset_min(now_ms, zone->arg)) * 60 * MS_PER_S;
        days = (local_now >= 0 ? local_now : local_now - MS_PER_DAY + 1) / MS_PER_DAY;
    } else {
        days = INT64_MIN;
    }
    if (word(s, len, "today", &rest) || word(s, len, "yesterday", &rest)) {
        if (s[0] == 'y' && days != INT64_MIN) /* INT64_MIN: no date known, stays unknown */
            days--;
        if (rest < len && (rc = parse_clock(s + rest, len - rest, &clock_ms)) < 0)
            return rc;
    } else if (len >= 5 && s[2] == ':') {
        if ((rc = parse_clock(s, len, &clock_ms)) < 0)
            return rc;
    } else if (len >= 10 && s[4] == '-' && !has_zone(s, len)) {
        if ((rc = parse_date(s, len, &days)) < 0)
            return rc;
        if (len > 10) {
            if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
                return -EINVAL;
            if ((rc = parse_clock(s + 11, len - 11, &clock_ms)) < 0)
                return rc;
        }
    } else {
        return tp_parse_time(s, len, now_ms, out_ms);
    }
    if (days < -1 || days > TP_MAX_MS / MS_PER_DAY + 1) /* also no date for "today" */
        return -ERANGE;
    ms = local_to_utc(days * MS_PER_DAY + clock_ms, zone);
    if (ms < TP_MIN_MS || ms > TP_MAX_MS)
        return -ERANGE;
    *out_ms = ms;
    return 0;
}

char *tp_format_offset(int64_t ms, int off_min, int utc_z, char *buf, size_t cap)
{
    int a = off_min < 0 ? -off_min : off_min;

    tp_format_utc(ms + (int64_t)off_min * 60 * MS_PER_S, buf, cap);
    if (cap >= 30 && !(utc_z && off_min == 0)) {
        size_t n = 0;
        while (buf[n] && buf[n] != 'Z')
            n++;
        snprintf(buf + n, cap - n, "%c%02d:%02d", off_min < 0 ? '-' : '+', a / 60, a % 60);
    }
    return buf;
}
