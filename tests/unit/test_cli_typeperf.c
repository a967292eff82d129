/*
 * test_cli_typeperf.c - the pure parts of `perflog typeperf` (cli/typeperf_args.c): typeperf's
 * option spellings, -si forms, the -cf counter file, the unique path list and the -q/-qx paths;
 * -s and \\HOST prefixes; the rate over a -si window; the console format byte for byte against
 * typeperf's own output (tests/fixtures/csv/typeperf_*); the -config settings file
 * (the .cfg files of tests/fixtures/typeperf) and how it combines with the command line.
 */
#include "sbuf.h"
#include "testlib.h"
#include "typeperf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char err[256];

static int parse(struct tp_args *a, int argc, const char *const *argv)
{
    err[0] = '\0';
    return tp_parse_args(argc, (char **)argv, a, err, sizeof(err));
}

static void test_list(void)
{
    struct tp_list l = {0};

    CHECK_INT(tp_list_add(&l, "\\Memory\\Dirty Bytes", 19), 1);
    CHECK_INT(tp_list_add(&l, "\\Memory\\Dirty Bytes", 19), 0);
    CHECK_INT(tp_list_add(&l, "\\Memory\\Dirty Bytesxx", 19), 0); /* only len bytes count */
    CHECK_INT(tp_list_add(&l, "\\Memory\\Dirty", 13), 1);
    for (int i = 0; i < 40; i++) {
        char s[16];
        snprintf(s, sizeof(s), "p%d", i);
        CHECK_INT(tp_list_add(&l, s, strlen(s)), 1);
    }
    CHECK_INT(l.n, 42);
    CHECK_STR(l.v[0], "\\Memory\\Dirty Bytes");
    CHECK_STR(l.v[1], "\\Memory\\Dirty");
    CHECK_STR(l.v[41], "p39");
    tp_list_free(&l);
    CHECK_INT(l.n, 0);
    CHECK(l.v == NULL);
}

static void test_interval(void)
{
    int ms = -1;

    CHECK_INT(tp_parse_interval("1", &ms), 0);
    CHECK_INT(ms, 1000);
    CHECK_INT(tp_parse_interval("05", &ms), 0);
    CHECK_INT(ms, 5000);
    CHECK_INT(tp_parse_interval("1:30", &ms), 0);
    CHECK_INT(ms, 90000);
    CHECK_INT(tp_parse_interval("01:00:05", &ms), 0);
    CHECK_INT(ms, 3605000);
    ms = -1;
    CHECK_INT(tp_parse_interval("0", &ms), -1);
    CHECK_INT(tp_parse_interval("", &ms), -1);
    CHECK_INT(tp_parse_interval("1.5", &ms), -1);
    CHECK_INT(tp_parse_interval("-1", &ms), -1);
    CHECK_INT(tp_parse_interval("1:60", &ms), -1);
    CHECK_INT(tp_parse_interval("1:60:00", &ms), -1);
    CHECK_INT(tp_parse_interval("1:2:3:4", &ms), -1);
    CHECK_INT(tp_parse_interval("1:", &ms), -1);
    CHECK_INT(tp_parse_interval("25:00:00", &ms), -1);
    CHECK_INT(tp_parse_interval("86401", &ms), -1);
    CHECK_INT(ms, -1);
}

static void test_args(void)
{
    struct tp_args a;
    const char *const basic[] = {"typeperf",
                                 "\\Memory\\Dirty Bytes",
                                 "-SI",
                                 "2",
                                 "-Sc",
                                 "3",
                                 "-f",
                                 "tsv",
                                 "-O",
                                 "out.tsv",
                                 "-y",
                                 "\\Memory\\Dirty Bytes",
                                 "\\Processor(*)\\*"};
    const char *const defaults[] = {"typeperf", "\\Memory\\*"};
    const char *const q[] = {"typeperf", "-q", "Memory"};
    const char *const qx[] = {"typeperf", "-QX", "\\PhysicalDisk"};
    const char *const qpath[] = {"typeperf", "-q", "\\Memory\\*"};
    const char *const cf[] = {"typeperf", "-cf", "a.txt", "-CF", "b.txt", "--help"};

    CHECK_INT(parse(&a, 13, basic), 0);
    CHECK_INT(a.si_ms, 2000);
    CHECK_INT(a.sc, 3);
    CHECK_INT(a.tsv, 1);
    CHECK_STR(a.out, "out.tsv");
    CHECK_INT(a.yes, 1);
    CHECK_INT(a.query, TP_QUERY_NONE);
    CHECK_INT(a.paths.n, 2); /* the duplicate dropped, the order kept */
    CHECK_STR(a.paths.v[0], "\\Memory\\Dirty Bytes");
    CHECK_STR(a.paths.v[1], "\\Processor(*)\\*");
    tp_list_free(&a.paths);

    CHECK_INT(parse(&a, 2, defaults), 0);
    CHECK_INT(a.si_ms, 1000);
    CHECK_INT(a.sc, 0);
    CHECK_INT(a.tsv, 0);
    CHECK(a.out == NULL);
    tp_list_free(&a.paths);

    CHECK_INT(parse(&a, 3, q), 0);
    CHECK_INT(a.query, TP_QUERY_PATHS);
    CHECK_STR(a.query_object, "Memory");
    CHECK_INT(parse(&a, 3, qx), 0);
    CHECK_INT(a.query, TP_QUERY_INSTANCES);
    CHECK_STR(a.query_object, "\\PhysicalDisk");
    CHECK_INT(parse(&a, 3, qpath), 0); /* a counter path is not an OBJECT */
    CHECK(a.query_object == NULL);
    CHECK_INT(a.paths.n, 1);
    tp_list_free(&a.paths);
    CHECK_INT(parse(&a, 6, cf), 0);
    CHECK_INT(a.ncf, 2);
    CHECK_STR(a.cf[1], "b.txt");
    CHECK_INT(a.help, 1);
}

static void test_bad_args(void)
{
    struct tp_args a;
    const char *const cases[][3] = {
        {"typeperf", "-si", "0"},   {"typeperf", "-sc", "0"},     {"typeperf", "-sc", "x"},
        {"typeperf", "-f", "BIN"},  {"typeperf", "-nope", "\\M"}, {"typeperf", "\\M\\C", "-o"},
        {"typeperf", "-si", "1.5"}, {"typeperf", "", "\\M\\C"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        CHECK_INT(parse(&a, 3, cases[i]), -1);
        CHECK(err[0] != '\0');
        tp_list_free(&a.paths);
    }
    parse(&a, 3, cases[4]);
    CHECK(strstr(err, "unknown option '-nope'") != NULL);
    parse(&a, 3, cases[5]);
    CHECK(strstr(err, "-o needs a value") != NULL);
    tp_list_free(&a.paths);
}

static void test_counter_text(void)
{
    static const char text[] = "\xEF\xBB\xBF# typeperf -cf file\r\n"
                               "\\Memory\\Dirty Bytes\r\n"
                               "\r\n"
                               "   \"\\Processor(_Total)\\% Processor Time\"  \n"
                               "\t# indented comment\n"
                               "\\Memory\\Dirty Bytes\n"
                               "\\PhysicalDisk(*)\\Disk Bytes/sec";
    struct tp_list l = {0};

    CHECK_INT(tp_list_add(&l, "\\A\\B", 5), 1);
    CHECK_INT(tp_parse_counter_text(text, sizeof(text) - 1, &l), 4);
    CHECK_INT(l.n, 4);
    CHECK_STR(l.v[1], "\\Memory\\Dirty Bytes");
    CHECK_STR(l.v[2], "\\Processor(_Total)\\% Processor Time");
    CHECK_STR(l.v[3], "\\PhysicalDisk(*)\\Disk Bytes/sec");
    CHECK_INT(tp_parse_counter_text("", 0, &l), 0);
    CHECK_INT(tp_parse_counter_text("\n\n# x\n", 6, &l), 0);
    CHECK_INT(l.n, 4);
    tp_list_free(&l);
}

static void test_counter_file(void)
{
    char path[] = "/tmp/test_cli_typeperf_XXXXXX";
    int fd = mkstemp(path);
    struct tp_list l = {0};

    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK_INT(write(fd, "\\Memory\\*\n# no\n\\TCP\\*\n", 22), 22);
    close(fd);
    CHECK_INT(tp_read_counter_file(path, &l), 2);
    CHECK_INT(l.n, 2);
    CHECK_STR(l.v[1], "\\TCP\\*");
    unlink(path);
    CHECK_INT(tp_read_counter_file(path, &l), -ENOENT);
    tp_list_free(&l);
}

static void test_query_path(void)
{
    char buf[128];

    CHECK_INT(tp_query_path(buf, sizeof(buf), "Memory", NULL, "Dirty Bytes", 0), 19);
    CHECK_STR(buf, "\\Memory\\Dirty Bytes");
    tp_query_path(buf, sizeof(buf), "Memory", NULL, "Dirty Bytes", 1);
    CHECK_STR(buf, "\\Memory\\Dirty Bytes");
    tp_query_path(buf, sizeof(buf), "Processor", "0", "% Processor Time", 0);
    CHECK_STR(buf, "\\Processor(*)\\% Processor Time");
    tp_query_path(buf, sizeof(buf), "Processor", "0", "% Processor Time", 1);
    CHECK_STR(buf, "\\Processor(0)\\% Processor Time");
    CHECK(tp_object_matches(NULL, "Memory"));
    CHECK(tp_object_matches("memory", "Memory"));
    CHECK(tp_object_matches("\\Memory", "Memory"));
    CHECK(!tp_object_matches("Mem", "Memory"));
}

static void test_server_host(void)
{
    struct tp_args a;
    const char *argv[] = {"typeperf", "-s", "db1", "\\Memory\\Dirty Bytes"};
    const char *argv2[] = {"typeperf", "-S", "\\\\db1"};

    CHECK_INT(parse(&a, 4, argv), 0);
    CHECK_STR(a.server_host, "db1");
    tp_list_free(&a.paths);
    CHECK_INT(parse(&a, 3, argv2), 0);
    CHECK_STR(a.server_host, "db1"); /* typeperf's "\\HOST" form too */
    tp_list_free(&a.paths);
    const char *argv3[] = {"typeperf", "-s"};
    CHECK_INT(parse(&a, 2, argv3), -1);
    tp_list_free(&a.paths);
}

static void test_split_host(void)
{
    const char *host, *rest;
    size_t len;

    rest = tp_split_host("\\Memory\\Dirty Bytes", &host, &len);
    CHECK(host == NULL);
    CHECK_INT(len, 0);
    CHECK_STR(rest, "\\Memory\\Dirty Bytes");
    rest = tp_split_host("\\\\db1.example.org\\PhysicalDisk(*)\\Disk Bytes/sec", &host, &len);
    CHECK_INT(len, 15);
    CHECK(host && !strncmp(host, "db1.example.org", len));
    CHECK_STR(rest, "\\PhysicalDisk(*)\\Disk Bytes/sec");
    rest = tp_split_host("\\\\db1", &host, &len);
    CHECK_INT(len, 3);
    CHECK_STR(rest, "");
}

static int local(const char *name, const char *daemon)
{
    return tp_is_local_host(name, strlen(name), daemon);
}

static void test_local_host(void)
{
    CHECK_INT(local("db1", "db1"), 1);
    CHECK_INT(local("DB1", "db1"), 1);
    CHECK_INT(local("db1", "db1.example.org"), 1);
    CHECK_INT(local("db1.example.org", "db1"), 1);
    CHECK_INT(local("db1.example.org", "db1.example.org"), 1);
    CHECK_INT(local("localhost", "db1"), 1);
    CHECK_INT(local("127.0.0.1", "db1"), 1);
    CHECK_INT(local(".", "db1"), 1);
    CHECK_INT(local("db2", "db1"), 0);
    CHECK_INT(local("db", "db1"), 0);
    CHECK_INT(local("db1.other.org", "db1.example.org"), 0);
    CHECK_INT(local("db1x", "db1"), 0);
    CHECK_INT(local("", "db1"), 0);
    CHECK_INT(local("db1", ""), 0);
}

static void test_window_rate(void)
{
    /* The numbers of the report: 286720 B/s then 69632 B/s, one second each: typeperf -si 2
     * shows their average, 178176, where the newest second alone is 69632. */
    int64_t ts[] = {1000, 2000};
    double v[] = {286720, 69632};

    CHECK_DBL(tp_window_rate(ts, v, 2, 0), 178176, 1e-9);
    /* A late tick (1.5 s) weighs by its elapsed time: (100*1 + 400*1.5) / 2.5. */
    int64_t ts2[] = {1000, 2500};
    double v2[] = {100, 400};
    CHECK_DBL(tp_window_rate(ts2, v2, 2, 0), 280, 1e-9);
    /* A tick without a value is out of both sums. */
    double v3[] = {NAN, 400};
    CHECK_DBL(tp_window_rate(ts2, v3, 2, 0), 400, 1e-9);
    double v4[] = {NAN, NAN};
    CHECK(isnan(tp_window_rate(ts2, v4, 2, 0)));
    CHECK(isnan(tp_window_rate(ts, v, 0, 0)));
    /* one tick: its own value */
    CHECK_DBL(tp_window_rate(ts, v, 1, 0), 286720, 1e-9);
}

static char *read_fixture(const char *name, size_t *len)
{
    char path[512];
    FILE *f;
    char *buf = malloc(1 << 16);

    snprintf(path, sizeof(path), "%s/csv/%s", FIXTURES_DIR, name);
    f = fopen(path, "rb");
    if (!f || !buf) {
        if (f)
            fclose(f);
        free(buf);
        return NULL;
    }
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* "MM/DD/YYYY HH:MM:SS.mmm" as UTC ms. */
static int64_t fixture_time(const char *s)
{
    struct tm tm = {0};
    int ms = 0;

    sscanf(s, "%d/%d/%d %d:%d:%d.%d", &tm.tm_mon, &tm.tm_mday, &tm.tm_year, &tm.tm_hour, &tm.tm_min,
           &tm.tm_sec, &ms);
    tm.tm_mon -= 1;
    tm.tm_year -= 1900;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

/*
 * The fixture (typeperf's own console output) rebuilt from its times and values with
 * tp_format_header and tp_format_row must be the same bytes.
 */
static void check_console_fixture(const char *name, int tsv)
{
    size_t len = 0;
    char *want = read_fixture(name, &len), *line, *save = NULL, *copy;
    char *paths[] = {"\\PhysicalDisk(1 D:)\\Disk Bytes/sec"};
    struct sbuf b = {0};
    int first = 1;

    CHECK(want != NULL);
    if (!want)
        return;
    copy = strdup(want);
    tp_format_header(&b, tsv, "Window10-Workstation", paths, 1);
    for (line = strtok_r(copy, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        double v;
        const char *cell;

        if (first) {
            first = 0;
            continue;
        }
        cell = strchr(line + 1, '"') + 3; /* past the time and the separator */
        v = *cell == ' ' ? NAN : strtod(cell, NULL);
        tp_format_row(&b, tsv, fixture_time(line + 1), &v, 1);
    }
    CHECK(sbuf_ok(&b));
    CHECK_INT(b.len, len);
    CHECK(b.s && b.len == len && memcmp(b.s, want, len) == 0);
    if (b.s && (b.len != len || memcmp(b.s, want, len)))
        fprintf(stderr, "%s: got:\n%.300s\nwant:\n%.300s\n", name, b.s, want);
    sbuf_free(&b);
    free(copy);
    free(want);
}

static void test_console_format(void)
{
    setenv("TZ", "UTC", 1); /* the fixture's local times are then the UTC times */
    tzset();
    check_console_fixture("typeperf_console.csv", 0);
    check_console_fixture("typeperf_console.tsv", 1);
    check_console_fixture("typeperf_missing.csv", 0);
    CHECK_STR(TP_COMPLETED, "\r\nThe command completed successfully.\r\n");
}

/* Parse and apply tests/fixtures/typeperf/NAME onto the command line argv. 0 or -1 (err, *line). */
static int config_fixture(const char *name, int argc, const char *const *argv, struct tp_args *a,
                          struct tp_config *cfg, int *line)
{
    char path[512], *text = NULL;
    size_t len = 0;
    int rc;

    snprintf(path, sizeof(path), "%s/typeperf/%s", FIXTURES_DIR, name);
    err[0] = '\0';
    *line = -1;
    CHECK_INT(parse(a, argc, argv), 0);
    CHECK_INT(tp_read_text_file(path, &text, &len), 0);
    if (!text)
        return -1;
    rc = tp_config_parse(text, len, cfg, line, err, sizeof(err));
    free(text);
    if (rc == 0)
        rc = tp_config_apply(cfg, a, line, err, sizeof(err));
    return rc;
}

static void test_config_sections(void)
{
    const char *argv[] = {"typeperf", "-config", "x.cfg"};
    struct tp_args a;
    struct tp_config cfg = {0};
    int line;

    CHECK_INT(config_fixture("sections.cfg", 3, argv, &a, &cfg, &line), 0);
    CHECK_STR(a.config, "x.cfg");
    CHECK_INT(a.paths.n, 2);
    if (a.paths.n == 2) {
        CHECK_STR(a.paths.v[0], "\\Memory\\Dirty Bytes");             /* trailing blanks dropped */
        CHECK_STR(a.paths.v[1], "\\PhysicalDisk(*)\\Disk Bytes/sec"); /* quotes dropped */
    }
    CHECK_INT(a.si_ms, 2000);
    CHECK_INT(a.sc, 3);
    CHECK_INT(a.tsv, 1);
    CHECK_INT(a.yes, 1);
    CHECK(a.out == NULL);
    tp_list_free(&a.paths);
    tp_config_free(&cfg);
}

static void test_config_keyvalue(void)
{
    /* the command line's -sc and -o win; its counter comes first, the file's is added */
    const char *argv[] = {
        "typeperf", "\\Memory\\Dirty Bytes", "-sc", "7", "-o", "cli.csv", "-config", "x.cfg"};
    struct tp_args a;
    struct tp_config cfg = {0};
    int line;

    CHECK_INT(config_fixture("keyvalue.cfg", 8, argv, &a, &cfg, &line), 0);
    CHECK_INT(a.si_ms, 1000);
    CHECK_INT(a.sc, 7);
    CHECK_STR(a.out, "cli.csv");
    CHECK_INT(a.paths.n, 2);
    if (a.paths.n == 2) {
        CHECK_STR(a.paths.v[0], "\\Memory\\Dirty Bytes");
        CHECK_STR(a.paths.v[1], "\\Memory\\Cached Bytes"); /* no \r left */
    }
    tp_list_free(&a.paths);
    tp_config_free(&cfg);

    /* without them on the command line, the file's -o (with its space) and -sc hold */
    const char *argv2[] = {"typeperf"};
    CHECK_INT(config_fixture("keyvalue.cfg", 1, argv2, &a, &cfg, &line), 0);
    CHECK_INT(a.sc, 2);
    CHECK_STR(a.out, "out dir/rows.csv");
    tp_list_free(&a.paths);
    tp_config_free(&cfg);
}

/* A bad settings file fails on the line and with the words given. */
static void check_bad_config(const char *name, int want_line, const char *want)
{
    const char *argv[] = {"typeperf"};
    struct tp_args a;
    struct tp_config cfg = {0};
    int line;

    CHECK_INT(config_fixture(name, 1, argv, &a, &cfg, &line), -1);
    CHECK_INT(line, want_line);
    CHECK(strstr(err, want) != NULL);
    if (!strstr(err, want))
        fprintf(stderr, "%s: got '%s', want '%s'\n", name, err, want);
    tp_list_free(&a.paths);
    tp_config_free(&cfg);
}

static void test_config_bad(void)
{
    check_bad_config("bad_unknown_key.cfg", 4, "unknown key 'interval'");
    check_bad_config("bad_value.cfg", 3, "got 'abc'");
    check_bad_config("bad_no_key.cfg", 2, "a value before any key");
    check_bad_config("bad_missing_value.cfg", 1, "key 'si' has no value");
    check_bad_config("bad_twice.cfg", 4, "key 'sc' given twice (first on line 1)");
    check_bad_config("bad_nested.cfg", 1, "cannot name another");

    /* in-memory edge cases: a second value of a single key, a value for y, '[' alone */
    struct tp_config cfg = {0};
    int line;
    const char two[] = "[si]\n1\n2\n", yv[] = "[y] yes\n", open_br[] = "[si\n";
    CHECK_INT(tp_config_parse(two, strlen(two), &cfg, &line, err, sizeof(err)), -1);
    CHECK_INT(line, 3);
    CHECK(strstr(err, "takes one value") != NULL);
    tp_config_free(&cfg);
    CHECK_INT(tp_config_parse(yv, strlen(yv), &cfg, &line, err, sizeof(err)), -1);
    CHECK(strstr(err, "takes no value") != NULL);
    tp_config_free(&cfg);
    CHECK_INT(tp_config_parse(open_br, strlen(open_br), &cfg, &line, err, sizeof(err)), -1);
    CHECK(strstr(err, "without ']'") != NULL);
    tp_config_free(&cfg);
    /* an empty file and a file of comments are no settings, not an error */
    CHECK_INT(tp_config_parse("", 0, &cfg, &line, err, sizeof(err)), 0);
    CHECK_INT(tp_config_parse("; x\n# y\n", 8, &cfg, &line, err, sizeof(err)), 0);
    CHECK_INT(cfg.n, 0);
    /* -q with its object on the next line; -qx on its own */
    const char q[] = "[q]\nMemory\n", qx[] = "[QX]\n";
    struct tp_args a;
    const char *argv[] = {"typeperf"};
    CHECK_INT(parse(&a, 1, argv), 0);
    CHECK_INT(tp_config_parse(q, strlen(q), &cfg, &line, err, sizeof(err)), 0);
    CHECK_INT(tp_config_apply(&cfg, &a, &line, err, sizeof(err)), 0);
    CHECK_INT(a.query, TP_QUERY_PATHS);
    CHECK_STR(a.query_object, "Memory");
    tp_config_free(&cfg);
    CHECK_INT(parse(&a, 1, argv), 0);
    CHECK_INT(tp_config_parse(qx, strlen(qx), &cfg, &line, err, sizeof(err)), 0);
    CHECK_INT(tp_config_apply(&cfg, &a, &line, err, sizeof(err)), 0);
    CHECK_INT(a.query, TP_QUERY_INSTANCES);
    CHECK(a.query_object == NULL);
    tp_config_free(&cfg);
    /* -config needs its FILE */
    const char *noval[] = {"typeperf", "-config"};
    CHECK_INT(parse(&a, 2, noval), -1);
    tp_list_free(&a.paths);
}

int main(void)
{
    test_list();
    test_interval();
    test_args();
    test_bad_args();
    test_counter_text();
    test_counter_file();
    test_query_path();
    test_server_host();
    test_split_host();
    test_local_host();
    test_window_rate();
    test_console_format();
    test_config_sections();
    test_config_keyvalue();
    test_config_bad();
    return tl_done();
}
