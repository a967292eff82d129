/*
 * test_data.c - data_query (storage/query/data.c) on a real SQLite file holding known values:
 * four minutes of ticks in which \Memory\Dirty Bytes is 1024 times the tick's index, with five
 * ticks missing. Raw points are the stored values at the ticks' times; a step's avg, min and max
 * are those of the ticks in [t, t + step); a minute step (read from the minute tier once it is
 * rolled up) equals the same figure computed here from the raw values; a bucket with no tick has
 * no value; the limits answer -E2BIG and say which.
 */
#include "collectors/model/counters.h"
#include "collectors/model/sample.h"
#include "storage/db.h"
#include "storage/query/data.h"
#include "storage/reader.h"
#include "testlib.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0     INT64_C(1796000040000) /* a whole minute */
#define NTICKS 240
#define GAP_LO 100 /* ticks GAP_LO..GAP_HI are missing */
#define GAP_HI 104

static char dir[] = "/tmp/perflog-test-data-XXXXXX";

static int missing(int i)
{
    return i >= GAP_LO && i <= GAP_HI;
}

/* A tick with the Memory row only: dirty_kb = i, the rest 0. */
static struct tick *mk_tick(int i)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = T0 + (int64_t)i * 1000;
    t->interval_ms = 1000;
    t->obj[OBJ_MEMORY].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_MEMORY].n = 1;
    t->obj[OBJ_MEMORY].rows[0].v[MEM_DIRTY_KB] = i;
    return t;
}

static size_t counter_index(int obj, const char *name)
{
    const struct object_def *od = &counter_objects[obj];

    for (size_t k = 0; k < od->ncounters; k++)
        if (strcmp(od->counters[k].name, name) == 0)
            return k;
    return (size_t)-1;
}

static int64_t memory_inst_id(const char *path)
{
    sqlite3 *conn;
    sqlite3_stmt *st;
    int64_t id = -1;

    if (sqlite3_open(path, &conn) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(conn, "SELECT id FROM instances WHERE object = 'Memory'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(conn);
    return id;
}

/* The avg, min or max of the ticks' values (1024 * i) in [from_ms, from_ms + step_ms); NAN when
 * no tick is there. */
static double expect(int64_t from_ms, int64_t step_ms, enum data_agg agg)
{
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int n = 0;

    for (int i = 0; i < NTICKS; i++) {
        int64_t t = T0 + (int64_t)i * 1000;

        if (missing(i) || t < from_ms || t >= from_ms + step_ms)
            continue;
        sum += 1024.0 * i;
        lo = fmin(lo, 1024.0 * i);
        hi = fmax(hi, 1024.0 * i);
        n++;
    }
    if (!n)
        return NAN;
    return agg == DATA_AVG ? sum / n : agg == DATA_MIN ? lo : hi;
}

/* Every point of res (one series) equals expect() of its bucket; the number of mismatches. */
static int mismatches(const struct data_result *res, enum data_agg agg)
{
    int bad = 0;

    for (size_t p = 0; p < res->npoints; p++) {
        double want = expect(res->ts[p], res->step_ms, agg), got = res->values[p];

        if (isnan(want) != isnan(got) || (!isnan(want) && fabs(want - got) > 1e-9 * fabs(want))) {
            if (bad++ < 3)
                fprintf(stderr, "point %zu at %lld: got %.17g, want %.17g\n", p,
                        (long long)res->ts[p], got, want);
        }
    }
    return bad;
}

int main(void)
{
    struct db_retention keep = {7, 90, 1825, 0, 0};
    struct series s = {.obj = OBJ_MEMORY};
    struct data_req req = {.from_ms = T0,
                           .to_ms = T0 + (NTICKS - 1) * 1000,
                           .max_points = 100000,
                           .interval_ms = 1000};
    struct data_result res = {0};
    struct reader *rd = NULL;
    char path[256], err[512], why[256];
    struct db *d = NULL;
    int more, guard = 0;

    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof(path), "%s/data.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < NTICKS; i++) {
        struct tick *t;

        if (missing(i))
            continue;
        t = mk_tick(i);
        CHECK_INT(db_write_ticks(d, &t, 1), 0);
        tick_free(t);
    }
    do
        more = db_maintain(d, T0 + (NTICKS + 120) * 1000, &keep);
    while (more > 0 && ++guard < 1000);
    CHECK(more >= 0);
    db_close(d);

    s.counter = counter_index(OBJ_MEMORY, "Dirty Bytes");
    CHECK(s.counter != (size_t)-1);
    s.inst_id = memory_inst_id(path);
    CHECK(s.inst_id > 0);
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);

    /* raw: one point per stored tick, at its time, with its value */
    CHECK_INT(data_query(rd, NULL, &s, 1, &req, &res, why, sizeof(why)), 0);
    CHECK(strcmp(res.tier, "raw") == 0);
    CHECK_INT(res.nseries, 1);
    CHECK_INT(res.npoints, NTICKS - (GAP_HI - GAP_LO + 1));
    {
        int bad = 0;

        for (size_t p = 0, i = 0; p < res.npoints; p++, i++) {
            while (missing((int)i))
                i++;
            if (res.ts[p] != T0 + (int64_t)i * 1000 || res.values[p] != 1024.0 * (double)i)
                bad++;
        }
        CHECK_INT(bad, 0);
    }
    data_result_free(&res);

    /* a 10 s step, each aggregate; the gap's bucket has no value */
    for (int a = DATA_AVG; a <= DATA_MAX; a++) {
        req.step_ms = 10000;
        req.agg = (enum data_agg)a;
        memset(&res, 0, sizeof(res));
        CHECK_INT(data_query(rd, NULL, &s, 1, &req, &res, why, sizeof(why)), 0);
        CHECK_INT(res.npoints, NTICKS / 10);
        CHECK_INT(res.step_ms, 10000);
        CHECK_INT(mismatches(&res, req.agg), 0);
        CHECK(res.npoints > 10 && isnan(res.values[10]) == 0); /* 100..109 holds 105..109 */
        data_result_free(&res);
    }
    /* a 5 s step: the bucket [100, 105) holds no tick at all */
    req.step_ms = 5000;
    req.agg = DATA_AVG;
    memset(&res, 0, sizeof(res));
    CHECK_INT(data_query(rd, NULL, &s, 1, &req, &res, why, sizeof(why)), 0);
    CHECK(res.npoints > 20 && isnan(res.values[20]));
    CHECK_INT(mismatches(&res, DATA_AVG), 0);
    data_result_free(&res);

    /* a minute step: read from the minute tier, the same numbers as from the raw values */
    for (int a = DATA_AVG; a <= DATA_MAX; a++) {
        req.step_ms = 60000;
        req.agg = (enum data_agg)a;
        memset(&res, 0, sizeof(res));
        CHECK_INT(data_query(rd, NULL, &s, 1, &req, &res, why, sizeof(why)), 0);
        CHECK(strcmp(res.tier, "1m") == 0);
        CHECK_INT(res.npoints, NTICKS / 60);
        CHECK_INT(mismatches(&res, req.agg), 0);
        data_result_free(&res);
    }

    /* the limits: a per-series point cap, and the error says which limit and its numbers */
    req.step_ms = 0;
    req.max_points = 10;
    memset(&res, 0, sizeof(res));
    why[0] = '\0';
    CHECK_INT(data_query(rd, NULL, &s, 1, &req, &res, why, sizeof(why)), -E2BIG);
    CHECK(strstr(why, "max_points") != NULL);
    data_result_free(&res);
    /* a range before the first tick: points without values, never an error */
    req.max_points = 100000;
    req.from_ms = T0 - 60000;
    req.to_ms = T0 - 1000;
    req.step_ms = 10000;
    memset(&res, 0, sizeof(res));
    CHECK_INT(data_query(rd, NULL, &s, 1, &req, &res, why, sizeof(why)), 0);
    {
        int values = 0;

        for (size_t p = 0; p < res.npoints; p++)
            values += !isnan(res.values[p]);
        CHECK_INT(values, 0);
    }
    data_result_free(&res);

    reader_close(rd);
    unlink(path);
    {
        char wal[300];

        snprintf(wal, sizeof(wal), "%s-wal", path);
        unlink(wal);
        snprintf(wal, sizeof(wal), "%s-shm", path);
        unlink(wal);
        snprintf(wal, sizeof(wal), "%s.lock", path);
        unlink(wal);
    }
    rmdir(dir);
    return tl_done();
}
