/*
 * cli_os_posix.c - cli_os.h with sigaction, open_memstream, isatty and nftw.
 */
#include "cli_os.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
