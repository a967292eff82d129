/*
 * thread_prio_posix.c - thread priorities on Linux, where nice values and the timer slack are per
 * thread.
 */
#include "log.h"
#include "thread_prio.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Raise the sampler above ordinary work so a saturated machine does not delay ticks, and shrink
 * the timer slack to 1 ns. rt_priority 0 (the default) asks for nice -10 within the normal
 * scheduler: measured on a 2-vCPU VM it kept ticks within 2 ms of the grid under stress-ng, while
 * SCHED_FIFO made every wake-up cost 1.4-2.4x the CPU time. 1..99 asks for SCHED_FIFO at that
 * priority, falling back to nice -10. Either way, sampling goes on if the system says no.
 */
void thread_prio_sampler(int rt_priority)
{
    struct sched_param sp = {.sched_priority = rt_priority > 0 ? rt_priority : 0};
    int rc;

    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    rc = pthread_setschedparam(pthread_self(), rt_priority > 0 ? SCHED_FIFO : SCHED_OTHER, &sp);
    if (rc == 0 && rt_priority > 0) {
        log_info("sampler runs at SCHED_FIFO priority %d", rt_priority);
        return;
    }
    if (rc != 0) {
        errno = rc;
        log_warn("sampler: cannot get SCHED_FIFO priority %d, trying nice -10", rt_priority);
    }
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10) < 0)
        log_warn("sampler: cannot raise priority; ticks may be late on a saturated machine");
    else
        log_info("sampler runs at nice -10");
}

void thread_prio_lower(int nice)
{
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}
