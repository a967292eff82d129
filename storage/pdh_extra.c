/*
 * pdh_extra.c - the SQL and the writes of the extra PDH series; see pdh_extra.h and
 * docs/schema.md.
 */
#include "storage/pdh_extra.h"

#include "base/log.h"
#include "collectors/model/pdh_path.h"
#include "storage/name_map.h"
#include "storage/sql_errno.h"

#include <errno.h>
#include <stdlib.h>

#define ID_SKIP (-2) /* cached for a path that does not cut: skipped without a lookup */

struct pdh_extra_store {
    sqlite3 *conn;
    sqlite3_stmt *get_path, *add_path, *ins_value;
    struct name_map ids; /* path -> pdh_paths.id */
};

void pdh_extra_tables(struct sbuf *b)
{
    sbuf_printf(b, "CREATE TABLE IF NOT EXISTS pdh_paths (\n"
                   "  id INTEGER PRIMARY KEY,\n"
                   "  path TEXT NOT NULL UNIQUE,\n"
                   "  object TEXT NOT NULL,\n"
                   "  instance TEXT,\n"
                   "  counter TEXT NOT NULL,\n"
                   "  first_tick INTEGER\n);\n"
                   "CREATE TABLE IF NOT EXISTS " PDH_EXTRA_TABLE " (\n"
                   "  tick INTEGER NOT NULL,\n"
                   "  path_id INTEGER NOT NULL,\n"
                   "  value REAL,\n"
                   "  PRIMARY KEY (tick, path_id)\n) WITHOUT ROWID;\n");
    for (int tier = 0; tier < 2; tier++)
        sbuf_printf(b,
                    "CREATE TABLE IF NOT EXISTS " PDH_EXTRA_TABLE "_%s (\n"
                    "  bucket_ms INTEGER NOT NULL,\n"
                    "  path_id INTEGER NOT NULL,\n"
                    "  n INTEGER NOT NULL,\n"
                    "  value_min REAL, value_avg REAL, value_max REAL,\n"
                    "  PRIMARY KEY (bucket_ms, path_id)\n) WITHOUT ROWID;\n",
                    tier ? "1h" : "1m");
}

void pdh_extra_values_view(struct sbuf *b)
{
    sbuf_printf(b, "SELECT t.t_ms, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', t.t_ms / 1000.0, "
                   "'unixepoch'), t.interval_ms, p.path, p.object, p.instance, p.counter, v.value\n"
                   "  FROM " PDH_EXTRA_TABLE " v JOIN ticks t ON t.id = v.tick JOIN pdh_paths p ON "
                   "p.id = v.path_id\n");
}

void pdh_extra_rollups_view(struct sbuf *b, const char *suffix)
{
    sbuf_printf(b,
                "SELECT '%s', r.bucket_ms, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', r.bucket_ms / "
                "1000.0, 'unixepoch'), p.path, p.object, p.instance, p.counter, r.n, r.value_min, "
                "r.value_avg, r.value_max, NULL\n  FROM " PDH_EXTRA_TABLE
                "_%s r JOIN pdh_paths p ON p.id = r.path_id\n",
                suffix, suffix);
}

/* A bucket that already exists (late ticks) is merged as the object roll-ups merge theirs:
 * counts add, min/max combine, averages are weighted by the counts. */
static void merge_clause(struct sbuf *b)
{
    sbuf_printf(b, "ON CONFLICT (bucket_ms, path_id) DO UPDATE SET n = n + excluded.n,\n"
                   "  value_min = min(value_min, excluded.value_min),\n"
                   "  value_max = max(value_max, excluded.value_max),\n"
                   "  value_avg = (value_avg * n + excluded.value_avg * excluded.n) / (n + "
                   "excluded.n);\n");
}

/* Only ticks with a value count: n is the number of values, which is also the right weight of
 * the average when minutes are merged into hours. A bucket without any value has no row. */
void pdh_extra_rollup_minute(struct sbuf *b)
{
    sbuf_printf(b, "INSERT INTO " PDH_EXTRA_TABLE "_1m (bucket_ms, path_id, n, value_min, "
                   "value_avg, value_max)\n"
                   "SELECT (t.t_ms / 60000) * 60000, v.path_id, count(*), min(v.value), "
                   "avg(v.value), max(v.value)\n"
                   "FROM " PDH_EXTRA_TABLE " v JOIN ticks t ON t.id = v.tick\n"
                   "WHERE v.tick > ?1 AND v.tick <= ?2 AND v.value IS NOT NULL\n"
                   "GROUP BY 1, 2\n");
    merge_clause(b);
}

void pdh_extra_rollup_hour(struct sbuf *b)
{
    sbuf_printf(b, "INSERT INTO " PDH_EXTRA_TABLE "_1h (bucket_ms, path_id, n, value_min, "
                   "value_avg, value_max)\n"
                   "SELECT (bucket_ms / 3600000) * 3600000, path_id, sum(n), min(value_min), "
                   "sum(value_avg * n) / sum(n), max(value_max)\n"
                   "FROM " PDH_EXTRA_TABLE "_1m WHERE bucket_ms >= ?1 AND bucket_ms < ?2\n"
                   "GROUP BY 1, 2\n");
    merge_clause(b);
}

static int prepare(sqlite3 *conn, const char *sql, sqlite3_stmt **out)
{
    int rc = sqlite3_prepare_v3(conn, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);

    return rc == SQLITE_OK ? 0 : sql_errno(rc);
}

/* The statements, prepared on first use: the tables exist only once a path has come (the writer
 * makes them then, schema_value_tables). */
static int store_prepare(struct pdh_extra_store *s)
{
    int rc = 0;

    if (s->ins_value)
        return 0;
    if (!s->get_path)
        rc = prepare(s->conn, "SELECT id FROM pdh_paths WHERE path = ?", &s->get_path);
    if (rc == 0 && !s->add_path)
        rc = prepare(s->conn,
                     "INSERT INTO pdh_paths (path, object, instance, counter, first_tick) "
                     "VALUES (?, ?, ?, ?, ?)",
                     &s->add_path);
    if (rc == 0)
        rc = prepare(s->conn, "INSERT OR IGNORE INTO " PDH_EXTRA_TABLE " VALUES (?, ?, ?)",
                     &s->ins_value);
    return rc;
}

int pdh_extra_store_new(sqlite3 *conn, struct pdh_extra_store **out)
{
    struct pdh_extra_store *s = calloc(1, sizeof(*s));

    if (!s)
        return -ENOMEM;
    s->conn = conn;
    *out = s;
    return 0;
}

void pdh_extra_store_free(struct pdh_extra_store *s)
{
    if (!s)
        return;
    sqlite3_finalize(s->get_path);
    sqlite3_finalize(s->add_path);
    sqlite3_finalize(s->ins_value);
    name_map_clear(&s->ids);
    free(s);
}

void pdh_extra_store_forget(struct pdh_extra_store *s)
{
    name_map_clear(&s->ids);
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

/* The id of `path`, its pdh_paths row created on first sight. 1 when the path does not cut. */
static int path_id(struct pdh_extra_store *s, const char *path, int64_t tick_id, int64_t *id)
{
    struct pdh_path_parts parts;
    int rc;

    *id = name_map_get(&s->ids, path);
    if (*id >= 0 || *id == ID_SKIP)
        return *id == ID_SKIP;
    sqlite3_bind_text(s->get_path, 1, path, -1, SQLITE_STATIC);
    rc = sqlite3_step(s->get_path);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s->get_path, 0);
    sqlite3_reset(s->get_path);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sql_errno(rc);
    if (rc == SQLITE_DONE) {
        if (pdh_path_split(path, &parts) < 0) {
            log_debug("storage: extra PDH path %s does not cut into parts; not stored", path);
            return name_map_put(&s->ids, path, ID_SKIP) < 0 ? -ENOMEM : 1;
        }
        sqlite3_bind_text(s->add_path, 1, path, -1, SQLITE_STATIC);
        sqlite3_bind_text(s->add_path, 2, parts.object, -1, SQLITE_STATIC);
        if (parts.instance[0])
            sqlite3_bind_text(s->add_path, 3, parts.instance, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s->add_path, 3);
        sqlite3_bind_text(s->add_path, 4, parts.counter, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s->add_path, 5, tick_id);
        rc = step_done(s->add_path);
        if (rc < 0)
            return rc;
        *id = sqlite3_last_insert_rowid(s->conn);
    }
    return name_map_put(&s->ids, path, *id);
}

int pdh_extra_store_write(struct pdh_extra_store *s, int64_t tick_id, const struct tick *t)
{
    int prc = t->n_extras ? store_prepare(s) : 0;

    if (prc < 0)
        return prc;
    for (size_t i = 0; i < t->n_extras; i++) {
        const struct tick_extra *x = &t->extras[i];
        int64_t id;
        int rc = path_id(s, x->path, tick_id, &id);

        if (rc < 0)
            return rc;
        if (rc > 0)
            continue;
        sqlite3_bind_int64(s->ins_value, 1, tick_id);
        sqlite3_bind_int64(s->ins_value, 2, id);
        if (x->valid)
            sqlite3_bind_double(s->ins_value, 3, x->value);
        else
            sqlite3_bind_null(s->ins_value, 3);
        rc = step_done(s->ins_value);
        if (rc < 0)
            return rc;
    }
    return 0;
}
