/*
 * name_map.c - name -> id hash map (FNV-1a, linear probing, at most half full); see name_map.h.
 */
#include "storage/name_map.h"

#include "base/name_hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void name_map_clear(struct name_map *m)
{
    for (size_t i = 0; i < m->nslots; i++)
        free(m->slots[i].name);
    free(m->slots);
    m->slots = NULL;
    m->nslots = m->n = 0;
}

int64_t name_map_get(const struct name_map *m, const char *name)
{
    if (!m->nslots)
        return -1;
    for (size_t i = name_hash(name) & (m->nslots - 1);; i = (i + 1) & (m->nslots - 1)) {
        if (!m->slots[i].name)
            return -1;
        if (strcmp(m->slots[i].name, name) == 0)
            return m->slots[i].id;
    }
}

int name_map_put(struct name_map *m, const char *name, int64_t id)
{
    if ((m->n + 1) * 2 > m->nslots) {
        struct name_map bigger = {0};
        bigger.nslots = m->nslots ? m->nslots * 2 : 64;
        bigger.slots = calloc(bigger.nslots, sizeof(*bigger.slots));
        if (!bigger.slots)
            return -ENOMEM;
        for (size_t i = 0; i < m->nslots; i++) {
            if (!m->slots[i].name)
                continue;
            size_t j = name_hash(m->slots[i].name) & (bigger.nslots - 1);
            while (bigger.slots[j].name)
                j = (j + 1) & (bigger.nslots - 1);
            bigger.slots[j] = m->slots[i];
            bigger.n++;
        }
        free(m->slots);
        *m = bigger;
    }
    size_t j = name_hash(name) & (m->nslots - 1);
    while (m->slots[j].name)
        j = (j + 1) & (m->nslots - 1);
    m->slots[j].name = strdup(name);
    if (!m->slots[j].name)
        return -ENOMEM;
    m->slots[j].id = id;
    m->n++;
    return 0;
}
