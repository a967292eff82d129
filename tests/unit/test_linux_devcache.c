/*
 * test_linux_devcache.c - the per-name cache of the Linux collector: lookups, growth, and mark
 * and sweep (a name not seen in a pass is forgotten, and is new again when it comes back).
 */
#include "linux_devcache.h"
#include "testlib.h"

#include <stdio.h>

static void test_mark_and_sweep(void)
{
    struct dev_cache *c = dev_cache_new();
    struct dev_entry *e;
    int is_new = -1;

    CHECK(c != NULL);
    if (!c)
        return;
    dev_cache_begin(c);
    e = dev_cache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 1);
    if (e) {
        CHECK_STR(e->name, "sda");
        CHECK_INT(e->flags, 0);
        e->flags = 3;
    }
    e = dev_cache_get(c, "sdb", &is_new);
    CHECK(e != NULL && is_new == 1);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 2);

    /* Second pass sees sda only: sdb is forgotten, sda keeps what its owner stored. */
    dev_cache_begin(c);
    e = dev_cache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 0);
    CHECK(e && e->flags == 3);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 1);

    /* sdb comes back: new again, zeroed. */
    dev_cache_begin(c);
    e = dev_cache_get(c, "sdb", &is_new);
    CHECK(e != NULL && is_new == 1);
    CHECK(e && e->flags == 0);
    e = dev_cache_get(c, "sda", &is_new);
    CHECK(e != NULL && is_new == 0 && e->flags == 3);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 2);

    /* A pass that sees nothing forgets everything. */
    dev_cache_begin(c);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 0);
    dev_cache_free(c);
    dev_cache_free(NULL);
}

/* Many names: the index grows, and every entry is still found after sweeping half of them. */
static void test_many(void)
{
    struct dev_cache *c = dev_cache_new();
    char name[32];
    int is_new, bad = 0;

    if (!c)
        return;
    dev_cache_begin(c);
    for (int i = 0; i < 3000; i++) {
        struct dev_entry *e;
        snprintf(name, sizeof(name), "dev%d", i);
        e = dev_cache_get(c, name, &is_new);
        if (!e || !is_new)
            bad++;
        else
            e->flags = (unsigned)i;
    }
    CHECK_INT(bad, 0);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 3000);

    dev_cache_begin(c);
    for (int i = 0; i < 3000; i += 2) {
        struct dev_entry *e;
        snprintf(name, sizeof(name), "dev%d", i);
        e = dev_cache_get(c, name, &is_new);
        if (!e || is_new || e->flags != (unsigned)i)
            bad++;
    }
    CHECK_INT(bad, 0);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 1500);

    dev_cache_begin(c);
    for (int i = 0; i < 3000; i++) {
        struct dev_entry *e;
        snprintf(name, sizeof(name), "dev%d", i);
        e = dev_cache_get(c, name, &is_new);
        if (!e || is_new != (i % 2) || (!is_new && e->flags != (unsigned)i))
            bad++;
    }
    CHECK_INT(bad, 0);
    dev_cache_sweep(c);
    CHECK_INT(dev_cache_count(c), 3000);
    dev_cache_free(c);
}

int main(void)
{
    test_mark_and_sweep();
    test_many();
    return tl_done();
}
