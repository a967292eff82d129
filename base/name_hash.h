/*
 * name_hash.h - the hash of instance and device names used by the small open-addressing tables
 * of delta.c, storage/name_map.c, linux_devcache.c and web/report_proc.c: 32-bit FNV-1a, cheap
 * for names of a few bytes and good enough for tables kept at most half full.
 */
#ifndef PERFLOG_NAME_HASH_H
#define PERFLOG_NAME_HASH_H

#include <stdint.h>

static inline uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

#endif
