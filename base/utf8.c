/*
 * utf8.c - the UTF-8 validator; see utf8.h.
 */
#include "base/utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
    unsigned c, lo = 0x80, hi = 0xBF;
    size_t n;

    if (avail == 0)
        return 0;
    c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0; /* a stray continuation byte, C0 and C1 (overlong), F5..FF (past U+10FFFF) */
    /* The second byte's range is narrowed for E0 and F0 (overlong forms), ED (surrogates) and F4
     * (past U+10FFFF): table 3-7 of The Unicode Standard. Bytes are read in order and the first
     * bad one stops the scan, so a NUL-terminated string is never read past its NUL. */
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (avail < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    return n;
}

size_t utf8_first_bad(const char *buf, size_t len)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t i = 0, n;

    while (i < len && (n = utf8_seq_len(s + i, len - i)) > 0)
        i += n;
    return i;
}
