/*
 * win_error_windows.c - see win_error.h.
 */
#include "cli/win_error.h"

#include <stdio.h>
#include <string.h>
#include <windows.h>

void cli_win_error(unsigned long e, char *buf, size_t cap)
{
    size_t n = 0;

    if (cap && FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                              (DWORD)e, 0, buf, (DWORD)cap, NULL))
        n = strlen(buf);
    else
        n = (size_t)snprintf(buf, cap, "Windows error %lu", e);
    while (n > 0 && n < cap && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == '.'))
        buf[--n] = '\0';
}
