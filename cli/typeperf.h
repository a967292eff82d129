/*
 * typeperf.h - the pure parts of `perflog typeperf`: typeperf's own command line (single-dash
 * options, names case-insensitive: -si, -SI, -sc, -f, -o, -q, -qx, -cf, -y), the counter file of
 * -cf (one path a line), an ordered list of unique strings, and the paths -q prints. No I/O apart
 * from reading the -cf file; unit-tested by tests/unit/test_cli_typeperf.c.
 */
#ifndef PERFLOG_TYPEPERF_H
#define PERFLOG_TYPEPERF_H

#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* An ordered list of distinct strings (owned). */
struct tp_list {
    char **v;
    size_t n, cap;
};

/* Append a copy of s[0..len) unless an equal string is there already. 1 added, 0 duplicate,
 * -ENOMEM. */
int tp_list_add(struct tp_list *l, const char *s, size_t len);
void tp_list_free(struct tp_list *l); /* the struct is reusable */

enum tp_query { TP_QUERY_NONE, TP_QUERY_PATHS, TP_QUERY_INSTANCES };

struct tp_args {
    int si_ms;       /* -si: sample interval, default 1000 */
    long sc;         /* -sc: samples to print, 0 = until interrupted */
    int tsv;         /* -f TSV */
    const char *out; /* -o FILE, NULL: the console */
    enum tp_query query;
    const char *query_object; /* -q/-qx OBJECT, NULL: all objects */
    const char *cf[16];       /* -cf FILE... */
    size_t ncf;
    const char *server_host; /* -s HOST: must be the daemon's own host, NULL: not given */
    int yes;                 /* -y, accepted and ignored */
    int help;                /* -?, -h, --help */
    const char *config;      /* -config FILE: typeperf's settings file, NULL: none */
    unsigned given;          /* the options the command line gave (bits private to the parser) */
    struct tp_list paths;    /* the counter paths of the command line, in order, unique */
};

/*
 * Parse argv[1..argc) (argv[0] is the command name) as typeperf does: options start with '-' and
 * are matched case-insensitively; anything else is a counter path. -q and -qx take an optional
 * OBJECT (the next argument when it is not an option and has no '\' but a leading one). Fills *a
 * (free a->paths with tp_list_free). Returns 0, or -1 with a one-line reason in err.
 */
int tp_parse_args(int argc, char **argv, struct tp_args *a, char *err, size_t errlen);

/*
 * typeperf's settings file (-config FILE), in the format of the argument parser that logman,
 * relog and typeperf share:
 *   - a line starting with ';' or '#' is a comment; trailing blanks are dropped; blank lines skip;
 *   - "[key]", "[key] value" or "key=value" names an option without its dash (si, sc, f, o, cf,
 *     s, y, q, qx, and c for the counter paths), case-insensitive;
 *   - any other line is one more value of the last key named, so "[c]" lists counters one a line.
 * Unlike typeperf, which skips what it does not know, an unknown key, a value it cannot take, a
 * value before any key or a key without its value is an error naming the line.
 */
struct tp_config_entry {
    char *key;   /* lower case, one of the keys above */
    char *value; /* NULL for a key without a value (y, q, qx) */
    int line;    /* 1-based */
};

struct tp_config {
    struct tp_config_entry *v;
    size_t n, cap;
};

/* Parse a settings file's text into *cfg (free with tp_config_free). 0, or -1 with *line and a
 * reason in err ("unknown key 'x'"), or -ENOMEM. */
int tp_config_parse(const char *text, size_t len, struct tp_config *cfg, int *line, char *err,
                    size_t errlen);
void tp_config_free(struct tp_config *cfg); /* the struct is reusable */

/*
 * Apply a parsed settings file to the command line's *a, as typeperf does: an option the command
 * line gave wins over the file's; the file's counter paths (c) and counter files (cf) are added
 * after the command line's. a keeps pointers into cfg, which must outlive it. 0, or -1 with *line
 * and a reason in err.
 */
int tp_config_apply(const struct tp_config *cfg, struct tp_args *a, int *line, char *err,
                    size_t errlen);

/* Read a whole text file (at most 16 MiB) into *buf (NUL-terminated; free it). 0 or -errno. */
int tp_read_text_file(const char *path, char **buf, size_t *len);

/* typeperf's -si forms: "[[hh:]mm:]ss" (whole numbers), > 0 and at most a day. 0 or -1. */
int tp_parse_interval(const char *s, int *out_ms);

/*
 * The counter paths of a -cf file's text: one a line (LF or CRLF), surrounding blanks and an
 * enclosing pair of double quotes removed; blank lines and lines starting with '#' skipped. Added
 * to *l without duplicates. Returns the number of lines read as paths, or -ENOMEM.
 */
int tp_parse_counter_text(const char *text, size_t len, struct tp_list *l);

/* Read the file and tp_parse_counter_text it. Returns as that, or -errno from opening/reading. */
int tp_read_counter_file(const char *path, struct tp_list *l);

/*
 * The path -q (with_instances 0) or -qx (1) prints for a counter: "\Object\Counter" for a
 * single-instance object (instance NULL), "\Object(*)\Counter" for -q of a multi-instance one,
 * "\Object(Instance)\Counter" for -qx. Returns like snprintf.
 */
int tp_query_path(char *buf, size_t cap, const char *object, const char *instance,
                  const char *counter, int with_instances);

/* Does OBJECT (as given to -q; a leading '\' is ignored) name this object? Case-insensitive; NULL
 * names every object. */
int tp_object_matches(const char *want, const char *object);

/*
 * A path's "\\HOST" prefix, as typeperf takes "\\HOST\Memory\Dirty Bytes": the host in
 * *host (not terminated, *hostlen bytes; 0 when the path has none) and the rest of the path
 * (starting at its '\') returned. A path of "\\HOST" alone returns "" (no counter).
 */
const char *tp_split_host(const char *path, const char **host, size_t *hostlen);

/*
 * Is `name` (len bytes) the daemon's host `daemon_host`, under one of its own names? Equal
 * ignoring case, or either one the other's first label ("db1" for "db1.example.org"), or
 * "localhost", "127.0.0.1", "::1" or "." (typeperf's own machine).
 */
int tp_is_local_host(const char *name, size_t len, const char *daemon_host);

/*
 * The value typeperf shows for a rate over a window of raw ticks, as PDH computes it from two raw
 * samples SI apart: the summed deltas over the summed elapsed time. Tick i (time ts[i], its rate
 * v[i] over the time since the tick before; the first one's since `since_ms`) contributes
 * v[i] * elapsed to the sum; ticks without a value (NaN) are left out of both sums. NaN when no
 * tick has a value.
 */
double tp_window_rate(const int64_t *ts, const double *v, size_t n, int64_t since_ms);

/* typeperf's console header: "(PDH-CSV 4.0)" then "\\HOST\path" for each column, CRLF. */
void tp_format_header(struct sbuf *b, int tsv, const char *host, char *const *paths, size_t n);

/* One console row: the time (local) and the values with six decimals (" " for NaN), CRLF. */
void tp_format_row(struct sbuf *b, int tsv, int64_t t_ms, const double *vals, size_t n);

/* typeperf's last line, after the rows or the -q list, on the console (CRLF, like the rows). */
#define TP_COMPLETED "\r\nThe command completed successfully.\r\n"

#endif
