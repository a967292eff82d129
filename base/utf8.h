/*
 * utf8.h - well-formed UTF-8 as RFC 3629 and The Unicode Standard (table 3-7) define it: no
 * overlong forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF. The one validator of the
 * tree: the config reader, the JSON writer of the API, /metrics and the client's tool-output tail
 * all use it. Pure; thread-safe.
 */
#ifndef PERFLOG_UTF8_H
#define PERFLOG_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the well-formed sequence that starts s[0..avail), or 0 when none does (a
 * stray continuation byte, C0, C1, F5..FF, a bad or cut sequence, avail 0). A NUL byte is a
 * sequence of length 1, as in any UTF-8 text; callers that refuse it check for it. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

/* The offset of the first byte of buf[0..len) that starts no well-formed sequence, or len when
 * the whole buffer is well-formed. */
size_t utf8_first_bad(const char *buf, size_t len);

#endif
