/*
 * pattern.c - counter path patterns `\\HOST\Object(Instance)\Counter` with `*` and `?` (pattern.h).
 * The layout of a path is the one of PDH, "Specifying a Counter Path"
 * (https://learn.microsoft.com/en-us/windows/win32/perfctrs/specifying-a-counter-path).
 */
#include "collectors/model/pattern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int lower(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

/* Copy s[0..n) into a part; -ENAMETOOLONG if it does not fit with its NUL. */
static int set_part(char *dst, const char *s, size_t n)
{
    if (n > PATTERN_PART_MAX - 1)
        return -ENAMETOOLONG;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

/* Split the object part `Object` or `Object(Instance)` (no leading `\`). The instance runs from the
 * first `(` to the last byte, which must be its `)`, and must itself be balanced: "svchost(1)" is
 * a fine instance name, "a)(b" is not. */
static int split_object(const char *s, size_t n, struct pattern *p, const char **why)
{
    const char *open = memchr(s, '(', n);
    size_t obj_len, inst_len;
    int depth = 0, rc;

    if (!open) {
        if (memchr(s, ')', n)) {
            *why = "unbalanced parentheses";
            return -EINVAL;
        }
        if (memchr(s, '\\', n)) {
            *why = "a backslash in the object name (an empty part?)";
            return -EINVAL;
        }
        p->has_instance = 0;
        p->instance[0] = '\0';
        return set_part(p->object, s, n);
    }
    obj_len = (size_t)(open - s);
    if (memchr(s, '\\', obj_len)) {
        *why = "a backslash in the object name (an empty part?)";
        return -EINVAL;
    }
    if (memchr(s, ')', obj_len) || s[n - 1] != ')' || n - obj_len < 2) {
        *why = "unbalanced parentheses";
        return -EINVAL;
    }
    inst_len = n - obj_len - 2;
    for (size_t i = 0; i < inst_len; i++) {
        char ch = open[1 + i];

        if (ch == '(')
            depth++;
        else if (ch == ')' && --depth < 0)
            break;
    }
    if (depth != 0) {
        *why = "unbalanced parentheses";
        return -EINVAL;
    }
    if (obj_len == 0) {
        *why = "empty object name";
        return -EINVAL;
    }
    if (inst_len == 0) {
        *why = "empty instance name (use (*) for every instance)";
        return -EINVAL;
    }
    p->has_instance = 1;
    if ((rc = set_part(p->object, s, obj_len)) < 0)
        return rc;
    return set_part(p->instance, open + 1, inst_len);
}

int pattern_parse(const char *s, size_t len, struct pattern *out, const char **why)
{
    struct pattern p;
    const char *dummy, *last;
    size_t i = 0, host_len = 0;
    int rc;

    if (!why)
        why = &dummy;
    for (size_t k = 0; k < len; k++) {
        unsigned char ch = (unsigned char)s[k];

        if (ch < 0x20 || ch == 0x7f) {
            *why = "a NUL or control character in the path";
            return -EINVAL;
        }
    }
    if (len == 0 || s[0] != '\\') {
        *why = "a counter path starts with a backslash, as in \\Memory\\Available Bytes";
        return -EINVAL;
    }
    memset(&p, 0, sizeof(p));
    if (len >= 2 && s[1] == '\\') {
        const char *end = memchr(s + 2, '\\', len - 2);

        if (!end || end == s + 2) {
            *why = "\\\\HOST must be followed by \\Object\\Counter";
            return -EINVAL;
        }
        host_len = (size_t)(end - (s + 2));
        if (set_part(p.host, s + 2, host_len) < 0) {
            *why = "host name too long";
            return -ENAMETOOLONG;
        }
        i = 2 + host_len;
    }
    /* s[i] is the `\` before the object; the counter follows the last `\`. */
    last = s + len - 1;
    while (*last != '\\')
        last--;
    if (last == s + i) {
        *why = "no counter: a path is \\Object\\Counter";
        return -EINVAL;
    }
    if (last == s + len - 1) {
        *why = "empty counter name";
        return -EINVAL;
    }
    if (last == s + i + 1) {
        *why = "empty object name";
        return -EINVAL;
    }
    if ((rc = split_object(s + i + 1, (size_t)(last - (s + i + 1)), &p, why)) < 0) {
        if (rc == -ENAMETOOLONG)
            *why = "object or instance name too long";
        return rc;
    }
    if (set_part(p.counter, last + 1, (size_t)(s + len - (last + 1))) < 0) {
        *why = "counter name too long";
        return -ENAMETOOLONG;
    }
    *out = p;
    return 0;
}

/*
 * The classic iterative matcher: on a mismatch, go back to just after the last `*` and let it
 * swallow one more character. Only the last star is ever retried, which is enough because an
 * earlier star can absorb whatever a later retry would need; the cost is O(len(pat) * len(s)).
 */
int pattern_glob(const char *pat, const char *s)
{
    const char *star = NULL, *retry = NULL;

    while (*s) {
        if (*pat == '*') {
            star = ++pat;
            retry = s;
        } else if (*pat &&
                   (*pat == '?' || lower((unsigned char)*pat) == lower((unsigned char)*s))) {
            pat++;
            s++;
        } else if (star) {
            pat = star;
            s = ++retry;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

int pattern_match(const struct pattern *p, const char *object, const char *instance,
                  const char *counter)
{
    if (!pattern_glob(p->object, object) || !pattern_glob(p->counter, counter))
        return 0;
    if (!p->has_instance)
        return instance[0] == '\0';
    return instance[0] != '\0' && pattern_glob(p->instance, instance);
}

int pattern_format_path(char *buf, size_t cap, const char *object, const char *instance,
                        const char *counter)
{
    if (instance[0] == '\0')
        return snprintf(buf, cap, "\\%s\\%s", object, counter);
    return snprintf(buf, cap, "\\%s(%s)\\%s", object, instance, counter);
}
