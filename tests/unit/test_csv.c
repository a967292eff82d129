/*
 * test_csv.c - PDH-CSV 4.0 cells against golden files cut from a real typeperf run (the seed
 * text of docs/design.md §6), the Windows zone names and biases, local time across DST changes, and
 * quoting. The goldens in tests/fixtures/csv/ have CRLF line ends (.gitattributes keeps them).
 */
#include "storage/query/csv.h"
#include "testlib.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOST "Window10-Workstation"
#define PATH "\\PhysicalDisk(1 D:)\\Disk Bytes/sec"

/* typeperf "\PhysicalDisk(1 D:)\Disk Bytes/sec", as it printed them. */
static const char *const seed_rows[][2] = {
    {"06/09/2020 14:33:11.352", "0.000000"},
    {"06/09/2020 14:33:12.368", "0.000000"},
    {"06/09/2020 14:33:13.383", "0.000000"},
    {"06/09/2020 14:33:14.399", "0.000000"},
    {"06/09/2020 14:33:15.415", "165801532.162476"},
    {"06/09/2020 14:33:16.430", "698765190.223793"},
    {"06/09/2020 14:33:17.430", "690891783.364765"},
    {"06/09/2020 14:33:18.446", "684659740.363080"},
    {"06/09/2020 14:33:19.461", "658671359.275732"},
    {"06/09/2020 14:33:20.462", "741672571.534981"},
    {"06/09/2020 14:33:21.477", "726053899.811889"},
    {"06/09/2020 14:33:22.493", "735001894.146732"},
};
#define NSEED (sizeof(seed_rows) / sizeof(seed_rows[0]))

static void set_tz(const char *tz)
{
    if (tz)
        setenv("TZ", tz, 1);
    else
        unsetenv("TZ");
    tzset();
}

static int64_t ms_utc(int y, int mo, int d, int h, int mi, int s, int ms)
{
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d};

    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

/* "MM/DD/YYYY HH:MM:SS.mmm" read as UTC. */
static int64_t parse_seed_time(const char *s)
{
    int mo, d, y, h, mi, sec, ms;

    if (sscanf(s, "%d/%d/%d %d:%d:%d.%d", &mo, &d, &y, &h, &mi, &sec, &ms) != 7)
        return -1;
    return ms_utc(y, mo, d, h, mi, sec, ms);
}

static char *read_fixture(const char *name, size_t *len)
{
    char path[512];
    FILE *fp;
    char *buf = NULL;
    long n;

    snprintf(path, sizeof(path), "%s/csv/%s", FIXTURES_DIR, name);
    fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, fp) == (size_t)n) {
            buf[n] = '\0';
            *len = (size_t)n;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(fp);
    return buf;
}

/* Compare b with the golden file byte for byte; on a difference, show where. */
static void check_golden(const char *name, const struct sbuf *b)
{
    size_t len = 0, i = 0;
    char *want = read_fixture(name, &len);

    CHECK(want != NULL);
    CHECK(sbuf_ok(b));
    if (!want || !b->s)
        goto out;
    while (i < len && i < b->len && want[i] == b->s[i])
        i++;
    if (i != len || i != b->len)
        fprintf(stderr, "%s: differs at byte %zu: got \"%.40s\", want \"%.40s\"\n", name, i,
                i < b->len ? b->s + i : "", i < len ? want + i : "");
    CHECK_INT(b->len, len);
    CHECK(i == len && i == b->len);
out:
    free(want);
}

/* The seed's rows with times shifted by offset_ms (to turn local times into UTC), the first
 * `nrows`, the first value missing when `miss_first`. */
static void build(struct sbuf *b, enum csv_format f, const struct csv_zone *zone, int utc,
                  int64_t offset_ms, size_t nrows, int miss_first)
{
    csv_first_cell(b, f, zone);
    csv_path_cell(b, f, HOST, PATH);
    csv_end_line(b);
    for (size_t i = 0; i < nrows; i++) {
        csv_time_cell(b, parse_seed_time(seed_rows[i][0]) + offset_ms, utc);
        csv_value_cell(b, f, i == 0 && miss_first ? NAN : strtod(seed_rows[i][1], NULL));
        csv_end_line(b);
    }
}

static void test_seed_values_round_trip(void)
{
    char buf[64];

    /* The seed's values are doubles printed with %.6f; parsing and printing them again must give
     * the same text, or the goldens could never match. */
    for (size_t i = 0; i < NSEED; i++) {
        snprintf(buf, sizeof(buf), "%.6f", strtod(seed_rows[i][1], NULL));
        CHECK_STR(buf, seed_rows[i][1]);
    }
    CHECK_INT(parse_seed_time(seed_rows[0][0]), INT64_C(1591713191352));
}

static void test_goldens(void)
{
    struct sbuf b = {0};
    struct csv_zone z;

    /* The seed's times are local times; with TZ=UTC they are the UTC times themselves. */
    set_tz("UTC");
    build(&b, CSV_COMMA, NULL, 0, 0, NSEED, 0);
    check_golden("typeperf_console.csv", &b);
    sbuf_free(&b);

    build(&b, CSV_TAB, NULL, 0, 0, NSEED, 0);
    check_golden("typeperf_console.tsv", &b);
    sbuf_free(&b);

    build(&b, CSV_COMMA, NULL, 0, 0, 6, 1);
    check_golden("typeperf_missing.csv", &b);
    sbuf_free(&b);

    /* The same console output in Los Angeles: June is PDT, so local = UTC - 7 h. */
    set_tz("America/Los_Angeles");
    build(&b, CSV_COMMA, NULL, 0, 7 * 3600 * 1000, NSEED, 0);
    check_golden("typeperf_console.csv", &b);
    sbuf_free(&b);
    csv_zone_at(0, parse_seed_time(seed_rows[0][0]) + 7 * 3600 * 1000, &z);
    CHECK_STR(z.name, "Pacific Daylight Time");
    CHECK_INT(z.bias_min, 420);

    /* A file export with tz=utc: UTC zone cell and UTC times whatever TZ says. */
    csv_zone_at(1, parse_seed_time(seed_rows[0][0]), &z);
    build(&b, CSV_COMMA, &z, 1, 0, 6, 0);
    check_golden("file_utc.csv", &b);
    sbuf_free(&b);
}

static void check_zone(const char *tz, int64_t t_ms, const char *name, int bias)
{
    struct csv_zone z;

    set_tz(tz);
    csv_zone_at(0, t_ms, &z);
    if (strcmp(z.name, name) != 0 || z.bias_min != bias)
        fprintf(stderr, "TZ=%s: got (%s)(%d)\n", tz ? tz : "(unset)", z.name, z.bias_min);
    CHECK_STR(z.name, name);
    CHECK_INT(z.bias_min, bias);
}

static void test_zones(void)
{
    int64_t winter = ms_utc(2026, 1, 15, 12, 0, 0, 0), summer = ms_utc(2026, 7, 15, 12, 0, 0, 0);
    struct csv_zone z;
    struct tm tm;
    time_t t;

    check_zone("America/Los_Angeles", winter, "Pacific Standard Time", 480);
    check_zone("America/Los_Angeles", summer, "Pacific Daylight Time", 420);
    check_zone(":America/Los_Angeles", winter, "Pacific Standard Time", 480);
    check_zone("/usr/share/zoneinfo/America/Los_Angeles", summer, "Pacific Daylight Time", 420);
    check_zone("America/New_York", winter, "Eastern Standard Time", 300);
    check_zone("America/Phoenix", summer, "US Mountain Standard Time", 420);
    check_zone("Europe/Berlin", winter, "W. Europe Standard Time", -60);
    check_zone("Europe/Berlin", summer, "W. Europe Daylight Time", -120);
    check_zone("Europe/London", winter, "GMT Standard Time", 0);
    check_zone("Europe/London", summer, "GMT Daylight Time", -60);
    check_zone("Europe/Paris", winter, "Romance Standard Time", -60);
    check_zone("Europe/Warsaw", winter, "Central European Standard Time", -60);
    check_zone("Europe/Prague", winter, "Central Europe Standard Time", -60);
    check_zone("Asia/Kolkata", winter, "India Standard Time", -330);
    check_zone("Asia/Tokyo", summer, "Tokyo Standard Time", -540);
    check_zone("Australia/Sydney", winter, "AUS Eastern Daylight Time", -660);
    check_zone("Australia/Sydney", summer, "AUS Eastern Standard Time", -600);
    /* Not in the table: the IANA name. */
    check_zone("America/Argentina/Ushuaia", winter, "America/Argentina/Ushuaia", 180);
    /* A POSIX rule, no zone file: the abbreviation. */
    check_zone("JST-9", winter, "JST", -540);
    check_zone("UTC", summer, "Coordinated Universal Time", 0);
    check_zone("Etc/UTC", summer, "Coordinated Universal Time", 0);
    check_zone("", summer, "Coordinated Universal Time", 0); /* glibc: empty TZ is UTC */

    /* The utc flag ignores TZ. */
    set_tz("Asia/Kolkata");
    csv_zone_at(1, summer, &z);
    CHECK_STR(z.name, "Coordinated Universal Time");
    CHECK_INT(z.bias_min, 0);

    /* No TZ: /etc/localtime names the zone; whatever it is, the bias is localtime's. */
    set_tz(NULL);
    csv_zone_at(0, summer, &z);
    t = (time_t)(summer / 1000);
    localtime_r(&t, &tm);
    CHECK(z.name[0] != '\0');
    CHECK_INT(z.bias_min, -tm.tm_gmtoff / 60);
}

static void check_time(int64_t t_ms, int utc, const char *want)
{
    char buf[32];

    csv_format_time(t_ms, utc, buf, sizeof(buf));
    CHECK_STR(buf, want);
}

static void test_dst_changes(void)
{
    /* US spring forward, 2026-03-08 02:00 PST = 10:00 UTC: 01:59:59.999 is followed by 03:00. */
    int64_t spring = ms_utc(2026, 3, 8, 10, 0, 0, 0);
    /* Fall back, 2026-11-01 02:00 PDT = 09:00 UTC: 01:30 happens at 08:30 and at 09:30 UTC. */
    int64_t fall = ms_utc(2026, 11, 1, 9, 0, 0, 0);
    struct csv_zone z;

    set_tz("America/Los_Angeles");
    check_time(spring - 1, 0, "03/08/2026 01:59:59.999");
    check_time(spring, 0, "03/08/2026 03:00:00.000");
    check_time(spring - 1, 1, "03/08/2026 09:59:59.999");
    check_time(fall - 1800 * 1000, 0, "11/01/2026 01:30:00.000");
    check_time(fall + 1800 * 1000, 0, "11/01/2026 01:30:00.000");
    check_time(fall - 1, 0, "11/01/2026 01:59:59.999");
    check_time(fall, 0, "11/01/2026 01:00:00.000");
    csv_zone_at(0, fall - 1800 * 1000, &z);
    CHECK_STR(z.name, "Pacific Daylight Time");
    CHECK_INT(z.bias_min, 420);
    csv_zone_at(0, fall + 1800 * 1000, &z);
    CHECK_STR(z.name, "Pacific Standard Time");
    CHECK_INT(z.bias_min, 480);

    /* Milliseconds and a short buffer. */
    check_time(ms_utc(2020, 6, 9, 14, 33, 11, 7), 1, "06/09/2020 14:33:11.007");
    {
        char small[6];

        csv_format_time(spring, 1, small, sizeof(small));
        CHECK_STR(small, "03/08");
    }
}

static void check_value(double v, const char *want)
{
    struct sbuf b = {0};

    csv_value_cell(&b, CSV_COMMA, v);
    CHECK_STR(b.s, want);
    sbuf_free(&b);
}

static void test_cells(void)
{
    struct sbuf b = {0};
    struct csv_zone z = {.name = "Odd \"Zone\"", .bias_min = -90};

    check_value(0.0, ",\"0.000000\"");
    check_value(-0.0, ",\"0.000000\"");
    check_value(-1e-9, ",\"0.000000\"");
    check_value(-2.25, ",\"-2.250000\"");
    check_value(NAN, ",\" \"");
    check_value(INFINITY, ",\" \"");
    check_value(-INFINITY, ",\" \"");
    check_value(1e20, ",\"100000000000000000000.000000\"");
    /* Too long for the short path: 301 digits before the point (1e300's exact binary value). */
    csv_value_cell(&b, CSV_COMMA, 1e300);
    CHECK_INT(b.len, 2 + 301 + 7 + 1);
    CHECK(b.s && strncmp(b.s, ",\"1000000000000000052", 21) == 0);
    CHECK(b.s && strcmp(b.s + b.len - 8, ".000000\"") == 0);
    sbuf_free(&b);

    /* A '"' inside a path or a zone name is doubled. */
    csv_path_cell(&b, CSV_COMMA, "HOST", "\\LogicalDisk(a\"b)\\Free Megabytes");
    CHECK_STR(b.s, ",\"\\\\HOST\\LogicalDisk(a\"\"b)\\Free Megabytes\"");
    sbuf_free(&b);
    csv_first_cell(&b, CSV_COMMA, &z);
    CHECK_STR(b.s, "\"(PDH-CSV 4.0) (Odd \"\"Zone\"\")(-90)\"");
    sbuf_free(&b);
    csv_first_cell(&b, CSV_TAB, &z);
    CHECK_STR(b.s, "\"(PDH-TSV 4.0) (Odd \"\"Zone\"\")(-90)\"");
    sbuf_free(&b);

    /* A path without its leading '\', and no host. */
    csv_path_cell(&b, CSV_TAB, "h", "Memory\\Available Bytes");
    csv_path_cell(&b, CSV_TAB, NULL, "\\Memory\\Available Bytes");
    CHECK_STR(b.s, "\t\"\\\\h\\Memory\\Available Bytes\"\t\"\\Memory\\Available Bytes\"");
    sbuf_free(&b);
}

static void *zone_worker(void *arg)
{
    int64_t t = *(const int64_t *)arg;
    intptr_t bad = 0;
    struct csv_zone z;
    char buf[32];

    for (int i = 0; i < 500; i++) {
        csv_zone_at(0, t, &z);
        csv_format_time(t, 0, buf, sizeof(buf));
        if (strcmp(z.name, "Pacific Daylight Time") != 0 || z.bias_min != 420 ||
            strcmp(buf, "07/15/2026 05:00:00.000") != 0)
            bad++;
    }
    return (void *)bad;
}

/* Concurrent callers see their own answers (no shared static buffers); TSan checks the rest. */
static void test_threads(void)
{
    int64_t t = ms_utc(2026, 7, 15, 12, 0, 0, 0);
    pthread_t th[4];
    void *bad;

    set_tz("America/Los_Angeles");
    for (int i = 0; i < 4; i++)
        CHECK_INT(pthread_create(&th[i], NULL, zone_worker, &t), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_INT(pthread_join(th[i], &bad), 0);
        CHECK_INT((intptr_t)bad, 0);
    }
}

int main(void)
{
    if (access("/usr/share/zoneinfo/America/Los_Angeles", R_OK) != 0) {
        fprintf(stderr, "FAIL: /usr/share/zoneinfo/America/Los_Angeles is missing: "
                        "apt-get install tzdata\n");
        CHECK(0);
        return tl_done();
    }
    test_seed_values_round_trip();
    test_goldens();
    test_zones();
    test_dst_changes();
    test_cells();
    test_threads();
    return tl_done();
}
