/*
 * report_verdict.h - what limited a copy run: the report's `verdict` and `tail_verdict`
 * (docs/report.md, "The verdict"). Pure: the window's per-second series, named by their counter
 * paths, and a few figures of the report in, a JSON verdict out. A rule whose counter is not in
 * the input says "not measured" in the evidence instead of guessing, so a counter that a newer
 * collector adds is used as soon as its series is passed in. Thread-safe; keeps no state.
 */
#ifndef PERFLOG_REPORT_VERDICT_H
#define PERFLOG_REPORT_VERDICT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* One per-second series: v[i] belongs to verdict_in.t_ms[i]; NAN where there is no value. */
struct verdict_series {
    const char *path; /* "\\Object(Instance)\\Counter", or "\\Object\\Counter" */
    const double *v;
};

/* The measured ceiling of an interface without a link speed (loopback, veth). */
struct verdict_ceiling {
    const char *inst;
    double bytes_per_s; /* the busier direction's peak second of the calibration run */
    const char *source; /* how it was measured, for the evidence: "calibration run 4" */
};

struct verdict_in {
    const int64_t *t_ms; /* the ticks, sorted; each covers (t - iv_s, t] */
    const double *iv_s;  /* per tick, its interval in s (NULL: 1 s each) */
    size_t n;
    int64_t from_ms, to_ms; /* the window: a tick counts when its interval overlaps it */
    const struct verdict_series *s;
    size_t ns;
    /* The run's process tree: its summed % Processor Time per tick (100 = one core), and the
     * name of its busiest process. NULL: not followed. */
    const double *tree_cpu_pct;
    const char *tree_top;
    double tree_io_bytes; /* the tree's read + write system call bytes in the window; NAN */
    const struct verdict_ceiling *ceil;
    size_t nceil;
    /* Whole-run figures (NAN: unknown or not the run window). */
    double files, payload_bytes, packets; /* packets: the window's, loopback left out */
    double tail_ms;                       /* the tail after the run, for the run window */
    /* The kernel's thresholds read at the start (bytes; NAN unknown), used when the
     * \Memory\Dirty Threshold Bytes series is not in the input. */
    double dirty_threshold_bytes, dirty_background_threshold_bytes;
};

/* The thresholds of the rules (docs/report.md lists them). */
#define VERDICT_BUSY          0.90 /* disk busy, wire share, core busy, tool at one core */
#define VERDICT_QUEUE_S       5.0  /* seconds a disk's queue must hold at its ceiling */
#define VERDICT_IDLE          0.50 /* "the others idle": every other core below this */
#define VERDICT_PER_FILE      0.50 /* share of the run that was not moving bytes */
#define VERDICT_MIN_FILES     100  /* per-file overhead is judged from this many files up */
#define VERDICT_RETRANS       0.01 /* retransmitted share of the sent segments */
#define VERDICT_MIN_SEGS      1000 /* segments sent before the share counts */
#define VERDICT_DROPS         100  /* softnet drops in the window */
#define VERDICT_THROTTLED     0.50 /* share of the window's seconds spent throttled */
#define VERDICT_IDLE_TOOL_PCT 10.0 /* the tree's CPU %: below, it was waiting */
#define VERDICT_IDLE_TOOL_IO  (1024.0 * 1024.0) /* ... while moving at least this many bytes */

/*
 * The verdict of one window: {"limit", "instance", "utilisation", "rule", "evidence": [{"figure",
 * "value", "unit", "seconds"}], "phases": [{"from_ms", "to_ms", "limit", "instance"}],
 * "top": [the three highest utilisations]}. Returns a new object (NULL only without memory).
 */
json_t *verdict_compute(const struct verdict_in *in);

/*
 * The run's verdict with its peers' reports (the array of report.peers: {"url", "report"}):
 * when the run itself found no single limit, or only its tool idling while it moved data, and a
 * peer's verdict names one, the limit is
 * "remote", with the peer's limit, instance and url in the evidence. Returns a new reference to
 * the verdict to show (`own` itself when nothing changes).
 */
json_t *verdict_with_peers(json_t *own, const json_t *peers);

/* Replace report["verdict"] by verdict_with_peers(it, report["peers"]); for whoever fills the
 * peers' reports in (the client). A report without a verdict is left alone. */
void verdict_apply_peers(json_t *report);

#endif
