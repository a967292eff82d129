/*
 * test_clock.c - tick grid arithmetic: alignment, late ticks, wall clock steps, missed counts.
 */
#include "base/clock.h"
#include "testlib.h"

#define S  1000000000LL
#define MS 1000000LL

int main(void)
{
    /* First tick: the next whole second after now. */
    CHECK_INT(clock_next_tick_wall(-1, 100 * S + 300 * MS, 1000), 101 * S);
    CHECK_INT(clock_next_tick_wall(-1, 100 * S, 1000), 101 * S);
    /* A tick taken a hair before or after the grid point still leads to the next one, once. */
    CHECK_INT(clock_next_tick_wall(101 * S - 20000, 101 * S - 10000, 1000), 102 * S);
    CHECK_INT(clock_next_tick_wall(101 * S + 2 * MS, 101 * S + 3 * MS, 1000), 102 * S);
    /* A late tick (taken 400 ms late) still aims at the grid, not now + interval. */
    CHECK_INT(clock_next_tick_wall(101 * S + 400 * MS, 101 * S + 401 * MS, 1000), 102 * S);
    /* Work that ran past the next grid point: the first grid point after now. */
    CHECK_INT(clock_next_tick_wall(101 * S, 102 * S + 500 * MS, 1000), 103 * S);
    /* Wall clock stepped back an hour after the last tick: next grid point after the new now. */
    CHECK_INT(clock_next_tick_wall(5000 * S, 1400 * S + 250 * MS, 1000), 1401 * S);
    /* Stepped forward a day. */
    CHECK_INT(clock_next_tick_wall(5000 * S, 91400 * S + 250 * MS, 1000), 91401 * S);
    /* Other intervals: 500 ms and 250 ms grids, 5 s grid. */
    CHECK_INT(clock_next_tick_wall(-1, 100 * S + 300 * MS, 500), 100 * S + 500 * MS);
    CHECK_INT(clock_next_tick_wall(100 * S + 500 * MS, 100 * S + 501 * MS, 500), 101 * S);
    CHECK_INT(clock_next_tick_wall(-1, 100 * S + 300 * MS, 5000), 105 * S);
    /* Before the epoch (a badly set clock) still rounds down properly. */
    CHECK_INT(clock_next_tick_wall(-1, -1500 * MS, 1000), -1 * S);

    CHECK_INT(clock_missed_ticks(1000 * MS, 1000), 0);
    CHECK_INT(clock_missed_ticks(1400 * MS, 1000), 0);
    CHECK_INT(clock_missed_ticks(1600 * MS, 1000), 1);
    CHECK_INT(clock_missed_ticks(2000 * MS, 1000), 1);
    CHECK_INT(clock_missed_ticks(3100 * MS, 1000), 2);
    CHECK_INT(clock_missed_ticks(600 * MS, 500), 0);
    CHECK_INT(clock_missed_ticks(1000 * MS, 500), 1);

    /* The clocks move forward. */
    long long a = clock_mono_ns(), b = clock_mono_ns();
    CHECK(b >= a);
    CHECK(clock_wall_ns() > 1700000000LL * S);
    return tl_done();
}
