/*
 * writer.c - database writer thread; see writer.h.
 *
 * The queue is the holding area: ticks leave it only once committed. A failed write gives the
 * batch back and the writer enters a failing state, logged once, in which it probes with a single
 * tick every second; when the probe commits, everything held is written and the recovery is logged.
 * A write that finds the disk full first checkpoints the WAL, which gives its space back, and
 * tries once more before it holds anything.
 *
 * Minute and hour roll-ups are mostly kept as ticks are written (db.c); what they cannot take,
 * retention, the size cap and a truncating checkpoint (once the WAL holds a quarter of its
 * budget) run every MAINT_PERIOD_MS, on the ticks' time as well as the monotonic clock: the same
 * thing in a daemon, but a sampler whose clock runs faster for a test gets the maintenance its
 * ticks would have had.
 */
#include "daemon/writer.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/monocond.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITER_BATCH_MAX  600   /* ticks per transaction */
#define RETRY_INTERVAL_MS 1000  /* probe period while failing */
#define MAINT_PERIOD_MS   30000 /* roll-ups and retention at most this often */
#define MINUTE_MS         60000 /* a roll-up minute (minute_cut) */
/* Maintenance steps back to back while one more as long as the last still ends within
 * MAINT_BURST_MS, then a rest of MAINT_REST_MS (or until a tick is queued): a backlog of chunk
 * steps (10-15 ms each at 1 000 disks) does not hold a core for the second until the next tick,
 * and a burst is MAINT_BURST_MS or one step, whichever is longer (it was MAINT_BURST_MS plus one).
 */
#define MAINT_BURST_MS 10
#define MAINT_REST_MS  5
/* A call of db_maintain_split returns after a step of this much CPU time, with the round's other
 * steps left for the next call: the writer's burst logic then sees each long step alone (a chunk
 * step and a merge step in one call were 30-45 ms at 1 000 disks). */
#define MAINT_SPLIT_MS 2
/* Inside a transaction of ticks, after a tick's rows: a rest of TICK_REST_MS once the transaction
 * has used TICK_BURST_MS of CPU since it began or since its last rest (db_set_tick_pause). At
 * 1 000 disks a tick's rows are 5-6 ms, and two ticks and their commit were one burst of 12-22 ms;
 * on a machine of a few disks a tick is a fraction of a millisecond and never rests. */
#define TICK_BURST_MS 4
#define TICK_REST_MS  5

struct writer {
    pthread_t thread;
    struct db *db;
    struct tick_queue *queue;
    pthread_mutex_t lock; /* guards settings, stats and stop */
    pthread_cond_t wake;
    struct writer_settings settings;
    struct writer_stats stats;
    int stop;
    uint64_t dropped_at_failure; /* the queue's drop count when the failure began; writer thread */
    int64_t newest_tick_ms;      /* wall time of the newest tick written; writer thread */
    int64_t tick_cpu0;           /* thread CPU time at the transaction's start or last rest */
    struct tick *batch[WRITER_BATCH_MAX];
};

static const char *error_text(int err)
{
    switch (err) {
    case -ENOSPC:
        return "disk full";
    case -EBUSY:
        return "database locked by another process";
    case -EACCES:
        return "database not writable";
    case -ENOMEM:
        return "out of memory";
    default:
        return "I/O error";
    }
}

/* Sleep up to ms or until stopped. Returns 1 if stopping. Lock not held. */
static int writer_pause(struct writer *w, int64_t ms)
{
    struct timespec ts;
    int64_t deadline = clock_mono_ns() + ms * 1000000LL;
    int stop;

    ts.tv_sec = deadline / 1000000000LL;
    ts.tv_nsec = deadline % 1000000000LL;
    pthread_mutex_lock(&w->lock);
    while (!w->stop)
        if (monocond_timedwait(&w->wake, &w->lock, &ts) == ETIMEDOUT)
            break;
    stop = w->stop;
    pthread_mutex_unlock(&w->lock);
    return stop;
}

/* Where the next part of batch[from, n) ends: at the first tick of a later minute than the tick
 * before it, so that db_rollup_ahead sees that tick first in its part (the minute's buckets are
 * complete only once every tick before it is written). */
static size_t minute_cut(struct tick *const *batch, size_t from, size_t n)
{
    for (size_t i = from + 1; i < n; i++)
        if (batch[i]->wall_ms / MINUTE_MS != batch[i - 1]->wall_ms / MINUTE_MS)
            return i;
    return n;
}

/* db_set_tick_pause: a rest inside a transaction of ticks, once it has been on the CPU for
 * TICK_BURST_MS. A tick queued meanwhile waits, as it would behind the transaction's CPU time. */
static void tick_pause(void *arg)
{
    struct writer *w = arg;

    if (clock_thread_cpu_ns() - w->tick_cpu0 < TICK_BURST_MS * 1000000LL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stats.tick_rests++;
    pthread_mutex_unlock(&w->lock);
    (void)writer_pause(w, TICK_REST_MS); /* a stop finishes the transaction first */
    w->tick_cpu0 = clock_thread_cpu_ns();
}

/* Write ticks[0, n), which hold no minute's first tick but (maybe) ticks[0]. */
static int write_part(struct writer *w, struct tick *const *ticks, size_t n)
{
    int rc;

    /* The roll-up buckets that the first tick completes go first, in transactions of their own
     * of at most 512 buckets, each followed by a rest: at 1 000 disks the minute's are 2 300
     * rows, 10-25 ms in one transaction, which the tick's commit carried on top of its own rows
     * (storage/db.h db_rollup_ahead). */
    while (db_rollup_ahead(w->db, ticks[0]->wall_ms) > 0)
        if (writer_pause(w, MAINT_REST_MS))
            break;
    /* A checkpoint that a queued tick put off (run_maintenance, writer_main) goes before it, with
     * a rest between: the tick's commit would carry it (storage/db.c wal_hook), 10 ms and more at
     * 1 000 disks while chunk steps run. */
    if (db_checkpoint_due(w->db)) {
        db_checkpoint_passive(w->db);
        (void)writer_pause(w, MAINT_REST_MS);
    }
    w->tick_cpu0 = clock_thread_cpu_ns();
    rc = db_write_ticks(w->db, ticks, n);
    /* The WAL may hold most of the space (a reader kept the checkpoints back): give it back. */
    if (rc == -ENOSPC && db_checkpoint(w->db) == 0) {
        w->tick_cpu0 = clock_thread_cpu_ns();
        rc = db_write_ticks(w->db, ticks, n);
    }
    return rc;
}

/* Take and write one batch. Returns ticks written, 0 when none were queued, or negative errno. A
 * batch that holds a minute's first tick after other ticks is written in two transactions, the
 * tick beginning the second: a batch of two ticks had the minute's first tick second half of the
 * time, and the minute's buckets then went into the tick's own commit, not ahead of it. */
static int64_t write_batch(struct writer *w, size_t max, int64_t wait_ms)
{
    size_t n = queue_pop(w->queue, w->batch, max, wait_ms), done = 0;
    int rc = 0;

    if (n == 0)
        return 0;
    while (done < n) {
        size_t end = minute_cut(w->batch, done, n);

        rc = write_part(w, w->batch + done, end - done);
        if (rc < 0)
            break;
        queue_pop_done(w->queue, end - done);
        for (size_t i = done; i < end; i++) {
            if (w->batch[i]->wall_ms > w->newest_tick_ms)
                w->newest_tick_ms = w->batch[i]->wall_ms;
            tick_free(w->batch[i]);
        }
        done = end;
    }
    if (rc < 0) {
        queue_give_back_take(w->queue, w->batch + done, n - done);
        pthread_mutex_lock(&w->lock);
        w->stats.written += done;
        w->stats.write_failures++;
        w->stats.last_error = rc;
        if (!w->stats.failing) {
            struct queue_stats qs;

            queue_get_stats(w->queue, &qs);
            w->dropped_at_failure = qs.dropped;
            log_error("database %s: %s (%s); holding up to %zu ticks in memory and retrying every "
                      "%d ms",
                      db_path(w->db), error_text(rc), db_errmsg(w->db), qs.capacity,
                      RETRY_INTERVAL_MS);
        }
        w->stats.failing = 1;
        pthread_mutex_unlock(&w->lock);
        return rc;
    }
    pthread_mutex_lock(&w->lock);
    if (w->stats.failing) {
        struct queue_stats qs;

        queue_get_stats(w->queue, &qs);
        log_info("database %s is writable again; writing held ticks", db_path(w->db));
        if (qs.dropped > w->dropped_at_failure)
            log_warnx("database %s: %llu oldest tick(s) were dropped while it could not be "
                      "written (max_held_ticks = %zu)",
                      db_path(w->db), (unsigned long long)(qs.dropped - w->dropped_at_failure),
                      qs.capacity);
    }
    w->stats.failing = 0;
    w->stats.written += n;
    w->stats.last_commit_wall_ms = clock_wall_ns() / 1000000;
    db_work_get(w->db, w->stats.work);
    pthread_mutex_unlock(&w->lock);
    return (int64_t)n;
}

/* Publish the size figures of the last maintenance; log when the cap starts or stops being met. */
static void report_size(struct writer *w, const struct db_retention *r)
{
    struct db_size sz;
    struct db_mem m;
    int was;

    db_size_get(w->db, &sz);
    db_mem_get(w->db, &m);
    pthread_mutex_lock(&w->lock);
    was = w->stats.db_over_cap;
    w->stats.db_used_bytes = sz.used_bytes;
    w->stats.db_over_cap = sz.over_cap;
    w->stats.db_stmt_bytes = m.stmt_bytes;
    w->stats.db_schema_bytes = m.schema_bytes;
    w->stats.db_cache_bytes = m.cache_bytes;
    w->stats.wal_writes_in = m.wal_writes_in;
    w->stats.wal_writes_out = m.wal_writes_out;
    w->stats.wal_bytes = m.wal_bytes;
    w->stats.slices_cached = m.slices_cached;
    w->stats.slices_read = m.slices_read;
    w->stats.span_cache_bytes = m.span_cache_bytes;
    db_work_get(w->db, w->stats.work);
    pthread_mutex_unlock(&w->lock);
    if (sz.over_cap && !was)
        log_warnx("database %s: %lld bytes in use, over max_db_bytes %lld, and only the newest "
                  "data is left; raise max_db_bytes or shorten retention",
                  db_path(w->db), (long long)sz.used_bytes, (long long)r->max_bytes);
    else if (!sz.over_cap && was)
        log_info("database %s is under max_db_bytes again", db_path(w->db));
}

/* The work account as of the last commit (docs/api.md `writer_work`): a round of maintenance
 * can go on for many commits without a tick's between them. */
static void publish_work(struct writer *w)
{
    pthread_mutex_lock(&w->lock);
    db_work_get(w->db, w->stats.work);
    pthread_mutex_unlock(&w->lock);
}

/* Maintenance steps until none is left (returns 0), or until a tick is queued with steps left
 * (returns 1: the writer goes on after writing it, rather than MAINT_PERIOD_MS later). */
static int run_maintenance(struct writer *w)
{
    struct db_retention r;
    int64_t now_ms = clock_wall_ns() / 1000000;
    int rc, left = 0;

    pthread_mutex_lock(&w->lock);
    r = w->settings.retention;
    pthread_mutex_unlock(&w->lock);
    /* The newest tick's time when it is ahead (a test's fast clock): its minutes are complete. */
    if (w->newest_tick_ms > now_ms)
        now_ms = w->newest_tick_ms;
    /* Bounded steps, and queued ticks go first: maintenance yields as soon as one arrives, and
     * rests after MAINT_BURST_MS of steps. */
    int64_t burst_start = clock_mono_ns();

    for (;;) {
        int64_t step_start = clock_mono_ns(), step_ns;

        rc = db_maintain_split(w->db, now_ms, &r, MAINT_SPLIT_MS * 1000000LL);
        step_ns = clock_mono_ns() - step_start;
        publish_work(w);
        if (rc < 0 && rc != -EBUSY)
            log_warnx("database %s: roll-up/retention step failed: %s", db_path(w->db),
                      db_errmsg(w->db));
        /* The WAL's checkpoint is a step of its own, with a rest on each side (storage/db.c
         * wal_hook, which leaves it to this): inside a step's commit it made that step 1-6 ms
         * longer at 1 000 disks. */
        if (db_checkpoint_due(w->db)) {
            if ((left = queue_wait(w->queue, MAINT_REST_MS)))
                break;
            db_checkpoint_passive(w->db);
            publish_work(w);
            if (rc > 0 && (left = queue_wait(w->queue, MAINT_REST_MS)))
                break;
            burst_start = clock_mono_ns();
        }
        if (rc <= 0)
            break;
        if (clock_mono_ns() - burst_start + step_ns < MAINT_BURST_MS * 1000000LL) {
            if ((left = queue_wait(w->queue, 0)))
                break;
            continue;
        }
        pthread_mutex_lock(&w->lock);
        w->stats.maint_rests++;
        pthread_mutex_unlock(&w->lock);
        if ((left = queue_wait(w->queue, MAINT_REST_MS)))
            break;
        burst_start = clock_mono_ns();
    }
    /* Give the WAL's space back once the backlog is done and the WAL holds a quarter of its
     * budget (db_truncate_due); a reader that holds it back (-EBUSY) only delays this. While steps
     * are left the writer is back after one tick, and a TRUNCATE checkpoint each second would copy
     * the same hot pages again and regrow the WAL each time: meanwhile the auto-checkpoint and
     * journal_size_limit (storage/db.c set_wal_limits) keep the WAL bounded. A checkpoint after
     * every maintenance (30 s) was 11 % of the writer's CPU on a machine of a few disks, most of
     * it in its two fdatasync; each one copies the same last pages of the tables, whatever the
     * number of commits since (bench/README.md). */
    if (!left && db_truncate_due(w->db)) {
        rc = db_checkpoint(w->db);
        if (rc < 0 && rc != -EBUSY)
            log_debug("database %s: checkpoint: %s", db_path(w->db), db_errmsg(w->db));
    }
    report_size(w, &r);
    return left;
}

/* Whether maintenance is due: MAINT_PERIOD_MS since the last one, on the monotonic clock or in
 * the ticks written since. */
static int maintenance_due(const struct writer *w, int64_t last_maint_ns, int64_t maint_tick_ms)
{
    return clock_mono_ns() - last_maint_ns >= MAINT_PERIOD_MS * 1000000LL ||
           w->newest_tick_ms - maint_tick_ms >= MAINT_PERIOD_MS;
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    int64_t last_maint = 0, maint_tick_ms = 0;
    int maint_left = 0; /* the last maintenance yielded to a tick with steps left */

    pthread_setname_np(pthread_self(), "perflog-write");
    for (;;) {
        int64_t commit_ms, tick_ms, rc;
        int failing, stop;

        pthread_mutex_lock(&w->lock);
        commit_ms = w->settings.commit_interval_ms;
        tick_ms = w->settings.tick_interval_ms;
        failing = w->stats.failing;
        stop = w->stop;
        pthread_mutex_unlock(&w->lock);
        if (stop)
            break;
        if (failing) {
            /* Probe with one tick; on success write the rest at once. */
            rc = write_batch(w, 1, RETRY_INTERVAL_MS);
            if (rc < 0 && writer_pause(w, RETRY_INTERVAL_MS))
                break;
            continue;
        }
        /*
         * Gather ticks so that one transaction carries commit_interval_ms of them: commit as soon
         * as that many are queued, or when the first has waited commit_interval_ms - interval_ms
         * (plus a tenth of an interval, for the next tick's own collection time). Ticks arrive
         * one interval apart, so a kill -9 loses at most the ticks of the last
         * commit_interval_ms. The wait is one sleep per batch: the sampler wakes the writer only
         * when the batch is complete. Gather only what fits one batch of a queue that is not
         * backed up: after an outage the held ticks go at once, since waiting would push the
         * oldest out of a full queue.
         */
        size_t want = 1;
        int64_t window = 0, age;
        if (commit_ms > tick_ms && tick_ms > 0) {
            struct queue_stats qs;

            queue_get_stats(w->queue, &qs);
            want = (size_t)(commit_ms / tick_ms);
            if (want > WRITER_BATCH_MAX)
                want = WRITER_BATCH_MAX;
            window = commit_ms - tick_ms + tick_ms / 10;
            if (qs.queued + want >= qs.capacity / 2)
                want = 1;
        }
        queue_wait_count(w->queue, want, want > 1 ? (int64_t)want * tick_ms + tick_ms / 10 : 1000);
        age = queue_oldest_age_ms(w->queue);
        if (age >= 0) {
            if (want > 1 && age < window)
                queue_wait_count(w->queue, want, window - age);
            rc = write_batch(w, WRITER_BATCH_MAX, 0);
            if (rc <= 0)
                continue;
        }
        /* A backlog (a file opened with hours to roll up, chunk or prune) goes on between
         * batches; it used to wait MAINT_PERIOD_MS after each tick that interrupted it. */
        if (maint_left || maintenance_due(w, last_maint, maint_tick_ms)) {
            /* A rest after the batch's commit, so that the first step does not lengthen the
             * batch's burst. A tick queued meanwhile ends the rest, and one step goes first all
             * the same (run_maintenance yields to it after that step): under a fast test clock
             * ticks come every few ms, and maintenance would never start. */
            if (age >= 0)
                (void)queue_wait(w->queue, MAINT_REST_MS);
            if (maint_left) {
                pthread_mutex_lock(&w->lock);
                w->stats.maint_resumes++;
                pthread_mutex_unlock(&w->lock);
            }
            maint_left = run_maintenance(w);
            last_maint = clock_mono_ns();
            maint_tick_ms = w->newest_tick_ms;
        }
        /* The WAL's checkpoint after the batch, after a rest (a tick queued meanwhile goes first,
         * and the checkpoint waits for the next time). */
        if (db_checkpoint_due(w->db) && !queue_wait(w->queue, MAINT_REST_MS))
            db_checkpoint_passive(w->db);
        /* Idle until the next batch: the time to give back what a large answer left free. */
        mem_trim_if_asked();
    }
    return NULL;
}

struct writer *writer_start_take(struct db *db, struct tick_queue *q,
                                 const struct writer_settings *s, char *err, size_t errlen)
{
    struct writer *w = calloc(1, sizeof(*w));
    int rc;

    if (!w) {
        snprintf(err, errlen, "writer: out of memory");
        return NULL;
    }
    w->db = db;
    db_set_tick_pause(db, tick_pause, w);
    w->queue = q;
    w->settings = *s;
    pthread_mutex_init(&w->lock, NULL);
    monocond_init(&w->wake);
    rc = pthread_create(&w->thread, NULL, writer_main, w);
    if (rc != 0) {
        snprintf(err, errlen, "writer: cannot start thread: %s", strerror(rc));
        db_set_tick_pause(db, NULL, NULL);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void writer_reconfigure(struct writer *w, const struct writer_settings *s)
{
    pthread_mutex_lock(&w->lock);
    w->settings = *s;
    pthread_mutex_unlock(&w->lock);
}

void writer_get_stats(struct writer *w, struct writer_stats *out)
{
    pthread_mutex_lock(&w->lock);
    *out = w->stats;
    pthread_mutex_unlock(&w->lock);
}

uint64_t writer_stop(struct writer *w, int64_t flush_timeout_ms)
{
    struct queue_stats qs;
    int64_t deadline;

    if (!w)
        return 0;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    queue_close(w->queue);
    pthread_join(w->thread, NULL);
    /* Flush on this thread: the writer thread is gone, the connection is ours now. */
    deadline = clock_mono_ns() + flush_timeout_ms * 1000000LL;
    for (;;) {
        int64_t rc = write_batch(w, WRITER_BATCH_MAX, 0);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (clock_mono_ns() >= deadline)
                break;
            struct timespec ts = {0, 200000000L};
            nanosleep(&ts, NULL);
        }
    }
    queue_get_stats(w->queue, &qs);
    if (qs.queued)
        log_error("database %s: %zu tick(s) could not be written before exit", db_path(w->db),
                  qs.queued);
    db_close(w->db);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return qs.queued;
}
