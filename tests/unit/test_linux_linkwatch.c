/*
 * test_linux_linkwatch.c - interface changes as the collector sees them (linux_linkwatch.h):
 * the parser on hand-made netlink messages (several in one buffer, other types, no name, a name
 * without its NUL, truncated headers and attributes), and the socket on the real kernel, in a
 * network namespace of the test's own with veth pairs made by `ip` (needs root: it fails, not
 * skips, without it): a new pair, an MTU change, a rename, a deletion, nothing when nothing
 * changed, and an overrun reported as lost messages.
 */
#include "collectors/linux/linux_linkwatch.h"
#include "testlib.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 64

struct seen {
    char names[MAX_SEEN][IFNAMSIZ];
    size_t n, calls;
};

static void collect(void *ctx, const char *ifname)
{
    struct seen *s = ctx;

    s->calls++;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], ifname) == 0)
            return;
    if (s->n < MAX_SEEN)
        snprintf(s->names[s->n++], IFNAMSIZ, "%s", ifname);
}

static int saw(const struct seen *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return 1;
    return 0;
}

/* Append one netlink message of `type` to buf at *off: an ifinfomsg, then an IFLA_MTU and, when
 * name_len > 0, an IFLA_IFNAME of name_len bytes copied from name (which need not hold a NUL). */
static void put_msg(unsigned char *buf, size_t *off, unsigned short type, const char *name,
                    size_t name_len)
{
    struct nlmsghdr h = {.nlmsg_type = type};
    struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC, .ifi_index = 7};
    struct rtattr mtu = {.rta_len = RTA_LENGTH(4), .rta_type = IFLA_MTU};
    struct rtattr nm = {.rta_len = (unsigned short)RTA_LENGTH(name_len), .rta_type = IFLA_IFNAME};
    unsigned int v = 1500;
    size_t at = *off + NLMSG_HDRLEN;

    memset(buf + *off, 0, 512);
    memcpy(buf + at, &ifi, sizeof(ifi));
    at += NLMSG_ALIGN(sizeof(ifi));
    memcpy(buf + at, &mtu, sizeof(mtu));
    memcpy(buf + at + RTA_LENGTH(0), &v, sizeof(v));
    at += RTA_ALIGN(mtu.rta_len);
    if (name_len > 0) {
        memcpy(buf + at, &nm, sizeof(nm));
        memcpy(buf + at + RTA_LENGTH(0), name, name_len);
        at += RTA_ALIGN(nm.rta_len);
    }
    h.nlmsg_len = (unsigned int)(at - *off);
    memcpy(buf + *off, &h, sizeof(h));
    *off = at;
}

static void test_parse(void)
{
    static unsigned char buf[8192];
    struct seen s = {0};
    size_t off = 0, n;

    put_msg(buf, &off, RTM_NEWLINK, "eth0", 5);
    put_msg(buf, &off, RTM_NEWADDR, "eth1", 5); /* not a link message */
    put_msg(buf, &off, RTM_DELLINK, "veth-a", 7);
    put_msg(buf, &off, RTM_NEWLINK, NULL, 0);                /* no name */
    put_msg(buf, &off, RTM_NEWLINK, "", 1);                  /* an empty name */
    put_msg(buf, &off, RTM_NEWLINK, "nonul", 5);             /* no NUL inside the attribute */
    put_msg(buf, &off, RTM_NEWLINK, "0123456789abcdef", 17); /* longer than IFNAMSIZ - 1 */
    put_msg(buf, &off, RTM_NEWLINK, "wlan0", 6);
    n = linkwatch_parse(buf, off, collect, &s);
    CHECK_INT(n, 3);
    CHECK_INT(s.n, 3);
    CHECK(saw(&s, "eth0"));
    CHECK(saw(&s, "veth-a"));
    CHECK(saw(&s, "wlan0"));
    CHECK(!saw(&s, "eth1"));

    /* Every truncation of the buffer: never past its end (ASan), the whole messages only. */
    for (size_t cut = 0; cut < off; cut++) {
        struct seen t = {0};

        n = linkwatch_parse(buf, cut, collect, &t);
        CHECK(n <= 3);
    }

    /* A message whose length claims more than the buffer holds ends the walk. */
    {
        struct seen t = {0};
        struct nlmsghdr h;
        size_t o2 = 0;

        put_msg(buf, &o2, RTM_NEWLINK, "eth0", 5);
        put_msg(buf, &o2, RTM_NEWLINK, "eth9", 5);
        memcpy(&h, buf, sizeof(h));
        h.nlmsg_len = (unsigned int)o2 + 64;
        memcpy(buf, &h, sizeof(h));
        CHECK_INT(linkwatch_parse(buf, o2, collect, &t), 0);
        h.nlmsg_len = 8; /* shorter than its own header */
        memcpy(buf, &h, sizeof(h));
        CHECK_INT(linkwatch_parse(buf, o2, collect, &t), 0);
    }

    /* An attribute that claims more than its message. */
    {
        struct seen t = {0};
        struct rtattr a;
        size_t o3 = 0, at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg));

        put_msg(buf, &o3, RTM_NEWLINK, "eth0", 5);
        memcpy(&a, buf + at, sizeof(a));
        a.rta_len = 4000;
        memcpy(buf + at, &a, sizeof(a));
        CHECK_INT(linkwatch_parse(buf, o3, collect, &t), 0);
    }

    /* Unaligned: the parser copies headers out, so any start will do (UBSan). */
    {
        struct seen t = {0};
        size_t o4 = 0;

        put_msg(buf + 1, &o4, RTM_NEWLINK, "lo", 3);
        CHECK_INT(linkwatch_parse(buf + 1, o4, collect, &t), 1);
        CHECK(saw(&t, "lo"));
    }
}

static int ip(const char *args)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd), "ip %s >/dev/null 2>&1", args);
    return system(cmd);
}

static void test_kernel(void)
{
    struct linkwatch *w;
    struct seen s = {0};

    /* A namespace of our own: the links made here are seen by nobody else and go with it. */
    if (unshare(CLONE_NEWNET) < 0) {
        fprintf(stderr, "cannot make a network namespace (needs root): %s\n", strerror(errno));
        CHECK(0);
        return;
    }
    w = linkwatch_new();
    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_INT(linkwatch_poll(w, collect, &s), 0);
    CHECK_INT(s.calls, 0); /* nothing changed */

    CHECK_INT(ip("link add plw0 type veth peer name plw1"), 0);
    CHECK_INT(linkwatch_poll(w, collect, &s), 0);
    CHECK(saw(&s, "plw0"));
    CHECK(saw(&s, "plw1"));
    memset(&s, 0, sizeof(s));
    CHECK_INT(linkwatch_poll(w, collect, &s), 0);
    CHECK_INT(s.calls, 0); /* drained */

    CHECK_INT(ip("link set plw0 mtu 9000"), 0);
    CHECK_INT(linkwatch_poll(w, collect, &s), 0);
    CHECK(saw(&s, "plw0"));
    memset(&s, 0, sizeof(s));

    CHECK_INT(ip("link set plw1 name plw2"), 0);
    CHECK_INT(linkwatch_poll(w, collect, &s), 0);
    CHECK(saw(&s, "plw2"));
    memset(&s, 0, sizeof(s));

    CHECK_INT(ip("link del plw0"), 0); /* its peer goes with it */
    CHECK_INT(linkwatch_poll(w, collect, &s), 0);
    CHECK(saw(&s, "plw0"));
    CHECK(saw(&s, "plw2"));
    memset(&s, 0, sizeof(s));

    /*
     * An overrun: a few hundred veth pairs made without a poll in between queue more messages
     * (1-2 KiB each) than the socket's default buffer holds (net.core.rmem_default, 208 KiB):
     * the poll says some were lost, and the next one is quiet again.
     */
    {
        FILE *f = fopen("/tmp/perflog-linkwatch.batch", "w");

        CHECK(f != NULL);
        if (!f)
            goto out;
        for (int i = 0; i < 300; i++)
            fprintf(f, "link add plo%d type veth peer name plp%d\n", i, i);
        fclose(f);
        CHECK_INT(ip("-batch /tmp/perflog-linkwatch.batch"), 0);
        remove("/tmp/perflog-linkwatch.batch");
        CHECK_INT(linkwatch_poll(w, collect, &s), 1);
        memset(&s, 0, sizeof(s));
        CHECK_INT(linkwatch_poll(w, collect, &s), 0);
        CHECK_INT(s.calls, 0);
    }
out:
    linkwatch_free(w);
}

int main(void)
{
    test_parse();
    test_kernel();
    linkwatch_free(NULL);
    return tl_done();
}
