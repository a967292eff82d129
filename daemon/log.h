/*
 * log.h - leveled logging to stderr. The sink and the level are the one piece of global mutable
 * state besides the stop flag; both are safe to use from any thread (one write(2) per line).
 */
#ifndef PERFLOG_LOG_H
#define PERFLOG_LOG_H

enum log_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);
/* Parse "error", "warn", "info", "debug". Returns 0 and sets *out, or -1. */
int log_level_parse(const char *s, enum log_level *out);
const char *log_level_name(enum log_level lvl);

/* Redirect the sink to a file descriptor (tests); -1 restores stderr. */
void log_set_fd(int fd);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* + strerror(errno) */
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* no errno */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
