/*
 * pdh_user.h - the extra PDH paths of the config (collector.h: pdh_counters), read as PDH formats
 * them, into the extras of a raw sample (sample.h: struct raw_extra). Windows only.
 *
 * A configured path without a wildcard is one series, named as configured (machine prefix
 * dropped). A path with '*' is expanded by PDH (on its localized form, or as written when PDH
 * cannot translate it) into one series per path PDH lists, named by pdh_path_name(); the
 * expansion is redone with the collector's (mark and sweep), so a new disk shows up. A path PDH
 * rejects is logged once by name (pdh_util_note_path) and tried again at the next expansion; the
 * others keep working. A series that is one of perflog's own counters (same object and counter,
 * pdh_path_builtin) is not read twice: said once in the log, and skipped. The same series
 * reached through two configured paths is read once.
 */
#ifndef PERFLOG_PDH_USER_H
#define PERFLOG_PDH_USER_H

#include "collectors/model/sample.h"

#include <pdh.h>
#include <stddef.h>

struct pdh_user;

/* For the configured paths[0..n) (borrowed: they must outlive the result). NULL on out of
 * memory. */
struct pdh_user *pdh_user_new(const char *const *paths, size_t n);

/* Add what is new to `query`, mark what is still there, remove what is gone. */
void pdh_user_expand(struct pdh_user *u, PDH_HQUERY query);

/* After PdhCollectQueryData: append one reading per series to `out` (a CStatus other than valid
 * data gives no value). */
void pdh_user_read(struct pdh_user *u, struct raw_extras *out);

/* Frees the memory; the counters go with their query (PdhCloseQuery). Accepts NULL. */
void pdh_user_free(struct pdh_user *u);

#endif
