/*
 * sampler.h - the tick scheduler: one thread that reads the collectors on the wall-clock grid and
 * hands each tick to the queue. It never waits on the database or on HTTP clients.
 */
#ifndef PERFLOG_SAMPLER_H
#define PERFLOG_SAMPLER_H

#include "collectors/collector.h"
#include "daemon/queue.h"
#include "daemon/runs/follow.h"
#include "storage/query/live.h"

#include <stdint.h>

struct sampler_settings {
    int64_t interval_ms;
    int rt_priority; /* SCHED_FIFO priority to ask for; 0: nice -10 only */
    struct collector_config collect;
    /*
     * Optional: called by the sampler thread after each tick, and while it waits for a tick at
     * least every on_tick_idle_ms (0: only after ticks), so a long interval still shows the loop
     * is alive. It runs on the sampler's time and must not block (perflogd sends the watchdog
     * ping from it). Taken from the settings given to sampler_start; sampler_reconfigure ignores
     * these three fields.
     */
    void (*on_tick)(void *arg);
    void *on_tick_arg;
    int64_t on_tick_idle_ms;
    /* Optional: the runs' processes to follow, snapshot before every collect (daemon/follow.h).
     * Must outlive the sampler; sampler_reconfigure ignores it too. */
    struct follow_set *follow;
};

struct sampler_stats {
    uint64_t ticks;  /* ticks taken since start */
    uint64_t missed; /* ticks that came too late and were folded into a longer interval */
    int64_t last_tick_wall_ms;
    int64_t last_interval_ms;
    int64_t interval_ms;     /* the interval in force */
    int64_t last_collect_ns; /* CPU-free wall time one collect + delta took, last tick */
};

struct sampler;

/* Start the sampler thread. Settings are copied. Each tick goes to `q` and, when `live` is not
 * NULL, is published there too (live must outlive the sampler). NULL with a message in err on
 * failure.
 * Test hook: when $PERFLOGD_TEST_STALL_FILE names a file that exists, the thread waits before its
 * next tick until the file is gone, as a stuck sampler would (tests/integration/test_notify.py).
 * Test hook: $PERFLOGD_TEST_CLOCK_SPEED=N (2..1000) runs the sampler's clocks N times faster, so
 * ticks stamped one interval apart come N times as often (tests/integration/test_wal_bound.py);
 * a warning says so at start. */
struct sampler *sampler_start(const struct sampler_settings *s, struct tick_queue *q,
                              struct live *live, char *err, size_t errlen);

/* Apply new settings at the next tick (copied; thread-safe). Instances keep their history. */
void sampler_reconfigure(struct sampler *sp, const struct sampler_settings *s);

void sampler_get_stats(struct sampler *sp, struct sampler_stats *out); /* thread-safe */

/* Stop the thread and wait for it; frees the sampler. Accepts NULL. */
void sampler_stop(struct sampler *sp);

#endif
