/*
 * name_map.h - name -> database id, an open-addressing hash map, so a tick costs no SQL lookups
 * once its instances (or extra PDH paths) are known. One thread at a time (the writer's).
 */
#ifndef PERFLOG_NAME_MAP_H
#define PERFLOG_NAME_MAP_H

#include <stddef.h>
#include <stdint.h>

struct name_map_entry {
    char *name;
    int64_t id;
};

/* Zero-initialized is empty. */
struct name_map {
    struct name_map_entry *slots;
    size_t nslots, n;
};

/* The id stored for `name`, or -1. */
int64_t name_map_get(const struct name_map *m, const char *name);
/* Store `name` (copied) -> id; `name` must not be there yet. Returns 0 or -ENOMEM. */
int name_map_put(struct name_map *m, const char *name, int64_t id);
/* Forget every entry and free the map's memory; the map stays usable. */
void name_map_clear(struct name_map *m);

#endif
