/*
 * clock.h - the two clocks of the scheduler and its pure tick arithmetic.
 *
 * Ticks land on wall-clock multiples of the interval but are waited for on the monotonic clock,
 * so a wall clock step moves the grid without disturbing the measured intervals.
 */
#ifndef PERFLOG_CLOCK_H
#define PERFLOG_CLOCK_H

#include <stdint.h>

int64_t clock_mono_ns(void); /* CLOCK_MONOTONIC */
int64_t clock_wall_ns(void); /* CLOCK_REALTIME, ns since the epoch */
/* CLOCK_THREAD_CPUTIME_ID: the calling thread's time on a CPU, for the writer's account of its work
 * (storage/db.h db_work_get); 0 where the clock is missing. */
int64_t clock_thread_cpu_ns(void);

/*
 * The wall time of the next tick. `last_tick_wall_ns` is the wall time the previous tick was taken
 * at (< 0: none). The next tick is one interval after the grid point nearest the last tick; when
 * is already past (a late tick, a wall clock stepped forward) or more than an interval ahead (the
 * wall clock stepped back), it is the first grid point after `now_wall_ns`. Pure.
 */
int64_t clock_next_tick_wall(int64_t last_tick_wall_ns, int64_t now_wall_ns, int64_t interval_ms);

/* Ticks missed between two ticks `elapsed_ns` apart: 0 unless elapsed exceeds 1.5 intervals. Pure.
 */
uint32_t clock_missed_ticks(int64_t elapsed_ns, int64_t interval_ms);

#endif
