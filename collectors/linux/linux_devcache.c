/*
 * linux_devcache.c - per-name state of the Linux collector, mark and sweep; see linux_devcache.h.
 *
 * Entries sit in one array; an open-addressing table of indexes finds them by name. Sweeping
 * compacts the array and re-indexes it, which only happens when a name vanished.
 */
#include "collectors/linux/linux_devcache.h"

#include "base/grow.h"
#include "base/name_hash.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct linux_devcache {
    struct linux_devcache_entry *entries;
    size_t n, cap;
    uint32_t *slots; /* entry index + 1; 0 is empty. nslots is a power of two, >= 2 * n */
    size_t nslots;
    uint32_t pass;
    size_t kept; /* attributes' descriptors open */
};

static void slots_insert(uint32_t *slots, size_t nslots, uint32_t hash, size_t index)
{
    size_t i = hash & (nslots - 1);

    while (slots[i])
        i = (i + 1) & (nslots - 1);
    slots[i] = (uint32_t)index + 1;
}

/* Rebuild the index with at least `want` slots. Returns 0 or -1 (out of memory, c unchanged). */
static int slots_rebuild(struct linux_devcache *c, size_t want)
{
    size_t nslots = 16;
    uint32_t *slots;

    while (nslots < want)
        nslots *= 2;
    slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t e = 0; e < c->n; e++)
        slots_insert(slots, nslots, c->entries[e].hash, e);
    free(c->slots);
    c->slots = slots;
    c->nslots = nslots;
    return 0;
}

struct linux_devcache *linux_devcache_new(void)
{
    struct linux_devcache *c = calloc(1, sizeof(*c));

    if (c && slots_rebuild(c, 16) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

static void entry_drop_fds(struct linux_devcache *c, struct linux_devcache_entry *e)
{
    linux_devcache_drop(c, &e->speed_mbps);
    linux_devcache_drop(c, &e->mtu);
}

void linux_devcache_free(struct linux_devcache *c)
{
    if (!c)
        return;
    for (size_t e = 0; e < c->n; e++)
        entry_drop_fds(c, &c->entries[e]);
    free(c->entries);
    free(c->slots);
    free(c);
}

void linux_devcache_begin(struct linux_devcache *c)
{
    c->pass++;
}

static struct linux_devcache_entry *find(struct linux_devcache *c, const char *name, uint32_t h)
{
    for (size_t i = h & (c->nslots - 1); c->slots[i]; i = (i + 1) & (c->nslots - 1)) {
        struct linux_devcache_entry *e = &c->entries[c->slots[i] - 1];

        if (e->hash == h && strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

struct linux_devcache_entry *linux_devcache_find(struct linux_devcache *c, const char *name)
{
    return find(c, name, name_hash(name));
}

struct linux_devcache_entry *linux_devcache_get(struct linux_devcache *c, const char *name,
                                                int *is_new)
{
    uint32_t h = name_hash(name);
    struct linux_devcache_entry *e = find(c, name, h);

    if (e) {
        e->pass = c->pass;
        *is_new = 0;
        return e;
    }
    if (grow_array(&c->entries, &c->cap, c->n, sizeof(*c->entries), 16) < 0)
        return NULL;
    if ((c->n + 1) * 2 > c->nslots && slots_rebuild(c, (c->n + 1) * 2) < 0)
        return NULL;
    e = &c->entries[c->n];
    memset(e, 0, sizeof(*e));
    memcpy(e->name, name, strnlen(name, sizeof(e->name) - 1));
    e->hash = h;
    e->pass = c->pass;
    slots_insert(c->slots, c->nslots, h, c->n);
    c->n++;
    *is_new = 1;
    return e;
}

void linux_devcache_sweep(struct linux_devcache *c)
{
    size_t w = 0;

    for (size_t r = 0; r < c->n; r++)
        if (c->entries[r].pass == c->pass) {
            if (w != r)
                c->entries[w] = c->entries[r];
            w++;
        } else {
            entry_drop_fds(c, &c->entries[r]);
        }
    if (w == c->n)
        return;
    c->n = w;
    /* Re-index in the same table: it was big enough before, so it is now (it never shrinks). */
    memset(c->slots, 0, c->nslots * sizeof(*c->slots));
    for (size_t e = 0; e < c->n; e++)
        slots_insert(c->slots, c->nslots, c->entries[e].hash, e);
}

size_t linux_devcache_count(const struct linux_devcache *c)
{
    return c->n;
}

int linux_devcache_keep(struct linux_devcache *c, struct dev_attr *a, int fd, int64_t now_ms,
                        size_t max)
{
    linux_devcache_drop(c, a);
    if (c->kept >= max) {
        close(fd);
        return -1;
    }
    a->fd = fd;
    a->opened_ms = now_ms;
    a->kept = 1;
    c->kept++;
    return 0;
}

void linux_devcache_drop(struct linux_devcache *c, struct dev_attr *a)
{
    if (!a->kept)
        return;
    close(a->fd);
    a->kept = 0;
    c->kept--;
}

size_t linux_devcache_kept(const struct linux_devcache *c)
{
    return c->kept;
}
