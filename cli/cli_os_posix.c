/*
 * cli_os_posix.c - cli_os.h with sigaction, open_memstream, isatty and nftw.
 */
#include "cli_os.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

void cli_catch_interrupt(void (*fn)(int sig))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn; /* no SA_RESTART: a sleep ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

FILE *cli_memfile_open(struct cli_memfile *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f;
}

char *cli_memfile_close(struct cli_memfile *m)
{
    if (fclose(m->f) != 0) {
        free(m->buf);
        return NULL;
    }
    return m->buf;
}

int cli_stderr_redraws(void)
{
    return isatty(2);
}

/* nftw has no argument for its callback: the sums of one walk (the program is single-threaded). */
static int64_t walk_bytes, walk_files;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path;
    (void)ftw;
    if (type == FTW_F && S_ISREG(st->st_mode)) {
        walk_bytes += st->st_size;
        walk_files++;
    }
    return 0;
}

int cli_path_size(const char *path, int64_t *bytes, int64_t *files, char *err, size_t cap)
{
    struct stat st;

    if (stat(path, &st) < 0) {
        snprintf(err, cap, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        *bytes = st.st_size;
        return 0;
    }
    walk_bytes = walk_files = 0;
    if (nftw(path, walk_one, 32, FTW_PHYS) < 0) {
        snprintf(err, cap, "%s", strerror(errno));
        return -1;
    }
    *bytes = walk_bytes;
    *files = walk_files;
    return 0;
}

/* The directory of path (".", or "/" for "/x") into buf. */
static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        snprintf(buf, cap, ".");
    else if (slash == path)
        snprintf(buf, cap, "/");
    else
        snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

int cli_db_reason(const char *path, char *buf, size_t cap)
{
    struct statvfs vfs;
    struct stat st;
    char dir[4096], shm[4200];

    dir_of(path, dir, sizeof(dir));
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && stat(dir, &st) != 0) {
            snprintf(buf, cap, "no such directory: %s", dir);
            return 1;
        }
        if (errno == ENOENT || errno == ENOTDIR) {
            snprintf(buf, cap, errno == ENOENT ? "no such file" : "not a directory: %s", dir);
            return 1;
        }
        snprintf(buf, cap, "%s", strerror(errno));
        return 1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(buf, cap, "is a directory");
        return 1;
    }
    if (access(path, R_OK) != 0 || access(dir, X_OK) != 0) {
        snprintf(buf, cap, "permission denied");
        return 1;
    }
    snprintf(shm, sizeof(shm), "%s-shm", path);
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY) && access(shm, F_OK) != 0) {
        snprintf(buf, cap, "read-only filesystem (SQLite cannot create %s beside the database)",
                 shm);
        return 1;
    }
    return 0;
}

#define DROP_CACHES "/proc/sys/vm/drop_caches"

int cli_cold_check(char *err, size_t cap)
{
    if (geteuid() != 0) {
        snprintf(err, cap, "--cold needs root: it writes " DROP_CACHES " (run it with sudo)");
        return -1;
    }
    if (access(DROP_CACHES, W_OK) != 0) {
        snprintf(err, cap, "--cold: " DROP_CACHES " is not writable: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int cli_cold_drop(char *err, size_t cap)
{
    int fd;
    ssize_t w;

    /* drop_caches frees clean pages only: the dirty ones must be written first */
    sync();
    fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, cap, DROP_CACHES ": %s", strerror(errno));
        return -1;
    }
    w = write(fd, "3\n", 2);
    if (w != 2)
        snprintf(err, cap, DROP_CACHES ": %s", w < 0 ? strerror(errno) : "short write");
    close(fd);
    return w == 2 ? 0 : -1;
}
