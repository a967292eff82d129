/*
 * text.h - two small text helpers that more than one layer needs: an error message into a
 * caller's buffer, and the value of a hex digit.
 */
#ifndef PERFLOG_TEXT_H
#define PERFLOG_TEXT_H

#include "base/printf_attr.h"

#include <stddef.h>

/* printf into err (errlen bytes, always terminated); nothing when err is NULL or errlen 0. */
void text_set_err(char *err, size_t errlen, const char *fmt, ...) PERFLOG_PRINTF(3, 4);

/* The value of hex digit c (0-9, a-f, A-F), or -1 when it is not one. */
int text_hex_digit(char c);

#endif
