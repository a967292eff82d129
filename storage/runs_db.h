/*
 * runs_db.h - the `runs` table (copy runs, docs/design.md §5 and docs/schema.md) through its own
 * writable SQLite connection on the daemon's database file.
 *
 * The counter writer owns the other writable connection; both are short transactions in WAL mode,
 * and this one waits up to 2 s for the writer's lock. Thread-safe: one mutex inside serializes the
 * HTTP workers and the run manager. The connection is open only while held (runs_db_hold).
 */
#ifndef PERFLOG_RUNS_DB_H
#define PERFLOG_RUNS_DB_H

#include <stddef.h>
#include <stdint.h>

#define RUNS_DB_NULL INT64_MIN /* an integer column that is NULL */

/* One row. Strings are malloc'd (NULL: SQL NULL) and released by runs_db_row_release. */
struct runs_db_row {
    int64_t id;
    char *label, *command, *host, *status, *tool_output, *report_json, *peers;
    int64_t pid, start_ms, end_ms, settled_ms, exit_code, payload_bytes, files;
    int64_t settle_timeout_s;
    int64_t io_read_bytes, io_write_bytes, storage_read_bytes, storage_write_bytes;
};

/* What the client sends at the end of a run (RUNS_DB_NULL / NULL: not sent). */
struct runs_db_end {
    int64_t end_ms, exit_code;
    const char *status; /* "ending" or "failed" */
    const char *tool_output;
    int64_t io_read_bytes, io_write_bytes, storage_read_bytes, storage_write_bytes;
};

struct runs_db;

/* Open the database at `path`, which db_open has created or upgraded (its schema version must be
 * DB_SCHEMA_VERSION: -EPROTO otherwise). Returns 0 and sets *out, or a negative errno with a
 * message in err. */
int runs_db_open(const char *path, struct runs_db **out, char *err, size_t errlen);
void runs_db_close(struct runs_db *r); /* accepts NULL */

/*
 * Whether the connection stays open between operations (`hold` non-zero; so it is from
 * runs_db_open on). Not held, each operation opens it (parsing the schema, 1.3-1.8 ms on the
 * real machine) and closes it at its end, which frees the parsed schema (with its lookaside about
 * 0.4 MiB of heap): the run manager holds it only while a run is open.
 */
void runs_db_hold(struct runs_db *r, int hold);
int runs_db_is_open(struct runs_db *r); /* the connection is open now */

/* A row with every integer RUNS_DB_NULL and every string NULL. */
void runs_db_row_init(struct runs_db_row *row);
void runs_db_row_release(struct runs_db_row *row); /* frees the strings; accepts a zeroed row */

/* Insert `row` (its id is ignored) and set *id. Returns 0 or -EIO. */
int runs_db_insert(struct runs_db *r, const struct runs_db_row *row, int64_t *id);

/* Record the end of run `id`. Returns 0, -ENOENT (no such run), -EALREADY (already ended: its
 * status is not 'running') or -EIO. */
int runs_db_end(struct runs_db *r, int64_t id, const struct runs_db_end *end);

/* Set settled_ms (RUNS_DB_NULL keeps it), the status (NULL keeps it) and the report JSON of run
 * `id`. Returns 0, -ENOENT or -EIO. */
int runs_db_set_report(struct runs_db *r, int64_t id, int64_t settled_ms, const char *status,
                       const char *report_json);

/* Fill *row (caller releases it) with run `id`. Returns 0, -ENOENT or -EIO (row untouched). */
int runs_db_get(struct runs_db *r, int64_t id, struct runs_db_row *row);

/*
 * Every run, newest first (`pending` non-zero: only those the run manager still works on: status
 * 'running' or 'ending', or a report still missing). *rows is a malloc'd array of *n rows, freed
 * with runs_db_rows_free. Returns 0, -ENOMEM or -EIO.
 */
int runs_db_list(struct runs_db *r, int pending, struct runs_db_row **rows, size_t *n);
void runs_db_rows_free(struct runs_db_row *rows, size_t n);

/* The edges stored with a run (docs/schema.md, run_edges), by index into runs_db_edge_names. */
enum runs_db_edge {
    RUNS_EDGE_START,
    RUNS_EDGE_END,
    RUNS_EDGE_SETTLE,
    RUNS_EDGE_KERNEL,
    RUNS_EDGES
};
extern const char *const runs_db_edge_names[RUNS_EDGES]; /* "start", "end", "settle", "kernel" */

/* Store (or replace) edge `which` of run `id`: its instant and its reading as JSON text. Returns
 * 0 or -EIO. Thread-safe. */
int runs_db_set_edge(struct runs_db *r, int64_t id, enum runs_db_edge which, int64_t t_ms,
                     const char *reading_json);

/* The stored edges of run `id`: texts[i] is edge i's reading (malloc'd) or NULL when not stored.
 * Returns 0, -ENOMEM or -EIO (texts all NULL). Thread-safe. */
int runs_db_get_edges(struct runs_db *r, int64_t id, char *texts[RUNS_EDGES]);

/* Delete run `id` and its edges. Returns 0, -ENOENT or -EIO. */
int runs_db_delete(struct runs_db *r, int64_t id);

/*
 * At daemon start: every run still 'running' or 'ending' becomes 'interrupted'; a missing end_ms
 * becomes the time of the last tick stored before `before_ms` (the daemon's start), never earlier
 * than the run's start. Returns the number of runs closed, or -EIO.
 */
int runs_db_close_open_runs_at_start(struct runs_db *r, int64_t before_ms);

const char *runs_db_errmsg(struct runs_db *r); /* the last failed operation's message, per thread */

#endif
