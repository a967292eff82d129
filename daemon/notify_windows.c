/*
 * notify_windows.c - notify.h on Windows: the readiness messages the daemon sends to systemd on
 * Linux become service states for the service control manager. Outside a service, a no-op.
 */
#include "daemon/notify.h"
#include "daemon/service_windows.h"

#include <stdlib.h>
#include <string.h>

struct notify {
    int unused;
};

struct notify *notify_new(void)
{
    return service_active() ? calloc(1, sizeof(struct notify)) : NULL;
}

void notify_free(struct notify *n)
{
    free(n);
}

/* READY=1 and STOPPING=1 are whole lines of the message (sd_notify(3)). */
static int has_line(const char *state, const char *line)
{
    size_t n = strlen(line);

    for (const char *p = state; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

int notify_send(struct notify *n, const char *state)
{
    if (!n)
        return 0;
    if (has_line(state, "READY=1"))
        service_report_running();
    if (has_line(state, "STOPPING=1"))
        service_report_stopping();
    return 0;
}

uint64_t notify_watchdog_usec(void)
{
    return 0; /* the SCM has no watchdog; restart on failure covers a crash */
}
