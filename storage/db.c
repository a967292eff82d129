/*
 * db.c - the SQLite counter log: open and migrate, write ticks, roll up and prune; see db.h.
 */
#include "storage/db.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "storage/chunk.h"
#include "storage/chunk_sql.h"
#include "storage/name_map.h"
#include "storage/pdh_extra.h"
#include "storage/rollup_acc.h"
#include "storage/schema.h"
#include "storage/span_cache.h"
#include "storage/sql_errno.h"
#include "storage/stmt_cache.h"
#include "storage/walbuf.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MINUTE_MS        60000LL
#define HOUR_MS          3600000LL
#define DAY_MS           86400000LL
#define MAINT_TICK_BATCH 3600 /* ticks rolled up or pruned per db_maintain step */
/* Rows per multi-row INSERT of an object's values: one statement step per this many rows, which
 * measured cheaper than a step per row at thousands of instances (the rest go one by one). */
#define INS_ROWS_PER_STMT 32
/* Roll-up buckets per transaction written ahead of a tick (db_rollup_ahead): at 1 000 disks a
 * minute's 2 300 took one transaction of 10-25 ms; a slice of 512 takes a few. */
#define ROLLUP_SLICE_ROWS 512
/* A short busy wait: the writer retries on its own schedule, it must not hang on a lock. */
#define DB_BUSY_TIMEOUT_MS 200
/* The most the raw rows not chunked yet may take in the writer's memory (span_cache.h): at 256
 * CPUs, 1 000 disks and 1 000 NICs, with chunks taken a minute after their span, about 360 ticks
 * of 2 300 instances are held (bench/README.md has the bytes). Beyond, the cache starts over and
 * chunk steps read back what it lost. */
#define SPAN_CACHE_BYTES (32u << 20)

/*
 * The instance ids of one object's rows in the last tick written, by row index: a collector lists
 * the same instances in the same order tick after tick, so row r's name is compared with the one
 * remembered for row r (names kept side by side, read in order) and the hash map is only asked on a
 * mismatch. Row r's entry is valid when r < n.
 */
struct inst_row_cache {
    char (*name)[COUNTER_NAME_MAX];
    int64_t *id;
    size_t n, cap;
};

/* A place in a running roll-up's buckets: row `row` of object `obj` (both 0: the first). */
struct bucket_pos {
    int obj;
    size_t row;
};

struct db {
    sqlite3 *conn;
    char *path;
    sqlite3_stmt *begin, *commit;  /* prepared once: a tick must not pay for parsing */
    void (*tick_pause)(void *arg); /* db_set_tick_pause */
    void *tick_pause_arg;
    struct stmt_cache sc;       /* maintenance's statements: meta, query_int (stmt_cache.h) */
    int64_t mem_schema_version; /* the schema's version when mem_schema_bytes was measured */
    int64_t mem_schema_bytes;
    sqlite3_stmt *ins_tick;
    sqlite3_stmt *ins_row[OBJ_COUNT];
    sqlite3_stmt *ins_rows[OBJ_COUNT]; /* INS_ROWS_PER_STMT rows at once */
    sqlite3_stmt *get_inst;
    sqlite3_stmt *add_inst;
    sqlite3_stmt *rollup_1m[SCHEMA_NVALUE_TABLES];
    sqlite3_stmt *rollup_1h[SCHEMA_NVALUE_TABLES];
    sqlite3_stmt *ins_1m[OBJ_COUNT]; /* one finished bucket of the running roll-ups */
    sqlite3_stmt *ins_1h[OBJ_COUNT];
    struct name_map inst[OBJ_COUNT];
    struct inst_row_cache rows[OBJ_COUNT]; /* the ids of the last tick's rows, by row index */
    struct pdh_extra_store *pdh;           /* the extra PDH series' writes */
    struct db_size size;                   /* from the last maintain_size */
    int64_t wal_bytes;   /* the WAL's budget (wal_budget), set by the last maintain_size */
    int64_t wal_frames;  /* frames in the WAL after the last commit (wal_hook) */
    int64_t ckpt_frames; /* a checkpoint is due at this many frames (half the budget) */
    int maintaining;     /* inside db_maintain: wal_hook leaves a due checkpoint to the caller */
    int64_t page_bytes;  /* the file's page size: 2048 when new, 4096 for older files */
    /* Bit i set when value table i's tables exist (schema_value_tables): made when the object's
     * first instance comes, so only those of the objects that have had one are read. */
    uint64_t tables;
    /*
     * The running minute roll-up (rollup_acc.h). When acc_on, acc holds exactly the ticks
     * [acc_first, acc_last], all of minute acc_minute, and acc_first is the first tick of that
     * minute, a minute no earlier tick had; the batch roll-up (maintain_minutes) stops before
     * acc_first. Anything else (a tick out of order, a failed transaction) drops it, and the batch
     * roll-up takes those ticks: the buckets come out the same either way.
     */
    int incremental; /* running roll-ups on: SQLite's avg() sums as rollup_acc does */
    int acc_on;
    int64_t acc_minute, acc_first, acc_last;
    int64_t prev_id;    /* the last tick written on this connection; -1: none */
    int64_t max_minute; /* the newest minute of any tick in the file; -1: none */
    struct rollup_obj acc[OBJ_COUNT];
    /* The running hour roll-up: when hacc_on, hacc holds the minute buckets the running minute
     * roll-up wrote for hour hacc_hour, from its first minute on, and every tick of those minutes
     * went through it; the batch hour roll-up (maintain_hours) stops before hacc_hour. */
    int hacc_on;
    int64_t hacc_hour;
    struct rollup_obj hacc[OBJ_COUNT];
    int hour_later; /* in db_rollup_ahead: a complete running hour waits for its next call */
    /* How far db_rollup_ahead has written the running minute's (hour's) buckets in slices ahead
     * of its last one: meta's "rollup_1m_part_ms" ("rollup_1h_part_ms") names the bucket until the
     * last slice's transaction, so a roll-up dropped half-written is taken back (part_undo). */
    struct bucket_pos acc_pos, hacc_pos;
    size_t slice_rows; /* buckets per slice: ROLLUP_SLICE_ROWS, or a test's */
    /* The raw rows not chunked yet, as written (span_cache.h); NULL: read back by every chunk
     * step. Kept only while chunking is on (`chunking`, from the last db_maintain's retention). */
    struct span_cache *spans;
    int chunking;
    /* PRAGMA data_version when the cache was last known to match the tables: another connection's
     * commit (a shell's DELETE or UPDATE of raw rows, the run manager's runs table) changes it. */
    int64_t data_version;
    int64_t slices_cached, slices_read; /* since the open, for db_mem_get */
    struct db_work work[DB_WORK_KINDS]; /* since the open, for db_work_get */
    int maint_next;                     /* db_maintain_split: the round's next step */
    int maint_more;                     /* the round's steps so far had work left */
};

static void work_add(struct db *d, int kind, int64_t cpu0)
{
    int64_t ns = clock_thread_cpu_ns() - cpu0;

    d->work[kind].n++;
    d->work[kind].cpu_ns += ns;
    if (ns > d->work[kind].max_ns)
        d->work[kind].max_ns = ns;
}

void db_work_get(struct db *d, struct db_work out[DB_WORK_KINDS])
{
    memcpy(out, d->work, sizeof(d->work));
}

const char *db_work_name(int kind)
{
    static const char *const names[DB_WORK_KINDS] = {
        "ticks", "ahead", "minutes", "hours", "chunks", "merge", "retention", "size", "checkpoint"};

    return kind >= 0 && kind < DB_WORK_KINDS ? names[kind] : "?";
}

/*
 * Migrations from older schema versions: entry i upgrades version i+1 to i+2 and runs in the same
 * transaction as the version bump. tests/unit/test_db.c opens a version-1 database from
 * tests/fixtures/db/ to prove the path.
 *
 * 1 -> 2: the runs table gets the settle timeout, the peers (a JSON array of URLs) and the
 * client's own /proc/self/io deltas (docs/schema.md).
 * 2 -> 3: the Process object (obj_process and its roll-ups), created like every object table by
 * schema_tables() in the same transaction; nothing existing changes.
 * 3 -> 4: the extra PDH series (pdh_paths, pdh_values and its roll-ups), created the same way;
 * the views gain their rows when they are rebuilt at the same time.
 * 4 -> 5: the compressed tier, obj_*_chunks, created the same way, and the views obj_*_all that
 * counter_values now reads; the raw rows stay where they are until the writer chunks them; and the
 * series table (one path per instance and counter), created the same way and filled from
 * instances by schema_series() at every open, from which the views take `path`.
 * 5 -> 6: the compressed tier of the ticks, ticks_chunks, created at every open by
 * schema_ticks_tables(), and the view ticks_all (the plain ticks and the chunked ones) that
 * every reader of old ticks reads; the ticks stay plain until the writer chunks them.
 * 6 -> 7: chunk version 4 (storage/chunk.h: Exp-Golomb codes, the presence as runs), which the
 * writer uses from then on; no table changes, and chunks already written stay as they are (every
 * version is read). The bump keeps a perflogd of schema 6, which cannot read those chunks, off the
 * file with a clear message instead of failing on them one by one.
 * 7 -> 8: the chunk steps keep the raw rows of the span they have in hand and read them, rather
 * than deleting each step's slice and reading its chunks (chunk_sql.h CHUNK_EDGE_SQL); the views
 * read each side of the edge. A file whose steps had a span in hand gets the rows they deleted
 * back from their chunks (restore_span_in_hand), and the steps take that span again. The bump
 * keeps a perflogd of schema 7, whose views would read the rows below the edge twice, off the
 * file.
 */
static const char *const migrations[DB_SCHEMA_VERSION - 1] = {
    "ALTER TABLE runs ADD COLUMN settle_timeout_s INTEGER;\n"
    "ALTER TABLE runs ADD COLUMN peers TEXT;\n"
    "ALTER TABLE runs ADD COLUMN io_read_bytes INTEGER;\n"
    "ALTER TABLE runs ADD COLUMN io_write_bytes INTEGER;\n"
    "ALTER TABLE runs ADD COLUMN storage_read_bytes INTEGER;\n"
    "ALTER TABLE runs ADD COLUMN storage_write_bytes INTEGER;\n",
    "SELECT 1;\n",
    "SELECT 1;\n",
    "SELECT 1;\n",
    "SELECT 1;\n",
    "SELECT 1;\n",
    "SELECT 1;\n",
};

static int set_wal_limits(struct db *d, int64_t max_bytes);

static int exec(struct db *d, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(d->conn, sql, NULL, NULL, &msg);

    if (rc != SQLITE_OK) {
        log_debug("sqlite: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return sql_errno(rc);
    }
    return 0;
}

static void rollback(struct db *d)
{
    if (!sqlite3_get_autocommit(d->conn))
        sqlite3_exec(d->conn, "ROLLBACK", NULL, NULL, NULL);
    /* What the transaction wrote or chunked is gone from the tables: from the cache too. */
    span_cache_reset(d->spans);
}

static int prepare(struct db *d, const char *sql, sqlite3_stmt **out)
{
    int rc = sqlite3_prepare_v3(d->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    return rc == SQLITE_OK ? 0 : sql_errno(rc);
}

/* A statement of maintenance, kept in the connection's cache (stmt_cache.h): the caller resets it
 * (sqlite3_reset) when done and never finalizes it. A caller may hold a few at once: the cache
 * only finalizes its least recently used statement, far more slots away. For the small statements
 * maintenance runs at every step. */
static int prepare_kept(struct db *d, const char *sql, sqlite3_stmt **out)
{
    int rc;

    *out = stmt_cache_get(&d->sc, sql, &rc);
    return *out ? 0 : sql_errno(rc);
}

/* A statement for one step of maintenance, not kept (the caller finalizes it): the chunk steps'
 * statements, one per object table and each run once a span on a small machine, would hold about
 * 150 KB of the writer's memory to save a parse every few minutes. */
static int prepare_once(struct db *d, const char *sql, sqlite3_stmt **out)
{
    int rc = sqlite3_prepare_v2(d->conn, sql, -1, out, NULL);
    return rc == SQLITE_OK ? 0 : sql_errno(rc);
}

/* Run a kept statement with ?1 = a and ?2 = b (when it has them) to its end. */
static int exec_ab(struct db *d, const char *sql, int64_t a, int64_t b)
{
    sqlite3_stmt *st;
    int rc = prepare_kept(d, sql, &st);

    if (rc < 0)
        return rc;
    if (sqlite3_bind_parameter_count(st) >= 1)
        sqlite3_bind_int64(st, 1, a);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int64(st, 2, b);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sql_errno(rc);
}

static int64_t meta_get_int(struct db *d, const char *key, int64_t dflt)
{
    int rc;
    sqlite3_stmt *st = stmt_cache_get(&d->sc, "SELECT value FROM meta WHERE key = ?", &rc);
    int64_t v = dflt;

    if (!st)
        return dflt;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
        v = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return v;
}

static int meta_set(struct db *d, const char *key, int64_t ival, const char *sval)
{
    int rc;
    sqlite3_stmt *st =
        stmt_cache_get(&d->sc, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", &rc);

    if (!st)
        return sql_errno(rc);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sval)
        sqlite3_bind_text(st, 2, sval, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, 2, ival);
    rc = sqlite3_step(st);
    /* sqlite3_reset returns the step's error again: the step's code is the one */
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

static int64_t query_int(struct db *d, const char *sql, int64_t a, int64_t b, int64_t dflt)
{
    int rc;
    sqlite3_stmt *st = stmt_cache_get(&d->sc, sql, &rc);
    int64_t v = dflt;

    if (!st)
        return dflt;
    if (sqlite3_bind_parameter_count(st) >= 1)
        sqlite3_bind_int64(st, 1, a);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int64(st, 2, b);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return v;
}

/* Whether value table i's tables exist. */
static int table_on(const struct db *d, int i)
{
    return (int)((d->tables >> i) & 1);
}

/* Bit i set for each value table i whose raw table is in the file. */
static uint64_t tables_in_file(struct db *d)
{
    sqlite3_stmt *st;
    uint64_t m = 0;

    if (sqlite3_prepare_v2(d->conn, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, schema_value_table(i), -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            m |= UINT64_C(1) << i;
    }
    sqlite3_finalize(st);
    return m;
}

/* min or max (`agg`) of bucket_ms over roll-up tier `sfx` of every value table, or dflt when they
 * are all empty: no single object is present on every machine (wine has no Memory object). */
static int64_t tier_edge(struct db *d, const char *agg, const char *sfx, int64_t dflt)
{
    struct sbuf b = {0};
    int64_t v = dflt;
    int first = 1;

    sbuf_printf(&b, "SELECT %s(x) FROM (", agg);
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        if (!table_on(d, i))
            continue;
        sbuf_printf(&b, "%sSELECT %s(bucket_ms) AS x FROM %s_%s", first ? "" : " UNION ALL ", agg,
                    schema_value_table(i), sfx);
        first = 0;
    }
    sbuf_printf(&b, ")");
    if (!first && sbuf_ok(&b))
        v = query_int(d, b.s, 0, 0, dflt);
    sbuf_free(&b);
    return v;
}

/* 1 when object table o has chunks, so that its view must read them. */
static int has_chunks(struct db *d, int o)
{
    char sql[128];

    if (!table_on(d, o))
        return 0;
    snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %s_chunks)", counter_objects[o].table);
    return query_int(d, sql, 0, 0, 0) != 0;
}

/* 1 when some ticks are chunked, so that ticks_all must read ticks_chunks. */
static int has_ticks_chunks(struct db *d)
{
    return query_int(d, "SELECT EXISTS (SELECT 1 FROM ticks_chunks)", 0, 0, 0) != 0;
}

/* The newest t_ms of any tick, plain or chunked, or dflt when there is none. */
static int64_t newest_t_ms(struct db *d, int64_t dflt)
{
    return query_int(d,
                     "SELECT max(x) FROM (SELECT max(t_ms) AS x FROM ticks UNION ALL "
                     "SELECT max(max_t_ms) FROM ticks_chunks)",
                     0, 0, dflt);
}

/* Bit o set for each object table o that has chunks: the views must read them. */
static uint64_t chunked_mask(struct db *d)
{
    uint64_t m = 0;

    for (int o = 0; o < OBJ_COUNT; o++)
        if (has_chunks(d, o))
            m |= UINT64_C(1) << o;
    return m;
}

/* Add column `col` of `type` to `table` unless it has it already. */
static int add_column(struct db *d, sqlite3_stmt *has, const char *table, const char *col,
                      const char *type)
{
    char sql[256];
    int rc;

    sqlite3_reset(has);
    sqlite3_bind_text(has, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(has, 2, col, -1, SQLITE_STATIC);
    rc = sqlite3_step(has);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return sql_errno(rc);
    if (snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", table, col, type) >=
        (int)sizeof(sql))
        return -ENAMETOOLONG;
    log_info("%s: adding column %s.%s", d->path, table, col);
    return exec(d, sql);
}

/*
 * Fields and counters are only ever appended to an object (counters.c), so a database written by
 * an older perflogd has every table, with a prefix of the columns: add the rest here, at every
 * open, in the migration's transaction. This needs no version step, so objects that gain fields
 * on different branches merge without renumbering, and an older perflogd still reads the file
 * (it names its columns, never "*").
 */
static int add_missing_columns(struct db *d)
{
    static const char *const tiers[] = {"1m", "1h"}, *const aggs[] = {"min", "avg", "max"};
    sqlite3_stmt *has;
    char table[128], col[64];
    int rc = 0;

    if (sqlite3_prepare_v2(d->conn, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &has,
                           NULL) != SQLITE_OK)
        return -EIO;
    for (int o = 0; rc == 0 && o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        if (!table_on(d, o))
            continue;
        for (size_t f = 0; rc == 0 && f < od->nfields; f++)
            rc = add_column(d, has, od->table, od->fields[f].column, "INTEGER");
        snprintf(table, sizeof(table), "%s_chunks", od->table);
        for (size_t f = 0; rc == 0 && f < od->nfields; f++)
            rc = add_column(d, has, table, od->fields[f].column, "BLOB");
        for (size_t t = 0; rc == 0 && t < 2; t++) {
            snprintf(table, sizeof(table), "%s_%s", od->table, tiers[t]);
            for (size_t k = 0; rc == 0 && k < od->ncounters; k++)
                for (size_t a = 0; rc == 0 && a < 3; a++) {
                    snprintf(col, sizeof(col), "c%zu_%s", k, aggs[a]);
                    rc = add_column(d, has, table, col, "REAL");
                }
            /* the operations of a per-operation counter's average (docs/schema.md) */
            for (size_t k = 0; rc == 0 && k < od->ncounters; k++)
                if (od->counters[k].flags & CF_PER_OP) {
                    snprintf(col, sizeof(col), "c%zu_ops", k);
                    rc = add_column(d, has, table, col, "INTEGER");
                }
        }
    }
    sqlite3_finalize(has);
    return rc;
}

/*
 * Schema 7 -> 8 (see migrations): the chunk steps of a file of version 7 or older deleted the raw
 * rows of each slice of the span in hand as they chunked it. Put those rows back from their chunks
 * (every chunk from the span's first tick on is one of them: the chunks of done spans end below
 * it), delete the chunks, and let the steps take the span again from its first object. Inside
 * db_migrate's transaction.
 */
static int restore_span_in_hand(struct db *d)
{
    int64_t lo = meta_get_int(d, "chunk_tick", 0);
    struct sbuf b = {0};
    char where[96];
    int rc;

    if (meta_get_int(d, "chunk_obj", 0) == 0 &&
        meta_get_int(d, "chunk_inst", INT64_MIN) == INT64_MIN)
        return 0;
    snprintf(where, sizeof(where), " WHERE c.first_tick >= %lld", (long long)lo);
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        if (!table_on(d, o) || !has_chunks(d, o))
            continue;
        sbuf_printf(&b, "INSERT OR IGNORE INTO %s (tick, inst", od->table);
        for (size_t f = 0; f < od->nfields; f++)
            sbuf_printf(&b, ", %s", od->fields[f].column);
        sbuf_printf(&b, ") ");
        schema_chunk_select(&b, od, where);
        sbuf_printf(&b, ";\nDELETE FROM %s_chunks WHERE first_tick >= %lld;\n", od->table,
                    (long long)lo);
    }
    if (!sbuf_ok(&b))
        return -ENOMEM;
    rc = b.s ? exec(d, b.s) : 0;
    sbuf_free(&b);
    if (rc == 0)
        rc = meta_set(d, "chunk_obj", 0, NULL);
    if (rc == 0)
        rc = meta_set(d, "chunk_inst", INT64_MIN, NULL);
    if (rc == 0)
        log_info("%s: the chunk steps' span from tick %lld is read raw again and taken anew",
                 d->path, (long long)lo);
    return rc;
}

/* Bring the schema to DB_SCHEMA_VERSION and refresh what is derived from the counter table. */
static int db_migrate(struct db *d, const char *host, char *err, size_t errlen)
{
    struct sbuf b = {0};
    int64_t version;
    int rc;

    version = query_int(d, "PRAGMA user_version", 0, 0, -1);
    if (version < 0) {
        snprintf(err, errlen, "%s: not a readable SQLite database: %s", d->path,
                 sqlite3_errmsg(d->conn));
        return -EIO;
    }
    if (version > DB_SCHEMA_VERSION) {
        snprintf(err, errlen,
                 "%s: schema version %lld is newer than this perflogd understands (%d); use a "
                 "newer perflogd",
                 d->path, (long long)version, DB_SCHEMA_VERSION);
        return -EPROTO;
    }
    rc = exec(d, "BEGIN IMMEDIATE");
    if (rc < 0)
        goto fail;
    for (int64_t v = version ? version : DB_SCHEMA_VERSION; v < DB_SCHEMA_VERSION; v++) {
        log_info("%s: upgrading schema from version %lld to %lld", d->path, (long long)v,
                 (long long)v + 1);
        rc = exec(d, migrations[v - 1]);
        if (rc < 0)
            goto fail;
    }
    schema_tables(&b);
    schema_ticks_tables(&b);
    /* The value tables of the objects the file has (an older version's file gains the tables
     * its version lacked for them); the others come with their first instance. */
    d->tables = tables_in_file(d);
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
        if (table_on(d, i))
            schema_value_tables(&b, i);
    if (!sbuf_ok(&b)) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = exec(d, b.s);
    if (rc < 0 || (rc = add_missing_columns(d)) < 0)
        goto fail;
    if (version > 0 && version < 8 && (rc = restore_span_in_hand(d)) < 0)
        goto fail;
    sbuf_free(&b);
    schema_counters_rows(&b);
    schema_series(&b);
    rc = exec(d, b.s ? b.s : "");
    if (rc < 0)
        goto fail;
    sbuf_free(&b);
    for (int o = 0; o < OBJ_COUNT; o++)
        if (table_on(d, o))
            schema_all_view(&b, o, has_chunks(d, o));
    schema_ticks_view(&b, has_ticks_chunks(d));
    if (schema_views(&b, chunked_mask(d), d->tables) < 0 || !sbuf_ok(&b)) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = exec(d, b.s);
    if (rc < 0)
        goto fail;
    sbuf_free(&b);
    sbuf_printf(&b,
                "PRAGMA user_version = %d;\n"
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('created_utc', "
                "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', 'now'));",
                DB_SCHEMA_VERSION);
    if (!sbuf_ok(&b)) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = exec(d, b.s);
    if (rc < 0)
        goto fail;
    rc = meta_set(d, "host", 0, host);
    if (rc < 0)
        goto fail;
    rc = exec(d, "COMMIT");
    if (rc < 0)
        goto fail;
    sbuf_free(&b);
    return 0;
fail:
    snprintf(err, errlen, "%s: cannot create or upgrade the schema: %s", d->path,
             sqlite3_errmsg(d->conn));
    rollback(d);
    sbuf_free(&b);
    return rc < 0 ? rc : -EIO;
}

/* Prepare the SQL built in `b` (gen_rc: the builder's own result) and empty `b`. */
static int prepare_built(struct db *d, struct sbuf *b, int gen_rc, sqlite3_stmt **out)
{
    int rc = (gen_rc < 0 || !sbuf_ok(b)) ? -ENOMEM : prepare(d, b->s, out);

    sbuf_free(b);
    return rc;
}

/*
 * The roll-up statements, prepared on first use rather than at open: each holds the expressions
 * of every counter of its table (about 1.9 MiB in all on the writer's connection), and with the
 * running roll-ups (d->incremental) the batch ones serve only the paths that are rare once
 * running: the ticks before the first whole minute after a start, ticks out of order, a failed
 * transaction. Returns NULL with *rc set when it cannot be prepared.
 */
enum rollup_stmt { RS_BATCH_1M, RS_BATCH_1H, RS_INS_1M, RS_INS_1H };

static sqlite3_stmt **rollup_slot(struct db *d, enum rollup_stmt k, int i)
{
    return k == RS_BATCH_1M   ? &d->rollup_1m[i]
           : k == RS_BATCH_1H ? &d->rollup_1h[i]
           : k == RS_INS_1M   ? &d->ins_1m[i]
                              : &d->ins_1h[i];
}

static sqlite3_stmt *rollup_stmt(struct db *d, enum rollup_stmt k, int i, int *rc)
{
    sqlite3_stmt **slot = rollup_slot(d, k, i);
    struct sbuf b = {0};
    int gen;

    if (*slot)
        return *slot;
    gen = k == RS_BATCH_1M   ? schema_rollup_minute(&b, i)
          : k == RS_BATCH_1H ? schema_rollup_hour(&b, i)
                             : schema_rollup_values(&b, i, k == RS_INS_1M ? "1m" : "1h");
    *rc = prepare_built(d, &b, gen, slot);
    return *rc < 0 ? NULL : *slot;
}

/* Finalize what rollup_stmt prepared for (k, i); the next use prepares it again. */
static void rollup_stmt_drop(struct db *d, enum rollup_stmt k, int i)
{
    sqlite3_stmt **slot = rollup_slot(d, k, i);

    sqlite3_finalize(*slot);
    *slot = NULL;
}

/*
 * The INSERT of `nrows` (1 or INS_ROWS_PER_STMT) rows of object o, prepared on first use for
 * INS_ROWS_PER_STMT: only an object with that many instances uses it (never a single-instance
 * one), and it holds about 40 KB. Returns NULL with *rc set when it cannot be prepared.
 */
static sqlite3_stmt *ins_stmt(struct db *d, int o, size_t nrows, int *rc)
{
    const struct object_def *od = &counter_objects[o];
    sqlite3_stmt **slot = nrows > 1 ? &d->ins_rows[o] : &d->ins_row[o];
    struct sbuf b = {0};

    if (*slot)
        return *slot;
    sbuf_printf(&b, "INSERT INTO %s VALUES ", od->table);
    for (size_t r = 0; r < nrows; r++) {
        sbuf_printf(&b, "%s(?, ?", r ? ", " : "");
        for (size_t f = 0; f < od->nfields; f++)
            sbuf_printf(&b, ", ?");
        sbuf_printf(&b, ")");
    }
    *rc = prepare_built(d, &b, 0, slot);
    return *rc < 0 ? NULL : *slot;
}

static int prepare_all(struct db *d)
{
    int rc;

    rc = prepare(d, "INSERT INTO ticks (t_ms, interval_ms, missed) VALUES (?, ?, ?)", &d->ins_tick);
    if (rc == 0)
        rc = prepare(d, "BEGIN IMMEDIATE", &d->begin);
    if (rc == 0)
        rc = prepare(d, "COMMIT", &d->commit);
    if (rc < 0)
        return rc;
    rc = prepare(d, "SELECT id FROM instances WHERE object = ? AND name = ?", &d->get_inst);
    if (rc < 0)
        return rc;
    rc = prepare(d, "INSERT INTO instances (object, name, first_tick) VALUES (?, ?, ?)",
                 &d->add_inst);
    if (rc < 0)
        return rc;
    for (int o = 0; o < OBJ_COUNT; o++)
        if (table_on(d, o) && !ins_stmt(d, o, 1, &rc))
            return rc;
    return pdh_extra_store_new(d->conn, &d->pdh);
}

/* Process-wide SQLite settings, before SQLite initializes: no memory statistics, which would
 * otherwise take a global mutex on every allocation. */
static void sqlite_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (walbuf_register() != SQLITE_OK)
        log_warnx(
            "sqlite: cannot register the WAL-gathering VFS; WAL frames are written one by one");
}

/*
 * After each commit: the WAL's size in frames, for db_checkpoint_due, and SQLite's own
 * auto-checkpoint (a PASSIVE one, inside the commit) at ckpt_frames, as sqlite3_wal_autocheckpoint
 * would. The writer checkpoints at three quarters of that between its work (db_checkpoint_due),
 * so a commit seldom carries one; a caller that never does is bounded all the same.
 *
 * A maintenance step's commit leaves it to the caller up to half as many frames again (a quarter
 * of the budget): at 1 000 disks one chunk step often took the WAL from under three quarters of
 * ckpt_frames to past it, and the checkpoint inside its commit made it the writer's longest burst
 * (perf: 13.5 % of the writer's time in checkpoints inside maintenance commits); the writer
 * checkpoints right after the step, between rests (daemon/writer.c run_maintenance). So does the
 * commit of the roll-up buckets written ahead of a tick (db_rollup_ahead; the writer checkpoints
 * before the tick).
 */
static int wal_hook(void *arg, sqlite3 *conn, const char *name, int frames)
{
    struct db *d = arg;

    d->wal_frames = frames;
    if (frames >= d->ckpt_frames &&
        (!d->maintaining || frames >= d->ckpt_frames + d->ckpt_frames / 2)) {
        int log = 0, done = 0;

        if (sqlite3_wal_checkpoint_v2(conn, name, SQLITE_CHECKPOINT_PASSIVE, &log, &done) ==
                SQLITE_OK &&
            done >= log)
            d->wal_frames = 0;
    }
    return SQLITE_OK;
}

int db_open(const char *path, const char *host, struct db **out, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    struct db *d = calloc(1, sizeof(*d));
    int rc;

    pthread_once(&once, sqlite_global_init);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    /* One thread at a time uses a struct db, so the connection needs no mutex of its own. Its
     * commits go through walbuf (storage/walbuf.h): a commit's WAL frames in a few writes, not
     * two a page; the default VFS if walbuf could not be registered. */
    rc = sqlite3_open_v2(path, &d->conn,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                         sqlite3_vfs_find(WALBUF_VFS_NAME) ? WALBUF_VFS_NAME : NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot open database: %s", path,
                 d->conn ? sqlite3_errmsg(d->conn) : sqlite3_errstr(rc));
        rc = sql_errno(rc);
        goto fail;
    }
    sqlite3_extended_result_codes(d->conn, 1);
    sqlite3_busy_timeout(d->conn, DB_BUSY_TIMEOUT_MS);
    stmt_cache_init(&d->sc, d->conn);
    d->mem_schema_version = -1;
    /* chunk_encode/chunk_points, the same on the daemon's connections as in the shell's .load */
    rc = chunk_sql_register(d->conn);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot register the chunk functions: %s", path,
                 sqlite3_errstr(rc));
        rc = sql_errno(rc);
        goto fail;
    }
    /* page_size only takes effect on a new file. 2048 rather than 4096: every table and index
     * holds at least one page, the chunks' rows and the roll-ups' rows leave less of a page
     * unused, and a commit writes smaller pages to the WAL (bench/README.md has the figures). */
    rc = exec(d, "PRAGMA page_size = 2048");
    /* Only a new, empty file takes this: it lets the size cap give freed pages back. */
    if (rc == 0)
        rc = exec(d, "PRAGMA auto_vacuum = INCREMENTAL");
    if (rc == 0)
        rc = exec(d, "PRAGMA journal_mode = WAL");
    if (rc == 0)
        rc = exec(d, "PRAGMA synchronous = NORMAL");
    d->page_bytes = query_int(d, "PRAGMA page_size", 0, 0, 4096);
    d->ckpt_frames = (4LL << 20) / 2 / d->page_bytes; /* WAL_MAX_BYTES: set_wal_limits sets it */
    sqlite3_wal_hook(d->conn, wal_hook, d);
    /* The WAL's bounds without a cap until the first db_maintain says what the cap is. */
    if (rc == 0)
        rc = set_wal_limits(d, 0);
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot open database: %s", path, sqlite3_errmsg(d->conn));
        goto fail;
    }
    rc = db_migrate(d, host, err, errlen);
    if (rc < 0)
        goto fail;
    /* SQLite 3.43 made avg() a compensated sum, which rollup_acc does not mirror: there, the
     * batch roll-up does every minute. */
    d->incremental = sqlite3_libversion_number() < 3043000;
    d->prev_id = -1;
    d->slice_rows = ROLLUP_SLICE_ROWS;
    d->max_minute = newest_t_ms(d, -1);
    if (d->max_minute >= 0)
        d->max_minute = d->max_minute / MINUTE_MS * MINUTE_MS;
    rc = prepare_all(d);
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot prepare statements: %s", path, sqlite3_errmsg(d->conn));
        goto fail;
    }
    /* Without it (out of memory) every chunk step reads its rows back, as it does for the ticks
     * written before this open. Chunking is on by default; db_maintain says otherwise. */
    d->spans = span_cache_new(OBJ_COUNT, SPAN_CACHE_BYTES);
    d->chunking = 1;
    d->data_version = query_int(d, "PRAGMA data_version", 0, 0, -1);
    *out = d;
    return 0;
fail:
    db_close(d);
    return rc < 0 ? rc : -EIO;
}

void db_close(struct db *d)
{
    if (!d)
        return;
    span_cache_free(d->spans);
    stmt_cache_clear(&d->sc);
    sqlite3_finalize(d->ins_tick);
    sqlite3_finalize(d->begin);
    sqlite3_finalize(d->commit);
    sqlite3_finalize(d->get_inst);
    sqlite3_finalize(d->add_inst);
    for (int o = 0; o < OBJ_COUNT; o++) {
        sqlite3_finalize(d->ins_row[o]);
        sqlite3_finalize(d->ins_rows[o]);
        sqlite3_finalize(d->ins_1m[o]);
        sqlite3_finalize(d->ins_1h[o]);
        rollup_obj_free(&d->acc[o]);
        rollup_obj_free(&d->hacc[o]);
        name_map_clear(&d->inst[o]);
        free(d->rows[o].name);
        free(d->rows[o].id);
    }
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        sqlite3_finalize(d->rollup_1m[i]);
        sqlite3_finalize(d->rollup_1h[i]);
    }
    pdh_extra_store_free(d->pdh);
    if (d->conn)
        sqlite3_close_v2(d->conn);
    free(d->path);
    free(d);
}

static int64_t db_status(struct db *d, int op)
{
    int cur = 0, hi = 0;

    return sqlite3_db_status(d->conn, op, &cur, &hi, 0) == SQLITE_OK ? cur : -1;
}

void db_mem_get(struct db *d, struct db_mem *out)
{
    /* SQLite measures the parsed schema by walking all of it (3 % of the writer's time here at
     * every maintenance): measured again only when the schema has changed. */
    int64_t version = query_int(d, "PRAGMA schema_version", 0, 0, -1);
    struct walbuf_stats wal;

    if (version < 0 || version != d->mem_schema_version) {
        d->mem_schema_bytes = db_status(d, SQLITE_DBSTATUS_SCHEMA_USED);
        d->mem_schema_version = version;
    }
    out->stmt_bytes = db_status(d, SQLITE_DBSTATUS_STMT_USED);
    out->schema_bytes = d->mem_schema_bytes;
    out->cache_bytes = db_status(d, SQLITE_DBSTATUS_CACHE_USED);
    out->stmts = 0;
    for (sqlite3_stmt *st = sqlite3_next_stmt(d->conn, NULL); st;
         st = sqlite3_next_stmt(d->conn, st))
        out->stmts++;
    out->kept_stmts = stmt_cache_count(&d->sc);
    out->slices_cached = d->slices_cached;
    out->slices_read = d->slices_read;
    out->span_cache_bytes = (int64_t)span_cache_bytes(d->spans);
    walbuf_get_stats(d->conn, &wal);
    out->wal_writes_in = (int64_t)wal.writes_in;
    out->wal_writes_out = (int64_t)wal.writes_out;
    out->wal_bytes = (int64_t)wal.bytes;
}

const char *db_errmsg(struct db *d)
{
    return sqlite3_errmsg(d->conn);
}

const char *db_path(struct db *d)
{
    return d->path;
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

/* The id of instance `name` of object `o`, created on first sight. */
static int instance_id_lookup(struct db *d, int o, const char *name, int64_t tick_id, int64_t *id)
{
    const char *obj = counter_objects[o].name;
    int rc;

    *id = name_map_get(&d->inst[o], name);
    if (*id >= 0)
        return 0;
    sqlite3_bind_text(d->get_inst, 1, obj, -1, SQLITE_STATIC);
    sqlite3_bind_text(d->get_inst, 2, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(d->get_inst);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(d->get_inst, 0);
    sqlite3_reset(d->get_inst);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sql_errno(rc);
    if (rc == SQLITE_DONE) {
        sqlite3_bind_text(d->add_inst, 1, obj, -1, SQLITE_STATIC);
        sqlite3_bind_text(d->add_inst, 2, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(d->add_inst, 3, tick_id);
        rc = step_done(d->add_inst);
        if (rc < 0)
            return rc;
        *id = sqlite3_last_insert_rowid(d->conn);
    }
    return name_map_put(&d->inst[o], name, *id);
}

/* The id of instance `name`, row `r` of object `o` in tick `tick_id`: from the row cache when the
 * last tick's row r had the same name, else looked up (and remembered for row r). */
static int instance_id(struct db *d, int o, size_t r, const char *name, int64_t tick_id,
                       int64_t *id)
{
    struct inst_row_cache *c = &d->rows[o];
    int rc;

    if (r < c->n && strcmp(c->name[r], name) == 0) {
        *id = c->id[r];
        return 0;
    }
    rc = instance_id_lookup(d, o, name, tick_id, id);
    if (rc < 0)
        return rc;
    if (r >= c->cap) {
        size_t cap = c->cap ? c->cap : 16;
        char(*names)[COUNTER_NAME_MAX];
        int64_t *ids;

        while (cap <= r)
            cap *= 2;
        if (!(names = realloc(c->name, cap * sizeof(*names))))
            return 0; /* the cache is only a shortcut: go without it */
        c->name = names;
        if (!(ids = realloc(c->id, cap * sizeof(*ids))))
            return 0;
        c->id = ids;
        c->cap = cap;
    }
    /* Rows from r on were another tick's: forget them (a row past n is never valid). */
    snprintf(c->name[r], sizeof(c->name[r]), "%s", name);
    c->id[r] = *id;
    c->n = r + 1;
    return 0;
}

/* Forget every remembered row id (the instances of a failed transaction are gone). */
static void inst_rows_forget(struct db *d)
{
    for (int o = 0; o < OBJ_COUNT; o++)
        d->rows[o].n = 0;
}

void db_set_incremental_rollups(struct db *d, int on)
{
    d->incremental = on && sqlite3_libversion_number() < 3043000;
}

/* Forget the running minute (a slice already written stays for part_undo). */
static void acc_drop(struct db *d)
{
    for (int o = 0; o < OBJ_COUNT; o++)
        rollup_obj_reset(&d->acc[o]);
    d->acc_on = 0;
    d->acc_pos = (struct bucket_pos){0, 0};
}

static void hacc_drop(struct db *d)
{
    for (int o = 0; o < OBJ_COUNT; o++)
        rollup_obj_reset(&d->hacc[o]);
    d->hacc_on = 0;
    d->hacc_pos = (struct bucket_pos){0, 0};
}

/* Buckets of `acc` from `pos` on. */
static size_t buckets_left(const struct rollup_obj *acc, const struct bucket_pos *pos)
{
    size_t n = 0;

    for (int o = pos->obj; o < OBJ_COUNT; o++)
        n += acc[o].n - (o == pos->obj && pos->row < acc[o].n ? pos->row : 0);
    return n;
}

static int meta_del(struct db *d, const char *key)
{
    int rc;
    sqlite3_stmt *st = stmt_cache_get(&d->sc, "DELETE FROM meta WHERE key = ?", &rc);

    if (!st)
        return sql_errno(rc);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    return step_done(st);
}

/*
 * Take back the buckets at meta's `key` (tier `tier`, "1m" or "1h") that slices of a running
 * roll-up wrote ahead, when that roll-up is gone (`owned`: the bucket of the one running, or
 * -1): a failed transaction, a tick out of order, a stop or a crash between its slices. No other
 * writer has rows at that bucket (a running roll-up starts on a bucket nobody wrote), so the batch
 * roll-up then takes its ticks whole. In the batch roll-up's transaction, before it.
 */
static int part_undo(struct db *d, const char *key, const char *tier, int64_t owned)
{
    int64_t ms = meta_get_int(d, key, -1);
    int rc = 0;

    if (ms < 0 || ms == owned)
        return 0;
    for (int o = 0; rc == 0 && o < OBJ_COUNT; o++) {
        char sql[96];
        sqlite3_stmt *st;

        if (!table_on(d, o))
            continue;
        snprintf(sql, sizeof(sql), "DELETE FROM %s_%s WHERE bucket_ms = ?",
                 counter_objects[o].table, tier);
        if ((rc = prepare_once(d, sql, &st)) < 0)
            break;
        sqlite3_bind_int64(st, 1, ms);
        rc = step_done(st);
        sqlite3_finalize(st);
    }
    if (rc == 0)
        rc = meta_del(d, key);
    if (rc == 0)
        log_info(
            "%s: %s roll-up of %lld left half-written: taken back, the batch roll-up redoes it",
            d->path, tier, (long long)ms);
    return rc;
}

/* Write the buckets of `acc` (one object's each) at bucket_ms with the statements `kind`
 * (RS_INS_1M or RS_INS_1H), from *pos on and at most `budget` of them; *pos then says where they
 * stopped. */
static int write_buckets(struct db *d, struct rollup_obj *acc, enum rollup_stmt kind,
                         int64_t bucket_ms, struct bucket_pos *pos, size_t budget)
{
    int rc = 0;

    for (; rc == 0 && pos->obj < OBJ_COUNT; pos->obj++, pos->row = 0) {
        const struct object_def *od = &counter_objects[pos->obj];
        const struct rollup_obj *r = &acc[pos->obj];
        sqlite3_stmt *st;

        if (pos->row >= r->n)
            continue;
        if (!budget)
            break;
        if (!(st = rollup_stmt(d, kind, pos->obj, &rc)))
            break;

        for (; rc == 0 && pos->row < r->n && budget; pos->row++, budget--) {
            const struct rollup_series *s = &r->s[pos->row];
            int col = 4;

            sqlite3_bind_int64(st, 1, bucket_ms);
            sqlite3_bind_int64(st, 2, s->inst);
            sqlite3_bind_int64(st, 3, s->n);
            for (size_t k = 0; k < od->ncounters; k++, col += 3) {
                if (!s->cnt[k]) {
                    sqlite3_bind_null(st, col);
                    sqlite3_bind_null(st, col + 1);
                    sqlite3_bind_null(st, col + 2);
                    continue;
                }
                sqlite3_bind_double(st, col, s->min[k]);
                sqlite3_bind_double(st, col + 1, rollup_avg(r->hour, &od->counters[k], s, k));
                sqlite3_bind_double(st, col + 2, s->max[k]);
            }
            /* the operations of the per-operation counters, after every counter's three */
            for (size_t k = 0; k < od->ncounters; k++) {
                if (!(od->counters[k].flags & CF_PER_OP))
                    continue;
                if (s->cnt[k])
                    sqlite3_bind_double(st, col, s->den[k]);
                else
                    sqlite3_bind_null(st, col);
                col++;
            }
            rc = step_done(st);
        }
        if (pos->row < r->n)
            break;
    }
    return rc;
}

/* Whether the batch hour roll-up has reached the running hour (rollup_1h_next_ms, or the oldest
 * minute bucket before it has run), so that its buckets are the running roll-up's to write. */
static int hacc_ours(struct db *d)
{
    int64_t next = meta_get_int(d, "rollup_1h_next_ms", -1);

    if (next < 0 && (next = tier_edge(d, "min", "1m", -1)) >= 0)
        next = next / HOUR_MS * HOUR_MS;
    return next == d->hacc_hour;
}

/* Write the running hour as its buckets, provided the batch hour roll-up has reached it
 * (rollup_1h_next_ms, or the oldest minute bucket before it has run); else leave it to it. */
static int hacc_flush(struct db *d)
{
    int64_t end = d->hacc_hour + HOUR_MS;
    int part = d->hacc_pos.obj || d->hacc_pos.row, rc;

    if (!hacc_ours(d)) {
        hacc_drop(d);
        return 0;
    }
    rc = write_buckets(d, d->hacc, RS_INS_1H, d->hacc_hour, &d->hacc_pos, SIZE_MAX);
    if (rc == 0 && part)
        rc = meta_del(d, "rollup_1h_part_ms");
    if (rc == 0 && table_on(d, SCHEMA_PDH_TABLE)) {
        sqlite3_stmt *st = rollup_stmt(d, RS_BATCH_1H, SCHEMA_PDH_TABLE, &rc);

        if (st) {
            sqlite3_bind_int64(st, 1, d->hacc_hour);
            sqlite3_bind_int64(st, 2, end);
            rc = step_done(st);
        }
    }
    if (rc == 0)
        rc = meta_set(d, "rollup_1h_next_ms", end, NULL);
    hacc_drop(d);
    /* Once an hour: not worth keeping prepared for the next. */
    for (int o = 0; o < OBJ_COUNT; o++)
        rollup_stmt_drop(d, RS_INS_1H, o);
    rollup_stmt_drop(d, RS_BATCH_1H, SCHEMA_PDH_TABLE);
    return rc;
}

/* Fold the running minute's buckets into the running hour: started by an hour's first minute,
 * written once the minute is the hour's last (or a later hour's minute comes first). */
static int hacc_fold(struct db *d)
{
    int64_t hour = d->acc_minute / HOUR_MS * HOUR_MS;
    int rc = 0;

    if (d->hacc_on && hour != d->hacc_hour)
        rc = hacc_flush(d);
    if (rc < 0)
        return rc;
    if (!d->hacc_on && d->acc_minute == hour) {
        d->hacc_on = 1;
        d->hacc_hour = hour;
    }
    if (!d->hacc_on)
        return 0;
    for (int o = 0; rc == 0 && o < OBJ_COUNT; o++)
        for (size_t i = 0; rc == 0 && i < d->acc[o].n; i++)
            rc = rollup_obj_add_bucket(&d->hacc[o], &counter_objects[o], &d->acc[o].s[i]);
    if (rc == 0 && (d->acc_minute + MINUTE_MS) % HOUR_MS == 0 && !d->hour_later)
        rc = hacc_flush(d);
    return rc;
}

/* Write the running roll-up's minute as its buckets and mark its ticks rolled up. `mark` is the
 * roll-up watermark (rollup_1m_tick), which must have reached the minute's first tick. */
static int acc_flush(struct db *d, int64_t mark)
{
    int64_t next_minute = d->acc_minute + MINUTE_MS;
    int part = d->acc_pos.obj || d->acc_pos.row;
    int rc = write_buckets(d, d->acc, RS_INS_1M, d->acc_minute, &d->acc_pos, SIZE_MAX);

    if (rc == 0 && part)
        rc = meta_del(d, "rollup_1m_part_ms");
    /* The extra PDH series are few: the batch statement rolls up their share of the ticks. */
    if (rc == 0 && table_on(d, SCHEMA_PDH_TABLE)) {
        sqlite3_stmt *st = rollup_stmt(d, RS_BATCH_1M, SCHEMA_PDH_TABLE, &rc);

        if (st) {
            sqlite3_bind_int64(st, 1, mark);
            sqlite3_bind_int64(st, 2, d->acc_last);
            rc = step_done(st);
        }
    }
    if (rc == 0)
        rc = meta_set(d, "rollup_1m_tick", d->acc_last, NULL);
    if (rc == 0 && meta_get_int(d, "rollup_1m_until_ms", 0) < next_minute)
        rc = meta_set(d, "rollup_1m_until_ms", next_minute, NULL);
    if (rc == 0)
        rc = hacc_fold(d);
    acc_drop(d);
    return rc;
}

/* Before tick `tick_id` (minute `minute`) is written: flush, drop or start the running roll-up.
 * Sets *fold when the tick's rows go into it. */
static int acc_before_tick(struct db *d, int64_t minute, int64_t tick_id, int *fold)
{
    int next = tick_id == d->prev_id + 1 && d->prev_id >= 0;
    int rc = 0;

    *fold = 0;
    if (d->acc_on && next && minute == d->acc_minute) {
        *fold = 1;
        return 0;
    }
    if (d->acc_on && next && minute > d->acc_minute) {
        int64_t mark = meta_get_int(d, "rollup_1m_tick", 0);

        /* The batch roll-up has not reached the minute (just after a start): it takes it. */
        if (mark == d->acc_first - 1)
            rc = acc_flush(d, mark);
        else
            hacc_drop(d);
    } else if (d->acc_on) {
        hacc_drop(d);
    }
    acc_drop(d);
    if (rc < 0)
        return rc;
    /* Start on the first tick of a minute no tick had before: its buckets hold nothing else. */
    if (d->incremental && next && minute > d->max_minute) {
        d->acc_on = 1;
        d->acc_minute = minute;
        d->acc_first = tick_id;
        *fold = 1;
    }
    /* A tick the running minute does not take goes to the batch roll-up, and so does its hour. */
    if (!*fold)
        hacc_drop(d);
    return 0;
}

/*
 * Make the tables of the value tables in `want` (bit i: value table i) that have none yet, in the
 * caller's transaction: their objects' first instances have come. The views gain their SELECTs at
 * the same time, in one schema change for all of them (readers, and every statement kept, are
 * prepared again once per change). A rollback takes them away again (db_write_ticks reads
 * d->tables anew).
 */
static int tables_make(struct db *d, uint64_t want)
{
    uint64_t add = want & ~d->tables;
    struct sbuf names = {0}, b = {0};
    int rc = 0;

    if (!add)
        return 0;
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        if (!((add >> i) & 1))
            continue;
        sbuf_printf(&names, "%s%s", names.len ? ", " : "",
                    i == SCHEMA_PDH_TABLE ? "extra PDH" : counter_objects[i].name);
        schema_value_tables(&b, i);
        if (i != SCHEMA_PDH_TABLE)
            schema_all_view(&b, i, 0);
    }
    if (schema_views(&b, chunked_mask(d), d->tables | add) < 0 || !sbuf_ok(&b) ||
        !sbuf_ok(&names)) {
        rc = -ENOMEM;
        goto out;
    }
    log_info("%s: first values of %s: creating %s", d->path, names.s,
             add & (add - 1) ? "their tables" : "its tables");
    rc = exec(d, b.s);
    if (rc == 0)
        d->tables |= add;
out:
    sbuf_free(&names);
    sbuf_free(&b);
    return rc;
}

static int write_tick(struct db *d, const struct tick *t)
{
    int64_t minute = t->wall_ms / MINUTE_MS * MINUTE_MS;
    uint64_t want = 0;
    int fold;
    int64_t tick_id;
    int rc;

    sqlite3_bind_int64(d->ins_tick, 1, t->wall_ms);
    if (t->interval_ms > 0)
        sqlite3_bind_int64(d->ins_tick, 2, t->interval_ms);
    else
        sqlite3_bind_null(d->ins_tick, 2);
    sqlite3_bind_int64(d->ins_tick, 3, t->missed);
    rc = step_done(d->ins_tick);
    if (rc < 0)
        return rc;
    tick_id = sqlite3_last_insert_rowid(d->conn);
    if (d->chunking)
        span_cache_tick(d->spans, tick_id);
    rc = acc_before_tick(d, minute, tick_id, &fold);
    if (rc < 0)
        return rc;
    for (int o = 0; o < OBJ_COUNT; o++)
        if (t->obj[o].n)
            want |= UINT64_C(1) << o;
    if (t->n_extras)
        want |= UINT64_C(1) << SCHEMA_PDH_TABLE;
    if ((rc = tables_make(d, want)) < 0)
        return rc;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        const struct tick_object *to = &t->obj[o];
        int width = 2 + (int)od->nfields; /* parameters per row */

        for (size_t r0 = 0; r0 < to->n;) {
            size_t nrows = to->n - r0 >= INS_ROWS_PER_STMT ? INS_ROWS_PER_STMT : 1;
            sqlite3_stmt *st = ins_stmt(d, o, nrows, &rc);

            if (!st)
                return rc;

            for (size_t r = r0; r < r0 + nrows; r++) {
                const struct tick_row *row = &to->rows[r];
                int base = (int)(r - r0) * width;
                int64_t inst;

                rc = instance_id(d, o, r, row->name, tick_id, &inst);
                if (rc == 0 && fold)
                    rc = rollup_obj_add(&d->acc[o], od, inst, row->v, row->null_mask,
                                        t->interval_ms);
                if (rc < 0)
                    return rc;
                sqlite3_bind_int64(st, base + 1, tick_id);
                sqlite3_bind_int64(st, base + 2, inst);
                for (size_t f = 0; f < od->nfields; f++) {
                    if (row->null_mask & (1ull << f))
                        sqlite3_bind_null(st, base + (int)f + 3);
                    else
                        sqlite3_bind_int64(st, base + (int)f + 3, row->v[f]);
                }
                /* Out of memory empties the cache, and the chunk steps read back. */
                if (d->chunking)
                    (void)span_cache_add(d->spans, o, r, inst, row->v, row->null_mask, od->nfields);
            }
            rc = step_done(st);
            if (rc < 0)
                return rc;
            r0 += nrows;
        }
    }
    if (minute > d->max_minute)
        d->max_minute = minute;
    d->prev_id = tick_id;
    if (fold)
        d->acc_last = tick_id;
    return pdh_extra_store_write(d->pdh, tick_id, t);
}

static int rollup_ahead(struct db *d, int64_t wall_ms);

int db_rollup_ahead(struct db *d, int64_t wall_ms)
{
    int64_t cpu0 = clock_thread_cpu_ns();
    int rc = rollup_ahead(d, wall_ms);

    if (rc != 0)
        work_add(d, DB_WORK_AHEAD, cpu0);
    return rc;
}

static int rollup_ahead(struct db *d, int64_t wall_ms)
{
    int64_t minute = wall_ms / MINUTE_MS * MINUTE_MS;
    int minute_due = d->acc_on && minute > d->acc_minute;
    struct bucket_pos pos = {0, 0}, *slice = NULL;
    int rc;

    if (!minute_due && !(d->hacc_on && minute >= d->hacc_hour + HOUR_MS))
        return 0;
    /* The WAL's checkpoint, if this commit makes one due, is the caller's (wal_hook), as for a
     * maintenance step: the writer's comes right after, before the tick. */
    d->maintaining = 1;
    rc = step_done(d->begin);
    if (rc == 0 && minute_due) {
        /* As acc_before_tick does for a tick of a later minute: unless the batch roll-up has
         * taken the minute meanwhile (just after a start). Its hour waits for the next call. */
        int64_t mark = meta_get_int(d, "rollup_1m_tick", 0);

        if (mark != d->acc_first - 1) {
            hacc_drop(d);
            acc_drop(d);
        } else if (buckets_left(d->acc, &d->acc_pos) > d->slice_rows) {
            /* a slice of the minute's buckets; the last one finishes the minute */
            pos = d->acc_pos;
            slice = &d->acc_pos;
            rc = write_buckets(d, d->acc, RS_INS_1M, d->acc_minute, &pos, d->slice_rows);
            if (rc == 0)
                rc = meta_set(d, "rollup_1m_part_ms", d->acc_minute, NULL);
        } else {
            d->hour_later = 1;
            rc = acc_flush(d, mark);
            d->hour_later = 0;
            acc_drop(d);
        }
    } else if (rc == 0 && !hacc_ours(d)) {
        hacc_drop(d);
    } else if (rc == 0 && buckets_left(d->hacc, &d->hacc_pos) > d->slice_rows) {
        pos = d->hacc_pos;
        slice = &d->hacc_pos;
        rc = write_buckets(d, d->hacc, RS_INS_1H, d->hacc_hour, &pos, d->slice_rows);
        if (rc == 0)
            rc = meta_set(d, "rollup_1h_part_ms", d->hacc_hour, NULL);
    } else if (rc == 0) {
        rc = hacc_flush(d);
    }
    if (rc == 0)
        rc = step_done(d->commit);
    d->maintaining = 0;
    if (rc < 0) {
        rollback(d);
        /* The buckets rolled back: the batch roll-up takes their ticks (and part_undo any slice
         * committed before). */
        acc_drop(d);
        hacc_drop(d);
        return rc;
    }
    if (slice)
        *slice = pos;
    return 1;
}

void db_set_tick_pause(struct db *d, void (*pause)(void *arg), void *arg)
{
    d->tick_pause = pause;
    d->tick_pause_arg = arg;
}

void db_set_rollup_slice(struct db *d, size_t rows)
{
    d->slice_rows = rows ? rows : ROLLUP_SLICE_ROWS;
}

int db_write_ticks(struct db *d, struct tick *const *ticks, size_t n)
{
    int64_t cpu0 = clock_thread_cpu_ns();
    int rc;

    /* Pair the WAL with its database file for walbuf: the WAL file is opened with the first
     * transaction and could be reopened later; the pairing is two pointer lookups. */
    (void)walbuf_attach(d->conn);
    rc = step_done(d->begin);

    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = write_tick(d, ticks[i]);
        if (rc == 0 && d->tick_pause)
            d->tick_pause(d->tick_pause_arg);
    }
    if (rc == 0)
        rc = step_done(d->commit);
    if (rc < 0) {
        rollback(d);
        /* Instances created in the failed transaction are gone: forget the cached ids. */
        for (int o = 0; o < OBJ_COUNT; o++)
            name_map_clear(&d->inst[o]);
        inst_rows_forget(d);
        pdh_extra_store_forget(d->pdh);
        /* So are the tables it made. */
        d->tables = tables_in_file(d);
        /* Its ticks are gone, and so is what the running roll-ups knew of them. */
        acc_drop(d);
        hacc_drop(d);
        d->prev_id = -1;
    }
    work_add(d, DB_WORK_TICKS, cpu0);
    return rc;
}

/*
 * The WAL's budget under a size cap of max_bytes: an eighth of it, at least WAL_MIN_BYTES and at
 * most WAL_MAX_BYTES (also the budget without a cap). The cap keeps this much room free for the
 * WAL, which is checkpointed at half of it, and no maintenance step writes more than a quarter
 * of it, so a file system only a little larger than the cap never fills up.
 */
#define WAL_MIN_BYTES (64LL << 10)
#define WAL_MAX_BYTES (4LL << 20)

static int64_t wal_budget(int64_t max_bytes)
{
    int64_t b = max_bytes > 0 ? max_bytes / 8 : WAL_MAX_BYTES;

    return b < WAL_MIN_BYTES ? WAL_MIN_BYTES : b > WAL_MAX_BYTES ? WAL_MAX_BYTES : b;
}

/* `full` ticks per maintenance step, scaled down with the WAL's budget (a step is one
 * transaction, all of whose pages go to the WAL at once), but at least a minute of them. */
static int64_t tick_batch(const struct db *d, int64_t full)
{
    int64_t n = d->wal_bytes ? full * d->wal_bytes / WAL_MAX_BYTES : full;

    return n < 60 ? 60 : n;
}

/* The oldest ticks of a step: ids [?1, ?1 + tick_batch) taken before ?2. */
static const char *batch_sql(char *buf, size_t cap, const struct db *d, int64_t full)
{
    snprintf(buf, cap, "SELECT max(id) FROM ticks WHERE id >= ?1 AND id < ?1 + %lld AND t_ms < ?2",
             (long long)tick_batch(d, full));
    return buf;
}

/*
 * Roll up ticks of completed minutes, at most MAINT_TICK_BATCH of them. Once every tick before the
 * current minute is rolled up, the minute tier is complete up to it ("rollup_1m_until_ms"), which
 * is what lets the hour tier proceed. Returns 1 if more remain.
 */
static int maintain_minutes(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    (void)r;
    int64_t last = meta_get_int(d, "rollup_1m_tick", 0);
    int64_t minute_start = now_ms / MINUTE_MS * MINUTE_MS;
    int64_t upto, left;
    int rc = part_undo(d, "rollup_1m_part_ms", "1m", d->acc_on ? d->acc_minute : -1);

    if (rc < 0)
        return rc;

    upto = query_int(d, "SELECT max(id) FROM ticks WHERE id > ?1 AND id <= ?1 + 3600 AND t_ms < ?2",
                     last, minute_start, last);
    /* The running roll-up's ticks are its own. */
    if (d->acc_on && upto >= d->acc_first)
        upto = d->acc_first - 1;
    for (int i = 0; rc == 0 && upto > last && i < SCHEMA_NVALUE_TABLES; i++) {
        sqlite3_stmt *st;

        if (!table_on(d, i))
            continue;
        if (!(st = rollup_stmt(d, RS_BATCH_1M, i, &rc)))
            break;
        sqlite3_bind_int64(st, 1, last);
        sqlite3_bind_int64(st, 2, upto);
        rc = step_done(st);
    }
    if (rc == 0 && upto > last)
        rc = meta_set(d, "rollup_1m_tick", upto, NULL);
    if (upto > last)
        last = upto;
    /* A running minute that time has completed, with no tick of the next yet: write it now. */
    if (rc == 0 && d->acc_on && d->acc_minute + MINUTE_MS <= minute_start &&
        last == d->acc_first - 1) {
        rc = acc_flush(d, last);
        upto = d->acc_last;
    }
    left = query_int(
        d, "SELECT count(*) FROM (SELECT 1 FROM ticks WHERE id > ?1 AND +t_ms < ?2 LIMIT 1)", upto,
        minute_start, 0);
    if (rc == 0 && !left)
        rc = meta_set(d, "rollup_1m_until_ms", minute_start, NULL);
    /* With running roll-ups, the batch is done once it has caught up (but for the extra PDH
     * series, which it rolls up every minute): its statements go until it is needed again. */
    if (d->incremental && !left)
        for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
            if (i != SCHEMA_PDH_TABLE)
                rollup_stmt_drop(d, RS_BATCH_1M, i);
    if (rc < 0)
        return rc;
    return left > 0;
}

/* Minute buckets one step of the batch hour roll-up reads, at most: at 1 000 disks an hour of
 * them is 138 000, one step of 50-130 ms (the partial first hour after a start); a disk's bucket
 * takes about 5 µs to aggregate, so 1 024 take about 5 ms (bench/README.md, sixteenth session). */
#define HOUR_STEP_ROWS(d) ((int64_t)(d)->slice_rows * 2)

/* The first instance id of value table i's object at `from` or after it: -1 when none, or a
 * negative errno. */
static int64_t inst_from(struct db *d, int i, int64_t from)
{
    sqlite3_stmt *st;
    int64_t id = -1;
    int rc = prepare_once(d, "SELECT min(id) FROM instances WHERE object = ? AND id >= ?", &st);

    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, counter_objects[i].name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, from);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        id = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_ROW)
        id = sql_errno(rc);
    sqlite3_finalize(st);
    return id;
}

/*
 * Roll up completed hours from the minute tier, at most a day of them a pass, in steps that read
 * at most HOUR_STEP_ROWS minute buckets: each takes one object table's instances [lo, hi) over
 * the pass's hours (the extra PDH series whole), so every hour bucket is made in one step from
 * all its minutes, as a single statement would. The pass's progress is in meta ("rollup_1h_end",
 * "rollup_1h_table", "rollup_1h_inst"), written in each step's transaction; rollup_1h_next_ms,
 * the readers' line, moves at the pass's last step. Returns 1 if more remain.
 */
static int maintain_hours(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    int64_t until = meta_get_int(d, "rollup_1m_until_ms", 0) / HOUR_MS * HOUR_MS;
    int64_t next = meta_get_int(d, "rollup_1h_next_ms", -1);
    int64_t end = meta_get_int(d, "rollup_1h_end", -1), tbl = 0, lo = INT64_MIN, hi = INT64_MAX;
    int rc = part_undo(d, "rollup_1h_part_ms", "1h", d->hacc_on ? d->hacc_hour : -1), more;

    (void)now_ms; /* the minute tier's watermark already says how far time has gone */
    (void)r;
    if (rc < 0)
        return rc;
    if (next < 0) {
        next = tier_edge(d, "min", "1m", -1);
        if (next < 0)
            return 0;
        next = next / HOUR_MS * HOUR_MS;
    }
    if (end > next) {
        /* a pass under way */
        tbl = meta_get_int(d, "rollup_1h_table", 0);
        lo = meta_get_int(d, "rollup_1h_inst", INT64_MIN);
    } else {
        if (next >= until)
            return 0;
        end = next + 24 * HOUR_MS < until ? next + 24 * HOUR_MS : until;
        /* The running hour's minutes are its own. */
        if (d->hacc_on && end > d->hacc_hour)
            end = d->hacc_hour;
    }
    while (tbl < SCHEMA_NVALUE_TABLES && !table_on(d, (int)tbl)) {
        tbl++;
        lo = INT64_MIN;
    }
    if (next < end && tbl < SCHEMA_NVALUE_TABLES) {
        sqlite3_stmt *st = rollup_stmt(d, RS_BATCH_1H, (int)tbl, &rc);
        int64_t width = HOUR_STEP_ROWS(d) / ((end - next) / MINUTE_MS), first;

        if (st && tbl != SCHEMA_PDH_TABLE) {
            /* [lo, hi): from the first instance at lo or after, `width` instance ids; the
             * table's last step takes the rest (ids not in instances too) */
            first = inst_from(d, (int)tbl, lo);
            if (first >= 0 && first <= INT64_MAX - width - 1) {
                hi = first + (width > 0 ? width : 1);
                first = inst_from(d, (int)tbl, hi);
                if (first == -1)
                    hi = INT64_MAX;
            }
            if (first < -1)
                rc = (int)first;
            sqlite3_bind_int64(st, 3, lo);
            sqlite3_bind_int64(st, 4, hi);
        }
        if (st && rc == 0) {
            sqlite3_bind_int64(st, 1, next);
            sqlite3_bind_int64(st, 2, end);
            rc = step_done(st);
        }
        if (hi == INT64_MAX || tbl == SCHEMA_PDH_TABLE) {
            tbl++;
            lo = INT64_MIN;
        } else {
            lo = hi;
        }
        while (tbl < SCHEMA_NVALUE_TABLES && !table_on(d, (int)tbl))
            tbl++;
        if (rc == 0 && tbl < SCHEMA_NVALUE_TABLES) {
            rc = meta_set(d, "rollup_1h_end", end, NULL);
            if (rc == 0)
                rc = meta_set(d, "rollup_1h_table", tbl, NULL);
            if (rc == 0)
                rc = meta_set(d, "rollup_1h_inst", lo, NULL);
            return rc < 0 ? rc : 1;
        }
    }
    if (rc == 0 && next < end) {
        rc = meta_set(d, "rollup_1h_next_ms", end, NULL);
        if (rc == 0 && meta_get_int(d, "rollup_1h_end", -1) >= 0) {
            rc = meta_del(d, "rollup_1h_end");
            if (rc == 0)
                rc = meta_del(d, "rollup_1h_table");
            if (rc == 0)
                rc = meta_del(d, "rollup_1h_inst");
        }
    }
    /* A running hour that its minutes have completed, with no minute of the next yet. */
    if (rc == 0 && d->hacc_on && d->hacc_hour + HOUR_MS <= until)
        rc = hacc_flush(d);
    if (rc < 0)
        return rc;
    more = end < (d->hacc_on && d->hacc_hour < until ? d->hacc_hour : until);
    /* As for the minutes: with running roll-ups, the batch statements go once it has caught up. */
    if (d->incremental && !more)
        for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
            rollup_stmt_drop(d, RS_BATCH_1H, i);
    return more;
}

/*
 * The compressed tier (schema.c, chunk_table): raw rows older than r->chunk_after_s go into one
 * chunk per instance and raw column per fresh span of CHUNK_FRESH tick ids, which later steps
 * merge into one chunk per window of CHUNK_TICKS (maintain_merge). A step chunks the object
 * tables of one span and deletes the raw rows it chunked, in the step's one transaction, so a
 * reader sees each row either raw or chunked, never both or neither. Progress is in meta:
 * "chunk_tick" (the first tick id of the span in hand), "chunk_obj" (the object of it in hand)
 * and "chunk_inst" (the first instance id of that object not chunked yet).
 *
 * A step takes slices of the instance ids, not whole objects: at 1 000 disks one object's span
 * is 300 000 rows, about 0.3 s of the writer's time in one step, while ticks wait. A step has a
 * budget of instances over the span's objects in order, CHUNK_SLICE_ROWS over the span's ticks
 * and at most CHUNK_SLICE_INSTS (32 of a fresh span), CHUNK_WIDE_ROWS and CHUNK_WIDE_INSTS for a
 * longer one (48 of a span of 300): an object's slice ends
 * before the budget's last instance after its start, counted at the span's first tick (an object
 * of fewer is taken whole, open-ended, and the step goes on with the next object), so the slices
 * cover every instance id, also one that appears later in the span; rows are found by (tick,
 * inst) seeks, tick by tick, so a step reads its slices only. On a machine of a few CPUs, disks
 * and NICs one step takes every object of a span: one transaction and one round of the other
 * maintenance queries rather than one per object.
 *
 * A slice's rows come from the span cache (span_cache.h), which the writer fills as it inserts
 * them, when it holds the whole span: the SELECT that read them back was about 40 % of a step at
 * 1 000 disks (bench/README.md). The rows are deleted by the same DELETE either way.
 */
#define CHUNK_TICKS       600
#define CHUNK_FRESH       60                /* ticks of a fresh chunk, until its window is merged */
#define CHUNK_WIDE        (CHUNK_TICKS / 2) /* the most ticks of a span taken in many steps */
#define CHUNK_SLICE_INSTS 32                /* instances a step, at most */
#define CHUNK_SLICE_ROWS  9600              /* instances × ticks a step: ~10 ms at 1 µs a row */
/* A span taken in many steps (longer than CHUNK_FRESH) takes half as many rows again a step: coded
 * from the span cache, a step costs less a row, and (while steps deleted their slices, up to schema
 * 7) each of its transactions dirtied the raw pages its slice shared with the next one, so fewer,
 * larger steps wrote fewer pages. 64 instances took
 * 0.2 ms a tick more off the writer than 32 at 1 000 disks, but 15-20 ms a step on a VM where
 * sadc's sample costs 1.3 ms, past the writer's 20 ms bound on a burst; 48 (bench/README.md). */
#define CHUNK_WIDE_INSTS 48
#define CHUNK_WIDE_ROWS  14400
/* Raw rows a step of delete_chunked_raw deletes, at most: whole ticks of one table, about 0.2 µs
 * a row where a chunk step's slice of instances cost 0.4 (bench/README.md). */
#define CHUNK_DELETE_ROWS (2 * CHUNK_WIDE_ROWS)

/* The last tick id of the merge window of tick id t: windows are CHUNK_TICKS ids, the first
 * 1..CHUNK_TICKS, so that a file chunked from tick 1 has its chunks where spans of CHUNK_TICKS
 * from tick 1 put them. */
static int64_t window_last(int64_t t)
{
    return t < 1 ? CHUNK_TICKS : ((t - 1) / CHUNK_TICKS + 1) * CHUNK_TICKS;
}

/* The points of one instance's chunk: up to `cap` ticks, field f's values and presence at
 * values + f * cap and present + f * cap. Sized to the span in hand (a fresh span's 60 ticks
 * are a tenth of a window), in one allocation (cbuf_new). */
struct chunk_buf {
    size_t n, cap;
    int64_t inst;
    int64_t *ticks, *values;
    uint8_t *present;
};

static struct chunk_buf *cbuf_new(size_t cap)
{
    struct chunk_buf *cb = malloc(sizeof(*cb) + cap * (1 + COUNTER_MAX_FIELDS) * sizeof(int64_t) +
                                  cap * COUNTER_MAX_FIELDS);

    if (!cb)
        return NULL;
    cb->n = 0;
    cb->cap = cap;
    cb->inst = 0;
    cb->ticks = (int64_t *)(cb + 1);
    cb->values = cb->ticks + cap;
    cb->present = (uint8_t *)(cb->values + cap * COUNTER_MAX_FIELDS);
    return cb;
}

static int64_t *cbuf_values(const struct chunk_buf *cb, size_t f)
{
    return cb->values + f * cb->cap;
}

static uint8_t *cbuf_present(const struct chunk_buf *cb, size_t f)
{
    return cb->present + f * cb->cap;
}

/* Insert the chunks of the instance in `cb`, then empty it. A field of bit f in `nulls` is SQL
 * NULL (as a column added after its chunks were written: none of its values). The row's id is
 * `id`, or the next one when 0. */
static int chunk_flush(const struct object_def *od, struct chunk_buf *cb, sqlite3_stmt *ins,
                       uint32_t nulls, int64_t id)
{
    int rc = 0;

    if (cb->n == 0)
        return 0;
    sqlite3_bind_int64(ins, 1, cb->inst);
    sqlite3_bind_int64(ins, 2, cb->ticks[0]);
    sqlite3_bind_int64(ins, 3, cb->ticks[cb->n - 1]);
    if (id)
        sqlite3_bind_int64(ins, (int)od->nfields + 4, id);
    else
        sqlite3_bind_null(ins, (int)od->nfields + 4);
    for (size_t f = 0; rc == 0 && f < od->nfields; f++) {
        struct chunk_points p = {cb->n, cb->ticks, cbuf_values(cb, f), cbuf_present(cb, f)};
        uint8_t *blob;
        size_t len;

        if (nulls & (UINT32_C(1) << f)) {
            sqlite3_bind_null(ins, (int)f + 4);
            continue;
        }
        rc = chunk_encode(&p, &blob, &len);
        if (rc == 0)
            rc = sqlite3_bind_blob64(ins, (int)f + 4, blob, len, free) == SQLITE_OK ? 0 : -ENOMEM;
    }
    if (rc == 0)
        rc = step_done(ins);
    sqlite3_clear_bindings(ins);
    cb->n = 0;
    return rc;
}

/* The tick ids lo..hi (?1, ?2), one row each, for seeks into an object table by (tick, inst). */
#define SPAN_TICKS                                                                                 \
    "(WITH RECURSIVE s(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM s WHERE x < ?2) SELECT x "     \
    "FROM s)"

/* The end (exclusive) of the instance slice that starts at `a` in object table `o` over ticks
 * [lo, hi]: the n-th instance id from `a` at the span's first tick of that table, INT64_MAX when
 * there are fewer. */
static int64_t slice_end(struct db *d, const char *table, int64_t lo, int64_t hi, int64_t a,
                         int64_t n)
{
    char sql[256];
    sqlite3_stmt *st;
    int64_t b = INT64_MAX;

    snprintf(sql, sizeof(sql),
             "SELECT inst FROM %s WHERE tick = (SELECT min(tick) FROM %s WHERE tick BETWEEN ?1 "
             "AND ?2) AND inst >= ?3 ORDER BY inst LIMIT 1 OFFSET ?4",
             table, table);
    if (prepare_kept(d, sql, &st) < 0)
        return INT64_MAX;
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    sqlite3_bind_int64(st, 3, a);
    sqlite3_bind_int64(st, 4, n);
    if (sqlite3_step(st) == SQLITE_ROW)
        b = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return b;
}

/* The chunk buffers of one slice, one per instance, sorted by instance id. */
struct chunk_slice {
    struct chunk_buf **b;
    size_t n, cap, hint; /* hint: the buffer after the last one used */
};

/* The buffer of instance `inst` (room for `cap` ticks), added when new; NULL when out of memory.
 * Rows come in (tick, inst) order, so the buffer after the last one used is nearly always the
 * one. */
static struct chunk_buf *slice_buf(struct chunk_slice *s, int64_t inst, size_t cap)
{
    size_t lo = 0, hi = s->n;
    struct chunk_buf *cb;

    if (s->hint < s->n && s->b[s->hint]->inst == inst)
        return s->b[s->hint++];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->b[mid]->inst < inst)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->n || s->b[lo]->inst != inst) {
        if (s->n == s->cap) {
            size_t nc = s->cap ? 2 * s->cap : 8;
            struct chunk_buf **nb = realloc(s->b, nc * sizeof(*nb));

            if (!nb)
                return NULL;
            s->b = nb;
            s->cap = nc;
        }
        if (!(cb = cbuf_new(cap)))
            return NULL;
        cb->inst = inst;
        memmove(&s->b[lo + 1], &s->b[lo], (s->n - lo) * sizeof(*s->b));
        s->b[lo] = cb;
        s->n++;
    }
    s->hint = lo + 1;
    return s->b[lo];
}

static void slice_free(struct chunk_slice *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->b[i]);
    free(s->b);
}

/* The ticks a chunk of the span [lo, hi] holds at most: a span is a window's at most. */
static size_t span_cap(int64_t lo, int64_t hi)
{
    return hi < lo ? 1 : hi - lo + 1 < CHUNK_TICKS ? (size_t)(hi - lo + 1) : CHUNK_TICKS;
}

/* The INSERT of one chunk row of `od` (for chunk_flush). */
static int chunk_insert_stmt(struct db *d, const struct object_def *od, sqlite3_stmt **ins)
{
    struct sbuf b = {0};
    int rc;

    sbuf_printf(&b, "INSERT INTO %s_chunks (inst, first_tick, last_tick", od->table);
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(&b, ", %s", od->fields[f].column);
    sbuf_printf(&b, ", id) VALUES (?, ?, ?");
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(&b, ", ?");
    sbuf_printf(&b, ", ?)");
    rc = sbuf_ok(&b) ? prepare_once(d, b.s, ins) : -ENOMEM;
    sbuf_free(&b);
    return rc;
}

/* Read the raw rows of object table `o` with ticks [lo, hi] and instances [a, b) into `sl`, one
 * buffer per instance. The rows are read in the table's own (tick, inst) order (the ORDER BY needs
 * no sort): read by (inst, tick), SQLite sorted them first, which took more time than reading them
 * (bench/README.md). */
static int slice_read(struct db *d, int o, int64_t lo, int64_t hi, int64_t a, int64_t b_end,
                      struct chunk_slice *sl)
{
    const struct object_def *od = &counter_objects[o];
    sqlite3_stmt *sel = NULL;
    struct sbuf b = {0};
    int rc;

    sbuf_printf(&b, "SELECT inst, tick");
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(&b, ", %s", od->fields[f].column);
    sbuf_printf(&b,
                " FROM %s WHERE tick IN " SPAN_TICKS
                " AND inst >= ?3 AND inst < ?4 ORDER BY tick, inst",
                od->table);
    rc = sbuf_ok(&b) ? prepare_once(d, b.s, &sel) : -ENOMEM;
    sbuf_free(&b);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(sel, 1, lo);
    sqlite3_bind_int64(sel, 2, hi);
    sqlite3_bind_int64(sel, 3, a);
    sqlite3_bind_int64(sel, 4, b_end);
    while (rc == 0 && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
        struct chunk_buf *cb = slice_buf(sl, sqlite3_column_int64(sel, 0), span_cap(lo, hi));

        if (!cb || cb->n == cb->cap) { /* ticks lo..hi: a full one cannot happen */
            rc = cb ? -EIO : -ENOMEM;
            break;
        }
        rc = 0;
        cb->ticks[cb->n] = sqlite3_column_int64(sel, 1);
        for (size_t f = 0; f < od->nfields; f++) {
            cbuf_present(cb, f)[cb->n] = sqlite3_column_type(sel, (int)f + 2) != SQLITE_NULL;
            cbuf_values(cb, f)[cb->n] = sqlite3_column_int64(sel, (int)f + 2);
        }
        cb->n++;
    }
    sqlite3_finalize(sel);
    return rc == SQLITE_DONE ? 0 : rc > 0 ? sql_errno(rc) : rc;
}

/* span_cache_take's points into the slice's buffers, as slice_read puts the rows (a NULL field's
 * value 0, as sqlite3_column_int64 reads it). */
struct slice_fill {
    struct chunk_slice *sl;
    size_t cap, nfields;
};

static int slice_point(void *ctx, int64_t inst, int64_t tick, const int64_t *v, uint64_t nulls)
{
    struct slice_fill *f = ctx;
    struct chunk_buf *cb = slice_buf(f->sl, inst, f->cap);

    if (!cb || cb->n == cb->cap)
        return cb ? -EIO : -ENOMEM;
    cb->ticks[cb->n] = tick;
    for (size_t k = 0; k < f->nfields; k++) {
        int present = !(nulls & (UINT64_C(1) << k));

        cbuf_present(cb, k)[cb->n] = (uint8_t)present;
        cbuf_values(cb, k)[cb->n] = present ? v[k] : 0;
    }
    cb->n++;
    return 0;
}

#ifndef NDEBUG
/* Debug builds (the tests' sanitizer builds among them) read every cached slice back from the
 * table as well, and stop at the first difference: the cache must hold what the table holds. */
static void slice_check(struct db *d, int o, int64_t lo, int64_t hi, int64_t a, int64_t b_end,
                        const struct chunk_slice *got)
{
    const struct object_def *od = &counter_objects[o];
    struct chunk_slice want = {0};
    int rc = slice_read(d, o, lo, hi, a, b_end, &want), same = rc == 0 && want.n == got->n;

    for (size_t i = 0; same && i < want.n; i++) {
        const struct chunk_buf *w = want.b[i], *g = got->b[i];

        same = w->inst == g->inst && w->n == g->n &&
               memcmp(w->ticks, g->ticks, w->n * sizeof(*w->ticks)) == 0;
        for (size_t f = 0; same && f < od->nfields; f++)
            for (size_t k = 0; same && k < w->n; k++)
                same = cbuf_present(w, f)[k] == cbuf_present(g, f)[k] &&
                       cbuf_values(w, f)[k] == cbuf_values(g, f)[k];
    }
    slice_free(&want);
    if (rc == 0 && !same) {
        log_error("%s ticks %lld-%lld, instances from %lld: the span cache differs from the table",
                  od->table, (long long)lo, (long long)hi, (long long)a);
        abort();
    }
}
#endif

/*
 * Chunk the raw rows of object table `o` with ticks [lo, hi] and instances [a, b): from the span
 * cache when it holds every row of the span (span_cache.h), else read back from the table; their
 * points leave the cache. The rows stay: readers read the span raw until its last step moves the
 * chunk steps' edge past it (chunk_sql.h CHUNK_EDGE_SQL), and delete_chunked_raw then deletes
 * them a range of ticks at a time, which costs less than half of deleting each step's slice of
 * instances from every tick of the span (bench/README.md, "twentieth session").
 */
static int chunk_span(struct db *d, int o, int64_t lo, int64_t hi, int64_t a, int64_t b_end,
                      size_t *took)
{
    const struct object_def *od = &counter_objects[o];
    sqlite3_stmt *ins = NULL;
    struct chunk_slice sl = {0};
    int rc;

    if (span_cache_covers(d->spans, lo, hi)) {
        struct slice_fill fill = {&sl, span_cap(lo, hi), od->nfields};

        rc = span_cache_take(d->spans, o, lo, hi, a, b_end, slice_point, &fill);
        d->slices_cached++;
#ifndef NDEBUG
        if (rc == 0)
            slice_check(d, o, lo, hi, a, b_end, &sl);
#endif
    } else {
        rc = slice_read(d, o, lo, hi, a, b_end, &sl);
        if (rc == 0)
            rc = span_cache_take(d->spans, o, lo, hi, a, b_end, NULL, NULL);
        d->slices_read++;
    }
    if (rc == 0)
        rc = chunk_insert_stmt(d, od, &ins);
    *took = sl.n;
    for (size_t i = 0; rc == 0 && i < sl.n; i++)
        rc = chunk_flush(od, sl.b[i], ins, 0, 0);
    sqlite3_finalize(ins);
    slice_free(&sl);
    return rc;
}

/* The ticks of one span, as chunk_ticks reads them from `ticks`. */
struct tick_span {
    size_t n;
    int64_t id[CHUNK_TICKS], t_ms[CHUNK_TICKS], interval[CHUNK_TICKS], missed[CHUNK_TICKS];
    uint8_t all[CHUNK_TICKS], has_interval[CHUNK_TICKS];
};

/* Bind the chunk of (ts->id, values, present) to parameter `col` of `ins`. */
static int bind_tick_chunk(sqlite3_stmt *ins, int col, struct tick_span *ts, int64_t *values,
                           uint8_t *present)
{
    struct chunk_points p = {ts->n, ts->id, values, present};
    uint8_t *blob;
    size_t len;
    int rc = chunk_encode(&p, &blob, &len);

    if (rc == 0)
        rc = sqlite3_bind_blob64(ins, col, blob, len, free) == SQLITE_OK ? 0 : -ENOMEM;
    return rc;
}

/* Insert the ticks_chunks row of `ts`. */
static int tick_chunk_insert(struct db *d, struct tick_span *ts)
{
    int64_t lo_ms = INT64_MAX, hi_ms = INT64_MIN;
    sqlite3_stmt *ins = NULL;
    int rc;

    for (size_t i = 0; i < ts->n; i++) {
        lo_ms = ts->t_ms[i] < lo_ms ? ts->t_ms[i] : lo_ms;
        hi_ms = ts->t_ms[i] > hi_ms ? ts->t_ms[i] : hi_ms;
    }
    rc = prepare_once(d,
                      "INSERT INTO ticks_chunks (first_id, last_id, min_t_ms, max_t_ms, t_ms, "
                      "interval_ms, missed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      &ins);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(ins, 1, ts->id[0]);
    sqlite3_bind_int64(ins, 2, ts->id[ts->n - 1]);
    sqlite3_bind_int64(ins, 3, lo_ms);
    sqlite3_bind_int64(ins, 4, hi_ms);
    rc = bind_tick_chunk(ins, 5, ts, ts->t_ms, ts->all);
    if (rc == 0)
        rc = bind_tick_chunk(ins, 6, ts, ts->interval, ts->has_interval);
    if (rc == 0)
        rc = bind_tick_chunk(ins, 7, ts, ts->missed, ts->all);
    if (rc == 0)
        rc = step_done(ins);
    sqlite3_finalize(ins);
    return rc;
}

/*
 * Move the ticks [lo, hi] into one ticks_chunks row, once every object table's rows of the span
 * are chunked: the raw rows that remain (the views' plain arms join `ticks`) are of later ticks.
 * The extra PDH series are never chunked and their view joins `ticks`, so a span that holds any
 * of their rows keeps its ticks plain. In the caller's step (one transaction), so a reader sees
 * each tick once, plain or chunked.
 */
static int chunk_ticks(struct db *d, int64_t lo, int64_t hi)
{
    struct tick_span *ts;
    sqlite3_stmt *sel = NULL;
    int rc, chunked;

    if (table_on(d, SCHEMA_PDH_TABLE) &&
        query_int(d,
                  "SELECT EXISTS (SELECT 1 FROM " PDH_EXTRA_TABLE " WHERE tick BETWEEN ?1 AND ?2)",
                  lo, hi, 1))
        return 0;
    ts = malloc(sizeof(*ts));
    if (!ts)
        return -ENOMEM;
    ts->n = 0;
    rc = prepare_once(d,
                      "SELECT id, t_ms, interval_ms, missed FROM ticks WHERE id BETWEEN ?1 AND ?2 "
                      "ORDER BY id",
                      &sel);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(sel, 1, lo);
    sqlite3_bind_int64(sel, 2, hi);
    while (ts->n < CHUNK_TICKS && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
        size_t i = ts->n++;

        ts->id[i] = sqlite3_column_int64(sel, 0);
        ts->t_ms[i] = sqlite3_column_int64(sel, 1);
        ts->has_interval[i] = sqlite3_column_type(sel, 2) != SQLITE_NULL;
        ts->interval[i] = sqlite3_column_int64(sel, 2);
        ts->missed[i] = sqlite3_column_int64(sel, 3);
        ts->all[i] = 1;
    }
    rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sql_errno(rc);
    sqlite3_reset(sel); /* done with it: what follows deletes these ticks */
    if (rc < 0 || ts->n == 0)
        goto out;
    chunked = has_ticks_chunks(d);
    rc = tick_chunk_insert(d, ts);
    if (rc == 0) {
        rc = exec_ab(d, "DELETE FROM ticks WHERE id BETWEEN ?1 AND ?2", lo, hi);
    }
    if (rc == 0 && !chunked) {
        /* The first chunked ticks: from now on ticks_all reads them through chunk_rows. */
        struct sbuf b = {0};

        schema_ticks_view(&b, 1);
        rc = sbuf_ok(&b) ? exec(d, b.s) : -ENOMEM;
        sbuf_free(&b);
    }
out:
    sqlite3_finalize(sel);
    free(ts);
    return rc;
}

/*
 * The ticks follow their rows: the ticks before "chunk_tick" have every object's rows chunked, and
 * "ticks_chunk_tick" is the first of them not yet looked at. One step chunks the ticks of one span
 * from there, the next after the last object of the span was chunked, and also catches up a file
 * of schema version 5, whose rows were chunked before the ticks had a compressed tier. Returns 1
 * when it took a span, 0 when none is due.
 */
static int maintain_tick_chunks(struct db *d)
{
    int64_t done = meta_get_int(d, "chunk_tick", 0), t = meta_get_int(d, "ticks_chunk_tick", 0);
    int64_t first = query_int(d, "SELECT min(id) FROM ticks", 0, 0, INT64_MAX), hi;
    int rc;

    if (t < first)
        t = first;
    if (t >= done)
        return 0;
    hi = window_last(t) < done - 1 ? window_last(t) : done - 1;
    rc = chunk_ticks(d, t, hi);
    if (rc == 0)
        rc = meta_set(d, "ticks_chunk_tick", hi + 1, NULL);
    return rc < 0 ? rc : 1;
}

/* Whether the span [lo, hi] can be chunked: rolled up (`rolled`: the roll-ups read the raw
 * rows), not the newest tick, and all of it older than the recent window. */
static int span_due(struct db *d, int64_t lo, int64_t hi, int64_t rolled, int64_t now_ms,
                    const struct db_retention *r)
{
    if (hi > rolled || query_int(d, "SELECT max(id) FROM ticks", 0, 0, 0) <= hi)
        return 0;
    return query_int(d, "SELECT max(t_ms) FROM ticks WHERE id BETWEEN ?1 AND ?2", lo, hi,
                     INT64_MAX) < now_ms - (int64_t)r->chunk_after_s * 1000;
}

/* The rows of tick t over the object tables: its instances. */
static int64_t tick_instances(struct db *d, int64_t t)
{
    struct sbuf b = {0};
    sqlite3_stmt *st = NULL;
    int64_t n = INT64_MAX;

    sbuf_printf(&b, "SELECT 0");
    for (int o = 0; o < OBJ_COUNT; o++)
        if (table_on(d, o))
            sbuf_printf(&b, " + (SELECT count(*) FROM %s WHERE tick = ?1)",
                        counter_objects[o].table);
    if (sbuf_ok(&b) && prepare_once(d, b.s, &st) == 0) {
        sqlite3_bind_int64(st, 1, t);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sbuf_free(&b);
    return n;
}

/*
 * The span cache holds the rows as this connection wrote them; another connection that committed
 * since (data_version moved) may have deleted or changed raw rows, which the cache would put back
 * into the chunks. Then it starts over, and the spans it no longer covers are read back from the
 * tables. Called inside the chunk step's BEGIN IMMEDIATE, so no other commit comes between this
 * reading and the step's own.
 */
static void spans_check_others(struct db *d)
{
    int64_t v = query_int(d, "PRAGMA data_version", 0, 0, -1);

    if (v != d->data_version) {
        if (span_cache_bytes(d->spans) > 0)
            log_debug("%s: another connection committed; the chunk steps read the rows back "
                      "until the writer's copy covers a span again",
                      d->path);
        span_cache_reset(d->spans);
        d->data_version = v;
    }
}

/*
 * Delete raw rows below the chunk steps' edge (chunk_sql.h CHUNK_EDGE_SQL): rows of spans every
 * object of which is chunked, which no reader reads any more. The oldest ticks of the object
 * tables in order, whole ticks, about `budget` rows in all: a range of ticks, whose pages are
 * emptied whole, rather than a chunk step's slice of instances from every tick of its span, which
 * rewrote each page it left rows on. A budget of CHUNK_DELETE_ROWS or more deletes a tick at
 * least, however many rows it has. Returns 1 when rows below the edge are left, 0 when none are,
 * or a negative errno.
 */
static int delete_chunked_raw(struct db *d, int64_t budget)
{
    int64_t edge = meta_get_int(d, "chunk_tick", 0);
    char sql[160];

    for (int o = 0; o < OBJ_COUNT; o++) {
        const char *t = counter_objects[o].table;
        int64_t first, rows, n, hi;
        int rc;

        if (!table_on(d, o))
            continue;
        snprintf(sql, sizeof(sql), "SELECT min(tick) FROM %s", t);
        first = query_int(d, sql, 0, 0, INT64_MAX);
        if (first >= edge)
            continue;
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE tick = ?1", t);
        rows = query_int(d, sql, first, 0, 1);
        rows = rows > 0 ? rows : 1;
        n = budget / rows;
        if (n < 1 && budget < CHUNK_DELETE_ROWS)
            return 1;
        hi = n < 1 ? first : first + n - 1 < edge - 1 ? first + n - 1 : edge - 1;
        snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE tick BETWEEN ?1 AND ?2", t);
        rc = exec_ab(d, sql, first, hi);
        if (rc < 0)
            return rc;
        if (hi < edge - 1)
            return 1; /* the budget ended inside this table's rows */
        budget -= (hi - first + 1) * rows;
    }
    return 0;
}

/*
 * Chunk one object table over the oldest span not chunked yet, when all of the span is older
 * than the recent window and rolled up (the roll-ups read the raw rows). The chunks of the span
 * in hand wait above the chunk steps' edge (meta chunk_tick, chunk_sql.h) until its last step
 * moves the edge past the span; the raw rows below the edge are deleted first
 * (delete_chunked_raw), a step at a time. Returns 1 if more remain.
 */
static int maintain_chunks(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    int64_t lo = meta_get_int(d, "chunk_tick", 0), obj = meta_get_int(d, "chunk_obj", 0);
    int64_t inst = meta_get_int(d, "chunk_inst", INT64_MIN);
    int64_t first = query_int(d, "SELECT min(id) FROM ticks", 0, 0, 0);
    int64_t rolled = meta_get_int(d, "rollup_1m_tick", 0), hi, end;
    int64_t budget;    /* instances this step may still take */
    int64_t taken = 0; /* raw rows (instances × ticks) it took */
    int64_t span_ticks;
    int rc, chunked;

    /* Rows of done spans first, whether or not chunking goes on: they are never read again. */
    rc = delete_chunked_raw(d, CHUNK_DELETE_ROWS);
    if (rc != 0)
        return rc;
    if (r->chunk_after_s <= 0)
        return 0;
    spans_check_others(d);
    rc = maintain_tick_chunks(d);
    if (rc != 0)
        return rc;
    if (lo < first) {
        lo = first;
        obj = 0;
        inst = INT64_MIN;
    }
    if (obj != 0 || inst != INT64_MIN) { /* a span in hand: its end as chosen at its start */
        hi = meta_get_int(d, "chunk_end", lo + CHUNK_TICKS - 1);
    } else {
        /* A span never crosses its merge window's end. Fresh where one step takes the whole
         * span (a machine of a few CPUs, disks and NICs), so that the plain tail is short for
         * a step a minute; where a span takes many steps (at 1 000 disks) the rest of its half
         * window, CHUNK_WIDE ticks, where four more rounds of steps a window and the merges'
         * second coding of every value cost the writer 8-18 %, and where a whole window's span
         * takes half the instances a step, so that each raw page is read and dirtied by twice
         * as many steps (bench/README.md). Those chunks are not merged (merge_object). */
        int64_t wide = lo < 1 ? CHUNK_WIDE : ((lo - 1) / CHUNK_WIDE + 1) * CHUNK_WIDE;

        hi = lo + CHUNK_FRESH - 1 < window_last(lo) ? lo + CHUNK_FRESH - 1 : window_last(lo);
        if (!span_due(d, lo, hi, rolled, now_ms, r))
            return 0;
        if (hi < wide && tick_instances(d, lo) > CHUNK_SLICE_INSTS) {
            hi = wide;
            if (!span_due(d, lo, hi, rolled, now_ms, r))
                return 0;
        }
    }
    if (hi - lo + 1 > CHUNK_FRESH) {
        budget = CHUNK_WIDE_ROWS / (hi - lo + 1);
        budget = budget < 1 ? 1 : budget > CHUNK_WIDE_INSTS ? CHUNK_WIDE_INSTS : budget;
    } else {
        budget = hi >= lo ? CHUNK_SLICE_ROWS / (hi - lo + 1) : CHUNK_SLICE_INSTS;
        budget = budget < 1 ? 1 : budget > CHUNK_SLICE_INSTS ? CHUNK_SLICE_INSTS : budget;
    }
    span_ticks = hi - lo + 1;
    /* Slices of the span's objects in order, as many as the step's budget of instances holds: on
     * a machine of a few disks and NICs, every object of the span in one step (one transaction,
     * one set of maintenance queries) rather than one step each. */
    do {
        size_t took = 0;

        /* Objects without tables have no rows to chunk. */
        while (obj < OBJ_COUNT && !table_on(d, (int)obj)) {
            obj++;
            inst = INT64_MIN;
        }
        if (obj == OBJ_COUNT) { /* the span is done: the next step takes the next one */
            obj = 0;
            lo = hi + 1;
            break;
        }
        chunked = has_chunks(d, (int)obj);
        end = slice_end(d, counter_objects[obj].table, lo, hi, inst, budget);
        rc = chunk_span(d, (int)obj, lo, hi, inst, end, &took);
        if (rc == 0 && !chunked && has_chunks(d, (int)obj)) {
            /* The first chunks of this object: from now on its view needs chunk_rows, and
             * readers re-prepare on the schema change. */
            struct sbuf b = {0};

            schema_all_view(&b, (int)obj, 1);
            rc = schema_views(&b, chunked_mask(d), d->tables) == 0 && sbuf_ok(&b) ? exec(d, b.s)
                                                                                  : -ENOMEM;
            sbuf_free(&b);
        }
        if (rc < 0)
            return rc;
        budget -= (int64_t)took;
        taken += (int64_t)took * span_ticks;
        if (end != INT64_MAX) { /* the budget cut the slice: the object goes on at `end` */
            inst = end;
            break;
        }
        inst = INT64_MIN;
        if (++obj == OBJ_COUNT) {
            obj = 0;
            lo = hi + 1;
            break;
        }
    } while (budget > 0);
    rc = meta_set(d, "chunk_tick", lo, NULL);
    if (rc == 0 && (obj != 0 || inst != INT64_MIN))
        rc = meta_set(d, "chunk_end", hi, NULL);
    if (rc == 0)
        rc = meta_set(d, "chunk_obj", obj, NULL);
    if (rc == 0)
        rc = meta_set(d, "chunk_inst", inst, NULL);
    /* A span done: its ticks in the same transaction, rather than a step of their own, and its
     * raw rows as far as what the step chunked left of a deleting step's budget (on a machine of
     * a few instances all of them: a span is still one step) */
    if (rc == 0 && obj == 0 && inst == INT64_MIN)
        rc = maintain_tick_chunks(d);
    if (rc >= 0 && obj == 0 && inst == INT64_MIN && CHUNK_DELETE_ROWS - 2 * taken > 0)
        rc = delete_chunked_raw(d, CHUNK_DELETE_ROWS - 2 * taken);
    return rc < 0 ? rc : 1;
}

/*
 * Merging (maintain_merge). A fresh chunk is CHUNK_FRESH ticks long, so that the raw tail is one
 * to two minutes past chunk_after_minutes rather than one to six. Once every object's rows and
 * the ticks of a window of CHUNK_TICKS tick ids are chunked, steps merge each instance's chunks
 * of the window into one where all of them are fresh (a big machine's chunks of half windows
 * stay: maintain_chunks), and the window's ticks_chunks rows into one: each value is decoded and
 * coded once more, and the file keeps the coding of CHUNK_TICKS-tick chunks (bench/README.md).
 * Only chunks wholly inside the window merge (a file's chunks of older spans stay as they are),
 * and a reader sees each point once: a step deletes the fresh chunks and inserts the merged one
 * in its transaction. Progress is in meta: "merge_tick" (the window's first tick id),
 * "merge_obj" and "merge_inst", with a budget of CHUNK_SLICE_ROWS / CHUNK_TICKS instances a step.
 */

/* Decode the chunk blob `v` into field f of `cb` at point `at`: its ticks too when `*n` is
 * unknown (-1; then *n is set), else check that they are the ones there. */
static int merge_decode(sqlite3_value *v, struct chunk_buf *cb, size_t f, size_t at, long *n)
{
    int64_t ticks[CHUNK_TICKS];
    struct chunk_points p = {0, *n < 0 ? cb->ticks + at : ticks, cbuf_values(cb, f) + at,
                             cbuf_present(cb, f) + at};
    const uint8_t *buf = sqlite3_value_blob(v);
    size_t len = (size_t)sqlite3_value_bytes(v);

    if (!buf || chunk_decode(buf, len, &p, cb->cap - at) != 0)
        return -EIO;
    if (*n < 0) {
        *n = (long)p.n;
        return 0;
    }
    /* the columns of one chunk row have the same ticks */
    if (p.n != (size_t)*n || memcmp(ticks, cb->ticks + at, p.n * sizeof(*ticks)) != 0)
        return -EIO;
    return 0;
}

/* The statements of one object's merges: its chunk row by id, the DELETE of one, the INSERT. */
struct merge_stmts {
    sqlite3_stmt *get, *del, *ins;
};

static int merge_prepare(struct db *d, const struct object_def *od, struct merge_stmts *m)
{
    struct sbuf b = {0};
    char sql[128];
    int rc;

    sbuf_printf(&b, "SELECT inst");
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(&b, ", %s", od->fields[f].column);
    sbuf_printf(&b, " FROM %s_chunks WHERE id = ?1", od->table);
    rc = sbuf_ok(&b) ? prepare_once(d, b.s, &m->get) : -ENOMEM;
    sbuf_free(&b);
    snprintf(sql, sizeof(sql), "DELETE FROM %s_chunks WHERE id = ?1", od->table);
    if (rc == 0)
        rc = prepare_once(d, sql, &m->del);
    if (rc == 0)
        rc = chunk_insert_stmt(d, od, &m->ins);
    return rc;
}

static void merge_finalize(struct merge_stmts *m)
{
    sqlite3_finalize(m->get);
    sqlite3_finalize(m->del);
    sqlite3_finalize(m->ins);
}

/* Read the chunks ids[0..n) of object `od` (one instance's, by first tick) into `cb`; *nulls:
 * bit f set when field f is NULL in every one. -EIO: they do not make one chunk. */
static int merge_read(const struct object_def *od, sqlite3_stmt *get, const int64_t *ids, size_t n,
                      struct chunk_buf *cb, uint32_t *nulls)
{
    int rc = 0;

    *nulls = (uint32_t)((UINT64_C(1) << od->nfields) - 1);
    cb->n = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        size_t at = cb->n;
        long pts = -1;

        sqlite3_bind_int64(get, 1, ids[k]);
        rc = sqlite3_step(get);
        if (rc != SQLITE_ROW) {
            rc = rc == SQLITE_DONE ? -EIO : sql_errno(rc);
            sqlite3_reset(get);
            break;
        }
        rc = 0;
        cb->inst = sqlite3_column_int64(get, 0);
        for (size_t f = 0; rc == 0 && f < od->nfields; f++) {
            sqlite3_value *v = sqlite3_column_value(get, (int)f + 1);

            if (sqlite3_value_type(v) == SQLITE_NULL)
                continue;
            rc = merge_decode(v, cb, f, at, &pts);
            *nulls &= ~(UINT32_C(1) << f);
        }
        /* a row of no chunk, or one that does not follow the one before */
        if (rc == 0 && (pts <= 0 || (at > 0 && cb->ticks[at] <= cb->ticks[at - 1])))
            rc = -EIO;
        for (size_t f = 0; rc == 0 && f < od->nfields; f++)
            if (sqlite3_column_type(get, (int)f + 1) == SQLITE_NULL) {
                memset(cbuf_present(cb, f) + at, 0, (size_t)pts);
                memset(cbuf_values(cb, f) + at, 0, (size_t)pts * sizeof(int64_t));
            }
        if (rc == 0)
            cb->n += (size_t)pts;
        sqlite3_reset(get);
    }
    return rc;
}

/* Merge the chunks ids[0..n) of object o (one instance's, by first tick) into one, which takes
 * the first one's id: its place in the table, where the fresh chunks' pages have room, rather
 * than the table's end (there the fresh chunks left part-empty pages behind: bench/README.md). */
static int merge_chunks(struct db *d, int o, struct merge_stmts *m, const int64_t *ids, size_t n,
                        struct chunk_buf *cb)
{
    const struct object_def *od = &counter_objects[o];
    uint32_t nulls;
    int rc = merge_read(od, m->get, ids, n, cb, &nulls);

    if (rc == -EIO) {
        log_warnx("%s: the chunks of %s instance %lld from chunk %lld on do not merge; they stay "
                  "as they are",
                  d->path, od->table, (long long)cb->inst, (long long)ids[0]);
        return 0;
    }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        sqlite3_bind_int64(m->del, 1, ids[k]);
        rc = step_done(m->del);
    }
    if (rc == 0)
        rc = chunk_flush(od, cb, m->ins, nulls, ids[0]);
    return rc;
}

/*
 * Merge the chunks of object o in the window [w, last] of the instances from `a` on, at most
 * *budget of them (less what they took); *next: the instance to go on from, INT64_MAX when the
 * object is done.
 */
static int merge_object(struct db *d, int o, int64_t w, int64_t last, int64_t a, int64_t *budget,
                        int64_t *next)
{
    const struct object_def *od = &counter_objects[o];
    struct chunk_buf *cb = NULL;
    sqlite3_stmt *sel = NULL;
    int64_t *ids = NULL, *insts = NULL;
    size_t n = 0, cap = 0, start = 0;
    struct merge_stmts m = {0};
    int64_t taken = 0;
    char sql[256];
    int rc, todo = 0, fresh = 1;

    *next = INT64_MAX;
    snprintf(sql, sizeof(sql),
             "SELECT id, inst, last_tick - first_tick < %d FROM %s_chunks WHERE last_tick "
             "BETWEEN ?1 AND ?2 AND first_tick >= ?1 AND inst >= ?3 ORDER BY inst, first_tick",
             CHUNK_FRESH, od->table);
    rc = prepare_once(d, sql, &sel);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(sel, 1, w);
    sqlite3_bind_int64(sel, 2, last);
    sqlite3_bind_int64(sel, 3, a);
    /* The ids first (the merges below change the table this reads), of the instances of more
     * than one chunk in the window, all of them fresh: only they count against the budget, so a
     * window of a big machine's chunks (whole half windows: see maintain_chunks) is one read of
     * its ids an object. */
    while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t inst = sqlite3_column_int64(sel, 1);

        if (n > 0 && insts[n - 1] != inst) { /* the instance before is complete */
            if (n - start == 1 || !fresh)
                n = start; /* one chunk, or one of a wide span: nothing to merge */
            else
                taken++;
            start = n;
            fresh = 1;
            if (taken == *budget) {
                *next = inst;
                break;
            }
        }
        fresh &= sqlite3_column_int(sel, 2);
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            int64_t *ni = realloc(ids, nc * sizeof(*ni)), *nn;

            if (ni)
                ids = ni;
            nn = ni ? realloc(insts, nc * sizeof(*nn)) : NULL;
            if (!nn) {
                rc = -ENOMEM;
                break;
            }
            insts = nn;
            cap = nc;
        }
        ids[n] = sqlite3_column_int64(sel, 0);
        insts[n++] = inst;
    }
    if (rc == SQLITE_DONE && (n - start == 1 || !fresh))
        n = start;
    else if (rc == SQLITE_DONE && n > start)
        taken++;
    rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : rc > 0 ? sql_errno(rc) : rc;
    sqlite3_finalize(sel);
    *budget -= taken;
    todo = n > 0;
    start = 0;
    if (rc == 0 && todo && !(cb = cbuf_new(CHUNK_TICKS)))
        rc = -ENOMEM;
    if (rc == 0 && todo)
        rc = merge_prepare(d, od, &m);
    for (size_t i = 1; rc == 0 && todo && i <= n; i++)
        if (i == n || insts[i] != insts[start]) {
            if (i - start > 1)
                rc = merge_chunks(d, o, &m, ids + start, i - start, cb);
            start = i;
        }
    merge_finalize(&m);
    free(cb);
    free(ids);
    free(insts);
    return rc;
}

/* Merge the ticks_chunks rows wholly inside the window [w, last] into one. */
static int merge_ticks(struct db *d, int64_t w, int64_t last)
{
    struct tick_span *ts = NULL;
    struct chunk_points p;
    sqlite3_stmt *sel = NULL;
    int rc, rows = 0;

    if (query_int(d, "SELECT count(*) FROM ticks_chunks WHERE first_id >= ?1 AND last_id <= ?2", w,
                  last, 0) < 2)
        return 0;
    if (!(ts = malloc(sizeof(*ts))))
        return -ENOMEM;
    ts->n = 0;
    rc = prepare_once(d,
                      "SELECT t_ms, interval_ms, missed FROM ticks_chunks WHERE first_id >= ?1 "
                      "AND last_id <= ?2 ORDER BY first_id",
                      &sel);
    if (rc == 0) {
        sqlite3_bind_int64(sel, 1, w);
        sqlite3_bind_int64(sel, 2, last);
    }
    while (rc == 0 && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t ids[CHUNK_TICKS];
        uint8_t *pres[3] = {ts->all, ts->has_interval, NULL};
        int64_t *vals[3] = {ts->t_ms, ts->interval, ts->missed};
        uint8_t ones[CHUNK_TICKS];
        size_t at = ts->n, pts = 0;

        rc = 0;
        for (int c = 0; rc == 0 && c < 3; c++) {
            const uint8_t *buf = sqlite3_column_blob(sel, c);

            p = (struct chunk_points){0, c == 0 ? ts->id + at : ids, vals[c] + at,
                                      pres[c] ? pres[c] + at : ones};
            if (!buf ||
                chunk_decode(buf, (size_t)sqlite3_column_bytes(sel, c), &p, CHUNK_TICKS - at) != 0)
                rc = -EIO;
            else if (c == 0)
                pts = p.n;
            else if (p.n != pts || memcmp(ids, ts->id + at, pts * sizeof(*ids)) != 0)
                rc = -EIO;
        }
        if (rc == 0 && at > 0 && ts->id[at] <= ts->id[at - 1])
            rc = -EIO;
        ts->n += pts;
        rows++;
    }
    rc = rc == SQLITE_DONE ? 0 : rc > 0 ? sql_errno(rc) : rc;
    sqlite3_finalize(sel);
    if (rc == -EIO)
        log_warnx("%s: the ticks chunks of ticks %lld-%lld do not merge; they stay as they are",
                  d->path, (long long)w, (long long)last);
    else if (rc == 0 && rows > 1) {
        rc = exec_ab(d, "DELETE FROM ticks_chunks WHERE first_id >= ?1 AND last_id <= ?2", w, last);
        if (rc == 0)
            rc = tick_chunk_insert(d, ts);
    }
    free(ts);
    return rc == -EIO ? 0 : rc;
}

/* Merge the chunks of the oldest window not merged yet once all of it is chunked, ticks too
 * (see above). Returns 1 if more remain. */
static int maintain_merge(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    int64_t done = meta_get_int(d, "chunk_tick", 0), w = meta_get_int(d, "merge_tick", -1);
    int64_t obj = meta_get_int(d, "merge_obj", 0), inst = meta_get_int(d, "merge_inst", INT64_MIN);
    int64_t budget = CHUNK_SLICE_ROWS / CHUNK_TICKS, last; /* instances, of a window each */
    int rc = 0;

    (void)now_ms;
    (void)r; /* chunks made before chunking was turned off merge too */
    if (done <= 0)
        return 0;
    if (w < 0) { /* the first window of the chunks made from here on */
        w = window_last(done) - CHUNK_TICKS + 1;
        if ((rc = meta_set(d, "merge_tick", w, NULL)) < 0)
            return rc;
    }
    last = window_last(w);
    if (done <= last || meta_get_int(d, "ticks_chunk_tick", 0) <= last)
        return 0;
    do {
        int64_t next;

        while (obj < OBJ_COUNT && !table_on(d, (int)obj)) {
            obj++;
            inst = INT64_MIN;
        }
        if (obj == OBJ_COUNT) {
            rc = merge_ticks(d, w, last);
            w = last + 1;
            obj = 0;
            inst = INT64_MIN;
            break;
        }
        rc = merge_object(d, (int)obj, w, last, inst, &budget, &next);
        if (next != INT64_MAX) {
            inst = next;
            break;
        }
        obj++;
        inst = INT64_MIN;
    } while (rc == 0 && budget > 0);
    if (rc == 0)
        rc = meta_set(d, "merge_tick", w, NULL);
    if (rc == 0)
        rc = meta_set(d, "merge_obj", obj, NULL);
    if (rc == 0)
        rc = meta_set(d, "merge_inst", inst, NULL);
    return rc < 0 ? rc : 1;
}

/* Delete the raw rows and the chunks of ticks up to `upto`, and the ticks. A chunk that also
 * holds later ticks stays: its points of deleted ticks match no tick and a reader's tick range,
 * and it goes at a later step. */
static void delete_raw(const struct db *d, struct sbuf *b, int64_t upto)
{
    span_cache_forget_upto(d->spans, upto);
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
        if (table_on(d, i))
            sbuf_printf(b, "DELETE FROM %s WHERE tick <= %lld;\n", schema_value_table(i),
                        (long long)upto);
    for (int o = 0; o < OBJ_COUNT; o++)
        if (table_on(d, o))
            sbuf_printf(b, "DELETE FROM %s_chunks WHERE last_tick <= %lld;\n",
                        counter_objects[o].table, (long long)upto);
    sbuf_printf(b, "DELETE FROM ticks WHERE id <= %lld;\n", (long long)upto);
    sbuf_printf(b, "DELETE FROM ticks_chunks WHERE last_id <= %lld;\n", (long long)upto);
}

/*
 * Where the oldest ticks are, for retention and the size cap, which delete them oldest first:
 * 1 when the oldest tick is in a ticks chunk (*last: its last id, *max_ms: its newest time), 0
 * when it is plain (or there is none). Then *plain_cap is the id before the first chunk after
 * the oldest plain tick (INT64_MAX: none), which a batch of plain ticks must not pass: the
 * chunk's own times decide when it goes.
 */
static int oldest_ticks(struct db *d, int64_t *last, int64_t *max_ms, int64_t *plain_cap)
{
    int64_t first_plain = query_int(d, "SELECT min(id) FROM ticks", 0, 0, INT64_MAX);
    sqlite3_stmt *st;
    int in_chunk = 0;

    *plain_cap = INT64_MAX;
    if (prepare_kept(
            d, "SELECT first_id, last_id, max_t_ms FROM ticks_chunks ORDER BY first_id LIMIT 1",
            &st) < 0)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) < first_plain) {
        *last = sqlite3_column_int64(st, 1);
        *max_ms = sqlite3_column_int64(st, 2);
        in_chunk = 1;
    }
    sqlite3_reset(st);
    if (!in_chunk && first_plain != INT64_MAX)
        *plain_cap = query_int(d, "SELECT min(first_id) - 1 FROM ticks_chunks WHERE first_id > ?1",
                               first_plain, 0, INT64_MAX);
    return in_chunk;
}

/* Delete the oldest rows past their retention, a bounded batch per call. Returns 1 if more remain.
 */
static int maintain_retention(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    struct sbuf b = {0};
    int64_t rolled = meta_get_int(d, "rollup_1m_tick", 0);
    int64_t first = query_int(d, "SELECT min(id) FROM ticks", 0, 0, 0);
    int64_t cutoff = now_ms - (int64_t)r->raw_days * DAY_MS;
    int64_t upto, mcut, hcut, more = 0;
    int mpast, hpast;
    int64_t chunk_last, chunk_ms, cap;
    char sql[128];
    int rc;

    /* Raw ticks: only those already rolled up, so no minute loses its summary; a ticks chunk
     * once its newest tick is past the cutoff. */
    if (oldest_ticks(d, &chunk_last, &chunk_ms, &cap)) {
        if (chunk_ms < cutoff && chunk_last <= rolled) {
            delete_raw(d, &b, chunk_last);
            more = 1;
        }
        first = upto = 0;
    } else {
        upto = query_int(d, batch_sql(sql, sizeof(sql), d, MAINT_TICK_BATCH), first, cutoff, 0);
    }
    if (upto > rolled)
        upto = rolled;
    if (upto > cap)
        upto = cap;
    if (upto >= first && upto > 0) {
        delete_raw(d, &b, upto);
        more = upto - first + 1 >= tick_batch(d, MAINT_TICK_BATCH);
    }
    /* Roll-up tiers: a day of buckets per call at most, and no DELETE (each a statement to parse:
     * its cut is in the text) while the oldest bucket of the tier is not past its cut. */
    mcut = now_ms - (int64_t)r->minute_days * DAY_MS;
    hcut = now_ms - (int64_t)r->hour_days * DAY_MS;
    /* nor minutes the hour roll-up has still to read (a pass of it takes many steps) */
    if (meta_get_int(d, "rollup_1h_next_ms", -1) >= 0 &&
        mcut > meta_get_int(d, "rollup_1h_next_ms", -1))
        mcut = meta_get_int(d, "rollup_1h_next_ms", -1);
    mpast = tier_edge(d, "min", "1m", INT64_MAX) < mcut;
    hpast = tier_edge(d, "min", "1h", INT64_MAX) < hcut;
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++) {
        const char *t = schema_value_table(i);

        if (!table_on(d, i))
            continue;
        if (mpast)
            sbuf_printf(&b,
                        "DELETE FROM %s_1m WHERE bucket_ms < min(%lld, (SELECT min(bucket_ms) "
                        "FROM %s_1m) + %lld);\n",
                        t, (long long)mcut, t, (long long)DAY_MS);
        if (hpast)
            sbuf_printf(&b,
                        "DELETE FROM %s_1h WHERE bucket_ms < min(%lld, (SELECT min(bucket_ms) "
                        "FROM %s_1h) + %lld);\n",
                        t, (long long)hcut, t, (long long)(30 * DAY_MS));
    }
    if (!sbuf_ok(&b)) {
        sbuf_free(&b);
        return -ENOMEM;
    }
    rc = b.s ? exec(d, b.s) : 0;
    sbuf_free(&b);
    if (rc < 0)
        return rc;
    if ((mpast && tier_edge(d, "min", "1m", INT64_MAX) < mcut) ||
        (hpast && tier_edge(d, "min", "1h", INT64_MAX) < hcut))
        more = 1;
    return (int)more;
}

#define SIZE_KEEP_RAW_MS  HOUR_MS       /* the size cap keeps at least this much raw data */
#define SIZE_KEEP_1M_MS   DAY_MS        /* ... of minute buckets */
#define SIZE_KEEP_1H_MS   (30 * DAY_MS) /* ... of hour buckets */
#define SIZE_TICK_BATCH   600           /* raw ticks pruned per step for the cap */
#define SIZE_VACUUM_PAGES 2048          /* free pages given back per step */

static int64_t file_bytes(const char *path)
{
    char wal[4200];
    struct stat sb;
    int64_t n = 0;

    if (stat(path, &sb) == 0)
        n += sb.st_size;
    snprintf(wal, sizeof(wal), "%s-wal", path);
    if (stat(wal, &sb) == 0)
        n += sb.st_size;
    return n;
}

/* Pages in use, not on the freelist. The WAL is counted apart (maintain_size). */
static int64_t used_bytes(struct db *d)
{
    int64_t pages = query_int(d, "PRAGMA page_count", 0, 0, 0);
    int64_t free_pages = query_int(d, "PRAGMA freelist_count", 0, 0, 0);
    return (pages - free_pages) * d->page_bytes;
}

/* Prune the oldest of one tier, keeping its newest keep_ms. Returns 1 if something went. */
static int prune_oldest(struct db *d, int tier, int64_t keep_ms)
{
    struct sbuf b = {0};
    int64_t lo, hi, newest;
    char sql[128];
    int rc;

    if (tier == 0) {
        int64_t chunk_last, chunk_ms, cap;

        newest = newest_t_ms(d, 0);
        if (oldest_ticks(d, &chunk_last, &chunk_ms, &cap)) {
            /* a whole chunk at a time, once all of it is older than what is kept */
            if (chunk_ms >= newest - keep_ms)
                return 0;
            hi = chunk_last;
        } else {
            lo = query_int(d, "SELECT min(id) FROM ticks", 0, 0, 0);
            hi = query_int(d, batch_sql(sql, sizeof(sql), d, SIZE_TICK_BATCH), lo, newest - keep_ms,
                           0);
            if (hi > cap)
                hi = cap;
            if (hi < lo || hi <= 0)
                return 0;
        }
        delete_raw(d, &b, hi);
    } else {
        const char *sfx = tier == 1 ? "1m" : "1h";

        newest = tier_edge(d, "max", sfx, 0);
        lo = tier_edge(d, "min", sfx, 0);
        hi = lo + (tier == 1 ? HOUR_MS : DAY_MS); /* an hour of minutes, a day of hours */
        if (hi > newest - keep_ms)
            hi = newest - keep_ms;
        if (hi <= lo)
            return 0;
        for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
            if (table_on(d, i))
                sbuf_printf(&b, "DELETE FROM %s_%s WHERE bucket_ms < %lld;\n",
                            schema_value_table(i), sfx, (long long)hi);
    }
    if (!sbuf_ok(&b)) {
        sbuf_free(&b);
        return -ENOMEM;
    }
    rc = exec(d, b.s);
    sbuf_free(&b);
    return rc < 0 ? rc : 1;
}

/* Set the WAL's bounds for a cap of max_bytes (see wal_budget): the autocheckpoint at half the
 * budget, and a WAL grown past it (while readers held a checkpoint back) cut back to that much
 * when it is reset. */
static int set_wal_limits(struct db *d, int64_t max_bytes)
{
    int64_t budget = wal_budget(max_bytes);
    char sql[96];
    int rc;

    if (budget == d->wal_bytes)
        return 0;
    d->ckpt_frames = budget / 2 / d->page_bytes;
    snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit = %lld", (long long)(budget / 2));
    rc = exec(d, sql);
    if (rc == 0)
        d->wal_bytes = budget;
    return rc;
}

/* Keep the file and its WAL under r->max_bytes (see db_maintain). Returns 1 if more work
 * remains. */
static int maintain_size(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    static const int64_t keep[3] = {SIZE_KEEP_RAW_MS, SIZE_KEEP_1M_MS, SIZE_KEEP_1H_MS};
    int64_t used = used_bytes(d), room;
    int rc = 0;

    (void)now_ms;
    if (set_wal_limits(d, r->max_bytes) < 0)
        return -EIO;
    /* The WAL's budget is counted as used: the cap is for the file and its WAL together. */
    room = r->max_bytes - d->wal_bytes;
    d->size.used_bytes = used;
    d->size.file_bytes = file_bytes(d->path);
    d->size.over_cap = 0;
    if (r->max_bytes > 0 && used > room / 10 * 9) {
        for (int tier = 0; rc == 0 && tier < 3; tier++)
            rc = prune_oldest(d, tier, keep[tier]);
        if (rc < 0)
            return rc;
        d->size.over_cap = rc == 0 && used > room;
    }
    if (query_int(d, "PRAGMA freelist_count", 0, 0, 0) > 0 &&
        query_int(d, "PRAGMA auto_vacuum", 0, 0, 0) == 2) {
        int64_t pages = d->wal_bytes / 4 / d->page_bytes;
        char sql[64];

        snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%lld)",
                 (long long)(pages < SIZE_VACUUM_PAGES ? pages : SIZE_VACUUM_PAGES));
        if (exec(d, sql) < 0)
            return -EIO;
        /* more to give back: another step, in its own transaction */
        if (rc == 0 && query_int(d, "PRAGMA freelist_count", 0, 0, 0) > 0)
            rc = 1;
    }
    return rc;
}

int db_checkpoint_due(const struct db *d)
{
    return d->wal_frames >= d->ckpt_frames / 4 * 3;
}

int db_truncate_due(const struct db *d)
{
    return d->wal_frames >= d->ckpt_frames / 2;
}

int db_checkpoint_passive(struct db *d)
{
    int64_t cpu0 = clock_thread_cpu_ns();
    int rc, log = 0, done = 0;

    sqlite3_busy_timeout(d->conn, 0);
    rc = sqlite3_wal_checkpoint_v2(d->conn, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    sqlite3_busy_timeout(d->conn, DB_BUSY_TIMEOUT_MS);
    work_add(d, DB_WORK_CHECKPOINT, cpu0);
    if (rc == SQLITE_OK && done >= log)
        d->wal_frames = 0;
    return rc == SQLITE_OK ? 0 : sql_errno(rc);
}

int db_checkpoint(struct db *d)
{
    int64_t cpu0 = clock_thread_cpu_ns();
    int rc;

    /* No wait for readers: the writer holds ticks meanwhile, and the queue drops the oldest when
     * full, so a wait here would put a hole behind the batch in hand. */
    sqlite3_busy_timeout(d->conn, 0);
    rc = sqlite3_wal_checkpoint_v2(d->conn, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_busy_timeout(d->conn, DB_BUSY_TIMEOUT_MS);
    work_add(d, DB_WORK_CHECKPOINT, cpu0);
    if (rc == SQLITE_OK)
        d->wal_frames = 0;
    return rc == SQLITE_OK ? 0 : sql_errno(rc);
}

void db_size_get(struct db *d, struct db_size *out)
{
    *out = d->size;
}

int db_maintain(struct db *d, int64_t now_ms, const struct db_retention *r)
{
    return db_maintain_split(d, now_ms, r, INT64_MAX);
}

int db_maintain_split(struct db *d, int64_t now_ms, const struct db_retention *r, int64_t split_ns)
{
    /* Each step is its own transaction: roll-ups first, so neither chunking nor retention ever
     * takes raw ticks whose minutes are not summarized yet (those steps stop at meta's
     * rollup_1m_tick, so a tick written between two calls of a split round is safe too). */
    int (*const steps[])(struct db *, int64_t, const struct db_retention *) = {
        maintain_minutes, maintain_hours,     maintain_chunks,
        maintain_merge,   maintain_retention, maintain_size};
    const int nsteps = (int)(sizeof(steps) / sizeof(steps[0]));
    int rc;

    /* Step i's work is accounted as DB_WORK_MINUTES + i: the kinds name the steps in this order. */
    _Static_assert(sizeof(steps) / sizeof(steps[0]) == DB_WORK_SIZE - DB_WORK_MINUTES + 1,
                   "one work kind a maintenance step");

    if (d->maint_next == 0) {
        /* No chunk steps, nothing to keep for them; kept again from the next tick when they
         * resume. */
        if (d->chunking && r->chunk_after_s <= 0)
            span_cache_reset(d->spans);
        d->chunking = r->chunk_after_s > 0;
        d->maint_more = 0;
    }
    d->maintaining = 1;
    while (d->maint_next < nsteps) {
        int i = d->maint_next++;
        int64_t cpu0 = clock_thread_cpu_ns();

        rc = step_done(d->begin);
        if (rc == 0)
            rc = steps[i](d, now_ms, r);
        if (rc >= 0) {
            d->maint_more |= rc;
            rc = step_done(d->commit);
        }
        work_add(d, DB_WORK_MINUTES + i, cpu0);
        if (rc < 0) {
            rollback(d);
            /* The running hour may hold a minute whose buckets were just rolled back. */
            hacc_drop(d);
            d->maintaining = 0;
            d->maint_next = 0;
            return rc;
        }
        if (d->maint_next < nsteps && clock_thread_cpu_ns() - cpu0 >= split_ns) {
            d->maintaining = 0;
            return 1;
        }
    }
    d->maintaining = 0;
    d->maint_next = 0;
    return d->maint_more;
}

char *db_schema_sql(void)
{
    struct sbuf b = {0};

    schema_tables(&b);
    for (int i = 0; i < SCHEMA_NVALUE_TABLES; i++)
        schema_value_tables(&b, i);
    schema_ticks_tables(&b);
    schema_series(&b);
    for (int o = 0; o < OBJ_COUNT; o++)
        schema_all_view(&b, o, 1);
    schema_ticks_view(&b, 1);
    if (schema_views(&b, ~UINT64_C(0), ~UINT64_C(0)) < 0) {
        sbuf_free(&b);
        return NULL;
    }
    return sbuf_take(&b);
}
