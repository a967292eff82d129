/*
 * httpc.h - a minimal blocking HTTP/1.1 client for the perflog CLI: plain http:// URLs only
 * (IPv4, IPv6 literals in brackets, host names via getaddrinfo), one request per connection
 * (`Connection: close`), bodies framed by Content-Length, chunked transfer coding, or the close of
 * the connection. Every wait is bounded by poll() timeouts and the body by a size cap.
 *
 * URL parsing, percent-encoding, header parsing and chunk decoding are pure functions, apart from
 * the socket code, so the unit test drives them without a network. Nothing here keeps state
 * between calls: all functions are thread-safe.
 */
#ifndef PERFLOG_HTTPC_H
#define PERFLOG_HTTPC_H

#include <stddef.h>
#include <stdint.h>

#define HTTPC_HOST_MAX           256
#define HTTPC_BASE_MAX           1024
#define HTTPC_MAX_BODY_DEFAULT   ((size_t)256 << 20) /* 256 MiB */
#define HTTPC_HEAD_MAX           65536               /* status line + headers */
#define HTTPC_CONNECT_TIMEOUT_MS 5000
#define HTTPC_READ_TIMEOUT_MS    30000

/* What httpc_parse_url and httpc_request return: 0 or one of these negative values. */
enum httpc_error {
    HTTPC_OK = 0,
    HTTPC_EURL = -1,     /* the URL or a request field is malformed */
    HTTPC_ERESOLVE = -2, /* the host name did not resolve */
    HTTPC_ECONNECT = -3, /* no address accepted the connection (refused, unreachable, timeout) */
    HTTPC_ETIMEOUT = -4, /* connected, but the server did not answer within the read timeout */
    HTTPC_EIO = -5,      /* send/recv failed, or the server closed before the response ended */
    HTTPC_EPROTO = -6,   /* the response is not valid HTTP/1.x */
    HTTPC_ETOOBIG = -7,  /* the body is larger than the cap */
    HTTPC_ENOMEM = -8,
    HTTPC_EABORT = -9, /* the body callback of httpc_request_stream asked to stop */
};

struct http_url {
    char host[HTTPC_HOST_MAX]; /* without brackets; an IPv6 zone as "%eth0" */
    int port;                  /* 80 when the URL names none */
    int ipv6;                  /* the host was a bracketed IPv6 literal */
    char base[HTTPC_BASE_MAX]; /* path prefix without a trailing '/', "" for none */
};

/*
 * Parse "http://HOST[:PORT][/BASE]" (scheme case-insensitive; no user info, query or fragment).
 * Returns 0 and fills *out, or HTTPC_EURL with *out untouched and a one-line reason in err
 * (errlen bytes, always terminated when errlen > 0), e.g. "https:// is not supported ...".
 */
int httpc_parse_url(const char *url, struct http_url *out, char *err, size_t errlen);

/* Write "http://HOST:PORT" (IPv6 in brackets) into buf, for messages. Returns buf. */
char *httpc_url_origin(const struct http_url *u, char *buf, size_t cap);

/*
 * Percent-encode s for a query value (RFC 3986: all but ALPHA DIGIT - . _ ~ become %XX) into buf
 * of cap bytes, always terminated when cap > 0. Returns the length the whole encoding needs
 * (without the NUL), like snprintf.
 */
size_t httpc_pct_encode(const char *s, char *buf, size_t cap);

/* A parsed status line and the headers the client uses. */
struct httpc_head {
    int status;
    int64_t content_length; /* -1 when absent */
    int chunked;            /* Transfer-Encoding names chunked */
    char content_type[128]; /* "" when absent; truncated if longer */
    size_t len;             /* bytes of the head, including the blank line */
};

/*
 * Parse the response head at buf[0..len). Returns 1 and fills *h when the blank line ending it is
 * in the buffer, 0 when more bytes are needed, or HTTPC_EPROTO (bad status line or header, or a
 * head longer than HTTPC_HEAD_MAX) with *h untouched. Lines may end in CRLF or LF.
 */
int httpc_parse_head(const char *buf, size_t len, struct httpc_head *h);

/* State of an in-place chunked decoder; set rd = wr = offset of the body, the rest zero. */
struct httpc_chunked {
    int phase;
    uint64_t left; /* data bytes left in the current chunk */
    size_t rd;     /* next raw byte to decode */
    size_t wr;     /* end of the decoded data (wr <= rd) */
};

/*
 * Decode the chunked bytes of buf[st->rd..len) in place: data moves down to buf[st->wr..], chunk
 * size lines, extensions and trailers are dropped. Call again after appending more bytes at len
 * (the caller may first drop buf[wr..rd) by moving the rest down and setting rd = wr). Returns 1
 * when the last chunk and its trailers are complete, 0 when more input is needed, or HTTPC_EPROTO.
 */
int httpc_dechunk(struct httpc_chunked *st, char *buf, size_t len);

struct http_request {
    const char *method;         /* "GET", "POST", ... */
    const char *target;         /* "/api/v1/health?x=1": appended to the URL's base path */
    const char *const *headers; /* NULL, or a NULL-terminated list of "Name: value" */
    const char *body;           /* may be NULL */
    size_t body_len;
    int connect_timeout_ms; /* 0: HTTPC_CONNECT_TIMEOUT_MS (per address tried) */
    int read_timeout_ms;    /* 0: HTTPC_READ_TIMEOUT_MS; the longest silence while reading */
    size_t max_body;        /* 0: HTTPC_MAX_BODY_DEFAULT */
};

struct http_response {
    int status;
    char content_type[128];
    char *body; /* owned, NUL-terminated (the NUL not counted in body_len) */
    size_t body_len;
};

/*
 * Send one request to u and read the whole response. Returns 0 with *resp filled (any status,
 * 4xx and 5xx included; free with httpc_response_free), or a negative enum httpc_error with *resp
 * untouched and a one-line message in err, e.g. "cannot connect to http://127.0.0.1:9931:
 * Connection refused". Blocks for at most the timeouts given (per address and per read).
 */
int httpc_request(const struct http_url *u, const struct http_request *req,
                  struct http_response *resp, char *err, size_t errlen);

/*
 * A body receiver for httpc_request_stream: called with each piece of the decoded body (after
 * chunked decoding), in order, as it arrives. Returns 0 to go on, non-zero to stop the transfer.
 */
typedef int (*httpc_body_fn)(void *arg, const char *data, size_t len);

/*
 * Like httpc_request, but a 2xx body is handed to on_body piece by piece as it is read, instead of
 * being collected: memory stays bounded by one read (plus a chunk header) whatever the body's
 * size, and req->max_body does not apply to it. On 0, *resp holds the status and content type and,
 * for a 2xx answer, an empty body (""); any other status keeps its body in *resp as httpc_request
 * does (capped by max_body), so the caller can show the server's error. When on_body stops the
 * transfer the call returns HTTPC_EABORT with *resp untouched.
 */
int httpc_request_stream(const struct http_url *u, const struct http_request *req,
                         httpc_body_fn on_body, void *arg, struct http_response *resp, char *err,
                         size_t errlen);

/* Free the body and clear *r. Accepts NULL. */
void httpc_response_free(struct http_response *r);

#endif
