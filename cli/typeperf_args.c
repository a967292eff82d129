/*
 * typeperf_args.c - the pure parts of `perflog typeperf`; see typeperf.h.
 */
#include "csv.h"
#include "printf_attr.h"
#include "sbuf.h"
#include "typeperf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_INTERVAL_S 86400
#define CF_MAX_BYTES   (16 << 20)

static void set_err(char *err, size_t errlen, const char *fmt, ...) PERFLOG_PRINTF(3, 4);

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int tp_list_add(struct tp_list *l, const char *s, size_t len)
{
    char *copy;

    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->v[i]) == len && memcmp(l->v[i], s, len) == 0)
            return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    copy = malloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->v[l->n++] = copy;
    return 1;
}

void tp_list_free(struct tp_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* A whole number of 1..max digits' worth, at most `max`; -1 when not. */
static long whole(const char *s, size_t len, long max)
{
    long v = 0;

    if (len == 0 || len > 9)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= max ? v : -1;
}

int tp_parse_interval(const char *s, int *out_ms)
{
    long part[3] = {0, 0, 0}, total;
    size_t nparts = 0;
    const char *p = s;

    for (;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        long v = whole(p, len, MAX_INTERVAL_S);

        if (v < 0 || nparts == 3)
            return -1;
        part[nparts++] = v;
        if (!colon)
            break;
        p = colon + 1;
    }
    /* the last part is seconds, then minutes, then hours */
    total = nparts == 1   ? part[0]
            : nparts == 2 ? part[0] * 60 + part[1]
                          : part[0] * 3600 + part[1] * 60 + part[2];
    if (nparts > 1 && part[nparts - 1] > 59)
        return -1;
    if (nparts == 3 && part[1] > 59)
        return -1;
    if (total < 1 || total > MAX_INTERVAL_S)
        return -1;
    *out_ms = (int)(total * 1000);
    return 0;
}

/* The options with a value of their own; bit i of tp_args.given is opt_names[i]. */
static const char *const opt_names[] = {"si", "sc", "f", "o", "cf", "q", "qx", "s", "y", "config"};

static unsigned opt_bit(const char *name)
{
    for (size_t i = 0; i < sizeof(opt_names) / sizeof(opt_names[0]); i++)
        if (!strcasecmp(name, opt_names[i]))
            return 1u << i;
    return 0;
}

/* The value of an option that needs one; NULL (with err set) when it is missing. */
static const char *need_value(int argc, char **argv, int *i, const char *opt, char *err,
                              size_t errlen)
{
    if (*i + 1 >= argc) {
        set_err(err, errlen, "option %s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

/* An OBJECT after -q: "Memory" or "\\Memory", not an option nor a counter path. */
static int is_object_name(const char *s)
{
    return *s && *s != '-' && !strchr(s + (*s == '\\'), '\\');
}

static int parse_option(int argc, char **argv, int *i, struct tp_args *a, char *err, size_t errlen)
{
    const char *opt = argv[*i], *name = opt[1] == '-' ? opt + 2 : opt + 1, *v;

    a->given |= opt_bit(name);
    if (!strcasecmp(name, "si")) {
        if (!(v = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        if (tp_parse_interval(v, &a->si_ms) == 0)
            return 0;
        set_err(err, errlen, "%s: expected [[hh:]mm:]ss, 1 s to 24 h, got '%s'", opt, v);
        return -1;
    }
    if (!strcasecmp(name, "sc")) {
        if (!(v = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        a->sc = whole(v, strlen(v), 1000000000L);
        if (a->sc >= 1)
            return 0;
        set_err(err, errlen, "%s: expected a sample count of at least 1, got '%s'", opt, v);
        return -1;
    }
    if (!strcasecmp(name, "f")) {
        if (!(v = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        if (!strcasecmp(v, "csv") || !strcasecmp(v, "tsv")) {
            a->tsv = !strcasecmp(v, "tsv");
            return 0;
        }
        set_err(err, errlen, "%s: expected CSV or TSV, got '%s' (BIN and SQL are not supported)",
                opt, v);
        return -1;
    }
    if (!strcasecmp(name, "o")) {
        if (!(a->out = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        return 0;
    }
    if (!strcasecmp(name, "cf")) {
        if (!(v = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        if (a->ncf == sizeof(a->cf) / sizeof(a->cf[0])) {
            set_err(err, errlen, "%s: at most %zu counter files", opt,
                    sizeof(a->cf) / sizeof(a->cf[0]));
            return -1;
        }
        a->cf[a->ncf++] = v;
        return 0;
    }
    if (!strcasecmp(name, "q") || !strcasecmp(name, "qx")) {
        a->query = !strcasecmp(name, "qx") ? TP_QUERY_INSTANCES : TP_QUERY_PATHS;
        if (*i + 1 < argc && is_object_name(argv[*i + 1]))
            a->query_object = argv[++*i];
        return 0;
    }
    if (!strcasecmp(name, "s")) {
        if (!(a->server_host = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        if (a->server_host[0] == '\\' && a->server_host[1] == '\\')
            a->server_host += 2; /* typeperf takes "-s \\\\HOST" too */
        return 0;
    }
    if (!strcasecmp(name, "y")) {
        a->yes = 1;
        return 0;
    }
    if (!strcasecmp(name, "config")) {
        if (!(a->config = need_value(argc, argv, i, opt, err, errlen)))
            return -1;
        return 0;
    }
    if (!strcmp(name, "?") || !strcasecmp(name, "h") || !strcasecmp(name, "help")) {
        a->help = 1;
        return 0;
    }
    set_err(err, errlen, "unknown option '%s'", opt);
    return -1;
}

int tp_parse_args(int argc, char **argv, struct tp_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    a->si_ms = 1000;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];

        if (s[0] == '-' && s[1]) {
            if (parse_option(argc, argv, &i, a, err, errlen) < 0)
                return -1;
        } else if (!*s) {
            set_err(err, errlen, "an empty counter path");
            return -1;
        } else if (tp_list_add(&a->paths, s, strlen(s)) < 0) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

int tp_parse_counter_text(const char *text, size_t len, struct tp_list *l)
{
    size_t pos = 0;
    int count = 0;

    /* a UTF-8 byte order mark, as Windows editors write one */
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        pos = 3;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, b = pos, e = end;

        pos = end + 1;
        while (b < e && is_blank(text[b]))
            b++;
        while (e > b && is_blank(text[e - 1]))
            e--;
        if (e - b >= 2 && text[b] == '"' && text[e - 1] == '"') {
            b++;
            e--;
        }
        if (b == e || text[b] == '#')
            continue;
        if (tp_list_add(l, text + b, e - b) < 0)
            return -ENOMEM;
        count++;
    }
    return count;
}

int tp_read_text_file(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    size_t n;
    int rc;

    if (!f)
        return -errno;
    b = malloc(CF_MAX_BYTES + 1);
    if (!b) {
        fclose(f);
        return -ENOMEM;
    }
    n = fread(b, 1, CF_MAX_BYTES, f);
    rc = ferror(f) ? -EIO : !feof(f) ? -EFBIG : 0;
    fclose(f);
    if (rc < 0) {
        free(b);
        return rc;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

int tp_read_counter_file(const char *path, struct tp_list *l)
{
    char *buf = NULL;
    size_t n = 0;
    int rc = tp_read_text_file(path, &buf, &n);

    if (rc == 0) {
        rc = tp_parse_counter_text(buf, n, l);
        free(buf);
    }
    return rc;
}

/* How many values a settings file's key takes. */
enum key_values { KEY_NONE, KEY_OPTIONAL, KEY_ONE, KEY_MANY };

static const struct cfg_key {
    const char *name;
    enum key_values values;
} cfg_keys[] = {
    {"c", KEY_MANY}, {"cf", KEY_MANY}, {"si", KEY_ONE}, {"sc", KEY_ONE},     {"f", KEY_ONE},
    {"o", KEY_ONE},  {"s", KEY_ONE},   {"y", KEY_NONE}, {"q", KEY_OPTIONAL}, {"qx", KEY_OPTIONAL},
};
#define NKEYS    (sizeof(cfg_keys) / sizeof(cfg_keys[0]))
#define KEY_LIST "c, cf, f, o, q, qx, s, sc, si, y"

/* The state of tp_config_parse between lines. */
struct cfg_parse {
    struct tp_config *cfg;
    const struct cfg_key *cur; /* the last key named, NULL before the first */
    int cur_line;
    size_t cur_values;
    int first_line[NKEYS]; /* where each single key was named, 0: not yet */
    int *line;
    char *err;
    size_t errlen;
};

/* A copy of s[0..len) (strndup is not in the Windows C library). */
static char *dup_n(const char *s, size_t len)
{
    char *d = malloc(len + 1);

    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static int cfg_push(struct tp_config *cfg, const char *key, const char *value, size_t vlen,
                    int line)
{
    struct tp_config_entry *e;

    if (cfg->n == cfg->cap) {
        size_t cap = cfg->cap ? cfg->cap * 2 : 8;
        struct tp_config_entry *v = realloc(cfg->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        cfg->v = v;
        cfg->cap = cap;
    }
    e = &cfg->v[cfg->n];
    e->key = dup_n(key, strlen(key));
    e->value = value ? dup_n(value, vlen) : NULL;
    e->line = line;
    if (!e->key || (value && !e->value)) {
        free(e->key);
        free(e->value);
        return -ENOMEM;
    }
    cfg->n++;
    return 0;
}

/* Strip blanks around text[*b..*e), then one enclosing pair of double quotes. */
static void trim(const char *text, size_t *b, size_t *e, int quotes)
{
    while (*b < *e && is_blank(text[*b]))
        (*b)++;
    while (*e > *b && is_blank(text[*e - 1]))
        (*e)--;
    if (quotes && *e - *b >= 2 && text[*b] == '"' && text[*e - 1] == '"') {
        (*b)++;
        (*e)--;
    }
}

static int cfg_fail(struct cfg_parse *p, int line, const char *fmt, ...) PERFLOG_PRINTF(3, 4);

static int cfg_fail(struct cfg_parse *p, int line, const char *fmt, ...)
{
    va_list ap;

    *p->line = line;
    if (p->err && p->errlen) {
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* One more value for the current key. */
static int cfg_value(struct cfg_parse *p, const char *v, size_t len, int line)
{
    const struct cfg_key *k = p->cur;

    if (!k)
        return cfg_fail(p, line, "a value before any key ('[c]' starts the list of counters)");
    if (k->values == KEY_NONE)
        return cfg_fail(p, line, "key '%s' takes no value", k->name);
    if (k->values != KEY_MANY && p->cur_values > 0)
        return cfg_fail(p, line, "key '%s' takes one value (named on line %d)", k->name,
                        p->cur_line);
    p->cur_values++;
    if (k->values == KEY_OPTIONAL) { /* its entry was made by the key's line */
        struct tp_config_entry *e = &p->cfg->v[p->cfg->n - 1];
        e->value = dup_n(v, len);
        return e->value ? 0 : -ENOMEM;
    }
    return cfg_push(p->cfg, k->name, v, len, line);
}

/* The key before the one now named (or the end) got what it needs. */
static int cfg_key_done(struct cfg_parse *p)
{
    if (p->cur && p->cur->values >= KEY_ONE && p->cur_values == 0)
        return cfg_fail(p, p->cur_line, "key '%s' has no value", p->cur->name);
    return 0;
}

/* A "[key] value" or "key=value" line, text[b..e) trimmed. */
static int cfg_key_line(struct cfg_parse *p, const char *text, size_t b, size_t e, int line)
{
    size_t kb = b, ke, vb, ve = e;
    size_t k;

    if (cfg_key_done(p) < 0)
        return -1;
    if (text[b] == '[') {
        const char *close = memchr(text + b, ']', e - b);
        if (!close)
            return cfg_fail(p, line, "'[' without ']'");
        kb = b + 1;
        ke = (size_t)(close - text);
    } else {
        ke = (size_t)((const char *)memchr(text + b, '=', e - b) - text);
    }
    vb = ke + 1;
    trim(text, &kb, &ke, 0);
    trim(text, &vb, &ve, 1);
    for (k = 0; k < NKEYS; k++)
        if (strlen(cfg_keys[k].name) == ke - kb &&
            !strncasecmp(cfg_keys[k].name, text + kb, ke - kb))
            break;
    if (k == NKEYS && ke - kb == 6 && !strncasecmp(text + kb, "config", 6))
        return cfg_fail(p, line, "key 'config': a settings file cannot name another");
    if (k == NKEYS)
        return cfg_fail(p, line, "unknown key '%.*s' (the keys: " KEY_LIST ")", (int)(ke - kb),
                        text + kb);
    if (cfg_keys[k].values != KEY_MANY) {
        if (p->first_line[k])
            return cfg_fail(p, line, "key '%s' given twice (first on line %d)", cfg_keys[k].name,
                            p->first_line[k]);
        p->first_line[k] = line;
    }
    p->cur = &cfg_keys[k];
    p->cur_line = line;
    p->cur_values = 0;
    if (p->cur->values <= KEY_OPTIONAL && cfg_push(p->cfg, p->cur->name, NULL, 0, line) < 0)
        return -ENOMEM;
    return vb < ve ? cfg_value(p, text + vb, ve - vb, line) : 0;
}

int tp_config_parse(const char *text, size_t len, struct tp_config *cfg, int *line, char *err,
                    size_t errlen)
{
    struct cfg_parse p = {.cfg = cfg, .line = line, .err = err, .errlen = errlen};
    size_t pos = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    int lineno = 0, rc = 0;

    *line = 0;
    while (pos < len && rc == 0) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, b = pos, e = end;

        pos = end + 1;
        lineno++;
        trim(text, &b, &e, 0);
        if (b == e || text[b] == ';' || text[b] == '#')
            continue;
        if (memchr(text + b, '\0', e - b))
            rc = cfg_fail(&p, lineno, "a NUL byte: not a text file");
        else if (text[b] == '[' || memchr(text + b, '=', e - b))
            rc = cfg_key_line(&p, text, b, e, lineno);
        else {
            trim(text, &b, &e, 1);
            rc = cfg_value(&p, text + b, e - b, lineno);
        }
    }
    if (rc == 0)
        rc = cfg_key_done(&p);
    if (rc == -ENOMEM)
        set_err(err, errlen, "out of memory");
    return rc;
}

void tp_config_free(struct tp_config *cfg)
{
    for (size_t i = 0; i < cfg->n; i++) {
        free(cfg->v[i].key);
        free(cfg->v[i].value);
    }
    free(cfg->v);
    memset(cfg, 0, sizeof(*cfg));
}

int tp_config_apply(const struct tp_config *cfg, struct tp_args *a, int *line, char *err,
                    size_t errlen)
{
    for (size_t n = 0; n < cfg->n; n++) {
        const struct tp_config_entry *e = &cfg->v[n];
        char opt[8];
        char *argv[2] = {opt, e->value};
        unsigned given = a->given;
        int i = 0;

        *line = e->line;
        if (!strcmp(e->key, "c")) {
            if (tp_list_add(&a->paths, e->value, strlen(e->value)) < 0) {
                set_err(err, errlen, "out of memory");
                return -1;
            }
            continue;
        }
        /* the command line's options win, as in typeperf; counter files add up */
        if (strcmp(e->key, "cf") && (a->given & opt_bit(e->key)))
            continue;
        snprintf(opt, sizeof(opt), "-%s", e->key);
        if (parse_option(e->value ? 2 : 1, argv, &i, a, err, errlen) < 0)
            return -1;
        a->given = given;
    }
    return 0;
}

int tp_query_path(char *buf, size_t cap, const char *object, const char *instance,
                  const char *counter, int with_instances)
{
    if (!instance)
        return snprintf(buf, cap, "\\%s\\%s", object, counter);
    return snprintf(buf, cap, "\\%s(%s)\\%s", object, with_instances ? instance : "*", counter);
}

int tp_object_matches(const char *want, const char *object)
{
    if (!want)
        return 1;
    if (*want == '\\')
        want++;
    return strcasecmp(want, object) == 0;
}

const char *tp_split_host(const char *path, const char **host, size_t *hostlen)
{
    const char *end;

    *host = NULL;
    *hostlen = 0;
    if (path[0] != '\\' || path[1] != '\\')
        return path;
    end = strchr(path + 2, '\\');
    if (!end)
        end = path + strlen(path);
    *host = path + 2;
    *hostlen = (size_t)(end - (path + 2));
    return end;
}

/* Is a[0..alen) the first label of b (b continuing with '.')? */
static int first_label_of(const char *a, size_t alen, const char *b)
{
    return alen > 0 && !strncasecmp(a, b, alen) && b[alen] == '.' && !memchr(a, '.', alen);
}

int tp_is_local_host(const char *name, size_t len, const char *daemon_host)
{
    static const char *const self[] = {"localhost", "127.0.0.1", "::1", "."};
    size_t dlen = daemon_host ? strlen(daemon_host) : 0;
    const char *dot;

    for (size_t i = 0; i < sizeof(self) / sizeof(self[0]); i++)
        if (strlen(self[i]) == len && !strncasecmp(self[i], name, len))
            return 1;
    if (!dlen || !len)
        return 0;
    if (dlen == len && !strncasecmp(name, daemon_host, len))
        return 1;
    if (first_label_of(name, len, daemon_host))
        return 1;
    dot = memchr(name, '.', len);
    return dot && (size_t)(dot - name) == dlen && !strncasecmp(name, daemon_host, dlen) &&
           !strchr(daemon_host, '.');
}

double tp_window_rate(const int64_t *ts, const double *v, size_t n, int64_t since_ms)
{
    double sum = 0, elapsed = 0;
    int64_t prev = since_ms;

    for (size_t i = 0; i < n; i++) {
        int64_t dt = ts[i] - prev;

        prev = ts[i];
        if (isnan(v[i]) || dt <= 0)
            continue;
        sum += v[i] * (double)dt;
        elapsed += (double)dt;
    }
    return elapsed > 0 ? sum / elapsed : NAN;
}

void tp_format_header(struct sbuf *b, int tsv, const char *host, char *const *paths, size_t n)
{
    enum csv_format f = tsv ? CSV_TAB : CSV_COMMA;

    csv_first_cell(b, f, NULL); /* the console's first cell has no zone */
    for (size_t i = 0; i < n; i++)
        csv_path_cell(b, f, host, paths[i]);
    csv_end_line(b);
}

void tp_format_row(struct sbuf *b, int tsv, int64_t t_ms, const double *vals, size_t n)
{
    enum csv_format f = tsv ? CSV_TAB : CSV_COMMA;

    csv_time_cell(b, t_ms, 0);
    for (size_t i = 0; i < n; i++)
        csv_value_cell(b, f, vals[i]);
    csv_end_line(b);
}
