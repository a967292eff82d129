/*
 * pid_io.h - the text of /proc/PID/io (Documentation/filesystems/proc.rst, "/proc/<pid>/io"):
 * "key: value" lines. Parsed here once, for the Linux collector's Process rows and for the
 * client's own count of what a run's command read and wrote. Pure; thread-safe.
 */
#ifndef PERFLOG_PID_IO_H
#define PERFLOG_PID_IO_H

#include <stddef.h>
#include <stdint.h>

/* The keys read, in file order; cancelled_write_bytes is not wanted (see the counter table). */
enum pid_io_key {
    PID_IO_RCHAR,
    PID_IO_WCHAR,
    PID_IO_SYSCR,
    PID_IO_SYSCW,
    PID_IO_READ_BYTES,
    PID_IO_WRITE_BYTES,
    PID_IO_COUNT
};

struct pid_io {
    uint64_t v[PID_IO_COUNT];
    unsigned present; /* bit k set: v[k] was read */
    size_t bad_lines; /* lines of a wanted key whose value is not a decimal number that fits */
    size_t first_bad; /* 1-based line number of the first of them; 0: none */
};

/* Parse buf[0..len) into *out (cleared first). A value is blanks, then decimal digits, then a
 * blank or the end of the line; other lines and unknown keys are skipped. Never fails. */
void pid_io_parse(const char *buf, size_t len, struct pid_io *out);

#endif
