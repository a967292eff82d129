/*
 * linux_devcache.h - what the Linux collector remembers per device or interface name between
 * ticks (its classification, its sysfs values), with mark and sweep: every pass marks the names it
 * sees, and the sweep at its end forgets the others, so a device that comes back is looked at
 * afresh. Private to collectors/linux/. Not thread-safe: the collector's thread owns it.
 */
#ifndef PERFLOG_LINUX_DEVCACHE_H
#define PERFLOG_LINUX_DEVCACHE_H

#include "collectors/model/counters.h"

#include <stddef.h>
#include <stdint.h>

/* A value read from an optional sysfs file, with the state of its logging and, while `kept`, the
 * file's descriptor (see linux_devcache_keep). */
struct dev_attr {
    int64_t value;
    int64_t opened_ms;     /* monotonic time `fd` was opened */
    int fd;                /* valid only while `kept` */
    unsigned char kept;    /* fd is open and the cache closes it when the entry is forgotten */
    unsigned char present; /* value holds the last good reading */
    unsigned char failing; /* the last reading failed and was logged: stay quiet until it works */
};

/* What is known about one name. The owner uses the fields it needs; a new entry is zeroed. */
struct linux_devcache_entry {
    char name[COUNTER_NAME_MAX];
    uint32_t hash;
    uint32_t pass;         /* the last pass that saw it */
    unsigned flags;        /* the owner's classification bits */
    int64_t next_probe_ms; /* monotonic time of the next sysfs reading */
    struct dev_attr speed_mbps, mtu;
};

struct linux_devcache;

struct linux_devcache *linux_devcache_new(void);    /* NULL on out of memory */
void linux_devcache_free(struct linux_devcache *c); /* accepts NULL */

/* Start a pass: every name not passed to linux_devcache_get before linux_devcache_sweep will be
 * forgotten. */
void linux_devcache_begin(struct linux_devcache *c);

/*
 * The entry for `name` (NUL-terminated, at most COUNTER_NAME_MAX-1 bytes), marked as seen in this
 * pass. *is_new is set to 1 when it was just added (zeroed but for name). The pointer is valid
 * until the next linux_devcache_get or linux_devcache_sweep. NULL on out of memory.
 */
struct linux_devcache_entry *linux_devcache_get(struct linux_devcache *c, const char *name,
                                                int *is_new);

/* The entry for `name` if there is one, without marking it seen or adding it; NULL otherwise.
 * Valid as linux_devcache_get's. */
struct linux_devcache_entry *linux_devcache_find(struct linux_devcache *c, const char *name);

/* End a pass: forget every entry the pass did not see. */
void linux_devcache_sweep(struct linux_devcache *c);

size_t linux_devcache_count(const struct linux_devcache *c);

/*
 * Descriptors kept open in the entries' attributes: `a` (of an entry of `c`) takes `fd`, opened at
 * `now_ms`, and the cache closes it when the entry is forgotten or the cache freed, or when
 * linux_devcache_drop closes it first. linux_devcache_keep returns -1, with fd closed, when `max`
 * are kept already.
 */
int linux_devcache_keep(struct linux_devcache *c, struct dev_attr *a, int fd, int64_t now_ms,
                        size_t max);
void linux_devcache_drop(struct linux_devcache *c, struct dev_attr *a);
size_t linux_devcache_kept(const struct linux_devcache *c);

#endif
