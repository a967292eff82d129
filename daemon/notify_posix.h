/*
 * notify_posix.h - the pure parsers of notify_posix.c, apart from the environment so they can be
 * tested.
 */
#ifndef PERFLOG_NOTIFY_POSIX_H
#define PERFLOG_NOTIFY_POSIX_H

#include "daemon/notify.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/*
 * Pure parsers, apart from the environment so they can be tested.
 * notify_parse_address: "/path" or "@abstract" into *addr and *len. Returns 0, or -EINVAL for an
 * empty, relative or too long name (*addr and *len untouched).
 * notify_parse_watchdog: `usec` and `pid` are the variables' values (NULL: unset), `self` this
 * process. The period when usec is a positive decimal number and pid is unset or equals self;
 * else 0.
 */
int notify_parse_address(const char *name, struct sockaddr_un *addr, socklen_t *len);
uint64_t notify_parse_watchdog(const char *usec, const char *pid, pid_t self);

#endif
