/*
 * test_series.c - counter patterns resolved to series (web/series.c) against the newest tick in
 * memory, without a database: instance and counter globs, order, duplicates, single-instance
 * objects, the series limit, and extra PDH paths.
 */
#include "collectors/model/delta.h"
#include "storage/query/series.h"
#include "testlib.h"

#include <errno.h>
#include <string.h>

static struct tick *latest_tick(struct delta_state *d)
{
    static const char *const disks[] = {"vda", "sdb"};
    struct raw_sample s = {0};
    struct raw_extra *e;
    struct raw_row *r;
    struct tick *t;

    for (size_t i = 0; i < 2; i++) {
        r = raw_object_add(&s.obj[OBJ_DISK], disks[i], strlen(disks[i]));
        r->flags = RAW_IN_TOTAL;
        r->present = (1ull << DISK_NFIELDS) - 1;
    }
    r = raw_object_add(&s.obj[OBJ_MEMORY], "", 0);
    r->present = 1ull << MEM_DIRTY_KB;
    r->v[MEM_DIRTY_KB] = 100;
    e = raw_extra_add(&s.extra, "\\LogicalDisk(C:)\\% Free Space");
    e->value = 42.5;
    e->valid = 1;
    t = delta_tick(d, &s, 1796000000000, 0, 0);
    CHECK(t != NULL && t->n_extras == 1); /* delta_tick carries the extras over */
    raw_sample_free(&s);
    return t;
}

/* Resolve the NULL-terminated patterns into *set (emptied first), without a database. */
static int resolve_list(const struct tick *t, size_t max, struct series_set *set,
                        const char *const *pats)
{
    struct pattern p[4];
    const char *why;
    size_t n = 0;

    series_set_free(set);
    for (; pats[n]; n++)
        CHECK_INT(pattern_parse(pats[n], strlen(pats[n]), &p[n], &why), 0);
    return series_resolve(NULL, t, p, n, max, set);
}

static void check_path(const struct series *s, const char *want)
{
    char buf[PDH_PATH_MAX];

    series_path(s, buf, sizeof(buf));
    CHECK_STR(buf, want);
}

int main(void)
{
    struct delta_state *d = delta_new();
    struct tick *t = latest_tick(d);
    struct series_set set = {0};
    struct pdh_path_parts parts;

    /* Every instance of the tick, in its order (_Total last, as delta adds it), inst_id -1: only
     * in memory. */
    CHECK_INT(resolve_list(t, 100, &set,
                           (const char *const[]){"\\PhysicalDisk(*)\\Disk Read Bytes/sec", NULL}),
              0);
    CHECK_INT(set.n, 3);
    check_path(&set.s[0], "\\PhysicalDisk(vda)\\Disk Read Bytes/sec");
    check_path(&set.s[1], "\\PhysicalDisk(sdb)\\Disk Read Bytes/sec");
    check_path(&set.s[2], "\\PhysicalDisk(_Total)\\Disk Read Bytes/sec");
    CHECK_INT(set.s[0].inst_id, -1);
    CHECK_STR(series_unit(&set.s[0]), "bytes/s");
    CHECK_STR(series_kind(&set.s[0]), "rate");

    /* Globs on both parts; counters in the table's order. */
    CHECK_INT(resolve_list(t, 100, &set,
                           (const char *const[]){"\\PhysicalDisk(sd?)\\Disk * Bytes/sec", NULL}),
              0);
    CHECK_INT(set.n, 2);
    check_path(&set.s[0], "\\PhysicalDisk(sdb)\\Disk Read Bytes/sec");
    check_path(&set.s[1], "\\PhysicalDisk(sdb)\\Disk Write Bytes/sec");

    /* Two patterns naming one series give it once, in the first pattern's place. */
    CHECK_INT(resolve_list(t, 100, &set,
                           (const char *const[]){"\\PhysicalDisk(sdb)\\Disk Read Bytes/sec",
                                                 "\\PhysicalDisk(*)\\Disk Read Bytes/sec", NULL}),
              0);
    CHECK_INT(set.n, 3);
    check_path(&set.s[0], "\\PhysicalDisk(sdb)\\Disk Read Bytes/sec");
    check_path(&set.s[1], "\\PhysicalDisk(vda)\\Disk Read Bytes/sec");

    /* A single-instance object matches only a pattern without an instance. */
    CHECK_INT(resolve_list(t, 100, &set, (const char *const[]){"\\Memory\\Dirty Bytes", NULL}), 0);
    CHECK_INT(set.n, 1);
    check_path(&set.s[0], "\\Memory\\Dirty Bytes");
    CHECK_STR(set.s[0].inst, "");
    CHECK_INT(resolve_list(t, 100, &set, (const char *const[]){"\\Memory(*)\\Dirty Bytes", NULL}),
              0);
    CHECK_INT(set.n, 0);

    /* Past the limit: -E2BIG, not a cut list passed off as whole. */
    CHECK_INT(resolve_list(t, 5, &set, (const char *const[]){"\\PhysicalDisk(*)\\*", NULL}),
              -E2BIG);

    /* The extra PDH path of the tick: its own kind of series, unit "" and kind "value". */
    CHECK_INT(resolve_list(t, 100, &set, (const char *const[]){"\\LogicalDisk(*)\\*", NULL}), 0);
    CHECK_INT(set.n, 1);
    CHECK_INT(set.s[0].obj, SERIES_PDH);
    check_path(&set.s[0], "\\LogicalDisk(C:)\\% Free Space");
    CHECK_STR(series_unit(&set.s[0]), "");
    CHECK_STR(series_kind(&set.s[0]), "value");
    series_parts(&set.s[0], &parts);
    CHECK_STR(parts.object, "LogicalDisk");
    CHECK_STR(parts.instance, "C:");
    CHECK_STR(parts.counter, "% Free Space");
    CHECK_INT(resolve_list(t, 100, &set, (const char *const[]){"\\LogicalDisk\\*", NULL}), 0);
    CHECK_INT(set.n, 0); /* the path has an instance; the pattern has none */

    /* Nothing known: no series, no error. */
    CHECK_INT(resolve_list(NULL, 100, &set, (const char *const[]){"\\PhysicalDisk(*)\\*", NULL}),
              0);
    CHECK_INT(set.n, 0);

    series_set_free(&set);
    tick_free(t);
    delta_free(d);
    return tl_done();
}
