/*
 * glob_match.h - one shell-style pattern against one name, per platform: fnmatch(3) where the C
 * library has it (glob_match_posix.c), a small matcher of its own on Windows
 * (glob_match_windows.c, which compiles anywhere and is unit-tested on Linux).
 */
#ifndef PERFLOG_GLOB_MATCH_H
#define PERFLOG_GLOB_MATCH_H

/* 1 when `name` matches `pattern` ('*', '?', "[...]" with ranges and '!' or '^'), else 0. */
int glob_match(const char *pattern, const char *name);

#endif
