/*
 * cmd_run.c - `perflog run [OPTIONS] -- CMD [ARGS...]`: open a run on the daemon (and on each
 * peer), run CMD with its stdout and stderr passed through while a live line shows what the
 * disks, the wire, the CPUs and the page cache do, end the run with the exit code, the tail of
 * the output and the bytes CMD's processes read and wrote, wait until the daemon calls the run
 * settled, then print the report (design sections 1 and 7, /work/runs-spec/SPEC.md).
 *
 * Starting, watching and accounting for CMD is per platform (run_child.h): fork and
 * /proc/self/io on POSIX, CreateProcess and a job object on Windows. The rest is here.
 */
#include "base/term_escape.h"
#include "cli/cli.h"
#include "cli/cli_os.h"
#include "cli/compare.h"
#include "cli/run.h"
#include "cli/run_child.h"
#include "daemon/runs/report_verdict.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PEERS       RUN_MAX_PEERS
#define SETTLE_POLL_MS  500
#define SETTLE_GRACE_S  30 /* waited beyond the settle timeout before giving up */
#define LIVE_TIMEOUT_MS 2000
#define REPEAT_MAX      20 /* the most runs a comparison takes */

static const char help[] =
    "usage: perflog run [--label TEXT] [--payload PATH | --bytes N] [--files N]\n"
    "                   [--peer URL [--peer-token TOKEN]]...\n"
    "                   [--settle-timeout S] [--repeat N [--cold]] [--quiet] [--all] [--json]\n"
    "                   -- CMD [ARGS...]\n"
    "\n"
    "Mark a run on perflogd, run CMD with its stdout and stderr passed through, show one line a\n"
    "second on stderr (disk, network, dirty data, CPU), end the run when CMD exits, wait until "
    "the\n"
    "dirty and writeback data have reached the disks (or the settle timeout), then print the run\n"
    "report. The last 24 KiB of CMD's output go to the daemon, which parses the throughput that\n"
    "tools such as dd, rsync, robocopy, fio and smbclient print.\n"
    "\n"
    "  --label TEXT        a name for the run\n"
    "  --payload PATH      the bytes copied: PATH's size, or the sum of the regular files under a\n"
    "                      directory (whose count is then the default of --files)\n"
    "  --bytes N           the bytes copied, as a number\n"
    "  --files N           the number of files copied (for ms and packets per file)\n"
    "  --peer URL          also open and end the run on the perflogd at URL (repeatable); the\n"
    "                      report then shows the hosts side by side\n"
    "  --peer-token TOKEN  the bearer token for the --peer before it (else the one\n"
    "                      $PERFLOG_PEER_TOKENS, URL=TOKEN,..., gives it, else none: a peer never\n"
    "                      gets the local daemon's --token or $PERFLOG_TOKEN)\n"
    "  --settle-timeout S  the longest wait for dirty data after CMD exits (1..3600, default 120)\n"
    "  --repeat N          run CMD N times (2..20), as separate runs labelled 'LABEL #1'..'#N'\n"
    "                      (LABEL: --label, else CMD's name), each settled before the next, then\n"
    "                      print their comparison (perflog compare) with the median, min and max\n"
    "                      of each figure instead of the reports; the exit status is the first\n"
    "                      non-zero one of CMD's\n"
    "  --cold              before each run, write the dirty data out (sync) and empty the page\n"
    "                      cache (echo 3 > /proc/sys/vm/drop_caches), so CMD reads from the\n"
    "                      devices: root only, else exit 2 before anything runs\n"
    "  -q, --quiet         no live line and no waiting messages\n"
    "  --all               list the idle disks and interfaces in the report too\n"
    "  --json              print the report as JSON instead of text\n"
    "\n";

struct run_opts {
    const char *label, *payload_path;
    int64_t bytes, files; /* -1: not given */
    int64_t settle_timeout_s;
    const char *peers[MAX_PEERS];
    size_t npeers;
    struct run_peer_tokens tokens; /* the --peer-token given after a --peer */
    int quiet, json, all;
    int64_t repeat; /* 0: run once */
    int64_t argc;   /* CMD's words */
    int cold;
};

/* A host the run is open on: the daemon of --server, then each peer. */
struct host {
    struct cli c;
    const char *url;
    long long id;    /* -1: the run could not be opened there */
    char token[256]; /* a peer's token from $PERFLOG_PEER_TOKENS (c.token points here) */
};

struct session {
    const struct run_opts *o;
    struct host hosts[MAX_PEERS + 1];
    size_t nhosts;
    int print;            /* print the report (not while repeating) */
    int tty;              /* stderr is a terminal: the live line is redrawn in place */
    int line_shown;       /* a live line is on the terminal now */
    uint64_t own_written; /* bytes written to our stdout and stderr while CMD runs */
    struct run_tail tail;
};

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int opt_int(const char *name, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (parse_int(s, lo, hi, out) == 0)
        return 0;
    fprintf(stderr, "perflog run: --%s: expected a whole number from %lld to %lld, got '%s'\n",
            name, (long long)lo, (long long)hi, s);
    return -1;
}

/* The options, then the platform's paragraph on the exit status and the child. */
static void print_help(int err)
{
    cli_print_help(err, help);
    fputs(run_child_help, err ? stderr : stdout);
}

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
    static const struct option opts[] = {
        {"label", required_argument, NULL, 'l'},
        {"payload", required_argument, NULL, 'p'},
        {"bytes", required_argument, NULL, 'b'},
        {"files", required_argument, NULL, 'f'},
        {"peer", required_argument, NULL, 'P'},
        {"settle-timeout", required_argument, NULL, 's'},
        {"peer-token", required_argument, NULL, 'T'},
        {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, 'j'},
        {"all", no_argument, NULL, 'a'},
        {"repeat", required_argument, NULL, 'r'},
        {"cold", no_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    /* "+": CMD's own options are not ours. */
    while ((c = getopt_long(argc, argv, "+hq", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            o->label = optarg;
            break;
        case 'p':
            o->payload_path = optarg;
            break;
        case 'b':
            if (opt_int("bytes", optarg, 0, INT64_MAX, &o->bytes) < 0)
                return CLI_EXIT_USAGE;
            break;
        case 'f':
            if (opt_int("files", optarg, 0, INT64_MAX, &o->files) < 0)
                return CLI_EXIT_USAGE;
            break;
        case 'P':
        case 'T':
            if (run_peer_option(&o->tokens, c == 'T', optarg, "perflog run") < 0)
                return CLI_EXIT_USAGE;
            if (c == 'P')
                o->peers[o->npeers++] = optarg;
            break;
        case 's':
            if (opt_int("settle-timeout", optarg, 1, 3600, &o->settle_timeout_s) < 0)
                return CLI_EXIT_USAGE;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'a':
            o->all = 1;
            break;
        case 'r':
            if (opt_int("repeat", optarg, 2, REPEAT_MAX, &o->repeat) < 0)
                return CLI_EXIT_USAGE;
            break;
        case 'C':
            o->cold = 1;
            break;
        default:
            print_help(c != 'h');
            return c == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "perflog run: give the command to run after --, e.g. perflog run -- cp "
                        "a b\n");
        return CLI_EXIT_USAGE;
    }
    if (o->payload_path && o->bytes >= 0) {
        fprintf(stderr, "perflog run: give --payload or --bytes, not both\n");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* --payload PATH: the size of a file, or the regular files under a directory. */
static int payload_size(struct run_opts *o)
{
    char err[256];
    int64_t files = -1;

    if (cli_path_size(o->payload_path, &o->bytes, &files, err, sizeof(err)) < 0) {
        fprintf(stderr, "perflog run: --payload %s: %s\n", o->payload_path, err);
        return -1;
    }
    if (o->files < 0 && files >= 0)
        o->files = files;
    return 0;
}

static json_t *start_body(const struct run_opts *o, const char *command)
{
    json_t *b = json_object(), *peers = json_array();

    for (size_t i = 0; i < o->npeers; i++)
        json_array_append_new(peers, json_string(o->peers[i]));
    if (o->label)
        json_object_set_new(b, "label", json_string(o->label));
    json_object_set_new(b, "command", json_string(command));
    /* This process: CMD's tree is its descendants, which the daemon follows from here. */
    json_object_set_new(b, "pid", json_integer(getpid()));
    if (o->bytes >= 0)
        json_object_set_new(b, "payload_bytes", json_integer(o->bytes));
    if (o->files >= 0)
        json_object_set_new(b, "files", json_integer(o->files));
    json_object_set_new(b, "peers", peers);
    json_object_set_new(b, "settle_timeout_s", json_integer(o->settle_timeout_s));
    return b;
}

/* POST /api/v1/runs to h: the id in h->id, or -1 after the message. When the body names our pid,
 * a daemon that cannot follow CMD's processes says why, and so do we: the report will list none. */
static int open_run(struct host *h, const json_t *body)
{
    struct http_response r;
    json_t *root;
    const json_t *id, *procs;
    char shown[512];

    h->id = -1;
    if (cli_request(&h->c, "POST", "/api/v1/runs", body, &r))
        return -1;
    root = json_loadb(r.body, r.body_len, 0, NULL);
    id = json_object_get(root, "id");
    if (json_is_integer(id))
        h->id = (long long)json_integer_value(id);
    else
        fprintf(stderr, "perflog run: %s answered without a run id\n", h->url);
    procs = json_object_get(root, "processes");
    if (h->id >= 0 && json_object_get(body, "pid") &&
        json_is_false(json_object_get(procs, "followed")))
        fprintf(stderr, "perflog run: %s does not follow CMD's processes: %s\n", h->url,
                term_escape(json_string_value(json_object_get(procs, "reason"))
                                ? json_string_value(json_object_get(procs, "reason"))
                                : "no reason given",
                            shown, sizeof(shown)));
    json_decref(root);
    httpc_response_free(&r);
    return h->id < 0 ? -1 : 0;
}

/* DELETE the run opened on h (its main run could not be opened); best-effort. */
static void delete_run(struct host *h)
{
    char target[64];
    struct http_response r;

    snprintf(target, sizeof(target), "/api/v1/runs/%lld", h->id);
    if (cli_request(&h->c, "DELETE", target, NULL, &r) == 0)
        httpc_response_free(&r);
    h->id = -1;
}

/*
 * Open the run on each peer, then on the daemon of --server with "peers" naming each peer's run
 * by its URL (SERVER/api/v1/runs/ID, run_peer_url), so `perflog report ID` finds the peers'
 * reports later; a peer where the run could not be opened is named by its server URL alone.
 * Peers first, so their ids are known when the main run is stored; their runs then start a few
 * milliseconds earlier, which no 1 s tick can tell. If the main run cannot be opened, the peers'
 * runs are deleted again.
 */
static int open_runs(struct session *s, const struct cli *c, const char *command)
{
    json_t *body = start_body(s->o, command), *peers = json_array(), *pid = NULL;
    char err[512];
    int rc = -1;

    s->hosts[0] = (struct host){.c = *c, .url = c->server, .id = -1};
    s->nhosts = 1;
    if (!body || !peers)
        goto out;
    /* Peers get the same body without their own list, and without our pid: CMD runs here, and
     * on another host that number names some unrelated process, which the peer would follow and
     * report as the run's. One that fails is left out. */
    json_object_del(body, "peers");
    pid = json_incref(json_object_get(body, "pid"));
    json_object_del(body, "pid");
    for (size_t i = 0; i < s->o->npeers; i++) {
        struct host *h = &s->hosts[s->nhosts];
        char *url;

        *h = (struct host){.c = *c, .url = s->o->peers[i], .id = -1};
        h->c.server = s->o->peers[i];
        h->c.token = run_peer_token(&s->o->tokens, s->o->peers[i], h->token, sizeof(h->token));
        if (httpc_parse_url(s->o->peers[i], &h->c.url, err, sizeof(err)) < 0) {
            fprintf(stderr, "perflog run: --peer %s: %s\n", s->o->peers[i], err);
            continue;
        }
        if (open_run(h, body) < 0)
            fprintf(stderr, "perflog run: the run is not marked on %s\n", h->url);
        url = h->id >= 0 ? run_peer_url(h->url, h->id) : NULL;
        json_array_append_new(peers, json_string(url ? url : h->url));
        free(url);
        s->nhosts++;
    }
    json_object_set(body, "peers", peers);
    json_object_set(body, "pid", pid);
    rc = open_run(&s->hosts[0], body);
    if (rc < 0)
        for (size_t i = 1; i < s->nhosts; i++)
            if (s->hosts[i].id >= 0)
                delete_run(&s->hosts[i]);
out:
    json_decref(pid);
    json_decref(peers);
    json_decref(body);
    return rc;
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write all of buf to fd, retrying short writes; -1 on an error. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

static void clear_line(struct session *s)
{
    if (s->tty && s->line_shown) {
        if (write_all(2, "\r\033[K", 4) == 0)
            s->own_written += 4;
        s->line_shown = 0;
    }
}

static void show_line(struct session *s, const char *line)
{
    char buf[600];
    int n =
        snprintf(buf, sizeof(buf), "%s%s%s", s->tty ? "\r\033[K" : "", line, s->tty ? "" : "\n");

    if (n > 0 && write_all(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) == 0)
        s->own_written += (uint64_t)n;
    s->line_shown = s->tty;
}

/* The daemon's newest values, or NULL (silently: the live line is best-effort). */
static json_t *latest(const struct session *s)
{
    struct cli c = s->hosts[0].c;
    struct http_response r;
    json_t *root = NULL;

    c.read_timeout_ms = LIVE_TIMEOUT_MS;
    if (cli_get_quiet(&c, run_live_target, &r) == 0) {
        root = json_loadb(r.body, r.body_len, 0, NULL);
        httpc_response_free(&r);
    }
    return root;
}

static void live_tick(struct session *s, double elapsed_s)
{
    json_t *l = latest(s);
    char line[512];

    run_live_line(l, s->hosts[0].id, elapsed_s, line, sizeof(line));
    show_line(s, line);
    json_decref(l);
}

/* The sink of CMD's output: into the tail, and out on our own stdout or stderr. */
static int pass_through(void *ctx, int stream, const char *buf, size_t len)
{
    struct session *s = ctx;

    run_tail_add(&s->tail, buf, len);
    clear_line(s);
    if (write_all(stream, buf, len) < 0)
        return -1;
    s->own_written += len;
    return 0;
}

/* Run CMD to its end, passing its output through with a live line every second; res says how it
 * ended. Returns 0, or -1 when it could not be started (after saying why). */
static int run_cmd(struct session *s, char **argv, struct run_child_result *res)
{
    const struct run_child_sink sink = {.output = pass_through, .ctx = s};
    struct run_child *ch;
    char msg[256];
    double t0 = mono_s(), next = t0 + 1;

    if (run_child_start(argv, &ch, res, msg, sizeof(msg)) < 0) {
        fprintf(stderr, "perflog: %s: %s\n", argv[0], msg);
        return -1;
    }
    for (;;) {
        double now = mono_s();
        int wait_ms = now >= next ? 0 : (int)((next - now) * 1000) + 1;

        if (run_child_wait(ch, wait_ms, &sink))
            break;
        now = mono_s();
        if (now >= next) {
            if (!s->o->quiet)
                live_tick(s, now - t0);
            next += 1;
            if (next < now)
                next = now + 1;
        }
    }
    run_child_end(ch, &sink, &s->own_written, res);
    run_child_free(ch);
    clear_line(s);
    return 0;
}

static json_t *end_body(const struct session *s, const struct run_child_result *res,
                        int with_process, int with_output)
{
    json_t *b = json_object(), *p;
    char *text = with_output ? run_tail_text(&s->tail, NULL) : NULL;

    json_object_set_new(b, "exit_code", json_integer(res->exit_code));
    if (text)
        json_object_set_new(b, "tool_output", json_string(text));
    free(text);
    if (with_process && res->have_io) {
        p = json_object();
        json_object_set_new(p, "io_read_bytes", json_integer((json_int_t)res->io_read_bytes));
        json_object_set_new(p, "io_write_bytes", json_integer((json_int_t)res->io_write_bytes));
        /* Absent, not 0, where the platform has no storage split (Windows). */
        if (res->have_storage) {
            json_object_set_new(p, "storage_read_bytes",
                                json_integer((json_int_t)res->storage_read_bytes));
            json_object_set_new(p, "storage_write_bytes",
                                json_integer((json_int_t)res->storage_write_bytes));
        }
        json_object_set_new(b, "process", p);
    }
    return b;
}

static void end_runs(struct session *s, const struct run_child_result *res)
{
    for (size_t i = 0; i < s->nhosts; i++) {
        struct host *h = &s->hosts[i];
        json_t *body;
        char target[96];
        struct http_response r;

        if (h->id < 0)
            continue;
        /* The process counters are this host's: the peers get the exit code and output. If the
         * server refuses the body (a smaller max_body_bytes), the run still ends, without the
         * tool's output. */
        snprintf(target, sizeof(target), "/api/v1/runs/%lld/end", h->id);
        body = end_body(s, res, i == 0, 1);
        if (cli_request(&h->c, "POST", target, body, &r) == 0) {
            httpc_response_free(&r);
        } else {
            json_decref(body);
            body = end_body(s, res, i == 0, 0);
            if (cli_request(&h->c, "POST", target, body, &r) == 0) {
                httpc_response_free(&r);
                fprintf(stderr, "perflog run: run %lld ended without the command's output\n",
                        h->id);
            } else {
                fprintf(stderr, "perflog run: could not end run %lld on %s\n", h->id, h->url);
            }
        }
        json_decref(body);
    }
}

/* GET /api/v1/runs/{id} of h: the run object, or NULL after the message. */
static json_t *get_run(const struct host *h)
{
    char target[64];
    struct http_response r;
    json_t *root;

    snprintf(target, sizeof(target), "/api/v1/runs/%lld", h->id);
    if (cli_get(&h->c, target, &r))
        return NULL;
    root = json_loadb(r.body, r.body_len, 0, NULL);
    httpc_response_free(&r);
    if (!json_is_object(root))
        fprintf(stderr, "perflog run: %s sent a run that is not a JSON object\n", h->url);
    return root;
}

static int finished(const json_t *run)
{
    const char *st = cli_json_str(run, "status");

    return st && (!strcmp(st, "settled") || !strcmp(st, "interrupted") || !strcmp(st, "failed"));
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Poll h's run until it is settled (or the deadline); returns the last run seen, or NULL. */
static json_t *wait_settled(struct session *s, const struct host *h, double deadline)
{
    json_t *run = NULL;
    double last_msg = 0;
    char shown[64];

    for (;;) {
        json_decref(run);
        run = get_run(h);
        if (!run || finished(run) || mono_s() >= deadline)
            break;
        if (!s->o->quiet && h == &s->hosts[0] && mono_s() - last_msg >= 1) {
            json_t *l = latest(s);
            char left[32], line[128];

            snprintf(line, sizeof(line), "waiting for dirty data to reach the disk: %s left",
                     cli_format_bytes(run_latest_dirty(l), left, sizeof(left)));
            show_line(s, line);
            json_decref(l);
            last_msg = mono_s();
        }
        sleep_ms(SETTLE_POLL_MS);
    }
    clear_line(s);
    if (run && !finished(run))
        fprintf(stderr,
                "perflog run: run %lld on %s is still '%s' after %lld s; its report is "
                "not ready (perflog report %lld, later)\n",
                h->id, h->url, term_escape(cli_json_str(run, "status"), shown, sizeof(shown)),
                (long long)s->o->settle_timeout_s + SETTLE_GRACE_S, h->id);
    return run;
}

/* The main report, with the peers' reports in its "peers" when the server left it empty. */
static json_t *collect_report(struct session *s, json_t *main_run, double deadline)
{
    json_t *rep = json_object_get(main_run, "report"), *peers;

    if (!json_is_object(rep))
        return NULL;
    json_incref(rep);
    peers = json_object_get(rep, "peers");
    if (s->nhosts > 1 && json_array_size(peers) == 0) {
        peers = json_array();
        for (size_t i = 1; i < s->nhosts; i++) {
            json_t *p = json_object(),
                   *run = s->hosts[i].id >= 0 ? wait_settled(s, &s->hosts[i], deadline) : NULL;
            json_t *prep = json_object_get(run, "report");

            json_object_set_new(p, "url", json_string(s->hosts[i].url));
            json_object_set_new(p, "id",
                                s->hosts[i].id >= 0 ? json_integer(s->hosts[i].id) : json_null());
            json_object_set(p, "report", json_is_object(prep) ? prep : json_null());
            json_array_append_new(peers, p);
            json_decref(run);
        }
        json_object_set_new(rep, "peers", peers);
        verdict_apply_peers(rep);
    }
    return rep;
}

static void print_report(const struct session *s, const json_t *rep)
{
    char *text;

    if (s->o->json) {
        text = json_dumps(rep, JSON_INDENT(2));
        if (text)
            printf("%s\n", text);
    } else {
        text = run_report_text(rep, s->o->all);
        if (text)
            fputs(text, stdout);
    }
    free(text);
    fflush(stdout);
}

static void report(struct session *s)
{
    double deadline = mono_s() + (double)s->o->settle_timeout_s + SETTLE_GRACE_S;
    json_t *run = wait_settled(s, &s->hosts[0], deadline), *rep;
    char shown[64];

    if (!run)
        return;
    rep = collect_report(s, run, deadline);
    if (rep) {
        if (s->print)
            print_report(s, rep);
    } else if (finished(run))
        fprintf(stderr, "perflog run: run %lld is '%s' but has no report\n", s->hosts[0].id,
                term_escape(cli_json_str(run, "status"), shown, sizeof(shown)));
    json_decref(rep);
    json_decref(run);
}

/*
 * One run of CMD (argv) under o: open it, run CMD, end it, wait until it has settled and print
 * its report unless repeating. Returns CMD's exit code, or -1 when no run could be opened (said);
 * *id is the daemon's run id, or -1.
 */
static int run_once(const struct cli *c, const struct run_opts *o, char **argv, long long *id)
{
    struct session s = {.o = o, .print = o->repeat == 0};
    struct run_child_result res;
    char *command, err[256];
    int started;

    *id = -1;
    if (o->cold && cli_cold_drop(err, sizeof(err)) < 0) {
        fprintf(stderr, "perflog run: --cold: %s\n", err);
        return -1;
    }
    command = run_child_command_text((int)o->argc, argv);
    if (!command || run_tail_init(&s.tail, RUN_TAIL_MAX) < 0) {
        fprintf(stderr, "perflog run: %s\n",
                command ? "out of memory"
                        : "no command line can be made (out of memory, or on Windows a '\"' in the "
                          "program name)");
        free(command);
        return -1;
    }
    if (open_runs(&s, c, command) < 0) {
        fprintf(stderr, "perflog run: no run could be opened on %s; %s was not run\n", c->server,
                argv[0]);
        free(command);
        run_tail_free(&s.tail);
        return -1;
    }
    free(command);
    s.tty = cli_stderr_redraws();
    started = run_cmd(&s, argv, &res) == 0;
    end_runs(&s, &res);
    if (started)
        report(&s);
    run_tail_free(&s.tail);
    *id = s.hosts[0].id;
    return res.exit_code;
}

/* The label of run i (1-based) of --repeat: "LABEL #i", LABEL --label's or CMD's name. */
static void repeat_label(const struct run_opts *o, const char *cmd, int64_t i, char *buf,
                         size_t cap)
{
    const char *base = o->label;

    if (!base) {
        base = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
        base = strrchr(base, '\\') ? strrchr(base, '\\') + 1 : base;
    }
    snprintf(buf, cap, "%s #%lld", base, (long long)i);
}

/* --repeat N: N runs, then their comparison with each figure's median, min and max. */
static int run_repeat(const struct cli *c, const struct run_opts *o, char **argv)
{
    long long ids[REPEAT_MAX];
    struct run_opts each = *o;
    char label[512];
    json_t *cmp = NULL;
    int exit_code = 0;

    for (int64_t i = 0; i < o->repeat; i++) {
        int rc;

        repeat_label(o, argv[0], i + 1, label, sizeof(label));
        each.label = label;
        if (!o->quiet)
            fprintf(stderr, "perflog run: %s\n", label);
        rc = run_once(c, &each, argv, &ids[i]);
        if (rc < 0 || ids[i] < 0)
            return CLI_EXIT_FAIL;
        if (rc && !exit_code)
            exit_code = rc;
    }
    if (compare_fetch(c, ids, (size_t)o->repeat, &cmp) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    compare_add_stats(cmp);
    compare_print(stdout, cmp, o->json ? COMPARE_JSON : COMPARE_TEXT);
    fflush(stdout);
    json_decref(cmp);
    return exit_code;
}

int cmd_run(const struct cli *c, int argc, char **argv)
{
    struct run_opts o = {.bytes = -1, .files = -1, .settle_timeout_s = 120};
    char err[256];
    long long id;
    int r = parse_opts(argc, argv, &o);

    if (r >= 0)
        return r;
    /* before anything runs: a run that was meant to be cold must not run warm */
    if (o.cold && cli_cold_check(err, sizeof(err)) < 0) {
        fprintf(stderr, "perflog run: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (o.payload_path && payload_size(&o) < 0)
        return CLI_EXIT_USAGE;
    o.argc = argc - optind;
    if (o.repeat)
        return run_repeat(c, &o, argv + optind);
    r = run_once(c, &o, argv + optind, &id);
    return r < 0 ? CLI_EXIT_FAIL : r;
}
