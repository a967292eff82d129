/*
 * cmd_data.c - `perflog data PATTERN...`: GET /api/v1/data and print an aligned table, one row per
 * timestamp and one column per series. Times are passed to the server as the user typed them; the
 * server parses them (design section 5) and its error message is what the user sees.
 */
#include "cli.h"
#include "term_escape.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: perflog data PATTERN... [--from T] [--to T] [--step S] [--agg avg|min|max]\n"
    "                    [--utc] [--json]\n"
    "\n"
    "Print stored values as a table: the time, then one column per matching counter, with its\n"
    "path and unit as the header; '-' where there is no value. PATTERN as for perflog counters,\n"
    "e.g. '\\Memory\\Dirty Bytes' or '\\PhysicalDisk(*)\\Disk Bytes/sec'.\n"
    "\n"
    "  --from T   start: RFC 3339, Unix seconds, now, -10m, now-1h, -600 (default -10m)\n"
    "  --to T     end, the same forms (default now)\n"
    "  --step S   one row per S (60, 500ms, 10s, 1m, 1h); coarse steps use the roll-ups\n"
    "  --agg A    how a step combines samples: avg (default), min or max\n"
    "  --utc      times in UTC instead of local time\n"
    "  --json     print the server's JSON answer as it is\n";

struct data_opts {
    const char *from, *to, *step, *agg;
    int utc, json;
};

struct column {
    const char *path, *unit;
    const json_t *values;
    int width;
};

static int parse_opts(int argc, char **argv, struct data_opts *o)
{
    static const struct option opts[] = {
        {"from", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
        {"step", required_argument, NULL, 's'}, {"agg", required_argument, NULL, 'a'},
        {"utc", no_argument, NULL, 'u'},        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
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
        default:
            cli_print_help(c != 'h', help);
            return c == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    return -1;
}

static int check_args(int argc, const struct data_opts *o)
{
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

/* "/api/v1/data?counter=..&from=..": NULL when out of memory. */
static char *build_target(int argc, char **argv, const struct data_opts *o)
{
    char *t = strdup("/api/v1/data");
    int r = t ? 0 : -1;

    for (int i = optind; i < argc && r == 0; i++)
        r = cli_query_add(&t, "counter", argv[i]);
    if (r == 0)
        r = cli_query_add(&t, "from", o->from);
    if (r == 0)
        r = cli_query_add(&t, "to", o->to);
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

static void size_column(struct column *col, size_t rows)
{
    char buf[64];
    size_t w = strlen(col->path), u = strlen(col->unit);

    if (u > w)
        w = u;
    for (size_t i = 0; i < rows; i++) {
        size_t n = strlen(cli_format_value(value_at(col, i), buf, sizeof(buf)));
        if (n > w)
            w = n;
    }
    col->width = (int)w;
}

/* One column per series; NULL (with a message) when the answer is not the documented shape. */
static struct column *read_columns(const json_t *root, size_t rows, size_t *ncols)
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
        size_column(&cols[i], rows);
    }
    *ncols = json_array_size(series);
    return cols;
}

static void print_table(const json_t *root, const struct column *cols, size_t ncols, int utc)
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
    for (size_t i = 0; i < json_array_size(ts); i++) {
        int64_t t = (int64_t)json_number_value(json_array_get(ts, i));
        if (!with_ms) /* ticks land near whole seconds: show the nearest one */
            t = (t >= 0 ? t + 500 : t - 500) / 1000 * 1000;
        printf("%-*s", tw, cli_format_time(t, utc, with_ms, tbuf, sizeof(tbuf)));
        for (size_t c = 0; c < ncols; c++)
            printf("  %*s", cols[c].width,
                   cli_format_value(value_at(&cols[c], i), vbuf, sizeof(vbuf)));
        putchar('\n');
    }
}

static int print_data(const struct http_response *r, int utc)
{
    json_t *root = json_loadb(r->body, r->body_len, 0, NULL);
    size_t rows = json_array_size(json_object_get(root, "timestamps")), ncols = 0;
    struct column *cols = read_columns(root, rows, &ncols);
    int ret = cols ? CLI_EXIT_OK : CLI_EXIT_FAIL;

    if (cols) {
        print_table(root, cols, ncols, utc);
        if (ncols == 0)
            fprintf(stderr, "perflog data: no counter matches (perflog counters lists them)\n");
        else if (rows == 0)
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
    char *target;
    int ret = parse_opts(argc, argv, &o);

    if (ret < 0)
        ret = check_args(argc, &o);
    if (ret >= 0)
        return ret;
    target = build_target(argc, argv, &o);
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
        ret = print_data(&r, o.utc);
    httpc_response_free(&r);
    return ret;
}
