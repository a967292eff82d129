/*
 * report_verdict_add.h - the report's `verdict` and `tail_verdict` (docs/report.md) from the
 * report's fetched series and its finished figures: turns them into the pure input of
 * report_verdict.h, once for the run and once for the tail.
 */
#ifndef PERFLOG_REPORT_VERDICT_ADD_H
#define PERFLOG_REPORT_VERDICT_ADD_H

#include "daemon/runs/report_verdict.h"
#include "storage/query/data.h"
#include "storage/query/series.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The counters the verdict reads besides the report's own, for its series query; some are only
 * collected by newer collectors (their rules say "not measured" without them). */
extern const char *const report_verdict_patterns[];
extern const size_t report_verdict_npatterns;

struct report_verdict_src {
    const struct series *s; /* the series of res, in its order */
    size_t ns;
    const struct data_result *res;
    const double *iv_s;         /* per point of res: its tick's interval, s */
    const double *tree_cpu_pct; /* per point of res, the run's process tree; NULL: none */
    const char *tree_top;       /* its busiest process by CPU ("gzip:42"), may be NULL */
    int64_t start_ms, end_ms, tail_to_ms;
    int ended; /* the run has ended: its tail has a verdict */
    /* The report of the newest earlier run labelled REPORT_CALIBRATION_LABEL (NULL: none): the
     * busier direction's peak second of each of its interfaces is that interface's ceiling
     * when it has no link speed (loopback, veth). */
    const json_t *calibration;
    int64_t calibration_id;
};

#define REPORT_CALIBRATION_LABEL "calibration"

/*
 * Add "verdict" and "tail_verdict" (null while the run has not ended) to report r, which must
 * already hold its payload, interfaces, process, throughput, headline and kernel sections.
 */
void report_verdict_add(json_t *r, const struct report_verdict_src *src);

#endif
