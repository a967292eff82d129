/*
 * fuzz_linkwatch.c - libFuzzer target for linux_linkwatch.h's parser of rtnetlink messages. Beyond
 * "no crash, no UB": every name passed on is non-empty and NUL-terminated within IFNAMSIZ, and
 * there are no more names than whole link messages fit in the input.
 */
#include "collectors/linux/linux_linkwatch.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static void named(void *ctx, const char *ifname)
{
    size_t *calls = ctx;

    CHECK(memchr(ifname, '\0', IFNAMSIZ) != NULL);
    CHECK(ifname[0] != '\0');
    ++*calls;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The smallest link message with a name: header, ifinfomsg, a 1-byte name and its NUL. */
    size_t smallest = NLMSG_LENGTH(sizeof(struct ifinfomsg)) + RTA_LENGTH(2);
    size_t calls = 0, n = linkwatch_parse(data, size, named, &calls);

    CHECK(n == calls);
    CHECK(n <= size / smallest);
    return 0;
}
