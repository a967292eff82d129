/*
 * printf_attr.h - the format attribute of perflog's printf-like functions.
 *
 * Every platform formats with a C99 printf (on Windows mingw-w64's own, selected by
 * __USE_MINGW_ANSI_STDIO, which understands %zu and %lld). GCC's "printf" archetype means the
 * Microsoft runtime's printf on a mingw target, so there the check names the C99 one.
 */
#ifndef PERFLOG_PRINTF_ATTR_H
#define PERFLOG_PRINTF_ATTR_H

#ifdef __MINGW32__
#define PERFLOG_PRINTF(fmt, first) __attribute__((format(gnu_printf, fmt, first)))
#else
#define PERFLOG_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#endif

#endif
