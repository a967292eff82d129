/*
 * http.c - libmicrohttpd glue; see http.h.
 *
 * A request arrives in several calls of on_request: the first (headers read) checks the limits,
 * later ones deliver the body, the last one (upload_size 0 again) answers. The raw URI, with its
 * query string undecoded, comes from the URI log callback.
 *
 * Ownership: everything a request allocates hangs off its connection's struct conn, made when
 * libmicrohttpd reports the connection started and freed when it reports it closed, which it does
 * for every connection however it ends. The request-completed callback only frees early what the
 * close would free anyway: libmicrohttpd skips it when it drops a connection while reading the
 * headers (its pool full, a malformed line), so it must not be the only owner.
 */
#include "web/http.h"

#include "base/log.h"
#include "base/mem.h"
#include "base/sock.h"
#include "base/thread_prio.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REOPEN_INTERVAL_MS 1000  /* how often a worker retries a database it could not open */
#define SPARE_READER_MS    10000 /* spare idle readers are kept this long after all were busy */
#define READER_IDLE_MS     10000 /* with no request for this long, the idle readers are closed */
#define TRIM_BODY_BYTES    32768 /* an answer this large has the freed heap given back */
#define WORKER_NICE        5     /* HTTP threads yield to the sampler (nice -10) and the writer */
#define STREAM_BLOCK       65536 /* bytes a streamed answer is asked for at a time */
#define CHEAP_RESERVE      64    /* connections beyond max_connections kept for health checks */
#define SWEEP_MS           250   /* how often unfinished requests are checked against the timeout */
#define LOG_CUT_MS         10000 /* connections cut by the header timeout: one log line per this */

struct conn;

struct http_server {
    struct MHD_Daemon *mhd;
    const struct api_env *env;
    struct http_settings set;
    pthread_key_t named_key; /* set once a pool thread is named and lowered */
    /* The read connections, shared by the workers: each parses the whole schema (0.4 MiB),
     * so there are as many as requests read at once, not one per thread; `pool_lock` guards. */
    pthread_mutex_t pool_lock;
    struct reader **idle;
    size_t n_idle, idle_cap; /* idle_cap: one per pool thread */
    int busy;                /* handed out, not yet given back */
    int64_t tried_ms;        /* the last open that failed */
    int64_t two_busy_ms;     /* the last time a request found every reader busy */
    int64_t given_ms;        /* monotonic: the last time a reader was given back */
    uint64_t opened;         /* readers opened since the start */
    size_t max_header_bytes; /* above it a 431 of ours; above the pool, libmicrohttpd's own */
    _Atomic int connections;
    /* Every open connection, for the sweeper that cuts requests not received within
     * header_timeout_s; `lock` guards the list and each conn's timing fields. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct conn *conns;
    pthread_t sweeper;
    int sweeper_started, sweeper_stop;
};

struct request {
    char *uri; /* as received, with the query string */
    size_t uri_len;
    char *body;
    size_t body_len;
    int started;      /* the first call (headers) is done */
    int large;        /* its answer is TRIM_BODY_BYTES or more */
    int status;       /* non-zero: a limit answer is decided, body data is discarded */
    const char *code; /* its error code */
};

/* One connection's state, owned from MHD_CONNECTION_NOTIFY_STARTED to ..._CLOSED; its requests
 * follow one another, so one struct request is reused. */
struct conn {
    struct request rq;
    struct conn *prev, *next; /* srv->conns, under srv->lock */
    MHD_socket fd;
    int remote;         /* the client is not on a loopback address */
    int receiving;      /* a request is being received (the header timeout runs); srv->lock */
    int64_t since_ms;   /* ... since then (connection start, or the end of the previous answer) */
    int cut;            /* the sweeper shut the socket down */
    int answering;      /* received whole and being answered (the sweeper watches for a hang-up) */
    _Atomic int cancel; /* api_request.cancel: the client hung up, or the server stops */
    char client[64];    /* the client's address, for the log */
};

static void request_reset(struct request *rq)
{
    free(rq->uri);
    free(rq->body);
    memset(rq, 0, sizeof(*rq));
}

static void thread_setup(struct http_server *srv)
{
    if (pthread_getspecific(srv->named_key))
        return;
    pthread_setspecific(srv->named_key, srv);
    /* First request on this pool thread: lower only the HTTP workers, so a flood of clients
     * competes with itself, not with the sampler. Failure (a restricted container) changes
     * nothing else. */
    thread_prio_lower(WORKER_NICE);
    /* libmicrohttpd starts its pool threads with no hook to name them: a worker takes the name
     * at its first request. */
    pthread_setname_np(pthread_self(), "perflog-http");
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A reader for one request, to give back with reader_give: an idle one, else a new one (opened
 * at most once a second after an open failed). NULL when the database cannot be opened. */
static struct reader *reader_take(struct http_server *srv)
{
    struct reader *rd = NULL;
    char err[512];
    int64_t now = api_now_ms(srv->env);

    pthread_mutex_lock(&srv->pool_lock);
    if (srv->n_idle) {
        rd = srv->idle[--srv->n_idle];
        srv->busy++;
        pthread_mutex_unlock(&srv->pool_lock);
        return rd;
    }
    if (srv->tried_ms && now - srv->tried_ms < REOPEN_INTERVAL_MS) {
        pthread_mutex_unlock(&srv->pool_lock);
        return NULL;
    }
    if (srv->busy)
        srv->two_busy_ms = now;
    pthread_mutex_unlock(&srv->pool_lock);
    /* Outside the lock: opening reads the schema, and a request with an idle reader need not
     * wait for that. */
    if (reader_open(srv->env->db_path, &rd, err, sizeof(err)) < 0) {
        log_warnx("http: %s", err);
        rd = NULL;
    }
    pthread_mutex_lock(&srv->pool_lock);
    srv->tried_ms = rd ? 0 : now;
    srv->busy += rd != NULL;
    srv->opened += rd != NULL;
    pthread_mutex_unlock(&srv->pool_lock);
    return rd;
}

/* Give back a reader from reader_take (NULL: none), its page cache emptied: every commit of the
 * writer invalidates it anyway. One idle reader is kept, more only while requests have found
 * every reader busy within SPARE_READER_MS. */
static void reader_give(struct http_server *srv, struct reader *rd)
{
    int64_t now = api_now_ms(srv->env);

    if (!rd)
        return;
    reader_release_memory(rd);
    pthread_mutex_lock(&srv->pool_lock);
    srv->busy--;
    srv->given_ms = mono_ms();
    if (srv->n_idle < srv->idle_cap && (!srv->n_idle || now - srv->two_busy_ms < SPARE_READER_MS)) {
        srv->idle[srv->n_idle++] = rd;
        rd = NULL;
    }
    pthread_mutex_unlock(&srv->pool_lock);
    reader_close(rd);
    /* A streamed answer can end after its connection is unlinked: a sweeper asleep with no
     * connection learns of the idle reader it is to close. */
    pthread_mutex_lock(&srv->lock);
    if (!srv->conns)
        pthread_cond_signal(&srv->wake);
    pthread_mutex_unlock(&srv->lock);
}

/* Close the idle readers once no reader has been given back for READER_IDLE_MS: each holds a
 * parsed schema (about 0.4 MiB of heap with its lookaside), and reopening one costs a schema parse
 * (1.3-1.8 ms on the real machine), which a dashboard's requests every second never pay. Returns
 * the ms until the idle readers are due to close, -1 when none is idle. */
static int64_t readers_idle_close(struct http_server *srv, int64_t now)
{
    struct reader *rd;
    int64_t left;

    for (;;) {
        pthread_mutex_lock(&srv->pool_lock);
        if (!srv->n_idle) {
            pthread_mutex_unlock(&srv->pool_lock);
            return -1;
        }
        left = srv->given_ms + READER_IDLE_MS - now;
        if (left > 0) {
            pthread_mutex_unlock(&srv->pool_lock);
            return left;
        }
        rd = srv->idle[--srv->n_idle];
        pthread_mutex_unlock(&srv->pool_lock);
        reader_close(rd);
        mem_trim_ask();
    }
}

uint64_t http_readers_opened(struct http_server *srv)
{
    uint64_t n;

    if (!srv)
        return 0;
    pthread_mutex_lock(&srv->pool_lock);
    n = srv->opened;
    pthread_mutex_unlock(&srv->pool_lock);
    return n;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/* Start or stop the header timeout of cn's current request; `answering`: it was received whole
 * and its answer is being made or sent. */
static void conn_receiving(struct http_server *srv, struct conn *cn, int on, int answering)
{
    pthread_mutex_lock(&srv->lock);
    cn->receiving = on;
    cn->answering = answering;
    if (on) {
        cn->since_ms = mono_ms();
        atomic_store(&cn->cancel, 0); /* a new request on a kept-alive connection */
    }
    pthread_mutex_unlock(&srv->lock);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct conn *cn = conn_of(c);
    char *q;

    (void)cls;
    if (!cn)
        return NULL;
    request_reset(&cn->rq); /* a previous request that never completed */
    cn->rq.uri_len = strlen(uri);
    cn->rq.uri = strdup(uri);
    if (!cn->rq.uri)
        return NULL;
    /* libmicrohttpd parses the query string into its fixed per-connection pool right after this
     * call; about a thousand parameters fill the pool and it drops the connection without an
     * answer. The handlers read the query from the copy above only, so end the string it is
     * about to parse: it then records no arguments, and our own parser answers 400 or 414. */
    q = strchr(uri, '?');
    if (q && q[1])
        q[1] = '\0';
    return &cn->rq;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct http_server *srv = cls;
    struct request *rq = *con_cls;
    struct conn *cn = conn_of(c);

    (void)toe;
    /* A large answer leaves its peak's chunks free in the heap once sent: the writer gives them
     * back at its next idle point (base/mem.h). */
    if (rq && rq->large)
        mem_trim_ask();
    if (rq)
        request_reset(rq);
    *con_cls = NULL;
    if (cn)
        conn_receiving(srv, cn, 1, 0); /* the next request on a kept-alive connection */
}

static int addr_is_loopback(const struct sockaddr *sa)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const unsigned char *a6;

    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) ==
               127;
    if (sa->sa_family != AF_INET6)
        return 0;
    a6 = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
    if (!memcmp(a6, mapped, sizeof(mapped)))
        return a6[12] == 127;
    for (int i = 0; i < 15; i++)
        if (a6[i])
            return 0;
    return a6[15] == 1;
}

static void conn_describe(struct conn *cn, const struct sockaddr *sa)
{
    char host[INET6_ADDRSTRLEN] = "?";

    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, host,
                  sizeof(host));
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, host,
                  sizeof(host));
    snprintf(cn->client, sizeof(cn->client), "%s", host);
    cn->remote = !addr_is_loopback(sa);
}

static struct conn *conn_new(struct http_server *srv, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct conn *cn = calloc(1, sizeof(*cn));

    if (!cn)
        return NULL;
    cn->fd = fd ? fd->connect_fd : MHD_INVALID_SOCKET;
    conn_describe(cn, ad ? ad->client_addr : NULL);
    pthread_mutex_lock(&srv->lock);
    cn->receiving = 1;
    cn->since_ms = mono_ms();
    cn->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = cn;
    else
        pthread_cond_signal(&srv->wake); /* the sweeper sleeps while there is no connection */
    srv->conns = cn;
    pthread_mutex_unlock(&srv->lock);
    return cn;
}

/* Unlinked under the lock before libmicrohttpd closes the socket, so the sweeper never shuts
 * down a descriptor that has been closed (and maybe reused). */
static void conn_free(struct http_server *srv, struct conn *cn)
{
    pthread_mutex_lock(&srv->lock);
    if (cn->prev)
        cn->prev->next = cn->next;
    else
        srv->conns = cn->next;
    if (cn->next)
        cn->next->prev = cn->prev;
    pthread_mutex_unlock(&srv->lock);
    request_reset(&cn->rq);
    free(cn);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *srv = cls;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&srv->connections, 1);
        /* NULL (out of memory) is checked by on_uri, which then refuses the request. */
        *socket_context = conn_new(srv, c);
        return;
    }
    atomic_fetch_sub(&srv->connections, 1);
    if (*socket_context)
        conn_free(srv, *socket_context);
    *socket_context = NULL;
}

/*
 * The header timeout. libmicrohttpd's own timeout is an idle timeout, reset by every byte, so a
 * client sending a header byte every few seconds would hold its connection (and a worker's
 * attention) forever. Once a second or so this thread shuts down the socket of each request
 * still not received whole after header_timeout_s; libmicrohttpd then reads end-of-file and
 * closes the connection through its normal path (which frees its struct conn).
 *
 * It also watches the requests being answered: when the client hangs up (or half-closes: no
 * HTTP client does while it waits for an answer) their cancel flag is set, so a long answer
 * stops instead of working on for nobody.
 *
 * And it closes the idle read connections READER_IDLE_MS after the last request
 * (readers_idle_close): with no connection open it sleeps until then, not longer.
 */
static void *sweeper_main(void *arg)
{
    struct http_server *srv = arg;
    int64_t limit = (int64_t)srv->set.header_timeout_s * 1000, logged_ms = 0, idle_left, wait_ms;
    struct timespec ts;
    unsigned cut = 0;
    char last[64] = "";

    pthread_setname_np(pthread_self(), "perflog-sweep");
    pthread_mutex_lock(&srv->lock);
    while (!srv->sweeper_stop) {
        int64_t now = mono_ms();

        for (struct conn *cn = srv->conns; cn; cn = cn->next) {
            if (cn->answering && !atomic_load(&cn->cancel) && cn->fd != MHD_INVALID_SOCKET &&
                sock_peer_gone(cn->fd)) {
                atomic_store(&cn->cancel, 1);
                log_debug("http: %s hung up before its answer was complete", cn->client);
            }
            if (!cn->receiving || cn->cut || now - cn->since_ms < limit ||
                cn->fd == MHD_INVALID_SOCKET)
                continue;
            cn->cut = 1;
            shutdown(cn->fd, SHUT_RDWR);
            cut++;
            memcpy(last, cn->client, sizeof(last));
        }
        /* One line per LOG_CUT_MS at most: a slowloris flood must not flood the log too. */
        if (cut && now - logged_ms >= LOG_CUT_MS) {
            log_info("http: closed %u connection%s that sent no whole request within %d s "
                     "(header_timeout_s), the last from %s",
                     cut, cut == 1 ? "" : "s", srv->set.header_timeout_s, last);
            cut = 0;
            logged_ms = now;
        }
        idle_left = readers_idle_close(srv, now);
        /* Nothing to watch: sleep until conn_new links the first connection (or the stop), or
         * until the idle readers are due to close. */
        if (!srv->conns && idle_left < 0) {
            pthread_cond_wait(&srv->wake, &srv->lock);
            continue;
        }
        wait_ms = srv->conns ? SWEEP_MS : idle_left;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += wait_ms / 1000;
        ts.tv_nsec += (wait_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv->wake, &srv->lock, &ts);
    }
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

/* A streamed answer on its way: what the handler gave, the reader it holds until it ends, and
 * the server it stops with. */
struct stream {
    struct api_response a;
    struct http_server *srv;
    struct reader *rd;
    const _Atomic int *cancel; /* its connection's: it outlives the stream */
};

/* libmicrohttpd pulls a streamed answer through this, on the worker thread that owns the
 * connection; the stream's reader is its own until stream_done. */
static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *st = cls;
    ssize_t n;

    (void)pos;
    if (atomic_load(st->cancel))
        return MHD_CONTENT_READER_END_WITH_ERROR; /* the client hung up, or the server stops */
    n = st->a.stream(st->a.stream_ctx, buf, max);
    if (n > 0)
        return n;
    if (n < 0)
        log_warnx("http: a streamed answer failed (%s); closing the connection", strerror((int)-n));
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_done(void *cls)
{
    struct stream *st = cls;

    st->a.stream_free(st->a.stream_ctx);
    reader_give(st->srv, st->rd);
    mem_trim_ask(); /* an export is large */
    free(st);
}

/* Takes rd (NULL: none), given back when the stream ends. */
static struct MHD_Response *stream_response(struct http_server *srv, struct MHD_Connection *c,
                                            struct api_response *a, struct reader *rd)
{
    static const _Atomic int never;
    struct stream *st = malloc(sizeof(*st));
    struct MHD_Response *r;
    struct conn *cn;

    if (!st) {
        a->stream_free(a->stream_ctx);
        reader_give(srv, rd);
        return NULL;
    }
    st->a = *a;
    st->srv = srv;
    st->rd = rd;
    cn = conn_of(c);
    st->cancel = cn ? &cn->cancel : &never;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_cb, st,
                                          stream_done);
    if (!r)
        stream_done(st);
    return r;
}

/* Sends a's answer; a streamed one takes rd (else the caller keeps it). */
static enum MHD_Result send_answer(struct http_server *srv, struct MHD_Connection *c,
                                   struct api_response *a, struct reader *rd, int close)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (a->stream)
        r = stream_response(srv, c, a, rd);
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
                                  const char *msg, int close)
{
    struct api_response a = {0};

    if (api_error(&a, status, code, "%s", msg) < 0)
        return MHD_NO;
    return send_answer(NULL, c, &a, NULL, close || status >= 413);
}

/* A request that costs next to nothing and that a monitor must get through a busy server. */
static int is_cheap(const char *method, const struct request *rq)
{
    static const char health[] = "/api/v1/health";
    size_t n = sizeof(health) - 1;

    return (!strcmp(method, "GET") || !strcmp(method, "HEAD")) && rq->uri_len >= n &&
           !memcmp(rq->uri, health, n) && (rq->uri[n] == '\0' || rq->uri[n] == '?');
}

/* Transfer-Encoding "chunked", in any case. libmicrohttpd decodes only that; with any other
 * coding ("gzip", "chunked, chunked") it would read the body until the client closes, and the
 * client, waiting for an answer, never does. */
static int is_chunked(const char *te)
{
    static const char chunked[] = "chunked";
    size_t i;

    for (i = 0; te[i] && chunked[i]; i++)
        if ((te[i] | 0x20) != chunked[i])
            return 0;
    return !te[i] && !chunked[i];
}

/* The limits that can be judged from the request line and headers alone. */
static int check_limits(struct http_server *srv, struct MHD_Connection *c, struct request *rq,
                        const char *method)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    const union MHD_ConnectionInfo *hs =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);

    /* Health checks may use the reserve of CHEAP_RESERVE connections libmicrohttpd keeps above
     * max_connections, so a full server still tells a monitor it is alive. */
    if (atomic_load(&srv->connections) > srv->set.max_connections && !is_cheap(method, rq)) {
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
    if (hs && hs->header_size > srv->max_header_bytes) {
        rq->code = "headers_too_large";
        return 431;
    }
    if (te && !is_chunked(te)) {
        rq->code = "bad_transfer_encoding";
        return 400;
    }
    return 0;
}

static const char *limit_message(struct http_server *srv, int status, char *buf, size_t cap)
{
    if (status == 503)
        snprintf(buf, cap, "more than %d connections are open; try again later",
                 srv->set.max_connections);
    else if (status == 400)
        snprintf(buf, cap,
                 "Transfer-Encoding is not supported: send a body with Content-Length or "
                 "Transfer-Encoding: chunked");
    else if (status == 431)
        snprintf(buf, cap, "the request headers are larger than %zu bytes", srv->max_header_bytes);
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
                              const char *method, struct conn *cn)
{
    struct api_request in = {0};
    struct api_response out;
    struct reader *rd;
    char *q = memchr(rq->uri, '?', rq->uri_len), msg[160];

    if (rq->status)
        return send_error(c, rq->status, rq->code, limit_message(srv, rq->status, msg, sizeof(msg)),
                          0);
    if (q)
        *q = '\0';
    in.method = method;
    in.path = rq->uri;
    in.query = q ? q + 1 : "";
    in.query_len = q ? rq->uri_len - (size_t)(q + 1 - rq->uri) : 0;
    in.authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    in.body = rq->body;
    in.body_len = rq->body_len;
    in.remote = cn->remote;
    in.cancel = &cn->cancel;
    thread_setup(srv);
    rd = reader_take(srv);
    if (api_handle(srv->env, rd, &in, &out) < 0) {
        reader_give(srv, rd);
        return send_error(c, 500, "internal", "out of memory", 0);
    }
    if (out.stream)
        return send_answer(srv, c, &out, rd, 0);
    reader_give(srv, rd);
    rq->large = out.body_len >= TRIM_BODY_BYTES;
    return send_answer(srv, c, &out, NULL, 0);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct http_server *srv = cls;
    struct request *rq = *con_cls;
    struct conn *cn = conn_of(c);
    char msg[160];

    (void)url;
    (void)version;
    if (!rq || !cn)
        return MHD_NO; /* out of memory in on_uri or on_connection */
    if (!rq->started) {
        rq->started = 1;
        rq->status = check_limits(srv, c, rq, method);
        /* Answer a limit at once, and close: the body is not read. */
        if (rq->status) {
            conn_receiving(srv, cn, 0, 1);
            return send_error(c, rq->status, rq->code,
                              limit_message(srv, rq->status, msg, sizeof(msg)), 1);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->status && take_body(srv, rq, upload, *upload_size) < 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    conn_receiving(srv, cn, 0, 1); /* received whole: the answer's time is not the client's */
    return answer(srv, c, rq, method, cn);
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

int http_host_is_loopback(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai;
    int loop;

    if (getaddrinfo(host, "1", &hints, &ai) != 0)
        return 0;
    loop = addr_is_loopback(ai->ai_addr);
    freeaddrinfo(ai);
    return loop;
}

/* "::" (every interface): one socket for IPv6 and IPv4 alike, as "every interface" promises. */
static int is_any6(const struct sockaddr_storage *ss)
{
    static const unsigned char zero[16];

    return ss->ss_family == AF_INET6 &&
           !memcmp(((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr.s6_addr, zero, 16);
}

static void server_free(struct http_server *srv)
{
    while (srv->n_idle)
        reader_close(srv->idle[--srv->n_idle]);
    free(srv->idle);
    pthread_mutex_destroy(&srv->pool_lock);
    pthread_key_delete(srv->named_key);
    pthread_cond_destroy(&srv->wake);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}

int http_start(const struct http_settings *s, const struct api_env *env, struct http_server **out,
               char *err, size_t errlen)
{
    struct http_server *srv = calloc(1, sizeof(*srv));
    struct sockaddr_storage ss;
    /* MHD_USE_ITC: http_stop quiesces the daemon (stops accepting) before ending requests. */
    unsigned int flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    size_t pool = (size_t)(s->max_url_bytes * 4 > 65536 ? s->max_url_bytes * 4 : 65536);

    if (srv) {
        srv->idle_cap = s->threads > 0 ? (size_t)s->threads : 1;
        srv->idle = calloc(srv->idle_cap, sizeof(*srv->idle));
    }
    if (!srv || !srv->idle) {
        snprintf(err, errlen, "out of memory");
        free(srv);
        return -ENOMEM;
    }
    if (resolve(s, &ss, err, errlen) < 0) {
        free(srv->idle);
        free(srv);
        return -EINVAL;
    }
    if (ss.ss_family == AF_INET6)
        flags |= is_any6(&ss) ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
    srv->env = env;
    srv->set = *s;
    /* Half the pool: a request whose headers take more gets our JSON 431 while libmicrohttpd
     * still has room to send it; beyond the pool it answers its own 431 page. */
    srv->max_header_bytes = pool / 2;
    if (srv->set.header_timeout_s <= 0)
        srv->set.header_timeout_s = 10;
    pthread_mutex_init(&srv->lock, NULL);
    pthread_cond_init(&srv->wake, NULL);
    pthread_key_create(&srv->named_key, NULL);
    pthread_mutex_init(&srv->pool_lock, NULL);
    srv->mhd = MHD_start_daemon(
        flags, (uint16_t)s->port, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, &ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)s->threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned int)s->max_connections + CHEAP_RESERVE, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)s->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned int)(s->max_connections_per_ip > 0 ? s->max_connections_per_ip : 0),
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
        MHD_OPTION_END);
    if (!srv->mhd) {
        int e = errno ? errno : EADDRINUSE;

        snprintf(err, errlen, "cannot listen on %s:%d: %s", s->host, s->port, strerror(e));
        server_free(srv);
        return -e;
    }
    if (pthread_create(&srv->sweeper, NULL, sweeper_main, srv) != 0) {
        snprintf(err, errlen, "cannot start the HTTP request timer thread");
        MHD_stop_daemon(srv->mhd);
        server_free(srv);
        return -EAGAIN;
    }
    srv->sweeper_started = 1;
    *out = srv;
    return 0;
}

void http_stop(struct http_server *srv)
{
    MHD_socket lfd;

    if (!srv)
        return;
    /* Stop accepting, then cancel every request: streamed answers end at their next call, and
     * handlers that poll api_request.cancel give up, so the join below waits for no request. */
    lfd = MHD_quiesce_daemon(srv->mhd);
    if (lfd != MHD_INVALID_SOCKET)
        sock_close(lfd);
    pthread_mutex_lock(&srv->lock);
    for (struct conn *cn = srv->conns; cn; cn = cn->next)
        atomic_store(&cn->cancel, 1);
    srv->sweeper_stop = 1;
    pthread_cond_signal(&srv->wake);
    pthread_mutex_unlock(&srv->lock);
    if (srv->sweeper_started)
        pthread_join(srv->sweeper, NULL);
    /* The pool threads exit here, and every stream ends (stream_done gives its reader back);
     * server_free closes the idle readers. */
    MHD_stop_daemon(srv->mhd);
    server_free(srv);
}
