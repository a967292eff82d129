/*
 * test_db_chunks.c - the compressed tier of the counter log (storage/db.c maintain_chunks): every
 * reader gives the same answers, value for value, before and after the writer chunks the raw
 * rows; retention drops chunks; a version-4 database (tests/fixtures/db/v4.sql, written by the
 * perflogd of that version with bench_seed) upgrades, answers the same and is then chunked.
 * The ticks go into ticks_chunks once their span's rows are chunked: ticks_all, counter_values
 * over time ranges and the readers' ticks answer the same for irregular ticks (missed ticks, no
 * interval, a clock stepped back, gaps in the ids), retention and the size cap drop them, and a
 * version-5 database (tests/fixtures/db/v5.sql: chunked rows, plain ticks) upgrades.
 */
#include "base/sbuf.h"
#include "storage/chunk_sql.h"
#include "storage/db.h"
#include "storage/pdh_extra.h"
#include "storage/reader.h"
#include "storage/schema.h"
#include "testdb.h"
#include "testlib.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/perflog-test-chunks-XXXXXX";

#define T0     1795974000000LL
#define NTICKS 3000
#define SPAN   600 /* ticks per merged chunk (CHUNK_TICKS in storage/db.c) */

/*
 * Tick i (id i + 1): Processor "0", Disk "vda" always and "vdb" only in ticks [500, 1300) (a
 * series that appears in the second span and vanishes in the fifth), Net "eth0", Memory, TCP. The
 * values are an LCG's, with NULLs, and vda's in_flight level swings between the 64-bit extremes.
 */
static struct tick *mk_tick(int i, int64_t wall_ms, unsigned *seed)
{
    static const char *names[OBJ_COUNT] = {"0", "vda", "eth0", "", "", ""};
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = i ? 1000 + i % 3 : 0;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        t->obj[o].rows = calloc(2, sizeof(struct tick_row));
        t->obj[o].n = o == OBJ_PROCESS ? 0 : 1;
        if (o == OBJ_DISK && i >= 500 && i < 1300)
            t->obj[o].n = 2;
        for (size_t r = 0; r < t->obj[o].n; r++) {
            struct tick_row *row = &t->obj[o].rows[r];

            snprintf(row->name, sizeof(row->name), "%s", r ? "vdb" : names[o]);
            for (size_t f = 0; f < od->nfields; f++) {
                *seed = *seed * 1103515245u + 12345u;
                row->v[f] = (*seed >> 8) % (f % 3 == 0 ? 100000000u : 1000u);
                if ((*seed & 0x1f) == 0)
                    row->null_mask |= 1ull << f;
            }
            if (o == OBJ_DISK && r == 0)
                row->v[8] = i % 7 == 0 ? INT64_MAX : i % 7 == 1 ? INT64_MIN : i;
        }
    }
    return t;
}

static int write_ticks(struct db *d, int first, int n, int64_t t0, unsigned *seed)
{
    struct tick *batch[SPAN];
    int rc = 0;

    for (int i = first; rc == 0 && i < first + n; i += SPAN) {
        int k = first + n - i < SPAN ? first + n - i : SPAN;

        for (int j = 0; j < k; j++)
            batch[j] = mk_tick(i + j, t0 + (int64_t)(i + j) * 1000, seed);
        rc = db_write_ticks(d, batch, (size_t)k);
        for (int j = 0; j < k; j++)
            tick_free(batch[j]);
    }
    return rc;
}

static int maintain_all(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    int more, steps = 0;

    do
        more = db_maintain(d, now_ms, r);
    while (more > 0 && ++steps < 10000);
    if (more < 0)
        fprintf(stderr, "db_maintain: %s\n", db_errmsg(d));
    return more;
}

/* The rows of `sql` as one text: REALs with all 17 digits, NULL as "-". */
static char *snapshot(sqlite3 *conn, const char *sql)
{
    struct sbuf b = {0};
    sqlite3_stmt *st;

    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(conn));
        return NULL;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_NULL:
                sbuf_printf(&b, "-|");
                break;
            case SQLITE_INTEGER:
                sbuf_printf(&b, "%lld|", (long long)sqlite3_column_int64(st, c));
                break;
            case SQLITE_FLOAT:
                sbuf_printf(&b, "%.17g|", sqlite3_column_double(st, c));
                break;
            default:
                sbuf_printf(&b, "%s|", (const char *)sqlite3_column_text(st, c));
                break;
            }
        }
        sbuf_printf(&b, "\n");
    }
    sqlite3_finalize(st);
    return sbuf_take(&b);
}

/* A connection as the stock shell's after `.load build/perflog_chunk`, or without it. */
static sqlite3 *shell(const char *path, int with_extension)
{
    sqlite3 *conn = NULL;

    CHECK_INT(sqlite3_open_v2(path, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (with_extension)
        CHECK_INT(chunk_sql_register(conn), SQLITE_OK);
    return conn;
}

static char *shell_snapshot(const char *path, const char *sql)
{
    sqlite3 *conn = shell(path, 1);
    char *s = snapshot(conn, sql);

    sqlite3_close(conn);
    return s;
}

static int64_t count(const char *path, const char *sql)
{
    sqlite3 *conn = shell(path, 1);
    sqlite3_stmt *st;
    int64_t n = -1;

    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(conn));
    sqlite3_finalize(st);
    sqlite3_close(conn);
    return n;
}

static int row_cb(void *arg, int64_t tick, int64_t inst, const int64_t *v, uint64_t null_mask)
{
    struct sbuf *b = arg;

    sbuf_printf(b, "%lld %lld %llx", (long long)tick, (long long)inst,
                (unsigned long long)null_mask);
    for (size_t f = 0; f < COUNTER_MAX_FIELDS; f++)
        sbuf_printf(b, " %lld", (long long)v[f]);
    sbuf_printf(b, "\n");
    return 0;
}

/* reader_rows of every object over ticks [from, to], and of Disk instance `inst` alone. */
static char *reader_snapshot(const char *path, int64_t from, int64_t to, int64_t inst)
{
    struct sbuf b = {0};
    struct reader *rd;
    char err[512];

    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    for (int o = 0; o < OBJ_COUNT; o++)
        CHECK_INT(reader_rows(rd, o, ~0u, NULL, 0, from, to, row_cb, &b), 0);
    CHECK_INT(reader_rows(rd, OBJ_DISK, 0x3, &inst, 1, from, to, row_cb, &b), 0);
    reader_close(rd);
    return sbuf_take(&b);
}

static void check_same(const char *what, const char *a, const char *b)
{
    CHECK(a != NULL && b != NULL);
    if (a && b && strcmp(a, b) != 0)
        fprintf(stderr, "%s differs (%zu and %zu bytes)\n", what, strlen(a), strlen(b));
    CHECK(a && b && strcmp(a, b) == 0);
}

/*
 * counter_values and counter_rollups (one SELECT per object, a CASE on the series' k) against
 * the per-counter form they replaced (schema_views_per_counter, as TEMP views on a shell's
 * connection), row for row over every column, with the type of each value: a CASE branch
 * numbered wrong gives one counter another's name or values and fails this.
 */
#define Q_ALL_VALUES "SELECT *, typeof(value) FROM %s ORDER BY path, t_ms, value"
#define Q_ALL_ROLLUPS                                                                              \
    "SELECT *, typeof(min), typeof(avg), typeof(max) FROM %s ORDER BY tier, path, bucket_ms"

static void check_per_counter_form(const char *path, const char *what)
{
    struct sbuf b = {0};
    char q[160], msg[160];
    char *now, *old;
    sqlite3 *conn = shell(path, 1);

    uint64_t present = 0;

    /* the value tables the file has (an object's come with its first instance) */
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        snprintf(q, sizeof(q), "SELECT count(*) FROM sqlite_schema WHERE name = '%s'",
                 schema_value_table(i));
        if (count(path, q) == 1)
            present |= UINT64_C(1) << i;
    }
    CHECK(present & (UINT64_C(1) << SCHEMA_PDH_TABLE));
    CHECK_INT(schema_views_per_counter(&b, ~UINT64_C(0), present, "old_values", "old_rollups"), 0);
    CHECK(sbuf_ok(&b));
    CHECK_INT(sqlite3_exec(conn, b.s, NULL, NULL, NULL), SQLITE_OK);
    sbuf_free(&b);
    snprintf(q, sizeof(q), Q_ALL_VALUES, "counter_values");
    now = snapshot(conn, q);
    snprintf(q, sizeof(q), Q_ALL_VALUES, "old_values");
    old = snapshot(conn, q);
    /* every counter of every object has rows, NULLs among them */
    CHECK(now && strstr(now, "|null|\n") && strstr(now, "|real|\n"));
    CHECK(now && strstr(now, "\\Extra\\Counter|"));
    snprintf(msg, sizeof(msg), "counter_values against the per-counter form, %s", what);
    check_same(msg, old, now);
    free(now);
    free(old);
    snprintf(q, sizeof(q), Q_ALL_ROLLUPS, "counter_rollups");
    now = snapshot(conn, q);
    snprintf(q, sizeof(q), Q_ALL_ROLLUPS, "old_rollups");
    old = snapshot(conn, q);
    CHECK(now && strlen(now) > 1000 && strstr(now, "\\Extra\\Counter|"));
    snprintf(msg, sizeof(msg), "counter_rollups against the per-counter form, %s", what);
    check_same(msg, old, now);
    free(now);
    free(old);
    sqlite3_close(conn);
}

/* An extra PDH series with values and a gap, and its roll-ups, so the views' last SELECTs have
 * rows too. The tables come with the first extra path, so the test makes them, as the writer
 * does, and opens the file again (at an open, the views take in every value table the file has). */
static void add_pdh_rows(struct db **d, const char *path)
{
    sqlite3 *conn = NULL;
    struct sbuf b = {0};
    char err[512];

    db_close(*d);
    pdh_extra_tables(&b);
    CHECK(sbuf_ok(&b));
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn, b.s, NULL, NULL, NULL), SQLITE_OK);
    sbuf_free(&b);
    CHECK_INT(sqlite3_exec(conn,
                           "INSERT INTO pdh_paths (id, path, object, instance, counter) VALUES "
                           "(1, '\\Extra\\Counter', 'Extra', NULL, 'Counter');"
                           "INSERT INTO pdh_values SELECT id, 1, CASE WHEN id % 5 THEN id * 0.5 "
                           "END FROM ticks WHERE id <= 400;"
                           "INSERT INTO pdh_values_1m VALUES (1795974000000, 1, 3, 1.0, 2.5, 4.0);"
                           "INSERT INTO pdh_values_1h VALUES (1795972400000, 1, 3, 1.0, 2.5, 4.0);",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(conn);
    CHECK_INT(db_open(path, "testhost", d, err, sizeof(err)), 0);
}

#define Q_VALUES                                                                                   \
    "SELECT t_ms, time_utc, interval_ms, path, value FROM counter_values ORDER BY t_ms, path"
#define Q_ROLLUPS "SELECT * FROM counter_rollups ORDER BY tier, bucket_ms, path"

static void test_chunked_equals_plain(void)
{
    struct db_retention plain = {7, 90, 1825, 0, 0}, chunked = {7, 90, 1825, 0, 600};
    struct db_retention expire = {1, 30, 60, 0, 600};
    int64_t now = T0 + NTICKS * 1000LL;
    char path[256], err[512], sql[160];
    char *values, *rollups, *rows, *part, *s;
    int64_t vdb;
    unsigned seed = 7;
    struct db *d;
    sqlite3 *conn;
    sqlite3_stmt *st;

    snprintf(path, sizeof(path), "%s/chunks.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(write_ticks(d, 0, NTICKS, T0, &seed), 0);
    /* a new file has the small pages (db_open) */
    CHECK_INT(count(path, "PRAGMA page_size"), 2048);
    CHECK_INT(maintain_all(d, now, &plain), 0);
    add_pdh_rows(&d, path);
    check_per_counter_form(path, "plain");
    values = shell_snapshot(path, Q_VALUES);
    rollups = shell_snapshot(path, Q_ROLLUPS);
    /* vdb's instance id: after the instances of the objects that are always there */
    vdb = count(path, "SELECT id FROM instances WHERE object = 'PhysicalDisk' AND name = 'vdb'");
    CHECK(vdb > 0);
    rows = reader_snapshot(path, 1, NTICKS, vdb);
    part = reader_snapshot(path, 550, 1250, vdb);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks"), 0);

    /* the spans wholly older than 600 s: ticks 1-2400; 2401-3000 stay plain */
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick <= 2400"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick > 2400"), 600);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE inst = 2"), 2400 / SPAN);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_memory_chunks"), 2400 / SPAN);
    /* vdb appears at tick id 501 and vanishes after 1300: three chunks, each its own ticks */
    snprintf(sql, sizeof(sql),
             "SELECT first_tick, last_tick FROM obj_disk_chunks WHERE inst = %lld ORDER BY "
             "first_tick",
             (long long)vdb);
    s = shell_snapshot(path, sql);
    CHECK_STR(s ? s : "", "501|600|\n601|1200|\n1201|1300|\n");
    free(s);

    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values", values, s);
    free(s);
    check_per_counter_form(path, "chunked");
    s = shell_snapshot(path, Q_ROLLUPS);
    check_same("counter_rollups", rollups, s);
    free(s);
    s = reader_snapshot(path, 1, NTICKS, vdb);
    check_same("reader_rows", rows, s);
    free(s);
    s = reader_snapshot(path, 550, 1250, vdb);
    check_same("reader_rows 550-1250", part, s);
    free(s);

    /* Without the extension the stock shell cannot read the chunks, and says why. */
    conn = shell(path, 0);
    CHECK(sqlite3_prepare_v2(conn, "SELECT count(*) FROM counter_values", -1, &st, NULL) !=
          SQLITE_OK);
    CHECK(strstr(sqlite3_errmsg(conn), "chunk_series") != NULL);
    sqlite3_close(conn);

    /* A new perflogd on the file builds the same views. */
    db_close(d);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values after a restart", values, s);
    free(s);

    /* Retention drops whole chunks with their ticks. */
    CHECK_INT(maintain_all(d, now + 2 * 86400000LL, &expire), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM ticks"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM ticks_chunks"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM counter_values"), 0);
    CHECK(count(path, "SELECT count(*) FROM obj_disk_1m") > 0);
    db_close(d);
    free(values);
    free(rollups);
    free(rows);
    free(part);
}

static int tick_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    sbuf_printf(arg, "%lld %lld %lld\n", (long long)tick, (long long)t_ms, (long long)interval_ms);
    return 0;
}

/* reader_ticks over [from, to] and reader_next_tick at `from`, as a reader gives them. */
static char *ticks_snapshot(const char *path, int64_t from, int64_t to)
{
    struct sbuf b = {0};
    struct reader *rd;
    char err[512];
    int64_t next = -1;

    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    CHECK_INT(reader_ticks(rd, from, to, tick_cb, &b), 0);
    if (reader_next_tick(rd, from, &next) != 0)
        next = -1;
    sbuf_printf(&b, "next %lld\n", (long long)next);
    reader_close(rd);
    return sbuf_take(&b);
}

#define Q_TICKS_ALL "SELECT id, t_ms, interval_ms, missed FROM ticks_all ORDER BY id"

/*
 * Ticks unlike a quiet machine's, i from 0: no interval every 97th (a restart), 3 missed before
 * each of 400-449 (and their times 3 s later), the wall clock stepped back 120 s from 700 on.
 */
static int64_t odd_wall(int i)
{
    return T0 + (int64_t)i * 1000 + (i >= 400 ? 3000 : 0) - (i >= 700 ? 120000 : 0);
}

static int write_odd_ticks(struct db *d, int n, unsigned *seed)
{
    struct tick *batch[SPAN];
    int rc = 0;

    for (int i = 0; rc == 0 && i < n; i += SPAN) {
        int k = n - i < SPAN ? n - i : SPAN;

        for (int j = 0; j < k; j++) {
            batch[j] = mk_tick(i + j, odd_wall(i + j), seed);
            batch[j]->interval_ms = (i + j) % 97 ? 1000 + (i + j) % 5 : 0;
            batch[j]->missed = i + j >= 400 && i + j < 450 ? 3 : 0;
        }
        rc = db_write_ticks(d, batch, (size_t)k);
        for (int j = 0; j < k; j++)
            tick_free(batch[j]);
    }
    return rc;
}

/* counter_values of one series over time ranges (chunk_series' ids of a time), each with a
 * header line, and all the ticks as readers see them. */
static char *odd_snapshot(const char *path, const char *series)
{
    static const int64_t ranges[][2] = {{T0, T0 + 3000000},
                                        {T0 + 250000, T0 + 650000},
                                        {T0 + 580000, T0 + 700000},
                                        {T0 + 599000, T0 + 599000},
                                        {T0 + 1000000, T0 + 1300000}};
    struct sbuf b = {0};
    char *s;

    for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
        char *q = sqlite3_mprintf("SELECT t_ms, interval_ms, value FROM counter_values WHERE path "
                                  "= %Q AND t_ms BETWEEN %lld AND %lld ORDER BY t_ms, interval_ms",
                                  series, (long long)ranges[k][0], (long long)ranges[k][1]);

        s = shell_snapshot(path, q);
        sbuf_printf(&b, "== %lld %lld\n%s", (long long)ranges[k][0], (long long)ranges[k][1],
                    s ? s : "(error)\n");
        free(s);
        sqlite3_free(q);
        s = ticks_snapshot(path, ranges[k][0], ranges[k][1]);
        sbuf_printf(&b, "-- reader\n%s", s ? s : "(error)\n");
        free(s);
    }
    s = shell_snapshot(path, Q_TICKS_ALL);
    sbuf_printf(&b, "== ticks_all\n%s", s ? s : "(error)\n");
    free(s);
    return sbuf_take(&b);
}

static void test_ticks_chunked(void)
{
    struct db_retention plain = {7, 90, 1825, 0, 0}, chunked = {7, 90, 1825, 0, 600};
    int64_t now = T0 + 1500 * 1000LL;
    char path[256], err[512], series[256];
    char *before, *values, *s;
    unsigned seed = 11;
    struct db *d;
    sqlite3_stmt *st;
    sqlite3 *conn;

    snprintf(path, sizeof(path), "%s/ticks.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(write_odd_ticks(d, 1500, &seed), 0);
    CHECK_INT(maintain_all(d, now, &plain), 0);
    /* a gap in the ids inside a span, as a tick deleted by hand leaves */
    conn = NULL;
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(
        sqlite3_exec(conn, "DELETE FROM ticks WHERE id BETWEEN 1001 AND 1010", NULL, NULL, NULL),
        SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT s.path FROM series s JOIN instances i ON i.id = s.inst "
                                 "WHERE i.object = 'PhysicalDisk' AND i.name = 'vda' AND s.k = 0",
                                 -1, &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    snprintf(series, sizeof(series), "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(conn);
    before = odd_snapshot(path, series);
    values = shell_snapshot(path, Q_VALUES);
    CHECK(before && strstr(before, "|-|0|\n") && strstr(before, "|1003|3|\n"));
    CHECK_INT(count(path, "SELECT count(*) FROM ticks_chunks"), 0);

    /* the window 1-600 and the fresh spans 601-660 .. 901-960 are older than 600 s (the clock
     * stepped back: not 961-1020) */
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    s = shell_snapshot(path, "SELECT first_id, last_id FROM ticks_chunks ORDER BY first_id");
    CHECK_STR(s ? s : "", "1|600|\n601|660|\n661|720|\n721|780|\n781|840|\n841|900|\n901|960|\n");
    free(s);
    CHECK_INT(count(path, "SELECT count(*) FROM ticks WHERE id <= 960"), 0);
    CHECK_INT(count(path, "SELECT min(id) FROM ticks"), 961);
    s = odd_snapshot(path, series);
    check_same("ticks and one series' time ranges after chunking the ticks", before, s);
    free(s);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values after chunking the ticks", values, s);
    free(s);
    /* A new perflogd on the file keeps them, and the stock shell without the extension cannot
     * read the chunked ticks and says why. */
    db_close(d);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    s = odd_snapshot(path, series);
    check_same("the ticks after a restart", before, s);
    free(s);
    conn = shell(path, 0);
    CHECK(sqlite3_prepare_v2(conn, "SELECT count(*) FROM ticks_all", -1, &st, NULL) != SQLITE_OK);
    CHECK(strstr(sqlite3_errmsg(conn), "chunk_rows") != NULL);
    sqlite3_close(conn);
    db_close(d);
    free(before);
    free(values);
}

#define Q_VALUES_FROM                                                                              \
    "SELECT t_ms, interval_ms, path, value FROM counter_values WHERE t_ms >= %lld "                \
    "ORDER BY t_ms, path"
#define Q_VALUES_WINDOW                                                                            \
    "SELECT t_ms, interval_ms, path, value FROM counter_values WHERE t_ms BETWEEN %lld AND %lld "  \
    "ORDER BY t_ms, path"

/* Retention and the size cap delete chunked ticks a chunk at a time, with their rows. */
static void test_ticks_chunks_expire(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 600};
    /* a day on: the ticks older than T0 + 700 s (ids up to 700) are past one day of raw data */
    struct db_retention expire = {1, 30, 60, 0, 600}, cap = {7, 90, 1825, 1, 600};
    int64_t now = T0 + 5200 * 1000LL, later = T0 + 700 * 1000LL + 86400000LL;
    char path[256], err[512], q[200];
    char *rest, *s;
    unsigned seed = 5;
    struct db *d;

    snprintf(path, sizeof(path), "%s/expire.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(write_ticks(d, 0, 5200, T0, &seed), 0);
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    /* windows 1-600 .. 3601-4200 and the fresh spans 4201-4260 .. 4501-4560: older than 600 s */
    CHECK_INT(count(path, "SELECT count(*) FROM ticks_chunks"), 13);
    /* mk_tick's intervals are 1000-1002 ms: still a few bytes a span */
    s = shell_snapshot(path, "SELECT max(length(t_ms) + length(interval_ms) + length(missed)) "
                             "FROM ticks_chunks");
    fprintf(stderr, "ticks chunk bytes (600 ticks): %s", s ? s : "?\n");
    free(s);
    snprintf(q, sizeof(q), Q_VALUES_FROM, (long long)(T0 + 600 * 1000LL));
    rest = shell_snapshot(path, q);
    /* 1-600 is wholly past the cutoff, 601-1200 not yet */
    CHECK_INT(maintain_all(d, later, &expire), 0);
    CHECK_INT(count(path, "SELECT min(first_id) FROM ticks_chunks"), 601);
    CHECK_INT(count(path, "SELECT min(id) FROM ticks_all"), 601);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE first_tick <= 600"), 0);
    s = shell_snapshot(path, q);
    check_same("counter_values after retention across chunked ticks", rest, s);
    free(s);
    CHECK_INT(count(path, "SELECT count(*) FROM counter_values WHERE t_ms < 1795974600000"), 0);
    /* A cap of one byte: the size cap prunes all but the newest hour (from T0 + 1599 s), a
     * whole chunk at a time: 601-1200 goes, 1201-1800 holds newer ticks and stays. */
    CHECK_INT(maintain_all(d, now, &cap), 0);
    CHECK_INT(count(path, "SELECT min(first_id) FROM ticks_chunks"), 1201);
    CHECK_INT(count(path, "SELECT min(id) FROM ticks_all"), 1201);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE first_tick <= 1200"), 0);
    CHECK_INT(count(path, "SELECT max(id) FROM ticks_all"), 5200);
    db_close(d);
    free(rest);
}

/* The fixture's 360 ticks end at this time (bench_seed of schema version 5 wrote it, with the
 * rows of ticks 1-300 chunked). */
#define V5_LAST_MS 1796228037002LL
#define Q_V5_VALUES                                                                                \
    "SELECT t_ms, interval_ms, path, value FROM counter_values WHERE t_ms <= 1796228037002 "       \
    "ORDER BY t_ms, path"
#define Q_V5_TICKS "SELECT id, t_ms, interval_ms, missed FROM %s WHERE id <= 360 ORDER BY id"

static void test_v5_fixture(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 60};
    char path[256], err[512], q[128];
    char *ticks, *values, *rd, *s;
    unsigned seed = 3;
    struct db *d;

    snprintf(path, sizeof(path), "%s/v5.db", dir);
    if (load_fixture("v5.sql", path) < 0)
        return;
    CHECK_INT(count(path, "PRAGMA user_version"), 5);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks"), 3);
    /* as it is, with this build's extension and reader (no ticks_chunks yet) */
    snprintf(q, sizeof(q), Q_V5_TICKS, "ticks");
    ticks = shell_snapshot(path, q);
    values = shell_snapshot(path, Q_V5_VALUES);
    rd = ticks_snapshot(path, 0, V5_LAST_MS);
    CHECK(values && strlen(values) > 10000 && ticks && strlen(ticks) > 1000);

    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(count(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    snprintf(q, sizeof(q), Q_V5_TICKS, "ticks_all");
    s = shell_snapshot(path, q);
    check_same("v5 ticks_all after the upgrade", ticks, s);
    free(s);
    s = shell_snapshot(path, Q_V5_VALUES);
    check_same("v5 counter_values after the upgrade", values, s);
    free(s);

    /* 700 more ticks: the fixture's ticks go into chunks with the rows of their spans */
    CHECK_INT(write_ticks(d, 1, 700, V5_LAST_MS, &seed), 0);
    CHECK_INT(maintain_all(d, V5_LAST_MS + 800 * 1000LL, &chunked), 0);
    CHECK_INT(count(path, "SELECT min(first_id) FROM ticks_chunks"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM ticks WHERE id <= 600"), 0);
    s = shell_snapshot(path, q);
    check_same("v5 ticks_all after chunking", ticks, s);
    free(s);
    s = shell_snapshot(path, Q_V5_VALUES);
    check_same("v5 counter_values after chunking", values, s);
    free(s);
    s = ticks_snapshot(path, 0, V5_LAST_MS);
    check_same("v5 reader_ticks after chunking", rd, s);
    free(s);
    db_close(d);
    free(ticks);
    free(values);
    free(rd);
}

/*
 * Tick i of the edge data: one instance of every object, with names that test the counter
 * column's arithmetic on the path (multi-byte UTF-8, a backslash and parentheses), and fields
 * cycling through the cases the short counter formulas must give exactly as the long ones:
 * all zero (every ratio's denominator 0, "0 s per read" and no value), a zero denominator under
 * a non-zero numerator, negative deltas, the 64-bit extremes (sums that overflow into REAL),
 * 2^53 + 1 (exact only as an integer), all NULL, NULL numerators or denominators alone, and
 * ordinary values.
 */
static struct tick *mk_edge_tick(int i, int64_t wall_ms)
{
    static const char *names[] = {"0", "v\xc3\xa9\xe5\x90\x8d", "e\\th(0)", "\\\\srv\\share"};
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = i % 9 == 4 ? 0 : 1000 + i % 3;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        struct tick_row *row;

        t->obj[o].rows = calloc(1, sizeof(struct tick_row));
        t->obj[o].n = 1;
        row = &t->obj[o].rows[0];
        snprintf(row->name, sizeof(row->name), "%s", names[o % 4]);
        for (size_t f = 0; f < od->nfields; f++) {
            int64_t *v = &row->v[f];

            switch (i % 10) {
            case 0:
                *v = 0;
                break;
            case 1:
                *v = f % 2 ? 0 : 7;
                break;
            case 2:
                *v = f % 2 ? 0 : -7;
                break;
            case 3:
                *v = -(int64_t)(f + 1) * 1000003;
                break;
            case 4:
                *v = f % 2 ? INT64_MIN : INT64_MAX;
                break;
            case 5:
                *v = INT64_MAX - (int64_t)f;
                break;
            case 6:
                *v = (INT64_C(1) << 53) + 1 + (int64_t)f;
                break;
            case 7:
                *v = 5;
                row->null_mask = ~0ull;
                break;
            case 8:
                *v = 3 + (int64_t)f;
                row->null_mask |= (f + (size_t)i / 10) % 3 ? 0 : 1ull << f;
                break;
            default:
                *v = (int64_t)((f * 2654435761u + (unsigned)i) % 100000);
                break;
            }
        }
    }
    return t;
}

/*
 * The views' short counter formulas (counter_sql) against the long ones (counter_sql_ref, in
 * the per-counter form) over the edge data, plain and chunked, with intervals of 0, negative
 * and none among the ticks.
 */
static void test_edge_values_per_counter(void)
{
    struct db_retention plain = {7, 90, 1825, 0, 0}, chunked = {7, 90, 1825, 0, 600};
    enum { N = 1200 };
    int64_t now = T0 + N * 1000LL;
    char path[256], err[512];
    struct tick *batch[SPAN];
    struct db *d;
    sqlite3 *conn = NULL;

    snprintf(path, sizeof(path), "%s/edge.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < N; i += SPAN) {
        for (int j = 0; j < SPAN; j++)
            batch[j] = mk_edge_tick(i + j, T0 + (int64_t)(i + j) * 1000);
        CHECK_INT(db_write_ticks(d, batch, SPAN), 0);
        for (int j = 0; j < SPAN; j++)
            tick_free(batch[j]);
    }
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "UPDATE ticks SET interval_ms = -1000 WHERE id % 7 = 0;"
                           "UPDATE ticks SET interval_ms = 0 WHERE id % 11 = 0;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(conn);
    CHECK_INT(maintain_all(d, now, &plain), 0);
    add_pdh_rows(&d, path);
    check_per_counter_form(path, "edge values, plain");
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    CHECK(count(path, "SELECT count(*) FROM obj_processor_chunks") > 0);
    check_per_counter_form(path, "edge values, chunked");
    db_close(d);
}

/* The fixture's 108 ticks end at this time (bench_seed wrote it). */
#define V4_LAST_MS 1796177579001LL
#define Q_V4_SUMS                                                                                  \
    "SELECT object, counter, instance, count(value), min(value), max(value) FROM "                 \
    "counter_values WHERE t_ms <= 1796177579001 GROUP BY 1, 2, 3 HAVING count(value) > 0 "         \
    "ORDER BY 1, 2, 3"
#define Q_V4_VALUES                                                                                \
    "SELECT t_ms, path, value FROM counter_values WHERE t_ms <= 1796177579001 AND path IN "        \
    "(SELECT DISTINCT path FROM counter_values WHERE t_ms <= 1796177579001 AND value IS NOT "      \
    "NULL) "                                                                                       \
    "ORDER BY t_ms, path"

static void test_v4_fixture(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 60};
    char path[256], err[512];
    char *sums, *values, *rows, *s;
    unsigned seed = 9;
    struct db *d;
    sqlite3 *conn;

    snprintf(path, sizeof(path), "%s/v4.db", dir);
    if (load_fixture("v4.sql", path) < 0)
        return;
    CHECK_INT(count(path, "PRAGMA user_version"), 4);
    CHECK_INT(count(path, "SELECT max(t_ms) FROM ticks"), V4_LAST_MS);
    /* read as it is, by the stock shell (no extension) and by a reader; the counters added since
     * version 4 have no value in the fixture's ticks, so the queries leave them out */
    conn = shell(path, 0);
    sums = snapshot(conn, Q_V4_SUMS);
    values = snapshot(conn, Q_V4_VALUES);
    sqlite3_close(conn);
    rows = reader_snapshot(path, 1, 108, 2);
    CHECK(sums && strlen(sums) > 1000);

    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(count(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    /* an older file keeps the page size it was made with; everything below runs on it */
    CHECK_INT(count(path, "PRAGMA page_size"), 4096);
    /* upgraded, still nothing chunked: the stock shell reads it without the extension */
    conn = shell(path, 0);
    s = snapshot(conn, Q_V4_SUMS);
    check_same("v4 sums after the upgrade", sums, s);
    free(s);
    sqlite3_close(conn);
    s = reader_snapshot(path, 1, 108, 2);
    check_same("v4 reader_rows after the upgrade", rows, s);
    free(s);

    /* 700 more ticks, then the fixture's span goes into chunks */
    CHECK_INT(write_ticks(d, 1, 700, V4_LAST_MS, &seed), 0);
    CHECK_INT(maintain_all(d, V4_LAST_MS + 800 * 1000LL, &chunked), 0);
    CHECK_INT(count(path, "SELECT min(first_tick) FROM obj_disk_chunks"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick <= 600"), 0);
    s = shell_snapshot(path, Q_V4_SUMS);
    check_same("v4 sums after chunking", sums, s);
    free(s);
    s = shell_snapshot(path, Q_V4_VALUES);
    check_same("v4 values after chunking", values, s);
    free(s);
    s = reader_snapshot(path, 1, 108, 2);
    check_same("v4 reader_rows after chunking", rows, s);
    free(s);
    db_close(d);
    free(sums);
    free(values);
    free(rows);
}

/*
 * A step of the compressed tier takes a slice of an object's instances (CHUNK_SLICE_INSTS in
 * storage/db.c), not the whole object: 100 disks over 900 ticks, "d040" missing at the second
 * span's first ticks (its id falls inside a slice the span's first tick sizes), "dnew" from tick
 * 451 (past every slice but the open-ended last). No db_maintain call chunks more than 48 disks (49
 * with d040), a restart between the slices goes on where it was, and every reader answers the same.
 */
#define SLICE_DISKS 100
#define SLICE_TICKS 1200

/*
 * A tick's disks by plan: how many at tick i, and each one's name (0: disk k is absent at tick i).
 * The other objects have one instance "x" each (processes none); values are pseudo-random below
 * value_mod, drawn in row order from *seed.
 */
struct disk_plan {
    size_t (*count)(int i);
    int (*name)(int i, size_t k, char *buf, size_t cap);
    uint32_t value_mod;
};

static struct tick *mk_plan_tick(int i, unsigned *seed, const struct disk_plan *p)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = T0 + (int64_t)i * 1000;
    t->interval_ms = i ? 1000 : 0;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        size_t n = o == OBJ_DISK ? p->count(i) : o == OBJ_PROCESS ? 0 : 1;

        t->obj[o].rows = calloc(n ? n : 1, sizeof(struct tick_row));
        for (size_t k = 0; k < n; k++) {
            struct tick_row *row = &t->obj[o].rows[t->obj[o].n];

            if (o == OBJ_DISK && !p->name(i, k, row->name, sizeof(row->name)))
                continue;
            if (o != OBJ_DISK)
                snprintf(row->name, sizeof(row->name), "x");
            for (size_t f = 0; f < od->nfields; f++) {
                *seed = *seed * 1103515245u + 12345u;
                row->v[f] = (*seed >> 8) % p->value_mod;
            }
            t->obj[o].n++;
        }
    }
    return t;
}

/* SLICE_DISKS disks; d040 absent at ticks 300-349; "dnew" from tick 450 on */
static size_t slice_count(int i)
{
    (void)i;
    return SLICE_DISKS + 1;
}

static int slice_name(int i, size_t k, char *buf, size_t cap)
{
    if ((k == 40 && i >= 300 && i < 350) || (k == SLICE_DISKS && i < 450))
        return 0;
    if (k == SLICE_DISKS)
        snprintf(buf, cap, "dnew");
    else
        snprintf(buf, cap, "d%03zu", k);
    return 1;
}

static const struct disk_plan slice_plan = {slice_count, slice_name, 1000000u};

static struct tick *mk_slice_tick(int i, unsigned *seed)
{
    return mk_plan_tick(i, seed, &slice_plan);
}

static void test_chunk_slices(void)
{
    struct db_retention plain = {7, 90, 1825, 0, 0}, chunked = {7, 90, 1825, 0, 300};
    int64_t now = T0 + SLICE_TICKS * 1000LL, prev = 0, cur, most = 0;
    char path[256], err[512];
    char *values, *rows, *s;
    int64_t d040, steps = 0, more = 1, all_rows, all_ios, waiting, left;
    int bad_steps = 0, seen_waiting = 0, seen_left = 0;
    char q_win[256], *win;
    unsigned seed = 11;
    struct tick *batch[SPAN];
    struct db *d;

    snprintf(path, sizeof(path), "%s/slices.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < SLICE_TICKS; i += SPAN) {
        for (int j = 0; j < SPAN; j++)
            batch[j] = mk_slice_tick(i + j, &seed);
        CHECK_INT(db_write_ticks(d, batch, SPAN), 0);
        for (int j = 0; j < SPAN; j++)
            tick_free(batch[j]);
    }
    CHECK_INT(maintain_all(d, now, &plain), 0);
    values = shell_snapshot(path, Q_VALUES);
    d040 = count(path, "SELECT id FROM instances WHERE object = 'PhysicalDisk' AND name = 'd040'");
    CHECK(d040 > 0);
    rows = reader_snapshot(path, 1, SLICE_TICKS, d040);
    /* every path over ticks 281-320, where the first span ends and the second begins */
    snprintf(q_win, sizeof(q_win), Q_VALUES_WINDOW, (long long)(T0 + 280 * 1000LL),
             (long long)(T0 + 319 * 1000LL));
    win = shell_snapshot(path, q_win);
    CHECK(win && strlen(win) > 1000);
    all_rows = count(path, "SELECT count(*) FROM obj_disk");
    all_ios = count(path, "SELECT sum(rd_ios) FROM obj_disk");

    /* ticks 1-900 are older than 300 s: three spans, each a half window of 300 ticks (over 32
     * instances at their first tick), taken 48 instances a step */
    while (more > 0 && steps++ < 1000) {
        more = db_maintain(d, now, &chunked);
        CHECK(more >= 0);
        /* Each point once after every step: the span in hand read raw while its chunks wait
         * above the edge, and the raw rows of a done span, below it, not read while they wait
         * for their deletion. Every reader, in full where a step left either kind. */
        if (count(path, "SELECT count(*) FROM obj_disk_all") != all_rows ||
            count(path, "SELECT sum(rd_ios) FROM obj_disk_all") != all_ios)
            bad_steps++;
        s = reader_snapshot(path, 1, SLICE_TICKS, d040);
        if (!s || strcmp(s, rows) != 0)
            bad_steps++;
        free(s);
        waiting =
            count(path, "SELECT count(*) FROM obj_disk_chunks WHERE last_tick >= " CHUNK_EDGE_SQL);
        left = count(path, "SELECT count(*) FROM obj_disk WHERE tick < " CHUNK_EDGE_SQL);
        if ((waiting > 0 && !seen_waiting) || (left > 0 && !seen_left)) {
            s = shell_snapshot(path, q_win);
            check_same(waiting > 0 ? "counter_values, chunks waiting above the edge"
                                   : "counter_values, raw rows left below the edge",
                       win, s);
            free(s);
        }
        seen_waiting |= waiting > 0;
        seen_left |= left > 0;
        /* every object's chunks: a step's budget of instances holds over its objects */
        cur = count(path, "SELECT (SELECT count(*) FROM obj_disk_chunks) + (SELECT count(*) FROM "
                          "obj_processor_chunks) + (SELECT count(*) FROM obj_net_chunks) + "
                          "(SELECT count(*) FROM obj_memory_chunks) + (SELECT count(*) FROM "
                          "obj_tcp_chunks)");
        if (cur - prev > most)
            most = cur - prev;
        if (steps == 1) { /* in the first span's disks, after a slice */
            CHECK(count(path, "SELECT count(*) FROM obj_disk_chunks") > 0 &&
                  count(path, "SELECT count(*) FROM obj_disk_chunks") < SLICE_DISKS);
            db_close(d);
            CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
        }
        prev = cur;
    }
    CHECK(more == 0);
    CHECK_INT(bad_steps, 0);
    CHECK(seen_waiting && seen_left);
    /* 48 instances of the span's first tick (CHUNK_WIDE_ROWS, 14 400, over its 300 ticks: the
     * CPU's and 47 disks', say), and d040 or dnew, which come later in a span; more than a fresh
     * span's 32 */
    if (!(most > 33 && most <= 49))
        fprintf(stderr, "most %lld\n", (long long)most);
    CHECK(most > 33 && most <= 49);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE last_tick <= 300"),
              SLICE_DISKS);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE first_tick > 300 AND "
                          "last_tick <= 600"),
              SLICE_DISKS + 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE first_tick > 600"),
              SLICE_DISKS + 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick <= 900"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick > 900"),
              (SLICE_TICKS - 900) * (SLICE_DISKS + 1));
    /* d040 is not in ticks 301-350; the half windows' chunks of the window 1-600 stay two (a
     * merge would code every value of a big machine once more) */
    s = shell_snapshot(path, "SELECT group_concat(first_tick) FROM (SELECT c.first_tick FROM "
                             "obj_disk_chunks c JOIN instances i ON i.id = c.inst WHERE i.name = "
                             "'d040' ORDER BY c.first_tick)");
    CHECK_STR(s ? s : "", "1,351,601|\n");
    free(s);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values, sliced chunks", values, s);
    free(s);
    s = reader_snapshot(path, 1, SLICE_TICKS, d040);
    check_same("reader_rows d040, sliced chunks", rows, s);
    free(s);
    db_close(d);
    free(values);
    free(rows);
    free(win);
}

/* The processor's chunks and the ticks chunks are the spans `want` ("first|last|" lines), and
 * the merges stand at `merge_tick`. */
static void check_spans(const char *path, const char *want, int64_t merge_tick)
{
    char *s = shell_snapshot(path, "SELECT first_tick, last_tick FROM obj_processor_chunks "
                                   "ORDER BY 1");

    CHECK_STR(s ? s : "", want);
    free(s);
    s = shell_snapshot(path, "SELECT first_id, last_id FROM ticks_chunks ORDER BY 1");
    CHECK_STR(s ? s : "", want);
    free(s);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'merge_tick'"), merge_tick);
}

/*
 * A machine of a few instances (mk_tick: a CPU, a disk or two, a NIC, Memory, TCP): one step of
 * maintenance chunks every object of a span, in one transaction, where a step used to take one
 * object (seven steps a span, each with its own round of maintenance queries).
 */
static void test_one_step_a_span(void)
{
    struct db_retention plain = {7, 90, 1825, 0, 0}, chunked = {7, 90, 1825, 0, 600};
    /* ticks 1-700 are older than 600 s at tick 1300 */
    int64_t now = T0 + 1300 * 1000LL;
    char path[256], err[512];
    unsigned seed = 3;
    struct db *d;

    snprintf(path, sizeof(path), "%s/onestep.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(write_ticks(d, 0, 1300, T0, &seed), 0);
    CHECK_INT(maintain_all(d, now, &plain), 0); /* the roll-ups first, as the writer's would be */
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor_chunks"), 0);
    CHECK_INT(db_maintain(d, now, &chunked), 1);
    /* one chunk row per instance of every object, for the fresh span of ticks 1-60, none of the
     * raw rows left */
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor_chunks WHERE first_tick = 1"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE first_tick = 1"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_net_chunks WHERE first_tick = 1"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_memory_chunks WHERE first_tick = 1"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_tcp_chunks WHERE first_tick = 1"), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor WHERE tick <= 60"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_tcp WHERE tick <= 60"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_tcp WHERE tick > 60"), 1240);
    CHECK_INT(count(path, "SELECT max(last_tick) FROM obj_tcp_chunks"), 60);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_tick'"), 61);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_obj'"), 0);
    /* the fresh spans up to 601-660 are due (661-720 is not): the window 1-600 merges into one
     * chunk an instance, its ticks into one ticks chunk, and the steps stop */
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    check_spans(path, "1|600|\n601|660|\n", 601);
    db_close(d);
}

/* A tick of 20 disks, 40 from tick id 11 on, and one instance of each other object. */
static size_t grow_count(int i)
{
    return i < 10 ? 20 : 40;
}

static int grow_name(int i, size_t k, char *buf, size_t cap)
{
    (void)i;
    snprintf(buf, cap, "g%02zu", k);
    return 1;
}

static const struct disk_plan grow_plan = {grow_count, grow_name, 1000u};

static struct tick *mk_grow_tick(int i, unsigned *seed)
{
    return mk_plan_tick(i, seed, &grow_plan);
}

/* A file of 1 200 grow ticks (mk_grow_tick), rolled up but not chunked at `now`. */
static struct db *open_grown(const char *path, int64_t now, unsigned *seed)
{
    struct db_retention plain = {7, 90, 1825, 0, 0};
    struct tick *batch[SPAN];
    char err[512];
    struct db *d = NULL;

    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; d && i < 1200; i += SPAN) {
        for (int j = 0; j < SPAN; j++)
            batch[j] = mk_grow_tick(i + j, seed);
        CHECK_INT(db_write_ticks(d, batch, SPAN), 0);
        for (int j = 0; j < SPAN; j++)
            tick_free(batch[j]);
    }
    if (d)
        CHECK_INT(maintain_all(d, now, &plain), 0);
    return d;
}

/*
 * A fresh span whose instances outgrow the step's budget after its first tick (20 disks at the
 * start, 40 from tick 11): the step that takes the disks ends the budget, and the next step
 * takes the other objects over the same span, not a whole window. The next spans, of 40 disks
 * from their first tick, are the rest of each half window, and those chunks are not merged.
 */
static void test_fresh_span_continues(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 600};
    int64_t now = T0 + 700 * 1000LL; /* ticks 1-100 are older than 600 s */
    char path[256];
    char *values, *s;
    unsigned seed = 17;
    struct db *d;

    snprintf(path, sizeof(path), "%s/grow.db", dir);
    d = open_grown(path, now, &seed);
    values = shell_snapshot(path, Q_VALUES);
    CHECK_INT(db_maintain(d, now, &chunked), 1);
    /* the processor and the 40 disks of ticks 1-60: over the budget of 32, the step ends */
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE last_tick = 60"), 40);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_net_chunks"), 0);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_end'"), 60);
    CHECK_INT(db_maintain(d, now, &chunked), 1);
    s = shell_snapshot(path, "SELECT first_tick, last_tick FROM obj_net_chunks");
    CHECK_STR(s ? s : "", "1|60|\n");
    free(s);
    CHECK_INT(count(path, "SELECT min(tick) FROM obj_tcp"), 61);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_tick'"), 61);
    /* over 32 instances at the next span's first tick: the half window's rest, 61-300, not due
     * yet */
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    s = shell_snapshot(path, "SELECT first_tick, last_tick FROM obj_net_chunks ORDER BY 1");
    CHECK_STR(s ? s : "", "1|60|\n");
    free(s);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_tick'"), 61);
    /* 61-300 and 301-600 are due at tick 1200; the window is then chunked, and its chunks stay
     * as they are: not all of an instance's chunks in it are fresh */
    CHECK_INT(maintain_all(d, T0 + 1200 * 1000LL, &chunked), 0);
    s = shell_snapshot(path, "SELECT first_tick, last_tick FROM obj_net_chunks ORDER BY 1");
    CHECK_STR(s ? s : "", "1|60|\n61|300|\n301|600|\n");
    free(s);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE first_tick > 600"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks"), 3 * 40);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'merge_tick'"), 601);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values, a fresh span taken in two steps", values, s);
    free(s);
    db_close(d);
    free(values);
}

/* Run `sql` on the file from a connection of its own, as a hand or an older perflogd would. */
static void shell_exec(const char *path, const char *sql)
{
    sqlite3 *conn = NULL;

    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(conn);
}

/* A new file `name` in the test's directory (its path in `path`) with 1300 ticks of mk_tick's,
 * rolled up and not chunked; *values: its counter_values as the stock shell reads them. */
static struct db *open_1300(char *path, size_t cap, const char *name, unsigned seed, char **values)
{
    struct db_retention plain = {7, 90, 1825, 0, 0};
    char err[512];
    struct db *d = NULL;

    snprintf(path, cap, "%s/%s", dir, name);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(write_ticks(d, 0, 1300, T0, &seed), 0);
    CHECK_INT(maintain_all(d, T0 + 1300 * 1000LL, &plain), 0);
    *values = shell_snapshot(path, Q_VALUES);
    return d;
}

/*
 * A file of schema 7 whose chunk steps had a span in hand: they had deleted the raw rows of the
 * slices they took and their chunks were read. Made here as this version's steps leave a span in
 * hand (the processor and 40 disks of ticks 1-60 chunked, the rest of the span not), with the rows
 * those chunks hold deleted by hand and the version set back to 7. The upgrade puts the rows back
 * from the chunks and deletes the chunks: every value reads as before, the steps take the span
 * again, and chunking it all leaves every value as it was.
 */
static void test_v7_span_in_hand(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 600};
    int64_t now = T0 + 700 * 1000LL; /* ticks 1-100 are older than 600 s */
    char path[256], err[512];
    char *values, *s, q[256];
    unsigned seed = 23;
    int64_t raw_disk, raw_cpu;
    sqlite3 *conn = NULL;
    struct db *d;

    snprintf(path, sizeof(path), "%s/v7.db", dir);
    d = open_grown(path, now, &seed);
    /* ticks 1-120: the span in hand and the next one; nothing else is written again */
    snprintf(q, sizeof(q), Q_VALUES_WINDOW, (long long)T0, (long long)(T0 + 119 * 1000LL));
    values = shell_snapshot(path, q);
    raw_disk = count(path, "SELECT count(*) FROM obj_disk");
    raw_cpu = count(path, "SELECT count(*) FROM obj_processor");
    CHECK_INT(db_maintain(d, now, &chunked), 1);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE last_tick = 60"), 40);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_tick'"), 1);
    db_close(d);
    /* what schema 7's steps would have left: the rows of the chunks they wrote, gone */
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "DELETE FROM obj_disk WHERE tick <= 60 AND inst IN (SELECT inst FROM "
                           "obj_disk_chunks);\n"
                           "DELETE FROM obj_processor WHERE tick <= 60 AND inst IN (SELECT inst "
                           "FROM obj_processor_chunks);\n"
                           "PRAGMA user_version = 7;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(conn);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick <= 60"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor WHERE tick <= 60"), 0);
    CHECK(count(path, "SELECT count(*) FROM obj_disk") < raw_disk);

    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(count(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk"), raw_disk);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor"), raw_cpu);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks"), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor_chunks"), 0);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'chunk_obj'"), 0);
    s = shell_snapshot(path, q);
    check_same("counter_values, schema 7's span in hand put back", values, s);
    free(s);
    /* the steps take the span again, and every span after it */
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk_chunks WHERE last_tick = 60"), 40);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick <= 60"), 0);
    s = shell_snapshot(path, q);
    check_same("counter_values, schema 7's span in hand chunked again", values, s);
    free(s);
    db_close(d);
    free(values);
}

/*
 * Fresh chunks of 60 ticks, merged once their window of 600 tick ids is chunked: the values read
 * the same at each stage, a column NULL in some of the fresh chunks (added after they were
 * written) merges into one that has its values NULL there, one NULL in all of them stays NULL,
 * and chunks that do not decode stay as they are while the rest of the window merges.
 */
static void test_merge_fresh_chunks(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 600};
    char path[256];
    char *values, *s;
    int64_t first_id;
    struct db *d = open_1300(path, sizeof(path), "merge.db", 13, &values);

    /* at tick 720, ticks 1-120 are older than 600 s: two fresh spans, no window complete */
    CHECK_INT(maintain_all(d, T0 + 720 * 1000LL, &chunked), 0);
    s = shell_snapshot(path, "SELECT first_tick, last_tick FROM obj_processor_chunks ORDER BY 1");
    CHECK_STR(s ? s : "", "1|60|\n61|120|\n");
    free(s);
    CHECK_INT(count(path, "SELECT count(*) FROM ticks_chunks"), 2);
    CHECK_INT(count(path, "SELECT min(tick) FROM obj_processor"), 121);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values with fresh chunks", values, s);
    free(s);

    /* the window's merge held back (its progress in meta set past it) while all ten fresh
     * spans are chunked, at tick 1200 */
    shell_exec(path, "UPDATE meta SET value = 601 WHERE key = 'merge_tick'");
    CHECK_INT(maintain_all(d, T0 + 1200 * 1000LL, &chunked), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor_chunks"), 10);
    /* si_net_rx NULL in the second fresh chunk, si_net_tx in all ten */
    shell_exec(path, "UPDATE obj_processor_chunks SET si_net_rx = NULL WHERE first_tick = 61; "
                     "UPDATE obj_processor_chunks SET si_net_tx = NULL");
    free(values);
    values = shell_snapshot(path, Q_VALUES);
    CHECK(count(path, "SELECT count(*) FROM counter_values WHERE path LIKE "
                      "'\\Processor(%)\\NET_RX Softirqs/sec' AND value IS NULL") >= 60);

    /* at tick 1260, the merge's progress back at the window: fresh spans up to 601-660, and the
     * window 1-600 merged */
    first_id = count(path, "SELECT id FROM obj_processor_chunks WHERE first_tick = 1");
    shell_exec(path, "UPDATE meta SET value = 1 WHERE key = 'merge_tick'");
    CHECK_INT(maintain_all(d, T0 + 1260 * 1000LL, &chunked), 0);
    /* the merged chunk in the first fresh one's place */
    CHECK_INT(count(path, "SELECT id FROM obj_processor_chunks WHERE first_tick = 1 AND "
                          "last_tick = 600"),
              first_id);
    s = shell_snapshot(path, "SELECT first_tick, last_tick, typeof(si_net_rx), typeof(si_net_tx) "
                             "FROM obj_processor_chunks ORDER BY 1");
    CHECK_STR(s ? s : "", "1|600|blob|null|\n601|660|blob|blob|\n");
    free(s);
    CHECK_INT(count(path, "SELECT count(*) FROM (SELECT inst FROM obj_disk_chunks WHERE "
                          "last_tick <= 600 GROUP BY inst HAVING count(*) > 1)"),
              0);
    s = shell_snapshot(path, "SELECT first_id, last_id FROM ticks_chunks ORDER BY 1");
    CHECK_STR(s ? s : "", "1|600|\n601|660|\n");
    free(s);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values after a merge, with NULL columns", values, s);
    free(s);

    /* a fresh chunk that does not decode: its instance's chunks of the window stay, the other
     * objects' merge, and maintenance goes on */
    shell_exec(path, "UPDATE obj_processor_chunks SET user = x'00' WHERE first_tick = 601");
    CHECK_INT(maintain_all(d, T0 + 1800 * 1000LL, &chunked), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor_chunks WHERE first_tick > 600 AND "
                          "last_tick <= 1200"),
              10);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_tcp_chunks WHERE first_tick > 600 AND "
                          "last_tick <= 1200"),
              1);
    CHECK_INT(count(path, "SELECT count(*) FROM ticks_chunks WHERE first_id > 600 AND "
                          "last_id <= 1200"),
              1);
    CHECK_INT(count(path, "SELECT value FROM meta WHERE key = 'merge_tick'"), 1201);
    db_close(d);
    free(values);
}

/*
 * A file of a build whose windows were 300 tick ids: its merges stand at a multiple of 300 that is
 * not one of 600 (merge_tick 301, say). The merge goes on over the rest of that window of 600 and
 * then in whole windows: here, with merge_tick 241, ticks 241-600 merge into one chunk an
 * instance, 1-240 stay as they are, and the next window is 601-1200.
 */
static void test_merge_from_old_window(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 600};
    char path[256];
    char *values, *s;
    struct db *d = open_1300(path, sizeof(path), "oldwin.db", 19, &values);

    /* the fresh spans of 1-600, their merge held back */
    CHECK_INT(maintain_all(d, T0 + 720 * 1000LL, &chunked), 0);
    shell_exec(path, "UPDATE meta SET value = 601 WHERE key = 'merge_tick'");
    CHECK_INT(maintain_all(d, T0 + 1200 * 1000LL, &chunked), 0);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_processor_chunks"), 10);
    shell_exec(path, "UPDATE meta SET value = 241 WHERE key = 'merge_tick'");
    CHECK_INT(maintain_all(d, T0 + 1200 * 1000LL, &chunked), 0);
    check_spans(path, "1|60|\n61|120|\n121|180|\n181|240|\n241|600|\n", 601);
    s = shell_snapshot(path, Q_VALUES);
    check_same("counter_values after a merge from a window of 300", values, s);
    free(s);
    db_close(d);
    free(values);
}

/* Whether table `t` has the same rows, byte for byte, in the files at a and b. */
static int table_same(const char *a, const char *b, const char *t)
{
    sqlite3 *ca = NULL, *cb = NULL;
    sqlite3_stmt *sa = NULL, *sb = NULL;
    char sql[160];
    int same = 1, ra, rb;

    snprintf(sql, sizeof(sql), "SELECT * FROM %s ORDER BY 1, 2, 3", t);
    if (sqlite3_open(a, &ca) != SQLITE_OK || sqlite3_open(b, &cb) != SQLITE_OK ||
        sqlite3_prepare_v2(ca, sql, -1, &sa, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(cb, sql, -1, &sb, NULL) != SQLITE_OK)
        same = 0;
    while (same) {
        ra = sqlite3_step(sa);
        rb = sqlite3_step(sb);
        if (ra != rb || ra != SQLITE_ROW) {
            same = ra == rb && ra == SQLITE_DONE;
            break;
        }
        for (int i = 0; same && i < sqlite3_column_count(sa); i++) {
            int n = sqlite3_column_bytes(sa, i);

            same = sqlite3_column_type(sa, i) == sqlite3_column_type(sb, i) &&
                   n == sqlite3_column_bytes(sb, i) &&
                   (n == 0 ||
                    memcmp(sqlite3_column_blob(sa, i), sqlite3_column_blob(sb, i), (size_t)n) == 0);
        }
    }
    sqlite3_finalize(sa);
    sqlite3_finalize(sb);
    sqlite3_close(ca);
    sqlite3_close(cb);
    return same;
}

/*
 * The chunk steps code what the writer kept of the rows it wrote (storage/span_cache.h) where it
 * holds the whole span, and read the rows back where it does not (ticks written before the file
 * was opened): two files written the same ticks (a series that appears and vanishes, NULLs, the
 * 64-bit extremes, then the edge values), one chunked on the connection that wrote them and one
 * reopened first, must hold the same chunks, byte for byte, and the same counter_values. Debug
 * builds also read every cached slice back and compare (chunk_span).
 */
static void test_cached_equals_read(void)
{
    struct db_retention keep = {7, 90, 1825, 0, 86400}, chunked = {7, 90, 1825, 0, 600};
    int64_t now = T0 + (NTICKS + 1200) * 1000LL;
    char path[2][256], err[512], *values[2];
    struct db_mem mem[2];
    struct tick *batch[SPAN];
    struct db *d[2];

    for (int k = 0; k < 2; k++) {
        unsigned seed = 5;

        snprintf(path[k], sizeof(path[k]), "%s/%s.db", dir, k ? "read" : "cached");
        CHECK_INT(db_open(path[k], "testhost", &d[k], err, sizeof(err)), 0);
        CHECK_INT(write_ticks(d[k], 0, NTICKS, T0, &seed), 0);
        for (int i = NTICKS; i < NTICKS + 1200; i += SPAN) {
            for (int j = 0; j < SPAN; j++)
                batch[j] = mk_edge_tick(i + j, T0 + (int64_t)(i + j) * 1000);
            CHECK_INT(db_write_ticks(d[k], batch, SPAN), 0);
            for (int j = 0; j < SPAN; j++)
                tick_free(batch[j]);
        }
        /* roll-ups and retention, no chunk due yet: the cache stays */
        CHECK_INT(maintain_all(d[k], now, &keep), 0);
        if (k == 1) {
            db_close(d[k]);
            CHECK_INT(db_open(path[k], "testhost", &d[k], err, sizeof(err)), 0);
        }
        CHECK_INT(maintain_all(d[k], now, &chunked), 0);
        db_mem_get(d[k], &mem[k]);
        values[k] = shell_snapshot(path[k], Q_VALUES);
        db_close(d[k]);
    }
    CHECK(mem[0].slices_cached > 0);
    CHECK_INT(mem[0].slices_read, 0);
    CHECK_INT(mem[1].slices_cached, 0);
    CHECK(mem[1].slices_read > 0);
    /* ticks 1-3600 are chunked; the rest stay plain */
    CHECK_INT(count(path[0], "SELECT count(*) FROM obj_disk WHERE tick <= 3600"), 0);
    CHECK(count(path[0], "SELECT count(*) FROM obj_disk_chunks") > 0);
    for (int o = 0; o < OBJ_COUNT; o++) {
        char t[64];

        snprintf(t, sizeof(t), "%s_chunks", counter_objects[o].table);
        if (!table_same(path[0], path[1], t))
            fprintf(stderr, "%s differs\n", t);
        CHECK(table_same(path[0], path[1], t));
    }
    check_same("counter_values, cached against read back", values[0], values[1]);
    free(values[0]);
    free(values[1]);
}

/*
 * A DELETE and an UPDATE of raw rows committed by another connection (a user's shell while the
 * daemon runs) after the writer kept its copy of them: the chunks hold the rows as the table does,
 * read back, not the writer's copy (debug builds would abort in chunk_span's comparison).
 */
static void test_others_edits_reach_chunks(void)
{
    struct db_retention keep = {7, 90, 1825, 0, 86400}, chunked = {7, 90, 1825, 0, 600};
    int64_t now = T0 + (NTICKS + 1200) * 1000LL;
    char path[256], err[512], *edited, *after;
    unsigned seed = 9;
    struct db_mem mem;
    struct db *d = NULL;

    snprintf(path, sizeof(path), "%s/others.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(write_ticks(d, 0, NTICKS + 1200, T0, &seed), 0);
    CHECK_INT(maintain_all(d, now, &keep), 0);
    shell_exec(path, "DELETE FROM obj_disk WHERE tick BETWEEN 700 AND 759;"
                     "UPDATE obj_disk SET rd_ios = 7 WHERE tick = 900;");
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick BETWEEN 700 AND 759"), 0);
    edited = shell_snapshot(path, Q_VALUES);
    CHECK_INT(maintain_all(d, now, &chunked), 0);
    db_mem_get(d, &mem);
    after = shell_snapshot(path, Q_VALUES);
    db_close(d);
    CHECK_INT(count(path, "SELECT count(*) FROM obj_disk WHERE tick <= 3600"), 0);
    CHECK(count(path, "SELECT count(*) FROM obj_disk_chunks") > 0);
    CHECK(mem.slices_read > 0);
    check_same("counter_values after another connection's edits, then chunked", edited, after);
    free(edited);
    free(after);
}

/* The maintenance kinds of db_work_get's n (DB_WORK_MINUTES ... DB_WORK_SIZE), summed. */
static int64_t maint_calls(struct db *d, int64_t per_kind[DB_WORK_KINDS])
{
    struct db_work w[DB_WORK_KINDS];
    int64_t sum = 0;

    db_work_get(d, w);
    for (int k = DB_WORK_MINUTES; k <= DB_WORK_SIZE; k++) {
        per_kind[k] = w[k].n;
        sum += w[k].n;
    }
    return sum;
}

/*
 * db_maintain_split (the writer's: a call ends after a step that took split_ns of CPU time) with
 * split_ns 0 runs one step a call, the round's steps in order (db_work_get's counts), and a round
 * cut after its minute step by 600 more ticks, as the writer's ticks come between calls, leaves
 * the same values, roll-ups, chunks and ticks as db_maintain's whole rounds on the same ticks.
 */
static void test_split_rounds(void)
{
    struct db_retention chunked = {7, 90, 1825, 0, 600};
    int64_t now = T0 + (NTICKS + 1200) * 1000LL, kinds[DB_WORK_KINDS], before[DB_WORK_KINDS];
    char path[2][256], err[512], *values[2], *rollups[2];
    struct db *d[2];
    int calls = 0, in_order = 1, one_each = 1, more;

    for (int k = 0; k < 2; k++) {
        unsigned seed = 21;

        snprintf(path[k], sizeof(path[k]), "%s/%s.db", dir, k ? "split" : "whole");
        CHECK_INT(db_open(path[k], "testhost", &d[k], err, sizeof(err)), 0);
        CHECK_INT(write_ticks(d[k], 0, NTICKS, T0, &seed), 0);
        if (k == 0) {
            CHECK_INT(maintain_all(d[k], T0 + NTICKS * 1000LL, &chunked), 0);
            CHECK_INT(write_ticks(d[k], NTICKS, 600, T0, &seed), 0);
            CHECK_INT(maintain_all(d[k], now, &chunked), 0);
            continue;
        }
        /* the first call: the minute step alone */
        maint_calls(d[k], before);
        CHECK_INT(db_maintain_split(d[k], T0 + NTICKS * 1000LL, &chunked, 0), 1);
        CHECK_INT(maint_calls(d[k], kinds), 1);
        CHECK_INT(kinds[DB_WORK_MINUTES], 1);
        /* ticks come; the round goes on from its hour step */
        CHECK_INT(write_ticks(d[k], NTICKS, 600, T0, &seed), 0);
        do {
            int64_t n = maint_calls(d[k], before), expect = DB_WORK_MINUTES + (calls + 1) % 6;

            more = db_maintain_split(d[k], calls < 5 ? T0 + NTICKS * 1000LL : now, &chunked, 0);
            if (maint_calls(d[k], kinds) != n + 1)
                one_each = 0;
            if (kinds[expect] != before[expect] + 1 && in_order) {
                fprintf(stderr, "call %d: not step %lld\n", calls + 1, (long long)expect);
                in_order = 0;
            }
        } while (more > 0 && ++calls < 100000);
        CHECK_INT(more, 0);
        CHECK(one_each);
        CHECK(in_order);
        /* calls + 2 steps in whole rounds: the round cut by the ticks, and those after it */
        CHECK_INT((calls + 2) % 6, 0);
        CHECK(calls > 6);
    }
    for (int k = 0; k < 2; k++) {
        values[k] = shell_snapshot(path[k], Q_VALUES);
        rollups[k] = shell_snapshot(path[k], Q_ROLLUPS);
        db_close(d[k]);
    }
    CHECK(count(path[1], "SELECT count(*) FROM obj_disk_chunks") > 0);
    CHECK(count(path[1], "SELECT count(*) FROM counter_rollups WHERE tier = '1h'") > 0);
    check_same("counter_values, split rounds against whole", values[0], values[1]);
    check_same("counter_rollups, split rounds against whole", rollups[0], rollups[1]);
    for (int o = 0; o < OBJ_COUNT; o++) {
        char t[64];

        snprintf(t, sizeof(t), "%s_chunks", counter_objects[o].table);
        if (o == OBJ_PROCESS) /* no process in these ticks: no tables */
            continue;
        if (!table_same(path[0], path[1], t))
            fprintf(stderr, "%s differs\n", t);
        CHECK(table_same(path[0], path[1], t));
    }
    CHECK(table_same(path[0], path[1], "ticks_chunks"));
    for (int k = 0; k < 2; k++) {
        free(values[k]);
        free(rollups[k]);
    }
}

/* The cases in groups that ctest runs side by side (tests/CMakeLists.txt): each group a file
 * or more of thousands of ticks, minutes under a sanitizer. No argument runs every group. */
#define GROUP_MAX 6 /* cases a group, at most */
static void (*const groups[][GROUP_MAX])(void) = {
    {test_chunked_equals_plain, test_edge_values_per_counter, test_v4_fixture, test_v5_fixture},
    {test_cached_equals_read, test_others_edits_reach_chunks, test_ticks_chunked,
     test_ticks_chunks_expire},
    {test_chunk_slices}, /* the longest: 100 disks, every value compared before and after */
    {test_one_step_a_span, test_merge_fresh_chunks, test_merge_from_old_window,
     test_fresh_span_continues},
    {test_split_rounds, test_v7_span_in_hand},
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

int main(int argc, char **argv)
{
    char cmd[300];
    long only = 0;

    if (argc > 1) {
        char *end;

        only = strtol(argv[1], &end, 10);
        if (argc > 2 || *end || only < 1 || only > (long)NGROUPS) {
            fprintf(stderr, "usage: %s [GROUP 1..%zu]\n", argv[0], NGROUPS);
            return 2;
        }
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    for (size_t g = 0; g < NGROUPS; g++)
        for (size_t i = 0; (only == 0 || (size_t)only == g + 1) && i < GROUP_MAX && groups[g][i];
             i++)
            groups[g][i]();
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
