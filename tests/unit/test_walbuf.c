/*
 * test_walbuf.c - the WAL-gathering VFS (storage/walbuf.c) on real SQLite files, against a second
 * connection on the default VFS that reads and writes the same file:
 * - every commit is whole in the reader's view at once, and the writes reaching the file system
 *   are a few per commit, not two per frame;
 * - a transaction larger than the page cache (frames spilled before the commit) is invisible to
 *   the reader until it commits;
 * - a transaction rolled back after a spill leaves nothing behind that could later overwrite the
 *   frames another connection writes at the same offsets (integrity_check, counts);
 * - checkpoints, a truncated WAL and its restart;
 * - a process killed (SIGKILL) in the middle of its commits leaves a file that passes
 *   integrity_check and holds at least every commit it reported;
 * - without walbuf_attach nothing is gathered.
 */
#include "storage/walbuf.h"
#include "testlib.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/perflog-test-walbuf-XXXXXX";

static int64_t q_int(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;

    if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
        return -2;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int integrity_ok(sqlite3 *c)
{
    sqlite3_stmt *st;
    int ok = 0;

    if (sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        ok = strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
    sqlite3_finalize(st);
    return ok;
}

static int exec(sqlite3 *c, const char *sql)
{
    return sqlite3_exec(c, sql, NULL, NULL, NULL);
}

/* n rows of `bytes` random bytes each, tagged with `tag` */
static int insert_rows(sqlite3 *c, int n, int bytes, int tag)
{
    char sql[160];

    snprintf(sql, sizeof(sql),
             "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) "
             "INSERT INTO t (tag, b) SELECT %d, randomblob(%d) FROM s",
             n, tag, bytes);
    return exec(c, sql);
}

static sqlite3 *open_writer(const char *path)
{
    sqlite3 *c = NULL;

    if (sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, WALBUF_VFS_NAME) !=
        SQLITE_OK)
        return NULL;
    sqlite3_busy_timeout(c, 5000);
    if (exec(c, "PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, tag INTEGER, b BLOB)") !=
        SQLITE_OK) {
        sqlite3_close(c);
        return NULL;
    }
    return c;
}

static void test_commits_whole_and_gathered(const char *path)
{
    sqlite3 *w = open_writer(path), *r = NULL;
    struct walbuf_stats s0, s1;
    int64_t rows = 0;

    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_INT(walbuf_attach(w), SQLITE_OK);
    CHECK_INT(sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(r, 5000);
    walbuf_get_stats(w, &s0);
    for (int i = 1; i <= 40; i++) {
        CHECK_INT(exec(w, "BEGIN"), SQLITE_OK);
        CHECK_INT(insert_rows(w, i, 1500, i), SQLITE_OK);
        CHECK_INT(exec(w, "COMMIT"), SQLITE_OK);
        rows += i;
        /* the reader sees each commit whole as soon as COMMIT returns */
        CHECK_INT(q_int(r, "SELECT count(*) FROM t"), rows);
        CHECK_INT(q_int(r, "SELECT count(*) FROM t WHERE tag = (SELECT max(tag) FROM t)"), i);
    }
    walbuf_get_stats(w, &s1);
    /* two xWrite calls a frame came in; a few writes a commit went out */
    CHECK(s1.writes_in - s0.writes_in > 40 * 4);
    CHECK(s1.writes_out - s0.writes_out <= (s1.writes_in - s0.writes_in) / 8);
    CHECK(s1.bytes > s0.bytes + (uint64_t)rows * 1500);
    printf("40 commits of 1-40 rows: %llu writes in, %llu out\n",
           (unsigned long long)(s1.writes_in - s0.writes_in),
           (unsigned long long)(s1.writes_out - s0.writes_out));
    CHECK(integrity_ok(r));
    CHECK_INT(sqlite3_close(r), SQLITE_OK);
    CHECK_INT(sqlite3_close(w), SQLITE_OK);
}

struct reader_arg {
    const char *path;
    atomic_int stop; /* set by the main thread when its commits are done */
    int reads, bad;  /* reads made; reads that saw a torn commit or failed */
};

/* Reads while the other thread commits: each commit i holds i rows tagged i, so a read that sees
 * any other count for a tag saw a commit in part (or pages not in the file yet). */
static void *reader_main(void *p)
{
    struct reader_arg *a = p;
    sqlite3 *r = NULL;
    sqlite3_stmt *st = NULL;

    if (sqlite3_open_v2(a->path, &r, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(r,
                           "SELECT count(*) FROM (SELECT tag, count(*) AS n FROM t "
                           "WHERE tag >= 100 GROUP BY tag HAVING n <> tag - 100)",
                           -1, &st, NULL) != SQLITE_OK) {
        a->bad++;
        sqlite3_close(r);
        return NULL;
    }
    sqlite3_busy_timeout(r, 5000);
    while (!atomic_load(&a->stop)) {
        int rc = sqlite3_step(st);

        a->reads++;
        if (rc != SQLITE_ROW || sqlite3_column_int64(st, 0) != 0)
            a->bad++;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(r);
    return NULL;
}

/* Commits against a reader in another thread that reads all the time. */
static void test_concurrent_reader(const char *path)
{
    sqlite3 *w = open_writer(path);
    struct reader_arg a = {.path = path};
    pthread_t th;

    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_INT(exec(w, "SELECT count(*) FROM t"), SQLITE_OK);
    CHECK_INT(walbuf_attach(w), SQLITE_OK);
    CHECK_INT(pthread_create(&th, NULL, reader_main, &a), 0);
    for (int i = 1; i <= 300; i++) {
        CHECK_INT(exec(w, "BEGIN"), SQLITE_OK);
        CHECK_INT(insert_rows(w, 1 + i % 20, 1500, 100 + 1 + i % 20), SQLITE_OK);
        CHECK_INT(exec(w, "DELETE FROM t WHERE tag >= 100"), SQLITE_OK);
        CHECK_INT(insert_rows(w, 1 + i % 20, 1500, 100 + 1 + i % 20), SQLITE_OK);
        CHECK_INT(exec(w, "COMMIT"), SQLITE_OK);
        if (i % 50 == 0)
            CHECK_INT(sqlite3_wal_checkpoint_v2(w, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL),
                      SQLITE_OK);
    }
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    printf("concurrent reader: %d reads, %d torn or failed\n", a.reads, a.bad);
    CHECK(a.reads > 0);
    CHECK_INT(a.bad, 0);
    CHECK_INT(sqlite3_close(w), SQLITE_OK);
}

/* A transaction larger than the writer's page cache spills frames before its commit. */
static void test_spill_and_rollback(const char *path)
{
    sqlite3 *w = open_writer(path), *r = NULL;
    int64_t before;

    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_INT(exec(w, "PRAGMA cache_size = 8"), SQLITE_OK);
    CHECK_INT(sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(r, 5000);
    CHECK_INT(exec(w, "SELECT count(*) FROM t"), SQLITE_OK); /* the WAL is open */
    CHECK_INT(walbuf_attach(w), SQLITE_OK);
    before = q_int(r, "SELECT count(*) FROM t");

    /* spilled, then committed: invisible until the commit, whole after it */
    CHECK_INT(exec(w, "BEGIN"), SQLITE_OK);
    CHECK_INT(insert_rows(w, 600, 1500, 1000), SQLITE_OK);
    CHECK_INT(q_int(r, "SELECT count(*) FROM t"), before);
    CHECK_INT(exec(w, "COMMIT"), SQLITE_OK);
    CHECK_INT(q_int(r, "SELECT count(*) FROM t WHERE tag = 1000"), 600);

    /* spilled, then rolled back; the other connection then writes frames at the offsets the
     * rolled-back ones had, and the writer goes on after it */
    for (int round = 0; round < 4; round++) {
        /* a spill of a few pages stays in walbuf's buffer: the other connection's frames then
         * cover its offsets */
        static const int spill_rows[4] = {400, 12, 20, 30};

        /* an empty WAL: the rollback reloads its pages from the database file alone, so no
         * read of the WAL writes the held frames out before the write lock goes */
        if (round % 2)
            CHECK_INT(sqlite3_wal_checkpoint_v2(w, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL),
                      SQLITE_OK);
        CHECK_INT(exec(w, "BEGIN"), SQLITE_OK);
        CHECK_INT(insert_rows(w, spill_rows[round], 1500, 2000), SQLITE_OK);
        CHECK_INT(exec(w, "ROLLBACK"), SQLITE_OK);
        CHECK_INT(exec(r, "BEGIN IMMEDIATE"), SQLITE_OK);
        CHECK_INT(insert_rows(r, 50, 1500, 3000 + round), SQLITE_OK);
        CHECK_INT(exec(r, "COMMIT"), SQLITE_OK);
        CHECK_INT(exec(w, "BEGIN"), SQLITE_OK);
        CHECK_INT(insert_rows(w, 20, 1500, 4000 + round), SQLITE_OK);
        CHECK_INT(exec(w, "COMMIT"), SQLITE_OK);
    }
    CHECK_INT(q_int(r, "SELECT count(*) FROM t WHERE tag = 2000"), 0);
    CHECK_INT(q_int(r, "SELECT count(*) FROM t WHERE tag BETWEEN 3000 AND 3003"), 200);
    CHECK_INT(q_int(w, "SELECT count(*) FROM t WHERE tag BETWEEN 4000 AND 4003"), 80);
    CHECK(integrity_ok(r));
    CHECK(integrity_ok(w));

    /* checkpoints: truncated, then restarted from the WAL's start */
    CHECK_INT(sqlite3_wal_checkpoint_v2(w, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL),
              SQLITE_OK);
    before = q_int(r, "SELECT count(*) FROM t");
    for (int i = 0; i < 5; i++) {
        CHECK_INT(insert_rows(w, 30, 1500, 5000), SQLITE_OK);
        CHECK_INT(sqlite3_wal_checkpoint_v2(w, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL),
                  SQLITE_OK);
    }
    CHECK_INT(q_int(r, "SELECT count(*) FROM t"), before + 150);
    CHECK(integrity_ok(r));
    CHECK_INT(sqlite3_close(r), SQLITE_OK);
    CHECK_INT(sqlite3_close(w), SQLITE_OK);
}

/* The child commits until killed, writing each committed count to the pipe. */
static void crash_child(const char *path, int fd)
{
    sqlite3 *w = open_writer(path);
    int64_t n;

    if (!w || walbuf_attach(w) != SQLITE_OK)
        _exit(2);
    n = q_int(w, "SELECT count(*) FROM t");
    for (int i = 0;; i++) {
        int rows = 1 + i % 40;

        if (exec(w, "BEGIN") != SQLITE_OK || insert_rows(w, rows, 1200, 7000) != SQLITE_OK ||
            exec(w, "COMMIT") != SQLITE_OK)
            _exit(3);
        n += rows;
        if (write(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
            _exit(4);
    }
}

static void test_killed_mid_commit(const char *path)
{
    srand((unsigned)time(NULL));
    for (int round = 0; round < 6; round++) {
        int fds[2];
        int64_t last = -1, got;
        pid_t pid;
        sqlite3 *c = NULL;
        int reports = 0, status;
        struct timespec pause = {0, 1000000L * (1 + rand() % 40)};

        CHECK_INT(pipe(fds), 0);
        pid = fork();
        if (pid == 0) {
            close(fds[0]);
            crash_child(path, fds[1]);
        }
        close(fds[1]);
        while (reports < 20 && read(fds[0], &got, sizeof(got)) == (ssize_t)sizeof(got)) {
            last = got;
            reports++;
        }
        nanosleep(&pause, NULL);
        kill(pid, SIGKILL);
        while (read(fds[0], &got, sizeof(got)) == (ssize_t)sizeof(got))
            last = got;
        close(fds[0]);
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status));
        CHECK_INT(reports, 20);

        CHECK_INT(sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
        CHECK(integrity_ok(c));
        /* every commit the child reported is there (one more may be: killed after its COMMIT,
         * before its report) */
        CHECK(q_int(c, "SELECT count(*) FROM t") >= last);
        CHECK(q_int(c, "SELECT count(*) FROM t") <= last + 40);
        sqlite3_close(c);
    }
}

static void test_not_attached(const char *path)
{
    sqlite3 *w = open_writer(path);

    CHECK(w != NULL);
    if (!w)
        return;
    /* unpaired: every call goes straight through, and the data is all there */
    CHECK_INT(insert_rows(w, 50, 1500, 9000), SQLITE_OK);
    CHECK_INT(q_int(w, "SELECT count(*) FROM t WHERE tag = 9000"), 50);
    CHECK(integrity_ok(w));
    CHECK_INT(sqlite3_close(w), SQLITE_OK);

    /* a connection of the default VFS cannot be attached */
    CHECK_INT(sqlite3_open(path, &w), SQLITE_OK);
    CHECK_INT(exec(w, "SELECT count(*) FROM t"), SQLITE_OK);
    CHECK_INT(walbuf_attach(w), SQLITE_NOTFOUND);
    CHECK_INT(sqlite3_close(w), SQLITE_OK);
}

int main(void)
{
    char path[256], cmd[512];

    CHECK(mkdtemp(dir) != NULL);
    CHECK_INT(walbuf_register(), SQLITE_OK);
    CHECK_INT(walbuf_register(), SQLITE_OK);
    CHECK(sqlite3_vfs_find(WALBUF_VFS_NAME) != NULL);
    CHECK(sqlite3_vfs_find(NULL) != sqlite3_vfs_find(WALBUF_VFS_NAME)); /* not the default */

    snprintf(path, sizeof(path), "%s/a.db", dir);
    test_commits_whole_and_gathered(path);
    snprintf(path, sizeof(path), "%s/b.db", dir);
    test_spill_and_rollback(path);
    snprintf(path, sizeof(path), "%s/c.db", dir);
    test_killed_mid_commit(path);
    snprintf(path, sizeof(path), "%s/e.db", dir);
    test_concurrent_reader(path);
    snprintf(path, sizeof(path), "%s/d.db", dir);
    test_not_attached(path);

    for (const char *f = "abcde"; *f; f++) {
        snprintf(cmd, sizeof(cmd), "rm -f %s/%c.db %s/%c.db-wal %s/%c.db-shm", dir, *f, dir, *f,
                 dir, *f);
        if (system(cmd) != 0)
            fprintf(stderr, "cleanup failed\n");
    }
    rmdir(dir);
    printf("%d passed, %d failed\n", tl_passed, tl_failed);
    return tl_failed != 0;
}
