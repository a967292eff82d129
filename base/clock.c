/*
 * clock.c - clocks and tick arithmetic; see clock.h.
 */
#include "base/clock.h"

#include <time.h>

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t clock_mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

int64_t clock_wall_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

int64_t clock_thread_cpu_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Floor division that rounds towards minus infinity, for times before the epoch. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t clock_next_tick_wall(int64_t last_tick_wall_ns, int64_t now_wall_ns, int64_t interval_ms)
{
    int64_t step = interval_ms * 1000000LL;
    int64_t next;

    if (last_tick_wall_ns >= 0) {
        next = floor_div(last_tick_wall_ns + step / 2, step) * step + step;
        /* Not already past, and not far ahead either (the wall clock was stepped back). */
        if (next > now_wall_ns && next - now_wall_ns <= step + step / 2)
            return next;
    }
    return floor_div(now_wall_ns, step) * step + step;
}

uint32_t clock_missed_ticks(int64_t elapsed_ns, int64_t interval_ms)
{
    int64_t step = interval_ms * 1000000LL;

    if (elapsed_ns * 2 <= step * 3)
        return 0;
    return (uint32_t)((elapsed_ns + step / 2) / step - 1);
}
