/*
 * test_timeparse.c - the time and duration forms of the HTTP API: RFC 3339 with offsets and
 * fractions, Unix seconds, "now" and relative offsets, impossible dates, the 1970..9999 range,
 * overflow, and the formatter's round trip; the local-time forms of tp_parse_time_local with a
 * fixed offset and with the real zones of TZ (two of them, one with summer time).
 */
#include "collectors/model/timeparse.h"
#include "storage/query/csv_zone.h"
#include "testlib.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOW       INT64_C(1795975200000) /* 2026-11-29T18:00:00Z */
#define MAX_MS    INT64_C(253402300799999)
#define UNTOUCHED INT64_C(-7)

/* Parse a NUL-terminated time; on failure check that *out was left alone. */
static int pt(const char *s, int64_t now_ms, int64_t *out)
{
    int rc;

    *out = UNTOUCHED;
    rc = tp_parse_time(s, strlen(s), now_ms, out);
    if (rc < 0)
        CHECK_INT(*out, UNTOUCHED);
    return rc;
}

static int pd(const char *s, int64_t *out)
{
    int rc;

    *out = UNTOUCHED;
    rc = tp_parse_duration(s, strlen(s), out);
    if (rc < 0)
        CHECK_INT(*out, UNTOUCHED);
    return rc;
}

static void test_rfc3339(void)
{
    int64_t ms;

    CHECK_INT(pt("2026-11-29T18:00:00Z", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("2026-11-29t18:00:00z", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("2026-11-29 18:00:00Z", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("2026-11-29T18:00:00.250+01:00", NOW, &ms), 0);
    CHECK_INT(ms, INT64_C(1795971600250));
    CHECK_INT(pt("2026-11-29T18:00:00+00:00", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("2026-11-29T18:00:00-00:00", NOW, &ms), 0);
    CHECK_INT(ms, NOW);

    /* Offsets that cross midnight and the year. */
    CHECK_INT(pt("2026-01-01T00:30:00+01:00", NOW, &ms), 0);
    CHECK_INT(ms, INT64_C(1767223800000)); /* 2025-12-31T23:30:00Z */
    CHECK_INT(pt("2025-12-31T23:30:00-01:00", NOW, &ms), 0);
    CHECK_INT(ms, INT64_C(1767227400000)); /* 2026-01-01T00:30:00Z */
    CHECK_INT(pt("2026-03-01T01:00:00+23:59", NOW, &ms), 0);
    CHECK_INT(pt("2026-03-01T01:00:00-23:59", NOW, &ms), 0);

    /* Fractions: kept to the millisecond, truncated, up to 9 digits. */
    CHECK_INT(pt("2026-11-29T18:00:00.1Z", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 100);
    CHECK_INT(pt("2026-11-29T18:00:00.12Z", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 120);
    CHECK_INT(pt("2026-11-29T18:00:00.999999999Z", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 999);
    CHECK_INT(pt("2026-11-29T18:00:00.0009Z", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("2026-11-29T18:00:00.1234567890Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T18:00:00.Z", NOW, &ms), -EINVAL);

    /* Leap days. */
    CHECK_INT(pt("2024-02-29T00:00:00Z", NOW, &ms), 0);
    CHECK_INT(ms, INT64_C(1709164800000));
    CHECK_INT(pt("2000-02-29T12:00:00Z", NOW, &ms), 0);
    CHECK_INT(ms, INT64_C(951825600000));
    CHECK_INT(pt("2023-02-29T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("1900-02-29T00:00:00Z", NOW, &ms), -EINVAL); /* not a leap year */
    CHECK_INT(pt("2100-02-29T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2400-02-29T00:00:00Z", NOW, &ms), 0);

    /* Impossible fields. */
    CHECK_INT(pt("2026-02-30T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-04-31T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-13-01T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-00-01T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-00T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-32T00:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-01T24:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-01T23:60:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-01T23:59:60Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-01T00:00:00+24:00", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-01-01T00:00:00+01:60", NOW, &ms), -EINVAL);

    /* Bad syntax. */
    CHECK_INT(pt("2026-11-29T18:00:00", NOW, &ms), -EINVAL); /* no offset */
    CHECK_INT(pt("2026-11-29", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29X18:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T18:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-1-29T18:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T18:00:00+0100", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T18:00:00+01", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T18:00:00ZZ", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T18:00:00Z ", NOW, &ms), -EINVAL);
    CHECK_INT(pt(" 2026-11-29T18:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("2026-11-29T1a:00:00Z", NOW, &ms), -EINVAL);
    CHECK_INT(pt("+026-11-29T18:00:00Z", NOW, &ms), -EINVAL);

    /* Range: 1970..9999. */
    CHECK_INT(pt("1970-01-01T00:00:00Z", NOW, &ms), 0);
    CHECK_INT(ms, 0);
    CHECK_INT(pt("1970-01-01T00:00:00.000+00:01", NOW, &ms), -ERANGE);
    CHECK_INT(pt("1970-01-01T00:30:00-01:00", NOW, &ms), 0);
    CHECK_INT(ms, 5400000);
    CHECK_INT(pt("1969-12-31T23:59:59.999Z", NOW, &ms), -ERANGE);
    CHECK_INT(pt("1969-12-31T23:00:00-01:00", NOW, &ms), 0);
    CHECK_INT(ms, 0);
    CHECK_INT(pt("0000-01-01T00:00:00Z", NOW, &ms), -ERANGE);
    CHECK_INT(pt("9999-12-31T23:59:59.999Z", NOW, &ms), 0);
    CHECK_INT(ms, MAX_MS);
    CHECK_INT(pt("9999-12-31T23:59:59.999999999Z", NOW, &ms), 0);
    CHECK_INT(ms, MAX_MS);
    CHECK_INT(pt("9999-12-31T23:59:59.999-00:01", NOW, &ms), -ERANGE);
    CHECK_INT(pt("9999-12-31T23:59:59.999+00:01", NOW, &ms), 0);
}

static void test_unix(void)
{
    int64_t ms;

    CHECK_INT(pt("1795975200", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("1795975200.5", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 500);
    CHECK_INT(pt("1795975200.123456789", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 123);
    CHECK_INT(pt("1795975200.1234567890", NOW, &ms), -EINVAL);
    CHECK_INT(pt("1795975200.", NOW, &ms), -EINVAL);
    CHECK_INT(pt("0", NOW, &ms), 0);
    CHECK_INT(ms, 0);
    CHECK_INT(pt("600", NOW, &ms), 0); /* unsigned: absolute */
    CHECK_INT(ms, 600000);
    CHECK_INT(pt("253402300799", NOW, &ms), 0);
    CHECK_INT(ms, MAX_MS - 999);
    CHECK_INT(pt("253402300799.999", NOW, &ms), 0);
    CHECK_INT(ms, MAX_MS);
    CHECK_INT(pt("253402300800", NOW, &ms), -ERANGE);
    CHECK_INT(pt("9223372036854775807", NOW, &ms), -ERANGE);
    CHECK_INT(pt("99999999999999999999999", NOW, &ms), -ERANGE);
    CHECK_INT(pt("1e9", NOW, &ms), -EINVAL);
    CHECK_INT(pt("0x10", NOW, &ms), -EINVAL);
    CHECK_INT(pt(".5", NOW, &ms), -EINVAL);
    CHECK_INT(pt("1.2.3", NOW, &ms), -EINVAL);
}

static void test_relative(void)
{
    int64_t ms;

    CHECK_INT(pt("now", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("now-1h", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 3600000);
    CHECK_INT(pt("now+30s", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 30000);
    CHECK_INT(pt("now-0s", NOW, &ms), 0);
    CHECK_INT(ms, NOW);
    CHECK_INT(pt("now-600", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 600000);
    CHECK_INT(pt("-10m", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 600000);
    CHECK_INT(pt("-600", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 600000);
    CHECK_INT(pt("+600", NOW, &ms), 0);
    CHECK_INT(ms, NOW + 600000);
    CHECK_INT(pt("-250ms", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 250);
    CHECK_INT(pt("-2d", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 2 * 86400000LL);
    CHECK_INT(pt("-1w", NOW, &ms), 0);
    CHECK_INT(ms, NOW - 7 * 86400000LL);
    CHECK_INT(pt("-0", NOW, &ms), 0);
    CHECK_INT(ms, NOW);

    /* Leaving 1970..9999 is a range error, whatever "now" is. */
    CHECK_INT(pt("-1ms", 0, &ms), -ERANGE);
    CHECK_INT(pt("now+1ms", MAX_MS, &ms), -ERANGE);
    CHECK_INT(pt("now", -1, &ms), -ERANGE);
    CHECK_INT(pt("now", INT64_MIN, &ms), -ERANGE);
    CHECK_INT(pt("now-1w", INT64_MIN, &ms), -ERANGE);
    CHECK_INT(pt("now+1w", INT64_MAX, &ms), -ERANGE);
    CHECK_INT(pt("now-9223372036854775807ms", NOW, &ms), -ERANGE);
    CHECK_INT(pt("now-9223372036854775807ms", INT64_MIN, &ms), -ERANGE);
    CHECK_INT(pt("-99999999999999999999d", NOW, &ms), -ERANGE);
    CHECK_INT(pt("-9999999999999999w", NOW, &ms), -ERANGE);

    /* Garbage. */
    CHECK_INT(pt("", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now-", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now+", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now1h", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now -1h", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now-1h ", NOW, &ms), -EINVAL);
    CHECK_INT(pt("nowx", NOW, &ms), -EINVAL);
    CHECK_INT(pt("NOW", NOW, &ms), -EINVAL);
    CHECK_INT(pt("no", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now-1x", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now-1H", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now-1hh", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now-1.5h", NOW, &ms), -EINVAL);
    CHECK_INT(pt("now--1h", NOW, &ms), -EINVAL);
    CHECK_INT(pt("--1", NOW, &ms), -EINVAL);
    CHECK_INT(pt("-+1", NOW, &ms), -EINVAL);
    CHECK_INT(pt("-", NOW, &ms), -EINVAL);
    CHECK_INT(pt("+", NOW, &ms), -EINVAL);
    CHECK_INT(pt("-h", NOW, &ms), -EINVAL);
    CHECK_INT(pt(" 1", NOW, &ms), -EINVAL);
    CHECK_INT(pt("1 ", NOW, &ms), -EINVAL);
    CHECK_INT(pt("nan", NOW, &ms), -EINVAL);
    CHECK_INT(pt("inf", NOW, &ms), -EINVAL);
    CHECK_INT(pt("-inf", NOW, &ms), -EINVAL);
    CHECK_INT(pt("1h", NOW, &ms), -EINVAL); /* a unit needs a sign or "now" */

    /* Not NUL-terminated: only len bytes are read. */
    CHECK_INT(tp_parse_time("now-1hXYZ", 6, NOW, &ms), 0);
    CHECK_INT(ms, NOW - 3600000);
    CHECK_INT(tp_parse_time("1795975200123", 10, NOW, &ms), 0);
    CHECK_INT(ms, NOW);
}

static void test_duration(void)
{
    int64_t ms;

    CHECK_INT(pd("60", &ms), 0);
    CHECK_INT(ms, 60000);
    CHECK_INT(pd("500ms", &ms), 0);
    CHECK_INT(ms, 500);
    CHECK_INT(pd("1ms", &ms), 0);
    CHECK_INT(ms, 1);
    CHECK_INT(pd("10s", &ms), 0);
    CHECK_INT(ms, 10000);
    CHECK_INT(pd("1m", &ms), 0);
    CHECK_INT(ms, 60000);
    CHECK_INT(pd("1h", &ms), 0);
    CHECK_INT(ms, 3600000);
    CHECK_INT(pd("1d", &ms), 0);
    CHECK_INT(ms, 86400000);
    CHECK_INT(pd("1w", &ms), 0);
    CHECK_INT(ms, 604800000);
    CHECK_INT(pd("3653d", &ms), 0); /* ten years */
    CHECK_INT(ms, 3653LL * 86400000);
    CHECK_INT(pd("3654d", &ms), -ERANGE);
    CHECK_INT(pd("521w", &ms), 0);
    CHECK_INT(pd("522w", &ms), -ERANGE);
    CHECK_INT(pd("99999999999999999999d", &ms), -ERANGE);
    CHECK_INT(pd("9223372036854775807ms", &ms), -ERANGE);
    CHECK_INT(pd("9223372036854775807w", &ms), -ERANGE);
    CHECK_INT(pd("0", &ms), -EINVAL);
    CHECK_INT(pd("0s", &ms), -EINVAL);
    CHECK_INT(pd("000ms", &ms), -EINVAL);
    CHECK_INT(pd("", &ms), -EINVAL);
    CHECK_INT(pd("-1s", &ms), -EINVAL);
    CHECK_INT(pd("+1s", &ms), -EINVAL);
    CHECK_INT(pd("s", &ms), -EINVAL);
    CHECK_INT(pd("1.5s", &ms), -EINVAL);
    CHECK_INT(pd("1 s", &ms), -EINVAL);
    CHECK_INT(pd(" 1s", &ms), -EINVAL);
    CHECK_INT(pd("1s ", &ms), -EINVAL);
    CHECK_INT(pd("1y", &ms), -EINVAL);
    CHECK_INT(pd("1S", &ms), -EINVAL);
    CHECK_INT(pd("1sm", &ms), -EINVAL);
    CHECK_INT(pd("1e3", &ms), -EINVAL);
    CHECK_INT(pd("0x10", &ms), -EINVAL);
    CHECK_INT(pd("nan", &ms), -EINVAL);
    CHECK_INT(tp_parse_duration("10sXX", 3, &ms), 0);
    CHECK_INT(ms, 10000);
}

static void test_format(void)
{
    char buf[32];
    int64_t ms;
    static const int64_t cases[] = {
        0, 1, 999, NOW, NOW + 250, 951782400000, 1709164800000, MAX_MS - 1, MAX_MS};

    CHECK_STR(tp_format_utc(0, buf, sizeof(buf)), "1970-01-01T00:00:00.000Z");
    CHECK_STR(tp_format_utc(NOW + 250, buf, sizeof(buf)), "2026-11-29T18:00:00.250Z");
    CHECK_STR(tp_format_utc(1709164800000, buf, sizeof(buf)), "2024-02-29T00:00:00.000Z");
    CHECK_STR(tp_format_utc(MAX_MS, buf, sizeof(buf)), "9999-12-31T23:59:59.999Z");
    CHECK_STR(tp_format_utc(-1, buf, sizeof(buf)), "1969-12-31T23:59:59.999Z");
    CHECK_INT(strlen(tp_format_utc(NOW, buf, 25)), 24);
    CHECK_STR(tp_format_utc(NOW, buf, 11), "2026-11-29");

    /* Far outside the parser's range the formatter still neither crashes nor overflows. */
    tp_format_utc(INT64_MIN, buf, sizeof(buf));
    CHECK(buf[0] == '-');
    tp_format_utc(INT64_MAX, buf, sizeof(buf));
    CHECK(strlen(buf) < sizeof(buf));

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tp_format_utc(cases[i], buf, sizeof(buf));
        CHECK_INT(pt(buf, NOW, &ms), 0);
        CHECK_INT(ms, cases[i]);
    }

    /* Every day of a leap and a common year, and every 4-year step to 9999, round-trips. */
    for (int64_t t = INT64_C(946684800000); t < INT64_C(1009843200000); t += 86400000 + 1001) {
        tp_format_utc(t, buf, sizeof(buf));
        if (pt(buf, NOW, &ms) != 0 || ms != t)
            CHECK_STR(buf, "round trip");
    }
    for (int64_t t = 0; t <= MAX_MS; t += INT64_C(1461) * 86400000 + 3723004) {
        tp_format_utc(t, buf, sizeof(buf));
        if (pt(buf, NOW, &ms) != 0 || ms != t)
            CHECK_STR(buf, "round trip");
    }
    CHECK(1);
}

static int fixed_offset(int64_t utc_ms, void *arg)
{
    (void)utc_ms;
    return *(const int *)arg;
}

static int tz_offset(int64_t utc_ms, void *arg)
{
    struct csv_local z;

    (void)arg;
    return csv_local_zone((time_t)(utc_ms / 1000), &z) == 0 ? -z.bias_min : 9999;
}

static int ptl(const char *s, int64_t now_ms, const struct tp_zone *z, int64_t *out)
{
    *out = UNTOUCHED;
    return tp_parse_time_local(s, strlen(s), now_ms, z, out);
}

#define T_2026_12_01_UTC INT64_C(1796083200000) /* 2026-12-01T00:00:00Z */
#define H                INT64_C(3600000)
#define MIN              INT64_C(60000)

static void test_local_fixed(void)
{
    int off = 60; /* UTC+1 */
    struct tp_zone z = {fixed_offset, &off};
    int64_t now = T_2026_12_01_UTC + 22 * H + 30 * MIN, ms; /* 23:30 local */

    CHECK_INT(ptl("2026-12-01 19:55:00", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 18 * H + 55 * MIN);
    CHECK_INT(ptl("2026-12-01T19:55", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 18 * H + 55 * MIN);
    CHECK_INT(ptl("2026-12-01 19:55:00.250", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 18 * H + 55 * MIN + 250);
    CHECK_INT(ptl("2026-12-01", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC - H);
    CHECK_INT(ptl("19:50", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 18 * H + 50 * MIN);
    CHECK_INT(ptl("19:50:30", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 18 * H + 50 * MIN + 30000);
    CHECK_INT(ptl("today", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC - H);
    CHECK_INT(ptl("yesterday", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC - 25 * H);
    CHECK_INT(ptl("yesterday 19:00", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC - 24 * H + 18 * H);
    CHECK_INT(ptl("today 07:05", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 6 * H + 5 * MIN);
    /* 23:30 UTC is already tomorrow at UTC+1: "today" follows the zone, not UTC */
    now = T_2026_12_01_UTC + 23 * H + 30 * MIN;
    CHECK_INT(ptl("today", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 23 * H);
    /* the forms with a zone, and the others, mean what they always did */
    CHECK_INT(ptl("2026-12-01T19:55:00Z", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 19 * H + 55 * MIN);
    CHECK_INT(ptl("2026-12-01T19:55:00+02:00", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC + 17 * H + 55 * MIN);
    CHECK_INT(ptl("-10m", now, &z, &ms), 0);
    CHECK_INT(ms, now - 10 * MIN);
    CHECK_INT(ptl("1795974000", now, &z, &ms), 0);
    CHECK_INT(ms, INT64_C(1795974000000));
    /* not times */
    CHECK_INT(ptl("yesterday-ish", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("25:00", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("19:60", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("19:5", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("2026-02-30 10:00", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("2026-12-01 19", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("2026-12-01X19:55", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("today 7pm", now, &z, &ms), -EINVAL);
    CHECK_INT(ptl("todays", now, &z, &ms), -EINVAL);
    CHECK_INT(ms, UNTOUCHED);
    /* the daemon's parser keeps its forms: no local ones */
    CHECK_INT(pt("19:50", now, &ms), -EINVAL);
    CHECK_INT(pt("today", now, &ms), -EINVAL);
    CHECK_INT(pt("2026-12-01 19:55:00", now, &ms), -EINVAL);
}

static void test_local_tz(void)
{
    struct tp_zone z = {tz_offset, NULL};
    int64_t now = T_2026_12_01_UTC + 12 * H, ms;

    setenv("TZ", "Europe/Berlin", 1);
    tzset();
    CHECK_INT(ptl("2026-12-01 19:55:00", now, &z, &ms), 0); /* CET, UTC+1 */
    CHECK_INT(ms, T_2026_12_01_UTC + 18 * H + 55 * MIN);
    CHECK_INT(ptl("2026-07-01 08:30", now, &z, &ms), 0); /* CEST, UTC+2 */
    CHECK_INT(ms, INT64_C(1782894600000) /* 2026-07-01T08:30Z */ - 2 * H);
    CHECK_INT(ptl("yesterday 19:00", now, &z, &ms), 0);
    CHECK_INT(ms, T_2026_12_01_UTC - 24 * H + 18 * H);

    setenv("TZ", "America/Los_Angeles", 1);
    tzset();
    CHECK_INT(ptl("2026-12-01 19:55:00", now, &z, &ms), 0); /* PST, UTC-8 */
    CHECK_INT(ms, T_2026_12_01_UTC + 27 * H + 55 * MIN);
    CHECK_INT(ptl("2026-07-01 08:30", now, &z, &ms), 0); /* PDT, UTC-7 */
    CHECK_INT(ms, INT64_C(1782894600000) /* 2026-07-01T08:30Z */ + 7 * H);
    CHECK_INT(ptl("today", now, &z, &ms), 0); /* 04:00 in Los Angeles: Dec 1 */
    CHECK_INT(ms, T_2026_12_01_UTC + 8 * H);
    unsetenv("TZ");
    tzset();
}

static void test_format_offset(void)
{
    char buf[40];

    CHECK_STR(tp_format_offset(T_2026_12_01_UTC, 60, 0, buf, sizeof(buf)),
              "2026-12-01T01:00:00.000+01:00");
    CHECK_STR(tp_format_offset(T_2026_12_01_UTC, -480, 0, buf, sizeof(buf)),
              "2026-11-30T16:00:00.000-08:00");
    CHECK_STR(tp_format_offset(T_2026_12_01_UTC, 0, 1, buf, sizeof(buf)),
              "2026-12-01T00:00:00.000Z");
    CHECK_STR(tp_format_offset(T_2026_12_01_UTC, 0, 0, buf, sizeof(buf)),
              "2026-12-01T00:00:00.000+00:00");
    CHECK_STR(tp_format_offset(T_2026_12_01_UTC, 330, 0, buf, sizeof(buf)),
              "2026-12-01T05:30:00.000+05:30");
}

int main(void)
{
    test_rfc3339();
    test_unix();
    test_relative();
    test_duration();
    test_format();
    test_local_fixed();
    test_local_tz();
    test_format_offset();
    return tl_done();
}
