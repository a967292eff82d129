/*
 * glob.c - include/exclude selection of devices and interfaces, shared by every platform.
 */
#include "base/glob_match.h"
#include "collectors/collector.h"

static int any_match(const char *name, const char *const *globs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (glob_match(globs[i], name))
            return 1;
    return 0;
}

int collector_name_selected(const char *name, const char *const *include, size_t n_include,
                            const char *const *exclude, size_t n_exclude)
{
    if (any_match(name, exclude, n_exclude))
        return 0;
    return n_include == 0 || any_match(name, include, n_include);
}
