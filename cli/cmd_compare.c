/*
 * cmd_compare.c - `perflog compare RUN RUN...`: runs side by side, one column per run, one row
 * per headline figure of the report, with the ratio to the first run. Runs of one daemon are
 * compared by the daemon (GET /api/v1/runs/compare); runs of several hosts by the same table on
 * their reports here (web/report_compare.h), so the figures are the reports' own either way.
 */
#include "compare.h"
#include "glob_match.h"
#include "peer_url.h"
#include "report_compare.h"
#include "run.h"
#include "term_escape.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVER_MAX (HTTPC_BASE_MAX + HTTPC_HOST_MAX + 16)
/* room for one more than the limit, so that too many is said, not cut */
#define MAX_TARGETS (REPORT_COMPARE_MAX_RUNS + 1)

static const char help[] =
    "usage: perflog compare [--json | --csv] [--peers] [--server URL] RUN... [--label GLOB]...\n"
    "\n"
    "Show runs side by side: a column per run, a row per headline figure of the report\n"
    "(throughputs, duration and tail, cache-served share, each disk's bytes and busy time, bytes\n"
    "per packet, ms and packets per file, the busiest core and its kernel share, TCP\n"
    "retransmits, own and others' I/O). Every column after the first shows its ratio to the first\n"
    "run (xN), none where the first run's value is 0 or unknown. 2 to 20 runs.\n"
    "\n"
    "  RUN           a run id of the current server, or a run's URL, SERVER/api/v1/runs/ID\n"
    "  --label GLOB  the runs of the current server whose label matches GLOB ('*', '?', [...]),\n"
    "                oldest first (runs still running are left out)\n"
    "  --server URL  the server of the RUNs and --labels after it (repeatable, to compare the\n"
    "                runs of several hosts; before the first, the global --server); a server\n"
    "                other than the global one gets the token $PERFLOG_PEER_TOKENS names for it\n"
    "  --peers       add the peers of each run (perflog run --peer) after it\n"
    "  --json        the comparison as JSON: {\"runs\": [report...], \"figures\": [...]}\n"
    "  --csv         the figures as CSV: figure,unit, a value per run, a ratio per later run\n";

/* One run to compare: on which server, which id. */
struct target {
    struct cli c;
    char server[SERVER_MAX];
    char token[256];
    long long id;
};

struct targets {
    struct target t[MAX_TARGETS];
    size_t n;
};

/* Point *t at server (copied), with the global token for the global server and else a peer's. */
static int set_server(const struct cli *global, const char *server, struct target *t)
{
    char err[256];

    t->c = *global;
    snprintf(t->server, sizeof(t->server), "%s", server);
    t->c.server = t->server;
    if (strcmp(server, global->server) != 0)
        t->c.token = run_peer_token(NULL, server, t->token, sizeof(t->token));
    if (httpc_parse_url(t->server, &t->c.url, err, sizeof(err)) < 0) {
        fprintf(stderr, "perflog compare: bad server URL '%s': %s\n", server, err);
        return -1;
    }
    return 0;
}

static int add(struct targets *ts, const struct cli *c, const char *server, long long id)
{
    if (ts->n == MAX_TARGETS) {
        fprintf(stderr, "perflog compare: at most %d runs can be compared\n",
                REPORT_COMPARE_MAX_RUNS);
        return -1;
    }
    for (size_t i = 0; i < ts->n; i++)
        if (ts->t[i].id == id && !strcmp(ts->t[i].server, server)) {
            fprintf(stderr, "perflog compare: run %lld of %s is given twice\n", id, server);
            return -1;
        }
    if (set_server(c, server, &ts->t[ts->n]) < 0)
        return -1;
    ts->t[ts->n++].id = id;
    return 0;
}

/* RUN: an id of `server`, or a run's URL. */
static int add_arg(struct targets *ts, const struct cli *c, const char *server, const char *arg)
{
    char other[SERVER_MAX], *end;
    const char *why = NULL;
    long long id = strtoll(arg, &end, 10);

    if (id > 0 && !*end && *arg >= '1' && *arg <= '9')
        return add(ts, c, server, id);
    if (peer_url_parse(arg, other, sizeof(other), &id, &why) == 0 && id > 0)
        return add(ts, c, other, id);
    fprintf(stderr, "perflog compare: '%s' is neither a run id nor a run's URL (%s)\n", arg,
            why ? why : "SERVER/api/v1/runs/ID");
    return -1;
}

static json_t *get_json(const struct cli *c, const char *target)
{
    struct http_response r;
    json_t *root;

    if (cli_get(c, target, &r))
        return NULL;
    root = json_loadb(r.body, r.body_len, 0, NULL);
    httpc_response_free(&r);
    if (!root)
        fprintf(stderr, "perflog compare: %s sent an answer that is not JSON\n", c->server);
    return root;
}

/* --label GLOB: the runs of `server` with a matching label that are over, oldest first. */
static int add_label(struct targets *ts, const struct cli *c, const char *server, const char *glob)
{
    struct target srv;
    json_t *root, *runs;
    const json_t *r;
    size_t i, found = 0;
    int rc = 0;

    if (set_server(c, server, &srv) < 0 || !(root = get_json(&srv.c, "/api/v1/runs")))
        return -1;
    runs = json_object_get(root, "runs"); /* newest first */
    for (i = json_array_size(runs); i-- > 0 && rc == 0;) {
        const char *label, *st;

        r = json_array_get(runs, i);
        label = cli_json_str(r, "label");
        st = cli_json_str(r, "status");
        if (!label || !glob_match(glob, label) || !st || !strcmp(st, "running") ||
            !strcmp(st, "ending"))
            continue;
        rc = add(ts, c, server, (long long)json_integer_value(json_object_get(r, "id")));
        found++;
    }
    json_decref(root);
    if (rc == 0 && !found)
        fprintf(stderr, "perflog compare: no finished run of %s has a label matching '%s'\n",
                server, glob);
    return rc == 0 && found ? 0 : -1;
}

/* Run `from` into ts, then its peers' runs (perflog run --peer), in the run's order. */
static int add_with_peers(struct targets *ts, const struct cli *c, const struct target *from)
{
    char target[64], server[SERVER_MAX];
    const json_t *name;
    json_t *run;
    size_t k;
    int rc = add(ts, c, from->server, from->id);

    snprintf(target, sizeof(target), "/api/v1/runs/%lld", from->id);
    run = rc == 0 ? get_json(&from->c, target) : NULL;
    if (!run)
        return -1;
    json_array_foreach(json_object_get(run, "peers"), k, name)
    {
        long long id = 0;

        if (rc || !json_is_string(name) ||
            peer_url_parse(json_string_value(name), server, sizeof(server), &id, NULL) < 0 ||
            id <= 0)
            continue;
        rc = add(ts, c, server, id);
    }
    json_decref(run);
    return rc;
}

/* 1 when every target is on the server of the first. */
static int one_server(const struct targets *ts)
{
    for (size_t i = 1; i < ts->n; i++)
        if (strcmp(ts->t[i].server, ts->t[0].server) != 0)
            return 0;
    return 1;
}

int compare_fetch(const struct cli *c, const long long *ids, size_t n, json_t **out)
{
    char *target = NULL, list[REPORT_COMPARE_MAX_RUNS * 24] = "";
    size_t len = 0;
    int rc;

    for (size_t i = 0; i < n && i < REPORT_COMPARE_MAX_RUNS; i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%lld", i ? "," : "", ids[i]);
    target = strdup("/api/v1/runs/compare");
    if (!target || cli_query_add(&target, "ids", list) < 0) {
        free(target);
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    *out = get_json(c, target);
    rc = *out ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    free(target);
    return rc;
}

/* Runs of several hosts: their reports, through the daemons' own tables' twin here. */
static int compare_local(const struct targets *ts, json_t **out)
{
    json_t *reps[REPORT_COMPARE_MAX_RUNS], *run;
    char target[64];
    size_t n = 0;
    int rc = CLI_EXIT_FAIL;

    for (; n < ts->n; n++) {
        snprintf(target, sizeof(target), "/api/v1/runs/%lld", ts->t[n].id);
        run = get_json(&ts->t[n].c, target);
        if (!run)
            goto out;
        reps[n] = json_incref(json_object_get(run, "report"));
        json_decref(run);
        if (!json_is_object(reps[n])) {
            fprintf(stderr, "perflog compare: run %lld on %s has no report yet\n", ts->t[n].id,
                    ts->t[n].server);
            json_decref(reps[n]);
            goto out;
        }
    }
    *out = report_compare(reps, n);
    rc = *out ? CLI_EXIT_OK : CLI_EXIT_FAIL;
out:
    while (n > 0)
        json_decref(reps[--n]);
    return rc;
}

/* Parse argv into ts and the format; -1 to go on, or the exit code. */
static int parse(const struct cli *c, int argc, char **argv, struct targets *ts,
                 enum compare_format *fmt)
{
    static const struct option opts[] = {
        {"label", required_argument, NULL, 'l'},
        {"server", required_argument, NULL, 's'},
        {"peers", no_argument, NULL, 'p'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *server = c->server;
    int o, peers = 0;

    /* "-": the RUNs in order among the options, each bound to the --server before it */
    while ((o = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
        if (o == 1 && add_arg(ts, c, server, optarg) < 0)
            return CLI_EXIT_USAGE;
        else if (o == 'l' && add_label(ts, c, server, optarg) < 0)
            return CLI_EXIT_USAGE;
        else if (o == 's')
            server = optarg;
        else if (o == 'p')
            peers = 1;
        else if (o == 'j' || o == 'c')
            *fmt = o == 'j' ? COMPARE_JSON : COMPARE_CSV;
        else if (o != 1 && o != 'l') {
            cli_print_help(o != 'h', help);
            return o == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    if (peers) {
        struct targets *all = calloc(1, sizeof(*all));
        int bad = !all;

        for (size_t i = 0; !bad && i < ts->n; i++)
            bad = add_with_peers(all, c, &ts->t[i]) < 0;
        /* again through add(), so each target's pointers are to its own buffers */
        ts->n = 0;
        for (size_t i = 0; !bad && i < all->n; i++)
            bad = add(ts, c, all->t[i].server, all->t[i].id) < 0;
        free(all);
        if (bad)
            return CLI_EXIT_USAGE;
    }
    if (ts->n < REPORT_COMPARE_MIN_RUNS) {
        fprintf(stderr, "perflog compare: compare needs two or more runs (perflog runs lists "
                        "them)\n");
        return CLI_EXIT_USAGE;
    }
    if (ts->n > REPORT_COMPARE_MAX_RUNS) {
        fprintf(stderr, "perflog compare: at most %d runs can be compared\n",
                REPORT_COMPARE_MAX_RUNS);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

int cmd_compare(const struct cli *c, int argc, char **argv)
{
    struct targets *ts = calloc(1, sizeof(*ts));
    enum compare_format fmt = COMPARE_TEXT;
    long long ids[REPORT_COMPARE_MAX_RUNS];
    json_t *cmp = NULL;
    int rc;

    if (!ts) {
        fprintf(stderr, "perflog compare: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    rc = parse(c, argc, argv, ts, &fmt);
    if (rc >= 0)
        goto out;
    for (size_t i = 0; i < ts->n; i++)
        ids[i] = ts->t[i].id;
    rc = one_server(ts) ? compare_fetch(&ts->t[0].c, ids, ts->n, &cmp) : compare_local(ts, &cmp);
    if (rc == CLI_EXIT_OK)
        compare_print(stdout, cmp, fmt);
out:
    json_decref(cmp);
    free(ts);
    return rc;
}
