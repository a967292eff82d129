/*
 * service_windows.h - perflogd as a Windows service: the parts platform_windows.c and
 * notify_windows.c share. Windows only.
 */
#ifndef PERFLOG_SERVICE_WINDOWS_H
#define PERFLOG_SERVICE_WINDOWS_H

#include "daemon/platform.h"

#define SERVICE_NAME_W    L"perflogd"
#define SERVICE_DISPLAY_W L"perflog daemon"

/* --install-service ARGS...: register the service to run "perflogd.exe --service ARGS...", with
 * delayed automatic start and restart on failure, and the Event Log source. Returns an exit code
 * and says what it did on stdout, or why not on stderr. */
int service_install(int argc, char **argv);

/* --uninstall-service: stop the service if it runs, then delete it and its Event Log source. */
int service_uninstall(void);

/* --service: hand this thread to the service control dispatcher, which calls `run` with argv on a
 * thread of its own and returns when the service has stopped. Returns the exit code. */
int service_dispatch(int argc, char **argv, int (*run)(int argc, char **argv));

/* 1 when the process runs as a service (inside service_dispatch). */
int service_active(void);

/* Report the service's state to the SCM: RUNNING once ready, STOP_PENDING when stopping. No-ops
 * outside a service. Thread-safe. */
void service_report_running(void);
void service_report_stopping(void);

/* A stop or reload request, from the console handler or the service's control handler. */
void platform_request_post(enum platform_request req, const char *what);

#endif
