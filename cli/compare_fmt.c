/*
 * compare_fmt.c - the comparison of runs as text, JSON or CSV, and the median, min and max of
 * each figure of repeated runs; see compare.h.
 */
#include "compare.h"
#include "term_escape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_W 24 /* the figure column */
#define COL_W  24 /* a run's column: value and ratio */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

void compare_add_stats(json_t *cmp)
{
    const json_t *fig, *v;
    size_t i, k;

    json_array_foreach(json_object_get(cmp, "figures"), i, fig)
    {
        const json_t *values = json_object_get(fig, "values");
        double *xs = malloc((json_array_size(values) + 1) * sizeof(*xs));
        size_t n = 0;

        if (!xs)
            return;
        json_array_foreach(values, k, v) if (json_is_number(v)) xs[n++] = json_number_value(v);
        qsort(xs, n, sizeof(*xs), cmp_double);
        json_object_set_new((json_t *)fig, "median",
                            n ? json_real(n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2)
                              : json_null());
        json_object_set_new((json_t *)fig, "min", n ? json_real(xs[0]) : json_null());
        json_object_set_new((json_t *)fig, "max", n ? json_real(xs[n - 1]) : json_null());
        free(xs);
    }
}

/* One value in the figure's unit, for people; "-" for null. */
static char *format_value(const json_t *v, const char *unit, char *buf, size_t cap)
{
    double x = json_number_value(v);

    if (json_is_string(v))
        return (char *)term_escape(json_string_value(v), buf, cap);
    if (!json_is_number(v))
        snprintf(buf, cap, "-");
    else if (!strcmp(unit, "B"))
        cli_format_bytes(x, buf, cap);
    else if (!strcmp(unit, "B/s"))
        cli_format_rate(x, buf, cap);
    else if (!strcmp(unit, "s"))
        snprintf(buf, cap, x < 10 ? "%.3f s" : "%.1f s", x);
    else if (!strcmp(unit, "ms"))
        snprintf(buf, cap, "%.1f ms", x);
    else if (!strcmp(unit, "%"))
        snprintf(buf, cap, "%.1f%%", x);
    else
        cli_format_value(x, buf, cap);
    return buf;
}

/* One cell of a run's column: padded to the column, but the last of a line (no trailing blanks). */
static void put_cell(FILE *f, const char *text, int last)
{
    if (last)
        fprintf(f, " %s", text);
    else
        fprintf(f, " %-*s", COL_W, text);
}

/* "run 3" and its label (and host when the runs are on several hosts) for the column heads. */
static void print_heads(FILE *f, const json_t *runs)
{
    const json_t *r, *first_host = json_object_get(json_array_get(runs, 0), "host");
    int hosts = 0;
    char buf[64], shown[COL_W + 1];
    size_t i;

    json_array_foreach(runs, i, r) hosts |= !json_equal(json_object_get(r, "host"), first_host);
    fprintf(f, "%-*s", NAME_W, "");
    json_array_foreach(runs, i, r)
    {
        snprintf(buf, sizeof(buf), "run %lld",
                 (long long)json_integer_value(json_object_get(r, "id")));
        put_cell(f, buf, i + 1 == json_array_size(runs));
    }
    fprintf(f, "\n%-*s", NAME_W, "");
    json_array_foreach(runs, i, r)
    {
        const char *label = json_string_value(json_object_get(r, "label"));
        const char *host = json_string_value(json_object_get(r, "host"));

        snprintf(buf, sizeof(buf), "%s%s%s", label ? label : "-", hosts ? " @" : "",
                 hosts && host ? host : "");
        /* cut to the column, at a character of the escaped text */
        put_cell(f, term_escape(buf, shown, COL_W + 1), i + 1 == json_array_size(runs));
    }
    fputc('\n', f);
}

static void print_text(FILE *f, const json_t *cmp)
{
    const json_t *fig, *v;
    size_t i, k;

    print_heads(f, json_object_get(cmp, "runs"));
    json_array_foreach(json_object_get(cmp, "figures"), i, fig)
    {
        const char *unit = json_string_value(json_object_get(fig, "unit"));
        const json_t *ratios = json_object_get(fig, "ratios");
        char val[64], cell[96], title[64];

        unit = unit ? unit : "";
        fprintf(
            f, "%-*s", NAME_W,
            term_escape(json_string_value(json_object_get(fig, "title")), title, sizeof(title)));
        json_array_foreach(json_object_get(fig, "values"), k, v)
        {
            const json_t *ratio = json_array_get(ratios, k);

            format_value(v, unit, val, sizeof(val));
            if (k && json_is_number(ratio))
                snprintf(cell, sizeof(cell), "%s x%.3g", val, json_number_value(ratio));
            else
                snprintf(cell, sizeof(cell), "%s", val);
            put_cell(f, cell,
                     k + 1 == json_array_size(json_object_get(fig, "values")) &&
                         !json_is_number(json_object_get(fig, "median")));
        }
        /* statistics of numbers only: none for text (the busiest core) or a figure no run has */
        if (json_is_number(json_object_get(fig, "median")))
            fprintf(f, " median %s, min %s, max %s",
                    format_value(json_object_get(fig, "median"), unit, val, sizeof(val)),
                    format_value(json_object_get(fig, "min"), unit, cell, sizeof(cell)),
                    format_value(json_object_get(fig, "max"), unit, title, sizeof(title)));
        fputc('\n', f);
    }
    fputs("(xN: the value over the first run's; docs/report.md defines each figure)\n", f);
}

/* A CSV field: numbers as JSON writes them (they read back as the same double), text quoted. */
static void csv_field(FILE *f, const json_t *v)
{
    char *s;

    if (!v || json_is_null(v))
        return;
    if (json_is_string(v)) {
        fputc('"', f);
        for (const char *p = json_string_value(v); *p; p++)
            fprintf(f, *p == '"' ? "\"\"" : "%c", *p);
        fputc('"', f);
        return;
    }
    s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    if (s)
        fputs(s, f);
    free(s);
}

static void print_csv(FILE *f, const json_t *cmp)
{
    const json_t *runs = json_object_get(cmp, "runs"), *r, *fig;
    static const char *const stats[] = {"median", "min", "max"};
    int with_stats =
        json_object_get(json_array_get(json_object_get(cmp, "figures"), 0), "median") != NULL;
    size_t i, k, n = json_array_size(runs);

    fputs("figure,unit", f);
    json_array_foreach(runs, i, r)
        fprintf(f, ",run %lld", (long long)json_integer_value(json_object_get(r, "id")));
    for (i = 1; i < n; i++)
        fprintf(f, ",ratio %lld",
                (long long)json_integer_value(json_object_get(json_array_get(runs, i), "id")));
    for (k = 0; with_stats && k < 3; k++)
        fprintf(f, ",%s", stats[k]);
    fputs("\r\n", f);
    json_array_foreach(json_object_get(cmp, "figures"), i, fig)
    {
        csv_field(f, json_object_get(fig, "name"));
        fputc(',', f);
        csv_field(f, json_object_get(fig, "unit"));
        for (k = 0; k < n; k++) {
            fputc(',', f);
            csv_field(f, json_array_get(json_object_get(fig, "values"), k));
        }
        for (k = 1; k < n; k++) {
            fputc(',', f);
            csv_field(f, json_array_get(json_object_get(fig, "ratios"), k));
        }
        for (k = 0; with_stats && k < 3; k++) {
            fputc(',', f);
            csv_field(f, json_object_get(fig, stats[k]));
        }
        fputs("\r\n", f);
    }
}

void compare_print(FILE *f, const json_t *cmp, enum compare_format fmt)
{
    char *s;

    if (fmt == COMPARE_CSV) {
        print_csv(f, cmp);
        return;
    }
    if (fmt == COMPARE_TEXT) {
        print_text(f, cmp);
        return;
    }
    s = json_dumps(cmp, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    if (s)
        fprintf(f, "%s\n", s);
    free(s);
}
