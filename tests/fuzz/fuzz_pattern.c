/*
 * fuzz_pattern.c - libFuzzer target for pattern.c. Checks that a parsed pattern has NUL-terminated
 * parts shorter than PATTERN_PART_MAX, that *out is untouched on failure, that formatting the
 * parts gives a path that parses back to the same parts, that a pattern without wildcards matches
 * itself, and that pattern_glob agrees with a plain dynamic-programming matcher.
 */
#include "collectors/model/pattern.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define GLOB_MAX 96 /* inputs the reference matcher checks */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int part_ok(const char *part)
{
    const char *nul = memchr(part, '\0', PATTERN_PART_MAX);

    return nul != NULL && (size_t)(nul - part) < PATTERN_PART_MAX;
}

static int lower(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

/* The obvious O(n*m) table: m[i][j] = pat[0..i) matches s[0..j). */
static int ref_glob(const char *pat, size_t pn, const char *s, size_t sn)
{
    static unsigned char m[GLOB_MAX + 1][GLOB_MAX + 1];

    memset(m, 0, sizeof(m));
    m[0][0] = 1;
    for (size_t i = 1; i <= pn; i++) {
        for (size_t j = 0; j <= sn; j++) {
            char pc = pat[i - 1];

            if (pc == '*')
                m[i][j] = m[i - 1][j] || (j > 0 && m[i][j - 1]);
            else if (j > 0)
                m[i][j] = m[i - 1][j - 1] &&
                          (pc == '?' || lower((unsigned char)pc) == lower((unsigned char)s[j - 1]));
        }
    }
    return m[pn][sn];
}

static int has_wildcard(const char *s)
{
    return strpbrk(s, "*?") != NULL;
}

static void check_parse(const char *s, size_t size)
{
    struct pattern p, q;
    const char *why = NULL;
    char path[3 * PATTERN_PART_MAX + 8];
    int rc, n;

    memset(&p, 0x5a, sizeof(p));
    rc = pattern_parse(s, size, &p, &why);
    if (rc != 0) {
        unsigned char *raw = (unsigned char *)&p;

        if ((rc != -EINVAL && rc != -ENAMETOOLONG) || why == NULL)
            __builtin_trap();
        for (size_t i = 0; i < sizeof(p); i++)
            if (raw[i] != 0x5a)
                __builtin_trap();
        return;
    }
    if (!part_ok(p.host) || !part_ok(p.object) || !part_ok(p.counter) ||
        (p.has_instance && !part_ok(p.instance)))
        __builtin_trap();
    if (p.object[0] == '\0' || p.counter[0] == '\0' || (p.has_instance && p.instance[0] == '\0'))
        __builtin_trap();

    n = pattern_format_path(path, sizeof(path), p.object, p.has_instance ? p.instance : "",
                            p.counter);
    if (n < 0 || (size_t)n >= sizeof(path))
        __builtin_trap();
    if (pattern_parse(path, (size_t)n, &q, NULL) != 0 || q.host[0] != '\0' ||
        strcmp(q.object, p.object) != 0 || strcmp(q.counter, p.counter) != 0 ||
        q.has_instance != p.has_instance || (p.has_instance && strcmp(q.instance, p.instance)))
        __builtin_trap();

    if (!has_wildcard(p.object) && !has_wildcard(p.counter) &&
        !(p.has_instance && has_wildcard(p.instance)) &&
        !pattern_match(&p, p.object, p.has_instance ? p.instance : "", p.counter))
        __builtin_trap();
}

/* The input split at its first NUL into a glob and a subject. */
static void check_glob(const char *s, size_t size)
{
    char pat[GLOB_MAX + 1], subj[GLOB_MAX + 1];
    const char *nul = memchr(s, '\0', size);
    size_t pn, sn;

    if (!nul)
        return;
    pn = (size_t)(nul - s);
    sn = size - pn - 1;
    if (pn > GLOB_MAX || sn > GLOB_MAX || memchr(nul + 1, '\0', sn))
        return;
    memcpy(pat, s, pn);
    pat[pn] = '\0';
    memcpy(subj, nul + 1, sn);
    subj[sn] = '\0';
    if (pattern_glob(pat, subj) != ref_glob(pat, pn, subj, sn))
        __builtin_trap();
    if (!pattern_glob("*", subj))
        __builtin_trap();
    if (!has_wildcard(pat) && pattern_glob(pat, pat) != 1)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    char buf[2 * PATTERN_PART_MAX];

    check_parse(s, size);
    check_glob(s, size);

    /* Glob on arbitrary long strings for speed (libFuzzer's -timeout catches a blow-up). */
    if (size < sizeof(buf)) {
        memcpy(buf, s, size);
        buf[size] = '\0';
        pattern_glob(buf, buf);
        pattern_glob("*a*a*a*a*a*a*b", buf);
    }
    return 0;
}
