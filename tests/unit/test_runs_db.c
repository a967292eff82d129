/*
 * test_runs_db.c - the runs table (storage/runs_db.c) on a real file: insert, end (twice: 409's
 * -EALREADY), get, list newest first, set the report, delete, closing open runs at start, and the
 * schema 1 -> 2 upgrade that added its columns, and the reader's lookup of a labelled run's report;
 * every operation on a connection that is not held (closed between operations), and a failed
 * reopen's message.
 */
#include "storage/db.h"
#include "storage/reader.h"
#include "storage/runs_db.h"
#include "testlib.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/perflog-test-runs-XXXXXX";

static struct tick *one_tick(int64_t wall_ms)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = 1000;
    return t;
}

static int64_t insert(struct runs_db *r, const char *label, int64_t start_ms)
{
    struct runs_db_row row;
    int64_t id = -1;

    runs_db_row_init(&row);
    row.label = (char *)label;
    row.host = "testhost";
    row.status = "running";
    row.start_ms = start_ms;
    row.settle_timeout_s = 120;
    row.peers = "[\"http://b:9931\"]";
    CHECK_INT(runs_db_insert(r, &row, &id), 0);
    return id;
}

static void test_lifecycle(void)
{
    char path[256], err[512];
    struct db *d;
    struct runs_db *r;
    struct runs_db_row row, *rows;
    struct runs_db_end end = {.end_ms = 2000,
                              .exit_code = 3,
                              .status = "ending",
                              .tool_output = "copied",
                              .io_read_bytes = 10,
                              .io_write_bytes = 20,
                              .storage_read_bytes = RUNS_DB_NULL,
                              .storage_write_bytes = 40};
    struct tick *t;
    int64_t a, b, c;
    size_t n;

    snprintf(path, sizeof(path), "%s/runs.db", dir);
    CHECK(runs_db_open(path, &r, err, sizeof(err)) < 0); /* no database yet */
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(runs_db_open(path, &r, err, sizeof(err)), 0);

    a = insert(r, "first", 1000);
    b = insert(r, "second", 1500);
    c = insert(r, "third", 1600);
    CHECK(a > 0 && b > a && c > b);

    CHECK_INT(runs_db_end(r, a, &end), 0);
    CHECK_INT(runs_db_end(r, a, &end), -EALREADY);
    CHECK_INT(runs_db_end(r, 999, &end), -ENOENT);

    CHECK_INT(runs_db_get(r, a, &row), 0);
    CHECK(row.status && !strcmp(row.status, "ending"));
    CHECK(row.label && !strcmp(row.label, "first"));
    CHECK(row.peers && !strcmp(row.peers, "[\"http://b:9931\"]"));
    CHECK_INT(row.start_ms, 1000);
    CHECK_INT(row.end_ms, 2000);
    CHECK_INT(row.exit_code, 3);
    CHECK_INT(row.io_write_bytes, 20);
    CHECK(row.storage_read_bytes == RUNS_DB_NULL);
    CHECK(row.settled_ms == RUNS_DB_NULL);
    CHECK(row.report_json == NULL);
    CHECK(row.tool_output && !strcmp(row.tool_output, "copied"));
    runs_db_row_release(&row);
    CHECK_INT(runs_db_get(r, 999, &row), -ENOENT);

    CHECK_INT(runs_db_set_report(r, a, 2500, "settled", "{\"x\":1}"), 0);
    CHECK_INT(runs_db_set_report(r, 999, 2500, "settled", "{}"), -ENOENT);
    CHECK_INT(runs_db_get(r, a, &row), 0);
    CHECK(!strcmp(row.status, "settled") && row.settled_ms == 2500);
    CHECK(row.report_json && !strcmp(row.report_json, "{\"x\":1}"));
    runs_db_row_release(&row);

    CHECK_INT(runs_db_list(r, 0, &rows, &n), 0);
    CHECK_INT(n, 3);
    if (n == 3)
        CHECK(rows[0].id == c && rows[1].id == b && rows[2].id == a); /* newest first */
    runs_db_rows_free(rows, n);
    CHECK_INT(runs_db_list(r, 1, &rows, &n), 0);
    CHECK_INT(n, 2); /* a is settled with a report */
    runs_db_rows_free(rows, n);

    CHECK_INT(runs_db_delete(r, b), 0);
    CHECK_INT(runs_db_delete(r, b), -ENOENT);
    CHECK_INT(runs_db_get(r, b, &row), -ENOENT);

    /* A restart: c is still running; its end is the last tick before the new start. */
    t = one_tick(1800);
    CHECK_INT(db_write_ticks(d, &t, 1), 0);
    tick_free(t);
    t = one_tick(5000); /* the new daemon's first tick: not part of the run */
    CHECK_INT(db_write_ticks(d, &t, 1), 0);
    tick_free(t);
    CHECK_INT(runs_db_close_open_runs_at_start(r, 4000), 1);
    CHECK_INT(runs_db_close_open_runs_at_start(r, 4000), 0);
    CHECK_INT(runs_db_get(r, c, &row), 0);
    CHECK(!strcmp(row.status, "interrupted"));
    CHECK_INT(row.end_ms, 1800);
    runs_db_row_release(&row);
    CHECK_INT(runs_db_end(r, c, &end), -EALREADY);
    /* A run with no tick after its start ends at its start. */
    a = insert(r, "late", 6000);
    CHECK_INT(runs_db_close_open_runs_at_start(r, 7000), 1);
    CHECK_INT(runs_db_get(r, a, &row), 0);
    CHECK_INT(row.end_ms, 6000);
    runs_db_row_release(&row);

    runs_db_close(r);
    db_close(d);
}

/* Not held, the connection is closed after each operation and every operation reopens it; held,
 * it stays open. A reopen that fails is an -EIO with its own message. */
static void test_not_held(void)
{
    char path[256], moved[300], err[512], *texts[RUNS_EDGES];
    struct db *d;
    struct runs_db *r;
    struct runs_db_row row, *rows;
    struct runs_db_end end = {.end_ms = 2000, .exit_code = 0, .status = "ending"};
    int64_t a, b;
    size_t n;

    snprintf(path, sizeof(path), "%s/held.db", dir);
    snprintf(moved, sizeof(moved), "%s/held-away.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(runs_db_open(path, &r, err, sizeof(err)), 0);
    CHECK(runs_db_is_open(r)); /* held from the open on */
    runs_db_hold(r, 0);
    CHECK(!runs_db_is_open(r));

    a = insert(r, "one", 1000);
    b = insert(r, "two", 1100);
    CHECK(a > 0 && b > a);
    CHECK(!runs_db_is_open(r));
    CHECK_INT(runs_db_end(r, a, &end), 0);
    CHECK_INT(runs_db_end(r, a, &end), -EALREADY);
    CHECK_INT(runs_db_set_edge(r, a, RUNS_EDGE_START, 1500, "{\"disks\":{}}"), 0);
    CHECK_INT(runs_db_get_edges(r, a, texts), 0);
    CHECK(texts[0] && !strcmp(texts[0], "{\"disks\":{}}"));
    for (int i = 0; i < RUNS_EDGES; i++)
        free(texts[i]);
    CHECK_INT(runs_db_set_report(r, a, 2500, "settled", "{}"), 0);
    CHECK_INT(runs_db_get(r, a, &row), 0);
    CHECK(row.status && !strcmp(row.status, "settled") && row.end_ms == 2000);
    runs_db_row_release(&row);
    CHECK_INT(runs_db_list(r, 1, &rows, &n), 0);
    CHECK_INT(n, 1); /* b only: a is settled */
    if (n == 1)
        CHECK(rows[0].id == b);
    runs_db_rows_free(rows, n);
    CHECK_INT(runs_db_delete(r, b), 0);
    CHECK_INT(runs_db_get(r, b, &row), -ENOENT);
    CHECK_INT(runs_db_close_open_runs_at_start(r, 4000), 0);
    CHECK(!runs_db_is_open(r));

    /* The file gone: the reopen fails, and says so (no connection to ask). */
    CHECK_INT(rename(path, moved), 0);
    CHECK_INT(runs_db_get(r, a, &row), -EIO);
    CHECK(strstr(runs_db_errmsg(r), "cannot open the runs table") != NULL);
    CHECK_INT(rename(moved, path), 0);
    CHECK_INT(runs_db_get(r, a, &row), 0);
    runs_db_row_release(&row);

    runs_db_hold(r, 1);
    CHECK_INT(runs_db_get(r, a, &row), 0);
    runs_db_row_release(&row);
    CHECK(runs_db_is_open(r));
    runs_db_close(r);
    db_close(d);
}

/* A version-1 file (tests/fixtures/db/v1.sql) is upgraded to 2: the runs table gains its columns
 * and keeps its rows, and the runs table works on it. */
static void test_v2_migration(void)
{
    char path[256], err[512], sqlpath[512];
    static const char *const cols[] = {"settle_timeout_s",   "peers",
                                       "io_read_bytes",      "io_write_bytes",
                                       "storage_read_bytes", "storage_write_bytes"};
    struct db *d;
    struct runs_db *r;
    sqlite3 *conn;
    sqlite3_stmt *st;
    FILE *f;
    char *sql;
    long len;
    int64_t id;

    snprintf(sqlpath, sizeof(sqlpath), "%s/db/v1.sql", FIXTURES_DIR);
    f = fopen(sqlpath, "rb");
    CHECK(f != NULL);
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    sql = calloc(1, (size_t)len + 1);
    CHECK_INT(fread(sql, 1, (size_t)len, f), len);
    fclose(f);
    snprintf(path, sizeof(path), "%s/v1.db", dir);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn, sql, NULL, NULL, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "INSERT INTO runs (label, status, start_ms) VALUES ('old', "
                           "'settled', 5)",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(conn);
    free(sql);

    CHECK(runs_db_open(path, &r, err, sizeof(err)) == -EPROTO); /* still version 1 */
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
        char q[256];

        snprintf(q, sizeof(q), "SELECT count(*) FROM pragma_table_info('runs') WHERE name = '%s'",
                 cols[i]);
        CHECK_INT(sqlite3_prepare_v2(conn, q, -1, &st, NULL), SQLITE_OK);
        CHECK_INT(sqlite3_step(st), SQLITE_ROW);
        CHECK_INT(sqlite3_column_int(st, 0), 1);
        sqlite3_finalize(st);
    }
    sqlite3_close(conn);
    CHECK_INT(runs_db_open(path, &r, err, sizeof(err)), 0);
    id = insert(r, "new", 10);
    CHECK(id > 1);
    {
        struct runs_db_row *rows;
        size_t n;

        CHECK_INT(runs_db_list(r, 0, &rows, &n), 0);
        CHECK_INT(n, 2);
        if (n == 2)
            CHECK(!strcmp(rows[1].label, "old") && rows[1].settle_timeout_s == RUNS_DB_NULL &&
                  rows[0].settle_timeout_s == 120);
        runs_db_rows_free(rows, n);
    }
    runs_db_close(r);
    db_close(d);
}

/* The calibration lookup of the verdict (reader_labelled_report): the newest settled run of the
 * label that ended at or before the time and has a report; a running, an unreported or a later
 * one does not count. */
static void test_labelled_report(void)
{
    char path[256], err[512], *json = NULL;
    struct db *d;
    struct runs_db *r;
    struct reader *rd;
    struct runs_db_end end = {.end_ms = 0,
                              .exit_code = 0,
                              .status = "ending",
                              .io_read_bytes = RUNS_DB_NULL,
                              .io_write_bytes = RUNS_DB_NULL,
                              .storage_read_bytes = RUNS_DB_NULL,
                              .storage_write_bytes = RUNS_DB_NULL};
    int64_t a, b, c, e, id = -1;

    snprintf(path, sizeof(path), "%s/labelled.db", dir);
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(runs_db_open(path, &r, err, sizeof(err)), 0);
    a = insert(r, "calibration", 1000);
    b = insert(r, "calibration", 3000);
    c = insert(r, "copy", 5000);
    e = insert(r, "calibration", 7000); /* ended, no report yet */
    insert(r, "calibration", 8000);     /* still running */
    end.end_ms = 2000;
    CHECK_INT(runs_db_end(r, a, &end), 0);
    CHECK_INT(runs_db_set_report(r, a, 2100, "settled", "{\"id\":1}"), 0);
    end.end_ms = 4000;
    CHECK_INT(runs_db_end(r, b, &end), 0);
    CHECK_INT(runs_db_set_report(r, b, 4100, "settled", "{\"id\":2}"), 0);
    end.end_ms = 6000;
    CHECK_INT(runs_db_end(r, c, &end), 0);
    CHECK_INT(runs_db_set_report(r, c, 6100, "settled", "{\"id\":3}"), 0);
    end.end_ms = 7500;
    CHECK_INT(runs_db_end(r, e, &end), 0);
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);

    CHECK_INT(reader_labelled_report(rd, "calibration", 9000, &id, &json), 0);
    CHECK_INT(id, b);
    CHECK_STR(json, "{\"id\":2}");
    free(json);
    json = NULL;
    CHECK_INT(reader_labelled_report(rd, "calibration", 3999, &id, &json), 0);
    CHECK_INT(id, a);
    free(json);
    json = NULL;
    CHECK_INT(reader_labelled_report(rd, "calibration", 1999, &id, &json), -ENOENT);
    CHECK(json == NULL);
    CHECK_INT(reader_labelled_report(rd, "nothing", 9000, &id, &json), -ENOENT);
    reader_close(rd);
    runs_db_close(r);
    db_close(d);
}

int main(void)
{
    char cmd[128];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_lifecycle();
    test_v2_migration();
    test_not_held();
    test_labelled_report();
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return tl_done();
}
