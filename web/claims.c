/*
 * claims.c - what a copy tool says it did, read from its output; see claims.h.
 *
 * Each tool has one parser that looks for that tool's summary and returns where in the text the
 * last one starts; claims_parse keeps the claim whose summary comes last. Numbers are read the
 * way each tool prints them: robocopy's "1.000 g" suffixes, dd's SI rates and locale decimal
 * commas, rsync's thousands separators.
 */
#include "claims.h"

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
    *out = llround(v * scale);
    return e;
}

/* "0:00:21" -> seconds, or -1. */
static double robocopy_time(const char *p)
{
    unsigned h, m, s;

    return sscanf(skip_ws(p), "%u:%u:%u", &h, &m, &s) == 3 ? h * 3600.0 + m * 60.0 + s : -1.0;
}

static long parse_robocopy(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    struct tool_claim c;
    char buf[512];

    claim_init(&c, "robocopy");
    while (next_line(text, len, &pos, &l)) {
        const char *s = line_str(&l, buf, sizeof(buf)), *v;
        double x;

        if ((v = after_key(s, "Bytes"))) {
            int64_t total, copied;
            const char *e = robocopy_size(v, &total);

            claim_init(&c, "robocopy"); /* a new summary starts */
            /* columns: Total, Copied, ...; what was copied is what the speed is about */
            if (e)
                c.claimed_bytes = robocopy_size(e, &copied) ? copied : total;
        } else if ((v = after_key(s, "Times"))) {
            c.claimed_seconds = robocopy_time(v);
        } else if ((v = after_key(s, "Speed"))) {
            const char *e = parse_num(skip_ws(v), 0, &x);

            if (!e)
                continue;
            e = skip_ws(e);
            if (strncasecmp(e, "Bytes/sec", 9) == 0) {
                c.claimed_bytes_per_s = x;
            } else if (strncasecmp(e, "MegaBytes/min", 13) == 0) {
                if (c.claimed_bytes_per_s < 0) /* Bytes/sec is the more precise */
                    c.claimed_bytes_per_s = x * MIB / 60.0;
            } else {
                continue;
            }
            found = (long)l.off;
            *out = c;
        }
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
    c->claimed_bytes = llround(bytes);
    if (parse_num(sec_at, 0, &secs))
        c->claimed_seconds = secs;
    c->claimed_bytes_per_s = rate * scale;
    return 1;
}

static long parse_dd(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        struct tool_claim c;

        if (l.n && isdigit((unsigned char)*l.s) &&
            parse_dd_line(line_str(&l, buf, sizeof(buf)), &c)) {
            *out = c;
            found = (long)l.off;
        }
    }
    return found;
}

/* ---- rsync: --stats and the final "sent X bytes  received Y bytes  Z bytes/sec" line ---- */

static long parse_rsync(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    double transferred = -1.0;
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        const char *s = line_str(&l, buf, sizeof(buf)), *v, *p;
        double sent, recv, rate;

        if ((v = after_key(s, "Total transferred file size"))) {
            if (!parse_num(skip_ws(v), 1, &transferred))
                transferred = -1.0;
            continue;
        }
        if (strncmp(s, "sent ", 5) != 0 || !(p = parse_num(s + 5, 1, &sent)) ||
            strncmp(p, " bytes", 6) != 0)
            continue;
        p = skip_ws(p + 6);
        if (strncmp(p, "received ", 9) != 0 || !(p = parse_num(p + 9, 1, &recv)) ||
            strncmp(p, " bytes", 6) != 0)
            continue;
        p = skip_ws(p + 6);
        if (!(p = parse_num(p, 0, &rate)) || strncmp(p, " bytes/sec", 10) != 0)
            continue;
        claim_init(out, "rsync");
        out->claimed_bytes_per_s = rate;
        out->claimed_bytes = llround(transferred >= 0 ? transferred : sent + recv);
        /* rsync's rate is (sent + received) / elapsed, so the elapsed time is implied */
        if (rate > 0)
            out->claimed_seconds = (sent + recv) / rate;
        found = (long)l.off;
        transferred = -1.0;
    }
    return found;
}

/* ---- fio --output-format=json: jobs[].read/write .bw_bytes, .io_bytes, .runtime (ms) ---- */

static int fio_sum(json_t *root, struct tool_claim *c)
{
    static const char *const dirs[] = {"read", "write", "trim"};
    json_t *jobs = json_object_get(root, "jobs"), *job;
    double bw = 0, runtime_ms = 0;
    int64_t bytes = 0;
    size_t i;
    int any = 0;

    if (!json_is_array(jobs))
        return 0;
    json_array_foreach(jobs, i, job)
    {
        for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
            json_t *x = json_object_get(job, dirs[d]);
            json_t *b = json_object_get(x, "bw_bytes"), *io = json_object_get(x, "io_bytes");
            json_t *rt = json_object_get(x, "runtime");

            if (!json_is_object(x) || !json_is_number(b))
                continue;
            any = 1;
            bw += json_number_value(b);
            if (json_is_integer(io))
                bytes += json_integer_value(io);
            if (json_is_number(rt) && json_number_value(rt) > runtime_ms)
                runtime_ms = json_number_value(rt);
        }
    }
    if (!any)
        return 0;
    claim_init(c, "fio");
    c->claimed_bytes_per_s = bw;
    c->claimed_bytes = bytes;
    c->claimed_seconds = runtime_ms > 0 ? runtime_ms / 1000.0 : -1.0;
    return 1;
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

        if (strncmp(s, "putting file ", 13) != 0 && strncmp(s, "getting file ", 13) != 0)
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

/* ---- diskspd: the "total:" line of the "Total IO" table, "actual test time:" ---- */

static long parse_diskspd(const char *text, size_t len, struct tool_claim *out)
{
    struct line l;
    size_t pos = 0;
    long found = -1;
    int in_total = 0;
    double secs = -1.0;
    char buf[512];

    while (next_line(text, len, &pos, &l)) {
        const char *s = skip_ws(line_str(&l, buf, sizeof(buf))), *v;
        double bytes, ios, mibs;

        if ((v = after_key(s, "actual test time"))) {
            if (!parse_num(skip_ws(v), 0, &secs))
                secs = -1.0;
        } else if (strncasecmp(s, "Total IO", 8) == 0) {
            in_total = 1;
        } else if (strncasecmp(s, "Read IO", 7) == 0 || strncasecmp(s, "Write IO", 8) == 0) {
            in_total = 0;
        } else if (in_total && (v = after_key(s, "total"))) {
            const char *p = parse_num(skip_ws(v), 1, &bytes);

            in_total = 0;
            if (!p || *(p = skip_ws(p)) != '|' || !(p = parse_num(skip_ws(p + 1), 1, &ios)) ||
                *(p = skip_ws(p)) != '|' || !parse_num(skip_ws(p + 1), 0, &mibs))
                continue;
            claim_init(out, "diskspd");
            out->claimed_bytes = llround(bytes);
            out->claimed_bytes_per_s = mibs * MIB;
            out->claimed_seconds = secs;
            found = (long)l.off;
        }
    }
    return found;
}

static long (*const parsers[])(const char *, size_t, struct tool_claim *) = {
    parse_robocopy, parse_dd, parse_rsync, parse_fio, parse_diskspd, parse_smbclient,
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
