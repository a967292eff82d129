/*
 * testdb.h - a database fixture for the unit tests: tests/fixtures/db/NAME, an SQL dump of a
 * database an older perflogd wrote, loaded into a new file.
 */
#ifndef PERFLOG_TESTDB_H
#define PERFLOG_TESTDB_H

#include "testlib.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* Load fixture `name` into a new SQLite file at `to`. Returns 0, or -1 (already CHECKed). */
static inline int load_fixture(const char *name, const char *to)
{
    char sqlpath[512];
    sqlite3 *conn;
    FILE *f;
    char *sql;
    long len;
    int rc;

    snprintf(sqlpath, sizeof(sqlpath), "%s/db/%s", FIXTURES_DIR, name);
    f = fopen(sqlpath, "rb");
    CHECK(f != NULL);
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    sql = calloc(1, (size_t)len + 1);
    CHECK_INT(fread(sql, 1, (size_t)len, f), len);
    fclose(f);
    CHECK_INT(sqlite3_open(to, &conn), SQLITE_OK);
    rc = sqlite3_exec(conn, sql, NULL, NULL, NULL);
    CHECK_INT(rc, SQLITE_OK);
    sqlite3_close(conn);
    free(sql);
    return rc == SQLITE_OK ? 0 : -1;
}

#endif
