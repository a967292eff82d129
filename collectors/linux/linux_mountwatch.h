/*
 * linux_mountwatch.h - has the mount table changed? The cheap trigger for re-probing the files
 * that exist only while a file system client is in use (/proc/fs/cifs/Stats, an NFS mount's
 * lines in /proc/self/mountstats). Private to collectors/linux/.
 *
 * On procfs, /proc/self/mounts reports POLLPRI | POLLERR to poll(2) once after every change of
 * the reader's mount namespace (fs/proc_namespace.c mounts_poll(); proc(5)): one poll with a zero
 * timeout per tick, no read, no parsing. A fixture tree's mounts file is a regular file, for
 * which poll always says "readable": there a change is a change of its inode, size or mtime.
 * A mounts file that cannot be opened never reports a change.
 */
#ifndef PERFLOG_LINUX_MOUNTWATCH_H
#define PERFLOG_LINUX_MOUNTWATCH_H

struct mountwatch;

/* Watch the mounts file at `path` (ROOT/proc/self/mounts). NULL on out of memory only. */
struct mountwatch *mountwatch_new(const char *path);
void mountwatch_free(struct mountwatch *w); /* accepts NULL */

/* 1 when the mount table changed since the last call (the first call says 1), else 0. Not
 * thread-safe: one collector owns a watch. */
int mountwatch_changed(struct mountwatch *w);

#endif
