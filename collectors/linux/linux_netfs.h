/*
 * linux_netfs.h - pure parsers of the network file system clients' statistics: the cifs client's
 * /proc/fs/cifs/Stats (SMB Client Shares) and the NFS client's part of /proc/self/mountstats (NFS
 * Client). Private to collectors/linux/.
 *
 * Both follow linux_parse.h: [buf, buf + len) need not end in '\n', rows are appended to a
 * caller-owned raw_object, malformed lines are counted in the linux_parse_status, and nothing is
 * logged. Rows are flagged RAW_IN_TOTAL, so delta.c adds a "_Total" of every share or mount.
 * Thread-safe.
 *
 * A share or device name holding a NUL byte is a malformed line: names are C strings from here on.
 *
 * Each returns the number of shares or NFS mounts it found (rows may be fewer: see below), so the
 * collector can tell "nothing to read until the mount table changes" (0) from "read it every
 * tick", or -ENOMEM (the rows appended so far stay; the caller drops them).
 */
#ifndef PERFLOG_LINUX_NETFS_H
#define PERFLOG_LINUX_NETFS_H

#include "collectors/linux/linux_parse.h"

#include <stddef.h>

/*
 * /proc/fs/cifs/Stats -> OBJ_SMB, one row per tree connection "N) \\server\share" (the text after
 * "N) " up to a tab: a disconnected share is followed by "\tDISCONNECTED"). SMB1 shares print
 * "Reads: N Bytes: B" and "Writes: N Bytes: B"; SMB2 and SMB3 shares print "Bytes read: B  Bytes
 * written: B" and "Reads: N total F failed" (fs/smb/client/smb1ops.c and smb2ops.c,
 * print_stats). The request counts are atomic_t printed with %d, so a count past 2^31 is read
 * as the negative number it prints and kept modulo 2^32. Two tree connections to the same share
 * (other credentials) are summed into one row. Lines before the first share (the sessions and
 * buffers) and lines it does not know are skipped without complaint.
 */
int netfs_parse_cifs_stats(const char *buf, size_t len, struct raw_object *out,
                           struct linux_parse_status *st);

/*
 * /proc/self/mountstats -> OBJ_NFS, one row per mount of fstype nfs or nfs4, named by its device
 * as the kernel prints it ("server:/export", spaces as \040). Its "bytes:" line gives the server
 * and application bytes (fs/nfs/super.c nfs_show_stats()); the lines after "per-op statistics"
 * ("NAME: ops trans timeouts sent recv queue rtt execute [errors]", net/sunrpc/stats.c) are
 * summed into ops, rtt_ms and exe_ms. A device listed again (a bind mount shows the same
 * superblock's counters) is counted once, by its first mount. Other file systems' lines are
 * skipped.
 */
int netfs_parse_mountstats(const char *buf, size_t len, struct raw_object *out,
                           struct linux_parse_status *st);

#endif
