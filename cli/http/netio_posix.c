/*
 * netio_posix.c - netio.h with BSD sockets and poll(2).
 */
#include "cli/http/netio.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int netio_init(void)
{
    return 0;
}

int netio_wait(int fd, int for_write, int timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;
    struct pollfd p = {.fd = fd, .events = for_write ? POLLOUT : POLLIN};

    for (;;) {
        int64_t left = deadline - mono_ms();
        int r = poll(&p, 1, left > 0 ? (int)left : 0);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return -errno;
    }
}

int netio_connect(const struct addrinfo *ai, int timeout_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    int soerr = 0, r;
    socklen_t slen = sizeof(soerr);

    if (fd < 0)
        return -errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    r = errno == EINPROGRESS ? netio_wait(fd, 1, timeout_ms) : -errno;
    if (r == 0)
        r = -ETIMEDOUT;
    else if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &slen) < 0)
        r = -errno;
    else if (r > 0 && soerr)
        r = -soerr;
    if (r <= 0) {
        close(fd);
        return r;
    }
    return fd;
}

long netio_send(int fd, const char *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

    if (w >= 0)
        return (long)w;
    return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

long netio_recv(int fd, char *p, size_t n)
{
    ssize_t r = recv(fd, p, n, 0);

    if (r >= 0)
        return (long)r;
    return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

void netio_close(int fd)
{
    close(fd);
}

const char *netio_gai_error(int rc)
{
    return rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc);
}
