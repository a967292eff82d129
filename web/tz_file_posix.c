/*
 * tz_file_posix.c - a zone's TZif bytes from the tz database directory: $TZDIR (as the C library
 * reads it), else /usr/share/zoneinfo. The name was checked by tz_valid_name, so the path stays
 * inside the directory; only a regular file is read.
 */
#include "tz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ZONE_BYTES (256 << 10) /* the largest zones are a few KiB */

int tz_read_zone_file(const char *name, unsigned char **buf, size_t *len)
{
    const char *dir = getenv("TZDIR");
    char path[512];
    struct stat st;
    unsigned char *b = NULL;
    size_t n = 0;
    int fd, rc = 0;

    if (!dir || !*dir)
        dir = "/usr/share/zoneinfo";
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return -EINVAL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EINVAL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_ZONE_BYTES)
        rc = -EINVAL;
    else if (!(b = malloc((size_t)st.st_size + 1)))
        rc = -ENOMEM;
    while (rc == 0 && n < (size_t)st.st_size) {
        ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
        if (r <= 0)
            rc = r < 0 && errno == EINTR ? 0 : -EINVAL;
        else
            n += (size_t)r;
    }
    close(fd);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *buf = b;
    *len = n;
    return 0;
}
