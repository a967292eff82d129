/*
 * glob_match_windows.c - glob_match for Windows, which has no fnmatch. Case-insensitive (ASCII),
 * as Windows compares device and interface names. '\\' is a literal, not an escape: it appears in
 * Windows names. Pure; compiles on any platform.
 */
#include "base/glob_match.h"

#include <ctype.h>
#include <stddef.h>

static int same(char a, char b)
{
    return tolower((unsigned char)a) == tolower((unsigned char)b);
}

/* Match one "[...]" set at *pp against c; advances *pp past it. Returns 1, 0, or -1 when the
 * set is not closed (the '[' is then an ordinary character). */
static int match_set(const char **pp, char c)
{
    const char *p = *pp + 1;
    int negate = 0, hit = 0;

    if (*p == '!' || *p == '^') {
        negate = 1;
        p++;
    }
    for (int first = 1; *p && (first || *p != ']'); first = 0) {
        char lo = *p++, hi = lo;
        if (*p == '-' && p[1] && p[1] != ']') {
            hi = p[1];
            p += 2;
        }
        if ((tolower((unsigned char)c) >= tolower((unsigned char)lo) &&
             tolower((unsigned char)c) <= tolower((unsigned char)hi)) ||
            same(c, lo))
            hit = 1;
    }
    if (*p != ']')
        return -1;
    *pp = p + 1;
    return hit != negate;
}

int glob_match(const char *pattern, const char *name)
{
    const char *p = pattern, *n = name, *star_p = NULL, *star_n = NULL;

    while (*n) {
        int m = 0;
        const char *next = p + 1;
        if (*p == '*') {
            star_p = ++p;
            star_n = n;
            continue;
        }
        if (*p == '?') {
            m = 1;
        } else if (*p == '[') {
            next = p;
            m = match_set(&next, *n);
            if (m < 0) {
                m = *n == '[';
                next = p + 1;
            }
        } else if (*p) {
            m = same(*p, *n);
        }
        if (m) {
            p = next;
            n++;
        } else if (star_p) {
            /* Backtrack: let the last '*' take one more character. */
            p = star_p;
            n = ++star_n;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}
