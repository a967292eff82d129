/*
 * cli.h - what the perflog subcommands share: the connection settings chosen by the global
 * options, the subcommand table entry, the API call helpers (api.c) and the value formatters
 * (fmt.c). Single-threaded program; nothing here locks.
 */
#ifndef PERFLOG_CLI_H
#define PERFLOG_CLI_H

#include "httpc.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_DEFAULT_SERVER "http://127.0.0.1:9931"

/* Exit codes of every subcommand. */
#define CLI_EXIT_OK    0
#define CLI_EXIT_FAIL  1 /* the server is unreachable or answered with an error */
#define CLI_EXIT_USAGE 2 /* bad options or arguments */

struct cli {
    struct http_url url;
    const char *server;  /* as the user gave it (or the default), for messages */
    const char *token;   /* NULL: no Authorization header */
    int read_timeout_ms; /* longest silence while waiting for an answer */
};

/* One subcommand: argv[0] is its name; returns the process exit code. */
struct cli_cmd {
    const char *name;
    int (*run)(const struct cli *c, int argc, char **argv);
    const char *summary; /* one line for `perflog --help` */
};

int cmd_status(const struct cli *c, int argc, char **argv);
int cmd_counters(const struct cli *c, int argc, char **argv);
int cmd_data(const struct cli *c, int argc, char **argv);
int cmd_export(const struct cli *c, int argc, char **argv);
int cmd_typeperf(const struct cli *c, int argc, char **argv);
int cmd_run(const struct cli *c, int argc, char **argv);
int cmd_runs(const struct cli *c, int argc, char **argv);
int cmd_report(const struct cli *c, int argc, char **argv);
int cmd_compare(const struct cli *c, int argc, char **argv);

/*
 * How many of the patterns pats[0..n) match no counter of the daemon (GET /api/v1/counters), each
 * named on stderr as "perflog CMD: no counter matches 'P'"; -1 when the server failed (reported).
 * ok (NULL, or n flags) is set to 1 for the patterns that match. Commands run the ones that match
 * and exit 1 when some did not: a typo must not look like a quiet success.
 */
int cli_unmatched(const struct cli *c, const char *cmd, char *const *pats, int n,
                  unsigned char *ok);

/*
 * GET target (e.g. "/api/v1/health", query already encoded). On a 2xx answer fills *resp (free
 * with httpc_response_free) and returns 0. Otherwise prints one or two lines to stderr - the
 * connection problem with a hint, the server's {"error": ...} message, or the PERFLOG_TOKEN hint
 * on 401 - and returns CLI_EXIT_FAIL.
 */
int cli_get(const struct cli *c, const char *target, struct http_response *resp);

/* Like cli_get, but any HTTP status is returned in *resp (0); only a transport failure is printed
 * and returns CLI_EXIT_FAIL. */
int cli_get_any(const struct cli *c, const char *target, struct http_response *resp);

/* Like cli_get, but prints nothing: for best-effort polls (the live line of perflog run). */
int cli_get_quiet(const struct cli *c, const char *target, struct http_response *resp);

/*
 * GET target and hand a 2xx body to on_body piece by piece as it arrives (httpc_request_stream),
 * so memory does not grow with its size. Returns 0, or CLI_EXIT_FAIL after printing what went
 * wrong as cli_get does (when on_body stops the transfer, it is on_body's to say why).
 */
int cli_get_stream(const struct cli *c, const char *target, httpc_body_fn on_body, void *arg);

/*
 * Send method (POST, DELETE, ...) to target with body as compact JSON (NULL: no body; borrowed).
 * On a 2xx answer fills *resp (free with httpc_response_free) and returns 0; otherwise prints
 * what went wrong as cli_get does and returns CLI_EXIT_FAIL.
 */
int cli_request(const struct cli *c, const char *method, const char *target, const json_t *body,
                struct http_response *resp);

/* Print the server's {"error": ...} message of a non-2xx answer (and the token hint on 401). */
void cli_print_http_error(const struct cli *c, const struct http_response *r);

/*
 * Append "?name=value" (or "&name=value" when target already has a query) to *target, which is
 * malloc'd or NULL, percent-encoding value. Returns 0 or -ENOMEM (*target kept).
 */
int cli_query_add(char **target, const char *name, const char *value);

/* Write the body to stdout as it came, ending with a newline (for --json). */
void cli_print_body(const struct http_response *r);

/* Print the usage line and what follows it; `err` selects stderr (after a usage error). */
void cli_print_help(int err, const char *text);

/* "YYYY-MM-DD HH:MM:SS" in local time (or UTC), with ".mmm" when with_ms; returns buf. */
char *cli_format_time(int64_t ms, int utc, int with_ms, char *buf, size_t cap);

/* A duration in seconds for people: "0.4 s", "3 min 04 s", "2 h 03 min", "4 d 02 h". */
char *cli_format_duration(double s, char *buf, size_t cap);

/* A byte count for people: "512 B", "1.5 KiB", "12.3 MiB". */
char *cli_format_bytes(double bytes, char *buf, size_t cap);
/* "12.0 MiB/s", or "-" for NaN. Returns buf. */
char *cli_format_rate(double bytes_per_s, char *buf, size_t cap);
/* "42%" (no decimals), or "-" for NaN. Returns buf. */
char *cli_format_pct(double pct, char *buf, size_t cap);

/* A sample value: integers in full, others with 6 significant digits or one decimal above 1000;
 * "-" for NaN (null). */
char *cli_format_value(double v, char *buf, size_t cap);

/*
 * A --from/--to time (cli_time.c): every form of the HTTP API plus the local ones of
 * tp_parse_time_local ("2026-12-01 19:55", "19:50", "yesterday 19:00", "today"), in the client's
 * zone (or UTC when utc). 0, or -1 after a message naming cmd and opt.
 */
int cli_parse_time(const char *cmd, const char *opt, const char *s, int64_t now_ms, int utc,
                   int64_t *out_ms);
/* Both ends, and from <= to; 0 or CLI_EXIT_USAGE after a message (times in ISO 8601). */
int cli_time_range(const char *cmd, const char *from, const char *to, int utc, int64_t *from_ms,
                   int64_t *to_ms);
struct tz_zone;
/* cli_time_range with the local forms read in zone (tz.h) when it is not NULL (export --tz
 * Europe/Paris), the errors' times in it too. */
int cli_time_range_in(const char *cmd, const char *from, const char *to, int utc,
                      const struct tz_zone *zone, int64_t *from_ms, int64_t *to_ms);
/* Add name=TIME to the URL: the typed text when the server reads it the same ("now", "-10m"),
 * else the instant as Unix seconds. 0 or -ENOMEM. */
int cli_query_time(char **target, const char *name, const char *typed, int64_t ms);
/* ms as ISO 8601 with the client's offset ("2026-12-01T19:55:00.000+01:00"), or UTC "...Z". */
char *cli_format_iso(int64_t ms, int utc, char *buf, size_t cap);

/* Milliseconds since the epoch, from the wall clock. */
int64_t cli_now_ms(void);

/* Accessors that tolerate absent or mistyped members: NULL / NAN / def. */
const char *cli_json_str(const json_t *obj, const char *key);
double cli_json_num(const json_t *obj, const char *key);

#endif
