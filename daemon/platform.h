/*
 * platform.h - what perflogd's main needs from the operating system: how it is started, how it is
 * asked to stop or reload, and the host name. platform_posix.c: signals (SIGTERM and SIGINT stop,
 * SIGHUP reloads). platform_windows.c: console control events, and the service control manager
 * (--service, --install-service, --uninstall-service), with logging to the Event Log as a service.
 */
#ifndef PERFLOG_PLATFORM_H
#define PERFLOG_PLATFORM_H

#include <stddef.h>

enum platform_request { PLATFORM_NONE, PLATFORM_STOP, PLATFORM_RELOAD };

/*
 * Run `run(argc, argv)` the platform's way and return the process's exit code: directly on POSIX;
 * on Windows, platform options are handled first (installing or removing the service, or entering
 * the service control dispatcher for --service, which calls `run` without that option).
 */
int platform_main(int argc, char **argv, int (*run)(int argc, char **argv));

/* Usage lines for the platform's own options ("" when none), to append to the usage text. */
const char *platform_usage(void);

/*
 * Take stop and reload requests away from their default handling, so platform_request_wait sees
 * them. Call on the main thread before starting any other thread. Returns 0 or a negative errno.
 */
int platform_requests_init(void);

/* Wait up to timeout_ms (< 0: without a time limit) for a request. Returns it (PLATFORM_NONE on
 * timeout) and, for a request, its name in *what ("SIGTERM", "service stop", ...). Main thread
 * only. */
enum platform_request platform_request_wait(int timeout_ms, const char **what);

/* The host name into buf (cap > 0), always terminated; "localhost" when it cannot be had. */
void platform_hostname(char *buf, size_t cap);

#endif
