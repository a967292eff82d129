/*
 * run_util.c - the pure pieces of `perflog run` (run.h): shell quoting of the command line, the
 * ring buffer keeping the tail of the tool's output, /proc/PID/io parsing and the live line.
 */
#include "base/utf8.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "collectors/model/pid_io.h"
#include "daemon/runs/peer_url.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int safe_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("%+,-./:=@_", ch));
}

static int word_is_safe(const char *w)
{
    if (!*w)
        return 0;
    for (; *w; w++)
        if (!safe_char((unsigned char)*w))
            return 0;
    return 1;
}

/* Copy s to p; returns the end of the copy (stpcpy, which not every C library has). */
static char *copy_end(char *p, const char *s)
{
    size_t n = strlen(s);

    memcpy(p, s, n + 1);
    return p + n;
}

char *run_shell_quote(int argc, char *const *argv)
{
    size_t need = 1;
    char *out, *p;

    for (int i = 0; i < argc; i++)
        need += strlen(argv[i]) * 4 + 3; /* every ' may become '\'' */
    out = malloc(need);
    if (!out)
        return NULL;
    p = out;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];

        if (i)
            *p++ = ' ';
        if (word_is_safe(w)) {
            p = copy_end(p, w);
            continue;
        }
        *p++ = '\'';
        for (; *w; w++) {
            if (*w == '\'')
                p = copy_end(p, "'\\''");
            else
                *p++ = *w;
        }
        *p++ = '\'';
    }
    *p = '\0';
    return out;
}

/* A word CommandLineToArgvW would split or change unless quoted. */
static int win_needs_quotes(const char *w)
{
    return !*w || strpbrk(w, " \t\n\v\"") != NULL;
}

/* Append w quoted at p: backslashes count only before a '"', so a run of them is written as
 * is, doubled before a '"' (which then gets its own backslash) and before the closing quote. */
static char *win_quote_word(char *p, const char *w)
{
    *p++ = '"';
    for (;;) {
        size_t nbs = 0;

        while (w[nbs] == '\\')
            nbs++;
        if (!w[nbs] || w[nbs] == '"') {
            memset(p, '\\', nbs * 2);
            p += nbs * 2;
            if (!w[nbs])
                break;
            *p++ = '\\';
            *p++ = '"';
        } else {
            memset(p, '\\', nbs);
            p += nbs;
            *p++ = w[nbs];
        }
        w += nbs + 1;
    }
    *p++ = '"';
    return p;
}

int run_win_quote(int argc, char *const *argv, char **out)
{
    size_t need = 1;
    char *line, *p;

    if (argc < 1 || strchr(argv[0], '"'))
        return -EINVAL;
    for (int i = 0; i < argc; i++)
        need += strlen(argv[i]) * 2 + 3; /* every byte may get a backslash; quotes, space */
    line = malloc(need);
    if (!line)
        return -ENOMEM;
    p = line;
    /* The program: CommandLineToArgvW takes it up to the next '"' when it starts with one, else
     * up to a space or tab, with no backslash rules. */
    if (!*argv[0] || strpbrk(argv[0], " \t")) {
        *p++ = '"';
        p = copy_end(p, argv[0]);
        *p++ = '"';
    } else {
        p = copy_end(p, argv[0]);
    }
    for (int i = 1; i < argc; i++) {
        *p++ = ' ';
        p = win_needs_quotes(argv[i]) ? win_quote_word(p, argv[i]) : copy_end(p, argv[i]);
    }
    *p = '\0';
    *out = line;
    return 0;
}

int run_tail_init(struct run_tail *t, size_t cap)
{
    t->buf = malloc(cap ? cap : 1);
    if (!t->buf)
        return -ENOMEM;
    t->cap = cap;
    t->len = t->start = 0;
    t->total = 0;
    return 0;
}

void run_tail_add(struct run_tail *t, const char *data, size_t len)
{
    if (!t->buf || t->cap == 0)
        return;
    t->total += len;
    if (len >= t->cap) {
        memcpy(t->buf, data + len - t->cap, t->cap);
        t->start = 0;
        t->len = t->cap;
        return;
    }
    while (len > 0) {
        size_t end = (t->start + t->len) % t->cap;
        size_t room = t->cap - end, n = len < room ? len : room;

        memcpy(t->buf + end, data, n);
        data += n;
        len -= n;
        if (t->len + n > t->cap) { /* overwrote the oldest bytes */
            size_t over = t->len + n - t->cap;

            t->start = (t->start + over) % t->cap;
            t->len = t->cap;
        } else {
            t->len += n;
        }
    }
}

char *run_tail_text(const struct run_tail *t, size_t *len)
{
    char *raw = malloc(t->len + 1);
    size_t i = 0, o = 0;

    if (!raw)
        return NULL;
    for (size_t k = 0; k < t->len; k++)
        raw[k] = t->buf[(t->start + k) % t->cap];
    /* The ring may have cut a character: drop its continuation bytes at the start. */
    if (t->total > t->len)
        while (i < t->len && i < 3 && ((unsigned char)raw[i] & 0xC0) == 0x80)
            i++;
    while (i < t->len) {
        unsigned char ch = (unsigned char)raw[i];
        /* Control characters other than tab and line ends would each become a 6-byte \u00XX
         * escape in the JSON body; they carry nothing a parser of tool output needs. */
        size_t n = ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r'
                       ? 0
                       : utf8_seq_len((const unsigned char *)raw + i, t->len - i);

        if (n == 0) {
            raw[o++] = '?';
            i++;
            continue;
        }
        memmove(raw + o, raw + i, n);
        o += n;
        i += n;
    }
    raw[o] = '\0';
    if (len)
        *len = o;
    return raw;
}

void run_tail_free(struct run_tail *t)
{
    if (!t)
        return;
    free(t->buf);
    memset(t, 0, sizeof(*t));
}

int run_parse_io(const char *buf, size_t len, struct run_io *out)
{
    const unsigned want = 1u << PID_IO_RCHAR | 1u << PID_IO_WCHAR | 1u << PID_IO_READ_BYTES |
                          1u << PID_IO_WRITE_BYTES;
    struct pid_io io;

    pid_io_parse(buf, len, &io);
    if (io.bad_lines || (io.present & want) != want)
        return -EINVAL;
    out->rchar = io.v[PID_IO_RCHAR];
    out->wchar = io.v[PID_IO_WCHAR];
    out->read_bytes = io.v[PID_IO_READ_BYTES];
    out->write_bytes = io.v[PID_IO_WRITE_BYTES];
    return 0;
}

#define DISK_R  "\\PhysicalDisk(_Total)\\Disk Read Bytes/sec"
#define DISK_W  "\\PhysicalDisk(_Total)\\Disk Write Bytes/sec"
#define NET_RX  "\\Network Interface(_Total)\\Bytes Received/sec"
#define NET_TX  "\\Network Interface(_Total)\\Bytes Sent/sec"
#define DIRTY   "\\Memory\\Dirty Bytes"
#define WB      "\\Memory\\Writeback Bytes"
#define CPU_PFX "\\Processor("
#define CPU_SFX ")\\% Processor Time"

const char run_live_target[] =
    "/api/v1/latest?counter=%5CPhysicalDisk%28_Total%29%5CDisk%20Read%20Bytes%2Fsec"
    "&counter=%5CPhysicalDisk%28_Total%29%5CDisk%20Write%20Bytes%2Fsec"
    "&counter=%5CNetwork%20Interface%28_Total%29%5CBytes%20Received%2Fsec"
    "&counter=%5CNetwork%20Interface%28_Total%29%5CBytes%20Sent%2Fsec"
    "&counter=%5CMemory%5CDirty%20Bytes&counter=%5CMemory%5CWriteback%20Bytes"
    "&counter=%5CProcessor%28%2A%29%5C%25%20Processor%20Time";

/* The value of path in a /latest answer, or NAN. */
static double latest_value(const json_t *latest, const char *path)
{
    size_t i;
    const json_t *v;

    json_array_foreach(json_object_get(latest, "values"), i, v)
    {
        const char *p = cli_json_str(v, "path");

        if (p && strcmp(p, path) == 0)
            return cli_json_num(v, "value");
    }
    return NAN;
}

double run_latest_dirty(const json_t *latest)
{
    double d = latest_value(latest, DIRTY), w = latest_value(latest, WB);

    if (isnan(d))
        return w;
    return isnan(w) ? d : d + w;
}

/* The busiest core of a /latest answer: its instance in inst, its value returned (NAN: none). */
static double busiest_core(const json_t *latest, char *inst, size_t cap)
{
    size_t i, plen = strlen(CPU_PFX), slen = strlen(CPU_SFX);
    const json_t *v;
    double best = NAN;

    json_array_foreach(json_object_get(latest, "values"), i, v)
    {
        const char *p = cli_json_str(v, "path");
        double x = cli_json_num(v, "value");
        size_t n = p ? strlen(p) : 0;

        if (!p || n <= plen + slen || strncmp(p, CPU_PFX, plen) != 0 ||
            strcmp(p + n - slen, CPU_SFX) != 0 || strncmp(p + plen, "_Total)", 7) == 0 ||
            isnan(x) || !(isnan(best) || x > best))
            continue;
        best = x;
        snprintf(inst, cap, "%.*s", (int)(n - plen - slen), p + plen);
    }
    return best;
}

static char *rate(double v, char *buf, size_t cap)
{
    return cli_format_rate(v, buf, cap);
}

static char *pct(double v, char *buf, size_t cap)
{
    return cli_format_pct(v, buf, cap);
}

char *run_live_line(const json_t *latest, long long id, double elapsed_s, char *buf, size_t cap)
{
    char dr[32], dw[32], rx[32], tx[32], dirty[32], cpu[16], core[64] = "", bpct[16], busy[96];
    long long t = (long long)(elapsed_s > 0 ? elapsed_s : 0);
    char when[32];
    double b = busiest_core(latest, core, sizeof(core));

    if (t >= 3600)
        snprintf(when, sizeof(when), "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(when, sizeof(when), "%02lld:%02lld", t / 60, t % 60);
    busy[0] = '\0';
    if (!isnan(b))
        snprintf(busy, sizeof(busy), " (busiest %s: %s)", core, pct(b, bpct, sizeof(bpct)));
    snprintf(buf, cap, "perflog run %lld: %s  disk r %s w %s  net rx %s tx %s  dirty %s  cpu %s%s",
             id, when, rate(latest_value(latest, DISK_R), dr, sizeof(dr)),
             rate(latest_value(latest, DISK_W), dw, sizeof(dw)),
             rate(latest_value(latest, NET_RX), rx, sizeof(rx)),
             rate(latest_value(latest, NET_TX), tx, sizeof(tx)),
             cli_format_bytes(run_latest_dirty(latest), dirty, sizeof(dirty)),
             pct(latest_value(latest, CPU_PFX "_Total" CPU_SFX), cpu, sizeof(cpu)), busy);
    return buf;
}

char *run_peer_url(const char *server, long long id)
{
    size_t n = strlen(server), cap;
    char *out;

    while (n > 0 && server[n - 1] == '/')
        n--;
    cap = n + sizeof(PEER_URL_RUNS_PATH) + 24;
    out = malloc(cap);
    if (out)
        snprintf(out, cap, "%.*s" PEER_URL_RUNS_PATH "%lld", (int)n, server, id);
    return out;
}

int run_peer_split(const char *url, char *server, size_t cap, long long *id)
{
    char buf[PEER_URL_MAX + 1];
    const char *why;
    long long v;

    if (peer_url_parse(url, buf, sizeof(buf), &v, &why) < 0 || v == 0 || strlen(buf) >= cap)
        return -1;
    memcpy(server, buf, strlen(buf) + 1);
    *id = v;
    return 0;
}

/* s[0..n) and t name the same server: equal but for trailing '/'. */
static int same_server(const char *s, size_t n, const char *t)
{
    size_t m = strlen(t);

    while (n > 0 && s[n - 1] == '/')
        n--;
    while (m > 0 && t[m - 1] == '/')
        m--;
    return n == m && memcmp(s, t, n) == 0;
}

int run_peer_token_find(const char *list, const char *server, char *out, size_t cap)
{
    const char *p = list;

    while (p && *p) {
        size_t n = strcspn(p, ","), u = strcspn(p, "=");

        if (u < n && same_server(p, u, server) && n - u - 1 < cap && n - u > 1) {
            memcpy(out, p + u + 1, n - u - 1);
            out[n - u - 1] = '\0';
            return 0;
        }
        p += n + (p[n] == ',');
    }
    return -1;
}

const char *run_peer_token(const struct run_peer_tokens *t, const char *server, char *buf,
                           size_t cap)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (t->token[i] && same_server(t->url[i], strlen(t->url[i]), server))
            return t->token[i];
    if (run_peer_token_find(getenv("PERFLOG_PEER_TOKENS"), server, buf, cap) == 0)
        return buf;
    return NULL;
}

int run_peer_option(struct run_peer_tokens *t, int is_token, const char *arg, const char *cmd)
{
    if (!is_token && t->n == RUN_MAX_PEERS) {
        fprintf(stderr, "%s: at most %d --peer\n", cmd, RUN_MAX_PEERS);
        return -1;
    }
    if (!is_token) {
        t->url[t->n] = arg;
        t->token[t->n++] = NULL;
        return 0;
    }
    if (t->n == 0 || t->token[t->n - 1]) {
        fprintf(stderr, "%s: --peer-token TOKEN follows the --peer URL it is for\n", cmd);
        return -1;
    }
    t->token[t->n - 1] = arg;
    return 0;
}
