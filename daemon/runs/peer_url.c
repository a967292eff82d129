/*
 * peer_url.c - the form of a peer URL (peer_url.h). A run's peers are fetched by whoever prints
 * its report, so a stored peer is a claim by whoever created the run: only plain HTTP(S) URLs of
 * the form perflog run writes get in, and none can carry credentials or point at a file.
 */
#include "daemon/runs/peer_url.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

static int is_v6_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
           c == '.';
}

/* HOST[:PORT] at s[0..len); NULL when good, else why not. */
static const char *authority_problem(const char *s, size_t len)
{
    size_t i = 0, digits;
    long port = 0;

    if (len == 0)
        return "no host";
    if (memchr(s, '@', len))
        return "a peer URL carries no user name or password";
    if (s[0] == '[') {
        for (i = 1; i < len && s[i] != ']'; i++)
            if (!is_v6_char(s[i]))
                return "the IPv6 address in [] has a character other than hex digits, ':' or '.'";
        if (i == len || i == 1)
            return "an IPv6 address is written [ADDR]";
        i++;
    } else {
        for (; i < len && s[i] != ':'; i++)
            if (!is_name_char(s[i]))
                return "the host has a character other than letters, digits, '-', '.' or '_'";
        if (i == 0)
            return "no host";
    }
    if (i == len)
        return NULL;
    if (s[i] != ':')
        return "only ':PORT' may follow the IPv6 address";
    for (digits = 0, i++; i < len; i++, digits++) {
        if (s[i] < '0' || s[i] > '9' || digits == 5)
            return "the port is not a number from 1 to 65535";
        port = port * 10 + (s[i] - '0');
    }
    if (digits == 0 || port < 1 || port > 65535)
        return "the port is not a number from 1 to 65535";
    return NULL;
}

static const char *path_problem(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c <= ' ' || c >= 0x7f)
            return "the URL has a space, a control character or a non-ASCII byte";
        if (c == '?' || c == '#' || c == '%')
            return "a peer URL has no query, fragment or percent-escape";
    }
    return NULL;
}

/* The run id after the last PEER_URL_RUNS_PATH of path[0..len), 0 when there is none, or -1. */
static long long run_id(const char *path, size_t len, size_t *at)
{
    const size_t plen = sizeof(PEER_URL_RUNS_PATH) - 1;
    long long v = 0;
    size_t i, found = SIZE_MAX;

    for (i = 0; i + plen <= len; i++)
        if (memcmp(path + i, PEER_URL_RUNS_PATH, plen) == 0)
            found = i;
    if (found == SIZE_MAX)
        return 0;
    for (i = found + plen; i < len; i++) {
        if (path[i] < '0' || path[i] > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (path[i] - '0');
    }
    if (i == found + plen || v <= 0)
        return -1;
    *at = found;
    return v;
}

int peer_url_parse(const char *url, char *server, size_t cap, long long *id, const char **why)
{
    size_t len = strnlen(url, PEER_URL_MAX + 1), skip, auth_len, end;
    const char *auth, *path, *p;
    long long v;

    if (len > PEER_URL_MAX) {
        *why = "a peer URL is at most 4096 bytes long";
        return -EINVAL;
    }
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else {
        *why = "a peer URL starts with http:// or https://";
        return -EINVAL;
    }
    auth = url + skip;
    path = strchr(auth, '/');
    auth_len = path ? (size_t)(path - auth) : len - skip;
    if (!path)
        path = url + len;
    if ((p = authority_problem(auth, auth_len)) != NULL ||
        (p = path_problem(path, (size_t)(url + len - path))) != NULL) {
        *why = p;
        return -EINVAL;
    }
    end = len;
    v = run_id(path, (size_t)(url + len - path), &end);
    if (v < 0) {
        *why = "a peer URL ends in /api/v1/runs/ID with ID a run number, or names a server";
        return -EINVAL;
    }
    if (v > 0)
        end += (size_t)(path - url);
    while (end > skip && url[end - 1] == '/')
        end--;
    if (server && end >= cap)
        return -ENOSPC;
    if (server) {
        memcpy(server, url, end);
        server[end] = '\0';
    }
    if (id)
        *id = v;
    return 0;
}
