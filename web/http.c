/*
 * http.c - libmicrohttpd glue; see http.h.
 *
 * A request arrives in several calls of on_request: the first (headers read) checks the limits,
 * later ones deliver the body, the last one (upload_size 0 again) answers. The raw URI, with its
 * query string undecoded, comes from the URI log callback, which also allocates the per-request
 * state that MHD hands back in *con_cls.
 */
#include "http.h"

#include "log.h"
#include "sock.h"
#include "thread_prio.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REOPEN_INTERVAL_MS 1000  /* how often a worker retries a database it could not open */
#define WORKER_NICE        5     /* HTTP threads yield to the sampler (nice -10) and the writer */
#define STREAM_BLOCK       65536 /* bytes a streamed answer is asked for at a time */

struct http_server {
    struct MHD_Daemon *mhd;
    const struct api_env *env;
    struct http_settings set;
    pthread_key_t reader_key; /* each worker thread's struct worker */
    _Atomic int connections;
};

/* A worker thread's own read connection. */
struct worker {
    struct reader *rd;
    int64_t tried_ms;
};

struct request {
    char *uri; /* as received, with the query string */
    size_t uri_len;
    char *body;
    size_t body_len;
    int started;      /* the first call (headers) is done */
    int status;       /* non-zero: a limit answer is decided, body data is discarded */
    const char *code; /* its error code */
};

static void worker_free(void *p)
{
    struct worker *w = p;

    if (w)
        reader_close(w->rd);
    free(w);
}

/* This thread's reader, opened on first use and re-tried at most once a second after failing. */
static struct reader *thread_reader(struct http_server *srv)
{
    struct worker *w = pthread_getspecific(srv->reader_key);
    char err[512];
    int64_t now;

    if (!w) {
        w = calloc(1, sizeof(*w));
        if (!w || pthread_setspecific(srv->reader_key, w) != 0) {
            free(w);
            return NULL;
        }
        /* First request on this pool thread: lower only the HTTP workers, so a flood of clients
         * competes with itself, not with the sampler. Failure (a restricted container) changes
         * nothing else. */
        thread_prio_lower(WORKER_NICE);
    }
    if (w->rd)
        return w->rd;
    now = api_now_ms(srv->env);
    if (w->tried_ms && now - w->tried_ms < REOPEN_INTERVAL_MS)
        return NULL;
    w->tried_ms = now;
    if (reader_open(srv->env->db_path, &w->rd, err, sizeof(err)) < 0) {
        log_warnx("http: %s", err);
        w->rd = NULL;
    }
    return w->rd;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct request *rq = calloc(1, sizeof(*rq));

    (void)cls;
    (void)c;
    if (rq) {
        rq->uri_len = strlen(uri);
        rq->uri = strdup(uri);
        if (!rq->uri) {
            free(rq);
            rq = NULL;
        }
    }
    return rq;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct request *rq = *con_cls;

    (void)cls;
    (void)c;
    (void)toe;
    if (rq) {
        free(rq->uri);
        free(rq->body);
        free(rq);
    }
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *srv = cls;

    (void)c;
    (void)socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&srv->connections, 1);
    else
        atomic_fetch_sub(&srv->connections, 1);
}

/* libmicrohttpd pulls a streamed answer through this; the stream runs on the worker thread that
 * owns the connection, so the thread's read connection is never shared. */
static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct api_response *a = cls;
    ssize_t n;

    (void)pos;
    n = a->stream(a->stream_ctx, buf, max);
    if (n > 0)
        return n;
    if (n < 0)
        log_warnx("http: a streamed answer failed (%s); closing the connection", strerror((int)-n));
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_done(void *cls)
{
    struct api_response *a = cls;

    a->stream_free(a->stream_ctx);
    free(a);
}

static struct MHD_Response *stream_response(struct api_response *a)
{
    struct api_response *keep = malloc(sizeof(*keep));
    struct MHD_Response *r;

    if (!keep) {
        a->stream_free(a->stream_ctx);
        return NULL;
    }
    *keep = *a;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_cb, keep,
                                          stream_done);
    if (!r)
        stream_done(keep);
    return r;
}

static enum MHD_Result send_answer(struct MHD_Connection *c, struct api_response *a, int close)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (a->stream)
        r = stream_response(a);
    else
        r = MHD_create_response_from_buffer(a->body_len, a->body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        if (!a->stream)
            free(a->body);
        return MHD_NO;
    }
    if (a->disposition[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, a->disposition);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                            a->cache_control ? a->cache_control : "no-store");
    /* The browser must take every answer as its declared type: JSON and CSV are never scripts. */
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (a->csp)
        MHD_add_response_header(r, "Content-Security-Policy", a->csp);
    if (a->allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, a->allow);
    if (close)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(c, (unsigned int)a->status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *code,
                                  const char *msg)
{
    struct api_response a = {0};

    if (api_error(&a, status, code, "%s", msg) < 0)
        return MHD_NO;
    return send_answer(c, &a, status >= 413);
}

/* The limits that can be judged from the request line and headers alone. */
static int check_limits(struct http_server *srv, struct MHD_Connection *c, struct request *rq)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

    if (atomic_load(&srv->connections) > srv->set.max_connections) {
        rq->code = "too_many_connections";
        return 503;
    }
    if ((int64_t)rq->uri_len > srv->set.max_url_bytes) {
        rq->code = "uri_too_long";
        return 414;
    }
    if (cl && strtoull(cl, NULL, 10) > (unsigned long long)srv->set.max_body_bytes) {
        rq->code = "body_too_large";
        return 413;
    }
    return 0;
}

static const char *limit_message(struct http_server *srv, int status, char *buf, size_t cap)
{
    if (status == 503)
        snprintf(buf, cap, "more than %d connections are open; try again later",
                 srv->set.max_connections);
    else if (status == 414)
        snprintf(buf, cap, "the request URI is longer than %lld bytes",
                 (long long)srv->set.max_url_bytes);
    else
        snprintf(buf, cap, "the request body is larger than %lld bytes",
                 (long long)srv->set.max_body_bytes);
    return buf;
}

static int take_body(struct http_server *srv, struct request *rq, const char *data, size_t n)
{
    char *b;

    if ((int64_t)(rq->body_len + n) > srv->set.max_body_bytes) {
        rq->status = 413;
        rq->code = "body_too_large";
        return 0;
    }
    b = realloc(rq->body, rq->body_len + n + 1);
    if (!b)
        return -ENOMEM;
    memcpy(b + rq->body_len, data, n);
    rq->body = b;
    rq->body_len += n;
    b[rq->body_len] = '\0';
    return 0;
}

static enum MHD_Result answer(struct http_server *srv, struct MHD_Connection *c, struct request *rq,
                              const char *method)
{
    struct api_request in = {0};
    struct api_response out;
    char *q = memchr(rq->uri, '?', rq->uri_len), msg[160];

    if (rq->status)
        return send_error(c, rq->status, rq->code,
                          limit_message(srv, rq->status, msg, sizeof(msg)));
    if (q)
        *q = '\0';
    in.method = method;
    in.path = rq->uri;
    in.query = q ? q + 1 : "";
    in.query_len = q ? rq->uri_len - (size_t)(q + 1 - rq->uri) : 0;
    in.authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    in.body = rq->body;
    in.body_len = rq->body_len;
    if (api_handle(srv->env, thread_reader(srv), &in, &out) < 0)
        return send_error(c, 500, "internal", "out of memory");
    return send_answer(c, &out, 0);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct http_server *srv = cls;
    struct request *rq = *con_cls;
    char msg[160];

    (void)url;
    (void)version;
    if (!rq)
        return MHD_NO; /* out of memory in on_uri */
    if (!rq->started) {
        rq->started = 1;
        rq->status = check_limits(srv, c, rq);
        /* Answer a limit at once: libmicrohttpd then discards the body and closes. */
        if (rq->status)
            return send_error(c, rq->status, rq->code,
                              limit_message(srv, rq->status, msg, sizeof(msg)));
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->status && take_body(srv, rq, upload, *upload_size) < 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    return answer(srv, c, rq, method);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    size_t n;

    (void)cls;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    n = strlen(buf);
    while (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    log_debug("libmicrohttpd: %s", buf);
}

static int resolve(const struct http_settings *s, struct sockaddr_storage *ss, char *err,
                   size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai;
    char port[16];
    int rc;

    snprintf(port, sizeof(port), "%d", s->port);
    rc = getaddrinfo(s->host, port, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "listen address %s: %s", s->host, gai_strerror(rc));
        return -EINVAL;
    }
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return 0;
}

int http_start(const struct http_settings *s, const struct api_env *env, struct http_server **out,
               char *err, size_t errlen)
{
    struct http_server *srv = calloc(1, sizeof(*srv));
    struct sockaddr_storage ss;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    size_t pool = (size_t)(s->max_url_bytes * 4 > 65536 ? s->max_url_bytes * 4 : 65536);

    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (resolve(s, &ss, err, errlen) < 0) {
        free(srv);
        return -EINVAL;
    }
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    srv->env = env;
    srv->set = *s;
    pthread_key_create(&srv->reader_key, worker_free);
    srv->mhd = MHD_start_daemon(
        flags, (uint16_t)s->port, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, &ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)s->threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned int)s->max_connections + 64, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)s->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
        MHD_OPTION_END);
    if (!srv->mhd) {
        int e = errno ? errno : EADDRINUSE;

        snprintf(err, errlen, "cannot listen on %s:%d: %s", s->host, s->port, strerror(e));
        pthread_key_delete(srv->reader_key);
        free(srv);
        return -e;
    }
    *out = srv;
    return 0;
}

void http_stop(struct http_server *srv)
{
    if (!srv)
        return;
    /* The pool threads exit here; their thread-specific readers are closed by worker_free. */
    MHD_stop_daemon(srv->mhd);
    pthread_key_delete(srv->reader_key);
    free(srv);
}
