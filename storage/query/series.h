/*
 * series.h - which counters a request names: counter path patterns resolved against the instances
 * the log knows (its `instances` table) and those of the newest tick in memory (a device that
 * appeared a second ago is not in the database yet), and against the extra PDH paths of a Windows
 * config (pdh_counters: the pdh_paths table and the newest tick's extras).
 */
#ifndef PERFLOG_SERIES_H
#define PERFLOG_SERIES_H

#include "collectors/model/pattern.h"
#include "collectors/model/sample.h"
#include "storage/reader.h"

#include <stddef.h>
#include <stdint.h>

#define SERIES_PDH (-1) /* struct series.obj of an extra PDH series */

/* One counter of one instance, or one extra PDH path. */
struct series {
    int obj;                     /* enum object_id, or SERIES_PDH */
    size_t counter;              /* index into counter_objects[obj].counters; 0 for SERIES_PDH */
    char inst[COUNTER_NAME_MAX]; /* "" for single-instance objects and SERIES_PDH */
    int64_t inst_id;             /* id in the database (instances, or pdh_paths for SERIES_PDH),
                                  * -1 if only in memory */
    char pdh_path[PDH_PATH_MAX]; /* SERIES_PDH: the path, "\Object(Instance)\Counter" */
};

struct series_set {
    struct series *s;
    size_t n, cap;
};

/*
 * Add every counter matching one of pats[0..npat) to *set, without duplicates, in the order
 * object, instance (database order, then new ones), counter; then the extra PDH paths that match
 * (database order, then new ones). `rd` and `latest` may be NULL. Stops with -E2BIG past `max`
 * series. Returns 0, -E2BIG, -ENOMEM or -EIO (database error).
 */
int series_resolve(struct reader *rd, const struct tick *latest, const struct pattern *pats,
                   size_t npat, size_t max, struct series_set *set);

void series_set_free(struct series_set *set); /* frees the array; the struct is reusable */

/* Format a series' path `\Object(Instance)\Counter` into buf; returns like snprintf. */
int series_path(const struct series *s, char *buf, size_t cap);

/* The unit and kind the API gives a series: its counter's, or for an extra PDH series "" (PDH
 * says no unit) and "value" (PDH's formatted value, as typeperf prints it). */
const char *series_unit(const struct series *s);
const char *series_kind(const struct series *s);

/* The parts of a series' path into *out (instance "" for a single-instance object). */
void series_parts(const struct series *s, struct pdh_path_parts *out);

#endif
