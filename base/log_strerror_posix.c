/*
 * log_strerror_posix.c - log_strerror with glibc's strerror_r (the GNU one, _GNU_SOURCE: it
 * returns the text, which need not be in buf).
 */
#include "base/log.h"

#include <string.h>

const char *log_strerror(int errnum, char *buf, size_t cap)
{
    return strerror_r(errnum, buf, cap);
}
