/*
 * run.h - the pure pieces of `perflog run`, `perflog runs` and `perflog report`, apart from their
 * I/O so the unit test drives them: quoting the command line, the tail of the tool's output,
 * /proc/self/io, the live line and the text rendering of a run report (docs/design.md §7).
 * Nothing here keeps state between calls; every function is thread-safe.
 */
#ifndef PERFLOG_CLI_RUN_H
#define PERFLOG_CLI_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The last 24 KiB of output go to the server: tool summaries are at the end, and the end request
 * (escaped JSON) must stay under the daemon's default max_body_bytes of 64 KiB. */
#define RUN_TAIL_MAX ((size_t)24 << 10)

/*
 * The words of argv[0..argc) as one POSIX shell line: a word made only of safe characters
 * (letters, digits, and %+,-./:=@_) stays as it is, any other is put in single quotes, with each
 * ' written as '\''; the empty word is ''. Returns a malloc'd string, or NULL when out of memory.
 */
char *run_shell_quote(int argc, char *const *argv);

/*
 * The words of argv[0..argc) as one Windows command line that CommandLineToArgvW and the C
 * runtime split back into the same words (Microsoft, "Parsing C command-line arguments"): the
 * program, argv[0], whose parsing knows no escapes, in plain double quotes when it is empty or
 * holds a space or tab; any other word unchanged unless it is empty or holds a space, tab, newline,
 * vertical tab or '"', else in double quotes with each '"' written as \" and the backslashes
 * before a '"' or the closing quote doubled. Bytes are copied as they are (UTF-8 stays UTF-8).
 * Returns 0 with a malloc'd string in *out, -EINVAL when argc < 1 or argv[0] holds a '"' (no
 * command line can say that; Windows file names cannot hold one), or -ENOMEM; *out is untouched
 * on failure.
 */
int run_win_quote(int argc, char *const *argv, char **out);

/* The last cap bytes of a stream: a ring buffer. Zero it, then run_tail_init. */
struct run_tail {
    char *buf;
    size_t cap;     /* capacity of buf */
    size_t len;     /* bytes kept, <= cap */
    size_t start;   /* offset of the oldest kept byte */
    uint64_t total; /* bytes ever added */
};

/* Returns 0 or -ENOMEM. */
int run_tail_init(struct run_tail *t, size_t cap);

/* Keep the newest bytes of data (all of them when len >= cap: only its last cap bytes). */
void run_tail_add(struct run_tail *t, const char *data, size_t len);

/*
 * The kept bytes, oldest first, made valid UTF-8 for a JSON string: a partial character at the
 * start (cut by the ring) is dropped, other invalid bytes and control characters but tab, CR and
 * LF become '?'. Returns a
 * malloc'd NUL-terminated string (its length in *len when len is not NULL), or NULL.
 */
char *run_tail_text(const struct run_tail *t, size_t *len);

/* Free the buffer and clear *t. Accepts NULL. */
void run_tail_free(struct run_tail *t);

/* The four counters of /proc/PID/io that a run reports (Documentation/filesystems/proc.rst,
 * section 3.3): bytes through read/write syscalls, and bytes fetched from / sent to storage. */
struct run_io {
    uint64_t rchar, wchar, read_bytes, write_bytes;
};

/* Parse the text of /proc/PID/io in buf[0..len). Returns 0 and fills *out, or -EINVAL (a field
 * missing or malformed) with *out untouched. Unknown lines are ignored. */
int run_parse_io(const char *buf, size_t len, struct run_io *out);

/* The query of the live line: "/api/v1/latest?counter=...". */
extern const char run_live_target[];

/*
 * The live line of a running command from a GET /api/v1/latest answer, e.g. "perflog run 12:
 * 00:05  disk r 120.0 MiB/s w 340.0 MiB/s  net rx 0 B/s tx 0 B/s  dirty 1.2 GiB  cpu 35%
 * (busiest 1: 92%)". Missing values show as "-". Returns buf.
 */
char *run_live_line(const json_t *latest, long long id, double elapsed_s, char *buf, size_t cap);

/* \Memory\Dirty Bytes + \Memory\Writeback Bytes of a /latest answer, or NAN. */
double run_latest_dirty(const json_t *latest);

/*
 * A run report (the JSON object of docs/report.md) as text for people, the one renderer of
 * perflog run and perflog report: the story first - when the command returned, when its data was
 * on disk (durable), how long it stayed dirty and how fast it was then written, or for a run that
 * only read, the devices' read rate and the cache-served share - then the throughputs, the cache,
 * dirty data at exit, the busiest core, one line per disk and per interface (idle ones only when
 * `all`), TCP, memory, the processes (saying whether their rows add up to the totals), payload
 * and peers. Absent or null values print as "-" or are left out. Returns a malloc'd string, or
 * NULL when out of memory.
 */
char *run_report_text(const json_t *report, int all);

/*
 * The verdict lines that follow the report's head (cli/report_verdict_fmt.c): the limit of the
 * run and of its tail with their rule and first measured evidence (or the top three utilisations
 * when no single limit was found), and their phases. Writes nothing for a report without one.
 */
void run_report_verdict(FILE *f, const json_t *report);

/*
 * The hosts of a run side by side, for a report whose "peers" holds the peers' reports (as
 * `perflog run` and `perflog report` fill it): a column for the report's own host and one per
 * peer, rows for disk read and write (+ tail), network bytes and packets each way without the
 * loopback, retransmits, CPU, dirty data at exit and the headline throughput (durable, or the
 * device read rate). Writes nothing without peers. A peer without a report shows "(no report)".
 */
void run_report_hosts(FILE *f, const json_t *report);

/*
 * A peer's run as perflog run stores it in the run's "peers": "SERVER/api/v1/runs/ID", the URL
 * of that run. run_peer_url returns it malloc'd (a trailing '/' of server dropped), or NULL when
 * out of memory. run_peer_split takes one apart: 0 with the server URL in server (cap bytes) and
 * the id in *id, or -1 (server and *id untouched) when url does not end in /api/v1/runs/ID, as a
 * plain server URL given by another client does not.
 */
char *run_peer_url(const char *server, long long id);
int run_peer_split(const char *url, char *server, size_t cap, long long *id);

/*
 * The tokens given for peers: --peer URL followed by --peer-token TOKEN. A peer is never sent
 * the token of the local daemon (PERFLOG_TOKEN, --token): only one given for it.
 */
#define RUN_MAX_PEERS 16
struct run_peer_tokens {
    const char *url[RUN_MAX_PEERS], *token[RUN_MAX_PEERS]; /* borrowed (argv); token may be NULL */
    size_t n;
};

/*
 * Take one --peer URL (is_token 0) or --peer-token TOKEN (1) into t: a token is for the --peer
 * before it. Returns 0, or -1 after a message that starts with cmd ("perflog run").
 */
int run_peer_option(struct run_peer_tokens *t, int is_token, const char *arg, const char *cmd);

/*
 * Find the token for server in list, the text of PERFLOG_PEER_TOKENS: "URL=TOKEN[,URL=TOKEN]...",
 * URL up to the first '=', compared without trailing '/'. Returns 0 with the token in out (cap
 * bytes), or -1 (out untouched) when list is NULL, names no such URL or the token is too long.
 */
int run_peer_token_find(const char *list, const char *server, char *out, size_t cap);

/*
 * The token for peer server: the one of t for it (t may be NULL), else PERFLOG_PEER_TOKENS's
 * (copied to buf), else NULL (no Authorization header).
 */
const char *run_peer_token(const struct run_peer_tokens *t, const char *server, char *buf,
                           size_t cap);

#endif
