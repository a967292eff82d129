/*
 * timeparse.h - the time and duration forms of the HTTP API (docs/design.md §5). Pure functions,
 * no I/O, no clock reads: the caller passes "now".
 *
 * Times: RFC 3339 ("2026-11-29T18:00:00Z", "2026-11-29T18:00:00.250+01:00", "t" or " " as the
 * separator, fraction up to nanoseconds, kept to the millisecond), Unix seconds ("1795974000",
 * "1795974000.5", up to 9 fraction digits), "now", and offsets relative to now: "-10m", "now-1h",
 * "now+30s", "-600" (a bare signed number is seconds relative to now). Units: ms, s, m, h, d, w.
 * Durations (the `step` parameter): "60" (seconds), "500ms", "10s", "1m", "1h", "1d", "1w".
 */
#ifndef PERFLOG_TIMEPARSE_H
#define PERFLOG_TIMEPARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse a time of s[0..len) (not NUL-terminated; no surrounding spaces allowed) relative to
 * `now_ms` (UTC ms since the epoch). Returns 0 and sets *out_ms, or -EINVAL (bad syntax,
 * impossible date such as Feb 30, fields out of range) or -ERANGE (outside years 1970..9999)
 * with *out_ms untouched. Thread-safe.
 *
 * Details: "now" is lowercase. An offset is a whole number with an optional unit ("now-1.5h" and
 * "now - 1h" are -EINVAL); a unit needs a sign or "now" in front ("1h" alone is -EINVAL). A leap
 * second (ss = 60) is -EINVAL. An offset too large for the arithmetic, like the result outside
 * 1970-01-01T00:00:00.000Z..9999-12-31T23:59:59.999Z, is -ERANGE.
 */
int tp_parse_time(const char *s, size_t len, int64_t now_ms, int64_t *out_ms);

/*
 * The local time zone for tp_parse_time_local, as a function (so this file stays pure): the
 * offset in minutes (local = UTC + offset) in force at the UTC instant utc_ms.
 */
struct tp_zone {
    int (*offset_min)(int64_t utc_ms, void *arg);
    void *arg;
};

/*
 * tp_parse_time plus the local-time forms people type, read in `zone`:
 *   "2026-12-01 19:55:00", "2026-12-01T19:55" (seconds and fraction optional, no zone suffix),
 *   "2026-12-01" (midnight), "19:50" / "19:50:30" (today), "today", "yesterday" (midnight) and
 *   "today 19:00" / "yesterday 19:00".
 * A local time that a DST change skips or repeats is read with the offset of one side of the
 * change (which one is not promised). Everything
 * tp_parse_time accepts means the same here. Returns as tp_parse_time. Thread-safe if the zone
 * function is.
 */
int tp_parse_time_local(const char *s, size_t len, int64_t now_ms, const struct tp_zone *zone,
                        int64_t *out_ms);

/* ms as ISO 8601 with the offset off_min ("2026-12-01T19:55:00.000+01:00", "...Z" for 0 when
 * utc_z) into buf (at least 30 bytes). Returns buf. */
char *tp_format_offset(int64_t ms, int off_min, int utc_z, char *buf, size_t cap);

/* Parse a positive duration (> 0, at most 10 years). Returns 0 and sets *out_ms, or -EINVAL /
 * -ERANGE with *out_ms untouched. Thread-safe.
 * A whole number with an optional unit, seconds by default. Zero ("0", "0s") is -EINVAL; "10 years"
 * is 3653 days, and anything longer, or too large to compute, is -ERANGE. */
int tp_parse_duration(const char *s, size_t len, int64_t *out_ms);

/* Format ms since the epoch as RFC 3339 UTC with milliseconds ("2026-11-29T18:00:00.000Z") into
 * buf (at least 25 bytes). Returns buf. Any int64_t is safe: outside years 0..9999 the year gets
 * more digits or a sign, and a short buf is truncated and NUL-terminated like snprintf. */
char *tp_format_utc(int64_t ms, char *buf, size_t cap);

#endif
