/*
 * pdh_util.h - the PDH helpers the Windows collector's two halves share: perflog's own counters
 * (pdh_collector.c) and the extra paths of the config (pdh_user.c). Windows only.
 */
#ifndef PERFLOG_PDH_UTIL_H
#define PERFLOG_PDH_UTIL_H

#include <pdh.h>
#include <stddef.h>
#include <windows.h>

#define PDH_UTIL_PATH_MAX 1024 /* UTF-8 or UTF-16 units of a counter path we build or read */

/* What is known of one configured path across expansions. */
struct path_state {
    int rejected;        /* PDH refused the path at the last try */
    int reported;        /* its refusal was logged (until it works again) */
    int expand_reported; /* a failed expansion was logged */
};

/* UTF-16 -> UTF-8 ("" when it cannot be converted), and back (0, or -1). */
void pdh_util_utf8(const WCHAR *w, char *out, size_t cap);
int pdh_util_wide(const char *s, WCHAR *out, size_t cap);

/* "no such counter, 0xC0000BB9", or "PDH status 0x..." for a status without a text. */
void pdh_util_status_text(PDH_STATUS st, char *out, size_t cap);

/* Log a path PDH rejected (st != ERROR_SUCCESS) once, by name; a path that works again is said to
 * be back. */
void pdh_util_note_path(struct path_state *ps, const char *path, PDH_STATUS st);

/* The localized full path of English `path` (PDH's own translation, through a probe counter added
 * to `query` and removed again), heap-allocated, or NULL with the status in *st. */
WCHAR *pdh_util_localized(PDH_HQUERY query, const WCHAR *path, PDH_STATUS *st);

/* The multi-string of paths that PdhExpandWildCardPathW gives for `path` (heap-allocated, ends
 * with an empty string), or NULL with the status in *st. */
WCHAR *pdh_util_expand(const WCHAR *path, PDH_STATUS *st);

#endif
