/*
 * pdh_path.h - the names of extra PDH series (collector.h: pdh_counters), on every platform.
 *
 * An extra series is one concrete PDH path "\Object(Instance)\Counter" ("\Object\Counter" for a
 * single-instance object), without the "\\MACHINE" prefix PDH may put in front. The Windows
 * collector names the series it reads with these functions; storage splits the names into the
 * columns of pdh_paths and the API matches patterns against the parts, so every side cuts a path
 * the same way. Pure; thread-safe.
 *
 * Cutting rule (PDH's, "Specifying a Counter Path"): the counter is what follows the last '\';
 * the object runs from the first '\' to the first '(' or to that last '\'; the instance runs
 * from that '(' to the ')' just before the last '\', so an instance may hold parentheses itself.
 */
#ifndef PERFLOG_PDH_PATH_H
#define PERFLOG_PDH_PATH_H

#include <stddef.h>

#define PDH_PATH_MAX 256 /* bytes of an extra series' path, NUL included */

struct pdh_path_parts {
    char object[PDH_PATH_MAX];
    char instance[PDH_PATH_MAX]; /* "" for a single-instance object */
    char counter[PDH_PATH_MAX];
};

/* Cut `path` (a leading "\\MACHINE" is skipped) into *out. Returns 0, or -EINVAL when it is not
 * "\Object(Instance)\Counter" or "\Object\Counter" with non-empty parts (*out then undefined). */
int pdh_path_split(const char *path, struct pdh_path_parts *out);

/* Write "\Object(Instance)\Counter" (no "(...)" when the instance is "") into out. Returns 0, or
 * -ENAMETOOLONG when it needs more than cap bytes (out then holds "" when cap > 0). */
int pdh_path_join(const struct pdh_path_parts *p, char *out, size_t cap);

/* 1 when object and counter name one of perflog's own counters (counters.h), compared without
 * regard to ASCII case as PDH compares names: such a path is stored once, as perflog's own. */
int pdh_path_builtin(const char *object, const char *counter);

/* 1 when s holds PDH's wildcard '*'. */
int pdh_path_has_wildcard(const char *s);

/*
 * The name of the series that PDH's expansion `expanded` (a localized full path, maybe with a
 * machine prefix) of the configured English path `configured` stands for: each part as configured
 * where it has no wildcard (so a series keeps its English name on every display language), as
 * PDH listed it where it has one. Returns 0, -EINVAL (a path
 * that does not cut) or -ENAMETOOLONG (the name needs PDH_PATH_MAX bytes or more).
 */
int pdh_path_name(const char *configured, const char *expanded, char *out, size_t cap);

#endif
