/*
 * cli_os.h - the few things the client does differently per platform: cli_os_posix.c and
 * cli_os_windows.c.
 */
#ifndef PERFLOG_CLI_OS_H
#define PERFLOG_CLI_OS_H

#include <stddef.h>
#include <stdio.h>

/* Call fn on SIGINT and SIGTERM (Ctrl+C on Windows). On POSIX a sleep in progress ends early
 * (no SA_RESTART); on Windows it ends at its time. */
void cli_catch_interrupt(void (*fn)(int sig));

/* A FILE whose contents end up in memory: open_memstream(3) on POSIX, a temporary file read back
 * on Windows, which has no open_memstream. */
struct cli_memfile {
    FILE *f;
    char *buf;
    size_t len;
};

/* Open m->f. Returns it, or NULL. */
FILE *cli_memfile_open(struct cli_memfile *m);

/* Close m->f; returns the contents (malloc'd, NUL-terminated, the caller frees) or NULL on a
 * write error or out of memory. */
char *cli_memfile_close(struct cli_memfile *m);

#endif
