/*
 * report_hosts.c - the hosts of a run with peers, side by side ("Peers"): one column per
 * host - the one the run was started from, then each peer - and one row per figure, so the
 * source's disk read and send sit next to the destination's receive and disk write. Pure: the
 * report JSON (with the peers' reports in its "peers") in, text out.
 *
 * Network figures leave out the loopback interface: it carries perflog's own requests to its
 * daemon, not the copy.
 */
#include "base/term_escape.h"
#include "cli/cli.h"
#include "cli/run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_HOSTS 17 /* the run's host and perflog run's 16 peers */
#define LABEL_W   22
#define COL_W     24

/* What one host did, summed over its disks and interfaces (NAN: unknown). */
struct host_sums {
    const json_t *rep; /* NULL: no report from that host */
    const char *url;
    double disk_read, disk_write, disk_tail_write;
    double rx, tx, rx_packets, tx_packets;
};

static double add(double sum, double v)
{
    if (isnan(v))
        return sum;
    return isnan(sum) ? v : sum + v;
}

static int loopback(const char *name)
{
    return name && strcmp(name, "lo") == 0;
}

static void sum_host(const json_t *rep, const char *url, struct host_sums *h)
{
    const json_t *e;
    size_t i;

    *h = (struct host_sums){rep, url, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    json_array_foreach(json_object_get(rep, "disks"), i, e)
    {
        h->disk_read = add(h->disk_read, cli_json_num(e, "read_bytes"));
        h->disk_write = add(h->disk_write, cli_json_num(e, "write_bytes"));
        h->disk_tail_write = add(h->disk_tail_write, cli_json_num(e, "tail_write_bytes"));
    }
    json_array_foreach(json_object_get(rep, "interfaces"), i, e)
    {
        if (loopback(cli_json_str(e, "instance")))
            continue;
        h->rx = add(h->rx, cli_json_num(e, "rx_bytes"));
        h->tx = add(h->tx, cli_json_num(e, "tx_bytes"));
        h->rx_packets = add(h->rx_packets, cli_json_num(e, "rx_packets"));
        h->tx_packets = add(h->tx_packets, cli_json_num(e, "tx_packets"));
    }
}

/* One cell's text for host h; buf holds it. */
typedef const char *cell_fn(const struct host_sums *h, char *buf, size_t cap);

static const char *cell_host(const struct host_sums *h, char *buf, size_t cap)
{
    return term_escape(cli_json_str(h->rep, "host"), buf, cap);
}

static const char *cell_run(const struct host_sums *h, char *buf, size_t cap)
{
    double id = cli_json_num(h->rep, "id");
    const char *st = cli_json_str(h->rep, "status");
    char shown[64];

    if (st)
        st = term_escape(st, shown, sizeof(shown));
    if (isnan(id))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.0f%s%s%s", id, st ? " (" : "", st ? st : "", st ? ")" : "");
    return buf;
}

static const char *cell_times(const struct host_sums *h, char *buf, size_t cap)
{
    char a[32], b[32];

    snprintf(buf, cap, "%s + %s", cli_format_duration(cli_json_num(h->rep, "duration_s"), a, 32),
             cli_format_duration(cli_json_num(h->rep, "tail_s"), b, 32));
    return buf;
}

static const char *cell_disk_read(const struct host_sums *h, char *buf, size_t cap)
{
    return cli_format_bytes(h->disk_read, buf, cap);
}

static const char *cell_disk_write(const struct host_sums *h, char *buf, size_t cap)
{
    char a[32], b[32];

    snprintf(buf, cap, "%s + %s", cli_format_bytes(h->disk_write, a, 32),
             cli_format_bytes(h->disk_tail_write, b, 32));
    return buf;
}

static const char *packets(double bytes, double n, char *buf, size_t cap)
{
    if (isnan(n))
        snprintf(buf, cap, "-");
    else if (n > 0 && !isnan(bytes))
        snprintf(buf, cap, "%.0f (%.0f B/pkt)", n, bytes / n);
    else
        snprintf(buf, cap, "%.0f", n);
    return buf;
}

static const char *cell_tx(const struct host_sums *h, char *buf, size_t cap)
{
    return cli_format_bytes(h->tx, buf, cap);
}

static const char *cell_tx_packets(const struct host_sums *h, char *buf, size_t cap)
{
    return packets(h->tx, h->tx_packets, buf, cap);
}

static const char *cell_rx(const struct host_sums *h, char *buf, size_t cap)
{
    return cli_format_bytes(h->rx, buf, cap);
}

static const char *cell_rx_packets(const struct host_sums *h, char *buf, size_t cap)
{
    return packets(h->rx, h->rx_packets, buf, cap);
}

/* The SMB shares' and NFS mounts' bytes read + written (netfs[]), "-" without any. */
static const char *cell_netfs(const struct host_sums *h, char *buf, size_t cap)
{
    const json_t *list = json_object_get(h->rep, "netfs"), *n;
    double rd = 0, wr = 0;
    char a[32], b[32];
    size_t i;

    if (json_array_size(list) == 0) {
        snprintf(buf, cap, "-");
        return buf;
    }
    json_array_foreach(list, i, n)
    {
        double r = cli_json_num(n, "read_bytes"), w = cli_json_num(n, "write_bytes");

        rd += isnan(r) ? 0 : r;
        wr += isnan(w) ? 0 : w;
    }
    snprintf(buf, cap, "%s + %s", cli_format_bytes(rd, a, 32), cli_format_bytes(wr, b, 32));
    return buf;
}

static const char *cell_retrans(const struct host_sums *h, char *buf, size_t cap)
{
    return cli_format_value(cli_json_num(json_object_get(h->rep, "tcp"), "retransmitted_segments"),
                            buf, cap);
}

static const char *cell_cpu(const struct host_sums *h, char *buf, size_t cap)
{
    const json_t *cpu = json_object_get(h->rep, "cpu"), *b = json_object_get(cpu, "busiest");
    char a[16], c[16], inst[64];

    snprintf(buf, cap, "%s (core %s: %s)", cli_format_pct(cli_json_num(cpu, "avg_pct"), a, 16),
             term_escape(cli_json_str(b, "instance"), inst, sizeof(inst)),
             cli_format_pct(cli_json_num(b, "avg_pct"), c, 16));
    return buf;
}

static const char *cell_dirty(const struct host_sums *h, char *buf, size_t cap)
{
    return cli_format_bytes(cli_json_num(json_object_get(h->rep, "memory"), "dirty_bytes_at_end"),
                            buf, cap);
}

/* The headline: durable for a host that wrote, else its devices' read rate. */
static const char *cell_headline(const struct host_sums *h, char *buf, size_t cap)
{
    const json_t *hl = json_object_get(h->rep, "headline");
    const char *kind = cli_json_str(hl, "kind");
    char r[32];

    cli_format_rate(cli_json_num(hl, "bytes_per_s"), r, sizeof(r));
    snprintf(buf, cap, "%s%s", r, !kind ? "" : strcmp(kind, "durable") == 0 ? " durable" : " read");
    return buf;
}

static const struct row {
    const char *label;
    cell_fn *cell;
} rows[] = {
    {"host", cell_host},
    {"run", cell_run},
    {"duration + tail", cell_times},
    {"disk read", cell_disk_read},
    {"disk write + tail", cell_disk_write},
    {"net tx", cell_tx},
    {"net tx packets", cell_tx_packets},
    {"net rx", cell_rx},
    {"net rx packets", cell_rx_packets},
    {"smb/nfs read + write", cell_netfs},
    {"tcp retransmits", cell_retrans},
    {"cpu avg (busiest)", cell_cpu},
    {"dirty at exit", cell_dirty},
    {"headline throughput", cell_headline},
};

void run_report_hosts(FILE *f, const json_t *report)
{
    const json_t *list = json_object_get(report, "peers"), *p;
    struct host_sums hosts[MAX_HOSTS];
    size_t n = 0, i;
    char buf[128];

    if (json_array_size(list) == 0)
        return;
    sum_host(report, "this host", &hosts[n++]);
    json_array_foreach(list, i, p)
    {
        const json_t *rep = json_object_get(p, "report");
        const char *url = cli_json_str(p, "url");

        if (n == MAX_HOSTS)
            break;
        sum_host(json_is_object(rep) ? rep : NULL, url ? url : "-", &hosts[n++]);
    }
    /* the last column is not padded: no blanks at the ends of the lines */
    fprintf(f, "\n%-*s", LABEL_W, "hosts side by side");
    for (i = 0; i < n; i++)
        fprintf(f, "  %-*s", i + 1 < n ? COL_W : 0, term_escape(hosts[i].url, buf, sizeof(buf)));
    fputc('\n', f);
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        fprintf(f, "  %-*s", LABEL_W - 2, rows[r].label);
        for (i = 0; i < n; i++)
            fprintf(f, "  %-*s", i + 1 < n ? COL_W : 0,
                    hosts[i].rep ? rows[r].cell(&hosts[i], buf, sizeof(buf)) : "(no report)");
        fputc('\n', f);
    }
}
