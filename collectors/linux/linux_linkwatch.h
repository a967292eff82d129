/*
 * linux_linkwatch.h - which network interfaces changed? The trigger for re-reading an interface's
 * speed and MTU from sysfs. Private to collectors/linux/.
 *
 * A NETLINK_ROUTE socket subscribed to RTMGRP_LINK receives an RTM_NEWLINK from the kernel when an
 * interface is added, renamed, changes its MTU or its carrier (a new link speed comes with a
 * carrier change), and an RTM_DELLINK when it goes (rtnetlink(7); net/core/rtnetlink.c
 * rtnetlink_event, net/core/link_watch.c). The collector drains it without blocking once a tick:
 * no read of sysfs, no system call but the empty recv, while nothing changes.
 */
#ifndef PERFLOG_LINUX_LINKWATCH_H
#define PERFLOG_LINUX_LINKWATCH_H

#include <stddef.h>

struct linkwatch;

/* Called with the name of each interface a link message names (NUL-terminated, at most
 * IFNAMSIZ-1 bytes). */
typedef void (*linkwatch_fn)(void *ctx, const char *ifname);

/* Open the socket. NULL when netlink is not available (the reason is logged at info level) or on
 * out of memory: the caller then re-reads on a period only. */
struct linkwatch *linkwatch_new(void);
void linkwatch_free(struct linkwatch *w); /* accepts NULL */

/*
 * Drain the messages queued since the last call without blocking, calling fn for each interface
 * named by an RTM_NEWLINK or RTM_DELLINK from the kernel. Returns 1 when messages were lost (the
 * socket's buffer overran: the caller must assume every interface changed), 0 otherwise. Not
 * thread-safe: one collector owns a watch.
 */
int linkwatch_poll(struct linkwatch *w, linkwatch_fn fn, void *ctx);

/*
 * The pure half: walk the netlink messages in buf[0..len) and call fn for the interface named by
 * each RTM_NEWLINK or RTM_DELLINK (its IFLA_IFNAME attribute). Other message types, messages
 * without a name, names that are empty or not NUL-terminated within IFNAMSIZ, and a truncated
 * message or attribute (which ends the walk) are skipped. Returns the number of names passed to
 * fn.
 */
size_t linkwatch_parse(const void *buf, size_t len, linkwatch_fn fn, void *ctx);

#endif
