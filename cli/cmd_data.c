/*
 * cmd_data.c - `perflog data PATTERN...`: GET /api/v1/data and print an aligned table, one row per
 * timestamp and one column per series. Times are passed to the server as the user typed them; the
 * server parses them (docs/design.md §5) and its error message is what the user sees.
 */
#include "base/term_escape.h"
#include "cli/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: perflog data PATTERN... [--from T] [--to T] [--step S] [--agg avg|min|max]\n"
    "                    [--utc] [--csv | --json]\n"
    "\n"
    "Print stored values as a table: the time, then one column per matching counter, with its\n"
    "path and unit as the header; '-' where there is no value. PATTERN as for perflog counters,\n"
    "e.g. '\\Memory\\Dirty Bytes' or '\\PhysicalDisk(*)\\Disk Bytes/sec'.\n"
    "\n"
    "  --from T   start: a local time ('2026-12-01 19:55', 2026-12-01T19:55, 19:50, today,\n"
    "             'yesterday 19:00'), RFC 3339 with a zone, Unix seconds, now, -10m, now-1h\n"
    "             (default -10m); local means the client's zone (TZ), UTC with --utc\n"
    "  --to T     end, the same forms (default now)\n"
    "  --step S   one row per S (60, 500ms, 10s, 1m, 1h); coarse steps use the roll-ups\n"
    "  --agg A    how a step combines samples: avg (default), min or max\n"
    "  --utc      times in UTC instead of local time\n"
    "  --csv      comma-separated values for scripts: a header of the paths, ISO 8601 times,\n"
    "             an empty cell where there is no value\n"
    "  --json     print the server's JSON answer as it is\n"
    "\n"
    "Numbers have a fixed precision by unit: bytes and counts whole, percentages 2 decimals,\n"
    "rates (per second) 1 decimal, seconds 4, queue lengths 2. Rows before the first stored\n"
    "value (a range reaching back before the daemon started) are left out.\n";

struct data_opts {
    const char *from, *to, *step, *agg;
    int utc, json, csv;
    int64_t from_ms, to_ms; /* from and to, read in the client's zone */
};

struct column {
    const char *path, *unit;
    const json_t *values;
    int width;
    int decimals; /* -1: no fixed precision (cli_format_value) */
};

static int parse_opts(int argc, char **argv, struct data_opts *o)
{
    static const struct option opts[] = {
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},
        {"step", required_argument, NULL, 's'},
        {"agg", required_argument, NULL, 'a'},
        {"utc", no_argument, NULL, 'u'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            o->from = optarg;
            break;
        case 't':
            o->to = optarg;
            break;
        case 's':
            o->step = optarg;
            break;
        case 'a':
            o->agg = optarg;
            break;
        case 'u':
            o->utc = 1;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'c':
            o->csv = 1;
            break;
        default:
            cli_print_help(c != 'h', help);
            return c == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    return -1;
}

static int check_args(int argc, const struct data_opts *o)
{
    if (o->csv && o->json) {
        fprintf(stderr, "perflog data: --csv or --json, not both\n");
        return CLI_EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, "perflog data: give at least one counter PATTERN (perflog counters "
                        "lists them)\n");
        return CLI_EXIT_USAGE;
    }
    if (o->agg && strcmp(o->agg, "avg") != 0 && strcmp(o->agg, "min") != 0 &&
        strcmp(o->agg, "max") != 0) {
        fprintf(stderr, "perflog data: --agg: expected avg, min or max, got '%s'\n", o->agg);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* "/api/v1/data?counter=..&from=..", the patterns ok[] marks: NULL when out of memory. */
static char *build_target(int argc, char **argv, const unsigned char *ok, const struct data_opts *o)
{
    char *t = strdup("/api/v1/data");
    int r = t ? 0 : -1;

    for (int i = optind; i < argc && r == 0; i++)
        if (ok[i - optind])
            r = cli_query_add(&t, "counter", argv[i]);
    if (r == 0)
        r = cli_query_time(&t, "from", o->from, o->from_ms);
    if (r == 0)
        r = cli_query_time(&t, "to", o->to, o->to_ms);
    if (r == 0 && o->step)
        r = cli_query_add(&t, "step", o->step);
    if (r == 0 && o->agg)
        r = cli_query_add(&t, "agg", o->agg);
    if (r < 0) {
        free(t);
        return NULL;
    }
    return t;
}

static double value_at(const struct column *col, size_t i)
{
    const json_t *v = json_array_get(col->values, i);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The decimals a unit's values are shown with, so a column's points line up; -1 for a unit
 * not known here (an extra PDH counter). */
static int unit_decimals(const char *unit)
{
    size_t n = strlen(unit);

    if (!strcmp(unit, "bytes") || !strcmp(unit, "packets") || !strcmp(unit, "connections") ||
        !strcmp(unit, "id"))
        return 0;
    if (!strcmp(unit, "%") || !strcmp(unit, "requests"))
        return 2;
    if (!strcmp(unit, "s"))
        return 4;
    if (n > 2 && !strcmp(unit + n - 2, "/s"))
        return 1;
    return -1;
}

static char *format_cell(const struct column *col, double v, char *buf, size_t cap)
{
    if (col->decimals < 0 || isnan(v))
        return cli_format_value(v, buf, cap);
    snprintf(buf, cap, "%.*f", col->decimals, v);
    if (!strncmp(buf, "-0", 2) && strspn(buf + 2, ".0") == strlen(buf + 2))
        memmove(buf, buf + 1, strlen(buf)); /* no "-0.0" */
    return buf;
}

static void size_column(struct column *col, size_t first, size_t rows)
{
    char buf[64];
    size_t w = strlen(col->path), u = strlen(col->unit);

    if (u > w)
        w = u;
    for (size_t i = first; i < rows; i++) {
        size_t n = strlen(format_cell(col, value_at(col, i), buf, sizeof(buf)));
        if (n > w)
            w = n;
    }
    col->width = (int)w;
}

/* The first row with a value in some column: the rows before it are buckets from before the
 * first stored tick. */
static size_t first_row(const struct column *cols, size_t ncols, size_t rows)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t c = 0; c < ncols; c++)
            if (!isnan(value_at(&cols[c], i)))
                return i;
    return rows;
}

/* One column per series; NULL (with a message) when the answer is not the documented shape. */
static struct column *read_columns(const json_t *root, size_t rows, size_t *ncols, size_t *first)
{
    const json_t *series = json_object_get(root, "series"), *s;
    struct column *cols;
    size_t i;

    if (!json_is_array(series) || !json_is_array(json_object_get(root, "timestamps"))) {
        fprintf(stderr, "perflog: the answer has no \"timestamps\" and \"series\" lists\n");
        return NULL;
    }
    cols = calloc(json_array_size(series) + 1, sizeof(*cols));
    if (!cols) {
        fprintf(stderr, "perflog: out of memory\n");
        return NULL;
    }
    json_array_foreach(series, i, s)
    {
        const char *path = cli_json_str(s, "path"), *unit = cli_json_str(s, "unit");
        cols[i].path = path ? path : "?";
        cols[i].unit = unit ? unit : "";
        cols[i].values = json_object_get(s, "values");
        cols[i].decimals = unit_decimals(cols[i].unit);
    }
    *ncols = json_array_size(series);
    *first = first_row(cols, *ncols, rows);
    for (i = 0; i < *ncols; i++)
        size_column(&cols[i], *first, rows);
    return cols;
}

/* A CSV cell, quoted when it holds a comma, a quote or a line end (RFC 4180). */
static void csv_cell(const char *s, int first)
{
    if (!first)
        putchar(',');
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void print_csv(const json_t *root, const struct column *cols, size_t ncols, size_t first,
                      int utc)
{
    const json_t *ts = json_object_get(root, "timestamps");
    char tbuf[48], vbuf[64];

    char ebuf[1024];

    csv_cell("time", 1);
    for (size_t c = 0; c < ncols; c++) /* escaped as in the table: no terminal controls */
        csv_cell(term_escape(cols[c].path, ebuf, sizeof(ebuf)), 0);
    putchar('\n');
    for (size_t i = first; i < json_array_size(ts); i++) {
        int64_t t = (int64_t)json_number_value(json_array_get(ts, i));

        csv_cell(cli_format_iso(t, utc, tbuf, sizeof(tbuf)), 1);
        for (size_t c = 0; c < ncols; c++) {
            double v = value_at(&cols[c], i);
            csv_cell(isnan(v) ? "" : format_cell(&cols[c], v, vbuf, sizeof(vbuf)), 0);
        }
        putchar('\n');
    }
}

static void print_table(const json_t *root, const struct column *cols, size_t ncols, size_t first,
                        int utc)
{
    const json_t *ts = json_object_get(root, "timestamps");
    double step_ms = cli_json_num(root, "step_ms");
    int with_ms = !(step_ms >= 1000); /* sub-second steps (or unknown) show milliseconds */
    int tw = with_ms ? 23 : 19;
    char tbuf[48], vbuf[64], ebuf[4096];

    printf("%-*s", tw, utc ? "time (UTC)" : "time (local)");
    for (size_t c = 0; c < ncols; c++)
        printf("  %*s", cols[c].width, term_escape(cols[c].path, ebuf, sizeof(ebuf)));
    printf("\n%-*s", tw, "");
    for (size_t c = 0; c < ncols; c++)
        printf("  %*s", cols[c].width, term_escape(cols[c].unit, ebuf, sizeof(ebuf)));
    putchar('\n');
    for (size_t i = first; i < json_array_size(ts); i++) {
        int64_t t = (int64_t)json_number_value(json_array_get(ts, i));
        if (!with_ms) /* ticks land near whole seconds: show the nearest one */
            t = (t >= 0 ? t + 500 : t - 500) / 1000 * 1000;
        printf("%-*s", tw, cli_format_time(t, utc, with_ms, tbuf, sizeof(tbuf)));
        for (size_t c = 0; c < ncols; c++)
            printf("  %*s", cols[c].width,
                   format_cell(&cols[c], value_at(&cols[c], i), vbuf, sizeof(vbuf)));
        putchar('\n');
    }
}

static int print_data(const struct http_response *r, const struct data_opts *o)
{
    json_t *root = json_loadb(r->body, r->body_len, 0, NULL);
    size_t rows = json_array_size(json_object_get(root, "timestamps")), ncols = 0, first = 0;
    struct column *cols = read_columns(root, rows, &ncols, &first);
    int ret = cols ? CLI_EXIT_OK : CLI_EXIT_FAIL;

    if (cols) {
        if (o->csv)
            print_csv(root, cols, ncols, first, o->utc);
        else
            print_table(root, cols, ncols, first, o->utc);
        if (ncols == 0)
            fprintf(stderr, "perflog data: no counter matches (perflog counters lists them)\n");
        else if (first == rows)
            fprintf(stderr, "perflog data: no samples in this time range\n");
    }
    free(cols);
    json_decref(root);
    return ret;
}

int cmd_data(const struct cli *c, int argc, char **argv)
{
    struct data_opts o = {.from = "-10m", .to = "now"};
    struct http_response r;
    unsigned char *ok;
    char *target;
    int ret = parse_opts(argc, argv, &o), unmatched;

    if (ret < 0)
        ret = check_args(argc, &o);
    if (ret < 0 && cli_time_range("data", o.from, o.to, o.utc, &o.from_ms, &o.to_ms) != 0)
        ret = CLI_EXIT_USAGE;
    if (ret >= 0)
        return ret;
    ok = calloc((size_t)(argc - optind), 1);
    if (!ok) {
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    /* the patterns that match run; no table at all when none does */
    unmatched = cli_unmatched(c, "data", argv + optind, argc - optind, ok);
    if (unmatched < 0 || unmatched == argc - optind) {
        free(ok);
        return CLI_EXIT_FAIL;
    }
    target = build_target(argc, argv, ok, &o);
    free(ok);
    if (!target) {
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    ret = cli_get(c, target, &r);
    free(target);
    if (ret)
        return ret;
    if (o.json)
        cli_print_body(&r);
    else
        ret = print_data(&r, &o);
    httpc_response_free(&r);
    return ret == 0 && unmatched ? CLI_EXIT_FAIL : ret;
}
