/*
 * runs.c - the run manager; see runs.h.
 *
 * The level at start is the dirty + writeback value of the tick at or just before start_ms (the
 * state the run began from: a tick after the start already holds the run's first writes); when the
 * ring holds no such tick, the first tick after the start stands in. The peak is the highest value
 * above that level seen from then on. An ended run is settled when a tick after its end is back
 * within max(8 MiB, 5% of the peak) of the level, or when its settle timeout has passed since the
 * end: a plateau above the level (dirty pages waiting out vm.dirty_expire_centisecs) keeps it
 * waiting.
 *
 * That level is the whole system's, so another process's dirty pages would hold a run open. The
 * wait therefore also ends on the run's OWN data: Linux counts no dirty pages per process, so the
 * rule is that the run's own writes are on the device when the whole disks have written, since
 * the start edge, the run's own write_bytes (the client's tree totals, else the followed
 * processes between the edges) less max(1 MiB, 1%): a few KiB of its own metadata or log, dirty
 * for 30 s, must not hold a run open when another process's dirty pages hold the level up. A run
 * that wrote nothing is settled at its end. Whichever rule ends the wait first ends it, and the
 * settle edge is taken at that instant; the edge records which rule it was ("ended_by":
 * own_written, dirty_level or timeout, the last when the cap ended the wait).
 */
#include "daemon/runs/runs.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/monocond.h"
#include "daemon/runs/pid_alive.h"
#include "daemon/runs/report.h"
#include "daemon/runs/report_io.h"
#include "daemon/runs/run_edges.h"
#include "storage/reader.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The manager sleeps without a deadline while no run is open; the API kicks it when a run is
 * opened or ended. An ending run is looked at every WAKE_MS: each new tick or disk write may
 * settle it. A running run only needs its ticks taken into the peak before the live ring drops
 * them: every FOLLOW_MS (the ring holds 600 ticks, 60 s at the shortest interval, 100 ms; a
 * fast-forwarded test sampler shortens that in real time, so the margin is wide). */
#define WAKE_MS             250
#define FOLLOW_MS           1000
#define SETTLE_SLACK_KB     8192 /* 8 MiB */
#define SETTLE_SHARE        0.05
#define OWN_SLACK_BYTES     (1 << 20) /* own data counts as written within max(1 MiB, 1%) */
#define LEVEL_LOOKBACK      60000     /* how far before the start a tick may stand for the level */
#define TICKS_PER_STEP      64
#define SETTLE_TICK_WAIT_MS 10000 /* how long a settled run's report waits for its tick */

/* What the manager knows of one open run; manager thread only. */
struct track {
    int64_t id;
    int have_level;
    int64_t level_kb, peak_kb; /* peak above the level */
    int64_t cur_kb, cur_ms;    /* the newest tick seen; cur_ms 0: none yet */
    int64_t last_ms;           /* ticks up to this wall time are seen */
    int seen;                  /* mark of the current pass */
    int have_edges;            /* the two below are read (once the run has ended) */
    json_t *start_edge;        /* the start edge's disks ({"disks": ...}); NULL none */
    int64_t own_w;             /* the run's own write_bytes; -1 not known */
    int64_t settle_ms;         /* the settle edge's instant once the wait has ended; 0 before */
};

/*
 * Whether an open run's processes are followed, from runs_follow to its stored report. Kept in
 * memory only (the runs table has no column for it): a run still open when the daemon stops has
 * its report say "not known". Guarded by runs.notes_lock: the API's threads write it, the
 * manager reads it.
 */
struct follow_note {
    int64_t id;
    int followed;
    char why[RUNS_WHY_MAX];
};

struct runs {
    struct runs_db *db;
    struct live *live;
    struct follow_set *follow; /* may be NULL; thread-safe itself */
    struct run_edges *edges;   /* NULL: no edges taken; thread-safe itself */
    int64_t interval_ms;
    char *db_path;
    struct track *tr; /* manager thread only */
    size_t ntr, cap;
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop, kicked, wakeups */
    pthread_cond_t cond;
    int stop, kicked;
    uint64_t wakeups;           /* times the manager came out of its wait */
    pthread_mutex_t notes_lock; /* guards notes, nnotes, notes_cap */
    struct follow_note *notes;
    size_t nnotes, notes_cap;
};

struct runs_db *runs_table(struct runs *rs)
{
    return rs->db;
}

uint64_t runs_wakeups(struct runs *rs)
{
    uint64_t n;

    pthread_mutex_lock(&rs->lock);
    n = rs->wakeups;
    pthread_mutex_unlock(&rs->lock);
    return n;
}

void runs_kick(struct runs *rs)
{
    pthread_mutex_lock(&rs->lock);
    rs->kicked = 1;
    pthread_cond_signal(&rs->cond);
    pthread_mutex_unlock(&rs->lock);
}

/* Dirty + writeback of tick t in KiB, or -1 when it has no Memory row or no value. */
static int64_t dirty_kb(const struct tick *t)
{
    const struct tick_object *o = &t->obj[OBJ_MEMORY];
    const uint64_t need = (1ull << MEM_DIRTY_KB) | (1ull << MEM_WRITEBACK_KB);

    if (o->n < 1 || (o->rows[0].null_mask & need))
        return -1;
    return o->rows[0].v[MEM_DIRTY_KB] + o->rows[0].v[MEM_WRITEBACK_KB];
}

static struct track *track_of(struct runs *rs, int64_t id)
{
    struct track *nt;

    for (size_t i = 0; i < rs->ntr; i++)
        if (rs->tr[i].id == id)
            return &rs->tr[i];
    if (rs->ntr == rs->cap) {
        nt = realloc(rs->tr, (rs->cap ? rs->cap * 2 : 8) * sizeof(*nt));
        if (!nt)
            return NULL;
        rs->tr = nt;
        rs->cap = rs->cap ? rs->cap * 2 : 8;
    }
    memset(&rs->tr[rs->ntr], 0, sizeof(rs->tr[0]));
    rs->tr[rs->ntr].id = id;
    return &rs->tr[rs->ntr++];
}

/* The level: the tick at or just before the start, else the first one after it. */
static void find_level(struct runs *rs, struct track *tk, int64_t start_ms)
{
    struct tick *buf[TICKS_PER_STEP];
    size_t n = live_range(rs->live, start_ms - LEVEL_LOOKBACK, start_ms, buf, TICKS_PER_STEP, NULL);
    int64_t v = -1, at = 0;

    for (size_t i = 0; i < n; i++) {
        if (dirty_kb(buf[i]) >= 0) {
            v = dirty_kb(buf[i]);
            at = buf[i]->wall_ms;
        }
        tick_free(buf[i]);
    }
    if (v < 0) {
        n = live_range(rs->live, start_ms, INT64_MAX, buf, 1, NULL);
        if (n) {
            v = dirty_kb(buf[0]);
            at = buf[0]->wall_ms;
            tick_free(buf[0]);
        }
    }
    if (v < 0)
        return;
    tk->have_level = 1;
    tk->level_kb = tk->cur_kb = v;
    tk->last_ms = at;
}

/* Take the ticks newer than tk->last_ms into the peak and the current value. */
static void follow(struct runs *rs, struct track *tk)
{
    struct tick *buf[TICKS_PER_STEP];
    size_t n;

    do {
        n = live_range(rs->live, tk->last_ms + 1, INT64_MAX, buf, TICKS_PER_STEP, NULL);
        for (size_t i = 0; i < n; i++) {
            int64_t v = dirty_kb(buf[i]);

            if (v >= 0) {
                if (v - tk->level_kb > tk->peak_kb)
                    tk->peak_kb = v - tk->level_kb;
                tk->cur_kb = v;
                tk->cur_ms = buf[i]->wall_ms;
            }
            tk->last_ms = buf[i]->wall_ms;
            tick_free(buf[i]);
        }
    } while (n == TICKS_PER_STEP);
}

/* Keep (or replace) run id's note. A note that cannot be kept (out of memory) makes the report
 * say "not known", which is true. */
static void note_put(struct runs *rs, int64_t id, int followed, const char *why)
{
    struct follow_note *n = NULL;

    pthread_mutex_lock(&rs->notes_lock);
    for (size_t i = 0; i < rs->nnotes && !n; i++)
        if (rs->notes[i].id == id)
            n = &rs->notes[i];
    if (!n && rs->nnotes == rs->notes_cap) {
        size_t cap = rs->notes_cap ? rs->notes_cap * 2 : 16;
        struct follow_note *nn = realloc(rs->notes, cap * sizeof(*nn));

        if (nn) {
            rs->notes = nn;
            rs->notes_cap = cap;
        }
    }
    if (!n && rs->nnotes < rs->notes_cap)
        n = &rs->notes[rs->nnotes++];
    if (n) {
        n->id = id;
        n->followed = followed;
        snprintf(n->why, sizeof(n->why), "%s", why ? why : "");
    }
    pthread_mutex_unlock(&rs->notes_lock);
}

/* 1 followed, -1 not (why in `why`), 0 not known (no note: the daemon restarted, or no pid). */
static int note_get(struct runs *rs, int64_t id, char *why, size_t whylen)
{
    int followed = 0;

    pthread_mutex_lock(&rs->notes_lock);
    for (size_t i = 0; i < rs->nnotes; i++)
        if (rs->notes[i].id == id) {
            followed = rs->notes[i].followed ? 1 : -1;
            snprintf(why, whylen, "%s", rs->notes[i].why);
        }
    pthread_mutex_unlock(&rs->notes_lock);
    return followed;
}

static int64_t or_minus1(int64_t v)
{
    return v == RUNS_DB_NULL ? -1 : v;
}

/* The stored edges of run `id` as {"start":..., "end":..., "settle":..., "kernel":...}, or NULL
 * when none was stored. */
static json_t *load_edges(struct runs *rs, int64_t id)
{
    char *texts[RUNS_EDGES];
    json_t *j = NULL;

    if (runs_db_get_edges(rs->db, id, texts) < 0)
        return NULL;
    for (int i = 0; i < RUNS_EDGES; i++) {
        json_t *e = texts[i] ? json_loads(texts[i], 0, NULL) : NULL;

        if (e && !j)
            j = json_object();
        if (e)
            json_object_set_new(j, runs_db_edge_names[i], e);
        free(texts[i]);
    }
    if (j && !json_object_get(j, "start")) { /* edges without a start are no window */
        json_decref(j);
        j = NULL;
    }
    return j;
}

/* Read what the own-data rule needs, once the run has ended: the start edge's device writes and
 * the run's own write_bytes. */
static void edges_of(struct runs *rs, struct track *tk, const struct runs_db_row *row)
{
    json_t *e;

    if (tk->have_edges)
        return;
    json_decref(tk->start_edge);
    tk->start_edge = NULL;
    tk->own_w = -1;
    e = load_edges(rs, row->id);
    /* The API stores the end edge just after it marks the run ending: until it is there, look
     * again at the next pass (the followed processes' bytes need it). */
    tk->have_edges = !e || json_object_get(e, "end");
    if (!e)
        return;
    tk->start_edge =
        json_pack("{s:O}", "disks", json_object_get(json_object_get(e, "start"), "disks"));
    tk->own_w = row->storage_write_bytes != RUNS_DB_NULL
                    ? row->storage_write_bytes
                    : report_io_procs_delta(json_object_get(e, "start"), json_object_get(e, "end"),
                                            "write_bytes");
    json_decref(e);
}

/* Take the settle edge now, store it with the rule that ended the wait; its instant, or 0. */
static int64_t settle_edge(struct runs *rs, const struct runs_db_row *row, const char *ended_by)
{
    json_t *e = runs_take_edge(rs, row->pid != RUNS_DB_NULL ? row->pid : 0, NULL);
    int64_t t_ms;

    if (!e)
        return 0;
    json_object_set_new(e, "ended_by", json_string(ended_by));
    t_ms = json_integer_value(json_object_get(e, "t_ms"));
    runs_put_edge(rs, row->id, RUNS_EDGE_SETTLE, e);
    return t_ms;
}

/* The wait of `row` has ended by rule `ended_by`: take the settle edge (its instant, or
 * `fallback_ms` when no edge can be taken); the report follows once a tick covers it. */
static void settle(struct runs *rs, struct track *tk, const struct runs_db_row *row,
                   const char *ended_by, int64_t fallback_ms)
{
    int64_t t_ms = settle_edge(rs, row, ended_by);

    tk->settle_ms = t_ms > 0 ? t_ms : fallback_ms;
}

/* Compute the report of `row` (its tail ends at settled_ms) and store it with the status.
 * Returns 1 when the run is done with (its report is final, or it is gone), else 0: retry. */
static int store_report(struct runs *rs, const struct runs_db_row *row, int64_t settled_ms,
                        const char *status)
{
    struct report_run run = {
        .id = row->id,
        .label = row->label,
        .command = row->command,
        .host = row->host,
        .status = status ? status : row->status,
        .start_ms = row->start_ms,
        .end_ms = or_minus1(row->end_ms),
        .settled_ms = or_minus1(settled_ms),
        .exit_code = or_minus1(row->exit_code),
        .payload_bytes = or_minus1(row->payload_bytes),
        .files = or_minus1(row->files),
        .tool_output = row->tool_output,
        .io_read_bytes = or_minus1(row->io_read_bytes),
        .io_write_bytes = or_minus1(row->io_write_bytes),
        .storage_read_bytes = or_minus1(row->storage_read_bytes),
        .storage_write_bytes = or_minus1(row->storage_write_bytes),
        .pid = or_minus1(row->pid),
    };
    char err[512] = "", why[RUNS_WHY_MAX] = "";
    struct reader *rd;
    json_t *j, *edges;
    char *s;
    int rc;

    run.followed = note_get(rs, row->id, why, sizeof(why));
    run.not_followed_reason = why;
    run.edges = edges = load_edges(rs, row->id);
    /* A reader for this report only: a connection holds the parsed schema (0.4 MiB), and
     * reports are minutes apart. */
    if (reader_open(rs->db_path, &rd, err, sizeof(err)) < 0) {
        log_warnx("run %lld: the report reads no stored data: %s", (long long)row->id, err);
        rd = NULL;
    }
    j = report_compute(rd, rs->live, rs->interval_ms, &run, err, sizeof(err));
    reader_close(rd);
    mem_trim_ask(); /* a report reads much of the run's data */
    json_decref(edges);
    if (!j) /* stored anyway, so the run does not come back every pass */
        j = json_pack("{s:s}", "error", err[0] ? err : "the report could not be computed");
    s = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
    json_decref(j);
    if (!s) {
        log_warnx("run %lld: out of memory for its report", (long long)row->id);
        return 0;
    }
    rc = runs_db_set_report(rs->db, row->id, status ? settled_ms : RUNS_DB_NULL, status, s);
    free(s);
    if (rc < 0 && rc != -ENOENT)
        log_warnx("run %lld: cannot store its report: %s", (long long)row->id,
                  runs_db_errmsg(rs->db));
    else if (rc == 0)
        log_info("run %lld: %s, report stored", (long long)row->id, status ? status : row->status);
    if (rc == 0 || rc == -ENOENT) { /* the report is final, or the run is gone */
        runs_forget(rs, row->id);
        return 1;
    }
    return 0;
}

/* One open run: follow it; settle it when it has ended and the dirty data is back down. Returns
 * how soon (ms) it needs another look. */
static int64_t step_run(struct runs *rs, const struct runs_db_row *row, int64_t now_ms)
{
    struct track *tk = track_of(rs, row->id);
    int64_t timeout_s =
        row->settle_timeout_s != RUNS_DB_NULL ? row->settle_timeout_s : RUNS_SETTLE_DEFAULT_S;
    double slack;

    if (!tk)
        return WAKE_MS;
    tk->seen = 1;
    if (!tk->have_level)
        find_level(rs, tk, row->start_ms);
    if (tk->have_level)
        follow(rs, tk);
    if (strcmp(row->status, "ending") != 0 || row->end_ms == RUNS_DB_NULL)
        return FOLLOW_MS;
    /* The report waits for the tick that covers the settle instant (the first at or after it:
     * ticks hold the second before them), so its tick figures see the whole run and tail; that
     * tick's time is the run's settled_ms, the settle edge the exact instant. */
    if (tk->settle_ms > 0) {
        if (tk->last_ms >= tk->settle_ms)
            return store_report(rs, row, tk->last_ms, "settled") ? -1 : WAKE_MS;
        if (now_ms - tk->settle_ms > SETTLE_TICK_WAIT_MS) /* no ticks: the sampler stalls */
            return store_report(rs, row, tk->settle_ms, "settled") ? -1 : WAKE_MS;
        return WAKE_MS;
    }
    edges_of(rs, tk, row);
    if (tk->own_w >= 0 && tk->start_edge && rs->edges) {
        int64_t own_slack = tk->own_w / 100 > OWN_SLACK_BYTES ? tk->own_w / 100 : OWN_SLACK_BYTES;
        json_t *now = run_edges_now(rs->edges);
        int64_t written = now ? report_io_disk_delta(tk->start_edge, now, "write_bytes") : -1;
        int64_t t_ms = json_integer_value(json_object_get(now, "t_ms"));

        json_decref(now);
        if (written >= 0 && written >= tk->own_w - own_slack) {
            settle(rs, tk, row, "own_written", t_ms);
            return 0; /* its report may be due at once */
        }
    }
    slack = (double)tk->peak_kb * SETTLE_SHARE;
    if (slack < SETTLE_SLACK_KB)
        slack = SETTLE_SLACK_KB;
    if (tk->have_level && tk->cur_ms > row->end_ms &&
        (double)(tk->cur_kb - tk->level_kb) <= slack) {
        settle(rs, tk, row, "dirty_level", tk->cur_ms);
        return 0;
    }
    if (now_ms - row->end_ms >= timeout_s * 1000) {
        settle(rs, tk, row, "timeout", tk->cur_ms > row->end_ms ? tk->cur_ms : now_ms);
        return 0;
    }
    return WAKE_MS;
}

/* Drop the tracks of runs no longer open (settled, deleted). */
static void sweep(struct runs *rs)
{
    size_t k = 0;

    for (size_t i = 0; i < rs->ntr; i++)
        if (rs->tr[i].seen) {
            rs->tr[i].seen = 0;
            rs->tr[k++] = rs->tr[i];
        } else
            json_decref(rs->tr[i].start_edge);
    rs->ntr = k;
}

/* Keep the sooner of two waits in ms (-1: none). */
static int64_t sooner(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* One pass over the open runs. Returns how soon (ms) the next pass is due, -1 when nothing is
 * due until the API kicks the manager (no run open). */
static int64_t step(struct runs *rs)
{
    struct runs_db_row *rows;
    size_t n;
    int64_t now_ms = clock_wall_ns() / 1000000, due = -1;

    if (runs_db_list(rs->db, 1, &rows, &n) < 0) {
        log_warnx("runs: cannot read the runs table: %s", runs_db_errmsg(rs->db));
        return WAKE_MS;
    }
    for (size_t i = 0; i < n; i++) {
        const struct runs_db_row *row = &rows[i];

        if (!row->status || row->start_ms == RUNS_DB_NULL)
            continue;
        if (!strcmp(row->status, "running") || !strcmp(row->status, "ending"))
            due = sooner(due, step_run(rs, row, now_ms));
        else if (!store_report(rs, row, row->end_ms, NULL)) /* interrupted, failed: no tail */
            due = sooner(due, WAKE_MS);
    }
    runs_db_rows_free(rows, n);
    sweep(rs);
    return due;
}

static void *manager_main(void *arg)
{
    struct runs *rs = arg;
    struct timespec ts;
    int64_t due;

    pthread_setname_np(pthread_self(), "perflog-runs");
    for (;;) {
        /* The runs table's connection is held open while a run is open, closed (and its parsed
         * schema freed) while the manager sleeps with none: the API's calls then open it for
         * themselves. */
        runs_db_hold(rs->db, 1);
        due = step(rs);
        runs_db_hold(rs->db, due >= 0);
        pthread_mutex_lock(&rs->lock);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += due / 1000;
        ts.tv_nsec += (due % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        /* A kick that came during the pass is seen here: kicked stays set until taken. */
        while (!rs->stop && !rs->kicked && due != 0)
            if (due < 0 ? pthread_cond_wait(&rs->cond, &rs->lock)
                        : monocond_timedwait(&rs->cond, &rs->lock, &ts) == ETIMEDOUT)
                break;
        rs->kicked = 0;
        rs->wakeups++;
        if (rs->stop) {
            pthread_mutex_unlock(&rs->lock);
            return NULL;
        }
        pthread_mutex_unlock(&rs->lock);
    }
}

static void runs_free(struct runs *rs)
{
    runs_db_close(rs->db);
    run_edges_free(rs->edges);
    pthread_cond_destroy(&rs->cond);
    pthread_mutex_destroy(&rs->lock);
    pthread_mutex_destroy(&rs->notes_lock);
    free(rs->notes);
    free(rs->db_path);
    for (size_t i = 0; i < rs->ntr; i++)
        json_decref(rs->tr[i].start_edge);
    free(rs->tr);
    free(rs);
}

struct runs *runs_start(const char *db_path, struct live *live, struct follow_set *follow,
                        const struct collector_config *collect, int64_t interval_ms,
                        int64_t start_wall_ms, char *err, size_t errlen)
{
    struct runs *rs = calloc(1, sizeof(*rs));
    int rc;

    if (!rs || !(rs->db_path = strdup(db_path))) {
        free(rs);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    rs->live = live;
    rs->follow = follow;
    rs->interval_ms = interval_ms;
    if (collect && !(rs->edges = run_edges_new(collect)))
        log_warnx("runs: out of memory for the edge reader: runs get no edges");
    pthread_mutex_init(&rs->lock, NULL);
    pthread_mutex_init(&rs->notes_lock, NULL);
    monocond_init(&rs->cond);
    if (runs_db_open(db_path, &rs->db, err, errlen) < 0) {
        runs_free(rs);
        return NULL;
    }
    rc = runs_db_close_open_runs_at_start(rs->db, start_wall_ms);
    if (rc < 0)
        log_warnx("runs: cannot close the runs left open: %s", runs_db_errmsg(rs->db));
    else if (rc > 0)
        log_info("runs: %d run(s) left open by the previous daemon closed as interrupted", rc);
    rc = pthread_create(&rs->thread, NULL, manager_main, rs);
    if (rc) {
        snprintf(err, errlen, "cannot start the run manager: %s", strerror(rc));
        runs_free(rs);
        return NULL;
    }
    return rs;
}

int runs_follow(struct runs *rs, int64_t id, int64_t pid, int64_t since_wall_ms, char *why,
                size_t whylen)
{
    int rc;

    if (pid <= 0) { /* nothing to note: the report sees the run has no pid */
        snprintf(why, whylen, "the run gave no pid");
        return 0;
    }
    if (!rs->follow)
        snprintf(why, whylen, "this server does not follow processes");
    else if (pid > INT_MAX || !pid_alive((int)pid))
        snprintf(why, whylen, "no process %lld is running on this host", (long long)pid);
    else if ((rc = follow_add(rs->follow, id, (int)pid, since_wall_ms)) == 0) {
        note_put(rs, id, 1, NULL);
        return 1;
    } else if (rc == -ENOSPC)
        snprintf(why, whylen,
                 "%d runs are followed already, the most perflogd follows at once; end one "
                 "before starting another",
                 COLLECTOR_MAX_ROOTS);
    else
        snprintf(why, whylen, "pid %lld cannot be followed", (long long)pid);
    log_warnx("runs: run %lld: its processes are not followed: %s", (long long)id, why);
    note_put(rs, id, 0, why);
    return 0;
}

void runs_unfollow(struct runs *rs, int64_t id)
{
    if (rs->follow)
        follow_remove(rs->follow, id);
}

void runs_forget(struct runs *rs, int64_t id)
{
    pthread_mutex_lock(&rs->notes_lock);
    for (size_t i = 0; i < rs->nnotes; i++)
        if (rs->notes[i].id == id) {
            rs->notes[i] = rs->notes[--rs->nnotes];
            break;
        }
    pthread_mutex_unlock(&rs->notes_lock);
}

void runs_stop(struct runs *rs)
{
    if (!rs)
        return;
    pthread_mutex_lock(&rs->lock);
    rs->stop = 1;
    pthread_cond_signal(&rs->cond);
    pthread_mutex_unlock(&rs->lock);
    pthread_join(rs->thread, NULL);
    runs_free(rs);
}

json_t *runs_take_edge(struct runs *rs, int64_t pid, json_t **kernel)
{
    char why[160] = "";
    json_t *e;

    if (!rs->edges)
        return NULL;
    e = run_edges_take(rs->edges, pid, 1, kernel, why, sizeof(why));
    if (!e)
        log_warnx("runs: no edge reading: %s", why);
    return e;
}

void runs_put_edge(struct runs *rs, int64_t id, enum runs_db_edge which, json_t *edge)
{
    json_t *t = json_object_get(edge, "t_ms");
    char *s;

    if (!edge)
        return;
    s = json_dumps(edge, JSON_COMPACT);
    if (!s || runs_db_set_edge(rs->db, id, which, t ? json_integer_value(t) : RUNS_DB_NULL, s) < 0)
        log_warnx("run %lld: cannot store its %s edge: %s", (long long)id,
                  runs_db_edge_names[which], s ? runs_db_errmsg(rs->db) : "out of memory");
    free(s);
    json_decref(edge);
}

void runs_reconfigure(struct runs *rs, const struct collector_config *collect)
{
    if (rs && rs->edges && run_edges_reconfigure(rs->edges, collect) < 0)
        log_warnx("reload: out of memory for the edge reader: edges keep the old disks");
}
