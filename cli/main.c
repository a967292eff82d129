/*
 * main.c - perflog, the client of perflogd: global options (--server, --token, --timeout), then
 * one subcommand from the table below, which parses its own options.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_cmd cmds[] = {
    {.name = "status", .run = cmd_status, .summary = "the daemon's health and last sample"},
    {.name = "counters", .run = cmd_counters, .summary = "list counter paths, like typeperf -q"},
    {.name = "data", .run = cmd_data, .summary = "a table of stored values over a time range"},
    {.name = "export",
     .run = cmd_export,
     .summary = "a PDH-CSV 4.0 counter log, from the daemon or a database file"},
    {.name = "typeperf",
     .run = cmd_typeperf,
     .summary = "live values in typeperf's own format and options"},
    {.name = "run",
     .run = cmd_run,
     .summary = "run a command as a marked run, then print its report"},
    {.name = "runs", .run = cmd_runs, .summary = "list the runs"},
    {.name = "report", .run = cmd_report, .summary = "the report of one run, as text or JSON"},
    {.name = "compare", .run = cmd_compare, .summary = "runs side by side, with ratios"},
};

static const char usage_head[] =
    "usage: perflog [--server URL] [--token TOKEN] [--timeout SECONDS] COMMAND [ARGS...]\n"
    "       perflog --help | --version\n"
    "\n"
    "The client of perflogd, over its HTTP API.\n"
    "\n"
    "  --server URL       the daemon, http://HOST[:PORT][/PATH] (default $PERFLOG_SERVER,\n"
    "                     else " CLI_DEFAULT_SERVER ")\n"
    "  --token TOKEN      bearer token for a daemon with auth_token (default $PERFLOG_TOKEN)\n"
    "  --timeout SECONDS  how long to wait for an answer (default 30)\n"
    "\n"
    "Commands (perflog COMMAND --help for each):\n";

static void usage(FILE *f)
{
    fputs(usage_head, f);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fputs("\nExit status: 0 success, 1 server unreachable or error, 2 usage error.\n", f);
}

static const struct cli_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

static void unknown_cmd(const char *name)
{
    fprintf(stderr, "perflog: unknown command '%s'; the commands are:", name);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        fprintf(stderr, "%s %s", i ? "," : "", cmds[i].name);
    fputc('\n', stderr);
}

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);

    return v && *v ? v : def;
}

static int parse_timeout(const char *s, int *out_ms)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end || !(v > 0 && v <= 86400))
        return -1;
    *out_ms = (int)(v * 1000 + 0.5);
    return 0;
}

/* The global options; returns -1 to continue, or the exit code. optind is left at COMMAND. */
static int parse_globals(int argc, char **argv, struct cli *c)
{
    static const struct option opts[] = {
        {"server", required_argument, NULL, 's'},  {"token", required_argument, NULL, 't'},
        {"timeout", required_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
    };
    int o;

    /* "+": stop at the command, whose options are its own. */
    while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (o) {
        case 's':
            c->server = optarg;
            break;
        case 't':
            c->token = optarg;
            break;
        case 'T':
            if (parse_timeout(optarg, &c->read_timeout_ms) == 0)
                break;
            fprintf(stderr, "perflog: --timeout: expected seconds (0 < s <= 86400), got '%s'\n",
                    optarg);
            return CLI_EXIT_USAGE;
        case 'h':
            usage(stdout);
            return CLI_EXIT_OK;
        case 'V':
            printf("perflog %s\n", PERFLOG_VERSION);
            return CLI_EXIT_OK;
        default:
            fputs("perflog: see perflog --help\n", stderr);
            return CLI_EXIT_USAGE;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct cli c = {.server = env_or("PERFLOG_SERVER", CLI_DEFAULT_SERVER),
                    .token = env_or("PERFLOG_TOKEN", NULL),
                    .read_timeout_ms = HTTPC_READ_TIMEOUT_MS};
    const struct cli_cmd *cmd;
    char err[512];
    int r = parse_globals(argc, argv, &c);

    if (r >= 0)
        return r;
    if (optind >= argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    cmd = find_cmd(argv[optind]);
    if (!cmd) {
        unknown_cmd(argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (httpc_parse_url(c.server, &c.url, err, sizeof(err)) < 0) {
        fprintf(stderr, "perflog: bad server URL '%s': %s\n", c.server, err);
        return CLI_EXIT_USAGE;
    }
    argc -= optind;
    argv += optind;
    optind = 0; /* glibc: start the command's own getopt_long afresh at argv[1] */
    return cmd->run(&c, argc, argv);
}
