/*
 * test_rollup_acc.c - the running minute roll-up gives the same buckets, bit for bit, as the batch
 * roll-up of the same ticks: two databases are written the same ticks, one with running roll-ups
 * and one without, with maintenance at the same points, and every 1m and 1h table must match.
 * The ticks hold NULLs, a first tick without an interval, the deltas a counter wrap or reset
 * leaves (a large delta, a NULL), an instance that appears and vanishes mid-minute, a gap of
 * missed seconds, a minute with no ticks and a wall clock stepped back.
 */
#include "db.h"
#include "schema.h"
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

/* Tick i: instances "0"/"vda"/"eth0"/... and "_Total"; "vdb" only in ticks 70..130. */
static struct tick *mk_tick(int i, int64_t wall_ms, int64_t interval_ms, unsigned *seed)
{
    static const char *names[OBJ_COUNT] = {"0", "vda", "eth0", "", "", "cp:4242"};
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = interval_ms;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        int extra = o == OBJ_DISK && i >= 70 && i < 130;

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
    struct db_retention keep = {7, 90, 1825, 0};
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
    for (int k = 0; k < 10; k++) {
        int ma = db_maintain(da, wall + 2 * 3600000LL, &keep);
        int mb = db_maintain(db, wall + 2 * 3600000LL, &keep);

        CHECK(ma >= 0 && mb >= 0);
        if (!ma && !mb)
            break;
    }
    db_close(da);
    db_close(db);

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
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (!getenv("PERFLOG_TEST_KEEP") && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
