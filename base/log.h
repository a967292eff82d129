/*
 * log.h - leveled logging to stderr. The sink and the level are the one piece of global mutable
 * state besides the stop flag; both are safe to use from any thread (one write(2) per line).
 */
#ifndef PERFLOG_LOG_H
#define PERFLOG_LOG_H

#include "base/printf_attr.h"

#include <stddef.h>

enum log_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);
/* Parse "error", "warn", "info", "debug". Returns 0 and sets *out, or -1. */
int log_level_parse(const char *s, enum log_level *out);
const char *log_level_name(enum log_level lvl);

/* Redirect the sink to a file descriptor (tests); -1 restores stderr. */
void log_set_fd(int fd);

/*
 * Send each line (without its time stamp and line end) to `fn` instead of the file descriptor:
 * the Windows service logs to the Event Log this way. NULL restores the descriptor. Set it before
 * other threads log; `fn` must be thread-safe.
 */
void log_set_sink(void (*fn)(enum log_level lvl, const char *msg));

/* strerror(3) into `buf`, safe in any thread; returns the text (buf or a static string). Per
 * platform: log_strerror_posix.c, log_strerror_windows.c. */
const char *log_strerror(int errnum, char *buf, size_t cap);

void log_error(const char *fmt, ...) PERFLOG_PRINTF(1, 2);
void log_warn(const char *fmt, ...) PERFLOG_PRINTF(1, 2);  /* + strerror(errno) */
void log_warnx(const char *fmt, ...) PERFLOG_PRINTF(1, 2); /* no errno */
void log_info(const char *fmt, ...) PERFLOG_PRINTF(1, 2);
void log_debug(const char *fmt, ...) PERFLOG_PRINTF(1, 2);

#endif
