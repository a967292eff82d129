/*
 * netio_windows.c - netio.h with Winsock 2: ioctlsocket for non-blocking mode, select for the
 * waits, WSAGetLastError mapped to errno values. Winsock is started on first use.
 */
#include "cli/http/netio.h"

#include <errno.h>
#include <stdint.h>
#include <windows.h>

static INIT_ONCE started = INIT_ONCE_STATIC_INIT;

static BOOL CALLBACK start_winsock(INIT_ONCE *once, void *param, void **ctx)
{
    WSADATA wsa;

    (void)once;
    (void)param;
    (void)ctx;
    return WSAStartup(MAKEWORD(2, 2), &wsa) == 0;
}

static int errno_of(int wsa)
{
    switch (wsa) {
    case WSAEWOULDBLOCK:
    case WSAEINPROGRESS:
        return EAGAIN;
    case WSAEINTR:
        return EINTR;
    case WSAECONNREFUSED:
        return ECONNREFUSED;
    case WSAETIMEDOUT:
        return ETIMEDOUT;
    case WSAECONNRESET:
        return ECONNRESET;
    case WSAENETUNREACH:
    case WSAEHOSTUNREACH:
        return EHOSTUNREACH;
    case WSAEADDRNOTAVAIL:
        return EADDRNOTAVAIL;
    default:
        return EIO;
    }
}

int netio_init(void)
{
    return InitOnceExecuteOnce(&started, start_winsock, NULL, NULL) ? 0 : -EIO;
}

int netio_wait(int fd, int for_write, int timeout_ms)
{
    fd_set set, err;
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    int r;

    FD_ZERO(&set);
    FD_ZERO(&err);
    FD_SET((SOCKET)fd, &set);
    FD_SET((SOCKET)fd, &err); /* a failed connect shows in the exception set on Windows */
    r = select(0, for_write ? NULL : &set, for_write ? &set : NULL, &err, &tv);
    if (r == SOCKET_ERROR)
        return -errno_of(WSAGetLastError());
    return r > 0;
}

int netio_connect(const struct addrinfo *ai, int timeout_ms)
{
    SOCKET s;
    u_long nonblocking = 1;
    int soerr = 0, len = sizeof(soerr), r;

    if (netio_init() < 0)
        return -EIO;
    s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (s == INVALID_SOCKET)
        return -errno_of(WSAGetLastError());
    if (ioctlsocket(s, FIONBIO, &nonblocking) != 0) {
        closesocket(s);
        return -EIO;
    }
    if (connect(s, ai->ai_addr, (int)ai->ai_addrlen) == 0)
        return (int)s;
    r = WSAGetLastError() == WSAEWOULDBLOCK ? netio_wait((int)s, 1, timeout_ms)
                                            : -errno_of(WSAGetLastError());
    if (r == 0)
        r = -ETIMEDOUT;
    else if (r > 0 && getsockopt(s, SOL_SOCKET, SO_ERROR, (char *)&soerr, &len) != 0)
        r = -EIO;
    else if (r > 0 && soerr)
        r = -errno_of(soerr);
    if (r <= 0) {
        closesocket(s);
        return r;
    }
    return (int)s;
}

long netio_send(int fd, const char *p, size_t n)
{
    int w = send((SOCKET)fd, p, n > INT32_MAX ? INT32_MAX : (int)n, 0);

    return w == SOCKET_ERROR ? -errno_of(WSAGetLastError()) : w;
}

long netio_recv(int fd, char *p, size_t n)
{
    int r = recv((SOCKET)fd, p, n > INT32_MAX ? INT32_MAX : (int)n, 0);

    return r == SOCKET_ERROR ? -errno_of(WSAGetLastError()) : r;
}

void netio_close(int fd)
{
    closesocket((SOCKET)fd);
}

const char *netio_gai_error(int rc)
{
    return gai_strerrorA(rc);
}
