/*
 * cmd_runs.c - `perflog runs` (the runs the daemon knows, newest first) and `perflog report ID`
 * (one run's report, as text rendered by report_fmt.c or as the server's JSON).
 */
#include "base/term_escape.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "daemon/runs/peer_url.h"
#include "daemon/runs/report_verdict.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char runs_help[] =
    "usage: perflog runs [--utc] [--json]\n"
    "\n"
    "List the runs marked with perflog run, newest first: id, status (running, ending, settled,\n"
    "interrupted, failed), label, start, duration, settle tail, what limited it (the report's\n"
    "verdict: disk, wire, core, tool, per_file, writeback, retransmits, remote or none, with the\n"
    "device, interface, core or process) and command.\n"
    "\n"
    "  --utc    times in UTC instead of local time\n"
    "  --json   print the server's JSON answer as it is\n";

static const char report_help[] =
    "usage: perflog report ID [--all] [--json] [--peer URL --peer-token TOKEN]...\n"
    "\n"
    "Print the report of run ID: when the command returned and when its data was on disk\n"
    "(durable throughput, next to the returned and claimed ones), how long the data stayed dirty\n"
    "and how fast it was then written, the share of reads served from the page cache, the busiest\n"
    "core, then each disk and interface. The report exists once the run has settled. A run\n"
    "started with perflog run --peer shows each peer's report too, side by side, fetched from\n"
    "the peers.\n"
    "docs/report.md defines every figure.\n"
    "\n"
    "  --all    also list the disks and interfaces that were idle\n"
    "  --json   the report as JSON (docs/report.md)\n"
    "  --peer URL --peer-token TOKEN\n"
    "           the bearer token for the peer at URL (repeatable); $PERFLOG_PEER_TOKENS gives\n"
    "           more, as URL=TOKEN,URL=TOKEN. A peer gets no token otherwise, never the one of\n"
    "           --token or $PERFLOG_TOKEN, which is the local daemon's.\n";

/* --utc (runs), --all (report) and --json, the peers' tokens for report (tokens not NULL); -1 to
 * go on, or the exit code. */
static int parse_flags(int argc, char **argv, const char *help, int *utc, int *all, int *json,
                       struct run_peer_tokens *tokens)
{
    static const struct option opts[] = {
        {"utc", no_argument, NULL, 'u'},
        {"all", no_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},
        {"peer", required_argument, NULL, 'P'},
        {"peer-token", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'u' && utc)
            *utc = 1;
        else if (c == 'a' && all)
            *all = 1;
        else if (c == 'j')
            *json = 1;
        else if ((c == 'P' || c == 'T') && tokens) {
            if (run_peer_option(tokens, c == 'T', optarg, "perflog report") < 0)
                return CLI_EXIT_USAGE;
        } else {
            cli_print_help(c != 'h', help);
            return c == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    return -1;
}

static json_t *get_json(const struct cli *c, const char *target, struct http_response *r)
{
    json_t *root;

    if (cli_get(c, target, r))
        return NULL;
    root = json_loadb(r->body, r->body_len, 0, NULL);
    if (!root)
        fprintf(stderr, "perflog: %s sent an answer that is not JSON\n", c->server);
    return root;
}

static double span_s(const json_t *run, const char *from, const char *to)
{
    double a = cli_json_num(run, from), b = cli_json_num(run, to);

    return isnan(a) || isnan(b) ? NAN : (b - a) / 1000.0;
}

/* "disk vda", "none", "-" without a verdict: cut to the column like the label. */
static const char *limit_cell(const json_t *run, char *buf, size_t cap)
{
    const json_t *v = json_object_get(run, "verdict");
    const char *limit = cli_json_str(v, "limit"), *inst = cli_json_str(v, "instance");
    char raw[256];

    if (!limit)
        return "-";
    snprintf(raw, sizeof(raw), "%s%s%s", limit, inst ? " " : "", inst ? inst : "");
    return term_escape(raw, buf, cap);
}

static void print_row(const json_t *run, int utc)
{
    char id[24], start[32] = "-", dur[32], tail[32], st[64], lb[64], lim[24], cm[4096];
    double start_ms = cli_json_num(run, "start_ms");
    const char *label = cli_json_str(run, "label");

    snprintf(id, sizeof(id), "%.0f", cli_json_num(run, "id"));
    if (!isnan(start_ms))
        cli_format_time((int64_t)start_ms, utc, 0, start, sizeof(start));
    /* the label is cut to its column; cut at a character of the escaped text, not in a byte */
    printf("%-6s %-11s %-16s %-19s %12s %12s  %-22s %s\n", id,
           term_escape(cli_json_str(run, "status"), st, sizeof(st)),
           term_escape(label && *label ? label : "-", lb, 17), start,
           cli_format_duration(span_s(run, "start_ms", "end_ms"), dur, sizeof(dur)),
           cli_format_duration(span_s(run, "end_ms", "settled_ms"), tail, sizeof(tail)),
           limit_cell(run, lim, sizeof(lim)),
           term_escape(cli_json_str(run, "command"), cm, sizeof(cm)));
}

int cmd_runs(const struct cli *c, int argc, char **argv)
{
    int utc = 0, json = 0, r = parse_flags(argc, argv, runs_help, &utc, NULL, &json, NULL);
    struct http_response resp;
    json_t *root;
    const json_t *run;
    size_t i;

    if (r >= 0)
        return r;
    if (optind < argc) {
        fprintf(stderr, "perflog runs: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    root = get_json(c, "/api/v1/runs", &resp);
    if (!root) {
        httpc_response_free(&resp);
        return CLI_EXIT_FAIL;
    }
    if (json)
        cli_print_body(&resp);
    else {
        printf("%-6s %-11s %-16s %-19s %12s %12s  %-22s %s\n", "ID", "STATUS", "LABEL",
               utc ? "START (UTC)" : "START", "DURATION", "TAIL", "LIMIT", "COMMAND");
        json_array_foreach(json_object_get(root, "runs"), i, run) print_row(run, utc);
    }
    json_decref(root);
    httpc_response_free(&resp);
    return CLI_EXIT_OK;
}

/* One peer of the run, named as perflog run stores it (run_peer_split): {"url", "id", "report"},
 * the report null when the peer cannot be reached or has none yet (which is said on stderr). A
 * name of another form is not fetched: whoever created the run chose it. The peer gets the token
 * given for it, or none. */
static json_t *peer_entry(const struct cli *c, const struct run_peer_tokens *tokens,
                          const char *name)
{
    json_t *e = json_object(), *root = NULL;
    char server[HTTPC_BASE_MAX + HTTPC_HOST_MAX + 16], err[256], target[64], tok[256];
    char shown[256];
    struct http_response r = {0};
    struct cli pc = *c;
    const char *why = NULL;
    long long id = 0;
    json_t *rep;

    if (peer_url_parse(name, server, sizeof(server), &id, &why) < 0 || id == 0) {
        if (why)
            fprintf(stderr, "perflog report: peer %s not fetched: %s\n",
                    term_escape(name, shown, sizeof(shown)), why);
        json_object_set_new(e, "url", json_string(name));
        json_object_set_new(e, "id", json_null());
        json_object_set_new(e, "report", json_null());
        return e;
    }
    json_object_set_new(e, "url", json_string(server));
    json_object_set_new(e, "id", json_integer(id));
    pc.server = server;
    pc.token = run_peer_token(tokens, server, tok, sizeof(tok));
    snprintf(target, sizeof(target), "/api/v1/runs/%lld", id);
    if (httpc_parse_url(server, &pc.url, err, sizeof(err)) < 0)
        fprintf(stderr, "perflog report: peer %s: %s\n", server,
                term_escape(err, shown, sizeof(shown)));
    else
        root = get_json(&pc, target, &r);
    rep = json_object_get(root, "report");
    if (root && !json_is_object(rep))
        fprintf(stderr, "perflog report: run %lld on %s has no report yet\n", id, server);
    json_object_set(e, "report", json_is_object(rep) ? rep : json_null());
    json_decref(root);
    httpc_response_free(&r);
    return e;
}

/* The server stores a run's own report only; its "peers" are filled here from each peer named in
 * the run, so the text shows the hosts side by side and --json carries their reports too. */
static void add_peers(const struct cli *c, const struct run_peer_tokens *tokens, const json_t *run,
                      json_t *rep)
{
    const json_t *names = json_object_get(run, "peers"), *name;
    json_t *peers;
    size_t i;

    if (json_array_size(names) == 0 || json_array_size(json_object_get(rep, "peers")) > 0)
        return;
    peers = json_array();
    json_array_foreach(names, i, name)
    {
        if (json_is_string(name))
            json_array_append_new(peers, peer_entry(c, tokens, json_string_value(name)));
    }
    json_object_set_new(rep, "peers", peers);
    verdict_apply_peers(rep);
}

int cmd_report(const struct cli *c, int argc, char **argv)
{
    struct run_peer_tokens tokens = {0};
    int all = 0, json = 0, r = parse_flags(argc, argv, report_help, NULL, &all, &json, &tokens);
    int ret = CLI_EXIT_FAIL;
    struct http_response resp = {0};
    char target[64], *end, *text, st[64];
    json_t *root;
    json_t *rep;
    long long id;

    if (r >= 0)
        return r;
    if (optind + 1 != argc || (id = strtoll(argv[optind], &end, 10)) <= 0 || *end) {
        fprintf(stderr, "perflog report: give one run ID (perflog runs lists them)\n");
        return CLI_EXIT_USAGE;
    }
    snprintf(target, sizeof(target), "/api/v1/runs/%lld", id);
    root = get_json(c, target, &resp);
    rep = json_object_get(root, "report");
    if (root && !json_is_object(rep)) {
        fprintf(stderr, "perflog report: run %lld has no report yet (status %s)\n", id,
                term_escape(cli_json_str(root, "status") ? cli_json_str(root, "status") : "unknown",
                            st, sizeof(st)));
    } else if (root) {
        add_peers(c, &tokens, root, rep);
        text = json ? json_dumps(rep, JSON_INDENT(2)) : run_report_text(rep, all);
        if (text) {
            fputs(text, stdout);
            if (json)
                putchar('\n');
            ret = CLI_EXIT_OK;
        }
        free(text);
    }
    json_decref(root);
    httpc_response_free(&resp);
    return ret;
}
