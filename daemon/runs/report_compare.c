/*
 * report_compare.c - the figures of a comparison of runs, read out of each run's report; see
 * report_compare.h. The table below is the whole list: the API, the client's text, CSV and JSON
 * all come from it.
 */
#include "daemon/runs/report_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One headline figure. `ptr` points into the report; with `each` set, the figure is one row per
 * element of the report's array at `each` (the disks, the interfaces), `ptr` then points into
 * the element, and "%s" in name and title is the element's "instance".
 */
struct compare_figure {
    const char *name;  /* stable, for scripts */
    const char *title; /* for people */
    const char *unit;  /* "B", "B/s", "s", "ms", "%", "count", "" (text) */
    const char *ptr;
    const char *each;
};

static const struct compare_figure figures[] = {
    /* what limited each run first: /mt:8 against /mt:16 shows the limit moving */
    {"verdict.limit", "limit", "", "/verdict/limit", NULL},
    {"verdict.instance", "limit instance", "", "/verdict/instance", NULL},
    {"tail_verdict.limit", "tail limit", "", "/tail_verdict/limit", NULL},
    {"throughput.claimed", "claimed", "B/s", "/throughput/claimed", NULL},
    {"throughput.returned", "returned", "B/s", "/throughput/returned", NULL},
    {"throughput.durable", "durable", "B/s", "/throughput/durable", NULL},
    {"duration_s", "duration", "s", "/duration_s", NULL},
    {"tail_s", "tail", "s", "/tail_s", NULL},
    {"cache_served_read_pct", "cache-served reads", "%", "/process/cache_served_read_pct", NULL},
    {"disk.%s.read_bytes", "%s read", "B", "/read_bytes", "/disks"},
    {"disk.%s.write_bytes", "%s write", "B", "/write_bytes", "/disks"},
    {"disk.%s.tail_write_bytes", "%s tail write", "B", "/tail_write_bytes", "/disks"},
    {"disk.%s.busy_s", "%s busy", "s", "/busy_s", "/disks"},
    {"nic.%s.rx_bytes_per_packet", "%s rx B/packet", "B", "/rx_bytes_per_packet", "/interfaces"},
    {"nic.%s.tx_bytes_per_packet", "%s tx B/packet", "B", "/tx_bytes_per_packet", "/interfaces"},
    {"payload.ms_per_file", "ms per file", "ms", "/payload/ms_per_file", NULL},
    {"payload.packets_per_file", "packets per file", "count", "/payload/packets_per_file", NULL},
    {"cpu.busiest.instance", "busiest core", "", "/cpu/busiest/instance", NULL},
    {"cpu.busiest.avg_pct", "busiest core busy", "%", "/cpu/busiest/avg_pct", NULL},
    {"cpu.busiest.privileged_pct", "busiest core kernel", "%", "/cpu/busiest/privileged_pct", NULL},
    /* why a core or the disk was slow: the copy counters */
    {"cpu.busiest.dominant_softirq", "busiest core softirq", "", "/cpu/busiest/dominant_softirq",
     NULL},
    {"cpu.busiest.dropped_packets", "busiest core drops", "count", "/cpu/busiest/dropped_packets",
     NULL},
    {"stalls.io_some_pct", "I/O stall (some)", "%", "/stalls/io_some_pct", NULL},
    {"stalls.io_full_pct", "I/O stall (full)", "%", "/stalls/io_full_pct", NULL},
    {"stalls.disk_flushes", "disk flushes", "count", "/stalls/disk_flushes", NULL},
    {"kernel.throttled_ticks", "ticks at the dirty limit", "count", "/kernel/throttled_ticks",
     NULL},
    {"netfs.%s.read_bytes", "%s read", "B", "/read_bytes", "/netfs"},
    {"netfs.%s.write_bytes", "%s write", "B", "/write_bytes", "/netfs"},
    {"netfs.%s.bytes_per_request", "%s B/request", "B", "/bytes_per_request", "/netfs"},
    {"tcp.retransmitted_segments", "TCP retransmits", "count", "/tcp/retransmitted_segments", NULL},
    {"own.read_bytes", "own read", "B", "/own/read_bytes", NULL},
    {"own.write_bytes", "own write", "B", "/own/write_bytes", NULL},
    {"others.read_bytes", "others' read", "B", "/others/read_bytes", NULL},
    {"others.write_bytes", "others' write", "B", "/others/write_bytes", NULL},
};

/* Compare one pointer token (up to '/' or the end) with key, undoing "~1" -> '/', "~0" -> '~'. */
static int token_is(const char *tok, size_t len, const char *key)
{
    size_t i = 0;

    for (; i < len; i++, key++) {
        char c = tok[i];

        if (c == '~' && i + 1 < len && (tok[i + 1] == '0' || tok[i + 1] == '1'))
            c = tok[++i] == '0' ? '~' : '/';
        if (*key != c)
            return 0;
    }
    return *key == '\0';
}

static const json_t *member(const json_t *doc, const char *tok, size_t len)
{
    const char *key;
    json_t *v;
    char *end;
    unsigned long idx;

    if (json_is_array(doc)) {
        if (!len || (tok[0] == '0' && len > 1))
            return NULL;
        idx = strtoul(tok, &end, 10);
        return (size_t)(end - tok) == len ? json_array_get(doc, idx) : NULL;
    }
    json_object_foreach((json_t *)doc, key, v) if (token_is(tok, len, key)) return v;
    return NULL;
}

const json_t *report_compare_at(const json_t *doc, const char *ptr)
{
    while (doc && *ptr == '/') {
        const char *tok = ptr + 1, *next = strchr(tok, '/');
        size_t len = next ? (size_t)(next - tok) : strlen(tok);

        doc = member(doc, tok, len);
        ptr = tok + len;
    }
    return *ptr ? NULL : doc;
}

/* A number that says "nothing happened here": null or 0. */
static int idle(const json_t *v)
{
    return !v || json_is_null(v) || (json_is_number(v) && json_number_value(v) == 0);
}

/* The element of array `arr` whose "instance" is inst, or NULL. */
static const json_t *find_instance(const json_t *arr, const char *inst)
{
    const json_t *e;
    size_t k;

    json_array_foreach((json_t *)arr, k, e)
    {
        const char *s = json_string_value(json_object_get(e, "instance"));

        if (s && !strcmp(s, inst))
            return e;
    }
    return NULL;
}

/* pat with its "%s" (if any) replaced by inst, cut to cap. */
static void fill(char *buf, size_t cap, const char *pat, const char *inst)
{
    const char *hole = strstr(pat, "%s");

    if (!hole || !inst)
        snprintf(buf, cap, "%s", pat);
    else
        snprintf(buf, cap, "%.*s%s%s", (int)(hole - pat), pat, inst, hole + 2);
}

/*
 * One row: the values of reports[0..n) for figure f (of the instance `inst` when f->each),
 * and their ratios to the first. NULL when out of memory, or (skip_idle) when every value is
 * idle.
 */
static json_t *row(const struct compare_figure *f, const char *inst, json_t *const *reports,
                   size_t n, int skip_idle)
{
    json_t *values = json_array(), *ratios = json_array(), *r;
    const json_t *first = NULL;
    char name[256], title[256];
    int busy = 0;

    for (size_t i = 0; i < n && values && ratios; i++) {
        const json_t *v =
            f->each ? report_compare_at(find_instance(report_compare_at(reports[i], f->each), inst),
                                        f->ptr)
                    : report_compare_at(reports[i], f->ptr);

        if (i == 0)
            first = v;
        busy |= !idle(v);
        json_array_append_new(values, v ? json_deep_copy(v) : json_null());
        /* value / the first run's; the first's own ratio is 1 when it is defined */
        json_array_append_new(
            ratios, json_is_number(v) && json_is_number(first) && json_number_value(first) != 0
                        ? json_real(json_number_value(v) / json_number_value(first))
                        : json_null());
    }
    if (!values || !ratios || (skip_idle && !busy)) {
        json_decref(values);
        json_decref(ratios);
        return NULL;
    }
    fill(name, sizeof(name), f->name, inst);
    fill(title, sizeof(title), f->title, inst);
    r = json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", name, "title", title, "unit", f->unit,
                  "values", values, "ratios", ratios);
    return r;
}

/* The instances of the arrays at `each` in reports[0..n), in order of first appearance. */
static json_t *instances(const char *each, json_t *const *reports, size_t n)
{
    json_t *seen = json_array(), *e, *s;
    size_t k, j;

    for (size_t i = 0; i < n && seen; i++)
        json_array_foreach((json_t *)report_compare_at(reports[i], each), k, e)
        {
            const json_t *inst = json_object_get(e, "instance");
            int dup = 0;

            if (!json_is_string(inst))
                continue;
            json_array_foreach(seen, j, s) dup |= json_equal(s, inst);
            if (!dup)
                json_array_append(seen, (json_t *)inst);
        }
    return seen;
}

json_t *report_compare(json_t *const *reports, size_t n)
{
    json_t *out = json_object(), *runs = json_array(), *rows = json_array(), *insts, *r, *s;
    size_t k;

    if (!out || !runs || !rows)
        goto fail;
    for (size_t i = 0; i < n; i++)
        json_array_append(runs, reports[i]);
    for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
        const struct compare_figure *f = &figures[i];

        if (!f->each) {
            r = row(f, NULL, reports, n, 0);
            if (!r || json_array_append_new(rows, r) < 0)
                goto fail;
            continue;
        }
        insts = instances(f->each, reports, n);
        if (!insts)
            goto fail;
        json_array_foreach(insts, k, s)
        {
            r = row(f, json_string_value(s), reports, n, 1);
            if (r)
                json_array_append_new(rows, r);
        }
        json_decref(insts);
    }
    json_object_set_new(out, "runs", runs);
    json_object_set_new(out, "figures", rows);
    return out;
fail:
    json_decref(out);
    json_decref(runs);
    json_decref(rows);
    return NULL;
}
