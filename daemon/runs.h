/*
 * runs.h - the run manager: copy runs (SPEC of issue 4, design section 5) from start to settled.
 *
 * The HTTP API starts, ends, reads and deletes runs through it; its own thread wakes every 250 ms,
 * follows `\Memory\Dirty Bytes` + `\Memory\Writeback Bytes` of the newest ticks in `live` for every
 * open run, decides when an ended run has settled, and then computes and stores its report. It
 * only reads `live`, so it never holds up the sampler.
 */
#ifndef PERFLOG_RUNS_H
#define PERFLOG_RUNS_H

#include "follow.h"
#include "live.h"
#include "runs_db.h"

#include <stdint.h>

#define RUNS_SETTLE_DEFAULT_S 120

struct runs;

/*
 * Open the runs table of the database at `db_path` (already created by db_open), close the runs
 * left open by the previous daemon as 'interrupted' (their end is the last tick stored before
 * `start_wall_ms`), and start the manager thread, which computes their reports first. `live` must
 * outlive the manager, and so must `follow` (the processes the sampler follows; may be NULL).
 * Returns NULL with a message in err.
 */
struct runs *runs_start(const char *db_path, struct live *live, struct follow_set *follow,
                        int64_t interval_ms, int64_t start_wall_ms, char *err, size_t errlen);

/* Stop the thread (a report being computed is finished first) and close. Accepts NULL. */
void runs_stop(struct runs *rs);

/* The runs table, for the API's handlers: thread-safe (runs_db has its own lock). */
struct runs_db *runs_table(struct runs *rs);

/* Wake the manager at once (after an end), so a run that is already settled is seen without
 * waiting for the next 250 ms. Thread-safe. */
void runs_kick(struct runs *rs);

/* Follow the processes of run `id` (its `pid` and descendants) from the next tick; a no-op for
 * pid <= 0. A full set is logged (the run then has no Process counters). Thread-safe. */
void runs_follow(struct runs *rs, int64_t id, int64_t pid, int64_t since_wall_ms);

/* Stop following the processes of run `id` (it ended or was deleted). Thread-safe. */
void runs_unfollow(struct runs *rs, int64_t id);

#endif
