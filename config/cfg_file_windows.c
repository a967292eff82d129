/*
 * cfg_file_windows.c - cfg_file_open on Windows: the file system holds no FIFOs, but a path may
 * name a directory or a device (CON, \\.\pipe\x), which fstat tells from a regular file.
 */
#include "base/log.h"
#include "config/cfg_file.h"

#include <errno.h>
#include <sys/stat.h>

int cfg_file_open(const char *path, FILE **out, char *err, size_t errlen)
{
    char eb[128];
    struct _stat64 st = {0};
    FILE *f = fopen(path, "rb");

    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, log_strerror(errno, eb, sizeof(eb)));
        return -1;
    }
    if (_fstat64(_fileno(f), &st) != 0 || !(st.st_mode & _S_IFREG)) {
        snprintf(err, errlen, "%s: is %s, not a JSON file (a configuration is a regular file)",
                 path, (st.st_mode & _S_IFDIR) ? "a directory" : "not a regular file");
        fclose(f);
        return -1;
    }
    *out = f;
    return 0;
}
