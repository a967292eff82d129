/*
 * report_fmt.c - a run report (docs/report.md, the JSON the server stores in runs.report_json)
 * as text for people: the story first (when the command returned, when its data was on disk, how
 * the tail went), then the details. The server keeps only the JSON; this is the one text
 * renderer, so `perflog run` and `perflog report ID` print the same thing. Pure: JSON in, text
 * out.
 */
#include "base/term_escape.h"
#include "cli/cli.h"
#include "cli/cli_os.h"
#include "cli/run.h"

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

/* Seconds for the story: "0.88 s", "31.5 s", then cli_format_duration's "3 min 04 s". */
static char *secs(double s, char *buf, size_t cap)
{
    if (isfinite(s) && s < 10)
        snprintf(buf, cap, "%.2f s", s);
    else
        cli_format_duration(s, buf, cap);
    return buf;
}

/* The program the run ran: the command's first word without its directory or quotes. */
static const char *program(const json_t *r, char *buf, size_t cap)
{
    const char *cmd = cli_json_str(r, "command"), *p, *slash;
    size_t n = 0;

    if (!cmd || !*cmd)
        return "the command";
    p = cmd + (*cmd == '\'' || *cmd == '"');
    while (p[n] && p[n] != ' ' && p[n] != '\'' && p[n] != '"')
        n++;
    for (slash = p; slash < p + n; slash++)
        if (*slash == '/' || *slash == '\\') {
            n -= (size_t)(slash + 1 - p);
            p = slash + 1;
            slash = p - 1;
        }
    snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    return n ? buf : "the command";
}

/* "1.0 GiB stayed dirty for 29.6 s (the kernel writes dirty data back after 30 s), then was
 * written in 1.2 s at 870 MiB/s." */
static void story_tail(FILE *f, const json_t *r)
{
    const json_t *tail = json_object_get(r, "tail"), *kern = json_object_get(r, "kernel");
    double dirty = cli_json_num(json_object_get(r, "memory"), "dirty_bytes_at_end");
    double wait = cli_json_num(tail, "wait_ms"), wr = cli_json_num(tail, "write_ms");
    double expire = cli_json_num(kern, "dirty_expire_centisecs");
    char a[32], b[32], c[32], d[32];

    if (!(dirty >= 1048576.0) || isnan(wait))
        return;
    fprintf(f, "  %s stayed dirty for %s", cli_format_bytes(dirty, a, sizeof(a)),
            secs(wait / 1000.0, b, sizeof(b)));
    if (!isnan(expire))
        fprintf(f, " (the kernel writes dirty data back after %s)",
                secs(expire / 100.0, c, sizeof(c)));
    if (!isnan(wr) && wr > 0)
        fprintf(f, ", then was written in %s at %s", secs(wr / 1000.0, c, sizeof(c)),
                cli_format_rate(cli_json_num(tail, "write_bytes_per_s"), d, sizeof(d)));
    fprintf(f, ".\n");
}

/*
 * The story: "cp returned after 0.88 s; its data was on disk 31.5 s after the start (33 MiB/s
 * durable)", or for a run that only read, what the devices read and how much came from the cache.
 */
static void story(FILE *f, const json_t *r)
{
    const json_t *tp = json_object_get(r, "throughput"), *hl = json_object_get(r, "headline");
    const json_t *mem = json_object_get(r, "memory"), *kern = json_object_get(r, "kernel");
    const char *kind = cli_json_str(hl, "kind");
    double dur = cli_json_num(r, "duration_s"), durable_ms = cli_json_num(tp, "durable_ms");
    char prog[64], a[32], b[32], c[32], e1[ESC_MAX];

    fprintf(f, "\n  %s returned after %s",
            term_escape(program(r, prog, sizeof(prog)), e1, sizeof(e1)), secs(dur, a, sizeof(a)));
    if (kind && strcmp(kind, "durable") == 0) {
        double durable = cli_json_num(hl, "bytes_per_s");

        if (!isnan(durable_ms) && !isnan(durable))
            fprintf(f, "; its data was on disk %s after the start (%s durable%s)",
                    secs(durable_ms / 1000.0, b, sizeof(b)), cli_format_rate(durable, c, sizeof(c)),
                    json_is_true(json_object_get(hl, "capped_at_peak_second"))
                        ? ", capped at the devices' peak second"
                        : "");
        else if (!isnan(durable_ms))
            fprintf(f,
                    "; its data was on disk %s after the start (--payload or --bytes gives the "
                    "durable rate)",
                    secs(durable_ms / 1000.0, b, sizeof(b)));
        else
            fprintf(f,
                    "; dirty data was not back to its start level when the tail ended, %s "
                    "after the start, so when its data was on disk is not known",
                    secs(dur + cli_json_num(r, "tail_s"), b, sizeof(b)));
    } else if (kind) {
        double read = cli_json_num(r, "disk_read_bytes");
        double cached = cli_json_num(hl, "cache_served_read_pct");

        fprintf(f, " and wrote nothing to a local disk.\n  The devices read %s at %s",
                cli_format_bytes(read, b, sizeof(b)),
                cli_format_rate(cli_json_num(hl, "bytes_per_s"), c, sizeof(c)));
        if (!isnan(cached))
            fprintf(f, "; %s of what it read came from the page cache",
                    cli_format_pct(cached, a, sizeof(a)));
    }
    fprintf(f, ".\n");
    story_tail(f, r);
    if (json_is_true(json_object_get(mem, "dirty_high_at_start")))
        fprintf(f,
                "  Dirty data was already high at the start (%s of other writers): the levels "
                "below are changes from it.\n",
                cli_format_bytes(cli_json_num(mem, "dirty_bytes_at_start"), a, sizeof(a)));
    if (json_is_true(json_object_get(kern, "throttled")))
        fprintf(f,
                "  Its writers were throttled: dirty data reached the kernel's dirty threshold "
                "(%s).\n",
                cli_format_bytes(cli_json_num(kern, "dirty_threshold_bytes"), a, sizeof(a)));
}

/* Why the copy may have waited: the busiest core's softirqs, stalls on I/O, dirty throttling and
 * disk flushes. Lines whose counters the log lacks (Windows, an older kernel) are left out. */
static void stalls(FILE *f, const json_t *r, const json_t *busiest)
{
    const json_t *st = json_object_get(r, "stalls"), *kern = json_object_get(r, "kernel");
    const char *softirq = cli_json_str(busiest, "dominant_softirq");
    double some = cli_json_num(st, "io_some_pct"), flushes = cli_json_num(st, "disk_flushes");
    double ticks = cli_json_num(kern, "throttled_ticks");
    char a[32], b[32], e1[ESC_MAX], e2[ESC_MAX];

    if (softirq)
        fprintf(f,
                "  softirqs      core %s mostly %s (%.0f/s); %.0f packets dropped, %.0f time "
                "squeezes on it\n",
                esc_or(busiest, "instance", "-", e1), term_escape(softirq, e2, sizeof(e2)),
                cli_json_num(busiest, "dominant_softirqs_per_s"),
                cli_json_num(busiest, "dropped_packets"), cli_json_num(busiest, "time_squeezes"));
    if (!isnan(some))
        fprintf(f, "  I/O stalls    some task waited on I/O %s of the run, all tasks %s\n",
                pct(some, a, sizeof(a)), pct(cli_json_num(st, "io_full_pct"), b, sizeof(b)));
    if (!isnan(ticks))
        fprintf(f, "  dirty limit   %s\n",
                ticks > 0 ? "writers hit the dirty threshold (the kernel throttles them there)"
                          : "writers stayed below the dirty threshold");
    if (!isnan(flushes))
        fprintf(f, "  flushes       %.0f disk cache flushes in the run\n", flushes);
}

static void summary(FILE *f, const json_t *r)
{
    const json_t *tool = json_object_get(r, "tool"), *proc = json_object_get(r, "process");
    const json_t *mem = json_object_get(r, "memory"), *cpu = json_object_get(r, "cpu");
    const json_t *busiest = json_object_get(cpu, "busiest"), *tp = json_object_get(r, "throughput");
    const char *name = cli_json_str(tool, "name");
    char a[32], b[32], c[32], d[32], e[32], e1[ESC_MAX];

    fprintf(f, "\n  throughput    durable %s, returned %s, claimed %s%s%s%s\n",
            rate(cli_json_num(tp, "durable"), a, sizeof(a)),
            rate(cli_json_num(tp, "returned"), b, sizeof(b)),
            rate(cli_json_num(tp, "claimed"), c, sizeof(c)), name ? " (" : "",
            name ? term_escape(name, e1, sizeof(e1)) : "", name ? ")" : "");
    fprintf(f, "  cache-served  %s of %s read (%s from storage)\n",
            pct(cli_json_num(proc, "cache_served_read_pct"), a, sizeof(a)),
            bytes(cli_json_num(proc, "io_read_bytes"), b, sizeof(b)),
            bytes(cli_json_num(proc, "storage_read_bytes"), c, sizeof(c)));
    fprintf(f,
            "  dirty at exit %s (change from the start); tail %s, %s written back after exit; "
            "on disk at exit %s\n",
            bytes(cli_json_num(mem, "dirty_bytes_at_end"), a, sizeof(a)),
            cli_format_duration(cli_json_num(r, "tail_s"), b, sizeof(b)),
            bytes(cli_json_num(mem, "writeback_tail_bytes"), c, sizeof(c)),
            pct(cli_json_num(json_object_get(r, "payload"), "on_disk_at_end_pct"), d, sizeof(d)));
    fprintf(f, "  busiest core  %s: %s (privileged %s); all cores %s\n",
            esc_or(busiest, "instance", "-", e1),
            pct(cli_json_num(busiest, "avg_pct"), a, sizeof(a)),
            pct(cli_json_num(busiest, "privileged_pct"), b, sizeof(b)),
            pct(cli_json_num(cpu, "avg_pct"), e, sizeof(e)));
    stalls(f, r, busiest);
    /* A report without the key (an older server) says nothing either way. */
    if (json_is_false(json_object_get(proc, "followed")) ||
        json_is_null(json_object_get(proc, "followed")))
        fprintf(f, "  processes     %s%s\n",
                json_is_false(json_object_get(proc, "followed")) ? "not followed: " : "",
                esc_or(proc, "not_followed_reason", "no reason given", e1));
}

/* Whether a device or interface did nothing in the run and its tail: every listed count is 0 or
 * absent. Such rows are hidden unless --all. */
static int idle(const json_t *o, const char *const *keys)
{
    for (; *keys; keys++)
        if (cli_json_num(o, *keys) > 0)
            return 0;
    return 1;
}

static const char *const disk_counts[] = {"read_bytes", "write_bytes", "tail_write_bytes",
                                          "tail_read_bytes", NULL};
static const char *const net_counts[] = {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets",
                                         "errors",   "discards", NULL};
static const char *const netfs_counts[] = {"read_bytes", "write_bytes", "requests", NULL};

/* "N idle devices hidden (--all shows them)" */
static void hidden(FILE *f, size_t n, const char *what)
{
    if (n)
        fprintf(f, "  (%zu idle %s%s hidden; --all shows them)\n", n, what, n == 1 ? "" : "s");
}

static void disks(FILE *f, const json_t *r, int all)
{
    const json_t *list = json_object_get(r, "disks"), *d;
    size_t i, skipped = 0;

    if (json_array_size(list) == 0)
        return;
    fprintf(f, "\ndisks\n");
    json_array_foreach(list, i, d)
    {
        char a[32], b[32], c[32], e[32], g[32], h[32], k[32], busy[16], bs[32], dv[32], pk[32];
        char e1[ESC_MAX];

        if (!all && idle(d, disk_counts)) {
            skipped++;
            continue;
        }
        fprintf(f,
                "  %-10s read %s (avg %s, peak %s)  write %s + tail %s (avg %s, peak %s)  busy "
                "%s\n             %s busy at %s; peak second %s\n",
                esc_or(d, "instance", "-", e1), bytes(cli_json_num(d, "read_bytes"), a, sizeof(a)),
                rate(cli_json_num(d, "avg_read_bytes_per_s"), b, sizeof(b)),
                rate(cli_json_num(d, "peak_read_bytes_per_s"), c, sizeof(c)),
                bytes(cli_json_num(d, "write_bytes"), e, sizeof(e)),
                bytes(cli_json_num(d, "tail_write_bytes"), g, sizeof(g)),
                rate(cli_json_num(d, "avg_write_bytes_per_s"), h, sizeof(h)),
                rate(cli_json_num(d, "peak_write_bytes_per_s"), k, sizeof(k)),
                pct(cli_json_num(d, "busy_pct"), busy, sizeof(busy)),
                secs(cli_json_num(d, "busy_s"), bs, sizeof(bs)),
                rate(cli_json_num(d, "device_bytes_per_s"), dv, sizeof(dv)),
                rate(cli_json_num(d, "peak_second_bytes_per_s"), pk, sizeof(pk)));
    }
    hidden(f, skipped, "device");
}

static void interfaces(FILE *f, const json_t *r, int all)
{
    const json_t *list = json_object_get(r, "interfaces"), *n;
    size_t i, skipped = 0;

    if (json_array_size(list) == 0)
        return;
    fprintf(f, "\ninterfaces\n");
    json_array_foreach(list, i, n)
    {
        char a[32], b[32], c[32], d[32], e[32], g[32], h[32], k[32], x[32], y[32], e1[ESC_MAX];

        if (!all && idle(n, net_counts)) {
            skipped++;
            continue;
        }
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
    hidden(f, skipped, "interface");
}

/* The SMB shares and NFS mounts of the run: their bytes next to the interfaces', their requests
 * and (NFS) the mean time of a call. */
static void netfs(FILE *f, const json_t *r, int all)
{
    const json_t *list = json_object_get(r, "netfs"), *n;
    size_t i, skipped = 0;

    if (json_array_size(list) == 0)
        return;
    fprintf(f, "\nnetwork file systems\n");
    json_array_foreach(list, i, n)
    {
        char a[32], b[32], c[32], d[32], e[32], g[32], h[32], e1[ESC_MAX], e2[ESC_MAX];

        if (!all && idle(n, netfs_counts)) {
            skipped++;
            continue;
        }
        fprintf(f,
                "  %s %-20s read %s  wrote %s  %s requests (%s B each)  %s B per NIC byte"
                "  rtt %s ms  execute %s ms\n",
                esc_or(n, "kind", "?", e1), esc_or(n, "instance", "-", e2),
                bytes(cli_json_num(n, "read_bytes"), a, sizeof(a)),
                bytes(cli_json_num(n, "write_bytes"), b, sizeof(b)),
                num(cli_json_num(n, "requests"), 0, c, sizeof(c)),
                num(cli_json_num(n, "bytes_per_request"), 0, d, sizeof(d)),
                num(cli_json_num(n, "bytes_per_nic_byte"), 2, e, sizeof(e)),
                num(cli_json_num(n, "avg_rtt_s") * 1000.0, 2, g, sizeof(g)),
                num(cli_json_num(n, "avg_execute_s") * 1000.0, 2, h, sizeof(h)));
    }
    hidden(f, skipped, "network file system");
}

/* The run's processes, busiest first, at most PROCS_SHOWN of the report's list. */
#define PROCS_SHOWN 8

/*
 * Whether the rows add up to the run's total, and why not. The kernel adds a child's I/O to its
 * parent's counters when the parent reaps it (wait_task_zombie), so a reaped child's bytes are
 * in its own row and again in its parent's: the rows then add up to more than the total, which
 * is the root's own counters or the client's. The rows come from the 1 s ticks, so what a process
 * did after the last tick it lived through is in no row: they then add up to less. Rows left out
 * of the list make less too.
 */
static void procs_sum(FILE *f, const json_t *r, const json_t *list)
{
    const json_t *proc = json_object_get(r, "process"), *p;
    double total = cli_json_num(proc, "storage_write_bytes"), sum = 0;
    double rtotal = cli_json_num(proc, "storage_read_bytes"), rsum = 0;
    size_t i;
    char a[32], b[32], c[32], d[32];

    json_array_foreach(list, i, p)
    {
        sum += fmax(0, cli_json_num(p, "storage_write_bytes"));
        rsum += fmax(0, cli_json_num(p, "storage_read_bytes"));
    }
    if (isnan(total) || isnan(rtotal))
        return;
    if (fabs(sum - total) <= fmax(65536.0, 0.01 * total) &&
        fabs(rsum - rtotal) <= fmax(65536.0, 0.01 * rtotal)) {
        fprintf(f, "                the rows add up to the totals above\n");
        return;
    }
    fprintf(f,
            "                the rows add up to %s read from and %s written to storage, the "
            "totals are %s and %s:\n                ",
            bytes(rsum, a, sizeof(a)), bytes(sum, b, sizeof(b)), bytes(rtotal, c, sizeof(c)),
            bytes(total, d, sizeof(d)));
    if (sum > total || rsum > rtotal)
        fprintf(f, "a parent's counters include the children it reaped, whose rows count the same "
                   "bytes\n");
    else if (json_array_size(list) < (size_t)cli_json_num(r, "processes_followed"))
        fprintf(f, "only the busiest processes are listed, and the rows, from the 1 s ticks, miss "
                   "what a process did after its last tick\n");
    else
        fprintf(f, "the rows come from the 1 s ticks and miss what a process did after its last "
                   "tick\n");
}

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
    procs_sum(f, r, list);
}

/* The run's own storage I/O against everyone else's, the three busiest others, and how much of
 * the write amplification was whose. */
#define OTHERS_SHOWN 3

static void own_others(FILE *f, const json_t *r)
{
    const json_t *own = json_object_get(r, "own"), *oth = json_object_get(r, "others"), *t;
    const json_t *wa = json_object_get(r, "write_amplification");
    char a[32], b[32], c[32], d[32], e1[ESC_MAX], e2[ESC_MAX];
    size_t i;

    if (json_is_object(own) && json_is_object(oth)) {
        fprintf(f, "  own I/O       read %s, wrote %s; others read %s, wrote %s",
                bytes(cli_json_num(own, "read_bytes"), a, sizeof(a)),
                bytes(cli_json_num(own, "write_bytes"), b, sizeof(b)),
                bytes(cli_json_num(oth, "read_bytes"), c, sizeof(c)),
                bytes(cli_json_num(oth, "write_bytes"), d, sizeof(d)));
        json_array_foreach(json_object_get(oth, "top"), i, t)
        {
            if (i == OTHERS_SHOWN)
                break;
            fprintf(f, "%s%s %s (wrote %s)", i ? ", " : ": ", esc_or(t, "kind", "?", e1),
                    esc_or(t, "name", "?", e2),
                    bytes(cli_json_num(t, "write_bytes"), a, sizeof(a)));
        }
        fprintf(f, "\n");
    }
    if (!isnan(cli_json_num(wa, "ratio")))
        fprintf(f, "  write ampl.   %s x the payload: the run's own %s x, others' %s extra\n",
                num(cli_json_num(wa, "ratio"), 2, a, sizeof(a)),
                num(cli_json_num(wa, "own_ratio"), 2, b, sizeof(b)),
                bytes(cli_json_num(wa, "others_excess_bytes"), c, sizeof(c)));
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
        fprintf(f,
                "  memory        cache growth %s, dirty at end %s (from the start), written back "
                "in tail %s\n",
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
    own_others(f, r);
}

static void render(FILE *f, const json_t *r, int depth, int all);

static void peers(FILE *f, const json_t *r, int depth, int all)
{
    const json_t *list = json_object_get(r, "peers"), *p;
    size_t i;

    json_array_foreach(list, i, p)
    {
        const json_t *rep = json_object_get(p, "report");

        char e1[ESC_MAX];

        fprintf(f, "\npeer %s\n", esc_or(p, "url", "-", e1));
        if (json_is_object(rep) && depth < 2)
            render(f, rep, depth + 1, all);
        else
            fprintf(f, "  (no report)\n");
    }
}

static void render(FILE *f, const json_t *r, int depth, int all)
{
    head(f, r);
    run_report_verdict(f, r);
    story(f, r);
    summary(f, r);
    if (depth == 0)
        run_report_hosts(f, r);
    disks(f, r, all);
    interfaces(f, r, all);
    netfs(f, r, all);
    details(f, r);
    peers(f, r, depth, all);
}

char *run_report_text(const json_t *report, int all)
{
    struct cli_memfile m;
    FILE *f = cli_memfile_open(&m);

    if (!f)
        return NULL;
    render(f, report, 0, all);
    return cli_memfile_close(&m);
}
