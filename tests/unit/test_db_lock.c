/*
 * test_db_lock.c - the one-daemon-per-database lock on real files: a second take fails with the
 * holder's pid, a release lets the next take in, the lock file's text is parsed strictly, and a
 * lock file that cannot be created is a clear error.
 */
#include "db_lock.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/perflog-test-lock-XXXXXX";

static void test_take_twice(void)
{
    char db[300], err[512] = "", want[64];
    struct db_lock *a = NULL, *b = NULL;
    FILE *f;
    long pid = 0;

    snprintf(db, sizeof(db), "%s/perflog.db", dir);
    CHECK_INT(db_lock_take(db, &a, err, sizeof(err)), 0);
    CHECK(a != NULL);
    /* flock belongs to the open file description: a second take in this process conflicts too */
    CHECK_INT(db_lock_take(db, &b, err, sizeof(err)), -EBUSY);
    CHECK(b == NULL);
    snprintf(want, sizeof(want), "database in use by perflogd pid %ld", (long)getpid());
    CHECK(strstr(err, want) != NULL);
    CHECK(strstr(err, "perflog.db.lock") != NULL);
    snprintf(db, sizeof(db), "%s/perflog.db.lock", dir);
    f = fopen(db, "r");
    CHECK(f != NULL);
    if (f) {
        CHECK_INT(fscanf(f, "%ld", &pid), 1);
        fclose(f);
    }
    CHECK_INT(pid, getpid());
    db_lock_release(a);
    snprintf(db, sizeof(db), "%s/perflog.db", dir);
    CHECK_INT(db_lock_take(db, &b, err, sizeof(err)), 0);
    db_lock_release(b);
    db_lock_release(NULL);
}

static void test_no_dir(void)
{
    char db[300], err[512] = "";
    struct db_lock *l = NULL;

    snprintf(db, sizeof(db), "%s/missing/perflog.db", dir);
    CHECK_INT(db_lock_take(db, &l, err, sizeof(err)), -ENOENT);
    CHECK(l == NULL);
    CHECK(strstr(err, "no such directory") != NULL && strstr(err, "/missing") != NULL);
}

/* A directory given as the database: named, and no DIR.lock made beside it. */
static void test_is_dir(void)
{
    char lock[320], err[512] = "";
    struct db_lock *l = NULL;

    snprintf(lock, sizeof(lock), "%s.lock", dir);
    CHECK_INT(db_lock_take(dir, &l, err, sizeof(err)), -EISDIR);
    CHECK(l == NULL);
    CHECK(strstr(err, "is a directory") != NULL);
    CHECK(access(lock, F_OK) != 0);
}

static void test_parse_pid(void)
{
    CHECK_INT(db_lock_parse_pid("4242\n", 5), 4242);
    CHECK_INT(db_lock_parse_pid("4242", 4), 4242);
    CHECK_INT(db_lock_parse_pid("", 0), -1);
    CHECK_INT(db_lock_parse_pid("0\n", 2), -1);
    CHECK_INT(db_lock_parse_pid("-5\n", 3), -1);
    CHECK_INT(db_lock_parse_pid("12ab\n", 5), -1);
    CHECK_INT(db_lock_parse_pid("abc", 3), -1);
    CHECK_INT(db_lock_parse_pid("123456789012345678901234567890123", 33), -1);
}

static void test_message(void)
{
    char err[200];

    db_lock_busy_message(err, sizeof(err), "a.db", "a.db.lock", 17);
    CHECK(strcmp(err, "a.db: database in use by perflogd pid 17 (lock file a.db.lock)") == 0);
    db_lock_busy_message(err, sizeof(err), "a.db", "a.db.lock", -1);
    CHECK(strcmp(err, "a.db: database in use by another perflogd (lock file a.db.lock)") == 0);
}

int main(void)
{
    char cmd[300];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_take_twice();
    test_no_dir();
    test_is_dir();
    test_parse_pid();
    test_message();
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
