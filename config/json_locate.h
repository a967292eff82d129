/*
 * json_locate.h - where things are written in a JSON text.
 *
 * Jansson gives a line and column for syntax errors only; once a document has parsed, a value
 * knows nothing of where it came from. These pure functions re-read the text with a small
 * tokenizer (strings with escapes, numbers, literals, nesting) so a semantic error ("out of
 * range", "unknown key") can point at the key the user wrote. They never allocate, accept any
 * bytes (valid JSON or not) and are thread-safe.
 *
 * Lines and columns are 1-based. Columns count characters, not bytes (a UTF-8 sequence is one
 * column; a tab is one column), as Jansson counts them, so both kinds of error agree.
 */
#ifndef PERFLOG_JSON_LOCATE_H
#define PERFLOG_JSON_LOCATE_H

#include <stddef.h>

#define CFG_JSON_MAX_DEPTH 8  /* components kept by cfg_json_member_at */
#define CFG_JSON_COMP_MAX  64 /* bytes per component, with the NUL */

/*
 * Find where the member at `keypath` is written: keypath[i] is an object key (compared after
 * decoding escapes, so "\u0061" matches "a"), or "[N]" for element N of an array, e.g.
 * {"disks", "exclude", "[3]"}. For a key, reports the position of its opening quote; for an
 * array element, the position of the element's first character. The first occurrence wins.
 * Returns 0 and sets *line and *col, or -1 (nothing written) when the path is not in the text.
 */
int cfg_json_locate(const char *buf, size_t len, const char *const *keypath, size_t depth,
                    int *line, int *col);

/*
 * Where the value of the member at `keypath` (as for cfg_json_locate) is written: *start and *n
 * give the bytes of its first token - all of a number, string or literal, the '{' or '[' of a
 * container - so a message can quote a number as it was written ("5e2", not 500.0). Returns 0,
 * or -1 (nothing written) when the path is not in the text.
 */
int cfg_json_value_span(const char *buf, size_t len, const char *const *keypath, size_t depth,
                        size_t *start, size_t *n);

/* The member (key or array element) whose text was being read at byte `offset`. */
struct cfg_json_member {
    size_t depth;                                     /* components in comp[] */
    char comp[CFG_JSON_MAX_DEPTH][CFG_JSON_COMP_MAX]; /* decoded keys, or "[N]"; may be cut */
    int truncated;  /* 1 when a component was cut or the path was deeper than kept */
    int line, col;  /* of the innermost member's key quote or element start */
    int value_done; /* 1 when that member's value had ended before `offset` */
};

/*
 * Walk the tokens that end at or before byte `offset` and report the innermost member being read
 * there: after `{"a": {"b": 1` it is a.b, value done; after `{"a": {` it is a, value not done.
 * Pass the end of a token to include it (a duplicate key), or the offset of its last byte to
 * stop just before it (the token a syntax error was found in). Returns 0 and fills *out, or -1
 * (out untouched) when no member had started or the text nests deeper than the walker follows.
 */
int cfg_json_member_at(const char *buf, size_t len, size_t offset, struct cfg_json_member *out);

/* Line and column of byte `offset` (offset == len gives the position just past the end). */
void cfg_json_position(const char *buf, size_t len, size_t offset, int *line, int *col);

/*
 * Check that buf is well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF) with no NUL byte. Returns 0, or -1 and sets *bad to the offset of the first bad byte.
 */
int cfg_json_check_utf8(const char *buf, size_t len, size_t *bad);

#endif
