/*
 * test_runs_manager.c - the run manager (daemon/runs/runs.c) with its real thread, a real SQLite
 * file and a live ring the test fills itself, the sampler faked: no edges (no collector config),
 * so the dirty-level and timeout rules decide.
 *
 *  a. A run whose Dirty + Writeback rises from 1000 KiB to 100000 KiB and, after its end, falls
 *     through 90000 and 50000 back to 1000 KiB settles at the tick where it is back within
 *     max(8 MiB, 5% of the peak) of the level before the start: that tick's time, exactly, and
 *     gets a stored report.
 *  b. A run that ended but whose dirty level stays up settles once its settle timeout (1 s) has
 *     passed, not before, with a report.
 *  c. A run still running is neither settled nor reported.
 */
#include "collectors/model/counters.h"
#include "collectors/model/sample.h"
#include "daemon/runs/runs.h"
#include "storage/db.h"
#include "storage/query/live.h"
#include "storage/runs_db.h"
#include "testlib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/perflog-test-runs-XXXXXX";

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct tick *mk_tick(int64_t t_ms, int64_t dirty_kb)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = t_ms;
    t->interval_ms = 1000;
    t->obj[OBJ_MEMORY].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_MEMORY].n = 1;
    t->obj[OBJ_MEMORY].rows[0].v[MEM_DIRTY_KB] = dirty_kb;
    return t;
}

/* Publish a tick to the ring and store it, as the sampler and the writer would. */
static void feed(struct live *l, struct db *d, int64_t t_ms, int64_t dirty_kb)
{
    struct tick *t = mk_tick(t_ms, dirty_kb);

    live_publish_ref(l, t);
    CHECK_INT(db_write_ticks(d, &t, 1), 0);
    tick_free(t);
}

static int64_t insert_run(struct runs *rs, int64_t start_ms, int64_t settle_timeout_s)
{
    struct runs_db_row row;
    int64_t id = -1;

    runs_db_row_init(&row);
    row.label = "t";
    row.host = "testhost";
    row.status = "running";
    row.start_ms = start_ms;
    row.settle_timeout_s = settle_timeout_s;
    CHECK_INT(runs_db_insert(runs_table(rs), &row, &id), 0);
    runs_kick(rs);
    return id;
}

static void end_run(struct runs *rs, int64_t id, int64_t end_ms)
{
    struct runs_db_end end = {.end_ms = end_ms,
                              .exit_code = 0,
                              .status = "ending",
                              .io_read_bytes = RUNS_DB_NULL,
                              .io_write_bytes = RUNS_DB_NULL,
                              .storage_read_bytes = RUNS_DB_NULL,
                              .storage_write_bytes = RUNS_DB_NULL};

    CHECK_INT(runs_db_end(runs_table(rs), id, &end), 0);
    runs_kick(rs);
}

/* Wait up to timeout_ms for run id to be settled; its row (caller releases) either way. */
static void wait_settled(struct runs *rs, int64_t id, int timeout_ms, struct runs_db_row *row)
{
    for (int waited = 0;; waited += 50) {
        runs_db_row_init(row);
        CHECK_INT(runs_db_get(runs_table(rs), id, row), 0);
        if ((row->status && strcmp(row->status, "settled") == 0) || waited >= timeout_ms)
            return;
        runs_db_row_release(row);
        usleep(50 * 1000);
    }
}

int main(void)
{
    struct db_retention keep = {7, 90, 1825, 0, 0};
    struct live *l = live_new(600);
    struct runs_db_row row;
    struct runs *rs;
    struct db *d;
    char path[256], err[512];
    int64_t now = wall_ms() / 1000 * 1000, t0 = now - 30000, start, end, back, id;

    if (!mkdtemp(dir) || !l)
        return 1;
    snprintf(path, sizeof(path), "%s/runs.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    rs = runs_start(path, l, NULL, NULL, 1000, now, err, sizeof(err));
    CHECK(rs != NULL);
    if (!rs)
        return tl_done();

    /* a: ticks t0 .. t0+20 s; the run from t0+5.5 s to t0+10.5 s */
    start = t0 + 5500;
    end = t0 + 10500;
    back = t0 + 14000;
    /* the level is that of the tick at or just before the start (t0+5 s): 1000 KiB */
    for (int64_t t = t0; t <= t0 + 5000; t += 1000)
        feed(l, d, t, 1000);
    id = insert_run(rs, start, 60);
    for (int64_t t = t0 + 6000; t <= t0 + 11000; t += 1000)
        feed(l, d, t, 100000);
    end_run(rs, id, end);
    feed(l, d, t0 + 12000, 90000);
    feed(l, d, t0 + 13000, 50000);
    feed(l, d, back, 1000); /* the manager settles on this tick: nothing comes after it yet */
    wait_settled(rs, id, 15000, &row);
    CHECK(row.status && strcmp(row.status, "settled") == 0);
    CHECK_INT(row.settled_ms, back);
    CHECK(row.report_json && strstr(row.report_json, "\"tail_s\"") != NULL);
    runs_db_row_release(&row);

    /* b: ends now, the level stays up; settles once its 1 s timeout has passed by the real clock
     * (ticks from here on at real times, as the sampler's) */
    id = insert_run(rs, t0 + 15500, 1);
    feed(l, d, t0 + 16000, 80000);
    end = wall_ms();
    end_run(rs, id, end);
    feed(l, d, wall_ms(), 80000);
    usleep(1300 * 1000);
    feed(l, d, wall_ms(), 80000);
    wait_settled(rs, id, 15000, &row);
    CHECK(row.status && strcmp(row.status, "settled") == 0);
    CHECK(wall_ms() - end >= 1000);
    CHECK(row.settled_ms >= end);
    CHECK(row.report_json != NULL);
    runs_db_row_release(&row);

    /* c: still running after more ticks at the level: neither settled nor reported */
    id = insert_run(rs, wall_ms(), 60);
    for (int k = 0; k < 3; k++) {
        usleep(400 * 1000);
        feed(l, d, wall_ms(), 1000);
    }
    usleep(500 * 1000);
    runs_db_row_init(&row);
    CHECK_INT(runs_db_get(runs_table(rs), id, &row), 0);
    CHECK(row.status && strcmp(row.status, "running") == 0);
    CHECK(row.report_json == NULL);
    runs_db_row_release(&row);

    runs_stop(rs);
    CHECK(db_maintain(d, now, &keep) >= 0);
    db_close(d);
    live_free(l);
    {
        static const char *const sfx[] = {"", "-wal", "-shm", ".lock"};
        char p[300];

        for (size_t i = 0; i < 4; i++) {
            snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
            unlink(p);
        }
    }
    rmdir(dir);
    return tl_done();
}
