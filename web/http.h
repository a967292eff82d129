/*
 * http.h - the HTTP server: libmicrohttpd with its own polling threads (a small pool), each
 * worker reading through its own read-only SQLite connection. It turns requests into struct
 * api_request, enforces the limits (URL, body, connections, timeouts) and sends what the pure
 * handlers of api.h answer. This is the only module that includes microhttpd.h.
 */
#ifndef PERFLOG_HTTP_H
#define PERFLOG_HTTP_H

#include "api.h"

#include <stddef.h>
#include <stdint.h>

struct http_settings {
    const char *host; /* IPv4/IPv6 literal or a name; IPv6 without brackets */
    int port;
    int threads;         /* worker threads, >= 1 */
    int max_connections; /* above it a client gets 503 and is closed */
    int timeout_s;       /* an idle or too slow connection is closed after this */
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

/* Stop accepting, finish or drop the connections in flight, join the threads. Accepts NULL. */
void http_stop(struct http_server *srv);

#endif
