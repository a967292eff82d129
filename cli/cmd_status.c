/*
 * cmd_status.c - `perflog status`: GET /api/v1/health, shown for people (or raw with --json).
 * The exit code says whether all is well, so scripts and monitors can call it.
 */
#include "base/term_escape.h"
#include "cli/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: perflog status [--json] [--utc]\n"
    "\n"
    "Show the daemon's health: status, host, version, uptime, interval, the last sample and its\n"
    "age, missed/queued/dropped samples, the database and any problems.\n"
    "\n"
    "  --json   print the server's JSON answer as it is\n"
    "  --utc    show times in UTC instead of local time\n"
    "\n"
    "Exit status: 0 when the status is ok; 1 when it is degraded or the daemon cannot be\n"
    "reached; 2 on a usage error.\n";

/* A count member, or "-" when the server did not send it. */
static void print_count(const char *label, const json_t *h, const char *key)
{
    double v = cli_json_num(h, key);

    if (isnan(v))
        printf("  %-14s -\n", label);
    else
        printf("  %-14s %.0f\n", label, v);
}

static void print_last_sample(const json_t *h, int utc)
{
    double ms = cli_json_num(h, "last_sample_ms");
    char when[40], age[40];

    if (isnan(ms)) {
        printf("  %-14s none yet\n", "last sample");
        return;
    }
    cli_format_time((int64_t)ms, utc, 1, when, sizeof(when));
    cli_format_duration((double)(cli_now_ms() - (int64_t)ms) / 1000.0, age, sizeof(age));
    printf("  %-14s %s (%s ago)\n", "last sample", when, age);
}

static void print_database(const json_t *h)
{
    const json_t *db = json_object_get(h, "database");
    char size[32], path[4200];

    cli_format_bytes(cli_json_num(db, "size_bytes"), size, sizeof(size));
    printf("  %-14s %s (%s)\n", "database",
           term_escape(cli_json_str(db, "path"), path, sizeof(path)), size);
}

static void print_problems(const json_t *h)
{
    const json_t *p = json_object_get(h, "problems");
    size_t i;
    const json_t *v;

    if (json_array_size(p) == 0) {
        printf("  %-14s none\n", "problems");
        return;
    }
    json_array_foreach(p, i, v)
    {
        char shown[1024];

        printf("  %-14s %s\n", i == 0 ? "problems" : "",
               json_is_string(v) ? term_escape(json_string_value(v), shown, sizeof(shown))
                                 : "(not a string)");
    }
}

static void print_health(const json_t *h, int utc)
{
    const char *st = cli_json_str(h, "status"), *host = cli_json_str(h, "host");
    char up[40], e1[256], e2[256];

    printf("perflogd on %s: %s\n", term_escape(host ? host : "?", e1, sizeof(e1)),
           term_escape(st ? st : "unknown", e2, sizeof(e2)));
    printf("  %-14s %s\n", "version", term_escape(cli_json_str(h, "version"), e1, sizeof(e1)));
    printf("  %-14s %s\n", "uptime",
           cli_format_duration(cli_json_num(h, "uptime_s"), up, sizeof(up)));
    print_count("interval (ms)", h, "interval_ms");
    print_last_sample(h, utc);
    print_count("ticks", h, "ticks");
    print_count("missed", h, "missed");
    print_count("queued", h, "queued");
    print_count("unwritten", h, "unwritten");
    print_count("dropped", h, "dropped");
    print_count("write failures", h, "write_failures");
    if (json_is_true(json_object_get(h, "writer_failing")))
        printf("  %-14s the database cannot be written right now\n", "writer");
    print_database(h);
    print_problems(h);
}

/* The options; returns -1 to go on, or the exit code. */
static int parse_opts(int argc, char **argv, int *json, int *utc)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"utc", no_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int o;

    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'j') {
            *json = 1;
        } else if (o == 'u') {
            *utc = 1;
        } else {
            cli_print_help(o != 'h', help);
            return o == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "perflog status: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

int cmd_status(const struct cli *c, int argc, char **argv)
{
    struct http_response r;
    int json = 0, utc = 0, ret = parse_opts(argc, argv, &json, &utc);
    json_t *h;
    const char *st;

    if (ret >= 0)
        return ret;
    if (cli_get(c, "/api/v1/health", &r))
        return CLI_EXIT_FAIL;
    h = json_loadb(r.body, r.body_len, 0, NULL);
    if (json)
        cli_print_body(&r);
    else if (json_is_object(h))
        print_health(h, utc);
    else
        fprintf(stderr, "perflog: %s/api/v1/health: the answer is not a JSON object\n", c->server);
    st = cli_json_str(h, "status");
    ret = st && strcmp(st, "ok") == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    json_decref(h);
    httpc_response_free(&r);
    return ret;
}
