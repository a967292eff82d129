/*
 * runs_db.c - the runs table through its own connection; see runs_db.h.
 */
#include "storage/runs_db.h"

#include "base/mem.h"
#include "storage/db.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUSY_TIMEOUT_MS 2000

struct runs_db {
    sqlite3 *conn; /* NULL while closed (runs_db_hold): opened by the next operation */
    char *path;
    int held;             /* runs_db_hold: kept open between operations */
    char err[256];        /* the last failed operation's message */
    pthread_mutex_t lock; /* guards all of the above */
};

/* The columns of a row, in the order row_read expects them. */
#define RUN_COLUMNS                                                                                \
    "id, label, command, host, status, tool_output, report_json, peers, pid, start_ms, end_ms, "   \
    "settled_ms, exit_code, payload_bytes, files, settle_timeout_s, io_read_bytes, "               \
    "io_write_bytes, storage_read_bytes, storage_write_bytes"

void runs_db_row_init(struct runs_db_row *row)
{
    memset(row, 0, sizeof(*row));
    row->pid = row->start_ms = row->end_ms = row->settled_ms = RUNS_DB_NULL;
    row->exit_code = row->payload_bytes = row->files = row->settle_timeout_s = RUNS_DB_NULL;
    row->io_read_bytes = row->io_write_bytes = RUNS_DB_NULL;
    row->storage_read_bytes = row->storage_write_bytes = RUNS_DB_NULL;
}

void runs_db_row_release(struct runs_db_row *row)
{
    if (!row)
        return;
    free(row->label);
    free(row->command);
    free(row->host);
    free(row->status);
    free(row->tool_output);
    free(row->report_json);
    free(row->peers);
    row->label = row->command = row->host = row->status = NULL;
    row->tool_output = row->report_json = row->peers = NULL;
}

void runs_db_rows_free(struct runs_db_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        runs_db_row_release(&rows[i]);
    free(rows);
}

static int text_col(sqlite3_stmt *st, int col, char **out)
{
    const unsigned char *s = sqlite3_column_text(st, col);

    *out = NULL;
    if (!s)
        return sqlite3_column_type(st, col) == SQLITE_NULL ? 0 : -ENOMEM;
    *out = strdup((const char *)s);
    return *out ? 0 : -ENOMEM;
}

static int64_t int_col(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? RUNS_DB_NULL
                                                       : sqlite3_column_int64(st, col);
}

static int row_read(sqlite3_stmt *st, struct runs_db_row *row)
{
    char **texts[] = {&row->label,       &row->command,     &row->host, &row->status,
                      &row->tool_output, &row->report_json, &row->peers};
    int64_t *ints[] = {&row->pid,
                       &row->start_ms,
                       &row->end_ms,
                       &row->settled_ms,
                       &row->exit_code,
                       &row->payload_bytes,
                       &row->files,
                       &row->settle_timeout_s,
                       &row->io_read_bytes,
                       &row->io_write_bytes,
                       &row->storage_read_bytes,
                       &row->storage_write_bytes};
    int col = 0;

    runs_db_row_init(row);
    row->id = sqlite3_column_int64(st, col++);
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (text_col(st, col++, texts[i]) < 0) {
            runs_db_row_release(row);
            return -ENOMEM;
        }
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        *ints[i] = int_col(st, col++);
    return 0;
}

static void bind_int(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == RUNS_DB_NULL)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Open r->conn (locked, or before r is shared). Returns 0 or -EIO with r->err set. */
static int conn_open(struct runs_db *r)
{
    int rc = sqlite3_open_v2(r->path, &r->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);

    if (rc != SQLITE_OK) {
        snprintf(r->err, sizeof(r->err), "%s: cannot open the runs table: %s", r->path,
                 r->conn ? sqlite3_errmsg(r->conn) : sqlite3_errstr(rc));
        sqlite3_close_v2(r->conn);
        r->conn = NULL;
        return -EIO;
    }
    sqlite3_busy_timeout(r->conn, BUSY_TIMEOUT_MS);
    sqlite3_exec(r->conn, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", NULL, NULL,
                 NULL);
    return 0;
}

/* The end of an operation (locked) that returned rc: its message kept on failure, and the
 * connection closed unless held. Unlocks. */
static int done(struct runs_db *r, int rc)
{
    if (rc < 0 && r->conn)
        snprintf(r->err, sizeof(r->err), "%s", sqlite3_errmsg(r->conn));
    if (!r->held && r->conn) {
        sqlite3_close_v2(r->conn);
        r->conn = NULL;
        mem_trim_ask(); /* the parsed schema it held is freed */
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int runs_db_open(const char *path, struct runs_db **out, char *err, size_t errlen)
{
    struct runs_db *r = calloc(1, sizeof(*r));
    sqlite3_stmt *st = NULL;
    int version = -1;

    if (!r || !(r->path = strdup(path))) {
        free(r);
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    pthread_mutex_init(&r->lock, NULL);
    r->held = 1;
    if (conn_open(r) < 0) {
        snprintf(err, errlen, "%s", r->err);
        runs_db_close(r);
        return -EIO;
    }
    if (sqlite3_prepare_v2(r->conn, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (version != DB_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s: schema version %d, not %d: open it with db_open first", path,
                 version, DB_SCHEMA_VERSION);
        runs_db_close(r);
        return -EPROTO;
    }
    *out = r;
    return 0;
}

void runs_db_hold(struct runs_db *r, int hold)
{
    pthread_mutex_lock(&r->lock);
    r->held = hold;
    done(r, 0);
}

int runs_db_is_open(struct runs_db *r)
{
    int open;

    pthread_mutex_lock(&r->lock);
    open = r->conn != NULL;
    pthread_mutex_unlock(&r->lock);
    return open;
}

void runs_db_close(struct runs_db *r)
{
    if (!r)
        return;
    if (r->conn)
        sqlite3_close_v2(r->conn);
    pthread_mutex_destroy(&r->lock);
    free(r->path);
    free(r);
}

const char *runs_db_errmsg(struct runs_db *r)
{
    static _Thread_local char msg[sizeof(r->err)];

    pthread_mutex_lock(&r->lock);
    memcpy(msg, r->err, sizeof(msg));
    pthread_mutex_unlock(&r->lock);
    return msg;
}

/* Prepare `sql` under the lock; the caller finalizes and unlocks. */
static int prepare(struct runs_db *r, const char *sql, sqlite3_stmt **st)
{
    if (!r->conn && conn_open(r) < 0)
        return -EIO;
    return sqlite3_prepare_v2(r->conn, sql, -1, st, NULL) == SQLITE_OK ? 0 : -EIO;
}

int runs_db_insert(struct runs_db *r, const struct runs_db_row *row, int64_t *id)
{
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&r->lock);
    rc = prepare(r,
                 "INSERT INTO runs (label, command, host, status, peers, pid, start_ms, "
                 "payload_bytes, files, settle_timeout_s) VALUES (?,?,?,?,?,?,?,?,?,?)",
                 &st);
    if (rc == 0) {
        bind_text(st, 1, row->label);
        bind_text(st, 2, row->command);
        bind_text(st, 3, row->host);
        bind_text(st, 4, row->status ? row->status : "running");
        bind_text(st, 5, row->peers);
        bind_int(st, 6, row->pid);
        bind_int(st, 7, row->start_ms);
        bind_int(st, 8, row->payload_bytes);
        bind_int(st, 9, row->files);
        bind_int(st, 10, row->settle_timeout_s);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
        if (rc == 0)
            *id = sqlite3_last_insert_rowid(r->conn);
    }
    sqlite3_finalize(st);
    done(r, rc);
    return rc;
}

/* 0 when run `id` exists (its status in *running: 1 when 'running'), -ENOENT, -EIO. Locked. */
static int status_of(struct runs_db *r, int64_t id, int *running)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(r, "SELECT status = 'running' FROM runs WHERE id = ?", &st);

    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *running = sqlite3_column_int(st, 0);
            rc = 0;
        } else {
            rc = rc == SQLITE_DONE ? -ENOENT : -EIO;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int runs_db_end(struct runs_db *r, int64_t id, const struct runs_db_end *end)
{
    sqlite3_stmt *st = NULL;
    int running = 0, rc;

    pthread_mutex_lock(&r->lock);
    rc = status_of(r, id, &running);
    if (rc == 0 && !running)
        rc = -EALREADY;
    if (rc == 0)
        rc = prepare(r,
                     "UPDATE runs SET status = ?, end_ms = ?, exit_code = ?, tool_output = ?, "
                     "io_read_bytes = ?, io_write_bytes = ?, storage_read_bytes = ?, "
                     "storage_write_bytes = ? WHERE id = ? AND status = 'running'",
                     &st);
    if (rc == 0) {
        bind_text(st, 1, end->status ? end->status : "ending");
        bind_int(st, 2, end->end_ms);
        bind_int(st, 3, end->exit_code);
        bind_text(st, 4, end->tool_output);
        bind_int(st, 5, end->io_read_bytes);
        bind_int(st, 6, end->io_write_bytes);
        bind_int(st, 7, end->storage_read_bytes);
        bind_int(st, 8, end->storage_write_bytes);
        sqlite3_bind_int64(st, 9, id);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    done(r, rc);
    return rc;
}

int runs_db_set_report(struct runs_db *r, int64_t id, int64_t settled_ms, const char *status,
                       const char *report_json)
{
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&r->lock);
    rc = prepare(r,
                 "UPDATE runs SET settled_ms = coalesce(?, settled_ms), status = coalesce(?, "
                 "status), report_json = ? WHERE id = ?",
                 &st);
    if (rc == 0) {
        bind_int(st, 1, settled_ms);
        bind_text(st, 2, status);
        bind_text(st, 3, report_json);
        sqlite3_bind_int64(st, 4, id);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
        if (rc == 0 && sqlite3_changes(r->conn) == 0)
            rc = -ENOENT;
    }
    sqlite3_finalize(st);
    done(r, rc);
    return rc;
}

int runs_db_get(struct runs_db *r, int64_t id, struct runs_db_row *row)
{
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&r->lock);
    rc = prepare(r, "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?", &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            rc = row_read(st, row);
        else
            rc = rc == SQLITE_DONE ? -ENOENT : -EIO;
    }
    sqlite3_finalize(st);
    done(r, rc);
    return rc;
}

int runs_db_list(struct runs_db *r, int pending, struct runs_db_row **rows, size_t *n)
{
    sqlite3_stmt *st = NULL;
    struct runs_db_row *v = NULL, *nv;
    size_t cnt = 0, cap = 0;
    int rc, step = SQLITE_DONE;

    pthread_mutex_lock(&r->lock);
    rc = prepare(r,
                 pending ? "SELECT " RUN_COLUMNS " FROM runs WHERE status IN ('running', "
                           "'ending') OR report_json IS NULL ORDER BY id DESC"
                         : "SELECT " RUN_COLUMNS " FROM runs ORDER BY id DESC",
                 &st);
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (cnt == cap) {
            cap = cap ? cap * 2 : 16;
            nv = realloc(v, cap * sizeof(*v));
            if (!nv) {
                rc = -ENOMEM;
                break;
            }
            v = nv;
        }
        rc = row_read(st, &v[cnt]);
        if (rc == 0)
            cnt++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -EIO;
    sqlite3_finalize(st);
    done(r, rc);
    if (rc < 0) {
        runs_db_rows_free(v, cnt);
        return rc;
    }
    *rows = v;
    *n = cnt;
    return 0;
}

const char *const runs_db_edge_names[RUNS_EDGES] = {"start", "end", "settle", "kernel"};

int runs_db_set_edge(struct runs_db *r, int64_t id, enum runs_db_edge which, int64_t t_ms,
                     const char *reading_json)
{
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&r->lock);
    rc = prepare(
        r, "INSERT OR REPLACE INTO run_edges (run_id, edge, t_ms, reading) VALUES (?,?,?,?)", &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        bind_text(st, 2, runs_db_edge_names[which]);
        bind_int(st, 3, t_ms);
        bind_text(st, 4, reading_json);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    done(r, rc);
    return rc;
}

int runs_db_get_edges(struct runs_db *r, int64_t id, char *texts[RUNS_EDGES])
{
    sqlite3_stmt *st = NULL;
    int rc, step;

    for (int i = 0; i < RUNS_EDGES; i++)
        texts[i] = NULL;
    pthread_mutex_lock(&r->lock);
    rc = prepare(r, "SELECT edge, reading FROM run_edges WHERE run_id = ?", &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
            const char *edge = (const char *)sqlite3_column_text(st, 0);

            for (int i = 0; i < RUNS_EDGES && edge; i++)
                if (!strcmp(edge, runs_db_edge_names[i]) && !texts[i])
                    rc = text_col(st, 1, &texts[i]);
        }
        if (rc == 0 && step != SQLITE_DONE)
            rc = -EIO;
    }
    sqlite3_finalize(st);
    done(r, rc);
    if (rc < 0)
        for (int i = 0; i < RUNS_EDGES; i++) {
            free(texts[i]);
            texts[i] = NULL;
        }
    return rc;
}

int runs_db_delete(struct runs_db *r, int64_t id)
{
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&r->lock);
    rc = prepare(r, "DELETE FROM runs WHERE id = ?", &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
        if (rc == 0 && sqlite3_changes(r->conn) == 0)
            rc = -ENOENT;
    }
    sqlite3_finalize(st);
    if (rc == 0 && prepare(r, "DELETE FROM run_edges WHERE run_id = ?", &st) == 0) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_step(st); /* the run is gone either way; an edge left over is never read */
        sqlite3_finalize(st);
    }
    done(r, rc);
    return rc;
}

int runs_db_close_open_runs_at_start(struct runs_db *r, int64_t before_ms)
{
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&r->lock);
    rc = prepare(r,
                 "UPDATE runs SET status = 'interrupted', end_ms = coalesce(end_ms, "
                 "max(start_ms, coalesce((SELECT max(t_ms) FROM ticks WHERE t_ms < ?1), "
                 "start_ms))) WHERE status IN ('running', 'ending')",
                 &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, before_ms);
        rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(r->conn) : -EIO;
    }
    sqlite3_finalize(st);
    done(r, rc);
    return rc;
}
