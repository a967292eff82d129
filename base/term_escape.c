/*
 * term_escape.c - terminal-safe copies of outside strings (term_escape.h). One function decides,
 * piece by piece, what a byte sequence becomes; the three entry points only differ in where the
 * pieces go.
 */
#include "base/term_escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PIECE_MAX 8 /* the longest piece: "\u202e" */

/* Length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629 table 3), and its code point. */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t v, min;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2, v = s[0] & 0x1F, min = 0x80;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3, v = s[0] & 0x0F, min = 0x800;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4, v = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

static int bidi_control(uint32_t cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The piece for the text at s[0..n), n > 0: either *used bytes copied (returns 0, nothing in
 * esc) or an escape written to esc (returns its length).
 */
static size_t piece(const unsigned char *s, size_t n, int flags, char esc[PIECE_MAX], size_t *used)
{
    uint32_t cp;
    size_t len = utf8_char(s, n, &cp);

    if (len == 0) {
        *used = 1;
        return (size_t)snprintf(esc, PIECE_MAX, "\\x%02x", s[0]);
    }
    *used = len;
    if ((flags & TERM_KEEP_LINES) && (cp == '\n' || cp == '\t'))
        return 0;
    if (cp == '\n' || cp == '\t' || cp == '\r') {
        esc[0] = '\\';
        esc[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
        esc[2] = '\0';
        return 2;
    }
    if (cp < 0x20 || cp == 0x7F)
        return (size_t)snprintf(esc, PIECE_MAX, "\\x%02x", (unsigned)cp);
    if ((cp >= 0x80 && cp <= 0x9F) || bidi_control(cp))
        return (size_t)snprintf(esc, PIECE_MAX, "\\u%04x", (unsigned)cp);
    return 0;
}

/* Bytes of the escaped form of s[0..n). */
static size_t escaped_len(const unsigned char *s, size_t n)
{
    size_t total = 0, used;
    char esc[PIECE_MAX];

    while (n > 0) {
        size_t k = piece(s, n, 0, esc, &used);

        total += k ? k : used;
        s += used;
        n -= used;
    }
    return total;
}

const char *term_escape(const char *s, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "-");
    size_t n = strlen((const char *)u), o = 0, used;
    int cut;
    char esc[PIECE_MAX];

    if (cap == 0)
        return "";
    cut = escaped_len(u, n) >= cap;
    while (n > 0) {
        size_t k = piece(u, n, 0, esc, &used), w = k ? k : used;

        /* when it is cut, keep room for "..." */
        if (o + w + (cut ? 4 : 1) > cap) {
            if (o + 4 <= cap) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            break;
        }
        memcpy(out + o, k ? esc : (const char *)u, w);
        o += w;
        u += used;
        n -= used;
    }
    out[o] = '\0';
    return out;
}

void term_escape_write(const char *s, size_t len, int flags, FILE *f)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t used;
    char esc[PIECE_MAX];

    while (len > 0) {
        size_t k = piece(u, len, flags, esc, &used);

        fwrite(k ? esc : (const char *)u, 1, k ? k : used, f);
        u += used;
        len -= used;
    }
}

char *term_escape_dup(const char *s, size_t len, int flags)
{
    const unsigned char *u = (const unsigned char *)s;
    /* an escape is at most 4 output bytes per input byte ("\xNN"; "\u0085" takes 2 bytes in) */
    char *out = len < (SIZE_MAX - 1) / 4 ? malloc(len * 4 + 1) : NULL, esc[PIECE_MAX];
    size_t o = 0, used;

    if (!out)
        return NULL;
    while (len > 0) {
        size_t k = piece(u, len, flags, esc, &used);

        memcpy(out + o, k ? esc : (const char *)u, k ? k : used);
        o += k ? k : used;
        u += used;
        len -= used;
    }
    out[o] = '\0';
    return out;
}
