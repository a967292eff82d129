/*
 * test_chunk_sql.c - chunk_encode() and chunk_points() (storage/chunk_sql.c) as perflogd's
 * connections have them: round trips through SQL with NULLs and 64-bit extremes, the order
 * the points come out in, and the errors.
 */
#include "storage/chunk_sql.h"
#include "testlib.h"

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

static sqlite3 *db;

/* The first column of the first row of `sql` as an integer, or INT64_MIN on an error. */
static int64_t one(const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = INT64_MIN;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return INT64_MIN;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The error text of running `sql`, or "" when it ran. */
static const char *error_of(const char *sql)
{
    static char msg[256];
    char *err = NULL;

    msg[0] = 0;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        snprintf(msg, sizeof msg, "%s", err ? err : "?");
    sqlite3_free(err);
    return msg;
}

int main(void)
{
    CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    CHECK_INT(chunk_sql_register(db), SQLITE_OK);
    CHECK(strcmp(error_of("CREATE TABLE t(tick INTEGER PRIMARY KEY, v INTEGER);"
                          "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
                          "WHERE i < 1000) INSERT INTO t SELECT i * 2 + (i > 500), "
                          "CASE WHEN i % 7 = 0 THEN NULL ELSE (i * i) % 977 END FROM s;"
                          "INSERT INTO t VALUES (5000, -9223372036854775808), (5001, "
                          "9223372036854775807), (5002, NULL);"
                          "CREATE TABLE c AS SELECT chunk_encode(tick, v) AS data FROM "
                          "(SELECT * FROM t ORDER BY tick);"),
                 "") == 0);
    /* exact both ways, NULLs included, and as many rows */
    CHECK_INT(one("SELECT count(*) FROM (SELECT tick, v FROM t EXCEPT SELECT tick, value FROM c, "
                  "chunk_points(c.data))"),
              0);
    CHECK_INT(one("SELECT count(*) FROM (SELECT tick, value FROM c, chunk_points(c.data) EXCEPT "
                  "SELECT tick, v FROM t)"),
              0);
    CHECK_INT(one("SELECT count(*) FROM c, chunk_points(c.data)"), 1003);
    CHECK_INT(one("SELECT count(*) FROM c, chunk_points(c.data) WHERE value IS NULL"),
              one("SELECT count(*) FROM t WHERE v IS NULL"));
    CHECK_INT(one("SELECT min(value) FROM c, chunk_points(c.data)"), INT64_MIN);
    CHECK_INT(one("SELECT max(value) FROM c, chunk_points(c.data)"), INT64_MAX);
    /* in tick order without a sort: the first row is the first tick */
    CHECK_INT(one("SELECT tick FROM c, chunk_points(c.data) ORDER BY tick LIMIT 1"), 2);
    /* ~10-bit values with NULLs: under 2 bytes a value (the table spends 1-8 bytes + a header) */
    CHECK(one("SELECT length(chunk_encode(tick, v)) FROM (SELECT * FROM t WHERE tick < 5000 "
              "ORDER BY tick)") < 1000 * 2);
    /* a chunk of version 1 (as perflogd wrote them before the group codes: DFOR of t * 7 + t % 4
     * over ticks 1..60) still reads, to the same points as a version-2 chunk of them */
    CHECK_INT(
        one("SELECT count(*) FROM "
            "chunk_points(x'013c00020002021008032448822448822448822448822448822448822448822400') "
            "WHERE value = tick * 7 + tick % 4"),
        60);
    CHECK_INT(
        one("SELECT count(*) FROM (SELECT tick, value FROM "
            "chunk_points(x'013c00020002021008032448822448822448822448822448822448822448822400') "
            "EXCEPT "
            "SELECT tick, value FROM chunk_points((SELECT chunk_encode(tick, value) FROM "
            "(SELECT * FROM "
            "chunk_points(x'013c00020002021008032448822448822448822448822448822448822448822400') "
            "ORDER BY tick))))"),
        0);
    /* no rows: NULL; a NULL chunk: no points */
    CHECK_INT(one("SELECT chunk_encode(tick, v) IS NULL FROM t WHERE 0"), 1);
    CHECK_INT(one("SELECT count(*) FROM chunk_points(NULL)"), 0);
    /* the errors */
    CHECK(strstr(error_of("SELECT chunk_encode(tick, v) FROM (SELECT * FROM t ORDER BY tick DESC)"),
                 "ticks must increase") != NULL);
    CHECK(strstr(error_of("SELECT chunk_encode(1.5, 2)"), "must be an integer") != NULL);
    CHECK(strstr(error_of("SELECT chunk_encode(1, 'x')"), "must be an integer") != NULL);
    CHECK(strstr(error_of("SELECT * FROM chunk_points(x'01')"), "not a chunk") != NULL);
    CHECK(strstr(error_of("SELECT * FROM chunk_points('text')"), "not a chunk") != NULL);
    CHECK(strstr(error_of("SELECT * FROM chunk_points"), "no query solution") != NULL);

    /* chunk_rows: three columns of the same ticks side by side, exactly (v, -v, v of the even
     * ticks only with the others NULL); a NULL argument is a column of NULLs */
    CHECK(strcmp(error_of("CREATE TABLE w AS SELECT chunk_encode(tick, v) AS a, chunk_encode(tick, "
                          "-v) AS b, chunk_encode(tick, CASE WHEN tick % 2 = 0 THEN v END) AS e "
                          "FROM (SELECT * FROM t WHERE tick < 5000 ORDER BY tick);"),
                 "") == 0);
    CHECK_INT(one("SELECT count(*) FROM (SELECT tick, v, -v, CASE WHEN tick % 2 = 0 THEN v END, "
                  "NULL FROM t WHERE tick < 5000 EXCEPT SELECT tick, v0, v1, v2, v3 FROM w, "
                  "chunk_rows(w.a, w.b, w.e, NULL))"),
              0);
    CHECK_INT(one("SELECT count(*) FROM w, chunk_rows(w.a, w.b, w.e, NULL)"), 1000);
    CHECK_INT(one("SELECT count(*) FROM w, chunk_rows(w.a) WHERE v1 IS NOT NULL OR v15 IS NOT "
                  "NULL"),
              0);
    /* a row whose first chunk is NULL takes its ticks from the next */
    CHECK_INT(one("SELECT sum(tick = 2) FROM w, chunk_rows(NULL, w.b)"), 1);
    CHECK_INT(one("SELECT count(*) FROM chunk_rows(NULL, NULL)"), 0);
    CHECK(strstr(error_of("SELECT * FROM c, w, chunk_rows(w.a, c.data)"), "different ticks") !=
          NULL);
    CHECK(strstr(error_of("SELECT * FROM chunk_rows(x'01')"), "not a chunk") != NULL);
    CHECK(strstr(error_of("SELECT * FROM chunk_rows"), "no query solution") != NULL);
    sqlite3_close(db);
    return tl_done();
}
