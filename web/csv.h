/*
 * csv.h - PDH-CSV 4.0, the counter log format of perfmon, logman, relog and typeperf (design
 * section 6). Pure formatting into an sbuf; the only outside state read is the process's time zone
 * (TZ, /etc/localtime) for local timestamps and the header's zone cell.
 *
 *   "(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\HOST\PhysicalDisk(vda)\Disk Bytes/sec"
 *   "06/09/2020 14:33:11.352","0.000000"
 *   "06/09/2020 14:33:12.368"," "
 *
 * Every cell quoted (a '"' inside is doubled), CRLF line ends, timestamps MM/DD/YYYY HH:MM:SS.mmm,
 * values with six decimals, " " for a missing value. TSV is the same with tabs and the header
 * "(PDH-TSV 4.0)". Files and HTTP exports name the zone as logman/relog do: its Windows name where
 * the IANA zone maps to one ("Pacific Standard Time", or "Pacific Daylight Time" when daylight
 * saving is in force at the first row) and its bias in minutes, UTC = local + bias (480 for PST,
 * 420 for PDT, -60 for CET); "(Coordinated Universal Time)(0)" with UTC. typeperf's console output
 * has the first cell "(PDH-CSV 4.0)" alone.
 */
#ifndef PERFLOG_CSV_H
#define PERFLOG_CSV_H

#include "sbuf.h"

#include <stdint.h>

enum csv_format { CSV_COMMA, CSV_TAB };

struct csv_zone {
    char name[96]; /* "Pacific Standard Time", "Coordinated Universal Time", ... */
    int bias_min;  /* UTC = local + bias */
};

/*
 * The zone cell for a log whose first row is at t_ms: UTC when `utc`, else the local zone (TZ
 * or /etc/localtime) at that instant. A zone without a Windows name keeps its IANA name (or, as a
 * last resort, the abbreviation localtime gives, e.g. "CET"). Thread-safe.
 */
void csv_zone_at(int utc, int64_t t_ms, struct csv_zone *out);

struct tz_zone;

/* The zone cell for a log in zone z (tz.h) whose first row is at t_ms: a tz database name is
 * written as csv_zone_at writes the local zone of that name; a fixed offset as "UTC+05:30".
 * Thread-safe. */
void csv_zone_in(const struct tz_zone *z, int64_t t_ms, struct csv_zone *out);

/* csv_time_cell in zone z. Thread-safe. */
void csv_time_cell_in(struct sbuf *b, int64_t t_ms, const struct tz_zone *z);

/* The header's first cell: "(PDH-CSV 4.0) (NAME)(BIAS)", or "(PDH-CSV 4.0)" when zone is NULL
 * (typeperf's console form); "(PDH-TSV 4.0)..." for CSV_TAB. No separator, no line end. */
void csv_first_cell(struct sbuf *b, enum csv_format f, const struct csv_zone *zone);

/* A counter column: separator, then "\\HOST\Object(Instance)\Counter" quoted. `path` is the
 * counter path ("\PhysicalDisk(vda)\Disk Bytes/sec"; a missing leading '\' is supplied); a NULL
 * or empty host writes the path alone, without "\\HOST". */
void csv_path_cell(struct sbuf *b, enum csv_format f, const char *host, const char *path);

/* A row's first cell: the time t_ms as "MM/DD/YYYY HH:MM:SS.mmm", local or UTC, quoted. */
void csv_time_cell(struct sbuf *b, int64_t t_ms, int utc);

/* A value cell: separator, then "%.6f" quoted, or " " for NaN (missing) and for +-infinity.
 * A negative zero (or a negative value that rounds to it) prints as "0.000000". */
void csv_value_cell(struct sbuf *b, enum csv_format f, double v);

/* End a line: CRLF. */
void csv_end_line(struct sbuf *b);

/* Format t_ms as MM/DD/YYYY HH:MM:SS.mmm (local or UTC) into out (>= 24 bytes). Thread-safe. */
void csv_format_time(int64_t t_ms, int utc, char *out, size_t cap);

#endif
