/*
 * test_writer.c - the writer thread on a real SQLite file: every queued tick is committed, in
 * order, whether it commits each tick or gathers them, and stopping writes what is still gathered
 * (the daemon's flush on SIGTERM). Read back with the reader, as the API reads them.
 */
#include "collectors/model/delta.h"
#include "daemon/queue.h"
#include "daemon/writer.h"
#include "storage/reader.h"
#include "testlib.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An hour ago: inside the raw tier's retention, which the writer applies between writes. */
static int64_t T0;

static char dir[] = "/tmp/test_writer_XXXXXX";

struct seen {
    int64_t t_ms[64];
    size_t n;
};

static int seen_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    struct seen *s = arg;

    (void)tick;
    (void)interval_ms;
    if (s->n < 64)
        s->t_ms[s->n] = t_ms;
    s->n++;
    return 0;
}

/* A tick of one disk at T0 + i seconds. */
static struct tick *mk(struct delta_state *d, int i)
{
    struct raw_sample s = {0};
    struct raw_row *r = raw_object_add(&s.obj[OBJ_DISK], "vda", 3);
    struct tick *t;

    r->flags = RAW_IN_TOTAL;
    r->present = (1ull << DISK_NFIELDS) - 1;
    r->v[DISK_RD_SECTORS] = 1000u * (unsigned)i;
    t = delta_tick(d, &s, T0 + 1000 * i, i ? 1000 : 0, 0);
    raw_sample_free(&s);
    return t;
}

/* Write n ticks through a writer that commits every `commit_ms`, stop it, read them back. */
static void run(const char *name, int64_t commit_ms, int n)
{
    struct writer_settings ws = {
        .commit_interval_ms = commit_ms, .tick_interval_ms = 1000, .retention = {7, 90, 1825, 0}};
    struct delta_state *d = delta_new();
    struct tick_queue *q = queue_new(64);
    struct reader *rd = NULL;
    struct seen seen = {0};
    char path[256], err[512];
    struct writer *w;
    struct db *db;

    snprintf(path, sizeof(path), "%s/%s.db", dir, name);
    CHECK_INT(db_open(path, "testhost", &db, err, sizeof(err)), 0);
    w = writer_start_take(db, q, &ws, err, sizeof(err));
    CHECK(w != NULL);
    for (int i = 0; i < n; i++)
        CHECK_INT(queue_push_take(q, mk(d, i)), 0);
    /* Stopping writes what is queued or gathered; nothing is left over. */
    CHECK_INT(writer_stop(w, 10000), 0);
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    CHECK_INT(reader_ticks(rd, T0 - 1000, T0 + 1000 * n, seen_cb, &seen), 0);
    CHECK_INT(seen.n, n);
    for (size_t i = 0; i < seen.n && i < 64; i++)
        CHECK_INT(seen.t_ms[i], T0 + 1000 * (int64_t)i);
    reader_close(rd);
    queue_free(q);
    delta_free(d);
}

/*
 * A batch that holds a minute's first tick after other ticks: the writer writes the ticks before
 * it, then the minute's roll-up buckets ahead of it (storage/db.h db_rollup_ahead), then it. The
 * ticks are queued before the writer starts, so its first batch holds 128 of them, two minutes'
 * first ticks among them and not first: before the batch was cut there, both minutes' buckets went
 * into the ticks' commit and nothing was written ahead. Where the SQLite library runs no running
 * roll-ups (3.43 and later), nothing is ever written ahead.
 */
static void test_minute_ahead(void)
{
    struct writer_settings ws = {
        .commit_interval_ms = 2000, .tick_interval_ms = 1000, .retention = {7, 90, 1825, 0}};
    struct delta_state *d = delta_new();
    struct tick_queue *q = queue_new(256);
    int64_t t0 = T0, guard = 0;
    struct writer_stats st;
    char path[256], err[512];
    struct writer *w;
    struct db *db;
    int n = 150;

    /* tick 1 is a minute's first, and so are ticks 61 and 121 */
    T0 = (T0 / 60000) * 60000 - 1000;
    snprintf(path, sizeof(path), "%s/ahead.db", dir);
    CHECK_INT(db_open(path, "testhost", &db, err, sizeof(err)), 0);
    for (int i = 0; i < n; i++)
        CHECK_INT(queue_push_take(q, mk(d, i)), 0);
    w = writer_start_take(db, q, &ws, err, sizeof(err));
    CHECK(w != NULL);
    do {
        struct timespec ts = {0, 10000000};

        nanosleep(&ts, NULL);
        writer_get_stats(w, &st);
    } while (st.written < (uint64_t)n && ++guard < 1000);
    CHECK_INT(st.written, n);
    if (sqlite3_libversion_number() < 3043000)
        CHECK(st.work[DB_WORK_AHEAD].n >= 2);
    else
        CHECK_INT(st.work[DB_WORK_AHEAD].n, 0);
    CHECK(st.work[DB_WORK_TICKS].n >= 3);
    CHECK_INT(writer_stop(w, 10000), 0);
    queue_free(q);
    delta_free(d);
    T0 = t0;
}

/* A tick of `disks` disks at T0 + i seconds. */
static struct tick *mk_disks(struct delta_state *d, int i, int disks)
{
    struct raw_sample s = {0};
    struct tick *t;

    for (int k = 0; k < disks; k++) {
        char name[16];
        struct raw_row *r;

        snprintf(name, sizeof(name), "sd%d", k);
        r = raw_object_add(&s.obj[OBJ_DISK], name, strlen(name));
        r->flags = RAW_IN_TOTAL;
        r->present = (1ull << DISK_NFIELDS) - 1;
        for (int f = 0; f < DISK_NFIELDS; f++)
            r->v[f] = (uint64_t)(1000 * i + k + f);
    }
    t = delta_tick(d, &s, T0 + 1000 * i, i ? 1000 : 0, 0);
    raw_sample_free(&s);
    return t;
}

/* Wait until the writer has committed n ticks; its stats then. */
static void wait_written(struct writer *w, int n, struct writer_stats *st)
{
    int guard = 0;

    do {
        struct timespec ts = {0, 5000000};

        nanosleep(&ts, NULL);
        writer_get_stats(w, st);
    } while (st->written < (uint64_t)n && ++guard < 6000);
    CHECK_INT(st->written, n);
}

/*
 * The writer rests inside a transaction of ticks once it has used TICK_BURST_MS (4 ms) of CPU
 * (db_set_tick_pause). Ticks of 4 000 disks (80 000 values, tens of ms each even on a fast
 * machine), queued before the writer starts so that they go in one transaction: a rest after each
 * tick. Ticks of one disk, two a transaction as the sampler's pace and the default commit
 * interval make them: no rest after the first transaction (which creates the tables, and may rest
 * under a sanitizer, as the daemon's first tick may), so a small machine's writer wakes no more
 * often than before. Every tick is stored either way.
 */
static void run_rests(const char *name, int disks, int n, int big)
{
    struct writer_settings ws = {
        .commit_interval_ms = 2000, .tick_interval_ms = 1000, .retention = {7, 90, 1825, 0}};
    struct delta_state *d = delta_new();
    struct tick_queue *q = queue_new(64);
    struct reader *rd = NULL;
    struct seen seen = {0};
    struct writer_stats st;
    char path[256], err[512];
    uint64_t rests0 = 0, tx0 = 0;
    struct writer *w;
    struct db *db;

    snprintf(path, sizeof(path), "%s/%s.db", dir, name);
    CHECK_INT(db_open(path, "testhost", &db, err, sizeof(err)), 0);
    if (big) /* queued before the writer starts: one batch (a minute's first tick may cut it) */
        for (int i = 0; i < n; i++)
            CHECK_INT(queue_push_take(q, mk_disks(d, i, disks)), 0);
    w = writer_start_take(db, q, &ws, err, sizeof(err));
    CHECK(w != NULL);
    if (!big) {
        CHECK_INT(queue_push_take(q, mk_disks(d, 0, disks)), 0);
        wait_written(w, 1, &st);
        rests0 = st.tick_rests;
        tx0 = st.work[DB_WORK_TICKS].n;
        for (int i = 1; i < n; i += 2) {
            for (int k = i; k < i + 2 && k < n; k++)
                CHECK_INT(queue_push_take(q, mk_disks(d, k, disks)), 0);
            wait_written(w, i + 2 < n ? i + 2 : n, &st);
        }
    }
    wait_written(w, n, &st);
    fprintf(stderr, "%d ticks of %d disks: %llu rests in %llu transactions of ticks\n", n, disks,
            (unsigned long long)(st.tick_rests - rests0),
            (unsigned long long)(st.work[DB_WORK_TICKS].n - tx0));
    if (big)
        CHECK(st.tick_rests >= (uint64_t)n - st.work[DB_WORK_TICKS].n);
    else
        CHECK_INT(st.tick_rests, rests0);
    CHECK_INT(writer_stop(w, 10000), 0);
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    CHECK_INT(reader_ticks(rd, T0 - 1000, T0 + 1000 * n, seen_cb, &seen), 0);
    CHECK_INT(seen.n, n);
    reader_close(rd);
    queue_free(q);
    delta_free(d);
}

int main(void)
{
    char cmd[300];

    T0 = ((int64_t)time(NULL) - 3600) * 1000;
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    run("each", 0, 20);        /* a commit per tick */
    run("gathered", 60000, 7); /* gathered for a minute: only the stop commits them */
    run("none", 0, 0);
    test_minute_ahead();
    run_rests("rests", 4000, 4, 1);
    run_rests("no_rests", 1, 40, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
