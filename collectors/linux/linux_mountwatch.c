/*
 * linux_mountwatch.c - mount table changes by poll(2) on procfs, by stat(2) elsewhere; see
 * linux_mountwatch.h.
 */
#include "collectors/linux/linux_mountwatch.h"

#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

struct mountwatch {
    char *path;
    int fd;           /* procfs: open for poll(2); -1 otherwise */
    int primed;       /* the first call has said "changed" */
    struct stat last; /* a regular file's identity at the last call */
    int have_last;
};

struct mountwatch *mountwatch_new(const char *path)
{
    struct mountwatch *w = calloc(1, sizeof(*w));
    struct statfs fs;

    if (!w || !(w->path = strdup(path))) {
        free(w);
        return NULL;
    }
    w->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (w->fd >= 0 && (fstatfs(w->fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC)) {
        close(w->fd);
        w->fd = -1;
    }
    log_debug("%s: mount changes seen by %s", path, w->fd >= 0 ? "poll" : "stat");
    return w;
}

void mountwatch_free(struct mountwatch *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w);
}

/* A regular file (a fixture) changed: another inode, size or modification time. */
static int stat_changed(struct mountwatch *w)
{
    struct stat sb;
    int changed;

    if (stat(w->path, &sb) < 0)
        return 0;
    changed = !w->have_last || sb.st_ino != w->last.st_ino || sb.st_size != w->last.st_size ||
              sb.st_mtim.tv_sec != w->last.st_mtim.tv_sec ||
              sb.st_mtim.tv_nsec != w->last.st_mtim.tv_nsec;
    w->last = sb;
    w->have_last = 1;
    return changed;
}

int mountwatch_changed(struct mountwatch *w)
{
    struct pollfd pfd;
    int changed = 0;

    if (w->fd >= 0) {
        pfd.fd = w->fd;
        pfd.events = POLLPRI;
        pfd.revents = 0;
        /* The kernel clears the event as it reports it: the next poll is quiet again. */
        changed = poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLPRI | POLLERR));
    } else {
        changed = stat_changed(w);
    }
    if (!w->primed) {
        w->primed = 1;
        return 1;
    }
    return changed;
}
