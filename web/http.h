/*
 * http.h - the HTTP server: libmicrohttpd with its own polling threads (a small pool), each
 * worker reading through its own read-only SQLite connection. It turns requests into struct
 * api_request, enforces the limits (URL, body, connections, timeouts) and sends what the pure
 * handlers of api.h answer. This is the only module that includes microhttpd.h.
 */
#ifndef PERFLOG_HTTP_H
#define PERFLOG_HTTP_H

#include "web/api.h"

#include <stddef.h>
#include <stdint.h>

struct http_settings {
    const char *host; /* IPv4/IPv6 literal or a name; IPv6 without brackets */
    int port;
    int threads;                /* worker threads, >= 1 */
    int max_connections;        /* above it a client gets 503 and is closed */
    int timeout_s;              /* an idle or too slow connection is closed after this */
    int header_timeout_s;       /* a whole request (headers and body) must arrive within this */
    int max_connections_per_ip; /* per client address; more are closed unanswered */
    int64_t max_body_bytes;
    int64_t max_url_bytes;
};

struct http_server;

/*
 * Start serving `env` (which must outlive the server). Returns 0 and sets *out, or a negative
 * errno with a message in err (-EADDRINUSE: the port is taken).
 */
int http_start(const struct http_settings *s, const struct api_env *env, struct http_server **out,
               char *err, size_t errlen);

/* 1 if `host` (as in http_settings) is a loopback address: 127.0.0.0/8, ::1, or a name that
 * resolves to one. "0.0.0.0", "::" and every other address are not. */
int http_host_is_loopback(const char *host);

/* How many read connections the workers have opened since the start (an idle one is closed
 * READER_IDLE_MS after the last request, web/http.c); 0 for NULL. */
uint64_t http_readers_opened(struct http_server *srv);

/* Stop accepting, finish or drop the connections in flight, join the threads. Accepts NULL. */
void http_stop(struct http_server *srv);

#endif
