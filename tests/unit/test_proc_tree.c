/*
 * test_proc_tree.c - the pure half of process following on Windows (collectors/windows/
 * proc_tree.c), run on Linux: which processes of a snapshot are followed (roots, descendants, an
 * orphan that stays followed, a stale parent pid that a newer process holds now, cycles), instance
 * names and FILETIME conversion.
 */
#include "collectors/model/counters.h"
#include "collectors/windows/proc_tree.h"
#include "testlib.h"

#include <string.h>

/* Creation times by pid for the callback; 0: cannot be known. Counts the calls. */
struct times {
    uint64_t t[64];
    int calls;
};

static int created_cb(void *ctx, struct proc_tree_entry *e)
{
    struct times *tm = ctx;

    tm->calls++;
    if (e->pid >= 64 || !tm->t[e->pid])
        return -1;
    e->created = tm->t[e->pid];
    return 0;
}

static void add(struct proc_tree_entry *e, size_t *n, uint32_t pid, uint32_t ppid)
{
    memset(&e[*n], 0, sizeof(e[0]));
    e[*n].pid = pid;
    e[*n].ppid = ppid;
    (*n)++;
}

static void test_tree(void)
{
    struct proc_tree_entry e[16];
    struct times tm = {{0}, 0};
    uint32_t roots[] = {8};
    size_t n = 0;

    /* 4 (explorer) -> 8 (root) -> 12 -> 20; 16 an unrelated child of 4; 24 a child of 12 */
    add(e, &n, 4, 0);
    add(e, &n, 8, 4);
    add(e, &n, 12, 8);
    add(e, &n, 16, 4);
    add(e, &n, 20, 12);
    add(e, &n, 24, 12);
    for (uint32_t p = 4; p <= 24; p += 4)
        tm.t[p] = 1000 + p;
    CHECK_INT((int)proc_tree_decide(e, n, roots, 1, created_cb, &tm), 4);
    CHECK_INT((int)e[0].root, 0);
    CHECK_INT((int)e[1].root, 8);
    CHECK_INT((int)e[2].root, 8);
    CHECK_INT((int)e[3].root, 0);
    CHECK_INT((int)e[4].root, 8);
    CHECK_INT((int)e[5].root, 8);
    /* Asked once for each checked child (12, 20, 24) and the root as a parent, not for 4 or 16. */
    CHECK_INT(tm.calls, 4);

    /* 12 exits: 20 and 24 stay followed (their root is still given); a new 28 whose stale parent
     * pid is 12 is not a descendant of anything followed. */
    memmove(&e[2], &e[3], 3 * sizeof(e[0]));
    n = 5;
    add(e, &n, 28, 12);
    tm.t[28] = 2000;
    CHECK_INT((int)proc_tree_decide(e, n, roots, 1, created_cb, &tm), 3);
    CHECK_INT((int)e[3].root, 8);
    CHECK_INT((int)e[4].root, 8);
    CHECK_INT((int)e[5].root, 0);

    /* No root given: nothing followed, and the previous roots are forgotten. */
    tm.calls = 0;
    CHECK_INT((int)proc_tree_decide(e, n, roots, 0, created_cb, &tm), 0);
    for (size_t i = 0; i < n; i++)
        CHECK_INT((int)e[i].root, 0);
    CHECK_INT(tm.calls, 0);
}

static void test_stale_parent(void)
{
    struct proc_tree_entry e[8];
    struct times tm = {{0}, 0};
    uint32_t roots[] = {40};
    size_t n = 0;

    /* 44 and 48 name 40 as their parent, but 44 is older than the process that holds pid 40 now:
     * the orphan of an earlier holder. 48 was created after it: a real child. */
    add(e, &n, 40, 4);
    add(e, &n, 44, 40);
    add(e, &n, 48, 40);
    tm.t[40] = 5000;
    tm.t[44] = 100;
    tm.t[48] = 5000; /* same instant: creation times are coarse */
    CHECK_INT((int)proc_tree_decide(e, n, roots, 1, created_cb, &tm), 2);
    CHECK_INT((int)e[0].root, 40);
    CHECK_INT((int)e[1].root, 0);
    CHECK_INT((int)e[2].root, 40);

    /* A child whose creation time cannot be known is not taken; a root whose creation time cannot
     * be known (access denied) has its children trusted. */
    n = 0;
    memset(&tm, 0, sizeof(tm));
    add(e, &n, 40, 4);
    add(e, &n, 44, 40);
    add(e, &n, 48, 40);
    tm.t[48] = 7;
    CHECK_INT((int)proc_tree_decide(e, n, roots, 1, created_cb, &tm), 2);
    CHECK_INT((int)e[1].root, 0);
    CHECK_INT((int)e[2].root, 40);
    /* Without a callback, entries with known times are still checked. */
    e[1].created = 1;
    e[2].created = 9;
    e[0].created = 5;
    e[1].root = e[2].root = 0;
    CHECK_INT((int)proc_tree_decide(e, n, roots, 1, NULL, NULL), 2);
    CHECK_INT((int)e[1].root, 0);
    CHECK_INT((int)e[2].root, 40);
}

static void test_cycle_and_two_roots(void)
{
    struct proc_tree_entry e[8];
    struct times tm = {{0}, 0};
    uint32_t roots[] = {8, 32};
    size_t n = 0;

    /* 12 and 16 name each other as parent (reused pids); 20 is its own parent; 32 is a root below
     * root 8 and is followed under itself; 36 a child of 32. */
    add(e, &n, 8, 0);
    add(e, &n, 12, 16);
    add(e, &n, 16, 12);
    add(e, &n, 20, 20);
    add(e, &n, 32, 8);
    add(e, &n, 36, 32);
    for (uint32_t p = 8; p <= 36; p += 4)
        tm.t[p] = p;
    CHECK_INT((int)proc_tree_decide(e, n, roots, 2, created_cb, &tm), 3);
    CHECK_INT((int)e[0].root, 8);
    CHECK_INT((int)e[1].root, 0);
    CHECK_INT((int)e[2].root, 0);
    CHECK_INT((int)e[3].root, 0);
    CHECK_INT((int)e[4].root, 32);
    CHECK_INT((int)e[5].root, 32);
}

static void test_names(void)
{
    char buf[COUNTER_NAME_MAX];
    char longname[100];

    CHECK_INT((int)proc_tree_instance_name("cmd.exe", 276, buf, sizeof(buf)), 7);
    CHECK_STR(buf, "cmd:276");
    CHECK_INT((int)proc_tree_instance_name("PING.EXE", 9, buf, sizeof(buf)), 6);
    CHECK_STR(buf, "PING:9");
    proc_tree_instance_name("tool.exe.bak", 1, buf, sizeof(buf));
    CHECK_STR(buf, "tool.exe.bak:1");
    proc_tree_instance_name("a(b)\\c.exe", 1, buf, sizeof(buf));
    CHECK_STR(buf, "a[b]_c:1");
    proc_tree_instance_name(".exe", 3, buf, sizeof(buf));
    CHECK_STR(buf, ":3");
    /* Cut to fit with the pid, never inside a UTF-8 character. */
    memset(longname, 'x', sizeof(longname));
    memcpy(longname + 51, "\xc3\xa9\xc3\xa9", 4);
    strcpy(longname + 90, ".exe");
    CHECK_INT((int)proc_tree_instance_name(longname, 4294967295u, buf, sizeof(buf)),
              COUNTER_NAME_MAX - 2);
    CHECK_INT((int)strlen(buf), COUNTER_NAME_MAX - 2);
    CHECK(strcmp(buf + strlen(buf) - 11, ":4294967295") == 0);
    CHECK_INT((int)proc_tree_instance_name("abc.exe", 12345, buf, 8), 0 + 7);
    CHECK_STR(buf, "a:12345");
    CHECK_INT((int)proc_tree_instance_name("abc.exe", 12345, buf, 6), 0);
    CHECK_STR(buf, "");
}

static void test_filetime(void)
{
    /* 2026-01-01T00:00:00Z = 1767225600 s after the epoch. */
    CHECK(proc_tree_filetime_to_unix_ms(116444736000000000ULL) == 0);
    CHECK(proc_tree_filetime_to_unix_ms(116444736000000000ULL + 17672256000000000ULL + 12345) ==
          1767225600001LL);
}

int main(void)
{
    test_tree();
    test_stale_parent();
    test_cycle_and_two_roots();
    test_names();
    test_filetime();
    return tl_done();
}
