/*
 * test_linux_devcache.c - the per-name cache of the Linux collector: lookups, growth, and mark
 * and sweep (a name not seen in a pass is forgotten, and is new again when it comes back; a find
 * does not count as seeing it).
 */
#include "collectors/linux/linux_devcache.h"
#include "testlib.h"

#include <stdio.h>

static void test_mark_and_sweep(void)
{
    struct linux_devcache *c = linux_devcache_new();
    struct linux_devcache_entry *e;
    int is_new = -1;

    CHECK(c != NULL);
    if (!c)
        return;
    linux_devcache_begin(c);
    e = linux_devcache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 1);
    if (e) {
        CHECK_STR(e->name, "sda");
        CHECK_INT(e->flags, 0);
        e->flags = 3;
    }
    e = linux_devcache_get(c, "sdb", &is_new);
    CHECK(e != NULL && is_new == 1);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 2);

    /* Second pass sees sda only: sdb is forgotten, sda keeps what its owner stored. */
    linux_devcache_begin(c);
    e = linux_devcache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 0);
    CHECK(e && e->flags == 3);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 1);

    /* sdb comes back: new again, zeroed. */
    linux_devcache_begin(c);
    e = linux_devcache_get(c, "sdb", &is_new);
    CHECK(e != NULL && is_new == 1);
    CHECK(e && e->flags == 0);
    e = linux_devcache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 0 && e->flags == 3);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 2);

    /* find neither adds a name nor marks one seen: a pass that only finds sdb forgets it. */
    CHECK(linux_devcache_find(c, "sdz") == NULL);
    CHECK_INT(linux_devcache_count(c), 2);
    linux_devcache_begin(c);
    e = linux_devcache_find(c, "sda");
    CHECK(e != NULL && e->flags == 3);
    e = linux_devcache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 0);
    CHECK(linux_devcache_find(c, "sdb") != NULL);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 1);
    CHECK(linux_devcache_find(c, "sdb") == NULL);

    /* A pass that sees nothing forgets everything. */
    linux_devcache_begin(c);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 0);
    linux_devcache_free(c);
    linux_devcache_free(NULL);
}

/* Many names: the index grows, and every entry is still found after sweeping half of them. */
static void test_many(void)
{
    struct linux_devcache *c = linux_devcache_new();
    char name[32];
    int is_new, bad = 0;

    if (!c)
        return;
    linux_devcache_begin(c);
    for (int i = 0; i < 3000; i++) {
        struct linux_devcache_entry *e;
        snprintf(name, sizeof(name), "dev%d", i);
        e = linux_devcache_get(c, name, &is_new);
        if (!e || !is_new)
            bad++;
        else
            e->flags = (unsigned)i;
    }
    CHECK_INT(bad, 0);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 3000);

    linux_devcache_begin(c);
    for (int i = 0; i < 3000; i += 2) {
        struct linux_devcache_entry *e;
        snprintf(name, sizeof(name), "dev%d", i);
        e = linux_devcache_get(c, name, &is_new);
        if (!e || is_new || e->flags != (unsigned)i)
            bad++;
    }
    CHECK_INT(bad, 0);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 1500);

    linux_devcache_begin(c);
    for (int i = 0; i < 3000; i++) {
        struct linux_devcache_entry *e;
        snprintf(name, sizeof(name), "dev%d", i);
        e = linux_devcache_get(c, name, &is_new);
        if (!e || is_new != (i % 2) || (!is_new && e->flags != (unsigned)i))
            bad++;
    }
    CHECK_INT(bad, 0);
    linux_devcache_sweep(c);
    CHECK_INT(linux_devcache_count(c), 3000);
    linux_devcache_free(c);
}

int main(void)
{
    test_mark_and_sweep();
    test_many();
    return tl_done();
}
