/*
 * test_linux_mountwatch.c - mount table changes as the collector sees them (linux_mountwatch.h):
 * on the real /proc, by poll(2), with real mounts in a mount namespace of the test's own (needs
 * root: it fails, not skips, without it); and on a fixture's regular file, by its size and inode.
 */
#include "collectors/linux/linux_mountwatch.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static void test_procfs(void)
{
    char dir[] = "/tmp/perflog-mountwatch-XXXXXX";
    struct mountwatch *w;

    /* A namespace of our own, private, so the mounts below are seen by nobody else. */
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        fprintf(stderr, "cannot make a private mount namespace (needs root): %s\n",
                strerror(errno));
        CHECK(0);
        return;
    }
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    w = mountwatch_new("/proc/self/mounts");
    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_INT(mountwatch_changed(w), 1); /* the first call: probe */
    CHECK_INT(mountwatch_changed(w), 0);
    CHECK_INT(mountwatch_changed(w), 0);
    CHECK_INT(mount("perflog-test", dir, "tmpfs", 0, "size=1m"), 0);
    CHECK_INT(mountwatch_changed(w), 1);
    CHECK_INT(mountwatch_changed(w), 0); /* reported once */
    CHECK_INT(umount(dir), 0);
    CHECK_INT(mountwatch_changed(w), 1);
    CHECK_INT(mountwatch_changed(w), 0);
    mountwatch_free(w);
    rmdir(dir);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        exit(2);
}

static void test_regular_file(void)
{
    char dir[] = "/tmp/perflog-mountwatch-XXXXXX", path[PATH_MAX], tmp[PATH_MAX];
    struct mountwatch *w;

    if (!mkdtemp(dir))
        exit(2);
    snprintf(path, sizeof(path), "%s/mounts", dir);
    snprintf(tmp, sizeof(tmp), "%s/mounts.new", dir);
    /* Missing: never a change after the first call, until it appears. */
    w = mountwatch_new(path);
    CHECK(w != NULL);
    if (!w)
        exit(2);
    CHECK_INT(mountwatch_changed(w), 1);
    CHECK_INT(mountwatch_changed(w), 0);
    write_text(path, "proc /proc proc rw 0 0\n");
    CHECK_INT(mountwatch_changed(w), 1);
    CHECK_INT(mountwatch_changed(w), 0);
    write_text(path, "proc /proc proc rw 0 0\ntmpfs /run tmpfs rw 0 0\n"); /* size */
    CHECK_INT(mountwatch_changed(w), 1);
    CHECK_INT(mountwatch_changed(w), 0);
    write_text(tmp, "proc /proc proc rw 0 0\ntmpfs /srv tmpfs rw 0 0\n"); /* same size */
    CHECK_INT(rename(tmp, path), 0);                                      /* another inode */
    CHECK_INT(mountwatch_changed(w), 1);
    CHECK_INT(mountwatch_changed(w), 0);
    mountwatch_free(w);
    mountwatch_free(NULL);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    test_regular_file();
    test_procfs();
    return tl_done();
}
