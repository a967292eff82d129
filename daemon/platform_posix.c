/*
 * platform_posix.c - perflogd on Linux: started directly (systemd supervises a foreground
 * process), stopped by SIGTERM or SIGINT, reloaded by SIGHUP. The signals are blocked in every
 * thread and taken synchronously by the main thread with sigtimedwait.
 */
#include "daemon/platform.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sigset_t request_signals; /* written once by platform_requests_init, before any thread */

int platform_main(int argc, char **argv, int (*run)(int argc, char **argv))
{
    return run(argc, argv);
}

const char *platform_usage(void)
{
    return "";
}

int platform_requests_init(void)
{
    int rc;

    sigemptyset(&request_signals);
    sigaddset(&request_signals, SIGTERM);
    sigaddset(&request_signals, SIGINT);
    sigaddset(&request_signals, SIGHUP);
    rc = pthread_sigmask(SIG_BLOCK, &request_signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    return -rc;
}

enum platform_request platform_request_wait(int timeout_ms, const char **what)
{
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L};
    int sig = timeout_ms < 0 ? sigwaitinfo(&request_signals, NULL)
                             : sigtimedwait(&request_signals, NULL, &ts);

    if (sig < 0)
        return PLATFORM_NONE; /* timeout (EAGAIN) or EINTR */
    if (sig == SIGHUP) {
        *what = "SIGHUP";
        return PLATFORM_RELOAD;
    }
    *what = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    return PLATFORM_STOP;
}

void platform_hostname(char *buf, size_t cap)
{
    if (gethostname(buf, cap) < 0 || !buf[0])
        snprintf(buf, cap, "localhost");
    buf[cap - 1] = '\0';
}
