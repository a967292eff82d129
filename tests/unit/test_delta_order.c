/*
 * test_delta_order.c - delta_tick pairs each row with the previous reading's row of the same
 * name whatever the order: rows in the same order, reordered, one gone and one new, and a name
 * listed twice (the first of the two counts, as the previous reading's index has it).
 */
#include "collectors/model/delta.h"
#include "testlib.h"

#include <string.h>

/* A reading of PhysicalDisk rows `names` with rd_ios `v` (the other fields absent). */
static void reading(struct raw_sample *s, const char *const *names, const uint64_t *v, size_t n)
{
    raw_sample_clear(s);
    for (size_t i = 0; i < n; i++) {
        struct raw_row *r = raw_object_add(&s->obj[OBJ_DISK], names[i], strlen(names[i]));

        r->v[DISK_RD_IOS] = v[i];
        r->present = 1ull << DISK_RD_IOS;
    }
}

/* rd_ios delta of row `name` (the first of that name) in tick t, or -1 when it has none. */
static int64_t rd(const struct tick *t, const char *name)
{
    for (size_t r = 0; r < t->obj[OBJ_DISK].n; r++) {
        const struct tick_row *row = &t->obj[OBJ_DISK].rows[r];

        if (strcmp(row->name, name) == 0)
            return row->null_mask & (1ull << DISK_RD_IOS) ? -1 : row->v[DISK_RD_IOS];
    }
    return -2;
}

static struct tick *step(struct delta_state *d, struct raw_sample *s, const char *const *names,
                         const uint64_t *v, size_t n)
{
    reading(s, names, v, n);
    return delta_tick(d, s, 0, 1000, 0);
}

int main(void)
{
    struct delta_state *d = delta_new();
    struct raw_sample s = {0};
    struct tick *t;
    const char *ab[] = {"a", "b"}, *ba[] = {"b", "a"}, *bc[] = {"b", "c"}, *cbb[] = {"c", "b", "b"};
    const char *bc2[] = {"b", "c"};

    t = step(d, &s, ab, (uint64_t[]){10, 20}, 2);
    CHECK_INT(rd(t, "a"), -1); /* a first reading has no delta */
    tick_free(t);
    t = step(d, &s, ab, (uint64_t[]){15, 27}, 2); /* the same order */
    CHECK_INT(rd(t, "a"), 5);
    CHECK_INT(rd(t, "b"), 7);
    tick_free(t);
    t = step(d, &s, ab, (uint64_t[]){16, 30}, 2); /* again, on the kept index */
    CHECK_INT(rd(t, "a"), 1);
    CHECK_INT(rd(t, "b"), 3);
    tick_free(t);
    t = step(d, &s, ba, (uint64_t[]){40, 20}, 2); /* reordered */
    CHECK_INT(rd(t, "b"), 10);
    CHECK_INT(rd(t, "a"), 4);
    tick_free(t);
    t = step(d, &s, bc, (uint64_t[]){41, 7}, 2); /* a gone, c new, b moved up */
    CHECK_INT(rd(t, "b"), 1);
    CHECK_INT(rd(t, "c"), -1);
    tick_free(t);
    t = step(d, &s, cbb, (uint64_t[]){9, 50, 60}, 3); /* b twice */
    CHECK_INT(rd(t, "c"), 2);
    CHECK_INT(rd(t, "b"), 9);
    CHECK_INT(t->obj[OBJ_DISK].rows[2].v[DISK_RD_IOS], 19);
    tick_free(t);
    t = step(d, &s, bc2, (uint64_t[]){55, 10}, 2); /* after the duplicate: the first b counts */
    CHECK_INT(rd(t, "b"), 5);
    CHECK_INT(rd(t, "c"), 1);
    tick_free(t);
    t = step(d, &s, bc2, (uint64_t[]){56, 12}, 2); /* and the same order after that */
    CHECK_INT(rd(t, "b"), 1);
    CHECK_INT(rd(t, "c"), 2);
    tick_free(t);
    raw_sample_free(&s);
    delta_free(d);
    return tl_done();
}
