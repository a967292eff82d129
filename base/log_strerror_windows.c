/*
 * log_strerror_windows.c - log_strerror with the C runtime's strerror_s, which has the texts of
 * the errno values perflog returns (ENOENT, ENOSPC, ...); others read "Unknown error".
 */
#include "base/log.h"

#include <stdio.h>
#include <string.h>

const char *log_strerror(int errnum, char *buf, size_t cap)
{
    if (!cap)
        return "";
    if (strerror_s(buf, cap, errnum) != 0)
        snprintf(buf, cap, "error %d", errnum);
    return buf;
}
