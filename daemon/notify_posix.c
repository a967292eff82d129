/*
 * notify_posix.c - the sd_notify protocol without libsystemd; see notify.h and sd_notify(3).
 *
 * The message is one datagram on an AF_UNIX SOCK_DGRAM socket. The manager learns the sender's pid
 * from SCM_CREDENTIALS, which the kernel attaches because the receiving socket sets SO_PASSCRED;
 * every thread of perflogd sends as the main pid, which is what NotifyAccess=main accepts. The
 * address is sent with every datagram (sendto, not connect) so a manager that re-executes itself
 * and re-binds the socket is still reached.
 */
#include "daemon/notify_posix.h"

#include "base/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct notify {
    int fd;
    struct sockaddr_un addr;
    socklen_t addr_len;
    atomic_flag failure_logged;
};

int notify_parse_address(const char *name, struct sockaddr_un *addr, socklen_t *len)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = name ? strlen(name) : 0;

    /* A path must be absolute; '@' names the abstract namespace (a leading NUL, not terminated). */
    if (n < 2 || (name[0] != '/' && name[0] != '@') || n > sizeof(a.sun_path) - 1)
        return -EINVAL;
    memcpy(a.sun_path, name, n);
    if (name[0] == '@') {
        a.sun_path[0] = '\0';
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
    *addr = a;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

uint64_t notify_parse_watchdog(const char *usec, const char *pid, pid_t self)
{
    uint64_t period, p;

    if (parse_u64(usec, &period) < 0 || period == 0)
        return 0;
    /* WATCHDOG_PID names the process the watchdog is meant for; a child that inherited the
     * variables must not ping on its parent's behalf. */
    if (pid && (parse_u64(pid, &p) < 0 || p != (uint64_t)self))
        return 0;
    return period;
}

uint64_t notify_watchdog_usec(void)
{
    return notify_parse_watchdog(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"), getpid());
}

struct notify *notify_new(void)
{
    const char *name = getenv("NOTIFY_SOCKET");
    struct notify *n;

    if (!name || !*name)
        return NULL;
    n = calloc(1, sizeof(*n));
    if (!n) {
        log_error("notify: out of memory");
        return NULL;
    }
    atomic_flag_clear(&n->failure_logged);
    if (notify_parse_address(name, &n->addr, &n->addr_len) < 0) {
        log_warnx("NOTIFY_SOCKET=%s is not an absolute path or @name; not notifying", name);
        free(n);
        return NULL;
    }
    n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (n->fd < 0) {
        log_warn("notify: socket");
        free(n);
        return NULL;
    }
    return n;
}

void notify_free(struct notify *n)
{
    if (!n)
        return;
    close(n->fd);
    free(n);
}

int notify_send(struct notify *n, const char *state)
{
    ssize_t sent;
    int err;

    if (!n)
        return 0;
    sent = sendto(n->fd, state, strlen(state), MSG_DONTWAIT | MSG_NOSIGNAL,
                  (const struct sockaddr *)&n->addr, n->addr_len);
    if (sent >= 0)
        return 0;
    err = errno;
    if (!atomic_flag_test_and_set(&n->failure_logged))
        log_warn("notify: cannot send %.*s to NOTIFY_SOCKET (logged once)",
                 (int)strcspn(state, "\n"), state);
    return -err;
}
