/*
 * cmd_export.c - `perflog export PATTERN...`: a PDH-CSV 4.0 (or TSV) counter log (design section
 * 6), streamed to stdout or a file as it is read, so memory does not grow with the time range.
 *
 * With the daemon: GET /api/v1/export, the body passed through as it arrives. With --db PATH: the
 * database file is read directly (read-only, no daemon needed, e.g. a copy from another machine)
 * through the same export stream the server uses (web/export.c), so both give the same bytes.
 */
#include "cli.h"
#include "cli_os.h"
#include "csv_zone.h"
#include "export.h"
#include "pattern.h"
#include "reader.h"
#include "series.h"
#include "timeparse.h"
#include "tz.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MEDIAN_TICKS  64 /* ticks looked at for the sampling interval of a database */
#define COPY_BUF_SIZE 65536

static const char help[] =
    "usage: perflog export PATTERN... [--from T] [--to T] [--format csv|tsv] [--tz ZONE]\n"
    "                      [-t N] [-o FILE] [--db PATH] [--run ID]\n"
    "\n"
    "Write stored values as a PDH-CSV 4.0 counter log, as perfmon, logman and relog write it:\n"
    "one column per matching counter (\\\\HOST\\Object(Instance)\\Counter), one row per sample,\n"
    "every cell quoted, CRLF line ends, \" \" for a missing value. PATTERN as for perflog\n"
    "counters, e.g. '\\Memory\\*' or '\\PhysicalDisk(*)\\Disk Bytes/sec' (quote it for the "
    "shell).\n"
    "\n"
    "  --from T           start: a local time ('2026-12-01 19:55', 19:50, today, 'yesterday\n"
    "                     19:00'), RFC 3339 with a zone, Unix seconds, now, -10m, now-1h\n"
    "                     (default -1h)\n"
    "  --to T             end, the same forms (default now)\n"
    "  --format csv|tsv   commas (default) or tabs\n"
    "  --tz ZONE          the zone of the timestamps and the header: local (the client's, TZ;\n"
    "                     default, also through the daemon), utc, +HH:MM/-HH:MM, or a zone of\n"
    "                     the tz database (Europe/Paris); the local forms of --from/--to are read\n"
    "                     in that zone too\n"
    "  -t N               keep every Nth sample, like relog -t N\n"
    "  -o FILE            write FILE (complete or not at all) instead of standard output\n"
    "  --db PATH          read the database file PATH directly, without a daemon\n"
    "  --run ID           the samples of one run and its settle tail (perflog runs lists\n"
    "                     them); without a PATTERN every counter; not with --from/--to\n";

struct export_args {
    const char *from, *to, *format, *tz, *out, *db, *run, *every;
    char **pats;
    int npat;
    unsigned char ok[EXPORT_MAX_PATTERNS]; /* the patterns that match a counter */
    int unmatched;                         /* how many do not */
    struct export_opts opts;               /* format, tz and every, checked */
};

static int parse_opts(int argc, char **argv, struct export_args *a)
{
    static const struct option opts[] = {
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 'T'},
        {"run", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'F'},
        {"tz", required_argument, NULL, 'z'},
        {"db", required_argument, NULL, 'd'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "ht:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            a->from = optarg;
            break;
        case 'T':
            a->to = optarg;
            break;
        case 'r':
            a->run = optarg;
            break;
        case 'F':
            a->format = optarg;
            break;
        case 'z':
            a->tz = optarg;
            break;
        case 'd':
            a->db = optarg;
            break;
        case 'o':
            a->out = optarg;
            break;
        case 't':
            a->every = optarg;
            break;
        default:
            cli_print_help(c != 'h', help);
            return c == 'h' ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        }
    }
    a->pats = argv + optind;
    a->npat = argc - optind;
    return -1;
}

/* --run ID: a run id, 1 or more; 0 when not a valid id. */
static long long run_id(const char *s)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    return *s && !*end && !errno && v >= 1 ? v : 0;
}

static int check_args(struct export_args *a)
{
    static const char *const names[3] = {"--format", "--tz", "-t"};
    char why[160];

    if (a->run && !run_id(a->run)) {
        fprintf(stderr, "perflog export: --run: expected a run id (1 or more), got '%s'\n", a->run);
        return CLI_EXIT_USAGE;
    }
    if (a->run && (a->from || a->to)) {
        fprintf(stderr, "perflog export: --run covers the run and its settle tail; it takes no "
                        "--from or --to\n");
        return CLI_EXIT_USAGE;
    }
    if (export_parse_opts(a->format, a->tz, a->every, names, &a->opts, why, sizeof(why)) < 0) {
        fprintf(stderr, "perflog export: %s\n", why);
        return CLI_EXIT_USAGE;
    }
    /* times are read in the zone of the log's timestamps: the client's, UTC, or the one named */
    if (!a->run &&
        cli_time_range_in("export", a->from ? a->from : "-1h", a->to ? a->to : "now", a->opts.utc,
                          a->opts.zone, &a->opts.from_ms, &a->opts.to_ms) != 0)
        return CLI_EXIT_USAGE;
    if (a->npat == 0 && !a->run) {
        fprintf(stderr, "perflog export: give at least one counter pattern, e.g. '\\Memory\\*' "
                        "(perflog counters lists them)\n");
        return CLI_EXIT_USAGE;
    }
    if (a->npat > EXPORT_MAX_PATTERNS) {
        fprintf(stderr, "perflog export: at most %d patterns\n", EXPORT_MAX_PATTERNS);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/*
 * Where the export goes: stdout, or FILE.tmp renamed to FILE once complete. A FILE that exists and
 * is not a regular file (/dev/null, a FIFO, a terminal) is written in place: renaming a temporary
 * file over it would replace the device node itself, which as root destroys /dev/null.
 */
struct sink {
    FILE *f;
    const char *path; /* NULL: stdout */
    char *tmp;        /* NULL when path is written in place */
    int failed;
};

static int sink_open(struct sink *s, const char *path)
{
    struct stat st;
    size_t n;

    s->path = path;
    if (!path) {
        s->f = stdout;
        return 0;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        s->f = fopen(path, "wb");
        if (!s->f) {
            fprintf(stderr, "perflog export: cannot write %s: %s\n", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    n = strlen(path) + 5;
    s->tmp = malloc(n);
    if (!s->tmp) {
        fprintf(stderr, "perflog: out of memory\n");
        return -1;
    }
    snprintf(s->tmp, n, "%s.tmp", path);
    s->f = fopen(s->tmp, "wb");
    if (!s->f) {
        fprintf(stderr, "perflog export: cannot write %s: %s\n", s->tmp, strerror(errno));
        free(s->tmp);
        s->tmp = NULL;
        return -1;
    }
    return 0;
}

static int sink_write(void *arg, const char *data, size_t len)
{
    struct sink *s = arg;

    if (fwrite(data, 1, len, s->f) == len)
        return 0;
    fprintf(stderr, "perflog export: cannot write %s: %s\n",
            s->path ? (s->tmp ? s->tmp : s->path) : "the output", strerror(errno));
    s->failed = 1;
    return -1;
}

/* Finish the output: ok selects rename (or flush) versus removing the partial file. */
static int sink_close(struct sink *s, int ok)
{
    int ret = ok && !s->failed ? 0 : -1;

    if (!s->path) {
        if (fflush(stdout) != 0 && ret == 0) {
            fprintf(stderr, "perflog export: cannot write the output: %s\n", strerror(errno));
            ret = -1;
        }
        return ret;
    }
    if (fclose(s->f) != 0 && ret == 0) {
        fprintf(stderr, "perflog export: cannot write %s: %s\n", s->tmp ? s->tmp : s->path,
                strerror(errno));
        ret = -1;
    }
    if (!s->tmp)
        return ret;
    if (ret == 0 && rename(s->tmp, s->path) != 0) {
        fprintf(stderr, "perflog export: cannot rename %s to %s: %s\n", s->tmp, s->path,
                strerror(errno));
        ret = -1;
    }
    if (ret != 0)
        unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
    return ret;
}

/* "/api/v1/export?counter=..&from=..&tz=TZ": NULL when out of memory. */
static char *build_target(const struct export_args *a, const char *tz)
{
    char path[64];
    char *t;
    int r;

    if (a->run)
        snprintf(path, sizeof(path), "/api/v1/runs/%lld/export", run_id(a->run));
    else
        snprintf(path, sizeof(path), "/api/v1/export");
    t = strdup(path);
    r = t ? 0 : -1;

    for (int i = 0; i < a->npat && r == 0; i++)
        if (!a->unmatched || a->ok[i])
            r = cli_query_add(&t, "counter", a->pats[i]);
    if (r == 0 && !a->run)
        r = cli_query_time(&t, "from", a->from ? a->from : "-1h", a->opts.from_ms);
    if (r == 0 && !a->run)
        r = cli_query_time(&t, "to", a->to ? a->to : "now", a->opts.to_ms);
    if (r == 0 && a->format)
        r = cli_query_add(&t, "format", a->format);
    if (r == 0)
        r = cli_query_add(&t, "tz", tz);
    if (r == 0 && a->every)
        r = cli_query_add(&t, "every", a->every);
    if (r < 0) {
        free(t);
        return NULL;
    }
    return t;
}

/*
 * Local time through the daemon, in the client's zone: the daemon is asked for UTC (tz=utc) and
 * each row's time and the header's zone cell are written again here with the same csv.c calls
 * `export --db` makes, so both give the same bytes whatever zone the daemon runs in.
 */
struct rezone {
    struct sink *sink;
    struct sbuf in, out, header; /* the partial line; a line rewritten; the header held back */
    enum csv_format format;
    int64_t from_ms; /* the header's zone instant when there are no rows */
    int held;        /* the header is in `header`, waiting for the first row's time */
};

/* A row's first cell, "MM/DD/YYYY HH:MM:SS.mmm" in UTC, as ms; -1 when it is not one. */
static int64_t utc_cell_ms(const char *cell, size_t len)
{
    char iso[32];
    int64_t ms;

    if (len != 25 || cell[0] != '"' || cell[24] != '"')
        return -1;
    snprintf(iso, sizeof(iso), "%.4s-%.2s-%.2sT%.12sZ", cell + 7, cell + 1, cell + 4, cell + 12);
    return tp_parse_time(iso, strlen(iso), 0, &ms) == 0 ? ms : -1;
}

/* The held header with the zone cell for t_ms, then clear it. */
static int rezone_header(struct rezone *z, int64_t t_ms)
{
    const char *h = z->header.s, *end = h ? memchr(h + 1, '"', z->header.len - 1) : NULL;
    struct csv_zone zone;
    int rc;

    z->held = 0;
    if (!end)
        return sink_write(z->sink, h ? h : "", z->header.len);
    end++;
    z->out.len = 0;
    csv_zone_at(0, t_ms, &zone);
    csv_first_cell(&z->out, z->format, &zone);
    sbuf_append(&z->out, end, z->header.len - (size_t)(end - h));
    rc = sbuf_ok(&z->out) ? sink_write(z->sink, z->out.s, z->out.len) : -1;
    z->header.len = 0;
    return rc;
}

static int rezone_line(struct rezone *z, const char *line, size_t len)
{
    const char *sep = memchr(line + 1, '"', len > 1 ? len - 1 : 0);
    int64_t t = sep ? utc_cell_ms(line, (size_t)(sep + 1 - line)) : -1;

    if (t < 0) /* not a row (the header, or something unexpected): as it came */
        return z->held ? (sbuf_append(&z->header, line, len), 0) : sink_write(z->sink, line, len);
    if (z->held && rezone_header(z, t) < 0)
        return -1;
    z->out.len = 0;
    csv_time_cell(&z->out, t, 0);
    sbuf_append(&z->out, sep + 1, len - (size_t)(sep + 1 - line));
    return sbuf_ok(&z->out) ? sink_write(z->sink, z->out.s, z->out.len) : -1;
}

static int rezone_write(void *arg, const char *data, size_t len)
{
    struct rezone *z = arg;
    size_t start = 0;

    sbuf_append(&z->in, data, len);
    if (!sbuf_ok(&z->in))
        return -1;
    for (size_t i = 0; i < z->in.len; i++) {
        if (z->in.s[i] != '\n')
            continue;
        if (rezone_line(z, z->in.s + start, i + 1 - start) < 0)
            return -1;
        start = i + 1;
    }
    memmove(z->in.s, z->in.s + start, z->in.len - start);
    z->in.len -= start;
    return 0;
}

/* The end: a header still held (no rows) gets the zone at `from`, a last partial line as is. */
static int rezone_finish(struct rezone *z)
{
    int rc = 0;

    if (z->held)
        rc = rezone_header(z, z->from_ms);
    if (rc == 0 && z->in.len)
        rc = sink_write(z->sink, z->in.s, z->in.len);
    sbuf_free(&z->in);
    sbuf_free(&z->out);
    sbuf_free(&z->header);
    return rc;
}

/*
 * The tz= for the daemon when the user asked for the client's local zone: the zone's tz database
 * name when the client has one and the daemon can read names (its health says tz_database), so
 * the daemon writes the times; else NULL, and the client rewrites UTC rows (rezone_write).
 */
static const char *local_zone_name(const struct cli *c, char *buf, size_t cap)
{
    struct http_response r = {0};
    struct csv_local lz;
    json_t *root;
    int ok;

    if (csv_local_zone(time(NULL), &lz) < 0 || !lz.name_is_iana || !tz_valid_name(lz.name))
        return NULL;
    if (cli_get_quiet(c, "/api/v1/health", &r) != 0)
        return NULL;
    root = json_loadb(r.body, r.body_len, 0, NULL);
    ok = json_is_true(json_object_get(root, "tz_database"));
    json_decref(root);
    httpc_response_free(&r);
    if (!ok)
        return NULL;
    snprintf(buf, cap, "%s", lz.name);
    return buf;
}

static int export_http(const struct cli *c, struct export_args *a)
{
    struct sink s = {0};
    char *target, zone_name[sizeof(((struct csv_local *)0)->name)];
    const char *tz = a->opts.utc ? "utc" : a->opts.zone ? a->tz : NULL;
    int ret;

    /* the patterns that match are exported; nothing at all when none does */
    if (a->npat > 0) {
        a->unmatched = cli_unmatched(c, "export", a->pats, a->npat, a->ok);
        if (a->unmatched < 0 || a->unmatched == a->npat)
            return CLI_EXIT_FAIL;
    }
    if (!tz && (tz = local_zone_name(c, zone_name, sizeof(zone_name))) == NULL)
        tz = "utc"; /* and rezone_write writes local times */
    target = build_target(a, tz);
    if (!target) {
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    if (sink_open(&s, a->out) < 0) {
        free(target);
        return CLI_EXIT_FAIL;
    }
    if (a->opts.utc || a->opts.zone || strcmp(tz, "utc")) {
        ret = cli_get_stream(c, target, sink_write, &s);
    } else {
        struct rezone z = {.sink = &s, .format = a->opts.format, .held = 1};

        z.from_ms = a->run ? cli_now_ms() : a->opts.from_ms;
        ret = cli_get_stream(c, target, rezone_write, &z);
        if (rezone_finish(&z) < 0 && ret == 0)
            ret = CLI_EXIT_FAIL;
    }
    free(target);
    if (sink_close(&s, ret == 0) < 0)
        ret = CLI_EXIT_FAIL;
    return ret == 0 && a->unmatched ? CLI_EXIT_FAIL : ret;
}

/* --- --db: the database file read directly --- */

struct intervals {
    int64_t v[MEDIAN_TICKS];
    size_t n;
};

static int interval_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    struct intervals *iv = arg;

    (void)tick;
    (void)t_ms;
    if (interval_ms > 0)
        iv->v[iv->n++] = interval_ms;
    return iv->n == MEDIAN_TICKS; /* stop once there are enough */
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* The sampling interval of the log: the median interval of its first ticks, else 1000 ms. */
static int64_t db_interval(struct reader *rd)
{
    struct intervals iv = {.n = 0};

    if (reader_ticks(rd, 0, INT64_MAX, interval_cb, &iv) < 0 || iv.n == 0)
        return 1000;
    qsort(iv.v, iv.n, sizeof(iv.v[0]), cmp_i64);
    return iv.v[iv.n / 2];
}

/* The patterns of the command line into pats (with --run: every counter when none is given; the
 * times are in a->opts, or the run's, set later); CLI_EXIT_USAGE or -1 to go on. */
static int db_args(const struct export_args *a, struct pattern *pats, size_t *npat)
{
    static const char *const all[] = {"\\*(*)\\*", "\\*\\*"};

    *npat = (size_t)a->npat;
    if (a->run && a->npat == 0) {
        for (size_t i = 0; i < 2; i++)
            pattern_parse(all[i], strlen(all[i]), &pats[i], NULL);
        *npat = 2;
    }
    for (int i = 0; i < a->npat; i++) {
        const char *why = NULL;
        if (pattern_parse(a->pats[i], strlen(a->pats[i]), &pats[i], &why) < 0) {
            fprintf(stderr,
                    "perflog export: bad counter path '%s': %s (expected "
                    "\\Object(Instance)\\Counter, '*' as a wildcard)\n",
                    a->pats[i], why ? why : "invalid");
            return CLI_EXIT_USAGE;
        }
    }
    return -1;
}

/* Copy the export stream to the sink; 0 or -1 (reported). */
static int pump(struct export_stream *x, struct sink *s)
{
    char *buf = malloc(COPY_BUF_SIZE);
    ssize_t n;

    if (!buf) {
        fprintf(stderr, "perflog: out of memory\n");
        return -1;
    }
    while ((n = export_read(x, buf, COPY_BUF_SIZE)) > 0)
        if (sink_write(s, buf, (size_t)n) < 0)
            break;
    free(buf);
    if (n < 0)
        fprintf(stderr, "perflog export: %s\n",
                n == -ENOMEM       ? "out of memory"
                : *export_error(x) ? export_error(x)
                                   : "the database cannot be read");
    return n == 0 ? 0 : -1;
}

/* How many of the command line's patterns match no column of the log, each named; -1 on an error
 * (reported). */
static int db_unmatched(struct reader *rd, const struct export_args *a, const struct pattern *pats,
                        int64_t run_pid, const struct export_opts *o)
{
    int unmatched = 0;

    for (int i = 0; i < a->npat; i++) {
        struct series_set one = {0};
        int rc = export_columns(rd, NULL, &pats[i], 1, run_pid, o, &one);

        if (rc < 0 && rc != -E2BIG) {
            fprintf(stderr, "perflog export: %s\n",
                    rc == -ENOMEM ? "out of memory" : reader_errmsg(rd));
            return -1;
        }
        if (rc == 0 && one.n == 0) {
            fprintf(stderr,
                    "perflog export: no counter in %s matches '%s' (perflog counters "
                    "lists them)\n",
                    a->db, a->pats[i]);
            unmatched++;
        }
        series_set_free(&one);
    }
    return unmatched;
}

static int export_db(const struct export_args *a)
{
    struct pattern pats[EXPORT_MAX_PATTERNS];
    struct export_opts o = a->opts;
    struct series_set set = {0};
    struct export_stream *x = NULL;
    struct reader *rd = NULL;
    struct sink s = {0};
    char err[512], host[256];
    size_t npat = 0;
    int64_t pid = -1;
    int rc = db_args(a, pats, &npat), ret = CLI_EXIT_FAIL, unmatched;

    if (rc >= 0)
        return rc;
    if (reader_open(a->db, &rd, err, sizeof(err)) < 0) {
        char why[4400];

        /* SQLite says only "unable to open database file": say which of the usual causes it is */
        if (cli_db_reason(a->db, why, sizeof(why)))
            fprintf(stderr, "perflog export: cannot open the database %s: %s\n", a->db, why);
        else
            fprintf(stderr, "perflog export: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    if (reader_host(rd, host, sizeof(host)) == -EIO) {
        fprintf(stderr, "perflog export: %s: %s\n", a->db, reader_errmsg(rd));
        goto out;
    }
    o.host = host;
    o.interval_ms = db_interval(rd);
    if (a->run) {
        struct reader_run run = {.pid = -1};

        rc = reader_run_window(rd, run_id(a->run), &run);
        if (rc < 0) {
            fprintf(stderr, "perflog export: %s: %s\n", a->db,
                    rc == -ENOENT ? "no such run" : reader_errmsg(rd));
            goto out;
        }
        export_run_window(&run, cli_now_ms(), &o.from_ms, &o.to_ms);
        pid = run.pid;
    }
    rc = export_columns(rd, NULL, pats, npat, a->run ? (pid > 0 ? pid : -1) : 0, &o, &set);
    if (rc == -E2BIG)
        fprintf(stderr, "perflog export: the patterns match more than %d counters; narrow them\n",
                EXPORT_MAX_SERIES);
    else if (rc < 0)
        fprintf(stderr, "perflog export: %s\n",
                rc == -ENOMEM ? "out of memory" : reader_errmsg(rd));
    if (rc < 0)
        goto out;
    /* the patterns that match are exported; nothing at all when none does */
    unmatched = db_unmatched(rd, a, pats, a->run ? (pid > 0 ? pid : -1) : 0, &o);
    if (unmatched < 0 || (a->npat > 0 && unmatched == a->npat))
        goto out;
    if (set.n == 0)
        fprintf(stderr,
                "perflog export: no counter in %s matches (the log has only the time "
                "column)\n",
                a->db);
    if (export_open(rd, NULL, set.s, set.n, &o, &x) < 0) {
        fprintf(stderr, "perflog: out of memory\n");
        goto out;
    }
    if (sink_open(&s, a->out) < 0)
        goto out;
    rc = pump(x, &s);
    ret = sink_close(&s, rc == 0) == 0 && unmatched == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
out:
    export_close(x);
    series_set_free(&set);
    reader_close(rd);
    return ret;
}

int cmd_export(const struct cli *c, int argc, char **argv)
{
    struct export_args a = {.opts.every = 1};
    int ret = parse_opts(argc, argv, &a);

    if (ret < 0)
        ret = check_args(&a);
    if (ret < 0)
        ret = a.db ? export_db(&a) : export_http(c, &a);
    export_opts_clear(&a.opts);
    return ret;
}
