/*
 * test_report_proc.c - a run's process tree (web/report_proc.c) from the ticks in memory: the
 * closure from the root's pid through the parents as first seen, processes of other runs and
 * outside the window left out, an orphan kept, and the restriction of an export's Process series.
 */
#include "collectors/model/delta.h"
#include "storage/query/live.h"
#include "storage/query/report_proc.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define T0 1796000000000LL

struct proc_row {
    const char *name;
    int pid, ppid;
};

/* A tick at `ms` with these Process rows. */
static void publish(struct live *l, struct delta_state *d, int64_t ms, const struct proc_row *rows,
                    size_t n)
{
    struct raw_sample s = {0};
    struct tick *t;

    for (size_t i = 0; i < n; i++) {
        struct raw_row *r = raw_object_add(&s.obj[OBJ_PROCESS], rows[i].name, strlen(rows[i].name));

        r->present = 1ull << PROC_PID | 1ull << PROC_PPID;
        r->v[PROC_PID] = (uint64_t)rows[i].pid;
        r->v[PROC_PPID] = (uint64_t)rows[i].ppid;
    }
    t = delta_tick(d, &s, ms, ms == T0 ? 0 : 1000, 0);
    CHECK(t != NULL);
    live_publish_ref(l, t);
    tick_free(t);
    raw_sample_free(&s);
}

static int has(const struct series_set *set, const char *inst)
{
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(set->s[i].inst, inst))
            return 1;
    return 0;
}

int main(void)
{
    static const struct proc_row t0[] = {
        {"sh:100", 100, 1}, {"cp:101", 101, 100}, {"other:200", 200, 1}, {"cron:300", 300, 1}};
    /* sh has exited: cp, an orphan now, is still in the tree by the parent it was first seen
     * with. gzip is cp's child. A process of another run has a child of its own. */
    static const struct proc_row t1[] = {{"cp:101", 101, 100},
                                         {"gzip:102", 102, 101},
                                         {"other:200", 200, 1},
                                         {"child:201", 201, 200}};
    /* After the window: a late child of sh's pid. */
    static const struct proc_row t3[] = {{"late:103", 103, 100}};
    static const char *const counters[] = {"IO Read Bytes/sec", "IO Write Bytes/sec", "No Such"};
    struct delta_state *d = delta_new();
    struct live *l = live_new(16);
    struct series_set set = {0};
    size_t nproc = 99;

    publish(l, d, T0, t0, 4);
    publish(l, d, T0 + 1000, t1, 4);
    publish(l, d, T0 + 3000, t3, 1);

    CHECK_INT(report_proc_series(NULL, l, 100, T0, T0 + 2000, counters, 3, &set, &nproc), 0);
    CHECK_INT(nproc, 3);
    CHECK_INT(set.n, 6); /* 3 processes x 2 known counters; the unknown name adds nothing */
    CHECK(has(&set, "sh:100") && has(&set, "cp:101") && has(&set, "gzip:102"));
    CHECK(!has(&set, "other:200") && !has(&set, "child:201") && !has(&set, "cron:300"));
    CHECK(!has(&set, "late:103"));
    for (size_t i = 0; i < set.n; i++) {
        CHECK_INT(set.s[i].obj, OBJ_PROCESS);
        CHECK_INT(set.s[i].inst_id, -1); /* only in memory */
    }
    series_set_free(&set);

    /* The other run's tree; a pid with no rows; no root at all. */
    CHECK_INT(report_proc_series(NULL, l, 200, T0, T0 + 2000, counters, 1, &set, &nproc), 0);
    CHECK_INT(nproc, 2);
    CHECK(has(&set, "other:200") && has(&set, "child:201") && set.n == 2);
    series_set_free(&set);
    CHECK_INT(report_proc_series(NULL, l, 999, T0, T0 + 2000, counters, 1, &set, &nproc), 0);
    CHECK_INT(nproc, 0);
    CHECK_INT(set.n, 0);
    CHECK_INT(report_proc_series(NULL, l, 0, T0, T0 + 2000, counters, 1, &set, &nproc), 0);
    CHECK_INT(nproc, 0);

    /* An export's set: its Process series (every process the patterns matched) are replaced by
     * the same counters of the run's tree; other series stay. */
    set.s = calloc(3, sizeof(*set.s));
    set.cap = 3;
    set.n = 3;
    set.s[0] = (struct series){.obj = OBJ_MEMORY, .counter = 0};
    set.s[1] = (struct series){.obj = OBJ_PROCESS, .counter = 0};
    snprintf(set.s[1].inst, sizeof(set.s[1].inst), "cron:300");
    set.s[2] = (struct series){.obj = OBJ_PROCESS, .counter = 0};
    snprintf(set.s[2].inst, sizeof(set.s[2].inst), "other:200");
    CHECK_INT(report_proc_restrict(NULL, l, 100, T0, T0 + 2000, &set), 0);
    CHECK_INT(set.n, 4); /* Memory + 3 processes x counter 0 */
    CHECK_INT(set.s[0].obj, OBJ_MEMORY);
    CHECK(has(&set, "sh:100") && has(&set, "gzip:102") && !has(&set, "cron:300"));
    series_set_free(&set);

    live_free(l);
    delta_free(d);
    return tl_done();
}
