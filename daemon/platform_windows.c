/*
 * platform_windows.c - perflogd on Windows. In a console it runs in the foreground and Ctrl+C,
 * Ctrl+Break, closing the console or a shutdown stop it as SIGTERM does on Linux. As a service
 * (service_windows.c) the service control manager's stop and shutdown do the same and its
 * "parameters changed" control reloads the config, as SIGHUP does.
 */
#include "base/log.h"
#include "daemon/platform.h"
#include "daemon/service_windows.h"

#include <stdio.h>
#include <string.h>
#include <winsock2.h> /* before any windows.h; it includes windows.h itself */

/* The requests: a manual-reset stop event (once stopping, always stopping) and an auto-reset
 * reload event; the name of the last stop request is written before the event is set. */
static HANDLE stop_event, reload_event;
static const char *volatile stop_what = "stop";

static const char usage_windows[] =
    "       perflogd --install-service [OPTIONS...] | --uninstall-service\n"
    "\n"
    "  --install-service  register the perflogd service (delayed automatic start, restarted on\n"
    "                     failure) that runs perflogd with OPTIONS; without --db, its database is\n"
    "                     %ProgramData%\\perflog\\perflog.db. It logs to the Event Log.\n"
    "  --uninstall-service  stop and remove the service\n"
    "  (--service is what the service manager starts; Ctrl+C stops a console perflogd)\n";

const char *platform_usage(void)
{
    return usage_windows;
}

void platform_request_post(enum platform_request req, const char *what)
{
    if (req == PLATFORM_STOP) {
        stop_what = what;
        SetEvent(stop_event);
    } else if (req == PLATFORM_RELOAD) {
        SetEvent(reload_event);
    }
}

static BOOL WINAPI on_console(DWORD type)
{
    switch (type) {
    case CTRL_C_EVENT:
        platform_request_post(PLATFORM_STOP, "Ctrl+C");
        return TRUE;
    case CTRL_BREAK_EVENT:
        platform_request_post(PLATFORM_STOP, "Ctrl+Break");
        return TRUE;
    case CTRL_CLOSE_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        platform_request_post(PLATFORM_STOP,
                              type == CTRL_CLOSE_EVENT ? "console closed" : "system shutdown");
        /* Windows ends the process when this handler returns: give main the flush time. */
        Sleep(5000);
        return TRUE;
    default:
        return FALSE;
    }
}

int platform_main(int argc, char **argv, int (*run)(int argc, char **argv))
{
    WSADATA wsa;

    /* Winsock for gethostname and getaddrinfo (libmicrohttpd starts its own as well). */
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
        fprintf(stderr, "perflogd: cannot start Winsock (error %d)\n", WSAGetLastError());
        return 1;
    }
    stop_event = CreateEventW(NULL, TRUE, FALSE, NULL);
    reload_event = CreateEventW(NULL, FALSE, FALSE, NULL);
    if (!stop_event || !reload_event) {
        fprintf(stderr, "perflogd: cannot create events (error %lu)\n",
                (unsigned long)GetLastError());
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--install-service") == 0)
        return service_install(argc - 2, argv + 2);
    if (argc > 1 && strcmp(argv[1], "--uninstall-service") == 0) {
        if (argc > 2) {
            fprintf(stderr, "perflogd: --uninstall-service takes no other option\n");
            return 2;
        }
        return service_uninstall();
    }
    if (argc > 1 && strcmp(argv[1], "--service") == 0) {
        argv[1] = argv[0]; /* the service runs with the options after --service */
        return service_dispatch(argc - 1, argv + 1, run);
    }
    return run(argc, argv);
}

int platform_requests_init(void)
{
    /* A service has no console; its requests come from the SCM control handler. */
    if (!service_active() && !SetConsoleCtrlHandler(on_console, TRUE))
        log_warnx("cannot install a console control handler (error %lu); Ctrl+C will not flush",
                  (unsigned long)GetLastError());
    return 0;
}

enum platform_request platform_request_wait(int timeout_ms, const char **what)
{
    HANDLE events[2] = {stop_event, reload_event};
    DWORD rc =
        WaitForMultipleObjects(2, events, FALSE, timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);

    if (rc == WAIT_OBJECT_0) {
        *what = stop_what;
        return PLATFORM_STOP;
    }
    if (rc == WAIT_OBJECT_0 + 1) {
        *what = "service parameters changed";
        return PLATFORM_RELOAD;
    }
    return PLATFORM_NONE;
}

void platform_hostname(char *buf, size_t cap)
{
    if (gethostname(buf, (int)cap) != 0 || !buf[0])
        snprintf(buf, cap, "localhost");
    buf[cap - 1] = '\0';
}
