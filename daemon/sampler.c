/*
 * sampler.c - the drift-free tick loop; see sampler.h and docs/design.md §3.
 *
 * Each tick: wait on the monotonic clock until the next wall-clock grid point, read the collectors,
 * turn the reading into deltas, push the tick. The interval stored is the monotonic time since the
 * previous tick, so rates stay right whatever the wall clock does. A tick that comes more than
 * half an interval late is one longer interval and counts as missed; nothing is invented.
 */
#include "daemon/sampler.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/monocond.h"
#include "base/thread_prio.h"
#include "collectors/model/delta.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A deep copy of sampler_settings: `s.collect` is a collector_config_copy, every list included
 * (the pdh_counters too: they must outlive the config a reload frees). */
struct owned_settings {
    struct sampler_settings s;
};

struct sampler {
    pthread_t thread;
    struct tick_queue *queue;
    struct live *live;          /* may be NULL */
    void (*on_tick)(void *arg); /* may be NULL; with its argument, fixed at start */
    struct follow_set *follow;  /* may be NULL; fixed at start */
    void *on_tick_arg;
    int64_t on_tick_idle_ns;
    char *stall_file;     /* test hook, NULL unless $PERFLOGD_TEST_STALL_FILE is set */
    int64_t speed;        /* test hook: $PERFLOGD_TEST_CLOCK_SPEED, 1 unless set */
    int64_t mono0, wall0; /* the clocks when the sampler started, for `speed` */
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;
    int stop;
    struct owned_settings *pending; /* new settings for the next tick, or NULL */
    /* Statistics: written by the sampler thread only, read by anyone without a lock, so a reader
     * (an HTTP worker at low priority) can never hold up the sampler's wake-up on sp->lock. */
    struct {
        _Atomic uint64_t ticks, missed;
        _Atomic int64_t last_tick_wall_ms, last_interval_ms, interval_ms, last_collect_ns;
    } st;
    /* owned by the sampler thread */
    struct owned_settings *cur;
    struct collector *collector;
    struct delta_state *delta;
    struct raw_sample raw;
};

static void owned_free(struct owned_settings *o)
{
    if (!o)
        return;
    collector_config_free(&o->s.collect);
    free(o);
}

static struct owned_settings *owned_copy(const struct sampler_settings *s)
{
    struct owned_settings *o = calloc(1, sizeof(*o));
    struct collector_config c = s->collect;

    if (!o)
        return NULL;
    o->s = *s;
    if (!c.root)
        c.root = "/";
    if (collector_config_copy(&o->s.collect, &c) < 0) {
        free(o);
        return NULL;
    }
    return o;
}

/* Take pending settings, if any. Sampler thread. */
static void apply_pending(struct sampler *sp)
{
    struct owned_settings *p;
    struct collector *c;

    pthread_mutex_lock(&sp->lock);
    p = sp->pending;
    sp->pending = NULL;
    pthread_mutex_unlock(&sp->lock);
    if (!p)
        return;
    c = collector_new(&p->s.collect);
    if (!c) {
        log_error("sampler: out of memory applying new settings; keeping the old ones");
        owned_free(p);
        return;
    }
    if (sp->cur && sp->cur->s.rt_priority != p->s.rt_priority)
        thread_prio_sampler(p->s.rt_priority);
    if (sp->cur && sp->cur->s.interval_ms != p->s.interval_ms)
        log_info("sampling interval is now %lld ms", (long long)p->s.interval_ms);
    collector_free(sp->collector);
    sp->collector = c;
    owned_free(sp->cur);
    sp->cur = p;
    atomic_store(&sp->st.interval_ms, p->s.interval_ms);
}

/*
 * The sampler's clocks. With the test hook $PERFLOGD_TEST_CLOCK_SPEED=N both run N times faster
 * than the real ones from the sampler's start (the wall clock following the monotonic one), so a
 * test sees hours of ticks, each stamped one interval after the last, in minutes. Without it they
 * are the real clocks.
 */
static int64_t sampler_mono_ns(const struct sampler *sp)
{
    int64_t now = clock_mono_ns();

    return sp->speed > 1 ? sp->mono0 + (now - sp->mono0) * sp->speed : now;
}

static int64_t sampler_wall_ns(const struct sampler *sp)
{
    return sp->speed > 1 ? sp->wall0 + (clock_mono_ns() - sp->mono0) * sp->speed : clock_wall_ns();
}

/* Sleep until the sampler's monotonic clock reads mono_deadline_ns, or stop. Returns 1 when told
 * to stop. */
static int sleep_until(struct sampler *sp, int64_t mono_deadline_ns)
{
    int64_t real = mono_deadline_ns;
    struct timespec ts;
    int stop;

    if (sp->speed > 1) /* rounded up: waking before the deadline would plan the same tick again */
        real = sp->mono0 + (mono_deadline_ns - sp->mono0 + sp->speed - 1) / sp->speed;
    ts.tv_sec = real / 1000000000LL;
    ts.tv_nsec = real % 1000000000LL;
    pthread_mutex_lock(&sp->lock);
    while (!sp->stop && !sp->pending && clock_mono_ns() < real)
        if (monocond_timedwait(&sp->wake, &sp->lock, &ts) == ETIMEDOUT)
            break;
    stop = sp->stop;
    pthread_mutex_unlock(&sp->lock);
    return stop;
}

/*
 * Test hook: while the stall file exists, wait in 50 ms steps, as a sampler stuck in a read of
 * /proc would, so a test can see the watchdog pings stop. One stat() per tick, and only when
 * $PERFLOGD_TEST_STALL_FILE is set. Returns 1 when told to stop meanwhile.
 */
static int stall_while_file(struct sampler *sp)
{
    struct timespec step = {.tv_sec = 0, .tv_nsec = 50000000L};
    struct stat st;
    int stop = 0;

    while (!stop && sp->stall_file && stat(sp->stall_file, &st) == 0) {
        nanosleep(&step, NULL);
        pthread_mutex_lock(&sp->lock);
        stop = sp->stop;
        pthread_mutex_unlock(&sp->lock);
    }
    return stop;
}

static void *sampler_main(void *arg)
{
    struct sampler *sp = arg;
    int64_t last_wall = -1, last_mono = -1, last_interval_ms = 0;

    pthread_setname_np(pthread_self(), "perflog-sample");
    thread_prio_sampler(sp->cur->s.rt_priority);
    for (;;) {
        int64_t interval_ms = sp->cur->s.interval_ms;
        int64_t now_wall = sampler_wall_ns(sp), now_mono = sampler_mono_ns(sp);
        /*
         * After a reload changed the interval, the grid point "one new interval after the last
         * tick" may lie past the first point of the new grid (500 -> 1000 ms after a tick at
         * x.5 would skip x+1.0): the next tick is the first point of the new grid after now.
         */
        int switched = last_interval_ms > 0 && last_interval_ms != interval_ms;
        int64_t target = clock_next_tick_wall(switched ? -1 : last_wall, now_wall, interval_ms);
        int64_t deadline = now_mono + (target - now_wall);
        int64_t wake = deadline;
        int64_t wall, mono, elapsed = 0, late, t0, tick_interval_ms;
        uint32_t missed = 0;
        struct tick *t;

        if (sp->on_tick && sp->on_tick_idle_ns > 0 && deadline - now_mono > sp->on_tick_idle_ns)
            wake = now_mono + sp->on_tick_idle_ns;
        if (sleep_until(sp, wake))
            break;
        if (sampler_mono_ns(sp) < deadline) {
            /* woken early by new settings or to show the loop is alive: re-plan the tick */
            if (sp->on_tick && sampler_mono_ns(sp) >= wake)
                sp->on_tick(sp->on_tick_arg);
            apply_pending(sp);
            continue;
        }
        if (stall_while_file(sp))
            break;
        mono = sampler_mono_ns(sp);
        wall = sampler_wall_ns(sp);
        if (last_mono >= 0) {
            elapsed = mono - last_mono;
            /* How late against plan: one interval after the last tick, or across a switch the
             * planned gap to the first point of the new grid (missed ticks are counted on the
             * new grid; the gap itself is not a miss). */
            late = elapsed - (switched ? deadline - last_mono : interval_ms * 1000000LL);
            missed = clock_missed_ticks(late + interval_ms * 1000000LL, interval_ms);
            int64_t skew = (wall - last_wall) - elapsed;
            if (skew > 500000000LL || skew < -500000000LL)
                log_warnx("wall clock stepped by %+.3f s; intervals still come from the "
                          "monotonic clock",
                          (double)skew / 1e9);
            if (missed)
                log_warnx("sampler: tick %lld ms late, %u tick(s) missed",
                          (long long)(late / 1000000), missed);
        }
        t0 = clock_mono_ns();
        raw_sample_clear(&sp->raw);
        if (sp->follow) {
            struct collector_proc_root roots[COLLECTOR_MAX_ROOTS];
            collector_follow(sp->collector, roots,
                             follow_snapshot(sp->follow, roots, COLLECTOR_MAX_ROOTS));
        }
        collector_collect(sp->collector, &sp->raw);
        tick_interval_ms = last_mono >= 0 ? (elapsed + 500000) / 1000000 : 0;
        t = delta_tick(sp->delta, &sp->raw, wall / 1000000, tick_interval_ms, missed);
        /* Publish first: after the push the queue's reference belongs to the writer, which may
         * drop it at once. */
        if (t && sp->live)
            live_publish_ref(sp->live, t);
        if (t)
            queue_push_take(sp->queue, t);
        else
            log_error("sampler: out of memory; tick at %lld dropped", (long long)(wall / 1000000));
        atomic_store(&sp->st.last_tick_wall_ms, wall / 1000000);
        atomic_store(&sp->st.last_interval_ms, t ? tick_interval_ms : 0);
        atomic_store(&sp->st.last_collect_ns, clock_mono_ns() - t0);
        atomic_fetch_add(&sp->st.missed, missed);
        atomic_fetch_add(&sp->st.ticks, 1);
        last_wall = wall;
        last_mono = mono;
        last_interval_ms = interval_ms;
        if (sp->on_tick)
            sp->on_tick(sp->on_tick_arg);
        apply_pending(sp);
    }
    return NULL;
}

struct sampler *sampler_start(const struct sampler_settings *s, struct tick_queue *q,
                              struct live *live, char *err, size_t errlen)
{
    struct sampler *sp = calloc(1, sizeof(*sp));
    int rc;

    if (!sp || !(sp->cur = owned_copy(s)) || !(sp->delta = delta_new()) ||
        !(sp->collector = collector_new(&sp->cur->s.collect))) {
        snprintf(err, errlen, "sampler: out of memory");
        goto fail;
    }
    if (getenv("PERFLOGD_TEST_STALL_FILE") &&
        !(sp->stall_file = strdup(getenv("PERFLOGD_TEST_STALL_FILE")))) {
        snprintf(err, errlen, "sampler: out of memory");
        goto fail;
    }
    if (getenv("PERFLOGD_TEST_CLOCK_SPEED")) {
        sp->speed = strtoll(getenv("PERFLOGD_TEST_CLOCK_SPEED"), NULL, 10);
        if (sp->speed > 1000)
            sp->speed = 1000;
        if (sp->speed > 1)
            log_warnx("test hook: the sampler's clocks run %lld times faster "
                      "($PERFLOGD_TEST_CLOCK_SPEED); for tests only",
                      (long long)sp->speed);
    }
    sp->mono0 = clock_mono_ns();
    sp->wall0 = clock_wall_ns();
    sp->queue = q;
    sp->live = live;
    sp->on_tick = s->on_tick;
    sp->on_tick_arg = s->on_tick_arg;
    sp->follow = s->follow;
    sp->on_tick_idle_ns = s->on_tick_idle_ms * 1000000LL;
    atomic_store(&sp->st.interval_ms, s->interval_ms);
    pthread_mutex_init(&sp->lock, NULL);
    monocond_init(&sp->wake);
    rc = pthread_create(&sp->thread, NULL, sampler_main, sp);
    if (rc != 0) {
        snprintf(err, errlen, "sampler: cannot start thread: %s", strerror(rc));
        pthread_cond_destroy(&sp->wake);
        pthread_mutex_destroy(&sp->lock);
        goto fail;
    }
    return sp;
fail:
    if (sp) {
        collector_free(sp->collector);
        delta_free(sp->delta);
        owned_free(sp->cur);
        free(sp->stall_file);
        free(sp);
    }
    return NULL;
}

void sampler_reconfigure(struct sampler *sp, const struct sampler_settings *s)
{
    struct owned_settings *o = owned_copy(s);

    if (!o) {
        log_error("sampler: out of memory; new settings not applied");
        return;
    }
    pthread_mutex_lock(&sp->lock);
    owned_free(sp->pending);
    sp->pending = o;
    pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(&sp->lock);
}

void sampler_get_stats(struct sampler *sp, struct sampler_stats *out)
{
    out->ticks = atomic_load(&sp->st.ticks);
    out->missed = atomic_load(&sp->st.missed);
    out->last_tick_wall_ms = atomic_load(&sp->st.last_tick_wall_ms);
    out->last_interval_ms = atomic_load(&sp->st.last_interval_ms);
    out->interval_ms = atomic_load(&sp->st.interval_ms);
    out->last_collect_ns = atomic_load(&sp->st.last_collect_ns);
}

void sampler_stop(struct sampler *sp)
{
    if (!sp)
        return;
    pthread_mutex_lock(&sp->lock);
    sp->stop = 1;
    pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(&sp->lock);
    pthread_join(sp->thread, NULL);
    collector_free(sp->collector);
    delta_free(sp->delta);
    raw_sample_free(&sp->raw);
    owned_free(sp->cur);
    owned_free(sp->pending);
    free(sp->stall_file);
    pthread_cond_destroy(&sp->wake);
    pthread_mutex_destroy(&sp->lock);
    free(sp);
}
