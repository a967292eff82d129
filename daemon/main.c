/*
 * main.c - perflogd: parse options, load the config, open the database, run the sampler and the
 * writer, and handle the platform's requests (platform.h; on Linux SIGTERM/SIGINT: flush and exit
 * 0, SIGHUP: reload the config).
 */
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"
#include "config/config.h"
#include "daemon/notify.h"
#include "daemon/platform.h"
#include "daemon/queue.h"
#include "daemon/runs/runs.h"
#include "daemon/sampler.h"
#include "daemon/writer.h"
#include "storage/db.h"
#include "storage/db_lock.h"
#include "storage/query/live.h"
#include "storage/runs_db.h"
#include "web/http.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_TIMEOUT_MS 5000
#define LIVE_TICKS       600 /* ticks held in memory at most (10 min at 1 s), while unwritten */
#define MAX_OVERRIDES    16
#define MALLOC_ARENAS    1    /* see mem_limit_arenas in daemon_main */
#define READY_POLL_MS    200  /* under a service manager, until the first tick is stored */
#define STATUS_EVERY_MS  5000 /* how often STATUS= is refreshed */

/* Written ticks older than this leave memory and the API reads them from SQLite: enough for the
 * run manager, which follows the newest ticks every second, and small at any scale. */
#define LIVE_KEEP_MS 10000

static const char usage_text[] =
    "usage: perflogd [--config FILE] [--db PATH] [--listen ADDR:PORT] [--interval MS]\n"
    "                [--log-level error|warn|info|debug] [--root DIR]\n"
    "       perflogd --check-config FILE | --print-schema | --version | --help\n"
    "\n"
    "Samples disk, network, CPU and page-cache counters every interval into an SQLite file.\n"
    "Runs in the foreground; SIGTERM or SIGINT flushes and exits, SIGHUP reloads the config.\n"
    "\n"
    "  --config FILE    JSON config file (docs/configuration.md); built-in defaults without it\n"
    "  --db PATH        database file (default ./perflog.db)\n"
    "  --listen A:P     HTTP API address (default 127.0.0.1:9931)\n"
    "  --interval MS    sampling interval in milliseconds (default 1000)\n"
    "  --log-level L    error, warn, info (default) or debug\n"
    "  --root DIR       read /proc and /sys below DIR (for tests; default /)\n"
    "  --check-config F check config file F: print its errors and exit 1, or exit 0\n"
    "  --print-schema   print the database schema (SQL) and exit\n"
    "  --version        print the version and exit\n";

/* Command-line options that override config keys, kept so a reload applies them again. */
struct cli {
    const char *config_path;
    const char *check_path; /* --check-config FILE */
    int check;
    const char *keys[MAX_OVERRIDES], *values[MAX_OVERRIDES], *origins[MAX_OVERRIDES];
    size_t n;
};

static const struct {
    const char *option;
    const char *key;
} override_options[] = {
    {"--db", "db"},
    {"--listen", "listen"},
    {"--interval", "interval_ms"},
    {"--log-level", "log_level"},
    {"--root", "root"},
};

/* Returns 0 to run, 1 when a one-shot action was done (exit 0), 2 on a usage error, 3 when a
 * one-shot action failed (exit 1). */
static int parse_args(int argc, char **argv, struct cli *cli)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const char *eq = strchr(a, '=');
        size_t alen = eq ? (size_t)(eq - a) : strlen(a);
        int matched = 0;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            fputs(platform_usage(), stdout);
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            printf("perflogd %s\n", PERFLOG_VERSION);
            return 1;
        }
        if (strcmp(a, "--check-config") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "perflogd: --check-config needs a FILE\n");
                return 2;
            }
            cli->check = 1;
            cli->check_path = argv[++i];
            continue;
        }
        if (strcmp(a, "--print-schema") == 0) {
            char *sql = db_schema_sql();
            if (!sql)
                return 2;
            fputs(sql, stdout);
            free(sql);
            return 1;
        }
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[i + 1];
        if (alen == 8 && strncmp(a, "--config", 8) == 0) {
            if (!val) {
                fprintf(stderr, "perflogd: --config needs a FILE\n%s", usage_text);
                return 2;
            }
            cli->config_path = val;
            i += eq ? 0 : 1;
            continue;
        }
        for (size_t k = 0; k < sizeof(override_options) / sizeof(override_options[0]); k++) {
            if (strlen(override_options[k].option) != alen ||
                strncmp(a, override_options[k].option, alen) != 0)
                continue;
            if (!val) {
                fprintf(stderr, "perflogd: %s needs a value\n%s", override_options[k].option,
                        usage_text);
                return 2;
            }
            if (cli->n == MAX_OVERRIDES) {
                fprintf(stderr, "perflogd: too many options\n");
                return 2;
            }
            cli->keys[cli->n] = override_options[k].key;
            cli->values[cli->n] = val;
            cli->origins[cli->n] = override_options[k].option;
            cli->n++;
            i += eq ? 0 : 1;
            matched = 1;
            break;
        }
        if (!matched) {
            fprintf(stderr, "perflogd: unknown option '%s'\n%s", a, usage_text);
            return 2;
        }
    }
    return 0;
}

/* Defaults, then the file, then the command line. Returns 0 or -1 with the message in err. */
static int load_config(const struct cli *cli, struct cfg *c, char *err, size_t errlen)
{
    cfg_defaults(c);
    if (cli->config_path && cfg_load_file(c, cli->config_path, err, errlen) < 0)
        goto fail;
    for (size_t i = 0; i < cli->n; i++)
        if (cfg_override(c, cli->keys[i], cli->values[i], cli->origins[i], err, errlen) < 0)
            goto fail;
    return 0;
fail:
    cfg_release(c);
    return -1;
}

/* The config's errors, one a line, each as "perflogd: FILE:LINE:COL: ...". */
static void print_config_errors(const char *err)
{
    for (const char *p = err, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        fprintf(stderr, "perflogd: %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
        if (!nl)
            break;
    }
}

/* --check-config FILE: the checks of a start-up, the command-line options included, without
 * starting. 1 (exit 0) if good, 3 (exit 1) with the errors on stderr if not. */
static int check_config(const struct cli *cli)
{
    struct cli checked = *cli;
    struct cfg c;
    char err[16384];

    checked.config_path = cli->check_path;
    if (load_config(&checked, &c, err, sizeof(err)) < 0) {
        print_config_errors(err);
        return 3;
    }
    cfg_release(&c);
    printf("%s: ok\n", cli->check_path);
    return 1;
}

static void sampler_settings_of(const struct cfg *c, struct sampler_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->interval_ms = c->interval_ms;
    s->rt_priority = c->sampler_rt_priority;
    cfg_collector_config(c, &s->collect);
}

static void writer_settings_of(const struct cfg *c, struct writer_settings *s)
{
    s->commit_interval_ms = c->commit_interval_ms;
    s->tick_interval_ms = c->interval_ms;
    s->retention.raw_days = c->raw_days;
    s->retention.minute_days = c->minute_days;
    s->retention.hour_days = c->hour_days;
    s->retention.max_bytes = c->max_db_bytes;
    s->retention.chunk_after_s = c->chunk_after_minutes * 60;
}

/* Run `id` as its export needs it; web/export.c decides the window. */
static int run_window(void *arg, int64_t id, struct reader_run *out)
{
    struct runs_db_row row;
    int rc = runs_db_get(runs_table(arg), id, &row);

    if (rc < 0)
        return rc;
    snprintf(out->status, sizeof(out->status), "%s", row.status ? row.status : "");
    out->start_ms = row.start_ms;
    out->end_ms = row.end_ms != RUNS_DB_NULL ? row.end_ms : 0;
    out->settled_ms = row.settled_ms != RUNS_DB_NULL ? row.settled_ms : 0;
    out->pid = row.pid != RUNS_DB_NULL ? row.pid : -1;
    runs_db_row_release(&row);
    return 0;
}

/* What the API's health and /metrics read: the running threads' counters. */
struct daemon_parts {
    struct sampler *sp;
    struct writer *w;
    struct tick_queue *q;
    struct runs *runs;
    int64_t max_db_bytes; /* the cap at start (a reload changes the writer's, not this copy) */
    _Atomic uint64_t main_wakeups;   /* times the main thread came out of its wait for a signal */
    struct http_server *_Atomic srv; /* set once it serves (a request may come before that) */
};

static void daemon_stats(void *arg, struct api_stats *out)
{
    const struct daemon_parts *d = arg;
    struct sampler_stats ss;
    struct writer_stats ws;
    struct queue_stats qs;

    sampler_get_stats(d->sp, &ss);
    writer_get_stats(d->w, &ws);
    queue_get_stats(d->q, &qs);
    out->ticks = ss.ticks;
    out->missed = ss.missed;
    out->last_tick_wall_ms = ss.last_tick_wall_ms;
    out->last_collect_ns = ss.last_collect_ns;
    out->interval_ms = ss.interval_ms;
    out->written = ws.written;
    out->write_failures = ws.write_failures;
    out->writer_failing = ws.failing;
    out->last_error = ws.last_error;
    out->last_commit_wall_ms = ws.last_commit_wall_ms;
    out->db_used_bytes = ws.db_used_bytes;
    out->db_over_cap = ws.db_over_cap;
    out->writer_stmt_bytes = ws.db_stmt_bytes;
    out->writer_schema_bytes = ws.db_schema_bytes;
    out->writer_cache_bytes = ws.db_cache_bytes;
    out->wal_writes_in = ws.wal_writes_in;
    out->wal_writes_out = ws.wal_writes_out;
    out->wal_bytes = ws.wal_bytes;
    out->chunk_slices_cached = ws.slices_cached;
    out->chunk_slices_read = ws.slices_read;
    out->writer_span_cache_bytes = ws.span_cache_bytes;
    out->max_db_bytes = d->max_db_bytes;
    out->queued = qs.queued;
    out->in_flight = qs.in_flight;
    out->dropped = qs.dropped;
    out->wakeups_runs = d->runs ? runs_wakeups(d->runs) : 0;
    out->wakeups_main = atomic_load(&d->main_wakeups);
    out->writer_rests = ws.maint_rests;
    out->writer_resumes = ws.maint_resumes;
    out->writer_tick_rests = ws.tick_rests;
    memcpy(out->writer_work, ws.work, sizeof(out->writer_work));
    out->runs_table_open = d->runs ? runs_db_is_open(runs_table(d->runs)) : 0;
    out->http_readers_opened = http_readers_opened(atomic_load(&d->srv));
}

/*
 * Once the daemon is up, the pages of its binary's and libraries' code and constant data that
 * start-up touched are dropped from this process; they stay in the page cache, and what runs
 * afterwards maps its pages back as it runs (a minor fault each, a few hundred in all).
 * - Start-up runs much code once: the database's creation or migration and the checks of its
 *   schema, the configuration's parser, libmicrohttpd's and its TLS libraries' load-time
 *   initialisation. Debian's libmicrohttpd is built with TLS, so loading it loads gnutls and what
 *   gnutls needs (its constructor calls gnutls_global_init, so GNUTLS_NO_IMPLICIT_INIT changes
 *   nothing); perflogd serves no TLS and never calls them again.
 * - The kernel maps file pages 64 KiB around each fault, so much of a library's code is resident
 *   for one call into it.
 * Only clean pages are dropped (mem_drop_library_pages): Private_Dirty does not change.
 * bench/README.md measures it.
 */
static void drop_startup_pages(void)
{
    int64_t kib = mem_drop_library_pages(NULL);

    if (kib > 0)
        log_debug("memory: %lld KiB of start-up's code and constant data dropped from the "
                  "process (page cache)",
                  (long long)kib);
}

static int listen_is_loopback(const struct cfg *c)
{
    char host[256];
    int port;
    const char *why;

    return cfg_listen_parse(c->listen_addr, host, sizeof(host), &port, &why) == 0 &&
           http_host_is_loopback(host);
}

static int start_http(const struct cfg *c, const struct api_env *env, struct http_server **srv)
{
    struct http_settings hs = {0};
    char host[256], err[512];
    const char *why;
    int rc;

    if (cfg_listen_parse(c->listen_addr, host, sizeof(host), &hs.port, &why) < 0) {
        log_error("listen %s: %s", c->listen_addr, why);
        return -EINVAL;
    }
    hs.host = host;
    hs.threads = c->http_threads;
    hs.max_connections = c->max_connections;
    hs.timeout_s = c->connection_timeout_s;
    hs.header_timeout_s = c->header_timeout_s;
    hs.max_connections_per_ip = c->max_per_ip;
    hs.max_body_bytes = c->max_body_bytes;
    hs.max_url_bytes = c->max_url_bytes;
    rc = http_start(&hs, env, srv, err, sizeof(err));
    if (rc == 0 && env->listen_remote && !c->auth_token[0])
        log_warnx("listen %s: %s", c->listen_addr, HTTP_OPEN_WARNING);
    if (rc < 0)
        log_error("%s", err);
    else
        log_info("HTTP API on http://%s%s%s:%d/ (%d threads)", strchr(host, ':') ? "[" : "", host,
                 strchr(host, ':') ? "]" : "", hs.port, hs.threads);
    return rc;
}

/*
 * The service manager (sd_notify, notify.h): READY=1 once the database is open and the first tick
 * is stored, a one-line STATUS= every few seconds, and WATCHDOG=1 from the sampler's own loop so a
 * stuck sampler gets the service restarted. All no-ops when NOTIFY_SOCKET is unset.
 */
struct service {
    struct notify *n;          /* NULL: no service manager */
    int64_t watchdog_every_ns; /* half of WATCHDOG_USEC; 0: no watchdog */
    int64_t last_ping_ns;      /* sampler thread only */
    int ready;                 /* READY=1 sent; main thread only */
    int64_t next_status_ns;    /* main thread only */
};

static void service_open(struct service *svc)
{
    uint64_t usec = notify_watchdog_usec();

    memset(svc, 0, sizeof(*svc));
    svc->n = notify_new();
    if (svc->n && usec)
        svc->watchdog_every_ns = (int64_t)(usec / 2 * 1000);
}

/* sampler_settings.on_tick: runs on the sampler thread after each tick (and while it waits for a
 * long interval); pings at most every half watchdog period. Never blocks (notify_send). */
static void service_watchdog(void *arg)
{
    struct service *svc = arg;
    int64_t now = clock_mono_ns();

    if (now - svc->last_ping_ns < svc->watchdog_every_ns)
        return;
    svc->last_ping_ns = now;
    notify_send(svc->n, "WATCHDOG=1");
}

static void service_hook(struct service *svc, struct sampler_settings *ss)
{
    if (!svc->watchdog_every_ns)
        return;
    ss->on_tick = service_watchdog;
    ss->on_tick_arg = svc;
    ss->on_tick_idle_ms = svc->watchdog_every_ns / 2 / 1000000;
}

/* Send `prefix` (e.g. "READY=1\n") with the one-line STATUS=. */
static void service_status(struct service *svc, struct daemon_parts *d, const char *prefix)
{
    struct api_stats st;
    char msg[512];
    int len;

    daemon_stats(d, &st);
    len = snprintf(msg, sizeof(msg),
                   "%sSTATUS=sampling every %lld ms; %llu ticks stored, %llu missed, %llu queued",
                   prefix, (long long)st.interval_ms, (unsigned long long)st.written,
                   (unsigned long long)st.missed, (unsigned long long)st.queued);
    if (st.writer_failing && len > 0 && (size_t)len < sizeof(msg))
        snprintf(msg + len, sizeof(msg) - (size_t)len, "; database failing: %s",
                 strerror(-st.last_error));
    notify_send(svc->n, msg);
}

/* Main thread, when its wait times out: READY=1 once the first tick is stored, then the status.
 * Returns how long (ms) the main thread may wait for a signal before the next call; -1: forever
 * (no service manager, nothing to send). */
static int service_poll(struct service *svc, struct daemon_parts *d)
{
    struct writer_stats ws;
    int64_t now = clock_mono_ns();

    if (!svc->n)
        return -1;
    if (!svc->ready) {
        writer_get_stats(d->w, &ws);
        if (ws.written < 1)
            return READY_POLL_MS;
        svc->ready = 1;
        svc->next_status_ns = now + STATUS_EVERY_MS * 1000000LL;
        service_status(svc, d, "READY=1\n");
        return STATUS_EVERY_MS;
    }
    if (now >= svc->next_status_ns) {
        svc->next_status_ns = now + STATUS_EVERY_MS * 1000000LL;
        service_status(svc, d, "");
    }
    return (int)((svc->next_status_ns - now + 999999) / 1000000);
}

/* SIGHUP around a reload: RELOADING=1 (with the time, which systemd 253+ asks for), then READY=1
 * again, unless the first READY=1 is still to come. */
static void service_reloading(struct service *svc)
{
    char msg[64];

    snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%lld",
             (long long)(clock_mono_ns() / 1000));
    notify_send(svc->n, msg);
}

static void service_reloaded(struct service *svc, struct daemon_parts *d)
{
    if (svc->ready)
        service_status(svc, d, "READY=1\n");
}

/* SIGHUP: re-read the config; apply what can change live, log what needs a restart. */
/* The token settings in force (the API reads `live`), swapped by reload(); old ones are kept until
 * exit because an HTTP worker may still read them. Only the main thread writes. */
struct auth_store {
    _Atomic(struct api_auth *) live;
    struct api_auth *old[64];
    size_t nold;
};

static void publish_auth(struct auth_store *st, const struct cfg *c)
{
    struct api_auth *a = calloc(1, sizeof(*a)), *old;

    if (!a || st->nold == sizeof(st->old) / sizeof(st->old[0])) {
        free(a);
        log_warnx("reload: the auth token is not changed (too many reloads or out of memory); "
                  "restart perflogd to apply it");
        return;
    }
    memcpy(a->token, c->auth_token, sizeof(a->token));
    a->read = c->auth_read;
    old = atomic_exchange(&st->live, a);
    if (old)
        st->old[st->nold++] = old;
}

static void free_auth(struct auth_store *st)
{
    free(atomic_exchange(&st->live, NULL));
    for (size_t i = 0; i < st->nold; i++)
        free(st->old[i]);
    st->nold = 0;
}

/* Log each key a reload cannot apply to the running daemon. */
static void log_restart_keys(const struct cfg *cur, const struct cfg *next)
{
    if (strcmp(next->db, cur->db) != 0)
        log_warnx("reload: 'db' changed to %s; this takes effect only after a restart", next->db);
    if (strcmp(next->listen_addr, cur->listen_addr) != 0)
        log_warnx("reload: 'listen' changed to %s; this takes effect only after a restart",
                  next->listen_addr);
    if (next->http_threads != cur->http_threads || next->max_connections != cur->max_connections ||
        next->connection_timeout_s != cur->connection_timeout_s ||
        next->header_timeout_s != cur->header_timeout_s || next->max_per_ip != cur->max_per_ip ||
        next->max_body_bytes != cur->max_body_bytes || next->max_url_bytes != cur->max_url_bytes ||
        next->max_points != cur->max_points || next->request_timeout_s != cur->request_timeout_s)
        log_warnx("reload: the HTTP server settings changed; they take effect only after a "
                  "restart");
}

static void reload(const struct cli *cli, struct cfg *cur, struct sampler *sp, struct writer *w,
                   struct runs *runs, struct auth_store *auth)
{
    struct cfg next;
    struct sampler_settings ss;
    struct writer_settings ws;
    char err[16384];

    if (load_config(cli, &next, err, sizeof(err)) < 0) {
        /* one log line per error of the file */
        for (const char *p = err, *nl; *p; p = nl + 1) {
            nl = strchr(p, '\n');
            log_error("reload failed, keeping the running configuration: %.*s",
                      nl ? (int)(nl - p) : (int)strlen(p), p);
            if (!nl)
                break;
        }
        return;
    }
    log_restart_keys(cur, &next);
    if (strcmp(next.auth_token, cur->auth_token) != 0 || next.auth_read != cur->auth_read) {
        publish_auth(auth, &next);
        log_info("reload: the API's auth token settings changed");
    }
    log_set_level((enum log_level)next.log_level);
    sampler_settings_of(&next, &ss);
    sampler_reconfigure(sp, &ss);
    runs_reconfigure(runs, &ss.collect);
    writer_settings_of(&next, &ws);
    writer_reconfigure(w, &ws);
    /* Keep the running db and listen values: they are what is in force. */
    memcpy(next.db, cur->db, sizeof(next.db));
    memcpy(next.listen_addr, cur->listen_addr, sizeof(next.listen_addr));
    next.listen_port = cur->listen_port;
    cfg_release(cur);
    *cur = next;
    log_info("configuration reloaded");
}

static int daemon_main(int argc, char **argv)
{
    struct cli cli = {0};
    struct cfg cfg;
    struct sampler_settings ss;
    struct writer_settings ws;
    struct tick_queue *q = NULL;
    struct writer *w = NULL;
    struct sampler *sp = NULL;
    struct db *db = NULL;
    struct db_lock *lock = NULL;
    struct live *live = NULL;
    struct runs *runs = NULL;
    struct follow_set *follow = NULL;
    struct http_server *srv = NULL;
    struct daemon_parts parts = {0};
    struct auth_store auth = {0};
    struct service svc = {0};
    struct api_env env = {0};
    char err[16384], host[256] = "localhost"; /* a config file has up to 20 errors */
    /* The API reads these while a reload rewrites cfg: its own copies, fixed until restart (the
     * HTTP threads stop before this function returns). */
    char api_db[sizeof(cfg.db)], api_token[sizeof(cfg.auth_token)];
    const char *what = "";
    enum platform_request req;
    int rc, status = 1, wait_ms;

    rc = parse_args(argc, argv, &cli);
    if (rc == 0 && cli.check)
        rc = check_config(&cli);
    if (rc)
        return rc == 1 ? 0 : rc == 3 ? 1 : 2;
    if (load_config(&cli, &cfg, err, sizeof(err)) < 0) {
        print_config_errors(err);
        return 2;
    }
    log_set_level((enum log_level)cfg.log_level);
    platform_hostname(host, sizeof(host));

    /* Before any thread: a few threads allocate, none in a hot loop, so one heap serves them;
     * an arena per thread keeps each one's peak for itself (bench/rss_http.py measures it). */
    mem_limit_arenas(MALLOC_ARENAS);
    /* Stop and reload requests are taken synchronously by this thread; the workers never see
     * them. */
    rc = platform_requests_init();
    if (rc < 0) {
        log_error("cannot take stop and reload requests: %s", strerror(-rc));
        goto out;
    }

    /* One daemon per database: two writers would store every tick twice. */
    rc = db_lock_take(cfg.db, &lock, err, sizeof(err));
    if (rc == 0)
        rc = db_open(cfg.db, host, &db, err, sizeof(err));
    if (rc < 0) {
        log_error("%s", err);
        goto out;
    }
    q = queue_new((size_t)cfg.max_held_ticks);
    writer_settings_of(&cfg, &ws);
    if (!q || !(w = writer_start_take(db, q, &ws, err, sizeof(err)))) {
        log_error("%s", q ? err : "out of memory");
        goto out;
    }
    db = NULL; /* the writer's now: writer_stop closes it */
    sampler_settings_of(&cfg, &ss);
    service_open(&svc);
    service_hook(&svc, &ss);
    live = live_new(LIVE_TICKS);
    if (live)
        live_set_keep(live, LIVE_KEEP_MS);
    ss.follow = follow = follow_set_new();
    sp = live && follow ? sampler_start(&ss, q, live, err, sizeof(err)) : NULL;
    if (sp && !(runs = runs_start(cfg.db, live, follow, &ss.collect, cfg.interval_ms,
                                  clock_wall_ns() / 1000000, err, sizeof(err)))) {
        log_error("%s", err);
        sampler_stop(sp);
        sp = NULL;
        snprintf(err, sizeof(err), "the run manager did not start");
    }
    if (sp) {
        parts.sp = sp;
        parts.w = w;
        parts.q = q;
        parts.runs = runs;
        parts.max_db_bytes = cfg.max_db_bytes;
        memcpy(api_db, cfg.db, sizeof(api_db));
        memcpy(api_token, cfg.auth_token, sizeof(api_token));
        publish_auth(&auth, &cfg);
        env = (struct api_env){.host = host,
                               .version = PERFLOG_VERSION,
                               .cpu_ticks_per_s = collector_cpu_ticks_per_s(),
                               .db_path = api_db,
                               .interval_ms = cfg.interval_ms,
                               .start_wall_ms = clock_wall_ns() / 1000000,
                               .auth_token = api_token,
                               .auth = &auth.live,
                               .auth_read = cfg.auth_read,
                               .max_points = cfg.max_points,
                               .request_timeout_ms = (int64_t)cfg.request_timeout_s * 1000,
                               .live = live,
                               .stats = daemon_stats,
                               .stats_arg = &parts,
                               .runs = runs,
                               .run_window = run_window,
                               .run_window_arg = runs,
                               .listen_remote = !listen_is_loopback(&cfg)};
    }
    if (!sp || start_http(&cfg, &env, &srv) < 0) {
        if (!sp)
            log_error("%s", live && follow ? err : "out of memory");
        goto out;
    }
    atomic_store(&parts.srv, srv);
    drop_startup_pages();
    log_info("perflogd %s on %s: sampling every %lld ms into %s", PERFLOG_VERSION, host,
             (long long)cfg.interval_ms, cfg.db);
    /* Opening the database (a migration, the schema's checks) freed more than it keeps. */
    mem_trim_ask();

    /* The main thread sleeps until a signal (a service-control event on Windows), or until the
     * service manager is due a READY=1 or STATUS= line; without one it has no deadline. */
    wait_ms = service_poll(&svc, &parts);
    for (;;) {
        req = platform_request_wait(wait_ms, &what);
        atomic_fetch_add(&parts.main_wakeups, 1);
        if (req == PLATFORM_NONE) {
            wait_ms = service_poll(&svc, &parts);
            continue;
        }
        if (req == PLATFORM_RELOAD) {
            log_info("%s: reloading %s", what,
                     cli.config_path ? cli.config_path : "(no config file, defaults)");
            service_reloading(&svc);
            reload(&cli, &cfg, sp, w, runs, &auth);
            service_reloaded(&svc, &parts);
            continue;
        }
        log_info("%s: flushing and exiting", what);
        notify_send(svc.n, "STOPPING=1");
        break;
    }
    status = 0;
out:
    /* One teardown for every path, in the reverse order of the start; each accepts NULL. The
     * HTTP threads go first (they read the run manager and the live ring), the writer after the
     * sampler (it drains what the sampler queued), the lock last. */
    http_stop(srv);
    runs_stop(runs);
    sampler_stop(sp);
    writer_stop(w, FLUSH_TIMEOUT_MS);
    db_close(db);
    queue_free(q);
    live_free(live);
    follow_set_free(follow);
    free_auth(&auth);
    notify_free(svc.n);
    db_lock_release(lock);
    cfg_release(&cfg);
    if (status == 0)
        log_info("stopped");
    return status;
}

int main(int argc, char **argv)
{
    return platform_main(argc, argv, daemon_main);
}
