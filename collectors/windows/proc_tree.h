/*
 * proc_tree.h - the pure half of following a run's processes on Windows (proc_windows.c): which
 * processes of a snapshot are followed, and how a process is named and dated. No Windows headers,
 * so it is unit-tested on Linux (tests/unit/test_proc_tree.c).
 *
 * Windows keeps a process's parent pid after the parent exits and hands that pid out again, so a
 * parent link is trusted only when the child was created no earlier than the process that holds
 * the parent pid now (an older "child" is the orphan of an earlier holder of that pid).
 */
#ifndef PERFLOG_PROC_TREE_H
#define PERFLOG_PROC_TREE_H

#include <stddef.h>
#include <stdint.h>

/* One process of a snapshot. The caller fills pid, ppid, root and created; state is private. */
struct proc_tree_entry {
    uint32_t pid;
    uint32_t ppid;    /* the parent pid as first seen */
    uint32_t root;    /* in: the root it was followed under at the last decision, 0: none;
                       * out: the root it is followed under now, 0: not followed */
    uint64_t created; /* creation time in any increasing unit; 0: not known yet */
    unsigned char state;
};

/*
 * Ask for e->created (an entry whose parent link needs checking). Returns 0 with e->created set,
 * or -1 when it cannot be known (the process is gone or may not be opened).
 */
typedef int (*proc_tree_created_fn)(void *ctx, struct proc_tree_entry *e);

/*
 * Decide which of the `n` entries (sorted by pid, pids distinct) are followed under `roots`: a
 * root itself; a process followed before under a root still given (whatever became of its
 * parent); a process whose parent is followed and was created no later than it (when the parent's
 * creation time cannot be known, the link is trusted). `created` is called at most once per entry
 * whose created is 0, only where a parent link is checked; an entry it fails for is not followed
 * through its parent. Sets every entry's root; returns the number followed. Pure but for `created`.
 */
size_t proc_tree_decide(struct proc_tree_entry *e, size_t n, const uint32_t *roots, size_t nroots,
                        proc_tree_created_fn created, void *ctx);

/*
 * The instance name "name:pid" of a process whose executable is `exe` ("cmd.exe"): the name
 * without a final ".exe" (any case), as Process V2 names its instances, with PDH's replacements
 * for '(', ')', '\' and '/' (pdh_map_instance_name), cut on a UTF-8 boundary so the whole fits in
 * `cap` (at most COUNTER_NAME_MAX) bytes with ":pid". Returns the length written.
 */
size_t proc_tree_instance_name(const char *exe, uint32_t pid, char *out, size_t cap);

/* A FILETIME (100 ns units since 1601-01-01 UTC) as ms since the Unix epoch. */
int64_t proc_tree_filetime_to_unix_ms(uint64_t filetime);

#endif
