/*
 * listen.c - the "HOST:PORT" listen address: an IPv4 literal, a host name ("localhost") or a
 * bracketed IPv6 literal ("[::1]:9931"). Pure text checks, no resolver and no socket headers, so
 * the same code runs on every platform; the HTTP server resolves the host when it binds.
 */
#include "config/config.h"

#include <errno.h>
#include <string.h>

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_xdigit(char ch)
{
    return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* Dotted quad, each part 0..255 without leading zeros (which some resolvers read as octal). */
static int ipv4_valid(const char *s, size_t n)
{
    size_t i = 0;

    for (int part = 0; part < 4; part++) {
        size_t start;
        unsigned v = 0;

        if (part > 0 && (i >= n || s[i++] != '.'))
            return 0;
        start = i;
        while (i < n && is_digit(s[i]) && i - start < 3)
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
            return 0;
    }
    return i == n;
}

/* RFC 4291 section 2.2: eight groups, one "::" for a run of zero groups, an IPv4 tail. */
static int ipv6_valid(const char *s, size_t n)
{
    size_t i = 0, groups = 0;
    int gap = 0;

    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 1;
        i = 2;
    }
    while (i < n) {
        size_t j = i;

        while (j < n && is_xdigit(s[j]) && j - i < 5)
            j++;
        if (j < n && s[j] == '.') {
            if (groups > 6 || !ipv4_valid(s + i, n - i))
                return 0;
            groups += 2;
            break;
        }
        if (j == i || j - i > 4)
            return 0;
        groups++;
        i = j;
        if (i == n)
            break;
        if (s[i++] != ':' || i == n)
            return 0;
        if (s[i] == ':') {
            if (gap)
                return 0;
            gap = 1;
            i++;
        }
    }
    return gap ? groups <= 7 : groups == 8;
}

/* RFC 1123 labels (letters, digits, '-', not at either end; '_' tolerated), 253 bytes in all. */
static int hostname_valid(const char *s, size_t n)
{
    size_t label = 0;

    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];

        if (ch == '.') {
            if (label == 0 || s[i - 1] == '-')
                return 0;
            label = 0;
            continue;
        }
        if (!(is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-' ||
              ch == '_'))
            return 0;
        if ((ch == '-' && label == 0) || ++label > 63)
            return 0;
    }
    return label > 0 && s[n - 1] != '-';
}

/* A name whose last label is all digits can only be a (mistyped) IPv4 address. */
static int looks_numeric(const char *s, size_t n)
{
    size_t i = n;

    while (i > 0 && s[i - 1] != '.')
        i--;
    for (size_t k = i; k < n; k++)
        if (!is_digit(s[k]))
            return 0;
    return i < n;
}

static const char *check_host(const char *h, size_t n, int bracketed)
{
    if (bracketed)
        return ipv6_valid(h, n) ? NULL : "not a valid IPv6 address";
    if (n == 0)
        return "the host is missing (0.0.0.0 or [::] listens on every interface)";
    if (memchr(h, ':', n))
        return "an IPv6 address must be written in brackets, as in [::1]:9931";
    if (looks_numeric(h, n))
        return ipv4_valid(h, n) ? NULL : "not a valid IPv4 address";
    return hostname_valid(h, n) ? NULL : "not a valid host name";
}

static const char *check_port(const char *p, int *port)
{
    long v = 0;
    size_t i = 0;

    if (*p == '\0')
        return "the port is missing";
    for (; p[i]; i++) {
        if (!is_digit(p[i]) || i >= 5)
            return "the port must be a number from 1 to 65535";
        v = v * 10 + (p[i] - '0');
    }
    if (v < 1 || v > 65535)
        return "the port must be a number from 1 to 65535";
    *port = (int)v;
    return NULL;
}

int cfg_listen_parse(const char *addr, char *host, size_t hostlen, int *port, const char **why)
{
    const char *h = addr, *sep, *reason;
    size_t n;
    int bracketed = addr[0] == '[', p = 0;

    if (bracketed) {
        const char *close = strchr(addr, ']');

        if (!close) {
            *why = "missing ']' after the IPv6 address";
            return -EINVAL;
        }
        h = addr + 1;
        n = (size_t)(close - h);
        sep = close + 1;
        if (*sep != ':') {
            *why = "expected ':PORT' after ']'";
            return -EINVAL;
        }
    } else {
        sep = strrchr(addr, ':');
        if (!sep) {
            *why = "the ':PORT' part is missing";
            return -EINVAL;
        }
        n = (size_t)(sep - h);
    }
    reason = check_host(h, n, bracketed);
    if (!reason)
        reason = check_port(sep + 1, &p);
    if (!reason && host && n >= hostlen)
        reason = "the host name is too long";
    if (reason) {
        *why = reason;
        return -EINVAL;
    }
    if (host) {
        memcpy(host, h, n);
        host[n] = '\0';
    }
    *port = p;
    return 0;
}
