/*
 * test_tz.c - web/tz.c: zone names that cannot leave the tz database's directory, fixed offsets,
 * and TZif zones read without the C library's global zone, checked against glibc's localtime_r
 * (which reads the same files) at instants from 1900 to 2100: the transitions of the file and,
 * past its last one, the footer's POSIX rule; southern-hemisphere, 30- and 45-minute zones and
 * Dublin's negative DST. Bad TZif data (truncated at every length, leap seconds, wrong magic) is
 * refused without crashing.
 */
#include "storage/query/tz.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_names(void)
{
    const char *good[] = {"Europe/Paris",           "America/Argentina/Salta", "Etc/GMT+5", "UTC",
                          "America/Port-au-Prince", "posix/Europe/Paris",      "EST5EDT",   "a.b"};
    const char *bad[] = {"",
                         "/etc/passwd",
                         "../etc/passwd",
                         "Europe/../../etc/passwd",
                         "..",
                         ".",
                         "Europe//Paris",
                         "Europe/",
                         "/Europe",
                         "Europe/.hidden",
                         "-x",
                         "Europe/Paris\n",
                         "Europe\\Paris",
                         "Europe/Par is",
                         "%2e%2e",
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECK_INT(tz_valid_name(good[i]), 1);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tz_zone *z = NULL;
        CHECK_INT(tz_valid_name(bad[i]), 0);
        CHECK_INT(tz_load(bad[i], &z), -EINVAL);
        CHECK(z == NULL);
    }
}

static void test_offsets(void)
{
    int32_t e = 1;
    struct tz_zone *z = NULL;
    int dst = 7;

    CHECK_INT(tz_parse_offset("+05:30", &e), 0);
    CHECK_INT(e, 19800);
    CHECK_INT(tz_parse_offset("-08:00", &e), 0);
    CHECK_INT(e, -28800);
    CHECK_INT(tz_parse_offset("+14:00", &e), 0);
    CHECK_INT(tz_parse_offset("+14:01", &e), -EINVAL);
    CHECK_INT(tz_parse_offset("+05:60", &e), -EINVAL);
    CHECK_INT(tz_parse_offset("05:30", &e), -EINVAL);
    CHECK_INT(tz_parse_offset("+5:30", &e), -EINVAL);
    CHECK_INT(tz_parse_offset("+0530", &e), -EINVAL);
    CHECK_INT(tz_parse_offset(" 05:30", &e), -EINVAL);
    CHECK_INT(tz_load("-05:30", &z), 0);
    if (z) {
        CHECK_STR(tz_name(z), "UTC-05:30");
        CHECK_INT(tz_is_database_name(z), 0);
        CHECK_INT(tz_offset_at(z, 1796000000, &dst), -19800);
        CHECK_INT(dst, 0);
    }
    tz_free(z);
    CHECK_INT(tz_load("+00:00", &z), 0);
    if (z)
        CHECK_STR(tz_name(z), "UTC");
    tz_free(z);
    CHECK_INT(tz_load("Mars/Olympus", &z), -ENOENT);
    CHECK_INT(tz_load("zone1970.tab", &z), -EINVAL); /* a file of the directory, not a zone */
    CHECK_INT(tz_load("Europe", &z), -EINVAL);       /* a directory */
}

/* Every 6 hours (plus an odd second) from 1900 to 2100, and one second either side of each
 * whole hour of a DST day of each of those years, the offset must be glibc's. */
static void check_zone(const char *name)
{
    struct tz_zone *z = NULL, *c;
    long bad = 0, n = 0;

    CHECK_INT(tz_load(name, &z), 0);
    if (!z)
        return;
    c = tz_copy(z);
    CHECK(c != NULL);
    setenv("TZ", name, 1);
    tzset();
    for (int64_t t = -2208988800LL; t < 4102444800LL; t += 6 * 3600 + 7) {
        for (int d = -1; d <= 1; d += 2) {
            time_t tt = (time_t)(t + d);
            struct tm tm;
            int dst;
            int32_t off = tz_offset_at(c ? c : z, (int64_t)tt, &dst);

            if (!localtime_r(&tt, &tm))
                continue;
            n++;
            if (off != (int32_t)tm.tm_gmtoff && bad++ < 3)
                fprintf(stderr, "%s at %lld: %d, glibc %ld\n", name, (long long)tt, (int)off,
                        (long)tm.tm_gmtoff);
        }
    }
    CHECK(n > 100000);
    CHECK_INT(bad, 0);
    CHECK_STR(tz_name(z), name);
    CHECK_INT(tz_is_database_name(z), 1);
    tz_free(c);
    tz_free(z);
}

static void test_against_glibc(void)
{
    const char *zones[] = {"Europe/Paris",
                           "America/New_York",
                           "Australia/Sydney",
                           "Asia/Kolkata",
                           "Pacific/Chatham",
                           "Europe/Dublin",
                           "America/Sao_Paulo",
                           "Africa/Casablanca",
                           "America/St_Johns",
                           "Australia/Lord_Howe",
                           "UTC",
                           "Etc/GMT+5"};

    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
        check_zone(zones[i]);
}

/* The DST flag across Paris's 2026 and 2050 changes (the latter from the footer's rule). */
static void test_dst_flag(void)
{
    struct tz_zone *z = NULL;
    int dst = -1;

    CHECK_INT(tz_load("Europe/Paris", &z), 0);
    if (!z)
        return;
    /* 2026-03-29T01:00:00Z: CET -> CEST */
    CHECK_INT(tz_offset_at(z, 1774746000 - 1, &dst), 3600);
    CHECK_INT(dst, 0);
    CHECK_INT(tz_offset_at(z, 1774746000, &dst), 7200);
    CHECK_INT(dst, 1);
    /* 2050-10-30T01:00:00Z: CEST -> CET, past the file's last transition */
    CHECK_INT(tz_offset_at(z, 2550704400 - 1, &dst), 7200);
    CHECK_INT(dst, 1);
    CHECK_INT(tz_offset_at(z, 2550704400, &dst), 3600);
    CHECK_INT(dst, 0);
    tz_free(z);
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = malloc(1 << 20);

    *len = f && b ? fread(b, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return b;
}

static void test_bad_tzif(void)
{
    size_t len = 0, rlen = 0;
    unsigned char *buf = read_all("/usr/share/zoneinfo/Europe/Paris", &len);
    unsigned char *right = read_all("/usr/share/zoneinfo/right/UTC", &rlen);
    struct tz_zone *z = NULL;
    long ok = 0;

    CHECK(len > 1000);
    /* every prefix: refused, or (past the 64-bit data) read without its footer; never a crash */
    for (size_t n = 0; n < len; n++) {
        int rc = tz_from_tzif("x", buf, n, &z);
        CHECK(rc == 0 || rc == -EINVAL);
        if (rc == 0) {
            ok++;
            tz_free(z);
        }
        z = NULL;
    }
    CHECK(ok < 64); /* only the prefixes that end inside the footer */
    CHECK_INT(tz_from_tzif("x", buf, len, &z), 0);
    tz_free(z);
    z = NULL;
    buf[0] = 'X';
    CHECK_INT(tz_from_tzif("x", buf, len, &z), -EINVAL);
    CHECK(rlen > 44);
    CHECK_INT(tz_from_tzif("right/UTC", right, rlen, &z), -EINVAL); /* leap seconds */
    CHECK(z == NULL);
    free(buf);
    free(right);
}

/* Paris's file with its footer's rule replaced by `rule`: tz_from_tzif's result. */
static int with_footer(const char *rule, int32_t *off_2050)
{
    size_t len = 0;
    unsigned char *buf = read_all("/usr/share/zoneinfo/Europe/Paris", &len);
    unsigned char *nl, *out;
    size_t keep, rlen = strlen(rule);
    struct tz_zone *z = NULL;
    int rc;

    CHECK(len > 2 && buf[len - 1] == '\n');
    for (nl = buf + len - 2; nl > buf && *nl != '\n'; nl--)
        ;
    keep = (size_t)(nl - buf) + 1;
    out = malloc(keep + rlen + 1);
    memcpy(out, buf, keep);
    memcpy(out + keep, rule, rlen);
    out[keep + rlen] = '\n';
    rc = tz_from_tzif("x", out, keep + rlen + 1, &z);
    if (rc == 0 && off_2050)
        *off_2050 = tz_offset_at(z, 2540000000LL, NULL); /* 2050-06-28, summer */
    tz_free(z);
    free(out);
    free(buf);
    return rc;
}

/* A footer's offsets are hours 0..24 (POSIX); its rule times may reach 167 (RFC 8536). The fuzzer
 * found "CET-30CEST,...", a 30-hour offset, accepted. */
static void test_footer_bounds(void)
{
    int32_t off = 0;

    CHECK_INT(with_footer("CET-1CEST,M3.5.0,M10.5.0/3", &off), 0);
    CHECK_INT(off, 7200);
    CHECK_INT(with_footer("CET-30CEST,M3.5.0,M10.5.0/3", NULL), -EINVAL);
    CHECK_INT(with_footer("CET-1CEST-25,M3.5.0,M10.5.0/3", NULL), -EINVAL);
    CHECK_INT(with_footer("CET-24CEST,M3.5.0,M10.5.0/3", &off), 0);
    CHECK_INT(with_footer("CET-1CEST,M3.5.0/-1,M10.5.0/27", &off), 0);
    CHECK_INT(off, 7200);
    CHECK_INT(with_footer("CET-1CEST,M3.5.0,M10.5.0/168", NULL), -EINVAL);
}

int main(void)
{
    test_names();
    test_offsets();
    test_against_glibc();
    test_dst_flag();
    test_bad_tzif();
    test_footer_bounds();
    return tl_done();
}
