/*
 * test_cli_httpc_stream.c - httpc_request_stream (cli/httpc.c): a 2xx body handed on piece by piece
 * (Content-Length, chunked with chunk lines split across reads, until close), in bounded pieces
 * and past max_body; an error status keeps its body for the message; the receiver can stop it.
 */
#include "cli/http/httpc.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode { M_LENGTH, M_CHUNKED, M_UNTIL_CLOSE, M_ERROR, M_EMPTY };

#define BIG_LEN (3 << 20) /* 3 MiB */

struct fake {
    int lfd, port;
    enum mode mode;
    pthread_t th;
};

struct got {
    size_t len, pieces, max_piece;
    int ok;         /* every byte as the pattern says */
    size_t stop_at; /* stop once this many bytes came (0: never) */
};

static char err[512];

static char pattern_byte(size_t i)
{
    return (char)('a' + i % 23);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000};

    nanosleep(&ts, NULL);
}

static int send_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_str(int fd, const char *s)
{
    return send_all(fd, s, strlen(s));
}

static void read_request(int fd)
{
    char b[4096];
    size_t len = 0;

    while (len < sizeof(b) - 1) {
        ssize_t n = recv(fd, b + len, sizeof(b) - 1 - len, 0);
        if (n <= 0)
            return;
        len += (size_t)n;
        b[len] = '\0';
        if (strstr(b, "\r\n\r\n"))
            return;
    }
}

/* The body in pieces of odd sizes; chunked wraps each piece, its size line written in two parts. */
static void send_body(int fd, int chunked)
{
    static char piece[40000];
    size_t sent = 0, step = 777;
    char line[32];

    while (sent < BIG_LEN) {
        size_t n = BIG_LEN - sent < step ? BIG_LEN - sent : step;
        for (size_t i = 0; i < n; i++)
            piece[i] = pattern_byte(sent + i);
        if (chunked) {
            int h = snprintf(line, sizeof(line), "%zx\r\n", n);
            if (send_all(fd, line, 1) < 0 || send_all(fd, line + 1, (size_t)h - 1) < 0)
                return;
        }
        if (send_all(fd, piece, n) < 0 || (chunked && send_str(fd, "\r\n") < 0))
            return;
        sent += n;
        step = step * 3 % (sizeof(piece) - 1) + 1;
    }
    if (chunked)
        send_str(fd, "0\r\nX-Trailer: 1\r\n\r\n");
}

static void *serve_one(void *arg)
{
    struct fake *f = arg;
    char head[128];
    int fd = accept(f->lfd, NULL, NULL);

    if (fd < 0)
        return NULL;
    read_request(fd);
    switch (f->mode) {
    case M_LENGTH:
        snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", BIG_LEN);
        send_str(fd, head);
        send_body(fd, 0);
        sleep_ms(50);
        send_str(fd, "garbage after the body"); /* never handed on */
        break;
    case M_CHUNKED:
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n");
        send_body(fd, 1);
        break;
    case M_UNTIL_CLOSE:
        send_str(fd, "HTTP/1.0 200 OK\r\n\r\n");
        send_body(fd, 0);
        break;
    case M_ERROR:
        send_str(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 24\r\n\r\n"
                     "{\"error\":{\"message\":1}}\n");
        break;
    case M_EMPTY:
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        break;
    }
    shutdown(fd, SHUT_WR);
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

static int on_body(void *arg, const char *data, size_t len)
{
    struct got *g = arg;

    for (size_t i = 0; i < len && g->ok; i++)
        g->ok = data[i] == pattern_byte(g->len + i);
    g->len += len;
    g->pieces++;
    if (len > g->max_piece)
        g->max_piece = len;
    return g->stop_at && g->len >= g->stop_at;
}

static int run(struct fake *f, enum mode m, struct got *g, struct http_response *r)
{
    struct http_request req = {.method = "GET", .target = "/export", .max_body = 1000};
    struct http_url u;
    char url[64];
    int rc;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
    CHECK_INT(httpc_parse_url(url, &u, err, sizeof(err)), 0);
    f->mode = m;
    g->ok = 1;
    if (pthread_create(&f->th, NULL, serve_one, f) != 0)
        return -99;
    err[0] = '\0';
    rc = httpc_request_stream(&u, &req, on_body, g, r, err, sizeof(err));
    pthread_join(f->th, NULL);
    return rc;
}

static void test_bodies(struct fake *f)
{
    static const enum mode modes[] = {M_LENGTH, M_CHUNKED, M_UNTIL_CLOSE};

    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        struct got g = {0};
        struct http_response r = {0};

        /* max_body is 1000: a streamed body is not capped by it */
        CHECK_INT(run(f, modes[i], &g, &r), 0);
        CHECK_INT(r.status, 200);
        CHECK_INT(g.len, BIG_LEN);
        CHECK(g.ok);
        CHECK(g.pieces > 1);
        CHECK(g.max_piece <= 65536); /* never more than one read is held */
        CHECK_INT(r.body_len, 0);
        CHECK(r.body && r.body[0] == '\0');
        if (modes[i] == M_CHUNKED)
            CHECK_STR(r.content_type, "text/csv");
        httpc_response_free(&r);
    }
}

static void test_error_and_stop(struct fake *f)
{
    struct got g = {0};
    struct http_response r = {.status = -5};

    CHECK_INT(run(f, M_ERROR, &g, &r), 0); /* an error answer keeps its body */
    CHECK_INT(r.status, 400);
    CHECK_INT(g.len, 0);
    CHECK_STR(r.body, "{\"error\":{\"message\":1}}\n");
    httpc_response_free(&r);

    memset(&g, 0, sizeof(g));
    r.status = -5;
    CHECK_INT(run(f, M_EMPTY, &g, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(g.pieces, 0);
    httpc_response_free(&r);

    memset(&g, 0, sizeof(g));
    g.stop_at = 100000;
    r.status = -5;
    CHECK_INT(run(f, M_CHUNKED, &g, &r), HTTPC_EABORT);
    CHECK(g.len >= 100000 && g.len < BIG_LEN);
    CHECK_INT(r.status, -5); /* untouched */
    CHECK(strstr(err, "stopped by its receiver") != NULL);
}

int main(void)
{
    struct fake f;

    CHECK_INT(fake_listen(&f), 0);
    test_bodies(&f);
    test_error_and_stop(&f);
    close(f.lfd);
    return tl_done();
}
