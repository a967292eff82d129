/*
 * thread_prio_windows.c - thread priorities on Windows: priority levels within the process's
 * class, and a 1 ms system timer so a wait ends within a millisecond of its deadline instead of
 * the default 15.6 ms timer tick.
 */
#include "base/log.h"
#include "base/thread_prio.h"

#include <windows.h>

void thread_prio_sampler(int rt_priority)
{
    int level = rt_priority > 0 ? THREAD_PRIORITY_TIME_CRITICAL : THREAD_PRIORITY_HIGHEST;

    /* Held for the life of the process: the sampler runs until exit. */
    if (timeBeginPeriod(1) != TIMERR_NOERROR)
        log_warnx("sampler: cannot set a 1 ms timer resolution; ticks may be up to 16 ms late");
    if (!SetThreadPriority(GetCurrentThread(), level))
        log_warnx("sampler: cannot raise priority (error %lu); ticks may be late on a saturated "
                  "machine",
                  (unsigned long)GetLastError());
    else
        log_info("sampler runs at thread priority %s",
                 rt_priority > 0 ? "time-critical" : "highest");
}

void thread_prio_lower(int nice)
{
    SetThreadPriority(GetCurrentThread(),
                      nice > 0 ? THREAD_PRIORITY_BELOW_NORMAL : THREAD_PRIORITY_NORMAL);
}
