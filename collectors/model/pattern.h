/*
 * pattern.h - counter path patterns: `\Object(Instance)\Counter`, with `*` (any run of characters)
 * and `?` (one character) allowed in each of the three parts, as typeperf and perfmon accept them
 * (`\PhysicalDisk(*)\Disk Bytes/sec`, `\Memory\*`, `\Processor(_Total)\% * Time`). Matching is
 * case-insensitive (ASCII), like perfmon's. A leading `\\HOST` part is accepted and kept so the
 * caller can check it against its own host name. Pure; thread-safe.
 *
 * Parsing: the counter is what follows the last `\`. What precedes it is the object, optionally
 * followed by `(instance)`: the instance runs from the first `(` to the `)` that closes the object
 * part, so instance names may themselves contain parentheses. Single-instance objects have no
 * `(...)`; a pattern without one matches only instances named "" (single-instance objects), and
 * `(*)` does not match them.
 *
 * Stricter than the sketch above, to catch typos: an object name may not contain `\` (so the empty
 * part of `\Memory\\X` or `\\HOST\\Memory\X` is an error), the instance may not be empty
 * (`()`) and must itself have balanced parentheses (`\O(a)(b)\C` is -EINVAL). `?` matches one
 * byte, not one UTF-8 character; case folding is ASCII only.
 */
#ifndef PERFLOG_PATTERN_H
#define PERFLOG_PATTERN_H

#include <stddef.h>

#define PATTERN_PART_MAX 128 /* bytes per part, including the NUL */

struct pattern {
    char host[PATTERN_PART_MAX]; /* "" when the pattern has no \\HOST prefix */
    char object[PATTERN_PART_MAX];
    char instance[PATTERN_PART_MAX]; /* valid when has_instance */
    int has_instance;
    char counter[PATTERN_PART_MAX];
};

/*
 * Parse s[0..len) (not NUL-terminated). Returns 0 and fills *out, or -EINVAL (no leading `\`,
 * empty object or counter, unbalanced parentheses, a NUL or control character) or -ENAMETOOLONG
 * (a part longer than PATTERN_PART_MAX - 1) with *out untouched. `why` (may be NULL) receives a
 * static one-line reason on failure.
 */
int pattern_parse(const char *s, size_t len, struct pattern *out, const char **why);

/* Glob match of NUL-terminated `pat` against `s`: `*`, `?`, ASCII case-insensitive. Linear-time
 * in practice (no exponential backtracking). Returns 1 or 0. */
int pattern_glob(const char *pat, const char *s);

/* Does the pattern match this counter? `instance` is "" for single-instance objects. 1 or 0. */
int pattern_match(const struct pattern *p, const char *object, const char *instance,
                  const char *counter);

/* Format a concrete path `\Object(Instance)\Counter` (no "(...)" when instance is ""), as the API
 * and the CSV name it. Returns the length it needed (like snprintf). */
int pattern_format_path(char *buf, size_t cap, const char *object, const char *instance,
                        const char *counter);

#endif
