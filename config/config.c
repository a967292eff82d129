/*
 * config.c - the life of a struct cfg: defaults, release, and the two ways to change one, each
 * all-or-nothing (work on a copy, swap it in on success). Reading the file and getting its text
 * through Jansson happens here; judging the parsed values happens in config_keys.c.
 */
#include "config/config.h"

#include "base/log.h"
#include "config/cfg_file.h"
#include "config/config_keys.h"
#include "config/json_locate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CFG_FILE_MAX                                                                               \
    (1024 * 1024) /* a config is a few hundred bytes; refuse to slurp a disk image */

/*
 * The default globs are static so cfg_defaults cannot fail; cfg_glob_release recognises them. The
 * lists hold char * (a parsed glob is the list's to free), so these go in cast; nothing writes a
 * glob, and being const they are read-only memory, where a write would fault at once.
 */
static const char glob_loop[] = "loop*", glob_ram[] = "ram*", glob_zram[] = "zram*";

static int glob_is_static(const char *glob)
{
    return glob == glob_loop || glob == glob_ram || glob == glob_zram;
}

void cfg_glob_release(char *glob)
{
    if (!glob_is_static(glob))
        free(glob);
}

void cfg_defaults(struct cfg *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->db, sizeof(c->db), "./perflog.db");
    snprintf(c->listen_addr, sizeof(c->listen_addr), "127.0.0.1:9931");
    c->listen_port = 9931;
    c->interval_ms = 1000;
    c->log_level = LOG_LVL_INFO;
    snprintf(c->root, sizeof(c->root), "/");
    c->disk_exclude[0] = (char *)glob_loop;
    c->disk_exclude[1] = (char *)glob_ram;
    c->disk_exclude[2] = (char *)glob_zram;
    c->n_disk_exclude = 3;
    c->raw_days = 7;
    c->minute_days = 90;
    c->chunk_after_minutes = 1;
    c->hour_days = 1825;
    c->commit_interval_ms = 2000;
    c->max_held_ticks = 3600;
    c->sampler_rt_priority = 1; /* SCHED_FIFO 1 where allowed, else nice -10 */
    c->auth_token[0] = '\0';
    c->auth_read = 0;
    c->http_threads = 2;
    c->max_connections = 256;
    c->connection_timeout_s = 10;
    c->request_timeout_s = 60;
    c->header_timeout_s = 10;
    c->max_per_ip = 32;
    c->max_body_bytes = 65536;
    c->max_url_bytes = 8192;
    c->max_points = 100000;
    c->max_db_bytes = 4294967296LL;
}

/* The string lists of c (four globs lists, then the PDH paths), for code that treats them alike. */
#define CFG_NLISTS 5
static char **glob_list(struct cfg *c, int i, size_t **count)
{
    switch (i) {
    case 0:
        *count = &c->n_disk_include;
        return c->disk_include;
    case 1:
        *count = &c->n_disk_exclude;
        return c->disk_exclude;
    case 2:
        *count = &c->n_net_include;
        return c->net_include;
    case 3:
        *count = &c->n_net_exclude;
        return c->net_exclude;
    default:
        *count = &c->n_pdh_counters;
        return c->pdh_counters;
    }
}

void cfg_release(struct cfg *c)
{
    if (!c)
        return;
    for (int i = 0; i < CFG_NLISTS; i++) {
        size_t *count;
        char **list = glob_list(c, i, &count);

        for (size_t k = 0; k < *count; k++)
            cfg_glob_release(list[k]);
        memset(list, 0, CFG_MAX_GLOBS * sizeof(*list));
        *count = 0;
    }
}

/* Deep copy: dst owns its own glob strings. On failure dst holds nothing to release. */
static int cfg_copy(struct cfg *dst, const struct cfg *src)
{
    size_t want[CFG_NLISTS], *count;
    char **list;

    *dst = *src; /* dst's lists point at src's strings until each is replaced by a copy */
    for (int i = 0; i < CFG_NLISTS; i++) {
        glob_list(dst, i, &count);
        want[i] = *count;
        *count = 0; /* grows with each copy, so a release frees copies only */
    }
    for (int i = 0; i < CFG_NLISTS; i++) {
        list = glob_list(dst, i, &count);
        for (size_t k = 0; k < want[i]; k++) {
            list[k] = glob_is_static(list[k]) ? list[k] : strdup(list[k]);
            if (!list[k]) {
                cfg_release(dst);
                return -ENOMEM;
            }
            (*count)++;
        }
    }
    return 0;
}

static int is_blank(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r')
            return 0;
    return 1;
}

/* Encoding and emptiness, before Jansson, whose messages for these are obscure. */
static int check_text(const struct cfg_src *s)
{
    const unsigned char *u = (const unsigned char *)s->buf;
    size_t bad;
    int line, col;

    if (s->len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
        return cfg_src_error_at(s, 1, 1, "the file is UTF-16; save it as UTF-8");
    if (cfg_json_check_utf8(s->buf, s->len, &bad) != 0) {
        cfg_json_position(s->buf, s->len, bad, &line, &col);
        if (u[bad] == 0)
            return cfg_src_error_at(s, line, col,
                                    "NUL byte: the file must be UTF-8 text (is it UTF-16?)");
        return cfg_src_error_at(s, line, col,
                                "invalid UTF-8 (byte 0x%02x): the file must be UTF-8 text", u[bad]);
    }
    if (is_blank(s->buf, s->len))
        return cfg_src_error_at(s, 1, 1,
                                "the file is empty; a configuration is a JSON object, at least {}");
    return 0;
}

/* Where the comma is when the token just before `end` is a '}' or ']' right after one. */
static int trailing_comma(const char *buf, size_t end, size_t *comma)
{
    size_t i;

    if (end == 0 || (buf[end - 1] != '}' && buf[end - 1] != ']'))
        return 0;
    for (i = end - 1; i > 0; i--)
        if (buf[i - 1] != ' ' && buf[i - 1] != '\t' && buf[i - 1] != '\n' && buf[i - 1] != '\r')
            break;
    if (i == 0 || buf[i - 1] != ',')
        return 0;
    *comma = i - 1;
    return 1;
}

/* Jansson's message quotes the text near the error, which may hold a newline or an ESC: shown as
 * \u00XX, so an error stays one line and the terminal prints it as it is. */
static const char *jansson_text(const json_error_t *je, char *out, size_t cap)
{
    size_t o = 0;

    for (const char *p = je->text; *p && o + 7 < cap; p++) {
        unsigned char ch = (unsigned char)*p;

        if (ch < 0x20 || ch == 0x7f)
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", ch);
        else
            out[o++] = (char)ch;
    }
    out[o] = '\0';
    return out;
}

/*
 * Jansson's message and position, plus the key being read there (the walker reads up to, not
 * including, the token Jansson stopped at: its position is one past that token's last byte).
 */
static int syntax_error(const struct cfg_src *s, const json_error_t *je)
{
    size_t at = je->position > 0 ? (size_t)je->position : 0, comma;
    struct cfg_json_member m;
    const char *path[CFG_JSON_MAX_DEPTH];
    char where[400] = "", key[320], text[JSON_ERROR_TEXT_LENGTH * 6];
    int line = je->line, col = je->column;

    if (at > s->len)
        at = s->len;

    if (line < 1 || col < 1) /* Jansson says column 0 at the end of the text after a newline */
        cfg_json_position(s->buf, s->len, at, &line, &col);
    if (cfg_json_member_at(s->buf, s->len, at > 0 ? at - 1 : 0, &m) == 0) {
        for (size_t i = 0; i < m.depth; i++)
            path[i] = m.comp[i];
        cfg_path_format(path, m.depth, key, sizeof(key));
        snprintf(where, sizeof(where), " %s key '%s'", m.value_done ? "after" : "in the value of",
                 key);
    }
    if (trailing_comma(s->buf, at, &comma)) {
        cfg_json_position(s->buf, s->len, comma, &line, &col);
        return cfg_src_error_at(
            s, line, col, "syntax error%s: a comma before '%c' (JSON allows no trailing comma)",
            where, s->buf[at - 1]);
    }
    if (at > 0 && at <= s->len && (s->buf[at - 1] == '/' || s->buf[at - 1] == '#'))
        return cfg_src_error_at(s, line, col, "syntax error%s: %s (JSON has no comments)", where,
                                jansson_text(je, text, sizeof(text)));
    return cfg_src_error_at(s, line, col, "syntax error%s: %s", where,
                            jansson_text(je, text, sizeof(text)));
}

/* Jansson stops at the second copy of a key; name it and point at both copies. */
static int duplicate_error(const struct cfg_src *s, const json_error_t *je)
{
    struct cfg_json_member m;
    const char *path[CFG_JSON_MAX_DEPTH];
    char key[320], text[JSON_ERROR_TEXT_LENGTH * 6];
    int line, col;

    if (cfg_json_member_at(s->buf, s->len, (size_t)je->position, &m) != 0 || m.truncated)
        return cfg_src_error_at(s, je->line, je->column, "%s",
                                jansson_text(je, text, sizeof(text)));
    for (size_t i = 0; i < m.depth; i++)
        path[i] = m.comp[i];
    cfg_path_format(path, m.depth, key, sizeof(key));
    if (cfg_json_locate(s->buf, s->len, path, m.depth, &line, &col) != 0)
        return cfg_src_error_at(s, m.line, m.col, "duplicate key '%s'", key);
    return cfg_src_error_at(s, m.line, m.col,
                            "duplicate key '%s' (first set at line %d, column %d)", key, line, col);
}

static int parse_text(const struct cfg_src *s, json_t **root)
{
    json_error_t je;
    int line, col;
    size_t i = 0;

    *root = json_loadb(s->buf, s->len, JSON_REJECT_DUPLICATES, &je);
    if (!*root)
        return json_error_code(&je) == json_error_duplicate_key ? duplicate_error(s, &je)
                                                                : syntax_error(s, &je);
    if (json_is_object(*root))
        return 0;
    while (s->buf[i] == ' ' || s->buf[i] == '\t' || s->buf[i] == '\n' || s->buf[i] == '\r')
        i++;
    cfg_json_position(s->buf, s->len, i, &line, &col);
    json_decref(*root);
    *root = NULL;
    /* without JSON_DECODE_ANY, Jansson returns an object or an array */
    return cfg_src_error_at(s, line, col,
                            "the top level must be a JSON object {...}, not an array");
}

/* After the last line shown (CFG_MAX_ERRORS, or fewer when err is full): how many more. */
static void count_unshown(const struct cfg_src *s, size_t nerr)
{
    size_t used, shown = 0;

    if (!s->err || s->errlen == 0)
        return;
    used = strlen(s->err);
    for (size_t i = 0; i < used; i++)
        shown += s->err[i] == '\n';
    shown += used > 0;
    if (nerr > shown)
        snprintf(s->err + used, s->errlen - used, "%s%s: %zu more errors not shown",
                 used ? "\n" : "", s->name ? s->name : "the configuration", nerr - shown);
}

int cfg_load_buffer(struct cfg *c, const char *name, const char *buf, size_t len, char *err,
                    size_t errlen)
{
    size_t nerr = 0;
    struct cfg_src s = {
        .name = name, .buf = buf, .len = len, .err = err, .errlen = errlen, .nerr = &nerr};
    struct cfg next;
    json_t *root = NULL;
    int rc = -1;

    if (errlen > 0)
        err[0] = '\0';
    /* Notepad writes a UTF-8 byte order mark; it is invisible, so columns start after it. */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        s.buf += 3;
        s.len -= 3;
    }
    if (check_text(&s) != 0 || parse_text(&s, &root) != 0)
        return -1;
    if (cfg_copy(&next, c) != 0) {
        cfg_src_error_at(&s, 0, 0, "out of memory");
        goto out;
    }
    if (cfg_keys_apply(&s, root, &next) != 0) {
        count_unshown(&s, nerr);
        cfg_release(&next);
        goto out;
    }
    cfg_release(c);
    *c = next;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* Read all of `path` into a heap buffer. Returns 0, or -1 with the reason in err. */
static int read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
    char eb[128];
    char *buf = NULL;
    size_t n;
    int rc = -1;
    FILE *f;

    if (cfg_file_open(path, &f, err, errlen) != 0)
        return -1;
    buf = malloc(CFG_FILE_MAX + 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    errno = 0;
    n = fread(buf, 1, CFG_FILE_MAX + 1, f);
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path,
                 log_strerror(errno ? errno : EIO, eb, sizeof(eb)));
        goto out;
    }
    if (n > CFG_FILE_MAX) {
        snprintf(err, errlen, "%s: larger than %d bytes; is this the configuration file?", path,
                 CFG_FILE_MAX);
        goto out;
    }
    *out = buf;
    *len = n;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    fclose(f);
    return rc;
}

int cfg_load_file(struct cfg *c, const char *path, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    int rc;

    if (errlen > 0)
        err[0] = '\0';
    if (read_file(path, &buf, &len, err, errlen) != 0)
        return -1;
    rc = cfg_load_buffer(c, path, buf, len, err, errlen);
    free(buf);
    return rc;
}

int cfg_override(struct cfg *c, const char *key, const char *value, const char *origin, char *err,
                 size_t errlen)
{
    struct cfg_src s = {.origin = origin, .key = key, .err = err, .errlen = errlen};
    /* Only scalars change here, so a shallow copy is enough: next is never released. */
    struct cfg next = *c;

    if (errlen > 0)
        err[0] = '\0';
    if (cfg_keys_set(&s, value, &next) != 0)
        return -1;
    *c = next;
    return 0;
}

void cfg_collector_config(const struct cfg *c, struct collector_config *out)
{
    memset(out, 0, sizeof(*out));
    out->root = c->root;
    for (size_t i = 0; i < c->n_disk_include; i++)
        out->disk_include[i] = c->disk_include[i];
    out->n_disk_include = c->n_disk_include;
    for (size_t i = 0; i < c->n_disk_exclude; i++)
        out->disk_exclude[i] = c->disk_exclude[i];
    out->n_disk_exclude = c->n_disk_exclude;
    for (size_t i = 0; i < c->n_net_include; i++)
        out->net_include[i] = c->net_include[i];
    out->n_net_include = c->n_net_include;
    for (size_t i = 0; i < c->n_net_exclude; i++)
        out->net_exclude[i] = c->net_exclude[i];
    out->n_net_exclude = c->n_net_exclude;
    for (size_t i = 0; i < c->n_pdh_counters; i++)
        out->pdh_counters[i] = c->pdh_counters[i];
    out->n_pdh_counters = c->n_pdh_counters;
}
