/*
 * report_verdict_fmt.c - the first lines of a run report's text: what limited the run and its
 * tail (the report's `verdict` and `tail_verdict`, docs/report.md), with the evidence and the
 * phases. Pure: JSON in, text out.
 */
#include "base/term_escape.h"
#include "cli/cli.h"
#include "cli/run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EVIDENCE_SHOWN 3 /* measured figures on the line; --json has them all */
#define PHASES_SHOWN   8

static const char *limit_name(const char *limit)
{
    static const struct {
        const char *key, *text;
    } names[] = {
        {"disk", "a disk"},
        {"wire", "the wire"},
        {"core", "one core"},
        {"tool", "the tool itself"},
        {"per_file", "per-file overhead"},
        {"writeback", "the page cache and writeback"},
        {"retransmits", "retransmits or drops"},
        {"remote", "the remote side"},
        {"none", "no single limit found"},
    };

    for (size_t i = 0; limit && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(limit, names[i].key) == 0)
            return names[i].text;
    return limit ? limit : "-";
}

static void value(FILE *f, const json_t *e)
{
    const json_t *v = json_object_get(e, "value");
    const char *unit = cli_json_str(e, "unit");
    char buf[64], esc[256];

    if (json_is_string(v)) {
        fprintf(f, "%s", term_escape(json_string_value(v), esc, sizeof(esc)));
        return;
    }
    if (unit && strcmp(unit, "bytes") == 0)
        fprintf(f, "%s", cli_format_bytes(json_number_value(v), buf, sizeof(buf)));
    else if (unit && strcmp(unit, "bytes/s") == 0)
        fprintf(f, "%s", cli_format_rate(json_number_value(v), buf, sizeof(buf)));
    else
        fprintf(f, "%.4g%s%s", json_number_value(v), unit && *unit && strcmp(unit, "%") ? " " : "",
                unit ? unit : "");
}

/* "disk vda at 97% (busy, busy_pct 97.2% over 12 s, ...)" or "none (top: ...)". */
static void one(FILE *f, const char *what, const json_t *v)
{
    const char *limit = cli_json_str(v, "limit"), *inst = cli_json_str(v, "instance");
    double util = cli_json_num(v, "utilisation");
    const json_t *e, *list = json_object_get(v, "evidence");
    char esc[256], p[32];
    size_t i, shown = 0;

    fprintf(f, "  %-13s %s", what, limit_name(limit));
    if (inst)
        fprintf(f, " %s", term_escape(inst, esc, sizeof(esc)));
    if (isfinite(util))
        fprintf(f, " at %s of its limit", cli_format_pct(100.0 * util, p, sizeof(p)));
    if (limit && strcmp(limit, "none") == 0) {
        list = json_object_get(v, "top"); /* the answer when no rule held */
        fprintf(f, " (highest");
    } else {
        fprintf(
            f, " (%s",
            term_escape(cli_json_str(v, "rule") ? cli_json_str(v, "rule") : "-", esc, sizeof(esc)));
    }
    json_array_foreach(list, i, e)
    {
        if (shown == EVIDENCE_SHOWN)
            break;
        if (json_object_get(e, "utilisation")) { /* a "top" entry */
            fprintf(f, "%s %s", shown ? "," : ":", limit_name(cli_json_str(e, "limit")));
            if (cli_json_str(e, "instance"))
                fprintf(f, " %s", term_escape(cli_json_str(e, "instance"), esc, sizeof(esc)));
            fprintf(f, " %s", cli_format_pct(100.0 * cli_json_num(e, "utilisation"), p, sizeof(p)));
            shown++;
            continue;
        }
        if (!json_is_number(json_object_get(e, "value")) &&
            !json_is_string(json_object_get(e, "value")))
            continue;
        fprintf(f, "%s %s ", shown ? "," : ";",
                term_escape(cli_json_str(e, "figure") ? cli_json_str(e, "figure") : "-", esc,
                            sizeof(esc)));
        value(f, e);
        if (cli_json_num(e, "seconds") > 0)
            fprintf(f, " over %.0f s", cli_json_num(e, "seconds"));
        shown++;
    }
    fprintf(f, ")\n");
}

/* "phases  0.0-12.0 s none; 12.0-40.3 s a disk vda", seconds from the run's start. */
static void phases(FILE *f, const json_t *v, double start_ms)
{
    const json_t *list = json_object_get(v, "phases"), *p;
    char esc[256];
    size_t i;

    if (json_array_size(list) < 2 || !isfinite(start_ms))
        return;
    fprintf(f, "  %-13s", "phases");
    json_array_foreach(list, i, p)
    {
        if (i == PHASES_SHOWN) {
            fprintf(f, "; ... (%zu in all)", json_array_size(list));
            break;
        }
        fprintf(f, "%s %.1f-%.1f s %s", i ? ";" : "",
                (cli_json_num(p, "from_ms") - start_ms) / 1000.0,
                (cli_json_num(p, "to_ms") - start_ms) / 1000.0,
                strcmp(cli_json_str(p, "limit") ? cli_json_str(p, "limit") : "", "none") == 0
                    ? "none"
                    : limit_name(cli_json_str(p, "limit")));
        if (cli_json_str(p, "instance"))
            fprintf(f, " %s", term_escape(cli_json_str(p, "instance"), esc, sizeof(esc)));
    }
    fprintf(f, "\n");
}

void run_report_verdict(FILE *f, const json_t *report)
{
    const json_t *v = json_object_get(report, "verdict");
    const json_t *t = json_object_get(report, "tail_verdict");
    const json_t *first = json_array_get(json_object_get(v, "phases"), 0);
    double start_ms = cli_json_num(first, "from_ms");

    if (!json_is_object(v))
        return;
    fprintf(f, "\n");
    one(f, "limit", v);
    phases(f, v, start_ms);
    if (json_is_object(t)) {
        one(f, "tail limit", t);
        phases(f, t, start_ms);
    }
}
