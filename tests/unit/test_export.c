/*
 * test_export.c - the shared rules of an export (web/export.c): the window of a run's export, which
 * GET /api/v1/runs/{id}/export and `perflog export --db --run` both use, and the option checks
 * both make.
 */
#include "export.h"
#include "testlib.h"
#include "tz.h"

#include <errno.h>
#include <string.h>

#define NOW 5000000

static void window_of(const char *status, int64_t end_ms, int64_t settled_ms, int64_t *from,
                      int64_t *to)
{
    struct reader_run r = {
        .start_ms = 1000000, .end_ms = end_ms, .settled_ms = settled_ms, .pid = -1};

    snprintf(r.status, sizeof(r.status), "%s", status);
    export_run_window(&r, NOW, from, to);
}

static void test_run_window(void)
{
    int64_t from, to;

    /* settled: up to the end of the settle tail */
    window_of("settled", 2000000, 2500000, &from, &to);
    CHECK_INT(from, 1000000);
    CHECK_INT(to, 2500000);
    /* still running: up to now */
    window_of("running", 0, 0, &from, &to);
    CHECK_INT(to, NOW);
    /* ended and settling: the tail is still being recorded, up to now (not the end) */
    window_of("ending", 2000000, 0, &from, &to);
    CHECK_INT(to, NOW);
    /* interrupted (closed at the daemon's restart) and failed runs have no tail: their end */
    window_of("interrupted", 2000000, 0, &from, &to);
    CHECK_INT(to, 2000000);
    window_of("failed", 2000000, 0, &from, &to);
    CHECK_INT(to, 2000000);
    /* a settled time wins whatever the status says */
    window_of("interrupted", 2000000, 2100000, &from, &to);
    CHECK_INT(to, 2100000);
    /* no end recorded at all: up to now */
    window_of("interrupted", 0, 0, &from, &to);
    CHECK_INT(to, NOW);
    /* an end before the start (a wall clock stepped back) still gives a valid range */
    window_of("failed", 500000, 0, &from, &to);
    CHECK_INT(from, 1000000);
    CHECK_INT(to, 1000000);
}

static void test_parse_opts(void)
{
    static const char *const url[3] = {"format", "tz", "every"}, *const cli[3] = {"--format",
                                                                                  "--tz", "-t"};
    struct export_opts o = {.every = 7};
    char why[160] = "";

    CHECK_INT(export_parse_opts(NULL, NULL, NULL, url, &o, why, sizeof(why)), 0);
    CHECK(o.format == CSV_COMMA && !o.utc && o.every == 1);
    CHECK_INT(export_parse_opts("tsv", "utc", "1000000", url, &o, why, sizeof(why)), 0);
    CHECK(o.format == CSV_TAB && o.utc && o.every == 1000000);
    o.every = 3;
    CHECK_INT(export_parse_opts("xlsx", NULL, NULL, url, &o, why, sizeof(why)), -EINVAL);
    CHECK_STR(why, "format: 'xlsx' is not csv or tsv");
    CHECK_INT(o.every, 3); /* untouched */
    CHECK_INT(export_parse_opts(NULL, "cet", NULL, cli, &o, why, sizeof(why)), -EINVAL);
    CHECK_STR(why, "--tz: 'cet' is not local, utc, +HH:MM, -HH:MM or a zone of the tz database "
                   "(Europe/Paris)");
    CHECK(o.zone == NULL);
    /* a zone of the tz database, a fixed offset: o.zone, released by export_opts_clear */
    CHECK_INT(export_parse_opts(NULL, "Europe/Paris", NULL, url, &o, why, sizeof(why)), 0);
    CHECK(o.zone != NULL && !o.utc && !strcmp(tz_name(o.zone), "Europe/Paris"));
    export_opts_clear(&o);
    CHECK(o.zone == NULL);
    CHECK_INT(export_parse_opts(NULL, "+05:30", NULL, url, &o, why, sizeof(why)), 0);
    CHECK(o.zone != NULL && tz_offset_at(o.zone, 0, NULL) == 19800);
    export_opts_clear(&o);
    static const char *const hostile[] = {"../../etc/passwd", "/etc/passwd", "Europe/../../x",
                                          "zone1970.tab",     "+25:00",      "right/UTC"};
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        CHECK_INT(export_parse_opts(NULL, hostile[i], NULL, url, &o, why, sizeof(why)), -EINVAL);
        CHECK(o.zone == NULL && strncmp(why, "tz: '", 5) == 0);
    }
    static const char *const bad_every[] = {"0", "1000001", "", "5x", "-1", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_every) / sizeof(bad_every[0]); i++) {
        CHECK_INT(export_parse_opts(NULL, NULL, bad_every[i], cli, &o, why, sizeof(why)), -EINVAL);
        CHECK(strncmp(why, "-t: '", 5) == 0 && strstr(why, "from 1 to 1000000"));
    }
}

int main(void)
{
    test_run_window();
    test_parse_opts();
    return tl_done();
}
