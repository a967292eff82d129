/*
 * config.h - the daemon's configuration: defaults, a JSON file read with Jansson, and command-line
 * overrides, each checked strictly with an error that says where and what.
 *
 * Every key, its type, default and range are listed in docs/configuration.md, and
 * config/perflogd.example.json sets every key to its default. A struct cfg owns its glob strings
 * (so a struct copied with `=` must be released once only). The functions keep no state of their
 * own: calls on different structs may run at the same time; one struct is not locked.
 */
#ifndef PERFLOG_CONFIG_H
#define PERFLOG_CONFIG_H

#include "collectors/model/collector_config.h"

#include <stddef.h>
#include <stdint.h>

#define CFG_MAX_GLOBS  32  /* must equal COLLECTOR_MAX_GLOBS */
#define CFG_GLOB_MAX   255 /* bytes in one glob */
#define CFG_MAX_ERRORS 20  /* errors of one file reported, one line each */

_Static_assert(CFG_MAX_GLOBS == COLLECTOR_MAX_GLOBS, "glob lists are handed to the collector");

struct cfg {
    char db[4096];         /* "db", default "./perflog.db" */
    char listen_addr[256]; /* "listen" "ADDR:PORT", default "127.0.0.1:9931"; IPv6 "[::1]:9931" */
    int listen_port;       /* parsed from listen_addr */
    int64_t interval_ms;   /* "interval_ms", default 1000, range 100..3600000 */
    int log_level;         /* "log_level": enum log_level, default LOG_LVL_INFO */
    char root[4096];       /* "root": prefix of /proc and /sys, default "/" */
    char *disk_include[CFG_MAX_GLOBS]; /* "disks": {"include": [], "exclude": [...]} */
    size_t n_disk_include;             /* an empty include list includes all */
    char *disk_exclude[CFG_MAX_GLOBS]; /* default ["loop*", "ram*", "zram*"] */
    size_t n_disk_exclude;
    char *net_include[CFG_MAX_GLOBS]; /* "interfaces": {"include": [], "exclude": []} */
    size_t n_net_include;
    char *net_exclude[CFG_MAX_GLOBS];
    size_t n_net_exclude;
    char *pdh_counters[CFG_MAX_GLOBS]; /* "pdh_counters": extra PDH counter paths, Windows only */
    size_t n_pdh_counters;
    /* "retention": days kept per tier, 1..36500, raw <= minute <= hour; defaults 7, 90, 1825 */
    int raw_days, minute_days, hour_days;
    int chunk_after_minutes;    /* raw rows older than this are compressed; 0: never */
    int64_t commit_interval_ms; /* default 2000, range 0..2000 (0 = commit every tick) */
    int64_t max_held_ticks;     /* ticks held while the db cannot be written, 3600, 10..1000000 */
    int sampler_rt_priority;    /* SCHED_FIFO priority of the sampler, 0..99; 0: nice -10 only */
    /* HTTP API (docs/design.md §5) */
    char auth_token[256];     /* "auth_token": "" = no auth; else 1..255 visible ASCII characters */
    int auth_read;            /* "auth_read": true = GETs need the token too; default false */
    int http_threads;         /* "http_threads": worker threads, default 2, 1..64 */
    int max_connections;      /* "max_connections": default 256, 1..100000; more get a 503 */
    int connection_timeout_s; /* "connection_timeout_s": idle/slow client cut-off, 10, 1..3600 */
    int request_timeout_s; /* "request_timeout_s": a streamed answer is ended after it, 60, 1..86400
                            */
    int header_timeout_s;  /* "header_timeout_s": whole request within it, 10, 1..3600 */
    int max_per_ip;        /* "max_connections_per_ip": per client address, 32, 1..100000 */
    int64_t max_body_bytes; /* "max_body_bytes": default 65536, 1024..16777216; more: 413 */
    int64_t max_url_bytes;  /* "max_url_bytes": default 8192, 256..65536; more: 414 */
    int64_t max_points;     /* "max_points": per series per request, 100000, 100..100000000 */
    int64_t max_db_bytes;   /* "max_db_bytes": size cap of the database, 4 GiB; 0 = none */
};

/* Set every field to its default. Does not free anything: call it on a new or released cfg. */
void cfg_defaults(struct cfg *c);

/*
 * Free the glob strings and empty the lists. Safe on a defaults-only cfg and twice in a row; the
 * cfg is reusable after cfg_defaults. Accepts NULL.
 */
void cfg_release(struct cfg *c);

/*
 * Load FILE over the current values of *c: keys absent from the file keep their value, a glob
 * list in the file replaces the whole list. Returns 0, or -1 with *c untouched and in err (errlen
 * bytes, always terminated when errlen > 0) one line per error, e.g.
 *   perflogd.json:12:5: key 'retention.raw_days': expected an integer from 1 to 36500, got "x"
 * Every value is judged, so all its errors are listed, at most CFG_MAX_ERRORS, then a line that
 * says how many more there were (a syntax error stops the parse: it is the only one). Lines are
 * separated by '\n', with none after the last. A file that cannot be read, or is not a regular
 * file (a FIFO is refused without waiting for a writer), is named without a position
 * ("perflogd.json: cannot open: ...").
 */
int cfg_load_file(struct cfg *c, const char *path, char *err, size_t errlen);

/* The same from a buffer of len bytes (need not be NUL-terminated); `name` is FILE in messages. */
int cfg_load_buffer(struct cfg *c, const char *name, const char *buf, size_t len, char *err,
                    size_t errlen);

/*
 * Set one key from command-line text, with the checks of the file: `key` is the JSON key ("db",
 * "listen", "interval_ms", "log_level", "root", or any other scalar key, "retention.raw_days"
 * for nested ones); `value` the text ("500" for an integer). Returns 0, or -1 with *c untouched
 * and err set to e.g. "--interval: expected an integer from 100 to 3600000, got \"abc\"", where
 * "--interval" is `origin` (the option as the user typed it; NULL names the key instead).
 */
int cfg_override(struct cfg *c, const char *key, const char *value, const char *origin, char *err,
                 size_t errlen);

/* Fill *out for collector_new. Its pointers borrow from c, which must outlive their use. */
void cfg_collector_config(const struct cfg *c, struct collector_config *out);

/*
 * Split a listen address "HOST:PORT" as cfg_load_* accepts it: HOST is an IPv4 literal, a host
 * name, or an IPv6 literal in brackets; PORT is 1..65535. Returns 0, copies HOST (without
 * brackets) into host when host is not NULL, and sets *port; or -EINVAL with *why pointing to a
 * static English reason and the outputs untouched. Pure; thread-safe.
 */
int cfg_listen_parse(const char *addr, char *host, size_t hostlen, int *port, const char **why);

#endif
