/*
 * log.c - one formatted line per call, written with a single write(2) so lines from the sampler,
 * the writer and the HTTP threads never interleave.
 */
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int log_level = LOG_LVL_INFO;
static _Atomic int log_fd = STDERR_FILENO;
static void (*_Atomic log_sink)(enum log_level lvl, const char *msg);

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level lvl)
{
    atomic_store(&log_level, (int)lvl);
}

enum log_level log_get_level(void)
{
    return (enum log_level)atomic_load(&log_level);
}

void log_set_fd(int fd)
{
    atomic_store(&log_fd, fd < 0 ? STDERR_FILENO : fd);
}

void log_set_sink(void (*fn)(enum log_level lvl, const char *msg))
{
    atomic_store(&log_sink, fn);
}

const char *log_level_name(enum log_level lvl)
{
    return (unsigned)lvl < 4 ? level_names[lvl] : "?";
}

int log_level_parse(const char *s, enum log_level *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum log_level)i;
            return 0;
        }
    if (strcmp(s, "warning") == 0) {
        *out = LOG_LVL_WARN;
        return 0;
    }
    return -1;
}

static void log_emit(enum log_level lvl, int errnum, const char *fmt, va_list ap)
{
    char line[1024];
    struct timespec ts;
    struct tm tm;
    size_t len, msg_start;
    int n;
    void (*sink)(enum log_level, const char *);

    if ((int)lvl > atomic_load(&log_level))
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n = snprintf(line + len, sizeof(line) - len, ".%03ldZ perflogd %s: ", ts.tv_nsec / 1000000L,
                 level_names[lvl]);
    if (n > 0)
        len += (size_t)n;
    msg_start = len;
    n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
    if (n > 0)
        len = len + (size_t)n < sizeof(line) ? len + (size_t)n : sizeof(line) - 1;
    if (errnum && len < sizeof(line) - 1) {
        char eb[128];
        n = snprintf(line + len, sizeof(line) - len, ": %s", log_strerror(errnum, eb, sizeof(eb)));
        if (n > 0)
            len = len + (size_t)n < sizeof(line) ? len + (size_t)n : sizeof(line) - 1;
    }
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    sink = atomic_load(&log_sink);
    if (sink) {
        line[len] = '\0';
        sink(lvl, line + msg_start);
        return;
    }
    line[len++] = '\n';
    if (write(atomic_load(&log_fd), line, len) < 0) {
        /* nowhere left to report it */
    }
}

#define LOG_FN(fn, lvl, with_errno)                                                                \
    void fn(const char *fmt, ...)                                                                  \
    {                                                                                              \
        int e = errno;                                                                             \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        log_emit(lvl, with_errno ? e : 0, fmt, ap);                                                \
        va_end(ap);                                                                                \
        errno = e;                                                                                 \
    }

LOG_FN(log_error, LOG_LVL_ERROR, 0)
LOG_FN(log_warn, LOG_LVL_WARN, 1)
LOG_FN(log_warnx, LOG_LVL_WARN, 0)
LOG_FN(log_info, LOG_LVL_INFO, 0)
LOG_FN(log_debug, LOG_LVL_DEBUG, 0)
