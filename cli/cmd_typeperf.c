/*
 * cmd_typeperf.c - `perflog typeperf PATH...`: live counter values in exactly the form typeperf
 * writes to its console (docs/design.md §6), with typeperf's own options, so scripts written for
 * typeperf port over unchanged:
 *
 *   "(PDH-CSV 4.0)","\\HOST\Memory\Dirty Bytes"
 *   "11/29/2026 18:00:01.000","1234.000000"
 *
 * The paths are resolved once at the start (/api/v1/counters), the header names them; a path that
 * matches nothing is reported as typeperf reports it and the others still run (exit 1 at the end).
 * Then one row per SI seconds, paced on the daemon's ticks from /api/v1/latest: the first row is
 * the first tick newer than the one current at the start, and each row a tick at least SI after
 * the row before, so no tick is printed twice. A rate or a percentage in a row spans the whole SI
 * (its ticks from /api/v1/data, the summed deltas over the summed elapsed time, as PDH computes it
 * from two raw samples SI apart); a level (bytes, counts) is the newest value, as in typeperf.
 * SIGINT/SIGTERM finish the current line and exit 0, like Ctrl-C in typeperf.
 */
#include "cli.h"
#include "cli_os.h"
#include "csv.h"
#include "term_escape.h"
#include "typeperf.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS          100
#define MAX_URL_PATTERNS 32 /* counter= parameters the server takes in one request */
#define BAD_PATH         "The following counter path is not valid: "

static const char help[] =
    "usage: perflog typeperf PATH... [-si [[hh:]mm:]ss] [-sc COUNT] [-f CSV|TSV] [-o FILE]\n"
    "                        [-cf FILE] [-s HOST] [-y] [-config FILE]\n"
    "       perflog typeperf -q [OBJECT] | -qx [OBJECT] [-o FILE]\n"
    "\n"
    "Print live counter values exactly as Windows typeperf writes them to its console: the\n"
    "\"(PDH-CSV 4.0)\" header with one \\\\HOST\\path column per counter, then one row per\n"
    "interval in local time, until COUNT rows or Ctrl-C. PATH may use * like typeperf:\n"
    "'\\Processor(*)\\% Processor Time', '\\Memory\\*' (quote it for the shell). Options are\n"
    "typeperf's, in any case (-si or -SI).\n"
    "\n"
    "  -si T       seconds between rows, [[hh:]mm:]ss (default 1); rates and percentages are\n"
    "              the averages over the T seconds, levels the newest value\n"
    "  -sc COUNT   print COUNT rows, then exit (default: until interrupted)\n"
    "  -f CSV|TSV  commas (default) or tabs\n"
    "  -o FILE     write the rows (or the -q list) to FILE instead of the console\n"
    "  -cf FILE    also the counter paths listed in FILE, one a line ('#' starts a comment)\n"
    "  -q [OBJECT] list the counters (of OBJECT), without instances, and exit\n"
    "  -qx [OBJECT] list the counters (of OBJECT) with their instances, and exit\n"
    "  -s HOST     the daemon's own host (any of its names); another host's counters come\n"
    "              from its own perflogd: perflog --server http://HOST:9931 typeperf ...\n"
    "  -y          accepted for typeperf's scripts; perflog never asks\n"
    "  -config FILE  typeperf's settings file: \"[key]\" or \"key=value\" lines naming the\n"
    "              options above without their dash (c for the counter paths), a value a line\n"
    "              after \"[key]\"; ';' or '#' starts a comment. The command line's options win;\n"
    "              the file's counters are added to the command line's\n"
    "\n"
    "A path that matches nothing is named (\"The following counter path is not valid\"), the\n"
    "others still run, and the exit status is 1. A finished run ends with typeperf's line\n"
    "\"The command completed successfully.\"\n";

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};

    if (ms > 0)
        nanosleep(&ts, NULL); /* a signal ends it early, which is what we want */
}

/* GET target and parse its JSON; CLI_EXIT_FAIL after a message, or 0 with *out. */
static int get_json(const struct cli *c, const char *target, json_t **out)
{
    struct http_response r;
    int ret = cli_get(c, target, &r);

    if (ret)
        return ret;
    *out = json_loadb(r.body, r.body_len, 0, NULL);
    httpc_response_free(&r);
    if (!*out) {
        fprintf(stderr, "perflog: %s answered %s with something that is not JSON\n", c->server,
                target);
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* -q / -qx: the counter paths, typeperf -q style, to `out`. */
static int query(const struct cli *c, const struct tp_args *a, FILE *out)
{
    struct tp_list seen = {0};
    const json_t *list, *v;
    json_t *root;
    char path[1024], shown[1024];
    size_t i;
    int ret = get_json(c, "/api/v1/counters", &root);

    if (ret)
        return ret;
    list = json_object_get(root, "counters");
    json_array_foreach(list, i, v)
    {
        const char *obj = cli_json_str(v, "object"), *inst = cli_json_str(v, "instance"),
                   *ctr = cli_json_str(v, "counter");
        int n;

        if (!obj || !ctr || !tp_object_matches(a->query_object, obj))
            continue;
        n = tp_query_path(path, sizeof(path), obj, inst, ctr, a->query == TP_QUERY_INSTANCES);
        if (n < 0 || (size_t)n >= sizeof(path))
            continue;
        n = tp_list_add(&seen, path, (size_t)n);
        if (n < 0) {
            fprintf(stderr, "perflog: out of memory\n");
            ret = CLI_EXIT_FAIL;
            break;
        }
        if (n == 1)
            fprintf(out, "%s\r\n", term_escape(path, shown, sizeof(shown))); /* CRLF, as typeperf */
    }
    if (ret == 0 && seen.n == 0 && a->query_object) {
        fprintf(stderr, "perflog typeperf: no object '%s' (perflog typeperf -q lists them all)\n",
                a->query_object);
        ret = CLI_EXIT_FAIL;
    }
    tp_list_free(&seen);
    json_decref(root);
    return ret;
}

/* The columns: concrete paths, and whether each is averaged over -si (a rate or a percentage). */
struct columns {
    struct tp_list paths;
    unsigned char *avg; /* paths.n flags */
    size_t cap;
};

static int columns_add(struct columns *cols, const char *path, const char *kind)
{
    int rc = tp_list_add(&cols->paths, path, strlen(path));

    if (rc <= 0)
        return rc;
    if (cols->paths.n > cols->cap) {
        size_t cap = cols->cap ? cols->cap * 2 : 16;
        unsigned char *avg = realloc(cols->avg, cap);
        if (!avg)
            return -ENOMEM;
        cols->avg = avg;
        cols->cap = cap;
    }
    cols->avg[cols->paths.n - 1] = kind && (!strcmp(kind, "rate") || !strcmp(kind, "percent"));
    return 1;
}

static void columns_free(struct columns *cols)
{
    tp_list_free(&cols->paths);
    free(cols->avg);
    memset(cols, 0, sizeof(*cols));
}

static void bad_path(const char *path, const char *why)
{
    fprintf(stderr, BAD_PATH "%s\nperflog typeperf: %s\n", path, why);
}

/*
 * The concrete paths of one pattern, added to *cols. 0, 1 when it names nothing here (reported),
 * or CLI_EXIT_FAIL after a message (the server failed).
 */
static int resolve_one(const struct cli *c, const char *daemon_host, const char *pat,
                       struct columns *cols)
{
    struct http_response r;
    const json_t *list, *v;
    json_t *root, *e;
    char *target = strdup("/api/v1/counters"), why[512];
    const char *host, *rest = tp_split_host(pat, &host, &(size_t){0});
    size_t hostlen = host ? (size_t)(rest - host) : 0, i;
    int ret;

    if (host && !tp_is_local_host(host, hostlen, daemon_host)) {
        free(target);
        snprintf(why, sizeof(why),
                 "%.*s is not the host of %s (%s); another host's counters come from its own "
                 "perflogd: perflog --server http://%.*s:9931 typeperf ...",
                 (int)hostlen, host, c->server, daemon_host, (int)hostlen, host);
        bad_path(pat, why);
        return 1;
    }
    if (!target || cli_query_add(&target, "match", rest) < 0) {
        free(target);
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    ret = cli_get_any(c, target, &r);
    free(target);
    if (ret)
        return ret;
    root = json_loadb(r.body, r.body_len, 0, NULL);
    if (r.status == 400) { /* a malformed path: the server says what is wrong with it */
        e = json_object_get(root, "error");
        bad_path(pat,
                 cli_json_str(e, "message") ? cli_json_str(e, "message") : "not a counter path");
        ret = 1;
    } else if (r.status < 200 || r.status > 299) {
        cli_print_http_error(c, &r);
        ret = CLI_EXIT_FAIL;
    } else {
        list = json_object_get(root, "counters");
        json_array_foreach(list, i, v)
        {
            const char *path = cli_json_str(v, "path");
            if (path && columns_add(cols, path, cli_json_str(v, "kind")) < 0) {
                fprintf(stderr, "perflog: out of memory\n");
                ret = CLI_EXIT_FAIL;
                break;
            }
        }
        if (ret == 0 && json_array_size(list) == 0) {
            bad_path(pat, "no counter matches it (perflog typeperf -q lists them)");
            ret = 1;
        }
    }
    json_decref(root);
    httpc_response_free(&r);
    return ret;
}

struct live_state {
    const struct cli *c;
    const struct columns *cols;
    char *target;        /* /api/v1/latest?counter=... */
    double *vals;        /* one per column */
    int64_t interval_ms; /* the daemon's sampling interval */
    char host[256];
};

/* The host name and interval from /api/v1/health. */
static int health(struct live_state *st)
{
    json_t *root;
    const char *host;
    double iv;
    int ret = get_json(st->c, "/api/v1/health", &root);

    if (ret)
        return ret;
    host = cli_json_str(root, "host");
    iv = cli_json_num(root, "interval_ms");
    snprintf(st->host, sizeof(st->host), "%s", host ? host : "");
    st->interval_ms = iv >= 1 ? (int64_t)iv : 1000;
    json_decref(root);
    return 0;
}

static char *latest_target(const struct tp_list *pats)
{
    char *t = strdup("/api/v1/latest");

    /* past the server's limit on patterns, ask for every counter and pick the columns */
    for (size_t i = 0; t && pats->n <= MAX_URL_PATTERNS && i < pats->n; i++) {
        if (cli_query_add(&t, "counter", pats->v[i]) < 0) {
            free(t);
            t = NULL;
        }
    }
    return t;
}

/* Column of `path`, trying `hint` first (the answer lists them in the header's order). */
static long find_col(const struct tp_list *cols, const char *path, size_t hint)
{
    if (hint < cols->n && !strcmp(cols->v[hint], path))
        return (long)hint;
    for (size_t i = 0; i < cols->n; i++)
        if (!strcmp(cols->v[i], path))
            return (long)i;
    return -1;
}

/*
 * The newest tick: 0 with *t_ms and st->vals filled, 1 when the daemon has no sample yet, or
 * CLI_EXIT_FAIL after a message.
 */
static int fetch_latest(struct live_state *st, int64_t *t_ms)
{
    struct http_response r;
    const json_t *list, *v;
    json_t *root;
    size_t i, hint = 0;
    int ret = cli_get_any(st->c, st->target, &r);

    if (ret)
        return ret;
    if (r.status == 503) { /* "no_sample": just started */
        httpc_response_free(&r);
        return 1;
    }
    if (r.status < 200 || r.status > 299) {
        cli_print_http_error(st->c, &r);
        httpc_response_free(&r);
        return CLI_EXIT_FAIL;
    }
    root = json_loadb(r.body, r.body_len, 0, NULL);
    httpc_response_free(&r);
    list = json_object_get(root, "values");
    if (!json_is_integer(json_object_get(root, "t_ms")) || !json_is_array(list)) {
        fprintf(stderr, "perflog: %s: /api/v1/latest has no \"t_ms\" and \"values\"\n",
                st->c->server);
        json_decref(root);
        return CLI_EXIT_FAIL;
    }
    *t_ms = json_integer_value(json_object_get(root, "t_ms"));
    for (i = 0; i < st->cols->paths.n; i++)
        st->vals[i] = NAN;
    json_array_foreach(list, i, v)
    {
        const char *path = cli_json_str(v, "path");
        long col = path ? find_col(&st->cols->paths, path, hint) : -1;
        if (col >= 0) {
            st->vals[col] = cli_json_num(v, "value");
            hint = (size_t)col + 1;
        }
    }
    json_decref(root);
    return 0;
}

/* The rates of one /api/v1/data answer over (since_ms, ...] into st->vals. */
static void window_rates(struct live_state *st, const json_t *root, int64_t since_ms)
{
    const json_t *tsa = json_object_get(root, "timestamps"),
                 *series = json_object_get(root, "series"), *s;
    size_t n = json_array_size(tsa), i, hint = 0;
    int64_t *ts = calloc(n + 1, sizeof(*ts));
    double *v = calloc(n + 1, sizeof(*v));

    if (!ts || !v || n == 0)
        goto out;
    for (i = 0; i < n; i++)
        ts[i] = (int64_t)json_number_value(json_array_get(tsa, i));
    json_array_foreach(series, i, s)
    {
        const char *path = cli_json_str(s, "path");
        const json_t *vals = json_object_get(s, "values");
        long col = path ? find_col(&st->cols->paths, path, hint) : -1;

        if (col < 0 || json_array_size(vals) != n)
            continue;
        hint = (size_t)col + 1;
        for (size_t k = 0; k < n; k++) {
            const json_t *x = json_array_get(vals, k);
            v[k] = json_is_number(x) ? json_number_value(x) : NAN;
        }
        st->vals[col] = tp_window_rate(ts, v, n, since_ms);
    }
out:
    free(ts);
    free(v);
}

/*
 * A row spanning more than one tick: its rates and percentages over the ticks of (since_ms, t_ms]
 * from /api/v1/data, a request per MAX_URL_PATTERNS columns. 0 or CLI_EXIT_FAIL after a message.
 */
static int window_fill(struct live_state *st, int64_t since_ms, int64_t t_ms)
{
    const struct columns *cols = st->cols;
    char from[32], to[32];
    size_t i = 0;
    int ret = 0;

    snprintf(from, sizeof(from), "%.3f", (double)(since_ms + 1) / 1000.0);
    snprintf(to, sizeof(to), "%.3f", (double)t_ms / 1000.0);
    while (ret == 0 && i < cols->paths.n) {
        char *target = strdup("/api/v1/data");
        size_t added = 0;
        json_t *root;

        for (; target && i < cols->paths.n && added < MAX_URL_PATTERNS; i++) {
            if (!cols->avg[i])
                continue;
            if (cli_query_add(&target, "counter", cols->paths.v[i]) < 0) {
                free(target);
                target = NULL;
            }
            added++;
        }
        if (target &&
            (cli_query_add(&target, "from", from) < 0 || cli_query_add(&target, "to", to) < 0)) {
            free(target);
            target = NULL;
        }
        if (!target) {
            fprintf(stderr, "perflog: out of memory\n");
            return CLI_EXIT_FAIL;
        }
        if (added && (ret = get_json(st->c, target, &root)) == 0) {
            window_rates(st, root, since_ms);
            json_decref(root);
        }
        free(target);
    }
    return ret;
}

/* Write and flush b; 0 or CLI_EXIT_FAIL after a message. */
static int emit(FILE *out, const char *name, struct sbuf *b)
{
    int ok = sbuf_ok(b) && fwrite(b->s, 1, b->len, out) == b->len && fflush(out) == 0;

    b->len = 0;
    if (ok)
        return 0;
    fprintf(stderr, "perflog typeperf: cannot write %s: %s\n", name, strerror(errno));
    return CLI_EXIT_FAIL;
}

static void install_signals(void)
{
    cli_catch_interrupt(on_signal);
}

/* The rows, until -sc or a signal. */
static int rows(struct live_state *st, const struct tp_args *a, FILE *out, const char *name)
{
    int64_t last = 0, t = 0, gap = a->si_ms - st->interval_ms / 2;
    int spans = a->si_ms > st->interval_ms + st->interval_ms / 2; /* a row covers >1 tick */
    struct sbuf b = {0};
    long printed = 0;
    int ret = 0, r;

    /* The tick current now is old: the first row is the first tick after it. */
    r = fetch_latest(st, &t);
    if (r == CLI_EXIT_FAIL) {
        sbuf_free(&b);
        return r;
    }
    if (r == 0)
        last = t;
    while (!stop_signal && (a->sc == 0 || printed < a->sc)) {
        int64_t wait;

        r = fetch_latest(st, &t);
        if (r == CLI_EXIT_FAIL) {
            ret = r;
            break;
        }
        if (r == 0 && t > last && (last == 0 || t - last >= gap)) {
            if (spans && last && (ret = window_fill(st, last, t)) != 0)
                break;
            tp_format_row(&b, a->tsv, t, st->vals, st->cols->paths.n);
            if ((ret = emit(out, name, &b)) != 0)
                break;
            last = t;
            printed++;
            continue;
        }
        /* the next tick due is about SI after the last row: sleep until then, then poll */
        wait = last ? last + a->si_ms - cli_now_ms() : 0;
        if (wait > a->si_ms)
            wait = a->si_ms;
        sleep_ms(wait > POLL_MS ? wait : POLL_MS);
    }
    sbuf_free(&b);
    return ret;
}

/* Is -s HOST the daemon's host? 0, or CLI_EXIT_FAIL after saying what to do instead. */
static int check_server_host(const struct cli *c, const struct tp_args *a, const char *daemon_host)
{
    if (!a->server_host || tp_is_local_host(a->server_host, strlen(a->server_host), daemon_host))
        return 0;
    fprintf(stderr,
            "perflog typeperf: -s %s: %s is the perflogd of host %s; another host's counters "
            "come from its own perflogd: perflog --server http://%s:9931 typeperf ...\n",
            a->server_host, c->server, daemon_host, a->server_host);
    return CLI_EXIT_FAIL;
}

/* Open -o FILE (or the console). NULL after a message. */
static FILE *open_out(const struct tp_args *a)
{
    FILE *out = a->out ? fopen(a->out, "wb") : stdout;

    if (!out)
        fprintf(stderr, "perflog typeperf: cannot write %s: %s\n", a->out, strerror(errno));
    return out;
}

/* Close -o FILE; ret, or CLI_EXIT_FAIL when the file could not be completed. */
static int close_out(const struct tp_args *a, FILE *out, int ret)
{
    if (out && out != stdout && fclose(out) != 0 && ret == 0) {
        fprintf(stderr, "perflog typeperf: cannot write %s: %s\n", a->out, strerror(errno));
        ret = CLI_EXIT_FAIL;
    }
    return ret;
}

static int live(const struct cli *c, const struct tp_args *a, const struct tp_list *pats)
{
    struct columns cols = {0};
    struct live_state st = {.c = c, .cols = &cols};
    struct sbuf b = {0};
    const char *name = a->out ? a->out : "the console";
    FILE *out = NULL;
    int ret = health(&st), invalid = 0;

    if (ret == 0)
        ret = check_server_host(c, a, st.host);
    for (size_t i = 0; ret == 0 && i < pats->n; i++) {
        ret = resolve_one(c, st.host, pats->v[i], &cols);
        if (ret == 1) {
            invalid++;
            ret = 0;
        }
    }
    if (ret == 0 && cols.paths.n == 0) {
        fprintf(stderr, "Error: No valid counters.\n");
        ret = CLI_EXIT_FAIL;
    }
    if (ret == 0) {
        st.target = latest_target(pats);
        st.vals = calloc(cols.paths.n + 1, sizeof(*st.vals));
        if (!st.target || !st.vals) {
            fprintf(stderr, "perflog: out of memory\n");
            ret = CLI_EXIT_FAIL;
        }
    }
    if (ret == 0 && !(out = open_out(a)))
        ret = CLI_EXIT_FAIL;
    if (ret == 0) {
        install_signals();
        tp_format_header(&b, a->tsv, st.host, cols.paths.v, cols.paths.n);
        ret = emit(out, name, &b);
        if (ret == 0)
            ret = rows(&st, a, out, name);
    }
    ret = close_out(a, out, ret);
    if (ret == 0) {
        fputs(TP_COMPLETED, stdout);
        fflush(stdout);
    }
    sbuf_free(&b);
    free(st.target);
    free(st.vals);
    columns_free(&cols);
    return ret == 0 && invalid ? CLI_EXIT_FAIL : ret;
}

/* -q / -qx, to the console or -o FILE. */
static int query_out(const struct cli *c, const struct tp_args *a)
{
    struct live_state st = {.c = c};
    FILE *out = NULL;
    int ret = a->server_host ? health(&st) : 0;

    if (ret == 0 && a->server_host)
        ret = check_server_host(c, a, st.host);
    if (ret)
        return ret;
    out = open_out(a);
    ret = out ? query(c, a, out) : CLI_EXIT_FAIL;

    if (out && fflush(out) != 0 && ret == 0) {
        fprintf(stderr, "perflog typeperf: cannot write %s: %s\n", a->out ? a->out : "the console",
                strerror(errno));
        ret = CLI_EXIT_FAIL;
    }
    ret = close_out(a, out, ret);
    if (ret == 0)
        fputs(TP_COMPLETED, stdout);
    return ret;
}

/* Read, parse and apply -config FILE to *a; *cfg keeps the values a points to. 0 or exit 2. */
static int load_config(struct tp_args *a, struct tp_config *cfg)
{
    char err[512], *text = NULL;
    size_t len = 0;
    int line = 0, rc = tp_read_text_file(a->config, &text, &len);

    if (rc < 0) {
        fprintf(stderr, "perflog typeperf: -config %s: %s\n", a->config, strerror(-rc));
        return CLI_EXIT_USAGE;
    }
    rc = tp_config_parse(text, len, cfg, &line, err, sizeof(err));
    free(text);
    if (rc == 0)
        rc = tp_config_apply(cfg, a, &line, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "perflog typeperf: %s:%d: %s\n", a->config, line, err);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cmd_typeperf(const struct cli *c, int argc, char **argv)
{
    struct tp_args a;
    struct tp_config cfg = {0};
    char err[512];
    int ret = CLI_EXIT_OK;

    if (tp_parse_args(argc, argv, &a, err, sizeof(err)) < 0) {
        fprintf(stderr, "perflog typeperf: %s\n", err);
        cli_print_help(1, help);
        tp_list_free(&a.paths);
        return CLI_EXIT_USAGE;
    }
    if (a.help) {
        cli_print_help(0, help);
        tp_list_free(&a.paths);
        return CLI_EXIT_OK;
    }
    if (a.config)
        ret = load_config(&a, &cfg);
    for (size_t i = 0; i < a.ncf && ret == 0; i++) {
        int rc = tp_read_counter_file(a.cf[i], &a.paths);
        if (rc < 0) {
            fprintf(stderr, "perflog typeperf: -cf %s: %s\n", a.cf[i], strerror(-rc));
            ret = CLI_EXIT_FAIL;
        }
    }
    if (ret == 0 && a.query != TP_QUERY_NONE)
        ret = query_out(c, &a);
    else if (ret == 0 && a.paths.n == 0) {
        fprintf(stderr, "perflog typeperf: give at least one counter path, e.g. "
                        "'\\Processor(_Total)\\%% Processor Time' (or -cf FILE)\n");
        ret = CLI_EXIT_USAGE;
    } else if (ret == 0) {
        ret = live(c, &a, &a.paths);
    }
    tp_list_free(&a.paths);
    tp_config_free(&cfg);
    return ret;
}
