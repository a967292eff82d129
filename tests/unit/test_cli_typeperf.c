/*
 * test_cli_typeperf.c - the pure parts of `perflog typeperf` (cli/typeperf_args.c): typeperf's
 * option spellings, -si forms, the -cf counter file, the unique path list and the -q/-qx paths.
 */
#include "testlib.h"
#include "typeperf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(void)
{
    test_list();
    test_interval();
    test_args();
    test_bad_args();
    test_counter_text();
    test_counter_file();
    test_query_path();
    return tl_done();
}
