/*
 * json_locate.c - a tokenizer and a walker over JSON text, used only to find positions.
 *
 * The walker follows the grammar of RFC 8259 loosely: it stops at the first token that cannot
 * continue the document, which is all a locator needs (Jansson has already judged the syntax).
 * It keeps one frame per open object or array and reports an event each time a member starts:
 * a key read in an object, or the first token of an array element.
 */
#include "config/json_locate.h"

#include "base/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define WALK_MAX_DEPTH 64 /* deeper text is given up on; a config file nests three levels */

enum tok_type {
    TOK_END,
    TOK_BAD,
    TOK_LBRACE,
    TOK_RBRACE,
    TOK_LBRACKET,
    TOK_RBRACKET,
    TOK_COLON,
    TOK_COMMA,
    TOK_STRING,
    TOK_SCALAR, /* number or literal; its spelling is Jansson's business */
};

struct lexer {
    const char *buf;
    size_t len, pos;
    int line, col; /* of buf[pos] */
};

struct token {
    enum tok_type type;
    size_t start, end; /* end is one past the last byte; a string includes its quotes */
    int line, col;
};

/*
 * Object frames go KEY -> COLON -> VALUE -> AFTER -> (comma) KEY. Array frames start in KEY
 * (first element or ']'), go AFTER after an element and VALUE after a comma.
 */
enum frame_state { ST_KEY, ST_COLON, ST_VALUE, ST_AFTER };

struct frame {
    char type; /* '{' or '[' */
    enum frame_state state;
    int has_member;
    size_t key_start, key_end; /* object: the current key's token */
    size_t index;              /* array: the current element */
    int line, col;             /* of the current member */
};

struct walker {
    struct lexer lx;
    size_t limit; /* a token ending past this byte is not read */
    struct frame st[WALK_MAX_DEPTH];
    size_t depth;
    int top_done;
    int overflow;
};

enum walk_event { EV_NONE, EV_MEMBER, EV_STOP };

static void lex_advance(struct lexer *lx)
{
    unsigned char ch = (unsigned char)lx->buf[lx->pos++];

    if (ch == '\n') {
        lx->line++;
        lx->col = 1;
    } else if ((ch & 0xC0) != 0x80) {
        lx->col++; /* continuation bytes belong to the character before */
    }
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static int is_scalar_char(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           ch == '-' || ch == '+' || ch == '.';
}

static enum tok_type lex_string(struct lexer *lx)
{
    lex_advance(lx);
    while (lx->pos < lx->len) {
        char ch = lx->buf[lx->pos];

        lex_advance(lx);
        if (ch == '"')
            return TOK_STRING;
        if (ch == '\\' && lx->pos < lx->len)
            lex_advance(lx);
    }
    return TOK_BAD; /* unterminated */
}

static struct token lex_next(struct lexer *lx)
{
    struct token t;

    while (lx->pos < lx->len && is_space(lx->buf[lx->pos]))
        lex_advance(lx);
    t.start = lx->pos;
    t.line = lx->line;
    t.col = lx->col;
    if (lx->pos >= lx->len) {
        t.type = TOK_END;
    } else {
        char ch = lx->buf[lx->pos];

        switch (ch) {
        case '{':
            t.type = TOK_LBRACE;
            break;
        case '}':
            t.type = TOK_RBRACE;
            break;
        case '[':
            t.type = TOK_LBRACKET;
            break;
        case ']':
            t.type = TOK_RBRACKET;
            break;
        case ':':
            t.type = TOK_COLON;
            break;
        case ',':
            t.type = TOK_COMMA;
            break;
        case '"':
            t.type = TOK_STRING;
            break;
        default:
            t.type = is_scalar_char(ch) ? TOK_SCALAR : TOK_BAD;
            break;
        }
        if (t.type == TOK_STRING)
            t.type = lex_string(lx);
        else if (t.type == TOK_SCALAR)
            while (lx->pos < lx->len && is_scalar_char(lx->buf[lx->pos]))
                lex_advance(lx);
        else
            lex_advance(lx);
    }
    t.end = lx->pos;
    return t;
}

static void walker_init(struct walker *w, const char *buf, size_t len, size_t limit)
{
    memset(w, 0, sizeof(*w));
    w->lx.buf = buf;
    w->lx.len = len;
    w->lx.line = 1;
    w->lx.col = 1;
    w->limit = limit;
}

/* Begin a value at token t: a scalar is complete at once, a container opens a frame. */
static int walk_open(struct walker *w, const struct token *t)
{
    struct frame *f;

    if (t->type == TOK_STRING || t->type == TOK_SCALAR) {
        if (w->depth == 0)
            w->top_done = 1;
        return 0;
    }
    if (t->type != TOK_LBRACE && t->type != TOK_LBRACKET)
        return -1;
    if (w->depth == WALK_MAX_DEPTH) {
        w->overflow = 1;
        return -1;
    }
    f = &w->st[w->depth++];
    memset(f, 0, sizeof(*f));
    f->type = t->type == TOK_LBRACE ? '{' : '[';
    f->state = ST_KEY;
    return 0;
}

static enum walk_event walk_close(struct walker *w, const struct token *t)
{
    char want = t->type == TOK_RBRACE ? '{' : '[';

    if (w->st[w->depth - 1].type != want)
        return EV_STOP;
    if (--w->depth == 0)
        w->top_done = 1;
    return EV_NONE; /* the parent frame went to ST_AFTER when this value began */
}

static enum walk_event walk_object(struct walker *w, struct frame *f, const struct token *t,
                                   size_t *level)
{
    switch (f->state) {
    case ST_KEY:
        if (t->type == TOK_RBRACE && !f->has_member) /* no '}' after a comma */
            return walk_close(w, t);
        if (t->type != TOK_STRING)
            return EV_STOP;
        f->key_start = t->start;
        f->key_end = t->end;
        f->line = t->line;
        f->col = t->col;
        f->has_member = 1;
        f->state = ST_COLON;
        *level = w->depth - 1;
        return EV_MEMBER;
    case ST_COLON:
        if (t->type != TOK_COLON)
            return EV_STOP;
        f->state = ST_VALUE;
        return EV_NONE;
    case ST_VALUE:
        f->state = ST_AFTER;
        return walk_open(w, t) == 0 ? EV_NONE : EV_STOP;
    case ST_AFTER:
        if (t->type == TOK_COMMA) {
            f->state = ST_KEY;
            return EV_NONE;
        }
        return t->type == TOK_RBRACE ? walk_close(w, t) : EV_STOP;
    }
    return EV_STOP;
}

static enum walk_event walk_array(struct walker *w, struct frame *f, const struct token *t,
                                  size_t *level)
{
    if (f->state == ST_AFTER) {
        if (t->type == TOK_COMMA) {
            f->state = ST_VALUE;
            return EV_NONE;
        }
        return t->type == TOK_RBRACKET ? walk_close(w, t) : EV_STOP;
    }
    if (f->state == ST_KEY && t->type == TOK_RBRACKET)
        return walk_close(w, t);
    f->index = f->has_member ? f->index + 1 : 0;
    f->has_member = 1;
    f->key_start = t->start; /* an element's first token, for cfg_json_value_span */
    f->key_end = t->end;
    f->line = t->line;
    f->col = t->col;
    f->state = ST_AFTER;
    *level = w->depth - 1;
    return walk_open(w, t) == 0 ? EV_MEMBER : EV_STOP;
}

/* Read one token and update the frames. On EV_MEMBER, *level is the frame holding the member. */
static enum walk_event walk_step(struct walker *w, size_t *level)
{
    struct token t = lex_next(&w->lx);
    struct frame *f;

    if (t.type == TOK_END || t.type == TOK_BAD || t.end > w->limit || w->top_done)
        return EV_STOP;
    if (w->depth == 0)
        return walk_open(w, &t) == 0 ? EV_NONE : EV_STOP;
    f = &w->st[w->depth - 1];
    if (f->type == '{')
        return walk_object(w, f, &t, level);
    return walk_array(w, f, &t, level);
}

static unsigned long read_hex4(const char *s, size_t end, size_t *i)
{
    unsigned long v = 0;

    if (*i + 4 > end)
        return 0xFFFD;
    for (int k = 0; k < 4; k++) {
        char ch = s[*i + (size_t)k];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0)
            return 0xFFFD;
        v = v * 16 + (unsigned long)d;
    }
    *i += 4;
    return v;
}

/* \uD83D\uDE00 is one character; a lone surrogate becomes U+FFFD, as it cannot be UTF-8. */
static unsigned long decode_u(const char *s, size_t end, size_t *i)
{
    unsigned long cp = read_hex4(s, end, i), lo;
    size_t save = *i;

    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return 0xFFFD;
    if (cp < 0xD800 || cp > 0xDBFF)
        return cp;
    if (*i + 2 <= end && s[*i] == '\\' && s[*i + 1] == 'u') {
        *i += 2;
        lo = read_hex4(s, end, i);
        if (lo >= 0xDC00 && lo <= 0xDFFF)
            return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    *i = save;
    return 0xFFFD;
}

static size_t utf8_encode(unsigned long cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode the character of a JSON string body at s[*i] (escapes resolved) into out. */
static size_t decode_char(const char *s, size_t end, size_t *i, char out[4])
{
    char e;

    if (s[*i] != '\\' || *i + 1 >= end) {
        out[0] = s[(*i)++];
        return 1;
    }
    e = s[*i + 1];
    *i += 2;
    switch (e) {
    case 'b':
        out[0] = '\b';
        return 1;
    case 'f':
        out[0] = '\f';
        return 1;
    case 'n':
        out[0] = '\n';
        return 1;
    case 'r':
        out[0] = '\r';
        return 1;
    case 't':
        out[0] = '\t';
        return 1;
    case 'u':
        return utf8_encode(decode_u(s, end, i), out);
    default:
        out[0] = e;
        return 1; /* '"', '\\', '/', or an invalid escape kept as written */
    }
}

static int key_equals(const char *buf, const struct frame *f, const char *want)
{
    const char *raw = buf + f->key_start;
    size_t i = 1, end = f->key_end - f->key_start - 1; /* inside the quotes */
    size_t w = 0, wl = strlen(want);
    char u[4];

    while (i < end) {
        size_t k = decode_char(raw, end, &i, u);

        if (w + k > wl || memcmp(want + w, u, k) != 0)
            return 0;
        w += k;
    }
    return w == wl;
}

/* "[N]" -> N; -1 for anything else. */
static int parse_index(const char *s, size_t *out)
{
    size_t v = 0, i = 1;

    if (s[0] != '[' || s[1] == ']')
        return -1;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (SIZE_MAX - 9) / 10)
            return -1;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    if (s[i] != ']' || s[i + 1] != '\0')
        return -1;
    *out = v;
    return 0;
}

static int path_matches(const struct walker *w, const char *const *keypath, size_t depth)
{
    for (size_t i = 0; i < depth; i++) {
        const struct frame *f = &w->st[i];
        size_t idx;

        if (f->type == '{' ? !key_equals(w->lx.buf, f, keypath[i])
                           : parse_index(keypath[i], &idx) != 0 || idx != f->index)
            return 0;
    }
    return 1;
}

int cfg_json_locate(const char *buf, size_t len, const char *const *keypath, size_t depth,
                    int *line, int *col)
{
    struct walker w;
    enum walk_event ev;
    size_t level = 0;

    if (depth == 0 || depth > WALK_MAX_DEPTH)
        return -1;
    walker_init(&w, buf, len, len);
    while ((ev = walk_step(&w, &level)) != EV_STOP) {
        if (ev == EV_MEMBER && level == depth - 1 && path_matches(&w, keypath, depth)) {
            *line = w.st[level].line;
            *col = w.st[level].col;
            return 0;
        }
    }
    return -1;
}

int cfg_json_value_span(const char *buf, size_t len, const char *const *keypath, size_t depth,
                        size_t *start, size_t *n)
{
    struct walker w;
    enum walk_event ev;
    size_t level = 0;
    struct token t;

    if (depth == 0 || depth > WALK_MAX_DEPTH)
        return -1;
    walker_init(&w, buf, len, len);
    while ((ev = walk_step(&w, &level)) != EV_STOP) {
        if (ev != EV_MEMBER || level != depth - 1 || !path_matches(&w, keypath, depth))
            continue;
        if (w.st[level].type == '[') {
            t.start = w.st[level].key_start;
            t.end = w.st[level].key_end;
        } else {
            struct lexer lx = w.lx; /* just past the key: ':' then the value */

            if (lex_next(&lx).type != TOK_COLON)
                return -1;
            t = lex_next(&lx);
            if (t.type == TOK_END || t.type == TOK_BAD)
                return -1;
        }
        *start = t.start;
        *n = t.end - t.start;
        return 0;
    }
    return -1;
}

/* The component of frame f as text: the decoded key (control bytes shown as '?') or "[N]". */
static int frame_component(const char *buf, const struct frame *f, char *out, size_t cap)
{
    const char *raw = buf + f->key_start;
    size_t i = 1, end, n = 0;
    char u[4];

    if (f->type == '[') {
        int r = snprintf(out, cap, "[%zu]", f->index);
        return r < 0 || (size_t)r >= cap;
    }
    end = f->key_end - f->key_start - 1;
    while (i < end) {
        size_t k = decode_char(raw, end, &i, u);

        if (n + k >= cap) {
            out[n] = '\0';
            return 1;
        }
        for (size_t j = 0; j < k; j++)
            out[n++] = (unsigned char)u[j] < 0x20 ? '?' : u[j];
    }
    out[n] = '\0';
    return 0;
}

static int member_value_done(const struct frame *f)
{
    if (f->type == '{')
        return f->state == ST_AFTER || f->state == ST_KEY;
    return f->state == ST_AFTER || f->state == ST_VALUE;
}

int cfg_json_member_at(const char *buf, size_t len, size_t offset, struct cfg_json_member *out)
{
    struct walker w;
    size_t level = 0, n = 0;
    const struct frame *last;

    walker_init(&w, buf, len, offset);
    while (walk_step(&w, &level) != EV_STOP)
        ;
    while (n < w.depth && w.st[n].has_member)
        n++;
    if (w.overflow || n == 0)
        return -1;
    last = &w.st[n - 1];
    out->truncated = n > CFG_JSON_MAX_DEPTH;
    out->depth = n > CFG_JSON_MAX_DEPTH ? CFG_JSON_MAX_DEPTH : n;
    for (size_t i = 0; i < out->depth; i++)
        if (frame_component(buf, &w.st[i], out->comp[i], sizeof(out->comp[i])))
            out->truncated = 1;
    out->line = last->line;
    out->col = last->col;
    out->value_done = n == w.depth && member_value_done(last);
    return 0;
}

void cfg_json_position(const char *buf, size_t len, size_t offset, int *line, int *col)
{
    struct lexer lx = {.buf = buf, .len = len, .line = 1, .col = 1};

    while (lx.pos < offset && lx.pos < len)
        lex_advance(&lx);
    *line = lx.line;
    *col = lx.col;
}

int cfg_json_check_utf8(const char *buf, size_t len, size_t *bad)
{
    /* A NUL byte is well-formed UTF-8, but no JSON text holds one raw. */
    const char *nul = memchr(buf, '\0', len);
    size_t i = utf8_first_bad(buf, nul ? (size_t)(nul - buf) : len);

    if (i == len)
        return 0;
    *bad = i;
    return -1;
}
