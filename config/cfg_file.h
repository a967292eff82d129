/*
 * cfg_file.h - internal to config/: opening a configuration file, one implementation per
 * platform (cfg_file_posix.c, cfg_file_windows.c).
 */
#ifndef PERFLOG_CFG_FILE_H
#define PERFLOG_CFG_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Open path for reading if it is a regular file. Anything else is refused at once with a reason:
 * a directory, a device, or a FIFO, whose open would otherwise wait for a writer forever.
 * Returns 0 with the stream in *out (the caller fcloses it), or -1 with "PATH: why" in err.
 */
int cfg_file_open(const char *path, FILE **out, char *err, size_t errlen);

#endif
