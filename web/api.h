/*
 * api.h - the HTTP API of docs/design.md §5 as pure functions: a request struct in, a status and a
 * body out. web/http.c does the sockets; the handlers here are unit-tested without them.
 *
 * Routing is a table (api.c). Every error is {"error": {"code", "message"}} with its status.
 */
#ifndef PERFLOG_API_H
#define PERFLOG_API_H

#include "base/printf_attr.h"
#include "storage/db.h"
#include "storage/query/live.h"
#include "storage/reader.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct runs;

struct api_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* "/api/v1/data", without the query */
    const char *query;  /* raw query string after '?', not decoded; "" if none */
    size_t query_len;
    const char *authorization; /* the Authorization header, or NULL */
    const char *body;          /* request body (may be NULL when body_len is 0) */
    size_t body_len;
    int remote; /* the client is not on a loopback address: writes need a token */
    /* Non-zero once the answer is no longer wanted: the client hung up, or the server is
     * stopping. A handler or stream doing long work polls it and gives up; the flag outlives the
     * answer's stream (until stream_free). NULL: never cancelled (tests). */
    const _Atomic int *cancel;
};

struct api_response {
    int status;
    const char *content_type; /* static string */
    char *body;               /* malloc'd; the caller frees it */
    size_t body_len;
    const char *allow; /* static; the Allow header of a 405, else NULL */
    /* A streamed answer (status 200, body NULL): the server calls stream(ctx, buf, max) until it
     * returns 0 (end) or a negative errno (abort the connection), then stream_free(ctx). Called
     * from the thread that ran api_handle. */
    ssize_t (*stream)(void *ctx, char *buf, size_t max);
    void (*stream_free)(void *ctx);
    void *stream_ctx;
    char disposition[160]; /* Content-Disposition header, "" for none */
    /* Cache-Control, static; NULL: "no-store" (every API answer is live data). The dashboard's
     * files set their own. */
    const char *cache_control;
    const char *csp; /* Content-Security-Policy, static; NULL: none (only the page sets one) */
};

/* The daemon's counters, for health and /metrics. */
struct api_stats {
    uint64_t ticks, missed, written, write_failures, dropped;
    uint64_t queued, in_flight;
    int writer_failing, last_error; /* last_error: negative errno of the last write failure */
    int64_t last_tick_wall_ms, last_collect_ns, last_commit_wall_ms;
    int64_t interval_ms; /* in force (a reload may change it); 0: use env->interval_ms */
    int64_t db_used_bytes, max_db_bytes; /* the size cap (max 0: none) */
    int db_over_cap;                     /* over the cap with nothing left to prune */
    uint64_t wakeups_runs, wakeups_main; /* times those threads left their waits (debug) */
    uint64_t writer_rests;               /* the writer's rests between maintenance steps (debug) */
    uint64_t writer_resumes;             /* maintenance backlogs taken up after a write (debug) */
    uint64_t writer_tick_rests;          /* rests inside a transaction of ticks (debug) */
    int runs_table_open;                 /* the runs table's connection is open (runs_db_hold) */
    uint64_t http_readers_opened;        /* read connections the HTTP workers have opened */
    /* SQLite's memory on the writer's connection at its last maintenance (0 before): prepared
     * statements, schema, page cache */
    int64_t writer_stmt_bytes, writer_schema_bytes, writer_cache_bytes;
    int64_t wal_writes_in, wal_writes_out, wal_bytes; /* the writer's WAL, storage/walbuf.h */
    /* the chunk steps' slices coded from the writer's span cache and read back from the tables,
     * and the cache's bytes (storage/span_cache.h), as of the writer's last maintenance */
    int64_t chunk_slices_cached, chunk_slices_read, writer_span_cache_bytes;
    /* the writer's work by kind, in its thread's CPU time, as of its last maintenance */
    struct db_work writer_work[DB_WORK_KINDS];
};

/* The token settings; a reload publishes a new one (api_env.auth), never changes one in place. */
struct api_auth {
    char token[256]; /* "" = no authentication */
    int read;        /* GETs need the token too */
};

/* What the handlers may read. Immutable while the server runs, except through `stats` and the
 * token settings `auth` points to. */
struct api_env {
    const char *host, *version, *db_path;
    /* The unit of the Processor object's cumulative fields, from the collector the daemon runs
     * (collector_cpu_ticks_per_s); <= 0: /metrics leaves perflog_cpu_seconds_total out. Given,
     * not asked for, so that the HTTP side does not depend on a platform's collector. */
    long cpu_ticks_per_s;
    int64_t interval_ms;
    int64_t start_wall_ms;
    const char *auth_token; /* NULL or "": no authentication (when `auth` is NULL) */
    int auth_read;          /* GETs need the token too (when `auth` is NULL) */
    /* When not NULL, the token settings in force, swapped atomically by a reload; an api_auth is
     * never freed while the server runs. */
    _Atomic(struct api_auth *) *auth;
    int64_t max_points;         /* per series, for /data */
    int64_t request_timeout_ms; /* a streamed answer (an export) ends after this; 0: never */
    struct live *live;          /* the newest ticks; may be NULL */
    void (*stats)(void *arg, struct api_stats *out); /* may be NULL: all zero */
    void *stats_arg;
    int64_t (*now_ms)(void); /* UTC clock; tests pass a fixed one */
    /* Run `id` as its export needs it (export_run_window decides the window). 0, -ENOENT or -EIO.
     * May be NULL (no runs). */
    int (*run_window)(void *arg, int64_t id, struct reader_run *out);
    void *run_window_arg;
    struct runs *runs; /* the run manager (daemon/runs.h); NULL: the runs routes answer 503 */
    int listen_remote; /* the API listens beyond loopback: health warns while there is no token */
};

/*
 * Answer one request. `rd` is the calling thread's own read connection, NULL if the database
 * could not be opened (handlers that need it answer 503). Returns 0 with *out filled, or -ENOMEM
 * (out untouched; the caller answers 500). Thread-safe for distinct `rd`.
 */
int api_handle(const struct api_env *env, struct reader *rd, const struct api_request *rq,
               struct api_response *out);

/* Health's warning (and the daemon's at start) for a non-loopback listener without a token. */
#define HTTP_OPEN_WARNING                                                                          \
    "the API listens beyond loopback without auth_token: anyone who can reach it reads the "       \
    "data; POST and DELETE from other hosts are refused until a token is set"

/* Fill *out with a JSON error. `code` is a short machine word ("bad_time"); printf-style message.
 * Returns 0 or -ENOMEM. */
int api_error(struct api_response *out, int status, const char *code, const char *fmt, ...)
    PERFLOG_PRINTF(4, 5);

/* The wall clock of env (env->now_ms, or the real one), UTC ms since the epoch. */
int64_t api_now_ms(const struct api_env *env);

/* Compare a presented Authorization header with "Bearer TOKEN" in time independent of where they
 * differ. 1 if it matches. */
int api_auth_ok(const char *authorization, const char *token);

#endif
