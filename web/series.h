/*
 * series.h - which counters a request names: counter path patterns resolved against the instances
 * the log knows (its `instances` table) and those of the newest tick in memory (a device that
 * appeared a second ago is not in the database yet).
 */
#ifndef PERFLOG_SERIES_H
#define PERFLOG_SERIES_H

#include "pattern.h"
#include "reader.h"
#include "sample.h"

#include <stddef.h>
#include <stdint.h>

/* One counter of one instance. */
struct series {
    int obj;                     /* enum object_id */
    size_t counter;              /* index into counter_objects[obj].counters */
    char inst[COUNTER_NAME_MAX]; /* "" for single-instance objects */
    int64_t inst_id;             /* id in the database, -1 if only in memory */
};

struct series_set {
    struct series *s;
    size_t n, cap;
};

/*
 * Add every counter matching one of pats[0..npat) to *set, without duplicates, in the order
 * object, instance (database order, then new ones), counter. `rd` and `latest` may be NULL.
 * Stops with -E2BIG past `max` series. Returns 0, -E2BIG, -ENOMEM or -EIO (database error).
 */
int series_resolve(struct reader *rd, const struct tick *latest, const struct pattern *pats,
                   size_t npat, size_t max, struct series_set *set);

void series_set_free(struct series_set *set); /* frees the array; the struct is reusable */

/* Format a series' path `\Object(Instance)\Counter` into buf; returns like snprintf. */
int series_path(const struct series *s, char *buf, size_t cap);

#endif
