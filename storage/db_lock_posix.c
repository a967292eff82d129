/*
 * db_lock_posix.c - db_lock.h with flock(2): the lock belongs to the open file description, so it
 * is not lost when some other descriptor of the file is closed (as an fcntl lock would be), and
 * O_CLOEXEC keeps it from leaking into child processes.
 */
#include "db_lock.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct db_lock {
    int fd;
};

/* The pid the holder wrote, or -1. The holder writes it just after taking the lock, so a reader
 * that comes in between waits a little for it. */
static long holder_pid(int fd)
{
    struct timespec step = {0, 10000000L};

    for (int tries = 0; tries < 20; tries++) {
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof(buf), 0);
        long pid = n > 0 ? db_lock_parse_pid(buf, (size_t)n) : -1;

        if (pid > 0)
            return pid;
        nanosleep(&step, NULL);
    }
    return -1;
}

/*
 * Why db_path cannot be a database, before its lock file is made beside it: a directory (SQLite
 * would say only "unable to open database file", after PATH.lock was created next to it), or a
 * parent directory that is not there. 0 when neither.
 */
static int path_problem(const char *db_path, char *err, size_t errlen)
{
    const char *slash = strrchr(db_path, '/');
    struct stat st;
    char dir[4096];

    if (stat(db_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory, not a database file", db_path);
        return -EISDIR;
    }
    if (!slash || slash == db_path)
        return 0;
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - db_path), db_path);
    if (stat(dir, &st) != 0 && errno == ENOENT) {
        snprintf(err, errlen, "%s: no such directory: %s", db_path, dir);
        return -ENOENT;
    }
    return 0;
}

int db_lock_take(const char *db_path, struct db_lock **out, char *err, size_t errlen)
{
    char path[4200], pid[32];
    struct db_lock *l;
    int fd, len, e;

    if ((e = path_problem(db_path, err, errlen)) < 0)
        return e;
    snprintf(path, sizeof(path), "%s.lock", db_path);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        e = errno;
        snprintf(err, errlen, "%s: cannot open the lock file %s: %s", db_path, path, strerror(e));
        return -e;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        long holder;

        e = errno;
        if (e != EWOULDBLOCK) {
            snprintf(err, errlen, "%s: cannot lock %s: %s", db_path, path, strerror(e));
            close(fd);
            return -e;
        }
        holder = holder_pid(fd);
        db_lock_busy_message(err, errlen, db_path, path, holder);
        close(fd);
        return -EBUSY;
    }
    len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    /* Not fatal (a full disk must not stop a start): the pid only names us to a second daemon. */
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        log_warnx("cannot write the pid into the lock file %s: %s", path, strerror(errno));
    l = malloc(sizeof(*l));
    if (!l) {
        snprintf(err, errlen, "%s: out of memory", db_path);
        close(fd);
        return -ENOMEM;
    }
    l->fd = fd;
    *out = l;
    return 0;
}

void db_lock_release(struct db_lock *l)
{
    if (!l)
        return;
    /* Emptied before the unlock, so nobody reads our pid once we are gone; the file is left in
     * place: unlinking it would let a daemon lock the old inode while another creates a new one. */
    if (ftruncate(l->fd, 0) < 0)
        log_debug("lock file: cannot empty it: %s", strerror(errno));
    close(l->fd);
    free(l);
}
