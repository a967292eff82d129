/*
 * config_keys.h - internal to config/: the table of keys, the checks of their values, and the
 * error messages that name where a value came from. config.c reads text and parses it with
 * Jansson; this module judges what was parsed.
 */
#ifndef PERFLOG_CONFIG_KEYS_H
#define PERFLOG_CONFIG_KEYS_H

#include "base/printf_attr.h"
#include "config/config.h"

#include <jansson.h>
#include <stddef.h>

/* Where values come from: a JSON text (name, buf, len) or the command line (origin, key). */
struct cfg_src {
    const char *name; /* file name, NULL for the command line */
    const char *buf;  /* the JSON text, for positions */
    size_t len;
    const char *origin; /* command-line option ("--interval"), or NULL */
    const char *key;    /* command line: the key being set */
    char *err;
    size_t errlen;
    /* A file's check goes on after an error: *nerr counts them, and err gets one line each, up
     * to CFG_MAX_ERRORS. NULL (the command line): one message, the first. */
    size_t *nerr;
};

/*
 * Report one message and return -1: into s->err, or, when s->nerr is set, as one more line of it
 * (whole lines only: one that does not fit, or past the CFG_MAX_ERRORS-th, is only counted). The
 * prefix is "NAME:LINE:COLUMN: " for a file (LINE 0 leaves the position out) or "ORIGIN: " for
 * the command line.
 */
int cfg_src_error_at(const struct cfg_src *s, int line, int col, const char *fmt, ...)
    PERFLOG_PRINTF(4, 5);

/*
 * The same, positioned at the member `path` (or its nearest ancestor found in the text) and, when
 * with_key is set, naming it: "NAME:L:C: key 'retention.raw_days': ...".
 */
int cfg_src_error(const struct cfg_src *s, const char *const *path, size_t depth, int with_key,
                  const char *fmt, ...) PERFLOG_PRINTF(5, 6);

/* "retention.raw_days", "disks.exclude[3]"; control bytes shown as '?'. */
void cfg_path_format(const char *const *path, size_t depth, char *out, size_t cap);

/* Apply the parsed top-level object `root` to *c, then check the keys that depend on each
 * other. Every key is judged, so each error of the file is reported (cfg_src_error_at). Returns
 * 0, or -1 with the messages in s->err and *c partly changed (the caller works on a copy). */
int cfg_keys_apply(const struct cfg_src *s, json_t *root, struct cfg *c);

/* Free one glob string of a struct cfg (the built-in defaults are static and are not freed). */
void cfg_glob_release(char *glob);

/* Set the scalar key s->key from command-line text, then the cross checks. Returns 0 or -1. */
int cfg_keys_set(const struct cfg_src *s, const char *value, struct cfg *c);

#endif
