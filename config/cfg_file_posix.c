/*
 * cfg_file_posix.c - cfg_file_open on POSIX: open with O_NONBLOCK, so a FIFO does not block the
 * open (open(2): "O_NONBLOCK ... the open() for reading-only returns without delay"), then fstat
 * the descriptor itself, so what is judged is what is read.
 */
#include "base/log.h"
#include "config/cfg_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    return "not a regular file";
}

int cfg_file_open(const char *path, FILE **out, char *err, size_t errlen)
{
    char eb[128];
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), flags;
    FILE *f;

    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, log_strerror(errno, eb, sizeof(eb)));
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot stat: %s", path, log_strerror(errno, eb, sizeof(eb)));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: is %s, not a JSON file (a configuration is a regular file)",
                 path, kind(st.st_mode));
        goto fail;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, log_strerror(errno, eb, sizeof(eb)));
        goto fail;
    }
    *out = f;
    return 0;
fail:
    close(fd);
    return -1;
}
