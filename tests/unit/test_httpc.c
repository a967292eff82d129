/*
 * test_httpc.c - the CLI's HTTP client: URL parsing, percent-encoding, head parsing and chunk
 * decoding as pure functions, then real requests to a fake server on 127.0.0.1 that answers with
 * Content-Length, chunked, until-close bodies, closes without answering, or never answers.
 */
#include "cli/http/httpc.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode {
    M_LENGTH,
    M_CHUNKED,
    M_BIG_CHUNKED,
    M_UNTIL_CLOSE,
    M_CLOSE,
    M_SILENT,
    M_TRUNCATED,
    M_TOO_BIG,
    M_NOT_HTTP,
    M_CONTINUE,
    M_404,
};

#define BIG_LEN (1 << 20)

struct fake {
    int lfd, port;
    enum mode mode;
    char req[8192]; /* the request head as received */
    size_t req_len;
    pthread_t th;
};

static char err[512];

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_str(int fd, const char *s)
{
    size_t n = strlen(s);

    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void read_request(struct fake *f, int fd)
{
    f->req_len = 0;
    while (f->req_len < sizeof(f->req) - 1) {
        ssize_t n = recv(fd, f->req + f->req_len, sizeof(f->req) - 1 - f->req_len, 0);
        if (n <= 0)
            break;
        f->req_len += (size_t)n;
        f->req[f->req_len] = '\0';
        if (strstr(f->req, "\r\n\r\n"))
            break;
    }
}

/* 1 MiB of a known pattern in chunks of 1000 bytes, written in odd-sized pieces. */
static void send_big_chunked(int fd)
{
    char chunk[1100];
    size_t sent = 0;

    send_str(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    while (sent < BIG_LEN) {
        size_t n = BIG_LEN - sent < 1000 ? BIG_LEN - sent : 1000;
        int h = snprintf(chunk, sizeof(chunk), "%zx\r\n", n);
        for (size_t i = 0; i < n; i++)
            chunk[h + i] = (char)('a' + (sent + i) % 23);
        memcpy(chunk + h + n, "\r\n", 3);
        send_str(fd, chunk);
        sent += n;
    }
    send_str(fd, "0\r\n\r\n");
}

/* Wait (at most 5 s) for the client to give up and close. */
static void wait_client_close(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b[64];

    while (poll(&p, 1, 5000) > 0 && recv(fd, b, sizeof(b), 0) > 0)
        ;
}

static void answer(struct fake *f, int fd)
{
    switch (f->mode) {
    case M_LENGTH: /* the head split over two writes */
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCont");
        sleep_ms(20);
        send_str(fd, "ent-Length: 13\r\n\r\n{\"status\":1}\n");
        wait_client_close(fd); /* the client must stop at Content-Length, not wait for close */
        break;
    case M_CHUNKED:
        send_str(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
        sleep_ms(20);
        send_str(fd, "lo\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: a\r\n\r\n");
        wait_client_close(fd);
        break;
    case M_BIG_CHUNKED:
        send_big_chunked(fd);
        break;
    case M_UNTIL_CLOSE:
        send_str(fd, "HTTP/1.0 200 OK\r\n\r\nuntil the end");
        break;
    case M_CLOSE:
        break;
    case M_SILENT:
        wait_client_close(fd);
        break;
    case M_TRUNCATED:
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
        break;
    case M_TOO_BIG:
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
        break;
    case M_NOT_HTTP:
        send_str(fd, "SSH-2.0-OpenSSH_9.2\r\n\r\n");
        break;
    case M_CONTINUE:
        send_str(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        break;
    case M_404:
        send_str(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 11\r\n\r\n{\"error\":1}");
        break;
    }
}

static void *serve_one(void *arg)
{
    struct fake *f = arg;
    int fd = accept(f->lfd, NULL, NULL);

    if (fd < 0)
        return NULL;
    read_request(f, fd);
    answer(f, fd);
    close(fd);
    return NULL;
}

static int fake_listen(struct fake *f)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);

    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(f->lfd, 4) < 0 ||
        getsockname(f->lfd, (struct sockaddr *)&a, &alen) < 0)
        return -1;
    f->port = ntohs(a.sin_port);
    return 0;
}

static int start_and_request(struct fake *f, enum mode m, const struct http_request *req,
                             struct http_response *resp)
{
    struct http_url u;
    char url[64];
    int r;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/base/", f->port);
    CHECK_INT(httpc_parse_url(url, &u, err, sizeof(err)), 0);
    f->mode = m;
    if (pthread_create(&f->th, NULL, serve_one, f) != 0)
        return -99;
    err[0] = '\0';
    r = httpc_request(&u, req, resp, err, sizeof(err));
    pthread_join(f->th, NULL);
    return r;
}

static void test_parse_url(void)
{
    struct http_url u;

    CHECK_INT(httpc_parse_url("http://127.0.0.1:9931", &u, err, sizeof(err)), 0);
    CHECK_STR(u.host, "127.0.0.1");
    CHECK_INT(u.port, 9931);
    CHECK_STR(u.base, "");
    CHECK_INT(u.ipv6, 0);
    CHECK_INT(httpc_parse_url("http://localhost", &u, err, sizeof(err)), 0);
    CHECK_STR(u.host, "localhost");
    CHECK_INT(u.port, 80); /* the default port of http:// */
    CHECK_INT(httpc_parse_url("HTTP://mon.example.com:8080/perflog//", &u, err, sizeof(err)), 0);
    CHECK_STR(u.host, "mon.example.com");
    CHECK_INT(u.port, 8080);
    CHECK_STR(u.base, "/perflog");
    CHECK_INT(httpc_parse_url("http://h/", &u, err, sizeof(err)), 0);
    CHECK_STR(u.base, "");
    CHECK_INT(httpc_parse_url("http://[::1]:9931/x", &u, err, sizeof(err)), 0);
    CHECK_STR(u.host, "::1");
    CHECK_INT(u.ipv6, 1);
    CHECK_INT(u.port, 9931);
    CHECK_STR(u.base, "/x");
    CHECK_INT(httpc_parse_url("http://[::1]", &u, err, sizeof(err)), 0);
    CHECK_INT(u.port, 80);
    CHECK_INT(httpc_parse_url("http://[fe80::1%25eth0]:1", &u, err, sizeof(err)), 0);
    CHECK_STR(u.host, "fe80::1%eth0");

    char origin[300];
    CHECK_INT(httpc_parse_url("http://[::1]:9931", &u, err, sizeof(err)), 0);
    CHECK_STR(httpc_url_origin(&u, origin, sizeof(origin)), "http://[::1]:9931");
    CHECK_INT(httpc_parse_url("http://h", &u, err, sizeof(err)), 0);
    CHECK_STR(httpc_url_origin(&u, origin, sizeof(origin)), "http://h:80");
}

static void test_bad_urls(void)
{
    static const char *const bad[] = {
        "",
        "localhost:9931",
        "http://",
        "http://:80",
        "http://h:0",
        "http://h:65536",
        "http://h:x",
        "http://h:",
        "http://[::1",
        "http://[zz]:1",
        "http://u:p@h",
        "http://h/a b",
        "http://h/?q=1",
        "ftp://h",
        "http://h h",
        "http://[::1]x",
        "http://h:80:81",
        "http://[fe80::1%eth0]",
        "garbage://",
        "://h",
    };
    struct http_url u = {.port = 1234};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK_INT(httpc_parse_url(bad[i], &u, err, sizeof(err)), HTTPC_EURL);
        CHECK(err[0] != '\0');
    }
    CHECK_INT(u.port, 1234); /* untouched on failure */
    CHECK_INT(httpc_parse_url(NULL, &u, err, sizeof(err)), HTTPC_EURL);
    CHECK_INT(httpc_parse_url("https://127.0.0.1:9931", &u, err, sizeof(err)), HTTPC_EURL);
    CHECK(strstr(err, "https:// is not supported") != NULL);
    CHECK_INT(httpc_parse_url("http://u@h", &u, err, sizeof(err)), HTTPC_EURL);
    CHECK(strstr(err, "--token") != NULL);
    CHECK_INT(httpc_parse_url("http://h:99999", &u, err, sizeof(err)), HTTPC_EURL);
    CHECK(strstr(err, "1 to 65535") != NULL);
}

static void test_pct_encode(void)
{
    char buf[128];

    CHECK_INT(httpc_pct_encode("\\PhysicalDisk(*)\\Disk Bytes/sec", buf, sizeof(buf)), 45);
    CHECK_STR(buf, "%5CPhysicalDisk%28%2A%29%5CDisk%20Bytes%2Fsec");
    CHECK_INT(httpc_pct_encode("now-1h", buf, sizeof(buf)), 6);
    CHECK_STR(buf, "now-1h");
    httpc_pct_encode("a~b_c.d-E9", buf, sizeof(buf));
    CHECK_STR(buf, "a~b_c.d-E9");
    httpc_pct_encode("% Processor Time&x=1+2", buf, sizeof(buf));
    CHECK_STR(buf, "%25%20Processor%20Time%26x%3D1%2B2");
    httpc_pct_encode("\xc3\xa9", buf, sizeof(buf));
    CHECK_STR(buf, "%C3%A9");
    CHECK_INT(httpc_pct_encode("a b", buf, 4), 5); /* the length needed, like snprintf */
    CHECK_STR(buf, "a%2");
    CHECK_INT(httpc_pct_encode("", buf, sizeof(buf)), 0);
    CHECK_STR(buf, "");
    CHECK_INT(httpc_pct_encode("xyz", NULL, 0), 3);
}

static void test_parse_head(void)
{
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length:  42 \r\n\r\nbody";
    struct httpc_head h = {.status = -5};
    char big[HTTPC_HEAD_MAX + 16];

    CHECK_INT(httpc_parse_head(ok, 10, &h), 0);
    CHECK_INT(h.status, -5); /* untouched until complete */
    CHECK_INT(httpc_parse_head(ok, strlen(ok), &h), 1);
    CHECK_INT(h.status, 200);
    CHECK_INT(h.content_length, 42);
    CHECK_INT(h.chunked, 0);
    CHECK_STR(h.content_type, "application/json");
    CHECK_INT(h.len, strlen(ok) - 4);

    CHECK_INT(httpc_parse_head("HTTP/1.0 404\nX: y\n\n", 19, &h), 1); /* bare LF, no reason */
    CHECK_INT(h.status, 404);
    CHECK_INT(h.content_length, -1);
#define HEAD(s) httpc_parse_head(s, strlen(s), &h)
    CHECK_INT(HEAD("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"), 1);
    CHECK_INT(h.chunked, 1);
    CHECK_INT(HEAD("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 1);
    CHECK_INT(HEAD("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
              HTTPC_EPROTO);
    CHECK_INT(HEAD("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"), HTTPC_EPROTO);
    CHECK_INT(HEAD("HTTP/1.1 20 OK\r\n\r\n"), HTTPC_EPROTO);
    CHECK_INT(HEAD("HTTP/2 200 OK\r\n\r\n"), HTTPC_EPROTO);
    CHECK_INT(HEAD("SSH-2.0-OpenSSH\r\n\r\n"), HTTPC_EPROTO);
    CHECK_INT(HEAD("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n"), HTTPC_EPROTO);
    CHECK_INT(HEAD("HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n"), HTTPC_EPROTO);
#undef HEAD
    memset(big, 'x', sizeof(big));
    memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
    CHECK_INT(httpc_parse_head(big, sizeof(big), &h), HTTPC_EPROTO);
}

/* Decode raw in place, giving the decoder one more byte at a time; returns its last result. */
static int dechunk_bytewise(const char *raw, char *out, size_t cap, size_t *out_len)
{
    struct httpc_chunked st = {0};
    size_t len = strlen(raw);
    int r = 0;

    if (len >= cap)
        return -99;
    memcpy(out, raw, len);
    for (size_t i = 1; i <= len && r == 0; i++)
        r = httpc_dechunk(&st, out, i);
    *out_len = st.wr;
    return r;
}

static void test_dechunk(void)
{
    static const char wiki[] = "4\r\nWiki\r\n5;x=y\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
                               "0\r\nTrailer: v\r\n\r\n";
    char out[256];
    size_t n = 0;
    struct httpc_chunked st = {.rd = 3, .wr = 3};
    char whole[] = "abc3\r\nxyz\r\n0\r\n\r\nEXTRA";

    CHECK_INT(dechunk_bytewise(wiki, out, sizeof(out), &n), 1);
    CHECK_INT(n, 23);
    CHECK(memcmp(out, "Wikipedia in\r\n\r\nchunks.", 23) == 0);
    CHECK_INT(httpc_dechunk(&st, whole, strlen(whole)), 1); /* the body starts at offset 3 */
    CHECK_INT(st.wr, 6);
    CHECK(memcmp(whole, "abcxyz", 6) == 0);
    CHECK_INT(st.rd, strlen(whole) - 5);                           /* stops after the last chunk */
    CHECK_INT(dechunk_bytewise("0\n\n", out, sizeof(out), &n), 1); /* bare LFs */
    CHECK_INT(n, 0);
    CHECK_INT(dechunk_bytewise("zz\r\n", out, sizeof(out), &n), HTTPC_EPROTO);
    CHECK_INT(dechunk_bytewise("\r\n", out, sizeof(out), &n), HTTPC_EPROTO);
    CHECK_INT(dechunk_bytewise("5\r\nhelloX\r\n", out, sizeof(out), &n), HTTPC_EPROTO);
    CHECK_INT(dechunk_bytewise("5 x\r\nhello\r\n", out, sizeof(out), &n), HTTPC_EPROTO);
    CHECK_INT(dechunk_bytewise("11111111111111111\r\n", out, sizeof(out), &n), HTTPC_EPROTO);
    CHECK_INT(dechunk_bytewise("5\r\nhel", out, sizeof(out), &n), 0); /* incomplete */
    CHECK_INT(n, 3);
}

static void test_request_length(struct fake *f)
{
    const char *const headers[] = {"Authorization: Bearer s3cret", "Accept: application/json",
                                   NULL};
    struct http_request req = {
        .method = "GET", .target = "/api/v1/health?x=%5C", .headers = headers};
    struct http_response r = {0};

    CHECK_INT(start_and_request(f, M_LENGTH, &req, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(r.body_len, 13);
    CHECK_STR(r.body, "{\"status\":1}\n");
    CHECK_STR(r.content_type, "application/json");
    CHECK(strstr(f->req, "GET /base/api/v1/health?x=%5C HTTP/1.1\r\n") == f->req);
    CHECK(strstr(f->req, "\r\nAuthorization: Bearer s3cret\r\n") != NULL);
    CHECK(strstr(f->req, "\r\nConnection: close\r\n") != NULL);
    CHECK(strstr(f->req, "\r\nHost: 127.0.0.1:") != NULL);
    CHECK(strstr(f->req, "Content-Length") == NULL); /* a GET without a body */
    httpc_response_free(&r);
    CHECK(r.body == NULL);
    httpc_response_free(NULL);
}

static void test_request_bodies(struct fake *f)
{
    struct http_request req = {.method = "GET", .target = "/"};
    struct http_response r = {0};
    int ok = 1;

    CHECK_INT(start_and_request(f, M_CHUNKED, &req, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_STR(r.body, "hello, world");
    CHECK_INT(r.body_len, 12);
    httpc_response_free(&r);

    CHECK_INT(start_and_request(f, M_BIG_CHUNKED, &req, &r), 0);
    CHECK_INT(r.body_len, BIG_LEN);
    for (size_t i = 0; i < r.body_len && ok; i++)
        ok = r.body[i] == (char)('a' + i % 23);
    CHECK(ok);
    httpc_response_free(&r);

    CHECK_INT(start_and_request(f, M_UNTIL_CLOSE, &req, &r), 0);
    CHECK_STR(r.body, "until the end");
    httpc_response_free(&r);

    CHECK_INT(start_and_request(f, M_CONTINUE, &req, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_STR(r.body, "ok");
    httpc_response_free(&r);

    CHECK_INT(start_and_request(f, M_404, &req, &r), 0); /* an HTTP error is still a response */
    CHECK_INT(r.status, 404);
    CHECK_STR(r.body, "{\"error\":1}");
    httpc_response_free(&r);

    req.method = "POST";
    req.body = "{\"a\":1}";
    req.body_len = 7;
    CHECK_INT(start_and_request(f, M_404, &req, &r), 0);
    CHECK(strstr(f->req, "\r\nContent-Length: 7\r\n") != NULL);
    httpc_response_free(&r);
}

static void test_request_failures(struct fake *f)
{
    struct http_request req = {.method = "GET", .target = "/", .read_timeout_ms = 300};
    struct http_response r = {.status = -5};
    int64_t t0;

    CHECK_INT(start_and_request(f, M_CLOSE, &req, &r), HTTPC_EIO);
    CHECK(strstr(err, "closed the connection without answering") != NULL);
    CHECK(strstr(err, "http://127.0.0.1:") == err);
    CHECK_INT(r.status, -5); /* untouched on failure */

    t0 = mono_ms();
    CHECK_INT(start_and_request(f, M_SILENT, &req, &r), HTTPC_ETIMEOUT);
    CHECK(mono_ms() - t0 >= 250);
    CHECK(mono_ms() - t0 < 3000);
    CHECK(strstr(err, "no answer from the server within 300 ms") != NULL);

    CHECK_INT(start_and_request(f, M_TRUNCATED, &req, &r), HTTPC_EIO);
    CHECK(strstr(err, "before the end of the body") != NULL);
    CHECK_INT(start_and_request(f, M_NOT_HTTP, &req, &r), HTTPC_EPROTO);
    CHECK(strstr(err, "not HTTP") != NULL);
    req.max_body = 100;
    CHECK_INT(start_and_request(f, M_TOO_BIG, &req, &r), HTTPC_ETOOBIG);
    CHECK(strstr(err, "larger than 100 bytes") != NULL);
    CHECK_INT(start_and_request(f, M_BIG_CHUNKED, &req, &r), HTTPC_ETOOBIG);
    CHECK_INT(r.status, -5);
}

static void test_bad_requests(void)
{
    const char *const bad_header[] = {"X-A: b\r\nX-Injected: 1", NULL};
    struct http_request req = {.method = "GET", .target = "/a b"};
    struct http_response r = {0};
    struct http_url u;

    CHECK_INT(httpc_parse_url("http://127.0.0.1:1", &u, err, sizeof(err)), 0);
    CHECK_INT(httpc_request(&u, &req, &r, err, sizeof(err)), HTTPC_EURL);
    req.target = "/";
    req.headers = bad_header;
    CHECK_INT(httpc_request(&u, &req, &r, err, sizeof(err)), HTTPC_EURL);
}

/* A port nobody listens on: bound, then closed. */
static void test_refused(void)
{
    struct fake g;
    struct http_request req = {.method = "GET", .target = "/"};
    struct http_response r = {0};
    struct http_url u;
    char url[64];

    CHECK_INT(fake_listen(&g), 0);
    close(g.lfd);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", g.port);
    CHECK_INT(httpc_parse_url(url, &u, err, sizeof(err)), 0);
    CHECK_INT(httpc_request(&u, &req, &r, err, sizeof(err)), HTTPC_ECONNECT);
    CHECK(strstr(err, "cannot connect to http://127.0.0.1:") == err);
    CHECK(strstr(err, "Connection refused") != NULL);
    CHECK_INT(httpc_parse_url("http://name.invalid:1", &u, err, sizeof(err)), 0);
    CHECK_INT(httpc_request(&u, &req, &r, err, sizeof(err)), HTTPC_ERESOLVE);
    CHECK(strstr(err, "cannot resolve") == err);
}

int main(void)
{
    struct fake f;

    test_parse_url();
    test_bad_urls();
    test_pct_encode();
    test_parse_head();
    test_dechunk();
    CHECK_INT(fake_listen(&f), 0);
    test_request_length(&f);
    test_request_bodies(&f);
    test_request_failures(&f);
    close(f.lfd);
    test_bad_requests();
    test_refused();
    return tl_done();
}
