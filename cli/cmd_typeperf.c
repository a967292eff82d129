/*
 * cmd_typeperf.c - `perflog typeperf PATH...`: live counter values in exactly the form typeperf
 * writes to its console (design section 6), with typeperf's own options, so scripts written for
 * typeperf port over unchanged:
 *
 *   "(PDH-CSV 4.0)","\\HOST\Memory\Dirty Bytes"
 *   "11/29/2026 18:00:01.000","1234.000000"
 *
 * The paths are resolved once at the start (/api/v1/counters), the header names them; then one
 * row per SI seconds from /api/v1/latest, paced on the daemon's ticks: a row is printed for a tick
 * newer than the last one printed and at least SI seconds after it, so no tick is printed twice.
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

static const char help[] =
    "usage: perflog typeperf PATH... [-si [[hh:]mm:]ss] [-sc COUNT] [-f CSV|TSV] [-o FILE]\n"
    "                        [-cf FILE] [-y]\n"
    "       perflog typeperf -q [OBJECT] | -qx [OBJECT]\n"
    "\n"
    "Print live counter values exactly as Windows typeperf writes them to its console: the\n"
    "\"(PDH-CSV 4.0)\" header with one \\\\HOST\\path column per counter, then one row per\n"
    "interval in local time, until COUNT rows or Ctrl-C. PATH may use * like typeperf:\n"
    "'\\Processor(*)\\% Processor Time', '\\Memory\\*' (quote it for the shell). Options are\n"
    "typeperf's, in any case (-si or -SI).\n"
    "\n"
    "  -si T       seconds between rows, [[hh:]mm:]ss (default 1)\n"
    "  -sc COUNT   print COUNT rows, then exit (default: until interrupted)\n"
    "  -f CSV|TSV  commas (default) or tabs\n"
    "  -o FILE     write the rows to FILE instead of the console\n"
    "  -cf FILE    also the counter paths listed in FILE, one a line ('#' starts a comment)\n"
    "  -q [OBJECT] list the counters (of OBJECT), without instances, and exit\n"
    "  -qx [OBJECT] list the counters (of OBJECT) with their instances, and exit\n"
    "  -y          accepted for typeperf's scripts; perflog never asks\n";

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

/* -q / -qx: the counter paths, typeperf -q style. */
static int query(const struct cli *c, const struct tp_args *a)
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
            printf("%s\n", term_escape(path, shown, sizeof(shown)));
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

static void no_valid_counters(const char *path, const char *why)
{
    fprintf(stderr, "perflog typeperf: %s: %s\nError: No valid counters.\n", path, why);
}

/* The concrete paths of one pattern, added to *cols. 0, or CLI_EXIT_FAIL after a message. */
static int resolve_one(const struct cli *c, const char *pat, struct tp_list *cols)
{
    struct http_response r;
    const json_t *list, *v;
    json_t *root, *e;
    char *target = strdup("/api/v1/counters");
    size_t i;
    int ret;

    if (!target || cli_query_add(&target, "match", pat) < 0) {
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
        no_valid_counters(pat, cli_json_str(e, "message") ? cli_json_str(e, "message")
                                                          : "not a counter path");
        ret = CLI_EXIT_FAIL;
    } else if (r.status < 200 || r.status > 299) {
        cli_print_http_error(c, &r);
        ret = CLI_EXIT_FAIL;
    } else {
        list = json_object_get(root, "counters");
        json_array_foreach(list, i, v)
        {
            const char *path = cli_json_str(v, "path");
            if (path && tp_list_add(cols, path, strlen(path)) < 0) {
                fprintf(stderr, "perflog: out of memory\n");
                ret = CLI_EXIT_FAIL;
                break;
            }
        }
        if (ret == 0 && json_array_size(list) == 0) {
            no_valid_counters(pat, "no such counter (perflog typeperf -q lists them)");
            ret = CLI_EXIT_FAIL;
        }
    }
    json_decref(root);
    httpc_response_free(&r);
    return ret;
}

struct live_state {
    const struct cli *c;
    const struct tp_list *cols;
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
    for (i = 0; i < st->cols->n; i++)
        st->vals[i] = NAN;
    json_array_foreach(list, i, v)
    {
        const char *path = cli_json_str(v, "path");
        long col = path ? find_col(st->cols, path, hint) : -1;
        if (col >= 0) {
            st->vals[col] = cli_json_num(v, "value");
            hint = (size_t)col + 1;
        }
    }
    json_decref(root);
    return 0;
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
    enum csv_format f = a->tsv ? CSV_TAB : CSV_COMMA;
    int64_t last = 0, t = 0, gap = a->si_ms - st->interval_ms / 2;
    struct sbuf b = {0};
    long printed = 0;
    int ret = 0;

    while (!stop_signal && (a->sc == 0 || printed < a->sc)) {
        int r = fetch_latest(st, &t);
        int64_t wait;

        if (r == CLI_EXIT_FAIL) {
            ret = r;
            break;
        }
        if (r == 0 && (printed == 0 || (t > last && t - last >= gap))) {
            csv_time_cell(&b, t, 0);
            for (size_t i = 0; i < st->cols->n; i++)
                csv_value_cell(&b, f, st->vals[i]);
            csv_end_line(&b);
            if ((ret = emit(out, name, &b)) != 0)
                break;
            last = t;
            printed++;
            continue;
        }
        /* the next tick due is about SI after the last row: sleep until then, then poll */
        wait = printed ? last + a->si_ms - cli_now_ms() : 0;
        if (wait > a->si_ms)
            wait = a->si_ms;
        sleep_ms(wait > POLL_MS ? wait : POLL_MS);
    }
    sbuf_free(&b);
    return ret;
}

static int live(const struct cli *c, const struct tp_args *a, const struct tp_list *pats)
{
    struct tp_list cols = {0};
    struct live_state st = {.c = c, .cols = &cols};
    struct sbuf b = {0};
    const char *name = a->out ? a->out : "the console";
    FILE *out = stdout;
    int ret = health(&st);

    for (size_t i = 0; ret == 0 && i < pats->n; i++)
        ret = resolve_one(c, pats->v[i], &cols);
    if (ret == 0) {
        st.target = latest_target(pats);
        st.vals = calloc(cols.n + 1, sizeof(*st.vals));
        if (!st.target || !st.vals) {
            fprintf(stderr, "perflog: out of memory\n");
            ret = CLI_EXIT_FAIL;
        }
    }
    if (ret == 0 && a->out && !(out = fopen(a->out, "wb"))) {
        fprintf(stderr, "perflog typeperf: cannot write %s: %s\n", a->out, strerror(errno));
        ret = CLI_EXIT_FAIL;
    }
    if (ret == 0) {
        install_signals();
        /* typeperf's console header: the first cell without the zone */
        csv_first_cell(&b, a->tsv ? CSV_TAB : CSV_COMMA, NULL);
        for (size_t i = 0; i < cols.n; i++)
            csv_path_cell(&b, a->tsv ? CSV_TAB : CSV_COMMA, st.host, cols.v[i]);
        csv_end_line(&b);
        ret = emit(out, name, &b);
        if (ret == 0)
            ret = rows(&st, a, out, name);
    }
    if (out != stdout && out && fclose(out) != 0 && ret == 0) {
        fprintf(stderr, "perflog typeperf: cannot write %s: %s\n", a->out, strerror(errno));
        ret = CLI_EXIT_FAIL;
    }
    sbuf_free(&b);
    free(st.target);
    free(st.vals);
    tp_list_free(&cols);
    return ret;
}

int cmd_typeperf(const struct cli *c, int argc, char **argv)
{
    struct tp_args a;
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
    for (size_t i = 0; i < a.ncf && ret == 0; i++) {
        int rc = tp_read_counter_file(a.cf[i], &a.paths);
        if (rc < 0) {
            fprintf(stderr, "perflog typeperf: -cf %s: %s\n", a.cf[i], strerror(-rc));
            ret = CLI_EXIT_FAIL;
        }
    }
    if (ret == 0 && a.query != TP_QUERY_NONE)
        ret = query(c, &a);
    else if (ret == 0 && a.paths.n == 0) {
        fprintf(stderr, "perflog typeperf: give at least one counter path, e.g. "
                        "'\\Processor(_Total)\\%% Processor Time' (or -cf FILE)\n");
        ret = CLI_EXIT_USAGE;
    } else if (ret == 0) {
        ret = live(c, &a, &a.paths);
    }
    tp_list_free(&a.paths);
    return ret;
}
