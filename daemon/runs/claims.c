/*
 * claims.c - what a copy tool says it did, read from its output; see claims.h.
 *
 * Each tool (fio has three formats) has one parser that looks for that tool's summary and
 * returns where in the text the last one starts; claims_parse keeps the claim whose summary comes
 * last. A tool's summary wins over its progress lines. Numbers are read the way each tool prints
 * them: robocopy's "1.000 g" suffixes, dd's SI rates and locale decimal commas, rsync's thousands
 * separators and -h suffixes, fio's and pv's IEC and SI prefixes. docs/claims.md lists the forms
 * and their units.
 */
#include "daemon/runs/claims.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIB 1048576.0

/* One line of the text: [s, s + n), without its end-of-line characters. */
struct line {
    const char *s;
    size_t n;
    size_t off; /* offset of s in the text */
};

/* The next line at *pos; '\r' ends a line too (dd's status=progress rewrites its line). */
static int next_line(const char *text, size_t len, size_t *pos, struct line *l)
{
    size_t i = *pos;

    if (i >= len)
        return 0;
    l->s = text + i;
    l->off = i;
    while (i < len && text[i] != '\n' && text[i] != '\r')
        i++;
    l->n = (size_t)(text + i - l->s);
    *pos = i < len ? i + 1 : i;
    return 1;
}

/* Copy a line into buf as a C string (truncated to cap - 1 bytes). */
static char *line_str(const struct line *l, char *buf, size_t cap)
{
    size_t n = l->n < cap - 1 ? l->n : cap - 1;

    memcpy(buf, l->s, n);
    buf[n] = '\0';
    return buf;
}

/* A parser of one line: 1 and *c filled when the line (a C string; `cr`: it ended with '\r') is
 * the tool's summary. */
typedef int (*line_claim_fn)(const char *s, int cr, struct tool_claim *c);

/* The offset of the last line `fn` claims, its claim in *out; -1 when none does. */
static long last_line_claim(const char *text, size_t len, line_claim_fn fn, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        struct tool_claim c;
        int cr = l.off + l.n < len && text[l.off + l.n] == '\r';

        if (l.n && fn(line_str(&l, buf, sizeof(buf)), cr, &c)) {
            *out = c;
            found = (long)l.off;
        }
    }
    return found;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Does the line start (after blanks) with `key`, then blanks and ':'? Returns what follows. */
static const char *after_key(const char *s, const char *key)
{
    size_t k = strlen(key);

    s = skip_ws(s);
    if (strncasecmp(s, key, k) != 0)
        return NULL;
    s = skip_ws(s + k);
    return *s == ':' ? s + 1 : NULL;
}

/*
 * A number with optional separators in `,.'` between digits. `grouped`: every separator groups
 * thousands (a byte count: "268,435,456"). Otherwise the last separator, unless it is `'`, is the
 * decimal mark and the others group: "0,5" (de_DE), "1.1", "76,714,616.57", "823.068,00" - the
 * tools this file reads never print a grouped number with no decimals where a rate is expected.
 * Returns the end, or NULL when no digit starts there.
 */
static const char *parse_num(const char *p, int grouped, double *out)
{
    char digits[96];
    const char *start = p, *dec = NULL;
    size_t nd = 0;

    if (!isdigit((unsigned char)*p))
        return NULL;
    while (isdigit((unsigned char)*p) ||
           ((*p == ',' || *p == '.' || *p == '\'') && isdigit((unsigned char)p[1]))) {
        if (!isdigit((unsigned char)*p) && *p != '\'')
            dec = p;
        p++;
    }
    if (p - start >= (long)sizeof(digits))
        return NULL;
    if (grouped)
        dec = NULL;
    for (const char *q = start; q < p; q++) {
        if (q == dec)
            digits[nd++] = '.';
        else if (isdigit((unsigned char)*q))
            digits[nd++] = *q;
    }
    digits[nd] = '\0';
    *out = strtod(digits, NULL);
    return p;
}

/* Scale of a unit like "kB/s", "MiB/s", "GB" (SI as dd prints them, IEC with an 'i'). */
static double unit_scale(const char *u, size_t n)
{
    static const char prefixes[] = "kMGTPE";
    double base, scale = 1.0;
    const char *at;

    if (n == 0 || *u == 'B' || *u == 'b')
        return 1.0;
    at = strchr(prefixes, *u == 'K' ? 'k' : *u);
    if (!at || !*u)
        return -1.0;
    base = n > 1 && u[1] == 'i' ? 1024.0 : 1000.0;
    for (const char *q = prefixes; q <= at; q++)
        scale *= base;
    return scale;
}

/*
 * A byte count printed as a number -> int64_t, or -1 when it is not one: llround of a value past
 * INT64_MAX (a fuzzed "666...6B") is a domain error that returns INT64_MIN, a negative count.
 */
static int64_t bytes_of(double v)
{
    if (!(v >= 0.0) || v >= 9223372036854775807.0)
        return -1;
    return llround(v);
}

static void claim_init(struct tool_claim *c, const char *name)
{
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->claimed_bytes_per_s = -1.0;
    c->claimed_bytes = -1;
    c->claimed_seconds = -1.0;
}

/* ---- robocopy: the summary table, "Bytes :", "Times :", "Speed :" ---- */

/* "1.000 g", "512.5 m", "12345": one of robocopy's sizes, with k/m/g/t in powers of 1024.
 * Returns the end, or NULL. */
static const char *robocopy_size(const char *p, int64_t *out)
{
    double v, scale = 1.0;
    const char *e = parse_num(skip_ws(p), 0, &v), *u;

    if (!e)
        return NULL;
    u = skip_ws(e);
    switch (tolower((unsigned char)*u)) {
    case 'k':
        scale = 1024.0;
        break;
    case 'm':
        scale = MIB;
        break;
    case 'g':
        scale = MIB * 1024.0;
        break;
    case 't':
        scale = MIB * MIB;
        break;
    }
    if (scale > 1.0 && (u[1] == '\0' || u[1] == ' ' || u[1] == '\t'))
        e = u + 1;
    else
        scale = 1.0; /* no suffix: the next column follows */
    *out = bytes_of(v * scale);
    return e;
}

/* "0:00:21" (h:mm:ss), or "0:16.914" (m:ss.fff, as older robocopy prints it) -> seconds, or -1. */
static double robocopy_time(const char *p)
{
    unsigned h, m, s;
    double x;
    int n = 0;

    p = skip_ws(p);
    if (sscanf(p, "%u:%u:%u", &h, &m, &s) == 3)
        return h * 3600.0 + m * 60.0 + s;
    if (sscanf(p, "%u:%lf%n", &m, &x, &n) == 2 && p[n - 4] == '.')
        return m * 60.0 + x;
    return -1.0;
}

/*
 * A summary row, "    Bytes :  10.000 g ..." or localized ("      Bytes:", "   Dateien:"): the
 * label (no digits) and what follows its ':'. NULL when the line is no such row.
 */
static const char *robocopy_row(const char *s)
{
    const char *p = skip_ws(s), *colon = strchr(p, ':');

    if (!colon || colon == p || colon - p > 24)
        return NULL;
    for (const char *q = p; q < colon; q++)
        if (isdigit((unsigned char)*q))
            return NULL;
    return colon + 1;
}

/* The six columns (Total, Copied, Skipped, Mismatch, FAILED, Extras) of a Dirs, Files or Bytes
 * row. Returns 1 with the Copied one in *copied. */
static int robocopy_columns(const char *v, int64_t *copied)
{
    int64_t x[6];
    const char *e = v;

    for (int i = 0; i < 6; i++)
        if (!(e = robocopy_size(e, &x[i])))
            return 0;
    if (*skip_ws(e))
        return 0;
    *copied = x[1];
    return 1;
}

/* Does a speed's unit ("MegaBytes/min.", "Megabytes/Min.") say per minute? */
static int per_minute(const char *unit)
{
    const char *slash = strchr(unit, '/');

    return slash && strncasecmp(slash + 1, "min", 3) == 0;
}

/*
 * The summary's rows come in a fixed order whatever the language: Dirs, Files, Bytes, Times, then
 * Speed in bytes per second and in megabytes (2^20) per minute. English labels are matched by
 * name; a localized summary by that order (the third row of six columns is Bytes, the rows after
 * Times are the speeds, the one whose unit says "min" per minute). Times is the Total column.
 */
static long parse_robocopy(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    struct tool_claim c;
    int rows = 0, after_times = 0;
    char buf[512];

    claim_init(&c, "robocopy");
    while (next_line(text, len, &pos, &l)) {
        const char *s = line_str(&l, buf, sizeof(buf)), *v = robocopy_row(s), *e, *named;
        int64_t copied;
        double x;

        if (!*skip_ws(s))
            continue; /* blank lines stand between Times and Speed */
        if (!v) {
            rows = after_times = 0;
            continue;
        }
        if (robocopy_columns(v, &copied)) {
            rows++;
            after_times = 0;
            if (after_key(s, "Bytes") || (rows == 3 && !after_key(s, "Files"))) {
                claim_init(&c, "robocopy"); /* a new summary starts */
                c.claimed_bytes = copied;   /* what was copied is what the speed is about */
            }
            continue;
        }
        rows = 0;
        if ((x = robocopy_time(v)) >= 0) {
            c.claimed_seconds = x;
            after_times = 1;
            continue;
        }
        named = after_key(s, "Speed");
        if ((!named && !after_times) || !(e = parse_num(skip_ws(v), 0, &x))) {
            after_times = 0;
            continue;
        }
        e = skip_ws(e);
        if (!strchr(e, '/') || (named && strncasecmp(e, "Bytes/sec", 9) != 0 &&
                                strncasecmp(e, "MegaBytes/min", 13) != 0)) {
            after_times = 0;
            continue;
        }
        if (!per_minute(e)) {
            c.claimed_bytes_per_s = x;
        } else if (c.claimed_bytes_per_s < 0) { /* Bytes/sec is the more precise */
            c.claimed_bytes_per_s = x * MIB / 60.0;
        }
        found = (long)l.off;
        *out = c;
    }
    return found;
}

/* ---- dd: "N bytes (...) copied, S s, R unit/s" (any locale's words and decimal mark) ---- */

static int parse_dd_line(const char *s, struct tool_claim *c)
{
    double bytes, secs, rate, scale;
    const char *p = parse_num(s, 1, &bytes), *sec_at, *rate_at, *u;
    size_t n = strlen(s), un;

    if (!p || strncasecmp(p, " byte", 5) != 0 || n < 6 || strcmp(s + n - 2, "/s") != 0)
        return 0;
    /* the rate: "<num> <unit>/s" at the end */
    u = s + n - 2;
    while (u > s && u[-1] != ' ')
        u--;
    un = (size_t)(s + n - 2 - u);
    rate_at = u - 1;
    while (rate_at > s && rate_at[-1] != ' ')
        rate_at--;
    if (rate_at <= s || !parse_num(rate_at, 0, &rate) || (scale = unit_scale(u, un)) < 0)
        return 0;
    /* the seconds: "<num> s," before the rate */
    sec_at = NULL;
    for (const char *q = strstr(s, " s,"); q; q = strstr(q + 1, " s,"))
        if (q < rate_at)
            sec_at = q;
    if (!sec_at)
        return 0;
    while (sec_at > s && sec_at[-1] != ' ')
        sec_at--;
    claim_init(c, "dd");
    c->claimed_bytes = bytes_of(bytes);
    if (parse_num(sec_at, 0, &secs))
        c->claimed_seconds = secs;
    c->claimed_bytes_per_s = rate * scale;
    return 1;
}

static int dd_line(const char *s, int cr, struct tool_claim *c)
{
    (void)cr; /* status=progress ends its updates with '\r', the last line with '\n' */
    return isdigit((unsigned char)*s) && parse_dd_line(s, c);
}

static long parse_dd(const char *text, size_t len, struct tool_claim *out)
{
    return last_line_claim(text, len, dd_line, out);
}

/*
 * ---- rsync: --stats, the "sent X bytes  received Y bytes  Z bytes/sec" summary and the
 * --info=progress2 (or --progress) lines ----
 * rsync's numbers carry the locale's separators ("268,435,456"), or with -h a suffix in units of
 * 1000 ("33.56M"; -hh would make them units of 1024 with the same letters, which the text cannot
 * tell apart: read as -h). Its progress rates are in units of 1024 whatever -h says (progress.c
 * divides by 1024 for "kB/s", again for "MB/s" and "GB/s"). The summary's rate is
 * (sent + received) / (0.5 + whole seconds elapsed) (main.c), so a run under a second claims the
 * bytes over 0.5 s; the summary is still rsync's last word and wins over the progress lines.
 */
static const char *rsync_num(const char *p, double *out)
{
    static const char suffixes[] = "KMGTP";
    const char *e = parse_num(p, 1, out), *at;
    double scale = 1.0;

    if (!e || !*e || !(at = strchr(suffixes, *e)))
        return e;
    for (const char *q = suffixes; q <= at; q++)
        scale *= 1000.0;
    parse_num(p, 0, out); /* "33.56M": the '.' is the decimal mark after all */
    *out *= scale;
    return e + 1;
}

/* "     33,554,432 100%  183.73MB/s    0:00:00 (xfr#4, to-chk=0/5)": *last says whether it is
 * the line rsync prints when a transfer ends (its rate is then over the whole transfer). */
static int rsync_progress(const char *s, double *bytes, double *rate, int *last)
{
    static const char *const units[] = {"kB/s", "MB/s", "GB/s", "TB/s"};
    const char *p = rsync_num(skip_ws(s), bytes);
    double pct, scale = 1024.0;
    unsigned h, m, sec;

    if (!p || *p != ' ' || !(p = parse_num(skip_ws(p), 0, &pct)) || *p != '%' || pct > 100)
        return 0;
    if (!(p = parse_num(skip_ws(p + 1), 0, rate)))
        return 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++, scale *= 1024.0) {
        if (strncmp(p, units[i], 4) != 0)
            continue;
        p = skip_ws(p + 4);
        if (sscanf(p, "%u:%u:%u", &h, &m, &sec) != 3 && strncmp(p, "??:??:??", 8) != 0)
            return 0;
        *rate *= scale;
        *last = strstr(p, "(xfr#") != NULL;
        return 1;
    }
    return 0;
}

static long parse_rsync(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    double transferred = -1.0, progressed = -1.0;
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        const char *s = line_str(&l, buf, sizeof(buf)), *v, *p;
        double sent, recv, rate;
        int last;

        if ((v = after_key(s, "Total transferred file size"))) {
            if (!rsync_num(skip_ws(v), &transferred))
                transferred = -1.0;
            continue;
        }
        if (rsync_progress(s, &sent, &rate, &last)) {
            claim_init(out, "rsync");
            out->claimed_bytes = bytes_of(sent);
            out->claimed_bytes_per_s = rate;
            if (last && rate > 0)
                out->claimed_seconds = sent / rate;
            progressed = sent;
            found = (long)l.off;
            continue;
        }
        if (strncmp(s, "sent ", 5) != 0 || !(p = rsync_num(s + 5, &sent)) ||
            strncmp(p, " bytes", 6) != 0)
            continue;
        p = skip_ws(p + 6);
        if (strncmp(p, "received ", 9) != 0 || !(p = rsync_num(p + 9, &recv)) ||
            strncmp(p, " bytes", 6) != 0)
            continue;
        p = skip_ws(p + 6);
        /* the rate has two decimals: its last separator is the decimal mark */
        if (!(v = rsync_num(p, &rate)) || strncmp(v, " bytes/sec", 10) != 0)
            continue;
        if (v[-1] >= '0' && v[-1] <= '9')
            parse_num(p, 0, &rate);
        claim_init(out, "rsync");
        out->claimed_bytes_per_s = rate;
        /* the payload: --stats' file data, else the progress lines', else what crossed the wire */
        out->claimed_bytes = bytes_of(transferred >= 0  ? transferred
                                      : progressed >= 0 ? progressed
                                                        : sent + recv);
        /* rsync's rate is (sent + received) / elapsed, so its elapsed time is implied */
        if (rate > 0)
            out->claimed_seconds = (sent + recv) / rate;
        found = (long)l.off;
        transferred = progressed = -1.0;
    }
    return found;
}

/*
 * A size or rate as fio, pv and rsync -h print it: "866MiB", "8448KiB", "16.3MB", "0.00 B", "0":
 * a number, an optional SI (k/K = 1000) or IEC ("Ki" = 1024) prefix, then 'B' (or nothing after a
 * bare number). `space`: a blank may stand before the unit, as pv prints "0.00 B". Returns the
 * end (after the 'B'), or NULL.
 */
static const char *sized(const char *p, int space, double *out)
{
    double v, scale = 1.0;
    const char *e = parse_num(p, 0, &v), *u;
    size_t n = 0;

    if (!e)
        return NULL;
    u = space && *e == ' ' ? e + 1 : e;
    if (*u && strchr("kKMGTPE", *u))
        n = u[1] == 'i' ? 2 : 1;
    if (u[n] != 'B') {
        if (n != 0)
            return NULL;
        *out = v; /* fio prints a zero as a bare "0" */
        return e;
    }
    if (n)
        scale = unit_scale(u, n);
    *out = v * scale;
    return u + n + 1;
}

/* A rate: sized() then "/s"; fio prints a zero rate as a bare "0". Returns the end, or NULL. */
static const char *per_s(const char *p, int space, double *out)
{
    const char *q = sized(p, space, out);

    if (q && strncmp(q, "/s", 2) == 0)
        return q + 2;
    return q && isdigit((unsigned char)q[-1]) && *out == 0 ? q : NULL;
}

/*
 * ---- fio: what its jobs and groups add up to, in all three formats ----
 * Within a reporting group fio's jobs run at once: their rates add up, the group's time is its
 * longest job's. Groups (stonewall) run one after another: their bytes and times add up, and
 * the claim of several is their bytes over their summed time. unified_rw_reporting=mixed prints
 * only a MIXED direction; =both prints it besides the others, whose sum it repeats.
 */
struct fio_acc {
    double bw, bytes, ms;
    int n; /* read, write and trim entries */
    double mbw, mbytes, mms;
    int mixed; /* mixed entries */
};

struct fio_run {
    struct fio_acc g; /* the group being read */
    long gid;
    int groups;
    double bytes, ms, bw; /* the finished groups' sums, and the last one's rate */
};

static void fio_add(struct fio_acc *a, int mixed, double bw, double bytes, double ms)
{
    if (mixed) {
        a->mbw += bw;
        a->mbytes += bytes;
        a->mms = fmax(a->mms, ms);
        a->mixed++;
    } else {
        a->bw += bw;
        a->bytes += bytes;
        a->ms = fmax(a->ms, ms);
        a->n++;
    }
}

static void fio_group_end(struct fio_run *r)
{
    const struct fio_acc *a = &r->g;
    int mixed = a->n == 0;

    if (a->n == 0 && a->mixed == 0)
        return;
    r->bytes += mixed ? a->mbytes : a->bytes;
    r->ms += mixed ? a->mms : a->ms;
    r->bw = mixed ? a->mbw : a->bw;
    r->groups++;
    memset(&r->g, 0, sizeof(r->g));
}

static void fio_run_add(struct fio_run *r, long gid, int mixed, double bw, double bytes, double ms)
{
    if (gid != r->gid)
        fio_group_end(r);
    r->gid = gid;
    fio_add(&r->g, mixed, bw, bytes, ms);
}

/* The claim of a run (and it is emptied); 0 when it has none. */
static int fio_claim(struct fio_run *r, struct tool_claim *c)
{
    fio_group_end(r);
    if (r->groups == 0)
        return 0;
    claim_init(c, "fio");
    c->claimed_bytes = bytes_of(r->bytes);
    c->claimed_seconds = r->ms > 0 ? r->ms / 1000.0 : -1.0;
    if (r->groups == 1)
        c->claimed_bytes_per_s = r->bw;
    else if (r->ms > 0)
        c->claimed_bytes_per_s = r->bytes / (r->ms / 1000.0);
    memset(r, 0, sizeof(*r));
    return 1;
}

/* ---- fio --output-format=json: jobs[].read/write .bw_bytes, .io_bytes, .runtime (ms) ---- */

/* Every job's "read", "write" and "trim", or "mixed" alone where unified_rw_reporting=mixed
 * printed only that; jobs[].groupid says which group each is in. */
static int fio_sum(json_t *root, struct tool_claim *c)
{
    static const char *const dirs[] = {"read", "write", "trim", "mixed"};
    json_t *jobs = json_object_get(root, "jobs"), *job;
    struct fio_run run = {0};
    size_t i;

    if (!json_is_array(jobs))
        return 0;
    json_array_foreach(jobs, i, job)
    {
        json_t *gid = json_object_get(job, "groupid");
        int split = json_is_object(json_object_get(job, "read")) ||
                    json_is_object(json_object_get(job, "write"));

        for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]) - (size_t)split; d++) {
            json_t *x = json_object_get(job, dirs[d]);
            json_t *b = json_object_get(x, "bw_bytes"), *io = json_object_get(x, "io_bytes");
            json_t *rt = json_object_get(x, "runtime");

            if (!json_is_object(x) || !json_is_number(b))
                continue;
            fio_run_add(&run, json_is_integer(gid) ? (long)json_integer_value(gid) : 0, d == 3,
                        json_number_value(b),
                        json_is_integer(io) ? (double)json_integer_value(io) : 0,
                        json_is_number(rt) ? json_number_value(rt) : 0);
        }
    }
    return fio_claim(&run, c);
}

static long parse_fio(const char *text, size_t len, struct tool_claim *out)
{
    long found = -1;

    /* fio may print warnings before the JSON: try every '{' that starts a line */
    for (size_t i = 0; i < len; i++) {
        json_t *root;
        json_error_t err;
        struct tool_claim c;

        if (text[i] != '{' || (i > 0 && text[i - 1] != '\n'))
            continue;
        root = json_loadb(text + i, len - i, JSON_DISABLE_EOF_CHECK, &err);
        if (!root)
            continue;
        if (fio_sum(root, &c)) {
            *out = c;
            found = (long)i;
        }
        json_decref(root);
    }
    return found;
}

/* ---- fio's normal text: the "Run status group" lines, or failing those the per-job lines ---- */

/* Which direction a line starts with ("READ:" in a group, "read:" in a job); 0 if none, 2 for
 * mixed. Returns what follows the ':' in *rest. */
static int fio_dir(const char *s, int upper, const char **rest)
{
    static const char *const names[][2] = {
        {"READ:", "read:"}, {"WRITE:", "write:"}, {"TRIM:", "trim:"}, {"MIXED:", "mixed:"}};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *k = names[i][upper ? 0 : 1];

        if (strncmp(s, k, strlen(k)) == 0) {
            *rest = s + strlen(k);
            return i == 3 ? 2 : 1;
        }
    }
    return 0;
}

/* "   READ: bw=620MiB/s (650MB/s), 290MiB/s-485MiB/s (...), io=15.5MiB (16.3MB), run=17-25msec"
 * (stat.c show_group_stats): the aggregate rate, the bytes and the longest job's time. */
static int fio_group_line(const char *p, double *bw, double *bytes, double *ms)
{
    const char *io, *run;
    double lo, hi;

    if (strncmp(p, " bw=", 4) != 0 || !(p = per_s(p + 4, 0, bw)))
        return 0;
    if (!(io = strstr(p, ", io=")) || !sized(io + 5, 0, bytes) || !(run = strstr(io, ", run=")))
        return 0;
    if (sscanf(run + 6, "%lf-%lfmsec", &lo, &hi) != 2)
        return 0;
    *ms = hi;
    return 1;
}

/* "  write: IOPS=117, BW=117MiB/s (123MB/s)(32.0MiB/273msec); 0 zone resets" (show_ddir_status). */
static int fio_job_line(const char *p, double *bw, double *bytes, double *ms)
{
    const char *b = strstr(p, ", BW="), *q;

    if (strncmp(p, " IOPS=", 6) != 0 || !b || !(q = per_s(b + 5, 0, bw)) ||
        !(q = strstr(q, ")(")) || !(q = sized(q + 2, 0, bytes)) || *q != '/' ||
        !parse_num(q + 1, 0, ms))
        return 0;
    return 1;
}

/* "Run status group 1 (all jobs):" or "b: (groupid=1, jobs=1): err= 0: ...": the group id. */
static int fio_group_id(const char *s, long *gid)
{
    const char *g = strstr(s, "(groupid=");

    if (strncmp(s, "Run status group ", 17) == 0)
        return sscanf(s + 17, "%ld", gid) == 1;
    return g && sscanf(g + 9, "%ld", gid) == 1;
}

static long parse_fio_text(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1, at_group = -1, at_job = -1, gid = 0;
    struct fio_run group = {0}, job = {0};
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        const char *s = skip_ws(line_str(&l, buf, sizeof(buf))), *rest;
        double bw, bytes, ms;
        int d;

        if (fio_group_id(s, &gid))
            continue;
        if ((d = fio_dir(s, 1, &rest)) && fio_group_line(rest, &bw, &bytes, &ms)) {
            fio_run_add(&group, gid, d == 2, bw, bytes, ms);
            at_group = (long)l.off;
        } else if ((d = fio_dir(s, 0, &rest)) && fio_job_line(rest, &bw, &bytes, &ms)) {
            if (at_group >= 0) { /* a job after a summary: the next fio run */
                struct tool_claim c;

                if (fio_claim(&group, &c)) {
                    *out = c;
                    found = at_group;
                }
                memset(&job, 0, sizeof(job));
                at_group = -1;
            }
            fio_run_add(&job, gid, d == 2, bw, bytes, ms);
            at_job = (long)l.off;
        }
    }
    /* the group summary is what fio says of the run; its jobs' lines only stand in when the
     * summary is missing (a cut or killed output) */
    if (at_group >= 0 && fio_claim(&group, out))
        return at_group;
    if (at_job >= 0 && fio_claim(&job, out))
        return at_job;
    return found;
}

/*
 * ---- fio --output-format=terse: one ';' line per job (HOWTO "Terse output") ----
 * Version 2 has no fio version field; each direction's block starts with total I/O (KiB),
 * bandwidth (KiB/s), IOPS and runtime (ms), then 4 + 4 latency fields, 20 percentiles
 * ("99.000000%=3948"), 4 latency and 5 bandwidth fields (version 5 adds 6 more). Version 3 has read
 * and write blocks, 2, 4 and 5 a trim block too; unified_rw_reporting=mixed prints one block.
 */
#define TERSE_FIELDS 200

static int terse_int(const char *f, size_t n, double *out)
{
    char *end;
    char tmp[32];

    if (n == 0 || n >= sizeof(tmp) || !isdigit((unsigned char)*f))
        return 0;
    memcpy(tmp, f, n);
    tmp[n] = '\0';
    *out = strtod(tmp, &end);
    return *end == '\0' && !strpbrk(tmp, ".eEx");
}

/* Split one line at ';' into at most TERSE_FIELDS fields (start, length). Returns the count. */
static size_t terse_split(const struct line *l, const char **f, size_t *fn)
{
    size_t n = 0;
    const char *p = l->s, *end = l->s + l->n;

    while (n < TERSE_FIELDS) {
        const char *q = memchr(p, ';', (size_t)(end - p));

        f[n] = p;
        fn[n++] = (size_t)((q ? q : end) - p);
        if (!q)
            break;
        p = q + 1;
    }
    return n;
}

static int terse_line(const struct line *l, struct fio_run *r)
{
    const char *f[TERSE_FIELDS];
    size_t fn[TERSE_FIELDS], n, start, block, ndirs;
    double gid;
    int ver;

    if (l->n < 2 || l->s[1] != ';' || l->s[0] < '2' || l->s[0] > '5')
        return 0;
    n = terse_split(l, f, fn);
    ver = l->s[0] - '0';
    if (ver >= 3 && (n < 2 || fn[1] < 4 || strncmp(f[1], "fio-", 4) != 0))
        return 0;
    start = ver == 2 ? 4 : 5;
    block = ver == 5 ? 47 : 41;
    ndirs = ver == 3 ? 2 : 3;
    if (n < start || !terse_int(f[start - 2], fn[start - 2], &gid))
        return 0;
    for (size_t d = 0; d < ndirs; d++) {
        size_t b = start + d * block;
        double kib, kibps, ms;
        int ok = b + 32 <= n;

        /* a block is there when its 20 percentile fields are: the CPU fields follow the last */
        for (size_t k = b + 12; ok && k < b + 32; k++)
            ok = memchr(f[k], '=', fn[k]) != NULL && memchr(f[k], '%', fn[k]) != NULL;
        if (!ok || !terse_int(f[b], fn[b], &kib) || !terse_int(f[b + 1], fn[b + 1], &kibps) ||
            !terse_int(f[b + 3], fn[b + 3], &ms))
            return d > 0;
        fio_run_add(r, gid < 1e9 ? (long)gid : -1, 0, kibps * 1024.0, kib * 1024.0, ms);
    }
    return 1;
}

static long parse_fio_terse(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long at = -1;
    struct fio_run run = {0};
    int gap = 0;

    while (next_line(text, len, &pos, &l)) {
        struct fio_run one = {0};

        if (terse_line(&l, &one)) {
            if (gap) /* other text since the last job's line: a new run */
                memset(&run, 0, sizeof(run));
            gap = 0;
            fio_group_end(&one);
            fio_run_add(&run, one.gid, 0, one.bw, one.bytes, one.ms);
            at = (long)l.off;
        } else if (l.n > 0 && at >= 0) {
            gap = 1;
        }
    }
    return at >= 0 && fio_claim(&run, out) ? at : -1;
}

/*
 * ---- pv: "17.0MiB 0:00:02 [6.75MiB/s] [<=>      ]" on stderr, each update ended by '\r' ----
 * The fields are pv's -b (bytes), -t (timer), -r (rate) and -a (average rate, the second bracket
 * when both are on), then the bar, the percentage and the ETA. Sizes are in units of 1024 ("KiB",
 * "MiB"). pv's last update shows the average over the whole transfer in the rate's place. pv
 * writes nothing when stderr is not a terminal, as under `perflog run`, unless given -f. In line
 * mode (-l) the units have no 'B': those are lines, not bytes, and are not read.
 */
struct pv_update {
    double bytes, rate, secs; /* < 0: not shown */
};

/* One bracket: a rate ("[ 870MiB/s]", "[0.00 B/s]") or the bar ("[===>   ]", "[<=>  ]"). */
static const char *pv_bracket(const char *p, double *rate)
{
    const char *close = strchr(p, ']'), *q;
    double r;

    if (*p != '[' || !close)
        return NULL;
    q = per_s(skip_ws(p + 1), 1, &r);
    /* in bytes: "B/s" (per_s also takes a bare number) */
    if (q && q - p >= 5 && strncmp(q - 3, "B/s", 3) == 0 && skip_ws(q) == close) {
        *rate = r;
        return close + 1;
    }
    for (q = p + 1; q < close; q++)
        if (!strchr("=<>- ", *q))
            return NULL;
    return close + 1;
}

static int pv_line(const char *s, int cr_ended, struct pv_update *u)
{
    const char *p = skip_ws(s), *q;
    double b;
    unsigned h, m, sec;
    int n = 0, brackets = 0;

    u->bytes = u->rate = u->secs = -1.0;
    if ((q = sized(p, 1, &b)) && q[-1] == 'B' && (*q == ' ' || !*q)) {
        u->bytes = b;
        p = skip_ws(q);
    }
    if (sscanf(p, "%u:%2u:%2u%n", &h, &m, &sec, &n) == 3 && n > 0 && (p[n] == ' ' || !p[n])) {
        u->secs = h * 3600.0 + m * 60.0 + sec;
        p = skip_ws(p + n);
    }
    while (*p == '[') {
        if (!(p = pv_bracket(p, &u->rate)))
            return 0;
        p = skip_ws(p);
        brackets++;
    }
    /* what may follow: the percentage and the ETA */
    if (isdigit((unsigned char)*p)) {
        while (isdigit((unsigned char)*p))
            p++;
        if (*p++ != '%')
            return 0;
        p = skip_ws(p);
    }
    if (strncmp(p, "ETA ", 4) == 0 && sscanf(p + 4, "%u:%u:%u%n", &h, &m, &sec, &n) == 3)
        p = skip_ws(p + 4 + n);
    if (*p)
        return 0;
    if (u->rate >= 0 || (u->bytes >= 0 && u->secs >= 0))
        return 1;
    /* -b alone: a bare size, which only pv's '\r' marks as an update */
    return u->bytes >= 0 && brackets == 0 && cr_ended;
}

static int pv_claim(const char *s, int cr, struct tool_claim *c)
{
    struct pv_update u;

    if (!pv_line(s, cr, &u))
        return 0;
    claim_init(c, "pv");
    c->claimed_bytes = u.bytes >= 0 ? bytes_of(u.bytes) : -1;
    c->claimed_bytes_per_s = u.rate;
    /* the timer is whole seconds; bytes over the (then average) rate are closer */
    c->claimed_seconds = u.bytes > 0 && u.rate > 0 ? u.bytes / u.rate : u.secs;
    return 1;
}

static long parse_pv(const char *text, size_t len, struct tool_claim *out)
{
    return last_line_claim(text, len, pv_claim, out);
}

/*
 * ---- smbclient put/get/mput/mget: "putting file A as \B (N kb/s) (average M kb/s)" ----
 * smbclient (Samba's source3/client/client.c, do_put and do_get) prints bytes / (1.024 x ms): its
 * "kb/s" (put) and "KiloBytes/sec" (get) are KiB/s. The average is the session's, every file's
 * bytes over the sum of their transfer times (opening and closing the files is not in it), so the
 * last line's average is the claim. It prints no total of bytes or time.
 */
static long parse_smbclient(const char *text, size_t len, struct tool_claim *out)
{
    static const char *const units[] = {" kb/s)", " KiloBytes/sec)"};
    struct line l;
    size_t pos = 0;
    long found = -1;
    char buf[4096];

    while (next_line(text, len, &pos, &l)) {
        const char *s = line_str(&l, buf, sizeof(buf)), *a = NULL, *p;
        double avg;

        /* length first, then memcmp: GCC 12 at -O3 mistakes a strncmp here for one against "" */
        if (strlen(s) < 13 ||
            (memcmp(s, "putting file ", 13) != 0 && memcmp(s, "getting file ", 13) != 0))
            continue;
        /* the last "(average ": a file name may hold the words too */
        for (p = strstr(s, "(average "); p; p = strstr(p + 1, "(average "))
            a = p;
        if (!a || !(p = parse_num(a + 9, 0, &avg)))
            continue;
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
            if (strcmp(p, units[u]) != 0)
                continue;
            claim_init(out, "smbclient");
            out->claimed_bytes_per_s = avg * 1024.0;
            found = (long)l.off;
        }
    }
    return found;
}

/*
 * ---- diskspd: the "total:" line of the "Total IO" table, "actual test time:" ----
 * Each table's total line reads "total: <bytes> | <I/Os> | <MiB/s> | <I/O per s>". The tables
 * come in the order Total IO, Read IO, Write IO, so where a cut output has lost the first, the
 * read and write tables' totals are added up instead.
 */
static int diskspd_total(const char *v, double *bytes, double *mibs)
{
    const char *p = parse_num(skip_ws(v), 1, bytes);
    double ios;

    return p && *(p = skip_ws(p)) == '|' && (p = parse_num(skip_ws(p + 1), 1, &ios)) &&
           *(p = skip_ws(p)) == '|' && parse_num(skip_ws(p + 1), 0, mibs);
}

static long parse_diskspd(const char *text, size_t len, struct tool_claim *out)
{
    enum { NONE, TOTAL, READ, WRITE } section = NONE;
    struct line l;
    size_t pos = 0;
    long found = -1, rw_at = -1;
    double secs = -1.0, rw_bytes = 0, rw_mibs = 0;
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        const char *s = skip_ws(line_str(&l, buf, sizeof(buf))), *v;
        double bytes, mibs;

        if ((v = after_key(s, "actual test time"))) {
            if (!parse_num(skip_ws(v), 0, &secs))
                secs = -1.0;
        } else if (strncasecmp(s, "Total IO", 8) == 0) {
            section = TOTAL;
            rw_at = -1; /* a new run */
            rw_bytes = rw_mibs = 0;
        } else if (strncasecmp(s, "Read IO", 7) == 0) {
            section = READ;
        } else if (strncasecmp(s, "Write IO", 8) == 0) {
            section = WRITE;
        } else if (section != NONE && (v = after_key(s, "total"))) {
            int in_total = section == TOTAL;

            section = NONE;
            if (!diskspd_total(v, &bytes, &mibs))
                continue;
            if (!in_total) {
                rw_bytes += bytes;
                rw_mibs += mibs;
                rw_at = (long)l.off;
                continue;
            }
            claim_init(out, "diskspd");
            out->claimed_bytes = bytes_of(bytes);
            out->claimed_bytes_per_s = mibs * MIB;
            out->claimed_seconds = secs;
            found = (long)l.off;
        }
    }
    if (found < 0 && rw_at >= 0) {
        claim_init(out, "diskspd");
        out->claimed_bytes = bytes_of(rw_bytes);
        out->claimed_bytes_per_s = rw_mibs * MIB;
        out->claimed_seconds = secs;
        found = rw_at;
    }
    return found;
}

static long (*const parsers[])(const char *, size_t, struct tool_claim *) = {
    parse_robocopy,  parse_dd, parse_rsync,   parse_fio,       parse_fio_text,
    parse_fio_terse, parse_pv, parse_diskspd, parse_smbclient,
};

int claims_parse(const char *text, size_t len, struct tool_claim *out)
{
    long best = -1;
    struct tool_claim best_claim;

    if (!text)
        return 0;
    for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++) {
        struct tool_claim c;
        long at = parsers[i](text, len, &c);

        if (at > best) {
            best = at;
            best_claim = c;
        }
    }
    if (best < 0)
        return 0;
    *out = best_claim;
    return 1;
}
