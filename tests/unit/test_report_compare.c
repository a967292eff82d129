/*
 * test_report_compare.c - the figures of a comparison of runs (web/report_compare.c) on small
 * hand-made reports: values copied from each report, ratios to the first (null where the first is
 * 0 or missing, and for text), one row per disk any run has, idle disks left out, and the JSON
 * pointer reader with its escapes; the verdict's rows first. Also the median/min/max of perflog run
 * --repeat (cli/compare_fmt.c).
 */
#include "cli/compare.h"
#include "daemon/runs/report_compare.h"
#include "testlib.h"

#include <jansson.h>
#include <stdlib.h>

static const json_t *figure(const json_t *cmp, const char *name)
{
    const json_t *f;
    size_t i;

    json_array_foreach(
        json_object_get(cmp, "figures"), i,
        f) if (!strcmp(json_string_value(json_object_get(f, "name")), name)) return f;
    return NULL;
}

static double at(const json_t *f, const char *key, size_t i)
{
    const json_t *v = json_array_get(json_object_get(f, key), i);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int is_null(const json_t *f, const char *key, size_t i)
{
    return json_is_null(json_array_get(json_object_get(f, key), i));
}

/* compare_print of cmp in fmt, as a string (malloc'd). */
static char *printed(const json_t *cmp, enum compare_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    compare_print(f, cmp, fmt);
    fclose(f);
    return buf;
}

/* The text and CSV renderings: ratios after the later columns only, text quoted in CSV, null
 * empty, numbers as JSON writes them. */
static void test_print(void)
{
    json_t *r[2], *cmp;
    char *out;

    r[0] = json_loads("{\"id\": 7, \"label\": \"a\", \"host\": \"h\", \"duration_s\": 2.0,"
                      " \"cpu\": {\"busiest\": {\"instance\": \"x,\\\"y\"}}}",
                      0, NULL);
    r[1] =
        json_loads("{\"id\": 9, \"label\": \"b\", \"host\": \"h\", \"duration_s\": 6.0}", 0, NULL);
    cmp = report_compare(r, 2);
    out = printed(cmp, COMPARE_CSV);
    CHECK(out && !strncmp(out, "figure,unit,run 7,run 9,ratio 9\r\n", 33));
    CHECK(out && strstr(out, "\r\n\"duration_s\",\"s\",2.0,6.0,3.0\r\n") != NULL);
    CHECK(out && strstr(out, "\r\n\"cpu.busiest.instance\",\"\",\"x,\"\"y\",,\r\n") != NULL);
    CHECK(out && strstr(out, "\r\n\"throughput.claimed\",\"B/s\",,,\r\n") != NULL);
    free(out);
    out = printed(cmp, COMPARE_TEXT);
    CHECK(out && strstr(out, "run 7") && strstr(out, "run 9"));
    CHECK(out && strstr(out, "2.000 s ") && strstr(out, "6.000 s x3\n"));
    CHECK(out && !strstr(out, " \n")); /* no trailing blanks */
    free(out);
    compare_add_stats(cmp);
    out = printed(cmp, COMPARE_CSV);
    CHECK(out && !strncmp(out, "figure,unit,run 7,run 9,ratio 9,median,min,max\r\n", 48));
    CHECK(out && strstr(out, "\r\n\"duration_s\",\"s\",2.0,6.0,3.0,4.0,2.0,6.0\r\n") != NULL);
    free(out);
    out = printed(cmp, COMPARE_TEXT);
    CHECK(out && strstr(out, " median 4.000 s, min 2.000 s, max 6.000 s\n"));
    /* no statistics for text, nor for a figure no run has */
    CHECK(out && strstr(out, "\nbusiest core ") &&
          !strstr(strstr(out, "\nbusiest core "), "median -"));
    CHECK(out && !strstr(out, "median -"));
    free(out);
    json_decref(cmp);
    json_decref(r[0]);
    json_decref(r[1]);
}

/* The verdict heads the comparison: /mt:8 limited per file, /mt:16 by the wire. */
static void test_verdict_rows(void)
{
    json_t *r[2], *cmp;
    const json_t *f;

    r[0] = json_loads("{\"id\": 1, \"verdict\": {\"limit\": \"per_file\", \"instance\": null},"
                      " \"tail_verdict\": {\"limit\": \"none\"}}",
                      0, NULL);
    r[1] = json_loads("{\"id\": 2, \"verdict\": {\"limit\": \"wire\", \"instance\": \"eth0\"},"
                      " \"tail_verdict\": {\"limit\": \"none\"}}",
                      0, NULL);
    cmp = report_compare(r, 2);
    f = json_array_get(json_object_get(cmp, "figures"), 0);
    CHECK_STR(json_string_value(json_object_get(f, "name")), "verdict.limit");
    CHECK_STR(json_string_value(json_array_get(json_object_get(f, "values"), 0)), "per_file");
    CHECK_STR(json_string_value(json_array_get(json_object_get(f, "values"), 1)), "wire");
    f = figure(cmp, "verdict.instance");
    CHECK(f && is_null(f, "values", 0));
    CHECK_STR(json_string_value(json_array_get(json_object_get(f, "values"), 1)), "eth0");
    CHECK(figure(cmp, "tail_verdict.limit") != NULL);
    json_decref(cmp);
    json_decref(r[0]);
    json_decref(r[1]);
}

int main(void)
{
    json_t *r[3], *cmp;
    const json_t *f;
    json_t *doc;

    r[0] = json_loads("{\"id\": 3, \"duration_s\": 2.0, \"throughput\": {\"durable\": 100.0, "
                      "\"claimed\": null, \"returned\": 0},"
                      " \"disks\": [{\"instance\": \"vda\", \"read_bytes\": 10, \"busy_s\": 0},"
                      " {\"instance\": \"idle\", \"read_bytes\": 0, \"busy_s\": 0}],"
                      " \"cpu\": {\"busiest\": {\"instance\": \"1\"}}}",
                      0, NULL);
    r[1] = json_loads("{\"id\": 4, \"duration_s\": 3.0, \"throughput\": {\"durable\": 250.0, "
                      "\"claimed\": 5.0, \"returned\": 7},"
                      " \"disks\": [{\"instance\": \"sdb\", \"read_bytes\": 4},"
                      " {\"instance\": \"vda\", \"read_bytes\": 30, \"busy_s\": 1.5}],"
                      " \"cpu\": {\"busiest\": {\"instance\": \"0\"}}}",
                      0, NULL);
    r[2] = json_loads("{\"id\": 5, \"duration_s\": 1.0}", 0, NULL);
    cmp = report_compare(r, 3);
    CHECK(cmp != NULL);
    CHECK_INT(json_array_size(json_object_get(cmp, "runs")), 3);
    CHECK(json_array_get(json_object_get(cmp, "runs"), 1) == r[1]);

    f = figure(cmp, "duration_s");
    CHECK(f != NULL);
    CHECK_STR(json_string_value(json_object_get(f, "unit")), "s");
    CHECK_DBL(at(f, "values", 1), 3.0, 0);
    CHECK_DBL(at(f, "ratios", 0), 1.0, 1e-12);
    CHECK_DBL(at(f, "ratios", 1), 1.5, 1e-12);
    CHECK_DBL(at(f, "ratios", 2), 0.5, 1e-12);

    f = figure(cmp, "throughput.durable");
    CHECK_DBL(at(f, "ratios", 1), 2.5, 1e-12);
    CHECK(is_null(f, "values", 2) && is_null(f, "ratios", 2)); /* missing in the report */
    f = figure(cmp, "throughput.claimed");                     /* the first is null */
    CHECK(is_null(f, "values", 0) && is_null(f, "ratios", 1));
    CHECK_DBL(at(f, "values", 1), 5.0, 0);
    f = figure(cmp, "throughput.returned"); /* the first is 0 */
    CHECK(is_null(f, "ratios", 0) && is_null(f, "ratios", 1));
    CHECK(json_is_integer(json_array_get(json_object_get(f, "values"), 1))); /* as the report */

    f = figure(cmp, "disk.vda.read_bytes");
    CHECK(f != NULL);
    CHECK_STR(json_string_value(json_object_get(f, "title")), "vda read");
    CHECK_DBL(at(f, "ratios", 1), 3.0, 1e-12);
    CHECK(is_null(f, "values", 2));
    f = figure(cmp, "disk.sdb.read_bytes"); /* only the second run has it */
    CHECK(f != NULL && is_null(f, "values", 0) && at(f, "values", 1) == 4);
    CHECK(figure(cmp, "disk.idle.read_bytes") == NULL); /* 0 in every run */
    CHECK(figure(cmp, "disk.sdb.busy_s") == NULL);      /* null in every run */
    CHECK(figure(cmp, "disk.vda.busy_s") != NULL);

    f = figure(cmp, "cpu.busiest.instance"); /* text: no ratio */
    CHECK_STR(json_string_value(json_array_get(json_object_get(f, "values"), 1)), "0");
    CHECK(is_null(f, "ratios", 0) && is_null(f, "ratios", 1));

    /* the statistics of repeated runs: over the numbers, nulls left out */
    compare_add_stats(cmp);
    f = figure(cmp, "duration_s");
    CHECK_DBL(json_number_value(json_object_get(f, "median")), 2.0, 0);
    CHECK_DBL(json_number_value(json_object_get(f, "min")), 1.0, 0);
    CHECK_DBL(json_number_value(json_object_get(f, "max")), 3.0, 0);
    f = figure(cmp, "throughput.durable");
    CHECK_DBL(json_number_value(json_object_get(f, "median")), 175.0, 0);
    f = figure(cmp, "payload.ms_per_file");
    CHECK(json_is_null(json_object_get(f, "median")));
    json_decref(cmp);

    doc = json_loads("{\"a/b\": {\"m~n\": [1, {\"x\": 2}]}, \"\": 7}", 0, NULL);
    CHECK(report_compare_at(doc, "") == doc);
    CHECK_INT(json_integer_value(report_compare_at(doc, "/a~1b/m~0n/1/x")), 2);
    CHECK_INT(json_integer_value(report_compare_at(doc, "/a~1b/m~0n/0")), 1);
    CHECK_INT(json_integer_value(report_compare_at(doc, "/")), 7);
    CHECK(report_compare_at(doc, "/a~1b/m~0n/01") == NULL);
    CHECK(report_compare_at(doc, "/a~1b/m~0n/2") == NULL);
    CHECK(report_compare_at(doc, "/a/b") == NULL);
    CHECK(report_compare_at(doc, "x") == NULL);
    CHECK(report_compare_at(NULL, "/a") == NULL);
    json_decref(doc);
    for (int i = 0; i < 3; i++)
        json_decref(r[i]);
    test_print();
    test_verdict_rows();
    return tl_done();
}
