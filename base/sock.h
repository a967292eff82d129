/*
 * sock.h - the socket headers of the platform: BSD sockets, or Winsock 2 on Windows (whose
 * getaddrinfo, inet_pton and sockaddr_storage are the same names, declared in other files).
 */
#ifndef PERFLOG_SOCK_H
#define PERFLOG_SOCK_H

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#define SHUT_RDWR  SD_BOTH
#define sock_close closesocket
/* Whether the peer has closed its side: Winsock does not tell without reading; never, here. */
static inline int sock_peer_gone(SOCKET fd)
{
    (void)fd;
    return 0;
}
#else
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#define sock_close close
/* Whether the peer has closed its side (or the connection is reset), without reading. */
static inline int sock_peer_gone(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};

    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}
#endif

#endif
