/*
 * claims.h - what a copy or benchmark tool says it did, read from its normal output: robocopy's
 * summary (`Bytes :`, `Speed :`, localized too), dd's last line, rsync's summary, --stats and
 * --info=progress2 lines, fio's normal text, terse and JSON output, pv's progress line, diskspd's
 * text tables and smbclient's "(average N kb/s)". docs/claims.md lists the formats. A tool that
 * prints nothing parseable has no claim. Pure.
 */
#ifndef PERFLOG_CLAIMS_H
#define PERFLOG_CLAIMS_H

#include <stddef.h>
#include <stdint.h>

struct tool_claim {
    char name[16];              /* "robocopy", "dd", "rsync", "fio", "pv", "diskspd", "smbclient" */
    double claimed_bytes_per_s; /* < 0: the tool printed no speed */
    int64_t claimed_bytes;      /* < 0: no byte count */
    double claimed_seconds;     /* < 0: no duration */
};

/* Parse `len` bytes of a tool's stdout+stderr. Returns 1 and fills *out when a known tool's summary
 * was found (the last one, if several), 0 when none was. Thread-safe. */
int claims_parse(const char *text, size_t len, struct tool_claim *out);

#endif
