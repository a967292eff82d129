/*
 * pdh_path.c - cutting, joining and naming extra PDH paths; see pdh_path.h.
 */
#include "collectors/model/pdh_path.h"

#include "collectors/model/counters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int copy_part(char *out, const char *from, size_t n)
{
    if (n == 0 || n >= PDH_PATH_MAX)
        return -EINVAL;
    memcpy(out, from, n);
    out[n] = '\0';
    return 0;
}

int pdh_path_split(const char *path, struct pdh_path_parts *out)
{
    const char *p = path, *last, *open;

    if (p[0] == '\\' && p[1] == '\\') { /* "\\MACHINE\Object..." */
        p = strchr(p + 2, '\\');
        if (!p)
            return -EINVAL;
    }
    if (p[0] != '\\')
        return -EINVAL;
    last = strrchr(p, '\\');
    if (last == p || copy_part(out->counter, last + 1, strlen(last + 1)) < 0)
        return -EINVAL;
    open = memchr(p, '(', (size_t)(last - p));
    if (!open) {
        out->instance[0] = '\0';
        if (copy_part(out->object, p + 1, (size_t)(last - p - 1)) < 0)
            return -EINVAL;
    } else if (last[-1] != ')' || last - 1 <= open + 1 ||
               copy_part(out->object, p + 1, (size_t)(open - p - 1)) < 0 ||
               copy_part(out->instance, open + 1, (size_t)(last - 1 - open - 1)) < 0) {
        return -EINVAL;
    }
    /* An object name holds no '\': "\A\B\C" is not a path. */
    return strchr(out->object, '\\') ? -EINVAL : 0;
}

int pdh_path_join(const struct pdh_path_parts *p, char *out, size_t cap)
{
    int n = p->instance[0] ? snprintf(out, cap, "\\%s(%s)\\%s", p->object, p->instance, p->counter)
                           : snprintf(out, cap, "\\%s\\%s", p->object, p->counter);

    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return -ENAMETOOLONG;
    }
    return 0;
}

static int same_ascii_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;

        if (x != y)
            return 0;
    }
    return *a == *b;
}

int pdh_path_builtin(const char *object, const char *counter)
{
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        if (!same_ascii_nocase(od->name, object))
            continue;
        for (size_t k = 0; k < od->ncounters; k++)
            if (same_ascii_nocase(od->counters[k].name, counter))
                return 1;
    }
    return 0;
}

int pdh_path_has_wildcard(const char *s)
{
    return strchr(s, '*') != NULL;
}

int pdh_path_name(const char *configured, const char *expanded, char *out, size_t cap)
{
    struct pdh_path_parts c, e;

    if (pdh_path_split(configured, &c) < 0 || pdh_path_split(expanded, &e) < 0)
        return -EINVAL;
    if (!pdh_path_has_wildcard(c.object))
        memcpy(e.object, c.object, sizeof(e.object));
    if (!pdh_path_has_wildcard(c.counter))
        memcpy(e.counter, c.counter, sizeof(e.counter));
    if (!pdh_path_has_wildcard(c.instance))
        memcpy(e.instance, c.instance, sizeof(e.instance));
    return pdh_path_join(&e, out, cap);
}
