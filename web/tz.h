/*
 * tz.h - a time zone the export was asked for (tz=Europe/Paris, tz=+05:30), converted without the
 * C library's one global zone: setenv("TZ") and tzset() change every thread's localtime at once,
 * which a daemon serving several exports in several zones at a time cannot have. A named zone is
 * read from the tz database (TZif, RFC 8536) into a tz_zone of its own; after that, tz_offset_at
 * is a pure lookup on immutable data, safe from any number of threads.
 */
#ifndef PERFLOG_TZ_H
#define PERFLOG_TZ_H

#include <stddef.h>
#include <stdint.h>

#define TZ_NAME_MAX 64

struct tz_zone;

/*
 * Is `name` shaped like a zone of the tz database ("Europe/Paris", "America/Argentina/Salta",
 * "Etc/GMT+5", "UTC")? Components of letters, digits, '_', '-' and '+', separated by single '/',
 * none starting with '.' or '-', at most TZ_NAME_MAX bytes: so no absolute path, no "..", nothing
 * that leaves the database's directory. 1 or 0.
 */
int tz_valid_name(const char *name);

/* "+HH:MM" or "-HH:MM" (00:00 to 14:00 either way) as seconds east of UTC. 0 or -EINVAL. */
int tz_parse_offset(const char *s, int32_t *east_s);

/* A zone of a fixed offset, named "UTC+05:30" (or "UTC" for 0). 0 or -ENOMEM. */
int tz_fixed(int32_t east_s, struct tz_zone **out);

/* A zone from the TZif text buf[0..len) (versions 1 to 4; the footer's POSIX rule for instants
 * after the last transition), called `name`. 0, -EINVAL when it is not a usable TZif file (or
 * one with leap seconds), -ENOMEM. Pure. */
int tz_from_tzif(const char *name, const unsigned char *buf, size_t len, struct tz_zone **out);

/*
 * "±HH:MM", or a name of the tz database (under $TZDIR, else /usr/share/zoneinfo; none on
 * Windows). 0 with *out (free with tz_free), -EINVAL for a malformed name or a file that is not
 * a zone, -ENOENT for a zone the database does not have, -ENOMEM. Thread-safe.
 */
int tz_load(const char *spec, struct tz_zone **out);

/* The platform's part of tz_load: the bytes of zone `name` (already tz_valid_name). 0 with *buf
 * (free it), -ENOENT, -EINVAL (not a regular file, or too large), -ENOMEM. tz_file_*.c. */
int tz_read_zone_file(const char *name, unsigned char **buf, size_t *len);

/* Seconds east of UTC at the instant t_s (Unix seconds), *is_dst whether daylight saving time is
 * in force (is_dst may be NULL). Pure, thread-safe. */
int32_t tz_offset_at(const struct tz_zone *z, int64_t t_s, int *is_dst);

/* The zone's name ("Europe/Paris", "UTC+05:30"), and whether it is a tz database name. */
const char *tz_name(const struct tz_zone *z);
int tz_is_database_name(const struct tz_zone *z);

/* A copy that owns its data (NULL when out of memory), and the release (accepts NULL). */
struct tz_zone *tz_copy(const struct tz_zone *z);
void tz_free(struct tz_zone *z);

#endif
