/*
 * cli_os.h - the few things the client does differently per platform: cli_os_posix.c and
 * cli_os_windows.c.
 */
#ifndef PERFLOG_CLI_OS_H
#define PERFLOG_CLI_OS_H

#include <stddef.h>
#include <stdint.h>
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

/* Whether stderr is a terminal that redraws a line in place with "\r\033[K": isatty on POSIX; on
 * Windows a console where virtual terminal processing could be switched on (Windows 10 and
 * later). */
int cli_stderr_redraws(void);

/*
 * The size of a payload: a file's size in *bytes (and *files untouched), or for a directory the
 * sum of the regular files under it in *bytes and their count in *files; symbolic links (reparse
 * points on Windows) are not followed. Returns 0, or -1 with the reason in err (cap bytes).
 */
int cli_path_size(const char *path, int64_t *bytes, int64_t *files, char *err, size_t cap);

/*
 * Why a database file cannot be opened for reading, in words, for the error message that SQLite
 * gives as only "unable to open database file": "no such directory: DIR", "no such file", "is a
 * directory", "permission denied", "read-only filesystem (SQLite cannot create DB-shm beside a WAL
 * database)". Returns 1 with the reason in buf, or 0 when none of these is the cause.
 */
int cli_db_reason(const char *path, char *buf, size_t cap);

/*
 * perflog run --cold: empty the page cache before a run, so that it reads from the devices.
 * cli_cold_check says whether this process can (Linux as root, with a writable
 * /proc/sys/vm/drop_caches): 0, or -1 with the reason in err. cli_cold_drop writes the dirty data
 * out (sync) and then drops the clean page cache, dentries and inodes ("3", Documentation/
 * admin-guide/sysctl/vm.rst): 0, or -1 with the reason in err.
 */
int cli_cold_check(char *err, size_t cap);
int cli_cold_drop(char *err, size_t cap);

#endif
