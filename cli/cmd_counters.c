/*
 * cmd_counters.c - `perflog counters [PATTERN]`: the counter paths the daemon knows, one per line,
 * as `typeperf -q` prints them, so its output can feed scripts written for typeperf. A PATTERN
 * that matches nothing exits 1, as it does in every command (cli_unmatched).
 */
#include "base/term_escape.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: perflog counters [--units] [--json] [PATTERN]\n"
    "\n"
    "List the counter paths the daemon samples, one per line, like typeperf -q, e.g.\n"
    "  \\PhysicalDisk(vda)\\Disk Bytes/sec\n"
    "PATTERN may use * and ? in the instance and the counter: '\\PhysicalDisk(*)\\Disk "
    "Bytes/sec',\n"
    "'\\Memory\\*' (quote it for the shell). Without PATTERN, all counters.\n"
    "\n"
    "  --units  add a tab and the unit after each path\n"
    "  --json   print the server's JSON answer as it is\n";

static int parse_opts(int argc, char **argv, int *units, int *json)
{
    static const struct option opts[] = {
        {"units", no_argument, NULL, 'U'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int o;

    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'U') {
            *units = 1;
        } else if (o == 'j') {
            *json = 1;
        } else {
            cli_print_help(o != 'h', help);
            return o == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "perflog counters: one PATTERN at most (got '%s' too)\n", argv[optind + 1]);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* A pattern no counter matches, named the same way by every command. */
static void no_match(const char *cmd, const char *pat, const char *why)
{
    fprintf(stderr, "perflog %s: no counter matches '%s'%s%s (perflog counters lists them)\n", cmd,
            pat, why ? ": " : "", why ? why : "");
}

int cli_unmatched(const struct cli *c, const char *cmd, char *const *pats, int n, unsigned char *ok)
{
    int unmatched = 0;

    for (int i = 0; i < n; i++) {
        struct http_response r;
        char *target = strdup("/api/v1/counters");
        json_t *root;
        int ret;

        if (!target || cli_query_add(&target, "match", pats[i]) < 0) {
            free(target);
            fprintf(stderr, "perflog: out of memory\n");
            return -1;
        }
        ret = cli_get_any(c, target, &r);
        free(target);
        if (ret)
            return -1;
        root = json_loadb(r.body, r.body_len, 0, NULL);
        if (ok)
            ok[i] = 0;
        if (r.status == 400) { /* a malformed path: the server's message says why */
            no_match(cmd, pats[i], cli_json_str(json_object_get(root, "error"), "message"));
            unmatched++;
        } else if (r.status < 200 || r.status > 299) {
            cli_print_http_error(c, &r);
            ret = -1;
        } else if (json_array_size(json_object_get(root, "counters")) == 0) {
            no_match(cmd, pats[i], NULL);
            unmatched++;
        } else if (ok) {
            ok[i] = 1;
        }
        json_decref(root);
        httpc_response_free(&r);
        if (ret)
            return -1;
    }
    return unmatched;
}

/* The paths of the answer; CLI_EXIT_FAIL when it is not a list. *count: how many. */
static int print_paths(const struct cli *c, const struct http_response *r, int units, size_t *count)
{
    json_t *root = json_loadb(r->body, r->body_len, 0, NULL);
    const json_t *list = json_object_get(root, "counters"), *v;
    size_t i;

    if (!json_is_array(list)) {
        fprintf(stderr, "perflog: %s: the answer has no \"counters\" list\n", c->server);
        json_decref(root);
        return CLI_EXIT_FAIL;
    }
    json_array_foreach(list, i, v)
    {
        const char *path = cli_json_str(v, "path"), *unit = cli_json_str(v, "unit");
        char p[4096], u[256];

        if (!path)
            continue;
        /* instance names are the kernel's and processes' own (a comm may hold an ESC) */
        if (units)
            printf("%s\t%s\n", term_escape(path, p, sizeof(p)),
                   term_escape(unit ? unit : "", u, sizeof(u)));
        else
            printf("%s\n", term_escape(path, p, sizeof(p)));
    }
    *count = json_array_size(list);
    json_decref(root);
    return CLI_EXIT_OK;
}

int cmd_counters(const struct cli *c, int argc, char **argv)
{
    int units = 0, json = 0, ret = parse_opts(argc, argv, &units, &json);
    struct http_response r;
    size_t count = 1;
    char *target;

    if (ret >= 0)
        return ret;
    target = strdup("/api/v1/counters");
    if (!target || (optind < argc && cli_query_add(&target, "match", argv[optind]) < 0)) {
        free(target);
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    ret = cli_get(c, target, &r);
    free(target);
    if (ret)
        return ret;
    if (json)
        cli_print_body(&r);
    else
        ret = print_paths(c, &r, units, &count);
    if (json) { /* the answer as it is; an empty list still exits 1 */
        json_t *root = json_loadb(r.body, r.body_len, 0, NULL);
        count = json_array_size(json_object_get(root, "counters"));
        json_decref(root);
    }
    httpc_response_free(&r);
    if (ret == 0 && count == 0 && optind < argc) {
        no_match("counters", argv[optind], NULL);
        ret = CLI_EXIT_FAIL;
    }
    return ret;
}
