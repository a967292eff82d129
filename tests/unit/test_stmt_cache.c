/*
 * test_stmt_cache.c - kept prepared statements (storage/stmt_cache.c) on a real SQLite file: the
 * same text gives the same statement, reset and unbound; the least recently used goes when the
 * slots are full; a text that does not prepare is refused and not kept; a kept statement follows a
 * schema change; a statement handed out again holds no read transaction; clear finalizes all.
 */
#include "storage/stmt_cache.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/perflog-test-stmt-cache-XXXXXX";

static int open_stmts(sqlite3 *conn)
{
    int n = 0;

    for (sqlite3_stmt *st = sqlite3_next_stmt(conn, NULL); st; st = sqlite3_next_stmt(conn, st))
        n++;
    return n;
}

static int64_t one(struct stmt_cache *c, const char *sql, int64_t a)
{
    int rc;
    sqlite3_stmt *st = stmt_cache_get(c, sql, &rc);
    int64_t v = -1;

    if (!st)
        return -2;
    if (sqlite3_bind_parameter_count(st) >= 1)
        sqlite3_bind_int64(st, 1, a);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return v;
}

int main(void)
{
    char path[256], sql[64];
    sqlite3 *conn, *other;
    struct stmt_cache c;
    sqlite3_stmt *a, *b;
    int rc;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/c.db", dir);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER);"
                           "INSERT INTO t VALUES (1), (2), (3);",
                           NULL, NULL, NULL),
              SQLITE_OK);
    stmt_cache_init(&c, conn);

    /* the same text: the same statement, prepared once; another text: another */
    a = stmt_cache_get(&c, "SELECT count(*) FROM t WHERE x >= ?1", &rc);
    CHECK(a != NULL);
    CHECK_INT(rc, SQLITE_OK);
    sqlite3_bind_int64(a, 1, 2);
    CHECK_INT(sqlite3_step(a), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int(a, 0), 2);
    /* handed out again without a reset by its user: reset, and the binding gone (NULL: no row
     * counts) */
    b = stmt_cache_get(&c, "SELECT count(*) FROM t WHERE x >= ?1", &rc);
    CHECK(b == a);
    CHECK_INT(sqlite3_step(b), SQLITE_ROW);
    CHECK_INT(sqlite3_column_int(b, 0), 0);
    sqlite3_reset(b);
    CHECK_INT((int)c.prepares, 1);
    CHECK_INT(one(&c, "SELECT count(*) FROM t WHERE x >= ?1", 1), 3);
    CHECK_INT(one(&c, "SELECT max(x) FROM t WHERE x < ?1", 3), 2);
    CHECK_INT((int)c.prepares, 2);
    CHECK_INT(stmt_cache_count(&c), 2);
    CHECK_INT(open_stmts(conn), 2);

    /* a text that does not prepare: refused with SQLite's code, nothing kept */
    CHECK(stmt_cache_get(&c, "SELECT nonsense FROM nowhere", &rc) == NULL);
    CHECK_INT(rc, SQLITE_ERROR);
    CHECK(stmt_cache_get(&c, "  -- nothing\n", &rc) == NULL);
    CHECK_INT(rc, SQLITE_MISUSE);
    CHECK_INT(stmt_cache_count(&c), 2);
    CHECK_INT(open_stmts(conn), 2);

    /* a schema change: the kept statement is re-prepared by SQLite and sees the new column */
    CHECK_INT(one(&c, "SELECT count(*) FROM t WHERE x >= ?1", 1), 3);
    CHECK_INT(sqlite3_exec(conn, "ALTER TABLE t ADD COLUMN y INTEGER DEFAULT 7", NULL, NULL, NULL),
              SQLITE_OK);
    a = stmt_cache_get(&c, "SELECT * FROM t", &rc);
    CHECK(a != NULL);
    CHECK_INT(sqlite3_step(a), SQLITE_ROW);
    CHECK_INT(sqlite3_column_count(a), 2);
    sqlite3_reset(a);
    CHECK_INT(sqlite3_exec(conn, "ALTER TABLE t ADD COLUMN z INTEGER DEFAULT 8", NULL, NULL, NULL),
              SQLITE_OK);
    CHECK(stmt_cache_get(&c, "SELECT * FROM t", &rc) == a);
    CHECK_INT(sqlite3_step(a), SQLITE_ROW);
    CHECK_INT(sqlite3_column_count(a), 3);
    CHECK_INT(sqlite3_column_int(a, 2), 8);
    /* left stepped: the next get resets it, so no read transaction holds the WAL back, and a
     * second connection can checkpoint all of it */
    CHECK(stmt_cache_get(&c, "SELECT * FROM t", &rc) == a);
    CHECK_INT(sqlite3_stmt_busy(a), 0);
    CHECK_INT(sqlite3_open(path, &other), SQLITE_OK);
    {
        int log = -1, done = -2;

        CHECK_INT(sqlite3_exec(other, "INSERT INTO t (x) VALUES (4)", NULL, NULL, NULL), SQLITE_OK);
        CHECK_INT(sqlite3_wal_checkpoint_v2(other, NULL, SQLITE_CHECKPOINT_RESTART, &log, &done),
                  SQLITE_OK);
        CHECK(log > 0);
        CHECK_INT(done, log);
    }
    sqlite3_close(other);

    /* full: the least recently used goes, the others stay */
    stmt_cache_clear(&c);
    CHECK_INT(open_stmts(conn), 0);
    c.prepares = 0;
    for (int i = 0; i < STMT_CACHE_SLOTS; i++) {
        snprintf(sql, sizeof(sql), "SELECT %d + count(*) FROM t", i);
        CHECK_INT(one(&c, sql, 0), i + 4);
    }
    CHECK_INT((int)c.prepares, STMT_CACHE_SLOTS);
    CHECK_INT(stmt_cache_count(&c), STMT_CACHE_SLOTS);
    CHECK_INT(one(&c, "SELECT 0 + count(*) FROM t", 0), 4); /* 0 is now the most recent; 1 least */
    CHECK_INT(one(&c, "SELECT 1000 + count(*) FROM t", 0), 1004);
    CHECK_INT((int)c.prepares, STMT_CACHE_SLOTS + 1);
    CHECK_INT(stmt_cache_count(&c), STMT_CACHE_SLOTS);
    CHECK_INT(open_stmts(conn), STMT_CACHE_SLOTS);
    CHECK_INT(one(&c, "SELECT 0 + count(*) FROM t", 0), 4);
    CHECK_INT(one(&c, "SELECT 2 + count(*) FROM t", 0), 6);
    CHECK_INT((int)c.prepares, STMT_CACHE_SLOTS + 1);
    CHECK_INT(one(&c, "SELECT 1 + count(*) FROM t", 0), 5); /* it was the one that went */
    CHECK_INT((int)c.prepares, STMT_CACHE_SLOTS + 2);

    stmt_cache_clear(&c);
    CHECK_INT(stmt_cache_count(&c), 0);
    CHECK_INT(open_stmts(conn), 0);
    CHECK_INT(sqlite3_close(conn), SQLITE_OK); /* SQLITE_BUSY if a statement were left */
    unlink(path);
    snprintf(path, sizeof(path), "%s/c.db-wal", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/c.db-shm", dir);
    unlink(path);
    rmdir(dir);
    return tl_done();
}
