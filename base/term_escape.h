/*
 * term_escape.h - strings that came from outside (run labels, commands, paths, a tool's output,
 * a server's messages), made harmless for a terminal before they are printed: a label such as
 * "\x1b[31m\x07" must show as those characters, not recolour the screen or ring the bell.
 *
 * Escaped: C0 controls as \xNN (\t, \n and \r as such; TERM_KEEP_LINES keeps '\n' and '\t' for
 * text of many lines), DEL as \x7f, the C1 controls U+0080..U+009F (8-bit CSI and OSC) as \uNNNN,
 * the bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) as \uNNNN, and each
 * byte that is not part of well-formed UTF-8 as \xNN. Everything else is copied, so names in any
 * script stay readable. Backslashes are not doubled: this is for eyes, not for parsing back.
 * Pure; thread-safe.
 */
#ifndef PERFLOG_TERM_ESCAPE_H
#define PERFLOG_TERM_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

#define TERM_KEEP_LINES 1 /* flag: copy '\n' and '\t' as they are */

/*
 * s (NUL-terminated; NULL reads as "-") escaped on one line into out (cap >= 8 bytes), cut at a
 * character boundary with "..." when it does not fit. Returns out, for use as a printf argument.
 */
const char *term_escape(const char *s, char *out, size_t cap);

/* len bytes of s escaped (flags: TERM_KEEP_LINES or 0), written to f. */
void term_escape_write(const char *s, size_t len, int flags, FILE *f);

/* len bytes of s escaped into a malloc'd string, or NULL when out of memory. */
char *term_escape_dup(const char *s, size_t len, int flags);

#endif
