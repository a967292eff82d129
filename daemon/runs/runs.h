/*
 * runs.h - the run manager: copy runs (docs/design.md §5) from start to settled.
 *
 * The HTTP API starts, ends, reads and deletes runs through it; its own thread wakes every 250 ms,
 * follows `\Memory\Dirty Bytes` + `\Memory\Writeback Bytes` of the newest ticks in `live` for every
 * open run, decides when an ended run has settled, and then computes and stores its report. It
 * only reads `live`, so it never holds up the sampler.
 */
#ifndef PERFLOG_RUNS_H
#define PERFLOG_RUNS_H

#include "collectors/collector.h"
#include "daemon/runs/follow.h"
#include "storage/query/live.h"
#include "storage/runs_db.h"

#include <jansson.h>
#include <stdint.h>

#define RUNS_SETTLE_DEFAULT_S 120

struct runs;

/*
 * Open the runs table of the database at `db_path` (already created by db_open), close the runs
 * left open by the previous daemon as 'interrupted' (their end is the last tick stored before
 * `start_wall_ms`), and start the manager thread, which computes their reports first. `live` must
 * outlive the manager, and so must `follow` (the processes the sampler follows; may be NULL).
 * `collect` (copied; NULL: no edges) names the disks and interfaces of the runs' edge readings.
 * Returns NULL with a message in err.
 */
struct runs *runs_start(const char *db_path, struct live *live, struct follow_set *follow,
                        const struct collector_config *collect, int64_t interval_ms,
                        int64_t start_wall_ms, char *err, size_t errlen);

/* Stop the thread (a report being computed is finished first) and close. Accepts NULL. */
void runs_stop(struct runs *rs);

/* The runs table, for the API's handlers: thread-safe (runs_db has its own lock). */
struct runs_db *runs_table(struct runs *rs);

/* Wake the manager at once. The API calls it when a run is opened or ended: with no run open the
 * manager waits for nothing else. Thread-safe. */
void runs_kick(struct runs *rs);

/* How many times the manager has come out of its wait (a debug counter for health). */
uint64_t runs_wakeups(struct runs *rs);

/*
 * Take a run's edge now (run_edges.h): the reading of the raw counters, the processes of `pid`
 * (<= 0: none) and, with `kernel` non-NULL, the writeback settings into *kernel. The API takes
 * the start edge before it inserts the run and the end edge before it records the end, so the
 * reading is as close to the instant as it can be. Returns a new object, or NULL when this
 * server takes no edges (logged). Thread-safe.
 */
json_t *runs_take_edge(struct runs *rs, int64_t pid, json_t **kernel);

/* The disks and interfaces of the edges from now on (a reload). Thread-safe. */
void runs_reconfigure(struct runs *rs, const struct collector_config *collect);

/* Store edge `which` of run `id` (stolen; NULL does nothing). Thread-safe. */
void runs_put_edge(struct runs *rs, int64_t id, enum runs_db_edge which, json_t *edge);

/* Why a run's processes are not followed, as the POST answer and the report say it. */
#define RUNS_WHY_MAX 160

/*
 * Follow the processes of run `id` (its `pid` and descendants) from the next tick. Returns 1 when
 * they are followed, else 0 with the reason in `why` (no pid, no such process, or
 * COLLECTOR_MAX_ROOTS runs followed already). Either way the outcome is kept in memory for the
 * run's report (see runs_forget); a daemon restart loses it. Thread-safe.
 */
int runs_follow(struct runs *rs, int64_t id, int64_t pid, int64_t since_wall_ms, char *why,
                size_t whylen);

/* Stop following the processes of run `id` (it ended or was deleted). Thread-safe. */
void runs_unfollow(struct runs *rs, int64_t id);

/* Forget what runs_follow kept of run `id` (it was deleted). Thread-safe. */
void runs_forget(struct runs *rs, int64_t id);

#endif
