/*
 * test_rollup_acc.c - the running minute roll-up gives the same buckets, bit for bit, as the batch
 * roll-up of the same ticks: two databases are written the same ticks, one with running roll-ups
 * and one without, with maintenance at the same points, and every 1m and 1h table must match.
 * The ticks hold NULLs, a first tick without an interval, the deltas a counter wrap or reset
 * leaves (a large delta, a NULL), an instance that appears and vanishes mid-minute, a gap of
 * missed seconds, a minute with no ticks and a wall clock stepped back.
 */
#include "storage/db.h"
#include "storage/schema.h"
#include "testlib.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/perflog-test-rollup-acc-XXXXXX";

#define T0 1795974017000LL /* 17 s into a minute: the first minute is partial */

static uint64_t rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static int vdb_from = 70, vdb_to = 130;

/* Tick i: instances "0"/"vda"/"eth0"/... and "_Total"; "vdb" only in ticks [vdb_from, vdb_to). */
static struct tick *mk_tick(int i, int64_t wall_ms, int64_t interval_ms, unsigned *seed)
{
    static const char *names[OBJ_COUNT] = {"0", "vda", "eth0", "", "", "cp:4242"};
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = interval_ms;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        int extra = o == OBJ_DISK && i >= vdb_from && i < vdb_to;

        t->obj[o].rows = calloc(3, sizeof(struct tick_row));
        t->obj[o].n = od->single ? 1 : 2 + extra;
        for (size_t r = 0; r < t->obj[o].n; r++) {
            struct tick_row *row = &t->obj[o].rows[r];

            snprintf(row->name, sizeof(row->name), "%s", !r ? names[o] : r == 1 ? "_Total" : "vdb");
            for (size_t f = 0; f < od->nfields; f++) {
                uint64_t x = rnd(seed);

                switch (x % 17) {
                case 0:
                    row->null_mask |= 1ull << f; /* no value: a reset, a missing file */
                    break;
                case 1:
                    row->v[f] = 4294967296LL - (int64_t)(x % 1000); /* a 32-bit wrap's delta */
                    break;
                case 2:
                    row->v[f] = (1LL << 52) + (int64_t)x; /* beyond a double's integers */
                    break;
                default:
                    row->v[f] = (int64_t)(x % (f % 3 == 0 ? 100000000u : 1000u));
                }
            }
        }
    }
    return t;
}

/* Rows of main.tbl not in b.tbl, plus the reverse, over columns `cols` (exact comparison, NULL
 * equal to NULL). */
static int64_t table_diff(sqlite3 *conn, const char *tbl, const char *cols)
{
    char sql[4096];
    sqlite3_stmt *st;
    int64_t n = -1;

    snprintf(sql, sizeof(sql),
             "SELECT (SELECT count(*) FROM (SELECT %s FROM main.%s EXCEPT SELECT %s FROM b.%s)) + "
             "(SELECT count(*) FROM (SELECT %s FROM b.%s EXCEPT SELECT %s FROM main.%s))",
             cols, tbl, cols, tbl, cols, tbl, cols, tbl);
    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static int64_t count_rows(sqlite3 *conn, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Whether main and b (attached) both have table `tbl`; a check fails when only one has it. An
 * object's tables come with its first instance: both files have them or neither. */
static int both_have(sqlite3 *conn, const char *tbl)
{
    char sql[160];
    int64_t in_a, in_b;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM main.sqlite_schema WHERE name = '%s'", tbl);
    in_a = count_rows(conn, sql);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM b.sqlite_schema WHERE name = '%s'", tbl);
    in_b = count_rows(conn, sql);
    CHECK_INT(in_a, in_b);
    return in_a == 1 && in_b == 1;
}

/* Roll up everything left on both databases, hours included, and close them. */
static void finish_both(struct db *da, struct db *db, int64_t wall)
{
    struct db_retention keep = {7, 90, 1825, 0, 0};

    for (int k = 0; k < 1000; k++) { /* the hour's batch takes many steps in slices of two */
        int ma = db_maintain(da, wall + 2 * 3600000LL, &keep);
        int mb = db_maintain(db, wall + 2 * 3600000LL, &keep);

        CHECK(ma >= 0 && mb >= 0);
        if (!ma && !mb)
            break;
    }
    db_close(da);
    db_close(db);
}

/*
 * step_back: the wall clock steps back into an earlier minute. Ticks of a minute then arrive in
 * two runs and the bucket is merged (schema.c's merge rule), where the split depends on when
 * maintenance ran; the running roll-up stays off until the clock passes the newest minute, so
 * counts, minima and maxima still match exactly, and averages to the merge's rounding.
 */
static void test_incremental_equals_batch(int step_back)
{
    char pa[256], pb[256], err[512], sql[600];
    struct db *da, *db;
    struct db_retention keep = {7, 90, 1825, 0, 0};
    unsigned seed = 7;
    int64_t wall = T0, last_maint = T0, buckets_before_maint = -1;
    struct tick *pending[2];
    int npending = 0;
    sqlite3 *conn;

    snprintf(pa, sizeof(pa), "%s/inc%d.db", dir, step_back);
    snprintf(pb, sizeof(pb), "%s/batch%d.db", dir, step_back);
    CHECK_INT(db_open(pa, "h", &da, err, sizeof(err)), 0);
    CHECK_INT(db_open(pb, "h", &db, err, sizeof(err)), 0);
    db_set_incremental_rollups(db, 0);
    for (int i = 0; i < 400; i++) {
        int64_t interval = i ? 1000 + (int64_t)(rnd(&seed) % 7) - 3 : 0;

        if (i == 150)
            interval = 6000; /* five missed seconds */
        if (i == 200)
            interval = 0; /* a tick without an interval: rates have no value */
        if (i == 260)
            interval = 75000; /* a minute without ticks */
        if (i == 330 && step_back)
            interval = -45000; /* the wall clock stepped back into an earlier minute */
        wall += interval > 0 ? interval : i ? 1000 : 0;
        if (i == 330 && step_back)
            wall -= 46000;
        pending[npending++] = mk_tick(i, wall, interval > 0 ? interval : 0, &seed);
        /* two ticks per transaction, as the writer commits them */
        if (npending == 2 || i == 399) {
            CHECK_INT(db_write_ticks(da, pending, (size_t)npending), 0);
            CHECK_INT(db_write_ticks(db, pending, (size_t)npending), 0);
            for (int k = 0; k < npending; k++)
                tick_free(pending[k]);
            npending = 0;
        }
        if (i == 105) {
            /* Minute 1 ended at tick 103; the next maintenance is due at tick 120: only the
             * running roll-up can have written its buckets (vda, _Total and vdb) by now. */
            CHECK_INT(sqlite3_open(pa, &conn), SQLITE_OK);
            buckets_before_maint = count_rows(
                conn, "SELECT count(*) FROM obj_disk_1m WHERE bucket_ms = 1795974060000");
            sqlite3_close(conn);
            CHECK_INT(sqlite3_open(pb, &conn), SQLITE_OK);
            CHECK_INT(count_rows(conn, "SELECT count(*) FROM obj_disk_1m WHERE bucket_ms = "
                                       "1795974060000"),
                      0);
            sqlite3_close(conn);
        }
        /* every 30 s from the first write, as the writer does */
        if (i == 0 || wall - last_maint >= 30000) {
            CHECK(db_maintain(da, wall, &keep) >= 0);
            CHECK(db_maintain(db, wall, &keep) >= 0);
            last_maint = wall;
        }
    }
    CHECK_INT(buckets_before_maint, 3);
    /* Everything rolled up on both, hours included. */
    finish_both(da, db, wall);

    CHECK_INT(sqlite3_open(pa, &conn), SQLITE_OK);
    snprintf(sql, sizeof(sql), "ATTACH '%s' AS b", pb);
    CHECK_INT(sqlite3_exec(conn, sql, NULL, NULL, NULL), SQLITE_OK);
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        char tbl[64], cols[2048] = "*";
        size_t len;

        if (step_back && i != SCHEMA_PDH_TABLE) {
            len = (size_t)snprintf(cols, sizeof(cols), "bucket_ms, inst, n");
            for (size_t k = 0; k < counter_objects[i].ncounters; k++)
                len +=
                    (size_t)snprintf(cols + len, sizeof(cols) - len, ", c%zu_min, c%zu_max", k, k);
        }
        for (int tier = 0; tier < 2; tier++) {
            int64_t diff;

            snprintf(tbl, sizeof(tbl), "%s_%s", schema_value_table(i), tier ? "1h" : "1m");
            if (!both_have(conn, tbl))
                continue;
            diff = table_diff(conn, tbl, cols);
            if (diff != 0)
                fprintf(stderr, "%s differs (step_back %d)\n", tbl, step_back);
            CHECK_INT(diff, 0);
        }
    }
    /* The comparison saw real buckets: every minute of the run, vdb's included. */
    CHECK(count_rows(conn, "SELECT count(DISTINCT bucket_ms) FROM obj_disk_1m") >= 7);
    CHECK_INT(count_rows(conn,
                         "SELECT count(*) FROM obj_disk_1m d JOIN instances i ON i.id = d.inst "
                         "WHERE i.name = 'vdb'"),
              2);
    /* NULLs reached the buckets: a counter without a value in a whole minute is rare, but the
     * first tick's rates have none, so minute 0's are averages over fewer rows than n. */
    CHECK(count_rows(conn, "SELECT count(*) FROM obj_processor_1h") > 0);
    CHECK_INT(count_rows(conn, "SELECT count(*) FROM ticks"), 400);
    sqlite3_close(conn);
}

/* Compare every roll-up table of databases pa and pb, exactly. */
static void compare_all(const char *pa, const char *pb)
{
    char sql[600], tbl[64];
    sqlite3 *conn;

    CHECK_INT(sqlite3_open(pa, &conn), SQLITE_OK);
    snprintf(sql, sizeof(sql), "ATTACH '%s' AS b", pb);
    CHECK_INT(sqlite3_exec(conn, sql, NULL, NULL, NULL), SQLITE_OK);
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
        for (int tier = 0; tier < 2; tier++) {
            snprintf(tbl, sizeof(tbl), "%s_%s", schema_value_table(i), tier ? "1h" : "1m");
            if (both_have(conn, tbl))
                CHECK_INT(table_diff(conn, tbl, "*"), 0);
        }
    CHECK(count_rows(conn, "SELECT count(DISTINCT bucket_ms) FROM obj_disk_1h") >= 3);
    CHECK(count_rows(conn, "SELECT count(*) FROM obj_disk_1h d JOIN instances i ON i.id = d.inst "
                           "WHERE i.name = 'vdb'") >= 1);
    sqlite3_close(conn);
}

/*
 * Hours: 3.3 hours of ticks 10 s apart, one per transaction, maintenance every 30 s. The running
 * hour is written by the tick that ends its last minute, before any maintenance could roll it.
 *
 * The roll-up statements are prepared when first used: none at open; once the running roll-ups
 * run (past the first whole hour), only the running minute's inserts (one per object) and the
 * extra PDH series' minute statement stay prepared, while the batch roll-up keeps its minute and
 * hour statements of every table.
 */
static void test_hours(void)
{
    char pa[256], pb[256], err[512];
    struct db *da, *db;
    struct db_retention keep = {7, 90, 1825, 0, 0};
    const int64_t h1 = (T0 / 3600000 + 1) * 3600000, h2 = h1 + 3600000;
    unsigned seed = 99;
    int64_t wall = T0, last_maint = T0;
    int checked = 0, mem_checked = 0;
    struct db_mem open_a, open_b, ma, mb;

    snprintf(pa, sizeof(pa), "%s/hinc.db", dir);
    snprintf(pb, sizeof(pb), "%s/hbatch.db", dir);
    CHECK_INT(db_open(pa, "h", &da, err, sizeof(err)), 0);
    CHECK_INT(db_open(pb, "h", &db, err, sizeof(err)), 0);
    db_set_incremental_rollups(db, 0);
    db_mem_get(da, &open_a);
    db_mem_get(db, &open_b);
    CHECK_INT(open_a.stmts, open_b.stmts);
    vdb_from = 300; /* 30 min into the first whole hour to 3.6 min into the next */
    vdb_to = 500;
    for (int i = 0; wall < h1 + 3 * 3600000; i++) {
        int64_t interval = i ? 10000 : 0;
        struct tick *t;

        wall += interval;
        t = mk_tick(i, wall, interval, &seed);
        CHECK_INT(db_write_ticks(da, &t, 1), 0);
        CHECK_INT(db_write_ticks(db, &t, 1), 0);
        tick_free(t);
        if (!checked && wall >= h2) {
            char sql[128];
            sqlite3 *conn;

            snprintf(sql, sizeof(sql), "SELECT count(*) FROM obj_disk_1h WHERE bucket_ms = %lld",
                     (long long)h1);
            CHECK_INT(sqlite3_open(pa, &conn), SQLITE_OK);
            CHECK_INT(count_rows(conn, sql), 3); /* vda, _Total and vdb */
            sqlite3_close(conn);
            CHECK_INT(sqlite3_open(pb, &conn), SQLITE_OK);
            CHECK_INT(count_rows(conn, sql), 0);
            sqlite3_close(conn);
            checked = 1;
        }
        if (i == 0 || wall - last_maint >= 30000) {
            CHECK(db_maintain(da, wall, &keep) >= 0);
            CHECK(db_maintain(db, wall, &keep) >= 0);
            last_maint = wall;
            if (!mem_checked && wall >= h2 + 5 * 60000) {
                db_mem_get(da, &ma);
                db_mem_get(db, &mb);
                printf("statements at open: %d, %lld bytes; running roll-ups: %d, %lld bytes; "
                       "batch: %d, %lld bytes\n",
                       open_a.stmts, (long long)open_a.stmt_bytes, ma.stmts,
                       (long long)ma.stmt_bytes, mb.stmts, (long long)mb.stmt_bytes);
                /* Maintenance's kept statements aside (stmt_cache.h): each object's INSERT came
                 * with its first rows (a new file has no tables for them at the open). The running
                 * roll-ups add an INSERT of finished buckets per object; the batch two statements
                 * per value table (minutes, hours). No extra PDH path came, so the file has no
                 * tables for them and no statement reads them. */
                CHECK_INT(ma.stmts - ma.kept_stmts,
                          open_a.stmts - open_a.kept_stmts + OBJ_COUNT + OBJ_COUNT);
                CHECK_INT(mb.stmts - mb.kept_stmts,
                          open_b.stmts - open_b.kept_stmts + OBJ_COUNT + 2 * OBJ_COUNT);
                CHECK(ma.stmt_bytes < mb.stmt_bytes);
                mem_checked = 1;
            }
        }
    }
    CHECK(checked);
    CHECK(mem_checked);
    finish_both(da, db, wall);
    compare_all(pa, pb);
    vdb_from = 70;
    vdb_to = 130;
}

/* Rows of `sql` (a count) in database file `path`, through a connection of its own. */
static int64_t count_in(const char *path, const char *sql)
{
    sqlite3 *conn;
    int64_t n;

    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    n = count_rows(conn, sql);
    sqlite3_close(conn);
    return n;
}

/* Write tick t (the i-th, at wall) to both databases, then free it; every 30 s of ticks maintain
 * both. Returns 1 if it maintained them. */
static int tick_both(struct db *da, struct db *db, struct tick *t, int i, int64_t wall,
                     int64_t *last_maint)
{
    struct db_retention keep = {7, 90, 1825, 0, 0};

    CHECK_INT(db_write_ticks(da, &t, 1), 0);
    CHECK_INT(db_write_ticks(db, &t, 1), 0);
    tick_free(t);
    if (i != 0 && wall - *last_maint < 30000)
        return 0;
    CHECK(db_maintain(da, wall, &keep) >= 0);
    CHECK(db_maintain(db, wall, &keep) >= 0);
    *last_maint = wall;
    return 1;
}

/*
 * db_rollup_ahead, called as the writer does before each tick: the minute's buckets are in the
 * file before the tick that begins the next minute is written, in a transaction of their own; at
 * an hour's end a second call writes the hour's. Once that second call is left out (the writer's
 * rest cut short by a queued tick) and the call before the next tick writes the hour. 2.3 hours of
 * ticks 10 s apart, one per transaction, maintenance every 30 s; every 1m and 1h table matches the
 * batch roll-up's exactly.
 */
static void test_ahead(void)
{
    char pa[256], pb[256], err[512], sql[160];
    struct db *da, *db;
    const int64_t h1 = (T0 / 3600000 + 1) * 3600000, h2 = h1 + 3600000, h3 = h2 + 3600000;
    unsigned seed = 5;
    int64_t wall = T0, last_maint = T0, cur_minute = T0 / 60000 * 60000;
    int minutes_ahead = 0, hours_ahead = 0, h2_late = 0;

    snprintf(pa, sizeof(pa), "%s/ahead.db", dir);
    snprintf(pb, sizeof(pb), "%s/ahead_batch.db", dir);
    CHECK_INT(db_open(pa, "h", &da, err, sizeof(err)), 0);
    CHECK_INT(db_open(pb, "h", &db, err, sizeof(err)), 0);
    db_set_incremental_rollups(db, 0);
    vdb_from = 100; /* from 16 min before h1 to 16 min into it */
    vdb_to = 200;
    for (int i = 0; wall < h3 + 10 * 60000; i++) {
        int64_t interval = i ? 10000 : 0, minute;
        struct tick *t;
        int calls = 0, rc;

        wall += interval;
        minute = wall / 60000 * 60000;
        t = mk_tick(i, wall, interval, &seed);
        while ((rc = db_rollup_ahead(da, wall)) > 0) {
            calls++;
            if (calls == 1 && minute > cur_minute && minute >= h1 + 60000) {
                /* the minute just ended: its buckets are written, the tick is not */
                snprintf(sql, sizeof(sql),
                         "SELECT count(*) FROM obj_disk_1m WHERE bucket_ms = %lld",
                         (long long)cur_minute);
                CHECK(count_in(pa, sql) >= 2);
                snprintf(sql, sizeof(sql), "SELECT count(*) FROM ticks WHERE t_ms = %lld",
                         (long long)wall);
                CHECK_INT(count_in(pa, sql), 0);
                minutes_ahead++;
            }
            snprintf(sql, sizeof(sql), "SELECT count(*) FROM obj_disk_1h WHERE bucket_ms = %lld",
                     (long long)(minute - 3600000));
            if (minute > cur_minute && (minute == h2 || minute == h3)) {
                /* the hour (vdb was in h1's) waits for the second call, which writes it */
                CHECK_INT(count_in(pa, sql), calls == 1 ? 0 : 3);
                if (calls == 2)
                    hours_ahead++;
                if (minute == h3)
                    break; /* the writer's rest cut short: left to the next tick */
            } else if (minute == h3) {
                CHECK_INT(calls, 1);
                CHECK_INT(count_in(pa, sql), 2);
                h2_late = 1;
            }
        }
        CHECK(rc >= 0);
        CHECK(calls <= 2);
        CHECK_INT(db_rollup_ahead(db, wall), 0); /* no running roll-up: nothing ahead */
        cur_minute = minute;
        (void)tick_both(da, db, t, i, wall, &last_maint);
    }
    printf("ahead: %d minutes and %d hours written before their next tick\n", minutes_ahead,
           hours_ahead);
    CHECK(minutes_ahead >= 120);
    CHECK_INT(hours_ahead, 1);
    CHECK(h2_late);
    finish_both(da, db, wall);
    compare_all(pa, pb);
    vdb_from = 70;
    vdb_to = 130;
}

/* meta's `key` through connection `conn`, -1 when absent. */
static int64_t meta_of(sqlite3 *conn, const char *key)
{
    char sql[160];

    snprintf(sql, sizeof(sql), "SELECT coalesce((SELECT value FROM meta WHERE key = '%s'), -1)",
             key);
    return count_rows(conn, sql);
}

/* Buckets at bucket_ms in every object's table of tier `tier` ("1m" or "1h"), through `conn`
 * (every object has its tables: mk_tick gives each an instance). */
static int64_t buckets_at(sqlite3 *conn, const char *tier, int64_t bucket_ms)
{
    char sql[2048];
    size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT 0");

    for (int o = 0; o < OBJ_COUNT && len < sizeof(sql); o++)
        len += (size_t)snprintf(sql + len, sizeof(sql) - len,
                                " + (SELECT count(*) FROM %s_%s WHERE bucket_ms = %lld)",
                                counter_objects[o].table, tier, (long long)bucket_ms);
    CHECK(len < sizeof(sql));
    return count_rows(conn, sql);
}

/*
 * db_rollup_ahead in slices of two buckets (db_set_rollup_slice), so that a minute's ten or so
 * buckets take five calls, and an hour's as many: 3.2 hours of ticks 10 s apart, called as the
 * writer does. After each slice but the last the minute is partly in the file (two more buckets a
 * call) and marked (rollup_1m_part_ms), while rollup_1m_until_ms, the readers' line, has not moved
 * to it; the hour's slices likewise (rollup_1h_part_ms, rollup_1h_next_ms). Roll-ups cut between
 * slices:
 *  - every 7th minute after its first slice (the writer's rest cut short by a queued tick), but
 *    for the minutes that end an hour: the tick's own transaction writes the rest;
 *  - once after a minute's first slice (12 minutes in) and once after the first slice of the third
 *    hour's buckets, the database is closed and opened again (a stop, a crash): the batch roll-up
 * takes those ticks, after taking the slices back.
 * The batch hour roll-up of the hours the running one did not take (the partial first hour, the
 * hour cut by the stop) goes an instance a step (HOUR_STEP_ROWS: two slices' worth of minute
 * buckets, fewer than an hour's minutes), and the pass over the hour cut by the stop is itself
 * stopped mid-pass and goes on from where it was. Every 1m and 1h table then equals that of the
 * batch roll-up, one step a table, exactly, and no mark is left. Without the taking back, the
 * minute and the hour cut by the stops count some ticks twice; without the pass's progress kept,
 * hours are counted twice.
 */
static void test_ahead_slices(void)
{
    char pa[256], pb[256], err[512];
    struct db *da, *db;
    sqlite3 *rd;
    const int64_t h2 = (T0 / 3600000 + 2) * 3600000, h3 = h2 + 3600000;
    unsigned seed = 9;
    int64_t wall = T0, last_maint = T0, cur_minute = T0 / 60000 * 60000;
    int sliced = 0, cut = 0, hour_slices = 0, minutes = 0, stopped_minute = 0, stopped_hour = 0;
    int pass_stops = 0;

    snprintf(pa, sizeof(pa), "%s/slices.db", dir);
    snprintf(pb, sizeof(pb), "%s/slices_batch.db", dir);
    CHECK_INT(db_open(pa, "h", &da, err, sizeof(err)), 0);
    CHECK_INT(db_open(pb, "h", &db, err, sizeof(err)), 0);
    db_set_rollup_slice(da, 2);
    db_set_incremental_rollups(db, 0);
    CHECK_INT(sqlite3_open(pa, &rd), SQLITE_OK); /* a reader of its own, as a shell's */
    for (int i = 0; wall < h3 + 10 * 60000; i++) {
        int64_t interval = i ? 10000 : 0, minute;
        struct tick *t;
        int calls = 0, stop = 0, rc;

        wall += interval;
        minute = wall / 60000 * 60000;
        minutes += minute > cur_minute;
        t = mk_tick(i, wall, interval, &seed);
        while ((rc = db_rollup_ahead(da, wall)) > 0) {
            int64_t part_m = meta_of(rd, "rollup_1m_part_ms");
            int64_t part_h = meta_of(rd, "rollup_1h_part_ms");

            calls++;
            if (part_m >= 0) {
                CHECK_INT(part_m, cur_minute);
                CHECK(meta_of(rd, "rollup_1m_until_ms") <= cur_minute);
                CHECK_INT(buckets_at(rd, "1m", cur_minute), 2 * calls);
                sliced += calls == 1;
                if (calls == 1 && minutes == 12 && !stopped_minute) {
                    stop = stopped_minute = 1;
                    break;
                }
                if (calls == 1 && minutes % 7 == 0 && minute % 3600000) {
                    cut++;
                    break;
                }
            } else if (part_h >= 0) {
                CHECK_INT(part_h, minute / 3600000 * 3600000 - 3600000);
                CHECK(meta_of(rd, "rollup_1h_next_ms") <= part_h);
                CHECK(buckets_at(rd, "1h", part_h) >= 2);
                hour_slices++;
                if (minute >= h3 && !stopped_hour) {
                    stop = stopped_hour = 1;
                    break;
                }
            }
        }
        CHECK(rc >= 0);
        if (stop) {
            db_close(da);
            CHECK_INT(db_open(pa, "h", &da, err, sizeof(err)), 0);
            db_set_rollup_slice(da, 2);
        }
        cur_minute = minute;
        if (tick_both(da, db, t, i, wall, &last_maint)) {
            /* the batch hour roll-up of the hour cut by the stop, mid-pass (two buckets a slice:
             * an instance a step) */
            if (wall >= h3 && meta_of(rd, "rollup_1h_end") >= 0 && !pass_stops++) {
                db_close(da);
                CHECK_INT(db_open(pa, "h", &da, err, sizeof(err)), 0);
                db_set_rollup_slice(da, 2);
            }
        }
    }
    printf("slices: %d minutes written in slices, %d cut short, %d hour slices\n", sliced, cut,
           hour_slices);
    CHECK(sliced >= 140);
    CHECK(cut >= 20);
    CHECK(hour_slices >= 5);
    CHECK(stopped_minute && stopped_hour);
    CHECK(pass_stops >= 2); /* seen mid-pass again after the stop in it */
    finish_both(da, db, wall);
    CHECK_INT(meta_of(rd, "rollup_1m_part_ms"), -1);
    CHECK_INT(meta_of(rd, "rollup_1h_part_ms"), -1);
    sqlite3_close(rd);
    compare_all(pa, pb);
}

/* Ticks with 70 disks (two multi-row INSERTs of 32 and six single ones) read back exactly:
 * every stored field equals the tick's value, NULL where the tick had none. */
static void test_rows_stored(void)
{
    char path[256], err[512], name[32];
    struct tick *ticks[3];
    unsigned seed = 11;
    struct db *d;
    sqlite3 *conn;
    sqlite3_stmt *st;
    int rows = 0, bad = 0;
    struct db_mem m0, m1;
    const struct object_def *od = &counter_objects[OBJ_DISK];

    snprintf(path, sizeof(path), "%s/rows.db", dir);
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    for (int i = 0; i < 3; i++) {
        ticks[i] = mk_tick(i, T0 + i * 1000, i ? 1000 : 0, &seed);
        free(ticks[i]->obj[OBJ_DISK].rows);
        ticks[i]->obj[OBJ_DISK].rows = calloc(70, sizeof(struct tick_row));
        ticks[i]->obj[OBJ_DISK].n = 70;
        for (int r = 0; r < 70; r++) {
            struct tick_row *row = &ticks[i]->obj[OBJ_DISK].rows[r];

            snprintf(row->name, sizeof(row->name), "sd%d", (r * 3 + i) % 70);
            for (size_t f = 0; f < od->nfields; f++) {
                uint64_t x = rnd(&seed);

                if (x % 5 == 0)
                    row->null_mask |= 1ull << f;
                else
                    row->v[f] = (int64_t)(x * 2654435761u) - (int64_t)(x % 3 == 0) * INT64_MAX;
            }
        }
    }
    db_mem_get(d, &m0);
    CHECK_INT(db_write_ticks(d, ticks, 3), 0);
    /* The multi-row INSERT is prepared for the one object that needs it, the disks, at its
     * first use; every other object has fewer rows than it takes. Every object's single-row
     * INSERT comes with its first rows too (with its tables: a new file has none). */
    db_mem_get(d, &m1);
    CHECK_INT(m1.stmts - m1.kept_stmts, m0.stmts - m0.kept_stmts + 1 + OBJ_COUNT);
    db_close(d);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT o.*, i.name FROM obj_disk o JOIN instances i ON i.id = "
                                 "o.inst ORDER BY o.tick, i.name",
                                 -1, &st, NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = (int)sqlite3_column_int64(st, 0) - 1;
        const char *nm = (const char *)sqlite3_column_text(st, 2 + (int)od->nfields);
        const struct tick_row *row = NULL;

        for (int r = 0; r < 70; r++)
            if (strcmp(ticks[i]->obj[OBJ_DISK].rows[r].name, nm) == 0)
                row = &ticks[i]->obj[OBJ_DISK].rows[r];
        rows++;
        for (size_t f = 0; row && f < od->nfields; f++) {
            int null = sqlite3_column_type(st, 2 + (int)f) == SQLITE_NULL;

            if (null != !!(row->null_mask & (1ull << f)) ||
                (!null && sqlite3_column_int64(st, 2 + (int)f) != row->v[f]))
                bad++;
        }
        if (!row)
            bad++;
    }
    sqlite3_finalize(st);
    sqlite3_close(conn);
    snprintf(name, sizeof(name), "%d", rows);
    CHECK_STR(name, "210");
    CHECK_INT(bad, 0);
    for (int i = 0; i < 3; i++)
        tick_free(ticks[i]);
}

/* A disk tick at wall_ms: `ios` writes that took `ms` in all, nothing else. */
static struct tick *write_tick_of(int64_t wall_ms, int64_t ios, int64_t ms)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = 1000;
    t->obj[OBJ_DISK].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_DISK].n = 1;
    snprintf(t->obj[OBJ_DISK].rows[0].name, sizeof(t->obj[OBJ_DISK].rows[0].name), "vda");
    t->obj[OBJ_DISK].rows[0].v[DISK_WR_IOS] = ios;
    t->obj[OBJ_DISK].rows[0].v[DISK_WR_MS] = ms;
    return t;
}

/* c<k>_min, _avg, _max and _ops of sec/Write in obj_disk_<tier> at bucket_ms; 0 if no row. */
static int per_op_row(const char *path, const char *tier, int64_t bucket_ms, double out[4],
                      int *ops_null)
{
    char sql[256];
    sqlite3 *conn;
    sqlite3_stmt *st;
    int found = 0;

    snprintf(sql, sizeof(sql),
             "SELECT c11_min, c11_avg, c11_max, c11_ops FROM obj_disk_%s WHERE bucket_ms = %lld",
             tier, (long long)bucket_ms);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < 4; c++)
            out[c] = sqlite3_column_double(st, c);
        *ops_null = sqlite3_column_type(st, 3) == SQLITE_NULL;
        found = 1;
    }
    sqlite3_finalize(st);
    sqlite3_close(conn);
    return found;
}

/*
 * A time per operation (Avg. Disk sec/Write, CF_PER_OP) is averaged over the operations: a minute
 * with one tick of 100 writes that took 500 ms and 59 ticks without a write averages 5 ms a write,
 * not the ticks' mean (0.083 ms), in the running and the batch roll-up alike; its operations are
 * kept beside it, a minute without a write averages 0, and the hour of minutes weights each by
 * its operations.
 */
static void test_per_op(void)
{
    const int64_t hour = (T0 / 3600000 + 2) * 3600000, m0 = hour - 3 * 60000;
    struct db_retention keep = {7, 90, 1825, 0, 0};
    const char *tiers[] = {"1m", "1h"};

    for (int batch = 0; batch < 2; batch++) {
        char path[256], err[512];
        struct db *d;
        double r[4], want0 = 507 * 0.001 / 100, want2 = 320 * 0.001 / 40;
        int ops_null = 1;

        snprintf(path, sizeof(path), "%s/perop%d.db", dir, batch);
        CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
        db_set_incremental_rollups(d, !batch);
        /* the hour's last three minutes, then a tick of the next hour */
        for (int i = 0; i <= 180; i++) {
            int s = i % 60, m = i / 60;
            int64_t ios = 0, ms = 0;
            struct tick *t;

            if (m == 0 && s == 10)
                ios = 100, ms = 500;
            else if (m == 0 && s == 20)
                ms = 7; /* time of writes still in flight: counted, no write completed */
            else if (m == 2 && (s == 5 || s == 6))
                ios = s == 5 ? 10 : 30, ms = s == 5 ? 20 : 300;
            t = write_tick_of(m0 + i * 1000LL, ios, ms);
            CHECK_INT(db_write_ticks(d, &t, 1), 0);
            tick_free(t);
            if (i % 30 == 0)
                CHECK(db_maintain(d, m0 + i * 1000LL, &keep) >= 0);
        }
        for (int k = 0; k < 10 && db_maintain(d, hour + 2 * 3600000LL, &keep) > 0; k++)
            ;
        db_close(d);
        CHECK(per_op_row(path, tiers[0], m0, r, &ops_null));
        CHECK(r[1] == want0);
        CHECK(r[0] == 0.0 && r[2] == 500 * 0.001 / 100);
        CHECK(r[3] == 100 && !ops_null);
        CHECK(per_op_row(path, tiers[0], m0 + 60000, r, &ops_null));
        CHECK(r[1] == 0.0 && r[3] == 0 && !ops_null);
        CHECK(per_op_row(path, tiers[0], m0 + 120000, r, &ops_null));
        CHECK(r[1] == want2 && r[3] == 40);
        CHECK(per_op_row(path, tiers[1], hour - 3600000, r, &ops_null));
        CHECK(r[1] == (want0 * 100 + 0.0 * 0 + want2 * 40) / 140);
        CHECK(r[3] == 140 && r[0] == 0.0 && r[2] == 300 * 0.001 / 30);
        printf("sec/Write over the minute %s: %.6f s (the ticks' mean would be %.6f)\n",
               batch ? "(batch)" : "(running)", want0, (500 * 0.001 / 100) / 60);
    }
}

int main(void)
{
    char cmd[300];

    if (sqlite3_libversion_number() >= 3043000) {
        /* db.c then rolls up in batches only; there is nothing to compare. */
        printf("SQLite %s sums avg() with compensation: running roll-ups are off\n",
               sqlite3_libversion());
        return 77;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_incremental_equals_batch(0);
    test_incremental_equals_batch(1);
    test_rows_stored();
    test_hours();
    test_ahead();
    test_ahead_slices();
    test_per_op();
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (!getenv("PERFLOG_TEST_KEEP") && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
