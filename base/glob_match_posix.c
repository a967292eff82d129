/*
 * glob_match_posix.c - glob_match with fnmatch(3), case-sensitive as Linux device names are.
 */
#include "base/glob_match.h"

#include <fnmatch.h>

int glob_match(const char *pattern, const char *name)
{
    return fnmatch(pattern, name, 0) == 0;
}
