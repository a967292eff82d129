/*
 * notify.h - the service manager's readiness protocol (sd_notify(3)): "KEY=VALUE\n..." datagrams
 * sent to the AF_UNIX socket named by $NOTIFY_SOCKET, and the watchdog period of $WATCHDOG_USEC.
 *
 * This is the plain socket protocol, written out here rather than taken from libsystemd: the
 * watchdog ping is sent from the sampler thread, which must never block, so it needs a socket
 * opened once and a non-blocking send; sd_notify() opens a socket per call and sends blocking.
 * Without $NOTIFY_SOCKET (started by hand, or by another supervisor) everything is a no-op.
 *
 * notify_posix.c implements it. On Windows (notify_windows.c) the same calls report to the service
 * control manager when perflogd runs as a service: READY=1 is SERVICE_RUNNING, STOPPING=1 is
 * SERVICE_STOP_PENDING; the rest (STATUS=, WATCHDOG=1, RELOADING=1) has no SCM counterpart.
 */
#ifndef PERFLOG_NOTIFY_H
#define PERFLOG_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct notify;

/*
 * Open the socket named by $NOTIFY_SOCKET. Returns NULL when the variable is unset or empty (not
 * under a service manager: sending is then a no-op) and also, after logging why, when the name is
 * unusable or the socket cannot be made. The caller owns the result; free it with notify_free().
 */
struct notify *notify_new(void);
void notify_free(struct notify *n); /* accepts NULL */

/*
 * Send `state`, e.g. "READY=1\nSTATUS=sampling". Never blocks (MSG_DONTWAIT): a datagram the
 * manager's queue has no room for is dropped. Returns 0, or a negative errno; the first failure is
 * logged, later ones are not. Thread-safe; n may be NULL (then a no-op returning 0).
 */
int notify_send(struct notify *n, const char *state);

/* The watchdog period the manager asked for, in microseconds, from $WATCHDOG_USEC and
 * $WATCHDOG_PID; 0 when there is no watchdog for this process. */
uint64_t notify_watchdog_usec(void);

#endif
