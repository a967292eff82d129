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
#else
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#define sock_close close
#endif

#endif
