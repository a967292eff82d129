/*
 * cmd_counters.c - `perflog counters [PATTERN]`: the counter paths the daemon knows, one per line,
 * as `typeperf -q` prints them, so its output can feed scripts written for typeperf.
 */
#include "cli.h"
#include "term_escape.h"

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

static int print_paths(const struct cli *c, const struct http_response *r, int units)
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
    json_decref(root);
    return CLI_EXIT_OK;
}

int cmd_counters(const struct cli *c, int argc, char **argv)
{
    int units = 0, json = 0, ret = parse_opts(argc, argv, &units, &json);
    struct http_response r;
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
        ret = print_paths(c, &r, units);
    httpc_response_free(&r);
    return ret;
}
