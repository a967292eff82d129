/*
 * test_db.c - the SQLite counter log on real files: the counter_values view returns exactly what
 * counter_eval computes, roll-ups and retention, locked-database errors, reopen and versions.
 */
#include "storage/db.h"
#include "testlib.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/perflog-test-db-XXXXXX";

static void path_in_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* A tick with one instance per object ("vda", "eth0", "0" ...) and its "_Total" (two processes
 * for Process, which has none), values from a seeded LCG. The size-cap test leaves Process out:
 * its 6 MB budget was set for the system objects. */
static int mk_with_process = 1;

static struct tick *mk_tick(int64_t wall_ms, int64_t interval_ms, unsigned *seed, int with_nulls)
{
    static const char *names[OBJ_COUNT] = {"0", "vda", "eth0", "", "", "cp:4242"};
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = interval_ms;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        t->obj[o].rows = calloc(2, sizeof(struct tick_row));
        t->obj[o].n = o == OBJ_PROCESS && !mk_with_process ? 0 : od->single ? 1 : 2;
        for (size_t r = 0; r < t->obj[o].n; r++) {
            struct tick_row *row = &t->obj[o].rows[r];
            snprintf(row->name, sizeof(row->name), "%s",
                     !r                 ? names[o]
                     : o == OBJ_PROCESS ? "sh:4241"
                                        : "_Total");
            for (size_t f = 0; f < od->nfields; f++) {
                *seed = *seed * 1103515245u + 12345u;
                row->v[f] = (*seed >> 8) % (f % 3 == 0 ? 100000000u : 1000u);
                if (with_nulls && (*seed & 0xf) == 0)
                    row->null_mask |= 1ull << f;
            }
        }
    }
    return t;
}

/* Ticks t0 + i s .. t0 + (i + n - 1) s (mk_tick, 1 s apart, no NULLs) in one transaction, as the
 * writer commits a batch. */
static void write_batch(struct db *d, int64_t t0, int64_t i, int n, unsigned *seed)
{
    struct tick *batch[600];

    for (int k = 0; k < n && k < 600; k++)
        batch[k] = mk_tick(t0 + (i + k) * 1000, 1000, seed, 0);
    CHECK_INT(db_write_ticks(d, batch, (size_t)(n < 600 ? n : 600)), 0);
    for (int k = 0; k < n && k < 600; k++)
        tick_free(batch[k]);
}

/* Every view row equals counter_eval of the same stored row, bit for bit. */
static void test_view_matches_eval(void)
{
    char path[256];
    char err[512];
    struct db *d;
    struct tick *ticks[20];
    unsigned seed = 42;
    sqlite3 *conn;
    sqlite3_stmt *st;
    int rows = 0, mismatches = 0, nulls = 0;

    path_in_dir(path, sizeof(path), "view.db");
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < 20; i++)
        ticks[i] = mk_tick(1795974000000LL + i * 1000, i ? 1000 + (i % 3) : 0, &seed, i > 10);
    /* Sums of fields past INT64_MAX: SQLite's `a+b+...` goes on in doubles from the addition that
     * overflows, and counter_eval must too (once it was signed overflow: UB, a wrapped sum). */
    for (int f = 0; f < 3; f++) {
        ticks[5]->obj[OBJ_PROCESSOR].rows[0].v[f] = INT64_MAX - f;
        ticks[6]->obj[OBJ_PROCESSOR].rows[0].v[f] = INT64_MIN + f;
    }
    CHECK_INT(db_write_ticks(d, ticks, 20), 0);
    db_close(d);

    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(
        sqlite3_prepare_v2(conn,
                           "SELECT t_ms, interval_ms, object, instance, counter, value, path, "
                           "time_utc FROM counter_values",
                           -1, &st, NULL),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t t_ms = sqlite3_column_int64(st, 0);
        int i = (int)((t_ms - 1795974000000LL) / 1000);
        int o = counter_object_find((const char *)sqlite3_column_text(st, 2));
        const char *inst = (const char *)sqlite3_column_text(st, 3);
        const char *cname = (const char *)sqlite3_column_text(st, 4);
        const struct object_def *od = &counter_objects[o];
        const struct counter_def *c = NULL;
        const struct tick_row *row = &ticks[i]->obj[o].rows[0];
        double expect;
        int has;

        rows++;
        if (inst && (strcmp(inst, "_Total") == 0 || strcmp(inst, "sh:4241") == 0))
            row = &ticks[i]->obj[o].rows[1];
        for (size_t k = 0; k < od->ncounters; k++)
            if (strcmp(od->counters[k].name, cname) == 0)
                c = &od->counters[k];
        has = counter_eval(c, row->v, row->null_mask, ticks[i]->interval_ms, &expect);
        if (!has) {
            nulls++;
            if (sqlite3_column_type(st, 5) != SQLITE_NULL)
                mismatches++;
        } else if (sqlite3_column_type(st, 5) == SQLITE_NULL ||
                   sqlite3_column_double(st, 5) != expect) {
            if (mismatches++ < 5)
                fprintf(stderr, "mismatch %s %s: view %.17g eval %.17g\n",
                        (const char *)sqlite3_column_text(st, 6), cname,
                        sqlite3_column_double(st, 5), expect);
        }
        if (i == 3 && o == OBJ_DISK && strcmp(cname, "Disk Read Bytes/sec") == 0 &&
            strcmp(inst, "vda") == 0) {
            CHECK_STR((const char *)sqlite3_column_text(st, 6),
                      "\\PhysicalDisk(vda)\\Disk Read Bytes/sec");
            CHECK_STR((const char *)sqlite3_column_text(st, 7), "2026-11-29T17:40:03.000Z");
            CHECK_INT(sqlite3_column_int64(st, 1), 1000);
        }
        if (o == OBJ_MEMORY && strcmp(cname, "Dirty Bytes") == 0)
            CHECK_STR((const char *)sqlite3_column_text(st, 6), "\\Memory\\Dirty Bytes");
    }
    sqlite3_finalize(st);
    sqlite3_close(conn);
    /* 20 ticks x (3 multi-instance objects x 2 rows + 2 single) x counters */
    int expected_rows = 0;
    for (int o = 0; o < OBJ_COUNT; o++)
        expected_rows += (int)counter_objects[o].ncounters * (counter_objects[o].single ? 1 : 2);
    CHECK_INT(rows, 20 * expected_rows);
    CHECK_INT(mismatches, 0);
    CHECK(nulls > 0); /* the first tick and the injected nulls have no value */
    for (int i = 0; i < 20; i++)
        tick_free(ticks[i]);
}

/* Instances that move between ticks (one vanishes, one comes back first, a new one, a tick of one
 * row, the same names again): every row is stored under its own instance, whatever the row
 * before it at that position was (the writer remembers the last tick's ids by row index). */
static void test_instances_move(void)
{
    static const char *const order[][4] = {
        {"a", "b", "c", NULL}, {"a", "c", NULL},     {"b", "a", "c", "d"},
        {"d", NULL},           {"a", "b", "c", "d"}, {"c", "b", "a", NULL},
    };
    const int nt = (int)(sizeof(order) / sizeof(order[0]));
    char path[256], err[512];
    struct db *d;
    sqlite3 *conn;
    sqlite3_stmt *st;
    int rows = 0, wrong = 0;

    path_in_dir(path, sizeof(path), "move.db");
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < nt; i++) {
        struct tick *t = calloc(1, sizeof(*t));

        t->refs = 1;
        t->wall_ms = 1795974000000LL + i * 1000;
        t->interval_ms = i ? 1000 : 0;
        t->obj[OBJ_DISK].rows = calloc(4, sizeof(struct tick_row));
        for (int r = 0; r < 4 && order[i][r]; r++) {
            struct tick_row *row = &t->obj[OBJ_DISK].rows[r];

            snprintf(row->name, sizeof(row->name), "%s", order[i][r]);
            /* the name in the value: 'a' -> 1000 + tick */
            row->v[0] = (order[i][r][0] - 'a' + 1) * 1000 + i;
            t->obj[OBJ_DISK].n++;
        }
        CHECK_INT(db_write_ticks(d, &t, 1), 0);
        tick_free(t);
    }
    db_close(d);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT i.name, o.rd_ios FROM obj_disk o JOIN instances i ON "
                                 "i.id = o.inst",
                                 -1, &st, NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);

        rows++;
        if (sqlite3_column_int64(st, 1) / 1000 != name[0] - 'a' + 1 && wrong++ < 5)
            fprintf(stderr, "instance %s holds %lld\n", name,
                    (long long)sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    CHECK_INT(rows, 3 + 2 + 4 + 1 + 4 + 3);
    CHECK_INT(wrong, 0);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT count(*) FROM instances WHERE object = 'PhysicalDisk'", -1,
                                 &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int(st, 0), 4);
    sqlite3_finalize(st);
    sqlite3_close(conn);
}

/* Minute and hour roll-ups: min/avg/max of the raw values, and the retention that follows. */
static void test_rollups_and_retention(void)
{
    char path[256], err[512];
    struct db *d;
    struct db_retention keep = {7, 90, 1825, 0, 0}, short_raw = {1, 2, 3, 0, 0};
    const int64_t t0 = 1795968000000LL; /* 2026-11-29T17:00:00Z, a whole hour */
    sqlite3 *conn;
    sqlite3_stmt *st;
    int more, guard = 0;

    path_in_dir(path, sizeof(path), "rollup.db");
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    /* 150 ticks at 1 s: disk vda reads 512 * (i % 10) bytes per second. */
    for (int i = 0; i < 150; i++) {
        struct tick *t = calloc(1, sizeof(*t));
        t->refs = 1;
        t->wall_ms = t0 + i * 1000;
        t->interval_ms = 1000;
        t->obj[OBJ_DISK].rows = calloc(1, sizeof(struct tick_row));
        t->obj[OBJ_DISK].n = 1;
        strcpy(t->obj[OBJ_DISK].rows[0].name, "vda");
        t->obj[OBJ_DISK].rows[0].v[DISK_RD_SECTORS] = i % 10;
        t->obj[OBJ_MEMORY].rows = calloc(1, sizeof(struct tick_row));
        t->obj[OBJ_MEMORY].n = 1;
        t->obj[OBJ_MEMORY].rows[0].v[MEM_DIRTY_KB] = i;
        CHECK_INT(db_write_ticks(d, &t, 1), 0);
        tick_free(t);
    }
    /* "now" is 2.5 minutes after t0: minutes 0 and 1 are complete, minute 2 is not. */
    do
        more = db_maintain(d, t0 + 150000, &keep);
    while (more > 0 && ++guard < 100);
    CHECK_INT(more, 0);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(
        sqlite3_prepare_v2(conn,
                           "SELECT bucket_ms, n, min, avg, max FROM counter_rollups WHERE "
                           "tier = '1m' AND path = '\\PhysicalDisk(vda)\\Disk Read Bytes/sec' "
                           "ORDER BY bucket_ms",
                           -1, &st, NULL),
        SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int64(st, 0), t0);
    CHECK_INT(sqlite3_column_int64(st, 1), 60);
    CHECK_DBL(sqlite3_column_double(st, 2), 0.0, 0);
    CHECK_DBL(sqlite3_column_double(st, 3), 512.0 * 4.5, 1e-9);
    CHECK_DBL(sqlite3_column_double(st, 4), 512.0 * 9, 0);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int64(st, 0), t0 + 60000);
    CHECK_INT(sqlite3_step(st), SQLITE_DONE); /* minute 2 is still open */
    sqlite3_finalize(st);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT n, min, avg, max FROM counter_rollups WHERE tier = '1m' "
                                 "AND path = '\\Memory\\Dirty Bytes' AND bucket_ms = ?",
                                 -1, &st, NULL),
              SQLITE_OK);
    sqlite3_bind_int64(st, 1, t0 + 60000);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_DBL(sqlite3_column_double(st, 1), 60 * 1024.0, 0);
    CHECK_DBL(sqlite3_column_double(st, 2), 89.5 * 1024.0, 1e-9);
    CHECK_DBL(sqlite3_column_double(st, 3), 119 * 1024.0, 0);
    sqlite3_finalize(st);

    /* Two hours later: the hour is rolled up from the three minutes. */
    guard = 0;
    do
        more = db_maintain(d, t0 + 2 * 3600000, &keep);
    while (more > 0 && ++guard < 100);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT bucket_ms, n, min, avg, max FROM counter_rollups WHERE "
                                 "tier = '1h' AND path = '\\Memory\\Dirty Bytes'",
                                 -1, &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int64(st, 0), t0);
    CHECK_INT(sqlite3_column_int64(st, 1), 150);
    CHECK_DBL(sqlite3_column_double(st, 2), 0, 0);
    CHECK_DBL(sqlite3_column_double(st, 3), 74.5 * 1024.0, 1e-6);
    CHECK_DBL(sqlite3_column_double(st, 4), 149 * 1024.0, 0);
    sqlite3_finalize(st);

    /* Retention: with raw_days = 1, two days later the raw ticks go, the summaries stay. */
    guard = 0;
    do
        more = db_maintain(d, t0 + 2 * 86400000LL, &short_raw);
    while (more > 0 && ++guard < 100);
    CHECK_INT(more, 0);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT (SELECT count(*) FROM ticks), (SELECT count(*) FROM "
                                 "obj_disk), (SELECT count(*) FROM obj_disk_1m), (SELECT count(*) "
                                 "FROM obj_disk_1h)",
                                 -1, &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int64(st, 0), 0);
    CHECK_INT(sqlite3_column_int64(st, 1), 0);
    CHECK_INT(sqlite3_column_int64(st, 2), 3);
    CHECK_INT(sqlite3_column_int64(st, 3), 1);
    sqlite3_finalize(st);
    /* Ten days later the minute tier (2 days) goes too; the hour tier (3 days) also. */
    guard = 0;
    do
        more = db_maintain(d, t0 + 10 * 86400000LL, &short_raw);
    while (more > 0 && ++guard < 100);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT (SELECT count(*) FROM obj_disk_1m), (SELECT count(*) "
                                 "FROM obj_disk_1h)",
                                 -1, &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int64(st, 0), 0);
    CHECK_INT(sqlite3_column_int64(st, 1), 0);
    sqlite3_finalize(st);
    sqlite3_close(conn);
    db_close(d);
}

/* A database locked by another process: the write fails with -EBUSY, stores nothing, and the
 * same batch succeeds once the lock is gone. */
static void test_locked(void)
{
    char path[256], err[512];
    struct db *d;
    sqlite3 *other;
    unsigned seed = 7;
    struct tick *t = mk_tick(1795974000000LL, 1000, &seed, 0);
    sqlite3_stmt *st;

    path_in_dir(path, sizeof(path), "locked.db");
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(sqlite3_open(path, &other), SQLITE_OK);
    CHECK_INT(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    CHECK_INT(db_write_ticks(d, &t, 1), -EBUSY);
    CHECK_INT(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    CHECK_INT(db_write_ticks(d, &t, 1), 0);
    CHECK_INT(sqlite3_prepare_v2(other, "SELECT count(*) FROM ticks", -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    sqlite3_close(other);
    db_close(d);
    tick_free(t);
}

/* Reopen keeps data; a newer schema version is refused with a clear message; garbage too. */
static void test_versions(void)
{
    char path[256], err[512] = "";
    struct db *d;
    sqlite3 *conn;
    FILE *f;

    path_in_dir(path, sizeof(path), "rollup.db");
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    db_close(d);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(conn);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), -EPROTO);
    CHECK(strstr(err, "schema version 99 is newer") != NULL);

    path_in_dir(path, sizeof(path), "garbage.db");
    f = fopen(path, "w");
    fputs("this is not a database, just text that is long enough to look like a header....\n", f);
    fclose(f);
    CHECK(db_open(path, "testhost", &d, err, sizeof(err)) < 0);
    CHECK(strstr(err, "garbage.db") != NULL);
}

/* A database file in the test directory made from tests/fixtures/db/NAME.sql; its connection, or
 * NULL. path receives the file's name. */
static sqlite3 *fixture_db(const char *name, char *path, size_t cap)
{
    char sqlpath[512], file[64], *sql = NULL;
    sqlite3 *conn = NULL;
    FILE *f;
    long len;

    snprintf(sqlpath, sizeof(sqlpath), "%s/db/%s.sql", FIXTURES_DIR, name);
    snprintf(file, sizeof(file), "%s.db", name);
    path_in_dir(path, cap, file);
    if (!(f = fopen(sqlpath, "rb")))
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(sql = calloc(1, (size_t)len + 1)) || fread(sql, 1, (size_t)len, f) != (size_t)len)
        goto out;
    if (sqlite3_open(path, &conn) != SQLITE_OK ||
        sqlite3_exec(conn, sql, NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(conn);
        conn = NULL;
    }
out:
    fclose(f);
    free(sql);
    return conn;
}

/* A version-1 database made by perflogd 0.1 (tests/fixtures/db/v1.sql) opens, keeps its data,
 * takes new ticks, reads back through the current views, and is upgraded to the current version:
 * the runs table has the columns the runs feature added (tests/unit/test_pdh_extra.c upgrades a
 * version-3 database). */
static void test_old_version_fixture(void)
{
    char path[256], err[512];
    struct db *d;
    sqlite3 *conn;
    sqlite3_stmt *st;
    unsigned seed = 9;
    struct tick *t;

    conn = fixture_db("v1", path, sizeof(path));
    CHECK(conn != NULL);
    if (!conn)
        return;
    sqlite3_close(conn);

    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    t = mk_tick(1895974000000LL, 1000, &seed, 0);
    CHECK_INT(db_write_ticks(d, &t, 1), 0);
    tick_free(t);
    db_close(d);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(
        sqlite3_prepare_v2(conn,
                           "SELECT count(DISTINCT t_ms), (SELECT value FROM meta WHERE key = "
                           "'host'), (PRAGMA_user_version) FROM counter_values, "
                           "(SELECT user_version AS PRAGMA_user_version FROM pragma_user_version)",
                           -1, &st, NULL),
        SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK(sqlite3_column_int(st, 0) >= 2); /* the fixture's ticks and the new one */
    CHECK_INT(sqlite3_column_int(st, 2), DB_SCHEMA_VERSION);
    sqlite3_finalize(st);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT count(*) FROM pragma_table_info('runs') WHERE name IN "
                                 "('settle_timeout_s', 'peers', 'io_read_bytes', "
                                 "'io_write_bytes', 'storage_read_bytes', 'storage_write_bytes')",
                                 -1, &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int(st, 0), 6);
    sqlite3_finalize(st);
    sqlite3_close(conn);
}

/* Every row of `sql` on conn as text, one line per row, into a malloc'd string (NULL on error). */
static char *rows_text(sqlite3 *conn, const char *sql)
{
    sqlite3_stmt *st;
    char *out = NULL, *grown;
    size_t len = 0, cap = 0;

    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            char cell[512];
            int n = sqlite3_column_type(st, c) == SQLITE_FLOAT
                        ? snprintf(cell, sizeof(cell), "%.17g|", sqlite3_column_double(st, c))
                        : snprintf(cell, sizeof(cell), "%s|",
                                   (const char *)sqlite3_column_text(st, c)
                                       ? (const char *)sqlite3_column_text(st, c)
                                       : "NULL");

            if (len + (size_t)n + 2 > cap) {
                cap = (cap + (size_t)n + 2) * 2;
                if (!(grown = realloc(out, cap)))
                    break;
                out = grown;
            }
            memcpy(out + len, cell, (size_t)n + 1);
            len += (size_t)n;
        }
        if (out) {
            out[len++] = '\n';
            out[len] = 0;
        }
    }
    sqlite3_finalize(st);
    return out ? out : strdup("");
}

static const char *const v4_queries[] = {
    /* every counter the file has values of (counters added since version 4 have rows without a
     * value in the upgraded views: nothing to compare) */
    "SELECT * FROM counter_values WHERE path IN (SELECT path FROM counter_values WHERE value IS "
    "NOT NULL) ORDER BY path, t_ms",
    "SELECT * FROM counter_rollups WHERE path IN (SELECT path FROM counter_rollups WHERE avg IS "
    "NOT NULL) ORDER BY tier, path, bucket_ms",
    "SELECT t_ms, value FROM counter_values WHERE path = '\\PhysicalDisk(vda)\\Disk Bytes/sec' "
    "ORDER BY t_ms",
    "SELECT t_ms, value FROM counter_values WHERE path = '\\Memory\\Dirty Bytes' ORDER BY t_ms",
    "SELECT count(*) FROM counter_values WHERE path = '\\PhysicalDisk(nosuch)\\Disk Bytes/sec'",
};
#define V4_NQUERIES (sizeof(v4_queries) / sizeof(v4_queries[0]))

/*
 * A version-4 database (tests/fixtures/db/v4-vm.sql, the schema before `series`) opens, upgrades to
 * the current version and answers the same queries as its own views did, value for value; a
 * filter on path is then a lookup in series_path, and a new instance gets its series rows.
 */
static void test_v4_series(void)
{
    char path[256], err[512], *before[V4_NQUERIES], *plan;
    struct db *d;
    sqlite3 *conn;

    conn = fixture_db("v4-vm", path, sizeof(path));
    CHECK(conn != NULL);
    if (!conn)
        return;
    for (size_t q = 0; q < V4_NQUERIES; q++)
        before[q] = rows_text(conn, v4_queries[q]); /* through the version-4 views */
    CHECK(before[0] && strlen(before[0]) > 1000);
    CHECK(before[2] && strchr(before[2], '\n') != strrchr(before[2], '\n')); /* several rows */
    CHECK_STR(before[4], "0|\n");
    sqlite3_close(conn);

    CHECK_INT(db_open(path, "vm", &d, err, sizeof(err)), 0);
    db_close(d);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    for (size_t q = 0; q < V4_NQUERIES; q++) {
        char *after = rows_text(conn, v4_queries[q]);

        CHECK(after && before[q] && strcmp(after, before[q]) == 0);
        free(after);
        free(before[q]);
    }
    plan = rows_text(conn, "SELECT user_version, (SELECT count(*) FROM series), (SELECT count(*) "
                           "FROM instances i JOIN counters c ON c.object = i.object) FROM "
                           "pragma_user_version");
    CHECK(plan != NULL);
    if (plan) {
        int version = 0, series = 0, want = -1;

        CHECK_INT(sscanf(plan, "%d|%d|%d|", &version, &series, &want), 3);
        CHECK_INT(version, DB_SCHEMA_VERSION);
        CHECK_INT(series, want);
        CHECK(series > 100);
    }
    free(plan);
    plan = rows_text(conn, "EXPLAIN QUERY PLAN SELECT value FROM counter_values WHERE path = "
                           "'\\PhysicalDisk(vda)\\Disk Bytes/sec' AND t_ms BETWEEN 0 AND 1");
    CHECK(plan && strstr(plan, "USING INDEX series_path (path=?)"));
    free(plan);
    /* a new instance (the writer's, or anyone's) gets one series row per counter of its object */
    CHECK_INT(sqlite3_exec(conn,
                           "INSERT INTO instances (object, name, first_tick) VALUES "
                           "('PhysicalDisk', 'sdz', 1)",
                           NULL, NULL, NULL),
              SQLITE_OK);
    plan = rows_text(conn, "SELECT (SELECT count(*) FROM series s JOIN instances i ON i.id = "
                           "s.inst WHERE i.name = 'sdz'), (SELECT count(*) FROM counters WHERE "
                           "object = 'PhysicalDisk'), (SELECT count(*) FROM series WHERE path = "
                           "'\\PhysicalDisk(sdz)\\Disk Bytes/sec')");
    CHECK(plan != NULL);
    if (plan) {
        int got = -1, want = -2, one = 0;

        CHECK_INT(sscanf(plan, "%d|%d|%d|", &got, &want, &one), 3);
        CHECK_INT(got, want);
        CHECK_INT(one, 1);
    }
    free(plan);
    sqlite3_close(conn);
}

/*
 * The size cap: ten hours of ticks (about 18 MB here) under a 6 MB cap. db_maintain prunes the
 * oldest raw ticks (keeping the newest hour), gives the pages back (incremental auto-vacuum), and
 * the file ends under the cap with the newest tick still there. A cap that cannot be met (less
 * than the hour that is always kept) is reported, not met by deleting newer data.
 */
static void test_size_cap(void)
{
    struct db_retention cap = {7, 90, 1825, 6000000, 0}, tiny = {7, 90, 1825, 100000, 0};
    const int64_t t0 = 1795968000000LL, n = 36000;
    struct db_size sz;
    char path[256], err[512];
    unsigned seed = 7;
    struct db *d;
    sqlite3 *conn;
    int more, guard = 0;
    int64_t newest = 0, oldest = 0, count = 0;

    mk_with_process = 0;
    path_in_dir(path, sizeof(path), "cap.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    for (int64_t i = 0; i < n; i += 600) {
        write_batch(d, t0, i, 600, &seed);
        /* the writer runs maintenance between writes; so does this loop */
        more = db_maintain(d, t0 + (i + 600) * 1000, &cap);
        CHECK(more >= 0);
    }
    do
        more = db_maintain(d, t0 + n * 1000, &cap);
    while (more > 0 && ++guard < 1000);
    CHECK_INT(more, 0);
    db_size_get(d, &sz);
    CHECK(sz.used_bytes <= cap.max_bytes);
    CHECK_INT(sz.over_cap, 0);
    if (sqlite3_open_v2(path, &conn, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;

        if (sqlite3_prepare_v2(conn, "SELECT max(t_ms), min(t_ms), count(*) FROM ticks", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            newest = sqlite3_column_int64(st, 0);
            oldest = sqlite3_column_int64(st, 1);
            count = sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
        sqlite3_close(conn);
    }
    CHECK_INT(newest, t0 + (n - 1) * 1000);       /* the newest data is kept */
    CHECK(newest - oldest >= 3600 * 1000 - 1000); /* at least the newest hour of raw */
    CHECK(count < n);                             /* and older raw data went */
    fprintf(stderr, "size cap: %lld of %lld ticks kept, %lld bytes used, file %lld bytes\n",
            (long long)count, (long long)n, (long long)sz.used_bytes, (long long)sz.file_bytes);
    CHECK(sz.file_bytes <= cap.max_bytes + cap.max_bytes / 10); /* pages went back; WAL */
    /* a cap below what must be kept: reported */
    guard = 0;
    do
        more = db_maintain(d, t0 + n * 1000, &tiny);
    while (more > 0 && ++guard < 1000);
    db_size_get(d, &sz);
    CHECK_INT(sz.over_cap, 1);
    db_close(d);
}

static int64_t wal_size(const char *path)
{
    char wal[300];
    struct stat sb;

    snprintf(wal, sizeof(wal), "%s-wal", path);
    return stat(wal, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* db_checkpoint empties the WAL; a reader that holds an older snapshot makes it -EBUSY (nothing
 * is lost, the reader still sees its snapshot), and once the reader is done it succeeds. */
static void test_checkpoint(void)
{
    char path[256], err[512];
    struct tick *t[10];
    unsigned seed = 3;
    sqlite3 *other;
    sqlite3_stmt *st;
    struct db *d;

    path_in_dir(path, sizeof(path), "ckpt.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    for (int i = 0; i < 10; i++)
        t[i] = mk_tick(1795974000000LL + i * 1000, 1000, &seed, 0);
    CHECK_INT(db_write_ticks(d, t, 5), 0);
    CHECK(wal_size(path) > 0);
    CHECK_INT(db_checkpoint(d), 0);
    CHECK_INT(wal_size(path), 0);

    /* a reader in the middle of a read, then a commit after its snapshot */
    CHECK_INT(db_write_ticks(d, t + 5, 1), 0);
    CHECK_INT(sqlite3_open_v2(path, &other, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(other, "SELECT t_ms FROM ticks", -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(db_write_ticks(d, t + 6, 4), 0);
    CHECK_INT(db_checkpoint(d), -EBUSY);
    CHECK(wal_size(path) > 0);
    sqlite3_finalize(st);
    CHECK_INT(db_checkpoint(d), 0);
    CHECK_INT(wal_size(path), 0);
    CHECK_INT(sqlite3_prepare_v2(other, "SELECT count(*) FROM ticks", -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int(st, 0), 10);
    sqlite3_finalize(st);
    sqlite3_close(other);
    db_close(d);
    for (int i = 0; i < 10; i++)
        tick_free(t[i]);
}

/* The WAL is worth a truncating checkpoint once it holds a quarter of its budget, and not before:
 * the default budget (4 MiB: 2 KiB pages, frames of 2 072 bytes, due at 512 frames), then under a
 * cap of 4 MiB (a budget of 512 KiB: due at 64 frames). After the checkpoint it is not due. */
static void test_truncate_due(void)
{
    struct db_retention cap = {7, 90, 1825, 4 * 1024 * 1024, 0};
    const int64_t t0 = 1795968000000LL, frame = 2048 + 24;
    char path[256], err[512];
    unsigned seed = 5;
    int64_t i = 0, at;
    struct db *d;

    path_in_dir(path, sizeof(path), "truncdue.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    CHECK_INT(db_checkpoint(d), 0);
    CHECK_INT(db_truncate_due(d), 0);
    for (int round = 0; round < 2; round++) {
        int64_t due_frames = round == 0 ? 512 : 64, before = 0;

        while (!db_truncate_due(d) && i < 20000) {
            before = wal_size(path);
            write_batch(d, t0, i, 2, &seed);
            i += 2;
        }
        at = wal_size(path);
        CHECK(db_truncate_due(d));
        CHECK(at >= 32 + due_frames * frame);    /* not before a quarter of the budget */
        CHECK(before < 32 + due_frames * frame); /* and at the first commit past it */
        CHECK_INT(db_checkpoint(d), 0);
        CHECK_INT(wal_size(path), 0);
        CHECK_INT(db_truncate_due(d), 0);
        if (round == 0) { /* the cap's budget, set by maintenance; then an empty WAL again */
            CHECK(db_maintain(d, t0 + i * 1000, &cap) >= 0);
            CHECK_INT(db_checkpoint(d), 0);
            CHECK_INT(db_truncate_due(d), 0);
        }
    }
    db_close(d);
}

/* Under a cap of 4 MiB the WAL's budget is 512 KiB: three hours of ticks written two a
 * transaction, as the writer does, with maintenance and a checkpoint every 30 ticks, and the WAL
 * never grows past it (before the budget it grew to SQLite's default autocheckpoint of 1000
 * pages, 4 MB), while the cap prunes the oldest ticks; the cap, with the WAL's budget counted,
 * holds. */
static void test_wal_budget(void)
{
    /* 4 MiB: with the Pressure, SMB and NFS objects and the copy counters a tick holds about
     * half as much again as when this was 3 MiB (test_size_cap keeps 3601 ticks where it kept
     * 5398), and at 3 MiB this test ended with 3 342 336 bytes used and a 3 538 944-byte file:
     * what cannot be pruned (schema, roll-ups, the newest ticks) left no room for the WAL's
     * budget. */
    struct db_retention cap = {7, 90, 1825, 4 * 1024 * 1024, 0};
    const int64_t t0 = 1795968000000LL, n = 3 * 3600, budget = 512 * 1024;
    char path[256], err[512];
    int64_t peak = 0, w;
    struct db_size sz;
    unsigned seed = 11;
    sqlite3_stmt *st;
    sqlite3 *conn;
    struct db *d;

    path_in_dir(path, sizeof(path), "walbudget.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    CHECK(db_maintain(d, t0, &cap) >= 0);
    CHECK_INT(db_checkpoint(d), 0); /* the schema's own pages: once per database */
    for (int64_t i = 0; i < n; i += 2) {
        write_batch(d, t0, i, 2, &seed);
        if ((i + 2) % 30 == 0) {
            int more, guard = 0;

            do
                more = db_maintain(d, t0 + (i + 2) * 1000, &cap);
            while (more > 0 && ++guard < 100);
            CHECK(more >= 0);
            CHECK_INT(db_checkpoint(d), 0);
        }
        w = wal_size(path);
        peak = w > peak ? w : peak;
    }
    db_size_get(d, &sz);
    fprintf(stderr, "WAL budget: peak WAL %lld bytes for a 4 MiB cap; used %lld, file %lld\n",
            (long long)peak, (long long)sz.used_bytes, (long long)sz.file_bytes);
    CHECK(peak > 0);
    CHECK(peak <= budget);
    CHECK(sz.used_bytes + budget <= cap.max_bytes);
    CHECK(sz.file_bytes <= cap.max_bytes);
    CHECK_INT(sz.over_cap, 0);
    db_close(d);
    CHECK_INT(sqlite3_open_v2(path, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(conn, "SELECT min(t_ms) FROM ticks", -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK(sqlite3_column_int64(st, 0) > t0); /* the cap was reached: the oldest went */
    sqlite3_finalize(st);
    sqlite3_close(conn);
}

/* Frames in the WAL of `path` not copied into the database yet: mxFrame (byte 16 of the
 * wal-index header) less nBackfill (byte 96, after the header's two copies), in the -shm file,
 * native byte order (sqlite.org/walformat.html). -1 when unreadable. */
static int64_t wal_pending(const char *path)
{
    unsigned char hdr[100];
    uint32_t mx, nb;
    char shm[300];
    FILE *f;
    size_t got;

    snprintf(shm, sizeof(shm), "%s-shm", path);
    if (!(f = fopen(shm, "rb")))
        return -1;
    got = fread(hdr, 1, sizeof(hdr), f);
    fclose(f);
    if (got != sizeof(hdr))
        return -1;
    memcpy(&mx, hdr + 16, 4);
    memcpy(&nb, hdr + 96, 4);
    return (int64_t)mx - (int64_t)nb;
}

/* A maintenance step's commit leaves a due checkpoint to the caller, which the writer makes
 * between rests (storage/db.c wal_hook), up to half as many frames again as the checkpoint's
 * threshold; a tick's commit checkpoints at the threshold as before. Under a 4 MiB cap (a WAL
 * budget of 512 KiB: 2 KiB pages, a checkpoint due at 128 frames) with chunking, an hour of ticks
 * written two a transaction, maintenance every 30 ticks, and the caller's passive checkpoint when
 * due: some maintenance ends past the threshold and none past half again, a tick's commit never
 * leaves one past it, and the caller's checkpoint copies every frame. */
static void test_maint_leaves_checkpoint(void)
{
    struct db_retention cap = {7, 90, 1825, 4 * 1024 * 1024, 60};
    const int64_t t0 = 1795968000000LL, n = 3600, ckpt = 512 * 1024 / 2 / 2048;
    char path[256], err[512];
    int64_t left_due = 0, most = 0, p;
    unsigned seed = 17;
    struct db *d;

    path_in_dir(path, sizeof(path), "maintckpt.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    CHECK(db_maintain(d, t0, &cap) >= 0);
    CHECK_INT(db_checkpoint(d), 0);
    for (int64_t i = 0; i < n; i += 2) {
        write_batch(d, t0, i, 2, &seed);
        p = wal_pending(path);
        if (!(p >= 0 && p < ckpt))
            fprintf(stderr, "after tick %lld: %lld frames pending\n", (long long)i, (long long)p);
        CHECK(p >= 0 && p < ckpt);
        if ((i + 2) % 30 == 0) {
            int more, guard = 0;

            do {
                more = db_maintain(d, t0 + (i + 2) * 1000, &cap);
                p = wal_pending(path);
                most = p > most ? p : most;
                if (p >= ckpt) {
                    left_due++;
                    CHECK(db_checkpoint_due(d));
                }
                if (db_checkpoint_due(d)) {
                    CHECK_INT(db_checkpoint_passive(d), 0);
                    CHECK_INT(wal_pending(path), 0);
                }
            } while (more > 0 && ++guard < 100);
            CHECK(more >= 0);
        }
    }
    fprintf(stderr,
            "maintenance left %lld checkpoints to the caller, at most %lld frames (%lld "
            "due)\n",
            (long long)left_due, (long long)most, (long long)ckpt);
    CHECK(left_due > 0);
    CHECK(most < ckpt + ckpt / 2);
    db_close(d);
}

/* The commit of the roll-up buckets written ahead of a minute's first tick (db_rollup_ahead)
 * leaves a checkpoint it makes due to the caller, as a maintenance step's does: the WAL is filled
 * (by a second connection) to one frame short of the threshold, and after the buckets' commit
 * it holds the threshold or more, the checkpoint is due, and the caller's passive one copies
 * every frame. */
static void test_ahead_leaves_checkpoint(void)
{
    struct db_retention cap = {7, 90, 1825, 4 * 1024 * 1024, 60};
    const int64_t t0 = 1795968000000LL, ckpt = 512 * 1024 / 2 / 2048;
    char path[256], err[512];
    unsigned seed = 23;
    sqlite3 *pad;
    struct db *d;
    int64_t p = -1;

    path_in_dir(path, sizeof(path), "aheadckpt.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    CHECK(db_maintain(d, t0, &cap) >= 0);
    /* Minute 1's roll-up runs; minute 0's (a start's) goes to the batch roll-up, which must take
     * it before minute 1's buckets can be written. */
    for (int64_t i = 0; i < 120; i += 2) {
        write_batch(d, t0, i, 2, &seed);
        if (i == 62)
            CHECK(db_maintain(d, t0 + 64000, &cap) >= 0);
    }
    CHECK_INT(db_checkpoint(d), 0);
    CHECK_INT(sqlite3_open(path, &pad), SQLITE_OK);
    CHECK_INT(sqlite3_exec(pad, "CREATE TABLE pad (b BLOB)", NULL, NULL, NULL), SQLITE_OK);
    for (int k = 0; k < 1000 && (p = wal_pending(path)) < ckpt - 1; k++)
        CHECK_INT(sqlite3_exec(pad, "INSERT INTO pad VALUES (zeroblob(100))", NULL, NULL, NULL),
                  SQLITE_OK);
    CHECK_INT(p, ckpt - 1);
    CHECK_INT(db_rollup_ahead(d, t0 + 120000), 1);
    p = wal_pending(path);
    fprintf(stderr, "the buckets' commit left %lld frames (%lld due)\n", (long long)p,
            (long long)ckpt);
    CHECK(p >= ckpt);
    CHECK(db_checkpoint_due(d));
    CHECK_INT(db_checkpoint_passive(d), 0);
    CHECK_INT(wal_pending(path), 0);
    CHECK_INT(db_rollup_ahead(d, t0 + 120000), 0);
    sqlite3_close(pad);
    db_close(d);
}

/*
 * db_set_tick_pause: the function runs after each tick's rows, inside the transaction, so a reader
 * sees none of the batch while the writer rests in it (the batch commits whole); it runs once a
 * tick, the last before the commit; without one set, nothing is called.
 */
struct pause_seen {
    sqlite3 *peer;
    int calls;
    int64_t ticks_seen[8];
};

static void pause_peek(void *arg)
{
    struct pause_seen *p = arg;
    sqlite3_stmt *st;

    if (p->calls < 8 &&
        sqlite3_prepare_v2(p->peer, "SELECT count(*) FROM ticks", -1, &st, NULL) == SQLITE_OK) {
        p->ticks_seen[p->calls] = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
        sqlite3_finalize(st);
    }
    p->calls++;
}

static void test_tick_pause(void)
{
    const int64_t t0 = 1795968000000LL;
    struct pause_seen seen = {0};
    char path[256], err[512];
    unsigned seed = 31;
    struct db *d;

    path_in_dir(path, sizeof(path), "pause.db");
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    write_batch(d, t0, 0, 2, &seed); /* no pause set: nothing called */
    CHECK_INT(sqlite3_open(path, &seen.peer), SQLITE_OK);
    db_set_tick_pause(d, pause_peek, &seen);
    write_batch(d, t0, 2, 3, &seed);
    CHECK_INT(seen.calls, 3);
    for (int k = 0; k < 3; k++)
        CHECK_INT(seen.ticks_seen[k], 2); /* the batch's ticks are not visible in its rests */
    write_batch(d, t0, 5, 1, &seed);
    CHECK_INT(seen.calls, 4);
    CHECK_INT(seen.ticks_seen[3], 5);
    db_set_tick_pause(d, NULL, NULL);
    write_batch(d, t0, 6, 2, &seed);
    CHECK_INT(seen.calls, 4);
    {
        sqlite3_stmt *st;

        CHECK_INT(sqlite3_prepare_v2(seen.peer, "SELECT count(*), min(t_ms), max(t_ms) FROM ticks",
                                     -1, &st, NULL),
                  SQLITE_OK);
        CHECK_INT(sqlite3_step(st), SQLITE_ROW);
        CHECK_INT(sqlite3_column_int64(st, 0), 8);
        CHECK_INT(sqlite3_column_int64(st, 1), t0);
        CHECK_INT(sqlite3_column_int64(st, 2), t0 + 7000);
        sqlite3_finalize(st);
    }
    sqlite3_close(seen.peer);
    db_close(d);
}

int main(void)
{
    char cmd[300];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_view_matches_eval();
    test_instances_move();
    test_rollups_and_retention();
    test_locked();
    test_versions();
    test_old_version_fixture();
    test_v4_series();
    test_size_cap();
    test_checkpoint();
    test_truncate_due();
    test_maint_leaves_checkpoint();
    test_ahead_leaves_checkpoint();
    test_wal_budget();
    test_tick_pause();
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
