/*
 * report_fmt.c - a run report (design section 7, the JSON the server stores in runs.report_json)
 * as text for people. The server keeps only the JSON; the client renders it, so `perflog run`
 * and `perflog report ID` print the same thing. Pure: JSON in, text out.
 */
#include "cli.h"
#include "cli_os.h"
#include "run.h"
#include "term_escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or(const json_t *o, const char *key, const char *def)
{
    const char *s = cli_json_str(o, key);

    return s ? s : def;
}

/* str_or made safe to print (term_escape.h): the report's strings came from outside. */
#define ESC_MAX 512
static const char *esc_or(const json_t *o, const char *key, const char *def, char *buf)
{
    return term_escape(str_or(o, key, def), buf, ESC_MAX);
}

static char *bytes(double v, char *buf, size_t cap)
{
    return cli_format_bytes(v, buf, cap);
}

static char *rate(double v, char *buf, size_t cap)
{
    return cli_format_rate(v, buf, cap);
}

static char *pct(double v, char *buf, size_t cap)
{
    return cli_format_pct(v, buf, cap);
}

/* v with `decimals` digits after the point, or "-". */
static char *num(double v, int decimals, char *buf, size_t cap)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.*f", decimals, v);
    return buf;
}

static void head(FILE *f, const json_t *r)
{
    const char *label = cli_json_str(r, "label");
    char ec[32], dur[32], tail[32], e1[ESC_MAX], e2[ESC_MAX], e3[ESC_MAX];

    fprintf(f, "run %s", num(cli_json_num(r, "id"), 0, ec, sizeof(ec)));
    if (label && *label)
        fprintf(f, " \"%s\"", term_escape(label, e1, sizeof(e1)));
    fprintf(f, " on %s: %s\n", esc_or(r, "host", "-", e1), esc_or(r, "command", "-", e2));
    fprintf(f, "  %s -> %s, settled %s\n", esc_or(r, "start_utc", "-", e1),
            esc_or(r, "end_utc", "-", e2), esc_or(r, "settled_utc", "-", e3));
    fprintf(f, "  exit code %s, duration %s, tail %s\n",
            num(cli_json_num(r, "exit_code"), 0, ec, sizeof(ec)),
            cli_format_duration(cli_json_num(r, "duration_s"), dur, sizeof(dur)),
            cli_format_duration(cli_json_num(r, "tail_s"), tail, sizeof(tail)));
}

/* The measured throughput: the report's own, else payload bytes over the run's duration. */
static double measured_rate(const json_t *r)
{
    double m = cli_json_num(json_object_get(r, "tool"), "measured_bytes_per_s");
    double p = cli_json_num(json_object_get(r, "payload"), "bytes");
    double d = cli_json_num(r, "duration_s");

    if (!isnan(m))
        return m;
    return !isnan(p) && d > 0 ? p / d : NAN;
}

static void summary(FILE *f, const json_t *r)
{
    const json_t *tool = json_object_get(r, "tool"), *proc = json_object_get(r, "process");
    const json_t *mem = json_object_get(r, "memory"), *cpu = json_object_get(r, "cpu");
    const json_t *busiest = json_object_get(cpu, "busiest");
    const char *name = cli_json_str(tool, "name");
    char a[32], b[32], c[32], d[32], e[32], e1[ESC_MAX];

    fprintf(f, "\n  throughput    measured %s, claimed %s%s%s%s\n",
            rate(measured_rate(r), a, sizeof(a)),
            rate(cli_json_num(tool, "claimed_bytes_per_s"), b, sizeof(b)), name ? " (" : "",
            name ? term_escape(name, e1, sizeof(e1)) : "", name ? ")" : "");
    fprintf(f, "  cache-served  %s of %s read (%s from storage)\n",
            pct(cli_json_num(proc, "cache_served_read_pct"), a, sizeof(a)),
            bytes(cli_json_num(proc, "io_read_bytes"), b, sizeof(b)),
            bytes(cli_json_num(proc, "storage_read_bytes"), c, sizeof(c)));
    fprintf(f, "  dirty at exit %s; tail %s, %s written back after exit; on disk at exit %s\n",
            bytes(cli_json_num(mem, "dirty_bytes_at_end"), a, sizeof(a)),
            cli_format_duration(cli_json_num(r, "tail_s"), b, sizeof(b)),
            bytes(cli_json_num(mem, "writeback_tail_bytes"), c, sizeof(c)),
            pct(cli_json_num(json_object_get(r, "payload"), "on_disk_at_end_pct"), d, sizeof(d)));
    fprintf(f, "  busiest core  %s: %s (privileged %s); all cores %s\n",
            esc_or(busiest, "instance", "-", e1),
            pct(cli_json_num(busiest, "avg_pct"), a, sizeof(a)),
            pct(cli_json_num(busiest, "privileged_pct"), b, sizeof(b)),
            pct(cli_json_num(cpu, "avg_pct"), e, sizeof(e)));
    /* A report without the key (an older server) says nothing either way. */
    if (json_is_false(json_object_get(proc, "followed")) ||
        json_is_null(json_object_get(proc, "followed")))
        fprintf(f, "  processes     %s%s\n",
                json_is_false(json_object_get(proc, "followed")) ? "not followed: " : "",
                esc_or(proc, "not_followed_reason", "no reason given", e1));
}

static void disks(FILE *f, const json_t *r)
{
    const json_t *list = json_object_get(r, "disks"), *d;
    size_t i;

    if (json_array_size(list) == 0)
        return;
    fprintf(f, "\ndisks\n");
    json_array_foreach(list, i, d)
    {
        char a[32], b[32], c[32], e[32], g[32], h[32], k[32], busy[16], e1[ESC_MAX];

        fprintf(f,
                "  %-10s read %s (avg %s, peak %s)  write %s + tail %s (avg %s, peak %s)  busy "
                "%s\n",
                esc_or(d, "instance", "-", e1), bytes(cli_json_num(d, "read_bytes"), a, sizeof(a)),
                rate(cli_json_num(d, "avg_read_bytes_per_s"), b, sizeof(b)),
                rate(cli_json_num(d, "peak_read_bytes_per_s"), c, sizeof(c)),
                bytes(cli_json_num(d, "write_bytes"), e, sizeof(e)),
                bytes(cli_json_num(d, "tail_write_bytes"), g, sizeof(g)),
                rate(cli_json_num(d, "avg_write_bytes_per_s"), h, sizeof(h)),
                rate(cli_json_num(d, "peak_write_bytes_per_s"), k, sizeof(k)),
                pct(cli_json_num(d, "busy_pct"), busy, sizeof(busy)));
    }
}

static void interfaces(FILE *f, const json_t *r)
{
    const json_t *list = json_object_get(r, "interfaces"), *n;
    size_t i;

    if (json_array_size(list) == 0)
        return;
    fprintf(f, "\ninterfaces\n");
    json_array_foreach(list, i, n)
    {
        char a[32], b[32], c[32], d[32], e[32], g[32], h[32], k[32], x[32], y[32], e1[ESC_MAX];

        fprintf(f,
                "  %-10s rx %s (%s pkts, %s B/pkt, peak %s)  tx %s (%s pkts, %s B/pkt, peak %s)"
                "  errors %s discards %s\n",
                esc_or(n, "instance", "-", e1), bytes(cli_json_num(n, "rx_bytes"), a, sizeof(a)),
                num(cli_json_num(n, "rx_packets"), 0, b, sizeof(b)),
                num(cli_json_num(n, "rx_bytes_per_packet"), 0, c, sizeof(c)),
                rate(cli_json_num(n, "peak_rx_bytes_per_s"), d, sizeof(d)),
                bytes(cli_json_num(n, "tx_bytes"), e, sizeof(e)),
                num(cli_json_num(n, "tx_packets"), 0, g, sizeof(g)),
                num(cli_json_num(n, "tx_bytes_per_packet"), 0, h, sizeof(h)),
                rate(cli_json_num(n, "peak_tx_bytes_per_s"), k, sizeof(k)),
                num(cli_json_num(n, "errors"), 0, x, sizeof(x)),
                num(cli_json_num(n, "discards"), 0, y, sizeof(y)));
    }
}

/* The run's processes, busiest first, at most PROCS_SHOWN of the report's list. */
#define PROCS_SHOWN 8

static void procs(FILE *f, const json_t *r)
{
    const json_t *list = json_object_get(r, "processes"), *p;
    char a[32], b[32], c[32], d[32], e[32], e1[ESC_MAX];
    size_t i;

    if (!json_array_size(list))
        return;
    fprintf(f, "  followed      %s processes; the busiest:\n",
            num(cli_json_num(r, "processes_followed"), 0, a, sizeof(a)));
    json_array_foreach(list, i, p)
    {
        if (i == PROCS_SHOWN)
            break;
        fprintf(f, "    %-22s read %s (storage %s), wrote %s (storage %s), cpu %s s\n",
                esc_or(p, "instance", "?", e1),
                bytes(cli_json_num(p, "io_read_bytes"), a, sizeof(a)),
                bytes(cli_json_num(p, "storage_read_bytes"), b, sizeof(b)),
                bytes(cli_json_num(p, "io_write_bytes"), c, sizeof(c)),
                bytes(cli_json_num(p, "storage_write_bytes"), d, sizeof(d)),
                num(cli_json_num(p, "cpu_s"), 2, e, sizeof(e)));
    }
}

static void details(FILE *f, const json_t *r)
{
    const json_t *tcp = json_object_get(r, "tcp"), *mem = json_object_get(r, "memory");
    const json_t *proc = json_object_get(r, "process"), *pay = json_object_get(r, "payload");
    char a[32], b[32], c[32], d[32], e[32];

    fprintf(f, "\n");
    if (json_is_object(tcp))
        fprintf(f, "  tcp           %s of %s segments retransmitted\n",
                num(cli_json_num(tcp, "retransmitted_segments"), 0, a, sizeof(a)),
                num(cli_json_num(tcp, "sent_segments"), 0, b, sizeof(b)));
    if (json_is_object(mem))
        fprintf(f, "  memory        cache growth %s, dirty at end %s, written back in tail %s\n",
                bytes(cli_json_num(mem, "cache_growth_bytes"), a, sizeof(a)),
                bytes(cli_json_num(mem, "dirty_bytes_at_end"), b, sizeof(b)),
                bytes(cli_json_num(mem, "writeback_tail_bytes"), c, sizeof(c)));
    if (json_is_object(proc))
        fprintf(f, "  processes     read %s (storage %s), wrote %s (storage %s)\n",
                bytes(cli_json_num(proc, "io_read_bytes"), a, sizeof(a)),
                bytes(cli_json_num(proc, "storage_read_bytes"), b, sizeof(b)),
                bytes(cli_json_num(proc, "io_write_bytes"), c, sizeof(c)),
                bytes(cli_json_num(proc, "storage_write_bytes"), d, sizeof(d)));
    procs(f, r);
    if (json_is_object(pay))
        fprintf(f,
                "  payload       %s, %s files, write amplification %s, %s ms/file, %s "
                "packets/file\n",
                bytes(cli_json_num(pay, "bytes"), a, sizeof(a)),
                num(cli_json_num(pay, "files"), 0, b, sizeof(b)),
                num(cli_json_num(pay, "write_amplification"), 2, c, sizeof(c)),
                num(cli_json_num(pay, "ms_per_file"), 2, d, sizeof(d)),
                num(cli_json_num(pay, "packets_per_file"), 1, e, sizeof(e)));
}

static void render(FILE *f, const json_t *r, int depth);

static void peers(FILE *f, const json_t *r, int depth)
{
    const json_t *list = json_object_get(r, "peers"), *p;
    size_t i;

    json_array_foreach(list, i, p)
    {
        const json_t *rep = json_object_get(p, "report");

        char e1[ESC_MAX];

        fprintf(f, "\npeer %s\n", esc_or(p, "url", "-", e1));
        if (json_is_object(rep) && depth < 2)
            render(f, rep, depth + 1);
        else
            fprintf(f, "  (no report)\n");
    }
}

static void render(FILE *f, const json_t *r, int depth)
{
    head(f, r);
    summary(f, r);
    if (depth == 0)
        run_report_hosts(f, r);
    disks(f, r);
    interfaces(f, r);
    details(f, r);
    peers(f, r, depth);
}

char *run_report_text(const json_t *report)
{
    struct cli_memfile m;
    FILE *f = cli_memfile_open(&m);

    if (!f)
        return NULL;
    render(f, report, 0);
    return cli_memfile_close(&m);
}
