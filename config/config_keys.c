/*
 * config_keys.c - what the configuration may contain: one table of keys (name, type, field,
 * range), one checker per type shared by the file and the command line, and messages that say
 * where a value was written and what was expected instead.
 */
#include "config/config_keys.h"

#include "base/log.h"
#include "config/json_locate.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_DEPTH 3 /* disks.exclude[3] */
#define GOT_MAX        112
#define QUOTE_SHOWN    48 /* bytes of a long string shown in a message before "..." */

enum key_type {
    KEY_PATH,
    KEY_LISTEN,
    KEY_INT,
    KEY_LEVEL,
    KEY_TOKEN,
    KEY_BOOL,
    KEY_GLOBS,
    KEY_PDH_PATHS, /* a list like KEY_GLOBS, of PDH counter paths */
    KEY_OBJECT
};

struct key_def {
    const char *name;
    enum key_type type;
    size_t offset, size;       /* the field in struct cfg */
    size_t count_offset;       /* KEY_GLOBS: the list's count */
    int64_t min, max;          /* KEY_INT */
    const struct key_def *sub; /* KEY_OBJECT: its keys, ended by a NULL name */
};

#define FIELD(f) .offset = offsetof(struct cfg, f), .size = sizeof(((struct cfg *)0)->f)
#define INT_KEY(n, f, lo, hi)                                                                      \
    {                                                                                              \
        .name = n, .type = KEY_INT, FIELD(f), .min = lo, .max = hi                                 \
    }
#define GLOBS_KEY(n, f, cnt)                                                                       \
    {                                                                                              \
        .name = n, .type = KEY_GLOBS, FIELD(f), .count_offset = offsetof(struct cfg, cnt)          \
    }

/* Ranges and meanings: docs/configuration.md. Keep the two, and perflogd.example.json, in step. */
static const struct key_def retention_keys[] = {
    INT_KEY("raw_days", raw_days, 1, 36500),
    INT_KEY("minute_days", minute_days, 1, 36500),
    INT_KEY("hour_days", hour_days, 1, 36500),
    INT_KEY("chunk_after_minutes", chunk_after_minutes, 0, 525600),
    {.name = NULL},
};

static const struct key_def disk_keys[] = {
    GLOBS_KEY("include", disk_include, n_disk_include),
    GLOBS_KEY("exclude", disk_exclude, n_disk_exclude),
    {.name = NULL},
};

static const struct key_def net_keys[] = {
    GLOBS_KEY("include", net_include, n_net_include),
    GLOBS_KEY("exclude", net_exclude, n_net_exclude),
    {.name = NULL},
};

static const struct key_def top_keys[] = {
    {.name = "db", .type = KEY_PATH, FIELD(db)},
    {.name = "listen", .type = KEY_LISTEN, FIELD(listen_addr)},
    INT_KEY("interval_ms", interval_ms, 100, 3600000),
    {.name = "log_level", .type = KEY_LEVEL, FIELD(log_level)},
    {.name = "root", .type = KEY_PATH, FIELD(root)},
    {.name = "disks", .type = KEY_OBJECT, .sub = disk_keys},
    {.name = "interfaces", .type = KEY_OBJECT, .sub = net_keys},
    {.name = "pdh_counters",
     .type = KEY_PDH_PATHS,
     FIELD(pdh_counters),
     .count_offset = offsetof(struct cfg, n_pdh_counters)},
    {.name = "retention", .type = KEY_OBJECT, .sub = retention_keys},
    INT_KEY("commit_interval_ms", commit_interval_ms, 0, 2000),
    INT_KEY("max_held_ticks", max_held_ticks, 10, 1000000),
    INT_KEY("sampler_rt_priority", sampler_rt_priority, 0, 99),
    {.name = "auth_token", .type = KEY_TOKEN, FIELD(auth_token)},
    {.name = "auth_read", .type = KEY_BOOL, FIELD(auth_read)},
    INT_KEY("http_threads", http_threads, 1, 64),
    INT_KEY("max_connections", max_connections, 1, 100000),
    INT_KEY("connection_timeout_s", connection_timeout_s, 1, 3600),
    INT_KEY("header_timeout_s", header_timeout_s, 1, 3600),
    INT_KEY("max_connections_per_ip", max_per_ip, 1, 100000),
    INT_KEY("max_body_bytes", max_body_bytes, 1024, 16777216),
    INT_KEY("max_url_bytes", max_url_bytes, 256, 65536),
    INT_KEY("max_points", max_points, 100, 100000000),
    INT_KEY("max_db_bytes", max_db_bytes, 0, 17592186044416LL),
    INT_KEY("request_timeout_s", request_timeout_s, 1, 86400),
    {.name = NULL},
};

/* A value to check, from Jansson or from the command line, and how a message shows it. */
enum value_kind { VAL_INT, VAL_STRING, VAL_BOOL, VAL_OTHER };

struct value {
    enum value_kind kind;
    int64_t i;
    const char *s; /* VAL_STRING: NUL-terminated, n bytes, no NUL inside */
    size_t n;
    char got[GOT_MAX];
};

static int src_vformat(const struct cfg_src *s, int line, int col, const char *key, const char *fmt,
                       va_list ap) PERFLOG_PRINTF(5, 0);

/* One message into out (cap bytes): the prefix, then "key 'KEY': ", then the text. */
static void format_line(const struct cfg_src *s, int line, int col, const char *key, char *out,
                        size_t cap, const char *fmt, va_list ap) PERFLOG_PRINTF(7, 0);

static void format_line(const struct cfg_src *s, int line, int col, const char *key, char *out,
                        size_t cap, const char *fmt, va_list ap)
{
    size_t n = 0;
    int r = 0;

    out[0] = '\0';
    if (s->name && line > 0)
        r = snprintf(out, cap, "%s:%d:%d: ", s->name, line, col);
    else if (s->name || s->origin)
        r = snprintf(out, cap, "%s: ", s->name ? s->name : s->origin);
    n = r > 0 ? (size_t)r : 0;
    if (key && n < cap) {
        r = snprintf(out + n, cap - n, "key '%s': ", key);
        n += r > 0 ? (size_t)r : 0;
    }
    if (n < cap)
        vsnprintf(out + n, cap - n, fmt, ap);
}

static int src_vformat(const struct cfg_src *s, int line, int col, const char *key, const char *fmt,
                       va_list ap)
{
    char one[1024];
    size_t used, n;

    if (!s->err || s->errlen == 0)
        return -1;
    if (!s->nerr) {
        format_line(s, line, col, key, s->err, s->errlen, fmt, ap);
        return -1;
    }
    if ((*s->nerr)++ >= CFG_MAX_ERRORS)
        return -1;
    format_line(s, line, col, key, one, sizeof(one), fmt, ap);
    used = strlen(s->err);
    n = strlen(one);
    if (used == 0) /* the first message is never lost: cut to fit */
        snprintf(s->err, s->errlen, "%s", one);
    else if (used + 1 + n < s->errlen) {
        if (used > 0)
            s->err[used++] = '\n';
        memcpy(s->err + used, one, n + 1);
    }
    return -1;
}

int cfg_src_error_at(const struct cfg_src *s, int line, int col, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    src_vformat(s, line, col, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

int cfg_src_error(const struct cfg_src *s, const char *const *path, size_t depth, int with_key,
                  const char *fmt, ...)
{
    char key[320];
    int line = 0, col = 0;
    va_list ap;

    for (size_t d = depth; s->buf && d > 0; d--)
        if (cfg_json_locate(s->buf, s->len, path, d, &line, &col) == 0)
            break;
    /* on the command line the option already names the key */
    if (s->origin && !s->name)
        with_key = 0;
    cfg_path_format(path, depth, key, sizeof(key));
    va_start(ap, fmt);
    src_vformat(s, line, col, with_key ? key : NULL, fmt, ap);
    va_end(ap);
    return -1;
}

void cfg_path_format(const char *const *path, size_t depth, char *out, size_t cap)
{
    size_t n = 0;

    if (cap == 0)
        return;
    for (size_t i = 0; i < depth; i++) {
        if (i > 0 && path[i][0] != '[' && n + 1 < cap)
            out[n++] = '.';
        for (const char *p = path[i]; *p && n + 1 < cap; p++)
            out[n++] = (unsigned char)*p < 0x20 ? '?' : *p;
    }
    out[n] = '\0';
}

/*
 * "text" with JSON escapes, cut after QUOTE_SHOWN bytes with "..."; cap must be >= 32. Text from
 * the command line is not checked as UTF-8: a byte that is not part of a well-formed sequence is
 * shown as \xNN, and every step is one whole character, so the cut always falls between two.
 */
static void quote_text(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0, i = 0, bad;

    out[o++] = '"';
    while (i < n) {
        unsigned char ch = (unsigned char)s[i];
        size_t k = ch < 0x80 ? 1 : ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;

        if (i >= QUOTE_SHOWN || o + 16 > cap)
            break; /* room for one escape, "..." and the closing quote */
        if (ch >= 0x80 && (k > n - i || cfg_json_check_utf8(s + i, k, &bad) != 0)) {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
            i++;
            continue;
        }
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", ch);
        } else {
            memcpy(out + o, s + i, k);
            o += k;
        }
        i += k;
    }
    if (i < n) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o++] = '"';
    out[o] = '\0';
}

static void describe_json(const json_t *v, char *out, size_t cap)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(out, cap, "an object");
        break;
    case JSON_ARRAY:
        snprintf(out, cap, "an array");
        break;
    case JSON_STRING:
        quote_text(json_string_value(v), json_string_length(v), out, cap);
        break;
    case JSON_INTEGER:
        snprintf(out, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(out, cap, "%.15g", json_real_value(v));
        if (!strpbrk(out, ".eEin")) /* 1000.0 should not read as the integer 1000 */
            strncat(out, ".0", cap - strlen(out) - 1);
        break;
    case JSON_TRUE:
        snprintf(out, cap, "true");
        break;
    case JSON_FALSE:
        snprintf(out, cap, "false");
        break;
    case JSON_NULL:
        snprintf(out, cap, "null");
        break;
    }
}

static void value_from_json(const json_t *j, struct value *v)
{
    v->kind = VAL_OTHER;
    if (json_is_integer(j)) {
        v->kind = VAL_INT;
        v->i = (int64_t)json_integer_value(j);
    } else if (json_is_string(j)) {
        v->kind = VAL_STRING;
        v->s = json_string_value(j);
        v->n = json_string_length(j);
    } else if (json_is_boolean(j)) {
        v->kind = VAL_BOOL;
        v->i = json_is_true(j);
    }
    describe_json(j, v->got, sizeof(v->got));
}

/* Decimal digits with an optional '-': no '+', spaces, fractions or exponents. */
static int parse_int64(const char *s, int64_t *out)
{
    int neg = *s == '-';
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

    s += neg;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (limit - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

static void value_from_text(const struct key_def *k, const char *text, struct value *v)
{
    v->kind = VAL_STRING;
    v->s = text;
    v->n = strlen(text);
    if (k->type == KEY_INT && parse_int64(text, &v->i) == 0)
        v->kind = VAL_INT;
    if (k->type == KEY_BOOL && (!strcmp(text, "true") || !strcmp(text, "false"))) {
        v->kind = VAL_BOOL;
        v->i = !strcmp(text, "true");
    }
    quote_text(text, v->n, v->got, sizeof(v->got));
}

static int set_int(const struct key_def *k, const struct value *v, struct cfg *c, char *msg,
                   size_t cap)
{
    char *field = (char *)c + k->offset;

    if (v->kind != VAL_INT || v->i < k->min || v->i > k->max) {
        snprintf(msg, cap, "expected an integer from %" PRId64 " to %" PRId64 ", got %s", k->min,
                 k->max, v->got);
        return -1;
    }
    if (k->size == sizeof(int)) {
        int x = (int)v->i;
        memcpy(field, &x, sizeof(x));
    } else {
        memcpy(field, &v->i, sizeof(v->i));
    }
    return 0;
}

static int set_path(const struct key_def *k, const struct value *v, struct cfg *c, char *msg,
                    size_t cap)
{
    char *field = (char *)c + k->offset;

    if (v->kind != VAL_STRING || v->n == 0) {
        snprintf(msg, cap, "expected a path (a non-empty string), got %s", v->got);
        return -1;
    }
    if (v->n >= k->size) {
        snprintf(msg, cap, "the path is %zu bytes long, at most %zu are allowed", v->n,
                 k->size - 1);
        return -1;
    }
    memcpy(field, v->s, v->n + 1);
    return 0;
}

static int set_listen(const struct value *v, struct cfg *c, char *msg, size_t cap)
{
    static const char example[] = "HOST:PORT, e.g. \"127.0.0.1:9931\" or \"[::1]:9931\"";
    const char *why;
    int port;

    if (v->kind != VAL_STRING) {
        snprintf(msg, cap, "expected a string %s, got %s", example, v->got);
        return -1;
    }
    if (v->n >= sizeof(c->listen_addr)) {
        snprintf(msg, cap, "the address is %zu bytes long, at most %zu are allowed", v->n,
                 sizeof(c->listen_addr) - 1);
        return -1;
    }
    if (cfg_listen_parse(v->s, NULL, 0, &port, &why) != 0) {
        snprintf(msg, cap, "invalid address %s: %s (expected %s)", v->got, why, example);
        return -1;
    }
    memcpy(c->listen_addr, v->s, v->n + 1);
    c->listen_port = port;
    return 0;
}

static int set_level(const struct value *v, struct cfg *c, char *msg, size_t cap)
{
    enum log_level lvl;

    if (v->kind != VAL_STRING || log_level_parse(v->s, &lvl) != 0) {
        snprintf(msg, cap, "expected one of \"error\", \"warn\", \"info\", \"debug\", got %s",
                 v->got);
        return -1;
    }
    c->log_level = (int)lvl;
    return 0;
}

/* A bearer token (RFC 6750 b64token is stricter; any visible ASCII is allowed here), or "". */
static int set_token(const struct key_def *k, const struct value *v, struct cfg *c, char *msg,
                     size_t cap)
{
    char *field = (char *)c + k->offset;

    if (v->kind != VAL_STRING || v->n >= k->size) {
        snprintf(msg, cap, "expected a string of at most %zu characters (\"\" for none), got %s",
                 k->size - 1, v->got);
        return -1;
    }
    for (size_t i = 0; i < v->n; i++)
        if ((unsigned char)v->s[i] <= 0x20 || (unsigned char)v->s[i] >= 0x7f) {
            snprintf(msg, cap, "a token is visible ASCII only (no spaces or control characters)");
            return -1;
        }
    memcpy(field, v->s, v->n + 1);
    return 0;
}

static int set_bool(const struct key_def *k, const struct value *v, struct cfg *c, char *msg,
                    size_t cap)
{
    int x = (int)v->i;

    if (v->kind != VAL_BOOL) {
        snprintf(msg, cap, "expected true or false, got %s", v->got);
        return -1;
    }
    memcpy((char *)c + k->offset, &x, sizeof(x));
    return 0;
}

static int set_scalar(const struct key_def *k, const struct value *v, struct cfg *c, char *msg,
                      size_t cap)
{
    switch (k->type) {
    case KEY_INT:
        return set_int(k, v, c, msg, cap);
    case KEY_PATH:
        return set_path(k, v, c, msg, cap);
    case KEY_LISTEN:
        return set_listen(v, c, msg, cap);
    case KEY_LEVEL:
        return set_level(v, c, msg, cap);
    case KEY_TOKEN:
        return set_token(k, v, c, msg, cap);
    case KEY_BOOL:
        return set_bool(k, v, c, msg, cap);
    case KEY_GLOBS:
    case KEY_PDH_PATHS:
    case KEY_OBJECT:
        break;
    }
    snprintf(msg, cap, "a list or an object can only be set in the configuration file");
    return -1;
}

/*
 * Index of the ']' that closes the bracket expression opened at g[i], or 0. The rules of
 * fnmatch(3) (POSIX.1-2017, 2.13.1): a leading '!' or '^' negates, a ']' right after the
 * opening (or the negation) is literal, and [:class:], [.sym.] and [=equiv=] nest.
 */
static size_t bracket_end(const char *g, size_t n, size_t i)
{
    size_t j = i + 1;

    if (j < n && (g[j] == '!' || g[j] == '^'))
        j++;
    if (j < n && g[j] == ']')
        j++;
    while (j < n && g[j] != ']') {
        if (g[j] == '[' && j + 1 < n && (g[j + 1] == ':' || g[j + 1] == '.' || g[j + 1] == '=')) {
            char kind = g[j + 1];
            size_t k = j + 2;

            while (k + 1 < n && !(g[k] == kind && g[k + 1] == ']'))
                k++;
            if (k + 1 >= n)
                return 0;
            j = k + 2;
        } else {
            j++;
        }
    }
    return j < n ? j : 0;
}

/* Why glob g (n bytes) cannot be right, or NULL. Names in /sys/block and of interfaces have no
 * '/' (the kernel writes '!' for it) and no control characters. */
static const char *glob_problem(const char *g, size_t n)
{
    if (n == 0)
        return "a glob must not be empty";
    if (n > CFG_GLOB_MAX)
        return "a glob is at most 255 bytes long";
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)g[i];

        if (ch < 0x20 || ch == 0x7f)
            return "a glob must not contain control characters";
        if (ch == '/')
            return "device and interface names never contain '/'";
        if (ch == '\\' && ++i == n)
            return "it ends with a lone backslash";
        if (ch == '[') {
            i = bracket_end(g, n, i);
            if (i == 0)
                return "a '[' is not closed by ']'";
        }
    }
    return NULL;
}

/* Why PDH counter path p (n bytes) cannot be right, or NULL: "\\Object(Instance)\\Counter" or
 * "\\Object\\Counter", optionally behind "\\\\MACHINE" (PDH, "Specifying a Counter Path"). PDH
 * itself says whether the object and counter exist, on the machine, at start. */
static const char *pdh_path_problem(const char *p, size_t n)
{
    const char *last;

    if (n == 0 || n > CFG_GLOB_MAX)
        return "a PDH counter path is 1 to 255 bytes long";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
            return "a PDH counter path must not contain control characters";
    if (p[0] != '\\')
        return "a PDH counter path starts with '\\' (\\Object(Instance)\\Counter)";
    last = strrchr(p, '\\');
    if (last == p || last[1] == '\0')
        return "a PDH counter path has an object and a counter (\\Object(Instance)\\Counter)";
    return NULL;
}

/* A number as the file wrote it ("5e2", not 500.0) into got, when the text is at hand and short. */
static void number_as_written(const struct cfg_src *s, const char *const *path, size_t depth,
                              char *got, size_t cap)
{
    size_t start, n;

    if (s->buf && cfg_json_value_span(s->buf, s->len, path, depth, &start, &n) == 0 && n < cap)
        snprintf(got, cap, "%.*s", (int)n, s->buf + start);
}

/* Every element of the list arr judged, each bad one reported: 0, or -1. */
static int check_list(const struct cfg_src *s, const struct key_def *k, const json_t *arr,
                      const char **path, size_t depth)
{
    size_t n = json_array_size(arr);
    const char *what = k->type == KEY_PDH_PATHS ? "counter path" : "glob";
    char idx[24], got[GOT_MAX];
    int bad = 0;

    path[depth] = idx;
    if (n > CFG_MAX_GLOBS) {
        snprintf(idx, sizeof(idx), "[%d]", CFG_MAX_GLOBS);
        bad = cfg_src_error(s, path, depth + 1, 1,
                            "too many %ss: a list holds at most %d, this one has %zu", what,
                            CFG_MAX_GLOBS, n);
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *g = json_array_get(arr, i);
        const char *why;

        snprintf(idx, sizeof(idx), "[%zu]", i);
        describe_json(g, got, sizeof(got));
        if (json_is_number(g))
            number_as_written(s, path, depth + 1, got, sizeof(got));
        if (!json_is_string(g)) {
            bad = cfg_src_error(s, path, depth + 1, 1, "expected a %s string, got %s", what, got);
            continue;
        }
        if (k->type == KEY_PDH_PATHS) {
            why = pdh_path_problem(json_string_value(g), json_string_length(g));
            if (why)
                bad = cfg_src_error(s, path, depth + 1, 1, "bad counter path %s: %s", got, why);
            continue;
        }
        why = glob_problem(json_string_value(g), json_string_length(g));
        if (why)
            bad = cfg_src_error(s, path, depth + 1, 1, "bad glob %s: %s", got, why);
    }
    path[depth] = NULL; /* idx ends here */
    return bad;
}

static int apply_globs(const struct cfg_src *s, const struct key_def *k, const json_t *arr,
                       const char **path, size_t depth, struct cfg *c)
{
    char **list = (char **)(void *)((char *)c + k->offset);
    size_t *count = (size_t *)(void *)((char *)c + k->count_offset);
    char *fresh[CFG_MAX_GLOBS], got[GOT_MAX];
    size_t n = json_array_size(arr), i;

    if (!json_is_array(arr)) {
        describe_json(arr, got, sizeof(got));
        return cfg_src_error(s, path, depth, 1, "expected an array of %s strings, got %s",
                             k->type == KEY_PDH_PATHS ? "counter path" : "glob", got);
    }
    if (check_list(s, k, arr, path, depth))
        return -1;
    for (i = 0; i < n; i++) {
        fresh[i] = strdup(json_string_value(json_array_get(arr, i)));
        if (!fresh[i]) {
            while (i-- > 0)
                free(fresh[i]);
            return cfg_src_error(s, path, depth, 1, "out of memory");
        }
    }
    for (i = 0; i < *count; i++)
        cfg_glob_release(list[i]);
    for (i = 0; i < CFG_MAX_GLOBS; i++)
        list[i] = i < n ? fresh[i] : NULL;
    *count = n;
    return 0;
}

static const struct key_def *find_key(const struct key_def *defs, const char *name)
{
    for (; defs->name; defs++)
        if (strcmp(defs->name, name) == 0)
            return defs;
    return NULL;
}

static void list_keys(const struct key_def *defs, char *out, size_t cap)
{
    size_t n = 0;

    out[0] = '\0';
    for (; defs->name && n < cap; defs++) {
        int r = snprintf(out + n, cap - n, "%s%s", n ? ", " : "", defs->name);
        n += r > 0 ? (size_t)r : 0;
    }
}

/* Levenshtein distance of two short strings; SIZE_MAX when either is longer than 63 bytes. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];

    if (la >= 64 || lb >= 64)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];

        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* The known key a typo most likely meant: two edits away at most, or "interval" for
 * "interval_ms". */
static const char *suggest_key(const struct key_def *defs, const char *name)
{
    const char *best = NULL;
    size_t best_d = 3, len = strlen(name);

    for (; defs->name; defs++) {
        size_t d = edit_distance(name, defs->name);

        if (len >= 3 && strncmp(defs->name, name, len) == 0)
            d = 1;
        if (d < best_d && d < strlen(defs->name)) {
            best = defs->name;
            best_d = d;
        }
    }
    return best;
}

static int unknown_key(const struct cfg_src *s, const struct key_def *defs, const char **path,
                       size_t depth)
{
    char shown[320], parent[320], where[340] = "", hint[96] = "", known[512];
    const char *near = suggest_key(defs, path[depth - 1]);

    cfg_path_format(path, depth, shown, sizeof(shown));
    if (depth > 1) {
        cfg_path_format(path, depth - 1, parent, sizeof(parent));
        snprintf(where, sizeof(where), " in '%s'", parent);
    }
    if (near)
        snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
    list_keys(defs, known, sizeof(known));
    return cfg_src_error(s, path, depth, 0, "unknown key '%s'%s (known keys%s: %s)", shown, hint,
                         where, known);
}

/* Each member of obj, all of them judged: -1 when any was wrong (each one reported). */
static int apply_object(const struct cfg_src *s, const struct key_def *defs, const json_t *obj,
                        const char **path, size_t depth, struct cfg *c)
{
    const char *name;
    json_t *v;
    int rc = 0;

    json_object_foreach((json_t *)obj, name, v)
    {
        const struct key_def *k = find_key(defs, name);
        char msg[384], known[256];
        struct value val;

        path[depth] = name;
        if (!k) {
            rc = unknown_key(s, defs, path, depth + 1);
        } else if (k->type == KEY_GLOBS || k->type == KEY_PDH_PATHS) {
            if (apply_globs(s, k, v, path, depth + 1, c))
                rc = -1;
        } else if (k->type == KEY_OBJECT) {
            if (!json_is_object(v)) {
                describe_json(v, val.got, sizeof(val.got));
                list_keys(k->sub, known, sizeof(known));
                rc = cfg_src_error(s, path, depth + 1, 1, "expected an object (keys: %s), got %s",
                                   known, val.got);
            } else if (apply_object(s, k->sub, v, path, depth + 1, c)) {
                rc = -1;
            }
        } else {
            value_from_json(v, &val);
            if (json_is_number(v))
                number_as_written(s, path, depth + 1, val.got, sizeof(val.got));
            if (set_scalar(k, &val, c, msg, sizeof(msg)))
                rc = cfg_src_error(s, path, depth + 1, 1, "%s", msg);
        }
    }
    return rc;
}

/* Whether this source sets retention.<sub>: written in the file, or the key being overridden. */
static int src_sets_retention(const struct cfg_src *s, const char *sub)
{
    const char *path[2] = {"retention", sub};
    char dotted[64];
    int line, col;

    if (s->buf)
        return cfg_json_locate(s->buf, s->len, path, 2, &line, &col) == 0;
    snprintf(dotted, sizeof(dotted), "retention.%s", sub);
    return s->key && strcmp(s->key, dotted) == 0;
}

/* lo must not exceed hi; blame the one this source set, the longer tier first. */
static int order_error(const struct cfg_src *s, const char *lo, int lo_days, const char *hi,
                       int hi_days)
{
    const char *path[2] = {"retention", hi};

    if (src_sets_retention(s, hi))
        return cfg_src_error(s, path, 2, 1,
                             "expected at least retention.%s (%d), got %d (a coarser tier keeps "
                             "data at least as long)",
                             lo, lo_days, hi_days);
    path[1] = lo;
    return cfg_src_error(s, path, 2, 1,
                         "expected at most retention.%s (%d), got %d (a coarser tier keeps data "
                         "at least as long)",
                         hi, hi_days, lo_days);
}

static int check_retention(const struct cfg_src *s, const struct cfg *c)
{
    if (c->minute_days < c->raw_days)
        return order_error(s, "raw_days", c->raw_days, "minute_days", c->minute_days);
    if (c->hour_days < c->minute_days)
        return order_error(s, "minute_days", c->minute_days, "hour_days", c->hour_days);
    return 0;
}

int cfg_keys_apply(const struct cfg_src *s, json_t *root, struct cfg *c)
{
    const char *path[PATH_MAX_DEPTH + 1];

    if (apply_object(s, top_keys, root, path, 0, c))
        return -1;
    return check_retention(s, c);
}

int cfg_keys_set(const struct cfg_src *s, const char *value, struct cfg *c)
{
    char parts[PATH_MAX_DEPTH][CFG_JSON_COMP_MAX], msg[384];
    const char *path[PATH_MAX_DEPTH], *p = s->key;
    const struct key_def *defs = top_keys, *k;
    struct value val;
    size_t depth = 0;

    for (;;) {
        size_t n = strcspn(p, ".");

        if (depth == PATH_MAX_DEPTH || n >= CFG_JSON_COMP_MAX || !defs)
            return cfg_src_error_at(s, 0, 0, "unknown key '%.64s'", s->key);
        snprintf(parts[depth], sizeof(parts[depth]), "%.*s", (int)n, p);
        path[depth] = parts[depth];
        k = find_key(defs, parts[depth]);
        depth++;
        if (!k)
            return unknown_key(s, defs, path, depth);
        if (p[n] == '\0')
            break;
        defs = k->type == KEY_OBJECT ? k->sub : NULL;
        p += n + 1;
    }
    value_from_text(k, value, &val);
    if (set_scalar(k, &val, c, msg, sizeof(msg)))
        return cfg_src_error(s, path, depth, 1, "%s", msg);
    return check_retention(s, c);
}
