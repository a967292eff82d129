/*
 * linux_linkwatch.c - interface changes from rtnetlink link messages; see linux_linkwatch.h.
 */
#include "collectors/linux/linux_linkwatch.h"

#include "base/log.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One recv takes at most this much: an RTM_NEWLINK with its statistics is 1-2 KiB, and the
 * kernel never splits a message, so a whole one always fits. */
#define LINKWATCH_BUF 16384

struct linkwatch {
    int fd;
    unsigned char buf[LINKWATCH_BUF];
};

struct linkwatch *linkwatch_new(void)
{
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
    struct linkwatch *w = malloc(sizeof(*w));

    if (!w)
        return NULL;
    w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (w->fd < 0 || bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        log_info("rtnetlink: cannot watch link changes (%s); interfaces' speed and MTU are "
                 "re-read on a period only",
                 strerror(errno));
        if (w->fd >= 0)
            close(w->fd);
        free(w);
        return NULL;
    }
    return w;
}

void linkwatch_free(struct linkwatch *w)
{
    if (!w)
        return;
    close(w->fd);
    free(w);
}

/* IFLA_IFNAME of one link message's attributes, or NULL. */
static const char *link_name(const unsigned char *attrs, size_t len)
{
    while (len >= sizeof(struct rtattr)) {
        struct rtattr a;
        size_t alen, step;

        memcpy(&a, attrs, sizeof(a)); /* the buffer need not be aligned (fuzzing, fixtures) */
        alen = a.rta_len;
        step = RTA_ALIGN(alen);
        if (alen < sizeof(a) || alen > len)
            return NULL;
        if (a.rta_type == IFLA_IFNAME) {
            const char *name = (const char *)attrs + RTA_LENGTH(0);
            size_t n = alen - RTA_LENGTH(0), end = strnlen(name, n < IFNAMSIZ ? n : IFNAMSIZ);

            return end > 0 && end < n && end < IFNAMSIZ ? name : NULL;
        }
        if (step >= len)
            return NULL;
        attrs += step;
        len -= step;
    }
    return NULL;
}

size_t linkwatch_parse(const void *buf, size_t len, linkwatch_fn fn, void *ctx)
{
    const unsigned char *p = buf;
    size_t named = 0;

    while (len >= sizeof(struct nlmsghdr)) {
        struct nlmsghdr h;
        size_t mlen, step;
        const char *name;

        memcpy(&h, p, sizeof(h));
        mlen = h.nlmsg_len;
        step = NLMSG_ALIGN(mlen);
        if (mlen < sizeof(h) || mlen > len)
            break;
        if ((h.nlmsg_type == RTM_NEWLINK || h.nlmsg_type == RTM_DELLINK) &&
            mlen >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
            size_t off = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct ifinfomsg)));

            name = off < mlen ? link_name(p + off, mlen - off) : NULL;
            if (name) {
                fn(ctx, name);
                named++;
            }
        }
        if (step >= len)
            break;
        p += step;
        len -= step;
    }
    return named;
}

int linkwatch_poll(struct linkwatch *w, linkwatch_fn fn, void *ctx)
{
    int lost = 0;

    for (;;) {
        struct sockaddr_nl from;
        socklen_t fromlen = sizeof(from);
        ssize_t n = recvfrom(w->fd, w->buf, sizeof(w->buf), MSG_DONTWAIT, (struct sockaddr *)&from,
                             &fromlen);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) { /* overrun: some messages are gone, the next ones follow */
                lost = 1;
                continue;
            }
            return lost; /* EAGAIN: drained */
        }
        /* Only the kernel's messages: another process may send to our port. */
        if (fromlen == sizeof(from) && from.nl_pid == 0)
            linkwatch_parse(w->buf, (size_t)n, fn, ctx);
    }
}
