/*
 * thread_prio_posix.c - thread priorities on Linux, where nice values and the timer slack are per
 * thread.
 */
#include "base/log.h"
#include "base/thread_prio.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Raise the sampler above ordinary work so a saturated machine does not delay ticks, and shrink
 * the timer slack to 1 ns. rt_priority 1..99 (1 is the default) asks for SCHED_FIFO at that
 * priority. Measured on a 2-vCPU VM with wrk -c64 on another perflogd plus stress-ng --cpu 4, nice
 * -10 alone let ticks wake up to 15 ms late (EEVDF ran woken nice-0 HTTP and compiler threads
 * first), SCHED_FIFO 1 kept every tick within 1 ms (bench/sched_http_load.py). FIFO cannot starve
 * the machine: a tick reads a fixed set of /proc and /sys files and hands the sample to the
 * writer thread (SQLite is not on this thread), about 0.3 ms of CPU a tick on that VM, and the
 * kernel's RT throttling (sched_rt_runtime_us, 95% by default) still caps it. rt_priority 0, or a
 * refusal (no CAP_SYS_NICE and RLIMIT_RTPRIO too low, or a seccomp/RestrictRealtime filter), gives
 * nice -10 in the normal scheduler, said in one log line. Sampling goes on whatever the answer.
 */
void thread_prio_sampler(int rt_priority)
{
    struct sched_param sp = {.sched_priority = rt_priority > 0 ? rt_priority : 0};
    char why[192] = "", eb[96];
    struct rlimit rl;
    int rc;

    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    rc = pthread_setschedparam(pthread_self(), rt_priority > 0 ? SCHED_FIFO : SCHED_OTHER, &sp);
    if (rc == 0 && rt_priority > 0) {
        log_info("sampler runs at SCHED_FIFO priority %d", rt_priority);
        return;
    }
    if (rc != 0 && rt_priority > 0) {
        if (getrlimit(RLIMIT_RTPRIO, &rl) == 0 && rl.rlim_cur < (rlim_t)rt_priority)
            snprintf(why, sizeof(why),
                     "SCHED_FIFO %d refused (%s: no CAP_SYS_NICE, RLIMIT_RTPRIO %llu); ",
                     rt_priority, log_strerror(rc, eb, sizeof(eb)),
                     (unsigned long long)rl.rlim_cur);
        else
            snprintf(why, sizeof(why), "SCHED_FIFO %d refused (%s); ", rt_priority,
                     log_strerror(rc, eb, sizeof(eb)));
    }
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10) < 0)
        log_warn("sampler: %scannot raise priority; ticks may be late on a saturated machine", why);
    else if (why[0])
        log_info("sampler: %sruns at nice -10", why);
    else
        log_info("sampler runs at nice -10");
}

void thread_prio_lower(int nice)
{
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}
