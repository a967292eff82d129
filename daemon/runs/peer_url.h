/*
 * peer_url.h - the one form of a peer URL: what `perflog run --peer` stores in a run's "peers",
 * which the daemon accepts in POST /api/v1/runs and `perflog report` checks again before it
 * fetches anything from it:
 *
 *   http[s]://HOST[:PORT][/PATH]                  a peer where the run could not be opened
 *   http[s]://HOST[:PORT][/PATH]/api/v1/runs/ID   the peer's run ID
 *
 * HOST is a name of letters, digits, '-', '.' and '_', or an IPv6 literal in brackets; PORT is
 * 1..65535; PATH is visible ASCII without '?', '#' or '%'. No user name, password, query or
 * fragment. Pure; thread-safe.
 */
#ifndef PERFLOG_PEER_URL_H
#define PERFLOG_PEER_URL_H

#include <stddef.h>

#define PEER_URL_MAX       4096 /* bytes of one peer URL */
#define PEER_URL_RUNS_PATH "/api/v1/runs/"

/*
 * Check url. Returns 0 and, when server is not NULL, copies the server part (the URL without
 * "/api/v1/runs/ID" and without trailing '/') into server (cap bytes) and sets *id to ID, or 0
 * when url names a server alone. Returns -EINVAL with *why set to a static English reason
 * (outputs untouched) when url is not of that form, or -ENOSPC when server is too small.
 */
int peer_url_parse(const char *url, char *server, size_t cap, long long *id, const char **why);

#endif
