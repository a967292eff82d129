/*
 * httpc_parse.c - the pure half of the HTTP client: URLs, percent-encoding, the response head and
 * the chunked transfer coding (RFC 9112 sections 4, 5 and 7.1). No I/O; see httpc.h.
 */
#include "base/sock.h"
#include "base/text.h"
#include "cli/http/httpc.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define CHUNK_LINE_MAX 4096 /* a chunk size line or a trailer line */

enum { CH_SIZE, CH_DATA, CH_DATA_END, CH_TRAILER, CH_DONE };

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

/* "[v6]" or "[v6%25zone]" at s[0..len): the zone is stored as "%zone", as getaddrinfo wants it. */
static int parse_ipv6(const char *s, size_t len, struct http_url *u, char *err, size_t errlen)
{
    char addr[INET6_ADDRSTRLEN + 1];
    unsigned char bin[16];
    const char *zone = memchr(s, '%', len);
    size_t alen = zone ? (size_t)(zone - s) : len;
    size_t zlen = zone ? len - alen - 3 : 0;

    if (alen == 0 || alen >= sizeof(addr))
        goto bad;
    memcpy(addr, s, alen);
    addr[alen] = '\0';
    if (inet_pton(AF_INET6, addr, bin) != 1)
        goto bad;
    if (zone) {
        if (len - alen < 4 || strncmp(zone, "%25", 3) != 0)
            goto bad;
        for (size_t i = 0; i < zlen; i++)
            if (!is_name_char(zone[3 + i]))
                goto bad;
    }
    snprintf(u->host, sizeof(u->host), "%s%s%.*s", addr, zone ? "%" : "", (int)zlen,
             zone ? zone + 3 : "");
    u->ipv6 = 1;
    return 0;
bad:
    text_set_err(err, errlen, "'[%.*s]' is not an IPv6 address", (int)len, s);
    return HTTPC_EURL;
}

static int parse_name(const char *s, size_t len, struct http_url *u, char *err, size_t errlen)
{
    if (len == 0) {
        text_set_err(err, errlen, "no host name");
        return HTTPC_EURL;
    }
    if (len >= sizeof(u->host)) {
        text_set_err(err, errlen, "host name longer than %zu bytes", sizeof(u->host) - 1);
        return HTTPC_EURL;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_name_char(s[i])) {
            text_set_err(err, errlen, "bad character '%c' in host name '%.*s'", s[i], (int)len, s);
            return HTTPC_EURL;
        }
    }
    memcpy(u->host, s, len);
    u->host[len] = '\0';
    u->ipv6 = 0;
    return 0;
}

static int parse_port(const char *s, size_t len, int *port, char *err, size_t errlen)
{
    long v = 0;

    if (len == 0 || len > 5)
        goto bad;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            goto bad;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > 65535)
        goto bad;
    *port = (int)v;
    return 0;
bad:
    text_set_err(err, errlen, "port '%.*s' is not a number from 1 to 65535", (int)len, s);
    return HTTPC_EURL;
}

/* HOST[:PORT] at s[0..len), HOST possibly a bracketed IPv6 literal. */
static int parse_authority(const char *s, size_t len, struct http_url *u, char *err, size_t errlen)
{
    const char *colon;
    size_t hlen;
    int r;

    if (memchr(s, '@', len)) {
        text_set_err(err, errlen,
                     "user names or passwords in the URL are not supported (use --token)");
        return HTTPC_EURL;
    }
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close) {
            text_set_err(err, errlen, "missing ']' after the IPv6 address");
            return HTTPC_EURL;
        }
        hlen = (size_t)(close - s) + 1;
        r = parse_ipv6(s + 1, hlen - 2, u, err, errlen);
        colon = hlen < len ? s + hlen : NULL;
        if (r == 0 && colon && *colon != ':') {
            text_set_err(err, errlen, "unexpected '%c' after the IPv6 address", *colon);
            return HTTPC_EURL;
        }
    } else {
        colon = memchr(s, ':', len);
        hlen = colon ? (size_t)(colon - s) : len;
        r = parse_name(s, hlen, u, err, errlen);
    }
    if (r < 0)
        return r;
    u->port = 80;
    if (colon)
        return parse_port(colon + 1, len - hlen - 1, &u->port, err, errlen);
    return 0;
}

static int parse_base(const char *s, struct http_url *u, char *err, size_t errlen)
{
    size_t len = strlen(s);

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c >= 0x7f || c == '?' || c == '#') {
            text_set_err(err, errlen, "the path '%s' may not contain spaces, controls, '?' or '#'",
                         s);
            return HTTPC_EURL;
        }
    }
    while (len > 0 && s[len - 1] == '/')
        len--;
    if (len >= sizeof(u->base)) {
        text_set_err(err, errlen, "path longer than %zu bytes", sizeof(u->base) - 1);
        return HTTPC_EURL;
    }
    memcpy(u->base, s, len);
    u->base[len] = '\0';
    return 0;
}

int httpc_parse_url(const char *url, struct http_url *out, char *err, size_t errlen)
{
    struct http_url u = {0};
    const char *auth, *slash, *sep = url ? strstr(url, "://") : NULL;
    int r;

    if (!sep) {
        text_set_err(err, errlen, "'%s' is not a URL: expected http://HOST[:PORT][/PATH]",
                     url ? url : "");
        return HTTPC_EURL;
    }
    if ((size_t)(sep - url) != 4 || strncasecmp(url, "http", 4) != 0) {
        text_set_err(err, errlen, "%.*s:// is not supported: only plain http://HOST[:PORT][/PATH]",
                     (int)(sep - url), url);
        return HTTPC_EURL;
    }
    auth = sep + 3;
    slash = strchr(auth, '/');
    r = parse_authority(auth, slash ? (size_t)(slash - auth) : strlen(auth), &u, err, errlen);
    if (r == 0 && slash)
        r = parse_base(slash, &u, err, errlen);
    if (r == 0)
        *out = u;
    return r;
}

char *httpc_url_origin(const struct http_url *u, char *buf, size_t cap)
{
    snprintf(buf, cap, "http://%s%s%s:%d", u->ipv6 ? "[" : "", u->host, u->ipv6 ? "]" : "",
             u->port);
    return buf;
}

size_t httpc_pct_encode(const char *s, char *buf, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char enc[3] = {(char)*p, 0, 0};
        size_t k = 1;
        if (!(is_name_char((char)*p) || *p == '~')) {
            enc[0] = '%';
            enc[1] = hex[*p >> 4];
            enc[2] = hex[*p & 15];
            k = 3;
        }
        for (size_t i = 0; i < k; i++, n++)
            if (n + 1 < cap)
                buf[n] = enc[i];
    }
    if (cap > 0)
        buf[n < cap ? n : cap - 1] = '\0';
    return n;
}

/* Trim spaces and tabs at both ends of s[0..*len); returns the new start. */
static const char *trim(const char *s, size_t *len)
{
    while (*len > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        (*len)--;
    }
    while (*len > 0 && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
        (*len)--;
    return s;
}

/* "HTTP/1.x NNN[ reason]" */
static int parse_status_line(const char *s, size_t len, struct httpc_head *h)
{
    if (len < 12 || strncmp(s, "HTTP/1.", 7) != 0 || s[7] < '0' || s[7] > '9' || s[8] != ' ')
        return HTTPC_EPROTO;
    for (int i = 9; i < 12; i++)
        if (s[i] < '0' || s[i] > '9')
            return HTTPC_EPROTO;
    if (len > 12 && s[12] != ' ')
        return HTTPC_EPROTO;
    h->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
    return h->status >= 100 ? 0 : HTTPC_EPROTO;
}

static int parse_content_length(const char *v, size_t len, struct httpc_head *h)
{
    int64_t n = 0;

    if (len == 0 || len > 18)
        return HTTPC_EPROTO;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return HTTPC_EPROTO;
        n = n * 10 + (v[i] - '0');
    }
    /* Repeated Content-Length headers must agree (RFC 9112 section 6.3). */
    if (h->content_length >= 0 && h->content_length != n)
        return HTTPC_EPROTO;
    h->content_length = n;
    return 0;
}

static int has_token(const char *v, size_t len, const char *tok)
{
    size_t tlen = strlen(tok);

    for (size_t i = 0; i + tlen <= len; i++)
        if (strncasecmp(v + i, tok, tlen) == 0)
            return 1;
    return 0;
}

static int parse_header(const char *s, size_t len, struct httpc_head *h)
{
    const char *colon = memchr(s, ':', len), *v;
    size_t nlen, vlen;

    if (!colon || colon == s || s[0] == ' ' || s[0] == '\t')
        return HTTPC_EPROTO; /* no name, or obsolete line folding */
    nlen = (size_t)(colon - s);
    vlen = len - nlen - 1;
    v = trim(colon + 1, &vlen);
    if (nlen == 14 && strncasecmp(s, "Content-Length", nlen) == 0)
        return parse_content_length(v, vlen, h);
    if (nlen == 17 && strncasecmp(s, "Transfer-Encoding", nlen) == 0)
        h->chunked |= has_token(v, vlen, "chunked");
    if (nlen == 12 && strncasecmp(s, "Content-Type", nlen) == 0)
        snprintf(h->content_type, sizeof(h->content_type), "%.*s", (int)vlen, v);
    return 0;
}

int httpc_parse_head(const char *buf, size_t len, struct httpc_head *out)
{
    struct httpc_head h = {.content_length = -1};
    size_t pos = 0;

    for (int line = 0;; line++) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t llen;
        int r;

        if (!nl)
            return len > HTTPC_HEAD_MAX ? HTTPC_EPROTO : 0;
        if ((size_t)(nl - buf) >= HTTPC_HEAD_MAX)
            return HTTPC_EPROTO;
        llen = (size_t)(nl - (buf + pos));
        if (llen > 0 && buf[pos + llen - 1] == '\r')
            llen--;
        if (line > 0 && llen == 0) {
            h.len = (size_t)(nl - buf) + 1;
            *out = h;
            return 1;
        }
        r = line == 0 ? parse_status_line(buf + pos, llen, &h) : parse_header(buf + pos, llen, &h);
        if (r < 0)
            return r;
        pos = (size_t)(nl - buf) + 1;
    }
}

/* Find the end of the line starting at rd: returns its length without CRLF and sets *next, 0 when
 * incomplete (with *next = 0), or HTTPC_EPROTO when too long. */
static long chunk_line(const char *buf, size_t len, size_t rd, size_t *next)
{
    const char *nl = memchr(buf + rd, '\n', len - rd);
    size_t llen;

    *next = 0;
    if (!nl)
        return len - rd > CHUNK_LINE_MAX ? HTTPC_EPROTO : 0;
    llen = (size_t)(nl - (buf + rd));
    if (llen > CHUNK_LINE_MAX)
        return HTTPC_EPROTO;
    *next = (size_t)(nl - buf) + 1;
    return (long)(llen > 0 && nl[-1] == '\r' ? llen - 1 : llen);
}

/* "HEX[ ;ext...]CRLF" */
static int chunk_size_line(struct httpc_chunked *st, const char *buf, size_t len)
{
    size_t next, i = 0;
    long llen = chunk_line(buf, len, st->rd, &next);
    const char *s = buf + st->rd;
    uint64_t size = 0;

    if (llen < 0 || !next)
        return llen < 0 ? HTTPC_EPROTO : 0;
    for (; i < (size_t)llen && text_hex_digit(s[i]) >= 0; i++) {
        if (size > (UINT64_MAX >> 4))
            return HTTPC_EPROTO;
        size = size << 4 | (uint64_t)text_hex_digit(s[i]);
    }
    if (i == 0)
        return HTTPC_EPROTO;
    while (i < (size_t)llen && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < (size_t)llen && s[i] != ';')
        return HTTPC_EPROTO;
    st->rd = next;
    st->left = size;
    st->phase = size ? CH_DATA : CH_TRAILER;
    return 1;
}

static int chunk_data(struct httpc_chunked *st, char *buf, size_t len)
{
    size_t n = len - st->rd;

    if (n > st->left)
        n = (size_t)st->left;
    if (n == 0)
        return 0;
    memmove(buf + st->wr, buf + st->rd, n);
    st->wr += n;
    st->rd += n;
    st->left -= n;
    if (st->left == 0)
        st->phase = CH_DATA_END;
    return 1;
}

/* The CRLF after a chunk's data (a bare LF is accepted too). */
static int chunk_data_end(struct httpc_chunked *st, const char *buf, size_t len)
{
    size_t avail = len - st->rd;

    if (avail == 0)
        return 0;
    if (buf[st->rd] == '\n') {
        st->rd += 1;
    } else if (buf[st->rd] == '\r') {
        if (avail < 2)
            return 0;
        if (buf[st->rd + 1] != '\n')
            return HTTPC_EPROTO;
        st->rd += 2;
    } else {
        return HTTPC_EPROTO;
    }
    st->phase = CH_SIZE;
    return 1;
}

/* Trailer fields after the last chunk are skipped up to the blank line. */
static int chunk_trailer(struct httpc_chunked *st, const char *buf, size_t len)
{
    size_t next;
    long llen = chunk_line(buf, len, st->rd, &next);

    if (llen < 0 || !next)
        return llen < 0 ? HTTPC_EPROTO : 0;
    st->rd = next;
    if (llen == 0)
        st->phase = CH_DONE;
    return 1;
}

int httpc_dechunk(struct httpc_chunked *st, char *buf, size_t len)
{
    int r = 1;

    while (r == 1 && st->phase != CH_DONE) {
        switch (st->phase) {
        case CH_SIZE:
            r = chunk_size_line(st, buf, len);
            break;
        case CH_DATA:
            r = chunk_data(st, buf, len);
            break;
        case CH_DATA_END:
            r = chunk_data_end(st, buf, len);
            break;
        default:
            r = chunk_trailer(st, buf, len);
            break;
        }
    }
    return r < 0 ? HTTPC_EPROTO : st->phase == CH_DONE;
}
