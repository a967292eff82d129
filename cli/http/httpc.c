/*
 * httpc.c - the socket half of the HTTP client: resolve, connect with a timeout, send one request,
 * read the response until its framing says it is complete. See httpc.h.
 *
 * The socket stays non-blocking and every wait goes through poll(), so no step blocks longer than
 * its timeout. The response is read into one buffer; a chunked body is decoded in place as it
 * arrives, so the buffer never holds much more than the body itself. httpc_request_stream hands
 * a 2xx body on after every read and drops it from the buffer, which then holds one read at most.
 */
#include "cli/http/httpc.h"

#include "base/sbuf.h"
#include "base/text.h"
#include "cli/http/netio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_CHUNK     65536
#define CHUNK_OVERHEAD 8192 /* raw chunked bytes held beyond the decoded body */

enum body_mode { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE };

/* The response being read. buf[0..len) holds the head, then the body (decoded, for chunked). */
struct reader {
    char *buf;
    size_t len, cap, limit; /* limit: the most bytes buf may hold */
    size_t max_body;
    int head_done;
    struct httpc_head head;
    enum body_mode mode;
    struct httpc_chunked ch;
    int head_only;      /* a HEAD request: no body whatever the headers say */
    httpc_body_fn sink; /* httpc_request_stream: where a 2xx body goes */
    void *sink_arg;
    int streaming;      /* the answer is 2xx and sink is set: the body is handed on, not kept */
    uint64_t delivered; /* body bytes handed to the sink so far */
};

/* Try every address of the host in turn; returns a socket or a negative enum httpc_error. */
static int connect_any(const struct http_url *u, int timeout_ms, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    char port[8], origin[HTTPC_HOST_MAX + 16];
    int fd = -ECONNREFUSED, r;

    hints.ai_flags = AI_NUMERICSERV | (u->ipv6 ? AI_NUMERICHOST : 0);
    snprintf(port, sizeof(port), "%d", u->port);
    httpc_url_origin(u, origin, sizeof(origin));
    r = netio_init();
    if (r < 0) {
        text_set_err(err, errlen, "cannot start the socket library: %s", strerror(-r));
        return HTTPC_ECONNECT;
    }
    r = getaddrinfo(u->host, port, &hints, &res);
    if (r != 0) {
        text_set_err(err, errlen, "cannot resolve the host of %s: %s", origin, netio_gai_error(r));
        return HTTPC_ERESOLVE;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = netio_connect(ai, timeout_ms);
        if (fd >= 0)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        text_set_err(err, errlen, "cannot connect to %s: %s", origin, strerror(-fd));
        return HTTPC_ECONNECT;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n, int timeout_ms, char *err, size_t errlen)
{
    while (n > 0) {
        long w = netio_send(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && w != -EAGAIN && w != -EINTR) {
            text_set_err(err, errlen, "cannot send the request: %s", strerror((int)-w));
            return HTTPC_EIO;
        }
        if (netio_wait(fd, 1, timeout_ms) <= 0) {
            text_set_err(err, errlen, "cannot send the request: timed out after %d ms", timeout_ms);
            return HTTPC_ETIMEOUT;
        }
    }
    return 0;
}

static int has_crlf(const char *s)
{
    return s && strpbrk(s, "\r\n") != NULL;
}

/* The request line and headers; NULL after an allocation failure. */
static char *build_head(const struct http_url *u, const struct http_request *req)
{
    struct sbuf b = {0};
    int need_length =
        req->body || strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0;

    sbuf_printf(&b, "%s %s%s HTTP/1.1\r\n", req->method, u->base, req->target);
    if (u->ipv6)
        sbuf_printf(&b, "Host: [%s]:%d\r\n", u->host, u->port);
    else
        sbuf_printf(&b, "Host: %s:%d\r\n", u->host, u->port);
    sbuf_printf(&b, "User-Agent: perflog/%s\r\nConnection: close\r\n", PERFLOG_VERSION);
    for (const char *const *h = req->headers; h && *h; h++)
        sbuf_printf(&b, "%s\r\n", *h);
    if (need_length)
        sbuf_printf(&b, "Content-Length: %zu\r\n", req->body_len);
    sbuf_printf(&b, "\r\n");
    return sbuf_take(&b);
}

static int check_request(const struct http_request *req, char *err, size_t errlen)
{
    if (!req->method || !req->target || req->target[0] != '/' || has_crlf(req->method) ||
        strchr(req->target, ' ') || has_crlf(req->target)) {
        text_set_err(err, errlen, "bad request method or target");
        return HTTPC_EURL;
    }
    for (const char *const *h = req->headers; h && *h; h++) {
        if (has_crlf(*h) || !strchr(*h, ':')) {
            text_set_err(err, errlen, "bad request header (a line break, or no ':')");
            return HTTPC_EURL;
        }
    }
    return 0;
}

/* Keep room for one more read and the final NUL, within the limit. */
static int reader_reserve(struct reader *r, char *why, size_t whylen)
{
    size_t cap;
    char *p;

    if (r->cap - r->len > READ_CHUNK / 4)
        return 0;
    if (r->len + 1 >= r->limit) {
        text_set_err(why, whylen, "the response is larger than %zu bytes", r->max_body);
        return HTTPC_ETOOBIG;
    }
    cap = r->cap ? r->cap * 2 : READ_CHUNK;
    if (cap > r->limit)
        cap = r->limit;
    p = realloc(r->buf, cap);
    if (!p) {
        text_set_err(why, whylen, "out of memory for a response of %zu bytes", cap);
        return HTTPC_ENOMEM;
    }
    r->buf = p;
    r->cap = cap;
    return 0;
}

static enum body_mode pick_mode(const struct reader *r)
{
    int st = r->head.status;

    if (r->head_only || st < 200 || st == 204 || st == 304)
        return BODY_NONE;
    if (r->head.chunked)
        return BODY_CHUNKED; /* it overrides Content-Length (RFC 9112 section 6.3) */
    return r->head.content_length >= 0 ? BODY_LENGTH : BODY_CLOSE;
}

/* Parse the head once it is complete, skipping interim 1xx responses. 1 done, 0 more, < 0. */
static int head_step(struct reader *r, char *why, size_t whylen)
{
    for (;;) {
        int h = httpc_parse_head(r->buf, r->len, &r->head);
        if (h < 0) {
            text_set_err(why, whylen, "the response is not HTTP/1.x (bad status line or header)");
            return HTTPC_EPROTO;
        }
        if (h == 0)
            return 0;
        if (r->head.status >= 200 || r->head.status == 101)
            break;
        memmove(r->buf, r->buf + r->head.len, r->len - r->head.len);
        r->len -= r->head.len;
    }
    r->head_done = 1;
    r->mode = pick_mode(r);
    r->ch.rd = r->ch.wr = r->head.len;
    r->streaming = r->sink && r->head.status >= 200 && r->head.status <= 299;
    if (r->mode == BODY_LENGTH && !r->streaming && (uint64_t)r->head.content_length > r->max_body) {
        text_set_err(why, whylen, "the response is larger than %zu bytes (Content-Length %lld)",
                     r->max_body, (long long)r->head.content_length);
        return HTTPC_ETOOBIG;
    }
    return 1;
}

static int chunked_step(struct reader *r, char *why, size_t whylen)
{
    int d = httpc_dechunk(&r->ch, r->buf, r->len);

    if (r->ch.rd > r->ch.wr) {
        memmove(r->buf + r->ch.wr, r->buf + r->ch.rd, r->len - r->ch.rd);
        r->len -= r->ch.rd - r->ch.wr;
        r->ch.rd = r->ch.wr;
    }
    if (d < 0) {
        text_set_err(why, whylen, "malformed chunked response body");
        return HTTPC_EPROTO;
    }
    if (!r->streaming && r->ch.wr - r->head.len > r->max_body) {
        text_set_err(why, whylen, "the response is larger than %zu bytes", r->max_body);
        return HTTPC_ETOOBIG;
    }
    if (d == 1)
        r->len = r->ch.wr;
    return d;
}

/* After more bytes arrived: 1 when the response is complete, 0 when more is needed, or < 0. */
static int advance(struct reader *r, char *why, size_t whylen)
{
    int h;

    if (!r->head_done && (h = head_step(r, why, whylen)) <= 0)
        return h;
    switch (r->mode) {
    case BODY_NONE:
        r->len = r->head.len;
        return 1;
    case BODY_LENGTH:
        if (r->delivered + (r->len - r->head.len) < (uint64_t)r->head.content_length)
            return 0;
        r->len = r->head.len + (size_t)((uint64_t)r->head.content_length - r->delivered);
        return 1;
    case BODY_CHUNKED:
        return chunked_step(r, why, whylen);
    default:
        if (r->streaming || r->len - r->head.len <= r->max_body)
            return 0;
        text_set_err(why, whylen, "the response is larger than %zu bytes", r->max_body);
        return HTTPC_ETOOBIG;
    }
}

/* Streaming: hand the body bytes decoded so far to the sink and drop them from the buffer. */
static int drain(struct reader *r, char *why, size_t whylen)
{
    size_t start = r->head.len, end, n;

    if (!r->streaming || !r->head_done || r->mode == BODY_NONE)
        return 0;
    end = r->mode == BODY_CHUNKED ? r->ch.wr : r->len;
    if (r->mode == BODY_LENGTH && end - start > (uint64_t)r->head.content_length - r->delivered)
        end = start + (size_t)((uint64_t)r->head.content_length - r->delivered);
    if (end <= start)
        return 0;
    n = end - start;
    if (r->sink(r->sink_arg, r->buf + start, n) != 0) {
        text_set_err(why, whylen, "the transfer was stopped by its receiver");
        return HTTPC_EABORT;
    }
    r->delivered += n;
    memmove(r->buf + start, r->buf + end, r->len - end);
    r->len -= n;
    if (r->mode == BODY_CHUNKED) {
        r->ch.wr -= n;
        r->ch.rd -= n;
    }
    return 0;
}

static int at_eof(const struct reader *r, char *why, size_t whylen)
{
    if (r->head_done && r->mode == BODY_CLOSE)
        return 1;
    if (r->len == 0)
        text_set_err(why, whylen, "the server closed the connection without answering");
    else if (!r->head_done)
        text_set_err(why, whylen, "the server closed the connection in the middle of the header");
    else
        text_set_err(why, whylen, "the server closed the connection before the end of the body");
    return HTTPC_EIO;
}

/* Read until the response is complete: 0, or a negative enum httpc_error with `why` set. */
static int read_response(int fd, struct reader *r, int timeout_ms, char *why, size_t whylen)
{
    for (;;) {
        long n;
        int w = reader_reserve(r, why, whylen);

        if (w < 0)
            return w;
        w = netio_wait(fd, 0, timeout_ms);
        if (w == 0) {
            text_set_err(why, whylen, "no %s from the server within %d ms",
                         r->len ? "further data" : "answer", timeout_ms);
            return HTTPC_ETIMEOUT;
        }
        n = w < 0 ? w : netio_recv(fd, r->buf + r->len, r->cap - r->len - 1);
        if (n < 0 && w > 0 && (n == -EINTR || n == -EAGAIN))
            continue;
        if (n < 0) {
            text_set_err(why, whylen, "cannot read the response: %s", strerror((int)-n));
            return HTTPC_EIO;
        }
        if (n == 0)
            return at_eof(r, why, whylen) < 0 ? HTTPC_EIO : 0;
        r->len += (size_t)n;
        w = advance(r, why, whylen);
        if (w >= 0 && drain(r, why, whylen) < 0)
            return HTTPC_EABORT;
        if (w != 0)
            return w < 0 ? w : 0;
    }
}

/* Hand the body to *resp: moved to the front of the buffer and terminated. */
static void reader_finish(struct reader *r, struct http_response *resp)
{
    size_t body_len = r->len - r->head.len;

    memmove(r->buf, r->buf + r->head.len, body_len);
    r->buf[body_len] = '\0';
    memset(resp, 0, sizeof(*resp));
    resp->status = r->head.status;
    memcpy(resp->content_type, r->head.content_type, sizeof(resp->content_type));
    resp->body = r->buf;
    resp->body_len = body_len;
    r->buf = NULL;
}

/* Send the request; a server may answer (e.g. 413) and close before it has all of the body, so a
 * failed send still reads what came back. */
static int exchange(int fd, const struct http_request *req, const char *head, struct reader *r,
                    char *why, size_t whylen)
{
    int rto = req->read_timeout_ms > 0 ? req->read_timeout_ms : HTTPC_READ_TIMEOUT_MS;
    int ret = send_all(fd, head, strlen(head), rto, why, whylen);
    char why2[256];

    if (ret == 0 && req->body && req->body_len)
        ret = send_all(fd, req->body, req->body_len, rto, why, whylen);
    if (ret == 0)
        return read_response(fd, r, rto, why, whylen);
    if (ret == HTTPC_EIO && read_response(fd, r, rto, why2, sizeof(why2)) == 0)
        return 0;
    return ret;
}

static int request(const struct http_url *u, const struct http_request *req, httpc_body_fn on_body,
                   void *arg, struct http_response *resp, char *err, size_t errlen)
{
    struct reader r = {.max_body = req->max_body ? req->max_body : HTTPC_MAX_BODY_DEFAULT,
                       .sink = on_body,
                       .sink_arg = arg};
    char why[512], origin[HTTPC_HOST_MAX + 16];
    char *head = NULL;
    int fd = -1, ret = check_request(req, err, errlen);

    if (ret < 0)
        return ret;
    r.limit = HTTPC_HEAD_MAX + r.max_body + CHUNK_OVERHEAD;
    r.head_only = strcmp(req->method, "HEAD") == 0;
    head = build_head(u, req);
    if (!head) {
        text_set_err(err, errlen, "out of memory");
        return HTTPC_ENOMEM;
    }
    fd = connect_any(
        u, req->connect_timeout_ms > 0 ? req->connect_timeout_ms : HTTPC_CONNECT_TIMEOUT_MS, err,
        errlen);
    ret = fd < 0 ? fd : exchange(fd, req, head, &r, why, sizeof(why));
    if (ret == 0)
        reader_finish(&r, resp);
    else if (fd >= 0)
        text_set_err(err, errlen, "%s: %s", httpc_url_origin(u, origin, sizeof(origin)), why);
    if (fd >= 0)
        netio_close(fd);
    free(head);
    free(r.buf);
    return ret;
}

int httpc_request(const struct http_url *u, const struct http_request *req,
                  struct http_response *resp, char *err, size_t errlen)
{
    return request(u, req, NULL, NULL, resp, err, errlen);
}

int httpc_request_stream(const struct http_url *u, const struct http_request *req,
                         httpc_body_fn on_body, void *arg, struct http_response *resp, char *err,
                         size_t errlen)
{
    return request(u, req, on_body, arg, resp, err, errlen);
}

void httpc_response_free(struct http_response *r)
{
    if (!r)
        return;
    free(r->body);
    memset(r, 0, sizeof(*r));
}
