/*
 * netio.h - the socket calls of the HTTP client (httpc.c), per platform: BSD sockets with poll
 * (netio_posix.c), Winsock with select (netio_windows.c). Sockets are non-blocking; every wait
 * is bounded. A socket is an int on both (Windows documents that a SOCKET fits in 32 bits).
 */
#ifndef PERFLOG_NETIO_H
#define PERFLOG_NETIO_H

#include "base/sock.h"

#include <stddef.h>

/* Start the socket library if the platform needs it (Winsock); before any other call,
 * getaddrinfo included. Returns 0 or a negative errno. Thread-safe. */
int netio_init(void);

/* Wait until fd is writable (for_write) or readable, at most timeout_ms. Returns 1 when ready,
 * 0 on timeout, or a negative errno. */
int netio_wait(int fd, int for_write, int timeout_ms);

/* A socket connected to ai within timeout_ms, non-blocking; or a negative errno. */
int netio_connect(const struct addrinfo *ai, int timeout_ms);

/* send/recv: bytes moved (recv: 0 at the end of the stream), or a negative errno; -EAGAIN when
 * the call would block, -EINTR when interrupted. Never raises SIGPIPE. */
long netio_send(int fd, const char *p, size_t n);
long netio_recv(int fd, char *p, size_t n);

void netio_close(int fd);

/* The text of getaddrinfo's error `rc`. */
const char *netio_gai_error(int rc);

#endif
