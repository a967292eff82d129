/*
 * schema.c - the SQL text of the counter log, generated from the counter table so that the
 * tables, the roll-ups and the views can never disagree with what the collectors produce.
 * docs/schema.md describes the result; `perflogd --print-schema` prints it.
 */
#include "storage/schema.h"

#include "collectors/model/counters.h"
#include "storage/chunk_sql.h"
#include "storage/pdh_extra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column name of counter k of an object in the roll-up tables. Counters are only ever appended
 * to an object's table in counters.c, so an index names the same counter forever. */
#define RC "c%zu"

static void object_table(struct sbuf *b, const struct object_def *o)
{
    sbuf_printf(
        b, "CREATE TABLE IF NOT EXISTS %s (\n  tick INTEGER NOT NULL,\n  inst INTEGER NOT NULL",
        o->table);
    for (size_t f = 0; f < o->nfields; f++)
        sbuf_printf(b, ",\n  %s INTEGER", o->fields[f].column);
    sbuf_printf(b, ",\n  PRIMARY KEY (tick, inst)\n) WITHOUT ROWID;\n");
}

/*
 * The compressed tier of an object table: one row per instance and span of ticks, one chunk
 * (chunk.h) per raw column, all over the ticks the instance has rows for in the span. A rowid
 * table: a row of a busy instance is several hundred bytes of BLOBs, too wide for a WITHOUT
 * ROWID key. The index serves retention and the readers' tick ranges.
 */
static void chunk_table(struct sbuf *b, const struct object_def *o)
{
    sbuf_printf(b,
                "CREATE TABLE IF NOT EXISTS %s_chunks (\n  id INTEGER PRIMARY KEY,\n"
                "  inst INTEGER NOT NULL,\n  first_tick INTEGER NOT NULL,\n"
                "  last_tick INTEGER NOT NULL",
                o->table);
    for (size_t f = 0; f < o->nfields; f++)
        sbuf_printf(b, ",\n  %s BLOB", o->fields[f].column);
    sbuf_printf(b, "\n);\nCREATE INDEX IF NOT EXISTS %s_chunks_last ON %s_chunks (last_tick);\n",
                o->table, o->table);
}

void schema_raw_select(struct sbuf *b, const struct object_def *od)
{
    schema_raw_select_fields(b, od, ~UINT64_C(0));
}

void schema_raw_select_fields(struct sbuf *b, const struct object_def *od, uint64_t present)
{
    sbuf_printf(b, "SELECT tick, inst");
    for (size_t f = 0; f < od->nfields; f++)
        if (present & (UINT64_C(1) << f))
            sbuf_printf(b, ", %s", od->fields[f].column);
        else
            sbuf_printf(b, ", NULL AS %s", od->fields[f].column);
    sbuf_printf(b, " FROM %s", od->table);
}

void schema_chunk_select(struct sbuf *b, const struct object_def *od, const char *where)
{
    sbuf_printf(b, "SELECT r.tick, c.inst");
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(b, ", r.v%zu", f);
    sbuf_printf(b, " FROM %s_chunks c, chunk_rows(", od->table);
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(b, "%sc.%s", f ? ", " : "", od->fields[f].column);
    sbuf_printf(b, ") r%s", where);
}

void schema_all_view(struct sbuf *b, int obj, int chunked)
{
    const struct object_def *od = &counter_objects[obj];

    sbuf_printf(b, "DROP VIEW IF EXISTS %s_all;\nCREATE VIEW %s_all (tick, inst", od->table,
                od->table);
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(b, ", %s", od->fields[f].column);
    sbuf_printf(b, ") AS\n");
    /* The raw rows from the chunk steps' edge on, the chunks below it (chunk_sql.h) */
    schema_raw_select(b, od);
    sbuf_printf(b, " WHERE tick >= " CHUNK_EDGE_SQL);
    if (chunked) {
        sbuf_printf(b, "\nUNION ALL\n");
        schema_chunk_select(b, od, " WHERE c.last_tick < " CHUNK_EDGE_SQL);
    }
    sbuf_printf(b, ";\n");
}

static void rollup_table(struct sbuf *b, const struct object_def *o, const char *suffix)
{
    sbuf_printf(b,
                "CREATE TABLE IF NOT EXISTS %s_%s (\n  bucket_ms INTEGER NOT NULL,\n"
                "  inst INTEGER NOT NULL,\n  n INTEGER NOT NULL",
                o->table, suffix);
    for (size_t k = 0; k < o->ncounters; k++)
        sbuf_printf(b, ",\n  " RC "_min REAL, " RC "_avg REAL, " RC "_max REAL", k, k, k);
    /* After every counter's three, as add_missing_columns appends them to an older table. */
    for (size_t k = 0; k < o->ncounters; k++)
        if (o->counters[k].flags & CF_PER_OP)
            sbuf_printf(b, ",\n  " RC "_ops INTEGER", k);
    sbuf_printf(b, ",\n  PRIMARY KEY (bucket_ms, inst)\n) WITHOUT ROWID;\n");
}

void schema_tables(struct sbuf *b)
{
    sbuf_printf(
        b, "CREATE TABLE IF NOT EXISTS meta (\n  key TEXT PRIMARY KEY,\n  value\n) WITHOUT ROWID;\n"
           "CREATE TABLE IF NOT EXISTS ticks (\n"
           "  id INTEGER PRIMARY KEY,\n"
           "  t_ms INTEGER NOT NULL,\n"
           "  interval_ms INTEGER,\n"
           "  missed INTEGER NOT NULL DEFAULT 0\n);\n"
           "CREATE INDEX IF NOT EXISTS ticks_t_ms ON ticks (t_ms);\n"
           "CREATE TABLE IF NOT EXISTS instances (\n"
           "  id INTEGER PRIMARY KEY,\n"
           "  object TEXT NOT NULL,\n"
           "  name TEXT NOT NULL,\n"
           "  first_tick INTEGER,\n"
           "  UNIQUE (object, name)\n);\n"
           /* One row per instance and counter with its path built once, so the views give
            * `path` by a join and a filter on it is an index lookup, not a string built per row
            * of every table. k is the counter's index in its object (its roll-up column). */
           "CREATE TABLE IF NOT EXISTS series (\n"
           "  id INTEGER PRIMARY KEY,\n"
           "  inst INTEGER NOT NULL,\n"
           "  k INTEGER NOT NULL,\n"
           "  path TEXT NOT NULL,\n"
           "  UNIQUE (inst, k)\n);\n"
           "CREATE INDEX IF NOT EXISTS series_path ON series (path);\n"
           "CREATE TABLE IF NOT EXISTS counters (\n"
           "  object TEXT NOT NULL,\n"
           "  counter TEXT NOT NULL,\n"
           "  unit TEXT NOT NULL,\n"
           "  kind TEXT NOT NULL,\n"
           "  rollup_column TEXT NOT NULL,\n"
           "  PRIMARY KEY (object, counter)\n) WITHOUT ROWID;\n"
           "CREATE TABLE IF NOT EXISTS runs (\n"
           "  id INTEGER PRIMARY KEY,\n"
           "  label TEXT,\n"
           "  command TEXT,\n"
           "  host TEXT,\n"
           "  pid INTEGER,\n"
           "  status TEXT,\n"
           "  start_ms INTEGER NOT NULL,\n"
           "  end_ms INTEGER,\n"
           "  settled_ms INTEGER,\n"
           "  exit_code INTEGER,\n"
           "  payload_bytes INTEGER,\n"
           "  files INTEGER,\n"
           "  tool_output TEXT,\n"
           "  report_json TEXT,\n"
           "  settle_timeout_s INTEGER,\n"
           "  peers TEXT,\n"
           "  io_read_bytes INTEGER,\n"
           "  io_write_bytes INTEGER,\n"
           "  storage_read_bytes INTEGER,\n"
           "  storage_write_bytes INTEGER\n);\n"
           /* A run's edges: created at every open, so a database of an older perflogd gains
            * the table without a version step, and an older perflogd ignores it. */
           "CREATE TABLE IF NOT EXISTS run_edges (\n"
           "  run_id INTEGER NOT NULL,\n"
           "  edge TEXT NOT NULL,\n"
           "  t_ms INTEGER,\n"
           "  reading TEXT NOT NULL,\n"
           "  PRIMARY KEY (run_id, edge)\n) WITHOUT ROWID;\n");
}

void schema_value_tables(struct sbuf *b, int i)
{
    if (i == SCHEMA_PDH_TABLE) {
        pdh_extra_tables(b);
        return;
    }
    object_table(b, &counter_objects[i]);
    chunk_table(b, &counter_objects[i]);
    rollup_table(b, &counter_objects[i], "1m");
    rollup_table(b, &counter_objects[i], "1h");
}

const char *schema_value_table(int i)
{
    return i == SCHEMA_PDH_TABLE ? PDH_EXTRA_TABLE : counter_objects[i].table;
}

void schema_counters_rows(struct sbuf *b)
{
    sbuf_printf(b, "DELETE FROM counters;\n");
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        for (size_t k = 0; k < od->ncounters; k++) {
            const struct counter_def *c = &od->counters[k];
            sbuf_printf(b, "INSERT INTO counters VALUES (");
            sbuf_sql_quote(b, od->name);
            sbuf_printf(b, ", ");
            sbuf_sql_quote(b, c->name);
            sbuf_printf(b, ", ");
            sbuf_sql_quote(b, c->unit);
            sbuf_printf(b, ", ");
            sbuf_sql_quote(b, c->kind);
            sbuf_printf(b, ", '" RC "');\n", k);
        }
    }
}

/* Counter c's value over the row o, in the short form (counter_sql) or, for the test-only
 * per-counter views that check it, in the long one (counter_sql_ref). */
static int counter_expr_form(struct sbuf *b, const struct object_def *od,
                             const struct counter_def *c, const char *alias, const char *interval,
                             int ref)
{
    char expr[4096];

    if ((ref ? counter_sql_ref : counter_sql)(od, c, alias, interval, expr, sizeof(expr)) < 0)
        return -1;
    sbuf_printf(b, "%s", expr);
    return 0;
}

static int counter_expr(struct sbuf *b, const struct object_def *od, const struct counter_def *c)
{
    return counter_expr_form(b, od, c, "o", "t.interval_ms", 0);
}

/*
 * Whether the views may name object od's fields and interval_ms without a table: in each of
 * their SELECTs the raw row (or the chunked one) is the only table with these columns, unless a
 * field is named like a column of series, instances or ticks. Two bytes a reference, in every
 * formula of the views.
 */
static int bare_fields(const struct object_def *od)
{
    static const char *const taken[] = {"id",          "inst",   "k",          "path",
                                        "object",      "name",   "first_tick", "t_ms",
                                        "interval_ms", "missed", "tick"};

    for (size_t f = 0; f < od->nfields; f++)
        for (size_t j = 0; j < sizeof(taken) / sizeof(taken[0]); j++)
            if (strcmp(od->fields[f].column, taken[j]) == 0)
                return 0;
    return 1;
}

/* The series rows of the instances that `where` selects (an SQL condition over i), from the
 * counters table: every counter of the instance's object, with its path. */
static void series_fill(struct sbuf *b, const char *where)
{
    int first = 1;

    sbuf_printf(b, "INSERT OR IGNORE INTO series (inst, k, path)\n"
                   "  SELECT i.id, CAST(substr(c.rollup_column, 2) AS INTEGER), CASE WHEN c.object "
                   "IN (");
    for (int o = 0; o < OBJ_COUNT; o++)
        if (counter_objects[o].single) {
            sbuf_printf(b, "%s", first ? "" : ", ");
            sbuf_sql_quote(b, counter_objects[o].name);
            first = 0;
        }
    sbuf_printf(b,
                ") THEN '\\' || c.object || '\\' || c.counter ELSE '\\' || c.object || '(' || "
                "i.name || ')\\' || c.counter END\n"
                "  FROM instances i JOIN counters c ON c.object = i.object WHERE %s;\n",
                where);
}

void schema_series(struct sbuf *b)
{
    series_fill(b, "1");
    sbuf_printf(b, "DROP TRIGGER IF EXISTS instances_series;\n"
                   "CREATE TRIGGER instances_series AFTER INSERT ON instances BEGIN\n");
    series_fill(b, "i.id = NEW.id");
    sbuf_printf(b, "END;\n");
}

/*
 * The counter column of one object's SELECT in counter_rollups: the tail of the series row's
 * path, which series_fill built as '\\' || object || '(' || instance || ')\\' || counter (no
 * instance part for a single-instance object). The object's name is a constant of the SELECT and
 * the instance is i.name, so the counter starts at a known character: a substr is a few bytes of
 * schema where a CASE on s.k spells out every counter's name. length() and substr() count
 * characters alike, so a multi-byte instance name moves both the same. counter_values keeps the
 * CASE (counter_name_case): its SELECTs run as a co-routine that computes every column of every
 * row, and the two calls cost 6-10 % of a 7-day read of one counter, where the CASE's tests on
 * k cost nothing measurable; the roll-ups have one row a minute.
 */
static void counter_name_expr(struct sbuf *b, const struct object_def *od)
{
    if (od->single)
        sbuf_printf(b, "substr(s.path, %zu)", strlen(od->name) + 3);
    else
        sbuf_printf(b, "substr(s.path, length(i.name) + %zu)", strlen(od->name) + 5);
}

/* "CASE s.k WHEN 0 THEN <counter 0's name> WHEN 1 THEN ... END": the counter column of one
 * object's SELECT in counter_values, from the series row s. */
static void counter_name_case(struct sbuf *b, const struct object_def *od)
{
    sbuf_printf(b, "CASE s.k");
    for (size_t k = 0; k < od->ncounters; k++) {
        sbuf_printf(b, " WHEN %zu THEN ", k);
        sbuf_sql_quote(b, od->counters[k].name);
    }
    sbuf_printf(b, " END");
}

/* The most counters an object has (counter_value_case's array); counters.c has at most 15. */
#define OBJ_MAX_COUNTERS 64

/* Counter k's term and divisor (counter_sql_split), and its whole formula (counter_sql). */
struct counter_parts {
    char term[1400];
    char div[600];
    char full[2000];
    int split;
};

/* Whether counters a and b (both split) divide by the same divisor with the same clamp. */
static int same_division(const struct object_def *od, const struct counter_parts *p, size_t a,
                         size_t b)
{
    unsigned m = CF_CLAMP100 | CF_COMPLEMENT;

    return p[a].split && p[b].split && strcmp(p[a].div, p[b].div) == 0 &&
           (od->counters[a].flags & m) == (od->counters[b].flags & m);
}

/* The end (one past) of the run of counters from k that share k's division; k + 1 if none does
 * or if sharing it would not save bytes (the CASE around the terms costs some 25). */
static size_t shared_run(const struct object_def *od, const struct counter_parts *p, size_t k)
{
    size_t e = k + 1;

    while (e < od->ncounters && same_division(od, p, k, e))
        e++;
    return (e - k - 1) * strlen(p[k].div) > 30 ? e : k + 1;
}

/* Counters [k, e) as "CASE s.k WHEN k THEN <formula> ... END", or, when they share one division,
 * as wrap((CASE s.k WHEN k THEN <term> ... END) <division>). */
static int value_run(struct sbuf *b, const struct object_def *od, const struct counter_parts *p,
                     size_t k, size_t e, int shared)
{
    struct sbuf x = {0};
    char w[8192];
    int rc = 0;

    sbuf_printf(&x, shared ? "(CASE s.k" : "CASE s.k");
    for (size_t m = k; m < e; m++)
        sbuf_printf(&x, shared ? " WHEN %zu THEN %s" : "\n    WHEN %zu THEN %s", m,
                    shared ? p[m].term : p[m].full);
    sbuf_printf(&x, shared ? " END)%s" : " END", shared ? p[k].div : "");
    if (!sbuf_ok(&x))
        rc = -1;
    else if (shared)
        rc = counter_sql_wrap(&od->counters[k], x.s, w, sizeof(w));
    if (rc == 0)
        sbuf_printf(b, "%s", shared ? w : x.s);
    sbuf_free(&x);
    return rc < 0 ? -1 : 0;
}

/*
 * The value column of one object's SELECT over the row o, its interval `interval`: a CASE on
 * the series row's k. Consecutive counters that divide by the same divisor (an object's rates
 * by the interval in seconds, Processor's shares by the sum of its jiffies) share it:
 * "(CASE s.k WHEN k THEN <term k> ... END)/<divisor>". The runs, shared or not, are picked by
 * range, "CASE WHEN s.k<6 THEN <run 0-5> WHEN s.k<12 THEN <run 6-11> ELSE <run 12-> END", so a
 * row's k meets no more tests than in one CASE over every counter, and each run is a CASE on k
 * that is NULL for a k it does not hold (NULL divided is NULL): every k gets the value of its
 * own formula, and nothing else.
 */
static int value_case_in(struct sbuf *b, const struct object_def *od, const char *interval,
                         struct counter_parts *p)
{
    int bare = bare_fields(od);
    const char *alias = bare ? "" : "o", *iv = bare ? "interval_ms" : interval;
    size_t start[OBJ_MAX_COUNTERS + 1], nruns = 0;
    int shared[OBJ_MAX_COUNTERS];

    if (od->ncounters > OBJ_MAX_COUNTERS || od->ncounters == 0)
        return -1;
    for (size_t k = 0; k < od->ncounters; k++) {
        const struct counter_def *c = &od->counters[k];

        p[k].split = counter_sql_split(od, c, alias, iv, p[k].term, sizeof(p[k].term), p[k].div,
                                       sizeof(p[k].div));
        if (p[k].split < 0 || counter_sql(od, c, alias, iv, p[k].full, sizeof(p[k].full)) < 0)
            return -1;
    }
    /* runs: a shared division's, or the lone counters between them */
    for (size_t k = 0; k < od->ncounters;) {
        size_t e = shared_run(od, p, k);

        if (e > k + 1 || nruns == 0 || shared[nruns - 1]) {
            shared[nruns] = e > k + 1;
            start[nruns++] = k;
        }
        k = e;
    }
    start[nruns] = od->ncounters;
    if (nruns > 1)
        sbuf_printf(b, "CASE");
    for (size_t r = 0; r < nruns; r++) {
        if (nruns > 1 && r + 1 < nruns)
            sbuf_printf(b, "\n    WHEN s.k<%zu THEN ", start[r + 1]);
        else if (nruns > 1)
            sbuf_printf(b, "\n    ELSE ");
        if (value_run(b, od, p, start[r], start[r + 1], shared[r]) < 0)
            return -1;
    }
    if (nruns > 1)
        sbuf_printf(b, " END");
    return 0;
}

/* value_case_in with its parts on the heap (some 250 KB; any thread builds the views). */
static int counter_value_case(struct sbuf *b, const struct object_def *od, const char *interval)
{
    struct counter_parts *p = calloc(OBJ_MAX_COUNTERS, sizeof(*p));
    int rc = p ? value_case_in(b, od, interval, p) : -1;

    free(p);
    return rc;
}

/*
 * The head of one object's SELECT in counter_values: every column, from `o` (its t_ms and
 * interval_ms from `tm`), instances i and series s. The object is a literal, so a filter on it
 * is a constant test that skips the other objects' SELECTs; the counter and the value are a CASE
 * on the series row's k, so one SELECT serves every counter of the object (the view's text, and
 * every connection's parsed schema, no longer grow with the number of counters).
 */
static int values_head(struct sbuf *b, const struct object_def *od, const char *tm, int first)
{
    char interval[32];

    sbuf_printf(b,
                "%sSELECT %s.t_ms, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', %s.t_ms / 1000.0, "
                "'unixepoch'), %s.interval_ms, s.path, ",
                first ? "" : "UNION ALL\n", tm, tm, tm);
    sbuf_sql_quote(b, od->name);
    sbuf_printf(b, ", %s, ", od->single ? "NULL" : "i.name");
    counter_name_case(b, od);
    sbuf_printf(b, ",\n  ");
    snprintf(interval, sizeof(interval), "%s.interval_ms", tm);
    return counter_value_case(b, od, interval);
}

/* The series rows of object od: those of its instances, one per counter (k < ncounters: a
 * series of a counter this build does not know has no SELECT, as before). */
static void values_where(struct sbuf *b, const struct object_def *od)
{
    sbuf_printf(b, "\n  WHERE s.k < %zu AND i.object = ", od->ncounters);
    sbuf_sql_quote(b, od->name);
    sbuf_printf(b, "\n");
}

/* The FROM of an object's chunked rows up to their join on the series' instance: series s,
 * instances i, and o, chunk_series over the object's chunk table with t_ms and interval_ms. */
static void chunked_from(struct sbuf *b, const struct object_def *od)
{
    sbuf_printf(b, "\n  FROM series s JOIN instances i ON i.id = s.inst JOIN (SELECT inst, t_ms, "
                   "interval_ms");
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(b, ", v%zu AS %s", f, od->fields[f].column);
    sbuf_printf(b, " FROM chunk_series('%s_chunks', '", od->table);
    for (size_t f = 0; f < od->nfields; f++)
        sbuf_printf(b, "%s%s", f ? ", " : "", od->fields[f].column);
}

/*
 * The chunked rows of one object: its series rows first (by path or by instance and counter),
 * then chunk_series over that instance's chunks, which gives the ticks' t_ms and interval_ms
 * too, so that a filter on t_ms reaches it: it reads only the chunks whose span holds ticks of
 * that time, by the chunk table's index.
 */
static int values_chunked(struct sbuf *b, const struct object_def *od)
{
    if (values_head(b, od, "o", 0) < 0)
        return -1;
    chunked_from(b, od);
    sbuf_printf(b, "') r) o ON o.inst = s.inst");
    values_where(b, od);
    return 0;
}

/* One roll-up column (min, avg or max) of every counter: CASE s.k WHEN 0 THEN c0_min ... (no
 * table name: only the roll-up table r has these columns) */
static void rollup_case(struct sbuf *b, const struct object_def *od, const char *agg)
{
    sbuf_printf(b, ", CASE s.k");
    for (size_t k = 0; k < od->ncounters; k++)
        sbuf_printf(b, " WHEN %zu THEN " RC "_%s", k, k, agg);
    sbuf_printf(b, " END");
}

/* The ops column of counter_rollups: the operations of the per-operation counters (CF_PER_OP),
 * NULL for the others. */
static void rollup_ops(struct sbuf *b, const struct object_def *od)
{
    int any = 0;

    for (size_t k = 0; k < od->ncounters; k++)
        if (od->counters[k].flags & CF_PER_OP) {
            sbuf_printf(b, "%s WHEN %zu THEN " RC "_ops", any ? "" : ", CASE s.k", k, k);
            any = 1;
        }
    sbuf_printf(b, any ? " END" : ", NULL");
}

/* A SELECT of `ncols` NULLs and no rows: a view whose tables are all absent still exists. */
static void no_rows(struct sbuf *b, int ncols)
{
    sbuf_printf(b, "SELECT NULL");
    for (int c = 1; c < ncols; c++)
        sbuf_printf(b, ", NULL");
    sbuf_printf(b, " WHERE 0\n");
}

/* The end of counter_values after the objects' SELECTs (`first`: none came): the extra PDH
 * series' SELECT when the file has their tables, and no rows at all when nothing came. */
static void values_tail(struct sbuf *b, uint64_t present, int first)
{
    if (present & (UINT64_C(1) << SCHEMA_PDH_TABLE)) {
        sbuf_printf(b, "%s", first ? "" : "UNION ALL\n");
        pdh_extra_values_view(b);
    } else if (first) {
        no_rows(b, 8);
    }
    sbuf_printf(b, ";\n");
}

int schema_views(struct sbuf *b, uint64_t chunked, uint64_t present)
{
    int first = 1;

    sbuf_printf(b, "DROP VIEW IF EXISTS counter_values;\nDROP VIEW IF EXISTS counter_rollups;\n");
    sbuf_printf(b,
                "CREATE VIEW counter_values (t_ms, time_utc, interval_ms, path, object, instance, "
                "counter, value) AS\n");
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        if (!(present & (UINT64_C(1) << o)))
            continue; /* no table yet: the object has had no instance */
        /* the raw rows, then (when the object has any) the chunked ones */
        if (values_head(b, od, "t", first) < 0)
            return -1;
        /* The series row first (CROSS JOIN keeps it outside the raw table), so a filter on
         * path stops at the series index; without it SQLite scanned every raw table whenever
         * the time bound was open on one side (it cannot tell how many ticks that leaves). The
         * object test is always true of a row, but a series found by path is in one object
         * only: it stops the other objects' SELECTs at once. */
        sbuf_printf(b,
                    "\n  FROM series s JOIN instances i ON i.id = s.inst CROSS JOIN %s o ON o.inst "
                    "= s.inst AND o.tick >= " CHUNK_EDGE_SQL " JOIN ticks t ON t.id = o.tick",
                    od->table);
        values_where(b, od);
        if ((chunked & (UINT64_C(1) << o)) && values_chunked(b, od) < 0)
            return -1;
        first = 0;
    }
    values_tail(b, present, first);

    first = 1;
    sbuf_printf(b,
                "CREATE VIEW counter_rollups (tier, bucket_ms, time_utc, path, object, instance, "
                "counter, n, min, avg, max, ops) AS\n");
    /* One SELECT per object over both tiers: r is the UNION ALL of its 1m and 1h tables, which
     * SQLite flattens into one join per tier (the plans are those of a SELECT per tier). */
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        if (!(present & (UINT64_C(1) << o)))
            continue;
        sbuf_printf(b,
                    "%sSELECT r.tier, r.bucket_ms, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', "
                    "r.bucket_ms / 1000.0, 'unixepoch'), s.path, ",
                    first ? "" : "UNION ALL\n");
        sbuf_sql_quote(b, od->name);
        sbuf_printf(b, ", %s, ", od->single ? "NULL" : "i.name");
        counter_name_expr(b, od);
        sbuf_printf(b, ", r.n");
        rollup_case(b, od, "min");
        rollup_case(b, od, "avg");
        rollup_case(b, od, "max");
        rollup_ops(b, od);
        sbuf_printf(b,
                    "\n  FROM (SELECT '1m' AS tier, * FROM %s_1m UNION ALL SELECT '1h', * FROM "
                    "%s_1h) r JOIN instances i ON i.id = r.inst JOIN series s ON s.inst = r.inst "
                    "AND s.k < %zu\n",
                    od->table, od->table, od->ncounters);
        first = 0;
    }
    for (int tier = 0; tier < 2 && (present & (UINT64_C(1) << SCHEMA_PDH_TABLE)); tier++) {
        sbuf_printf(b, "%s", first ? "" : "UNION ALL\n");
        pdh_extra_rollups_view(b, tier ? "1h" : "1m");
        first = 0;
    }
    if (first)
        no_rows(b, 12);
    sbuf_printf(b, ";\n");
    return sbuf_ok(b) ? 0 : -1;
}

/* The test-only per-counter form of the views (schema_views_per_counter), as they were built
 * before they had one SELECT per object. */

/* The head of one counter's SELECT in counter_values: every column but the value, from `o`
 * (its t_ms and interval_ms from `tm`), instances i and series s. */
static void pc_values_head(struct sbuf *b, const struct object_def *od, const struct counter_def *c,
                           const char *tm, int first)
{
    sbuf_printf(b,
                "%sSELECT %s.t_ms, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', %s.t_ms / 1000.0, "
                "'unixepoch'), %s.interval_ms, s.path, ",
                first ? "" : "UNION ALL\n", tm, tm, tm);
    sbuf_sql_quote(b, od->name);
    sbuf_printf(b, ", %s, ", od->single ? "NULL" : "i.name");
    sbuf_sql_quote(b, c->name);
    sbuf_printf(b, ", ");
}

/*
 * The chunked rows of one counter: its series row first (by path or by instance and counter),
 * then chunk_series over that instance's chunks, which gives the ticks' t_ms and interval_ms
 * too, so that a filter on t_ms reaches it: it reads only the chunks whose span holds ticks of
 * that time, by the chunk table's index.
 */
static int pc_values_chunked(struct sbuf *b, const struct object_def *od, size_t k)
{
    pc_values_head(b, od, &od->counters[k], "o", 0);
    if (counter_expr_form(b, od, &od->counters[k], "o", "o.interval_ms", 1) < 0)
        return -1;
    chunked_from(b, od);
    sbuf_printf(b, "') r) o ON o.inst = s.inst\n  WHERE s.k = %zu AND i.object = ", k);
    sbuf_sql_quote(b, od->name);
    sbuf_printf(b, "\n");
    return 0;
}

int schema_views_per_counter(struct sbuf *b, uint64_t chunked, uint64_t present,
                             const char *values_name, const char *rollups_name)
{
    int first = 1;

    sbuf_printf(b,
                "CREATE TEMP VIEW %s (t_ms, time_utc, interval_ms, path, object, instance, "
                "counter, value) AS\n",
                values_name);
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];
        for (size_t k = 0; (present & (UINT64_C(1) << o)) && k < od->ncounters; k++) {
            /* the raw rows, then (when the object has any) the chunked ones */
            pc_values_head(b, od, &od->counters[k], "t", first);
            if (counter_expr_form(b, od, &od->counters[k], "o", "t.interval_ms", 1) < 0)
                return -1;
            sbuf_printf(
                b,
                "\n  FROM series s JOIN instances i ON i.id = s.inst CROSS JOIN %s o ON o.inst = "
                "s.inst AND o.tick >= " CHUNK_EDGE_SQL
                " JOIN ticks t ON t.id = o.tick\n  WHERE s.k = %zu AND i.object = ",
                od->table, k);
            /* The series row first (CROSS JOIN keeps it outside the raw table), so a filter
             * on path stops at the series index; without it SQLite scanned every raw table
             * whenever the time bound was open on one side (it cannot tell how many ticks that
             * leaves). The object test is always true of a row, but a series found by path
             * has this k in every object: it stops the other objects' SELECTs at once. */
            sbuf_sql_quote(b, od->name);
            sbuf_printf(b, "\n");
            if ((chunked & (UINT64_C(1) << o)) && pc_values_chunked(b, od, k) < 0)
                return -1;
            first = 0;
        }
    }
    values_tail(b, present, first);

    first = 1;
    sbuf_printf(b,
                "CREATE TEMP VIEW %s (tier, bucket_ms, time_utc, path, object, instance, "
                "counter, n, min, avg, max, ops) AS\n",
                rollups_name);
    for (int tier = 0; tier < 2; tier++) {
        const char *suffix = tier ? "1h" : "1m";
        for (int o = 0; o < OBJ_COUNT; o++) {
            const struct object_def *od = &counter_objects[o];
            for (size_t k = 0; (present & (UINT64_C(1) << o)) && k < od->ncounters; k++) {
                const struct counter_def *c = &od->counters[k];
                sbuf_printf(b,
                            "%sSELECT '%s', r.bucket_ms, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', "
                            "r.bucket_ms / 1000.0, 'unixepoch'), ",
                            first ? "" : "UNION ALL\n", suffix);
                sbuf_printf(b, "s.path, ");
                sbuf_sql_quote(b, od->name);
                sbuf_printf(b, ", %s, ", od->single ? "NULL" : "i.name");
                sbuf_sql_quote(b, c->name);
                sbuf_printf(b, ", r.n, r." RC "_min, r." RC "_avg, r." RC "_max", k, k, k);
                if (c->flags & CF_PER_OP)
                    sbuf_printf(b, ", r." RC "_ops", k);
                else
                    sbuf_printf(b, ", NULL");
                sbuf_printf(b,
                            "\n  FROM %s_%s r JOIN instances i ON i.id = r.inst JOIN series s ON "
                            "s.inst = r.inst AND s.k = %zu\n",
                            od->table, suffix, k);
                first = 0;
            }
        }
        if (present & (UINT64_C(1) << SCHEMA_PDH_TABLE)) {
            sbuf_printf(b, "%s", first ? "" : "UNION ALL\n");
            pdh_extra_rollups_view(b, suffix);
            first = 0;
        }
    }
    if (first)
        no_rows(b, 12);
    sbuf_printf(b, ";\n");
    return sbuf_ok(b) ? 0 : -1;
}

/* The weight of per-operation counter k's average in a row (`p`: "" or "excluded."): its
 * operations; a row written before the roll-ups kept them (NULL) counts its ticks. */
static void ops_w(struct sbuf *b, size_t k, const char *p)
{
    sbuf_printf(b, "coalesce(%s" RC "_ops,%sn)", p, k, p);
}

/* Per-operation counter k's merged average: weighted by the operations of each side. */
static void merge_per_op(struct sbuf *b, size_t k)
{
    sbuf_printf(b,
                ",\n  " RC "_avg = CASE WHEN " RC "_avg IS NULL THEN excluded." RC
                "_avg WHEN excluded." RC "_avg IS NULL THEN " RC "_avg WHEN ",
                k, k, k, k, k);
    ops_w(b, k, "");
    sbuf_printf(b, "+");
    ops_w(b, k, "excluded.");
    sbuf_printf(b, "=0 THEN 0.0 ELSE (" RC "_avg*", k);
    ops_w(b, k, "");
    sbuf_printf(b, "+excluded." RC "_avg*", k);
    ops_w(b, k, "excluded.");
    sbuf_printf(b, ")/(");
    ops_w(b, k, "");
    sbuf_printf(b, "+");
    ops_w(b, k, "excluded.");
    sbuf_printf(b, ") END");
    sbuf_printf(b,
                ",\n  " RC "_ops = CASE WHEN " RC "_ops IS NULL THEN excluded." RC
                "_ops WHEN excluded." RC "_ops IS NULL THEN " RC "_ops ELSE " RC
                "_ops + excluded." RC "_ops END",
                k, k, k, k, k, k, k);
}

/* Per-operation counter k's average over an hour of minute rows, weighted by their operations
 * (as rollup_obj_add_bucket). */
static void hour_per_op(struct sbuf *b, size_t k)
{
    sbuf_printf(b,
                ",\n  min(" RC "_min), CASE WHEN count(" RC
                "_avg)>0 THEN CASE WHEN total(CASE WHEN " RC "_avg IS NOT NULL THEN ",
                k, k, k);
    ops_w(b, k, "");
    sbuf_printf(b, " END)=0 THEN 0.0 ELSE total(" RC "_avg*", k);
    ops_w(b, k, "");
    sbuf_printf(b, ")/total(CASE WHEN " RC "_avg IS NOT NULL THEN ", k);
    ops_w(b, k, "");
    sbuf_printf(b, " END) END END, max(" RC "_max)", k);
}

static void merge_clause(struct sbuf *b, const struct object_def *od)
{
    sbuf_printf(b, "ON CONFLICT (bucket_ms, inst) DO UPDATE SET n = n + excluded.n");
    for (size_t k = 0; k < od->ncounters; k++) {
        sbuf_printf(b,
                    ",\n  " RC "_min = coalesce(min(" RC "_min, excluded." RC "_min), " RC
                    "_min, excluded." RC "_min)",
                    k, k, k, k, k);
        sbuf_printf(b,
                    ",\n  " RC "_max = coalesce(max(" RC "_max, excluded." RC "_max), " RC
                    "_max, excluded." RC "_max)",
                    k, k, k, k, k);
        if (od->counters[k].flags & CF_PER_OP) {
            merge_per_op(b, k);
            continue;
        }
        sbuf_printf(b,
                    ",\n  " RC "_avg = CASE WHEN " RC "_avg IS NULL THEN excluded." RC
                    "_avg WHEN excluded." RC "_avg IS NULL THEN " RC "_avg ELSE (" RC
                    "_avg * n + excluded." RC "_avg * excluded.n) / (n + excluded.n) END",
                    k, k, k, k, k, k, k);
    }
    sbuf_printf(b, ";\n");
}

static void insert_head(struct sbuf *b, const struct object_def *od, const char *suffix)
{
    sbuf_printf(b, "INSERT INTO %s_%s (bucket_ms, inst, n", od->table, suffix);
    for (size_t k = 0; k < od->ncounters; k++)
        sbuf_printf(b, ", " RC "_min, " RC "_avg, " RC "_max", k, k, k);
    for (size_t k = 0; k < od->ncounters; k++)
        if (od->counters[k].flags & CF_PER_OP)
            sbuf_printf(b, ", " RC "_ops", k);
    sbuf_printf(b, ")\n");
}

/* ",\n  <avg>" (ops 0) or ",\n  <ops>" (ops 1) of per-operation counter c over the rows o of
 * one bucket (counter_per_op_sql). */
static int per_op_sql(struct sbuf *b, const struct object_def *od, const struct counter_def *c,
                      int ops)
{
    char avg[4096], tot[2048];

    if (counter_per_op_sql(od, c, "o", avg, sizeof(avg), tot, sizeof(tot)) < 0)
        return -1;
    sbuf_printf(b, ",\n  %s", ops ? tot : avg);
    return 0;
}

int schema_rollup_minute(struct sbuf *b, int obj)
{
    const struct object_def *od;

    if (obj == SCHEMA_PDH_TABLE) {
        pdh_extra_rollup_minute(b);
        return sbuf_ok(b) ? 0 : -1;
    }
    od = &counter_objects[obj];

    insert_head(b, od, "1m");
    sbuf_printf(b, "SELECT (t.t_ms / 60000) * 60000, o.inst, count(*)");
    for (size_t k = 0; k < od->ncounters; k++) {
        const char *agg[] = {"min", "avg", "max"};
        for (int a = 0; a < 3; a++) {
            if (a == 1 && (od->counters[k].flags & CF_PER_OP)) {
                if (per_op_sql(b, od, &od->counters[k], 0) < 0)
                    return -1;
                continue;
            }
            sbuf_printf(b, ",\n  %s(", agg[a]);
            if (counter_expr(b, od, &od->counters[k]) < 0)
                return -1;
            sbuf_printf(b, ")");
        }
    }
    for (size_t k = 0; k < od->ncounters; k++)
        if ((od->counters[k].flags & CF_PER_OP) && per_op_sql(b, od, &od->counters[k], 1) < 0)
            return -1;
    sbuf_printf(b,
                "\nFROM %s o JOIN ticks t ON t.id = o.tick\nWHERE o.tick > ?1 AND o.tick <= ?2\n"
                "GROUP BY 1, 2\n",
                od->table);
    merge_clause(b, od);
    return sbuf_ok(b) ? 0 : -1;
}

int schema_rollup_values(struct sbuf *b, int obj, const char *suffix)
{
    const struct object_def *od = &counter_objects[obj];

    insert_head(b, od, suffix);
    sbuf_printf(b, "VALUES (?, ?, ?");
    for (size_t k = 0; k < od->ncounters; k++)
        sbuf_printf(b, ", ?, ?, ?");
    for (size_t k = 0; k < od->ncounters; k++)
        if (od->counters[k].flags & CF_PER_OP)
            sbuf_printf(b, ", ?");
    sbuf_printf(b, ")\n");
    merge_clause(b, od);
    return sbuf_ok(b) ? 0 : -1;
}

int schema_rollup_hour(struct sbuf *b, int obj)
{
    const struct object_def *od;

    if (obj == SCHEMA_PDH_TABLE) {
        pdh_extra_rollup_hour(b);
        return sbuf_ok(b) ? 0 : -1;
    }
    od = &counter_objects[obj];

    /* The minutes of [?1, ?2) as a table, joined on the primary key: a slice of instances
     * [?3, ?4) reads its own rows only, each minute's in key order as a whole-range scan would. */
    sbuf_printf(b, "WITH RECURSIVE m(b) AS (SELECT ?1 UNION ALL SELECT b + 60000 FROM m WHERE b + "
                   "60000 < ?2)\n");
    insert_head(b, od, "1h");
    sbuf_printf(b, "SELECT (bucket_ms / 3600000) * 3600000, inst, sum(n)");
    for (size_t k = 0; k < od->ncounters; k++) {
        if (od->counters[k].flags & CF_PER_OP) {
            hour_per_op(b, k);
            continue;
        }
        sbuf_printf(b,
                    ",\n  min(" RC "_min), sum(" RC "_avg * n) / sum(CASE WHEN " RC
                    "_avg IS NOT NULL THEN n END), max(" RC "_max)",
                    k, k, k, k);
    }
    for (size_t k = 0; k < od->ncounters; k++)
        if (od->counters[k].flags & CF_PER_OP)
            sbuf_printf(b, ",\n  CASE WHEN count(" RC "_ops)>0 THEN total(" RC "_ops) END", k, k);
    sbuf_printf(b,
                "\nFROM m JOIN %s_1m ON bucket_ms = m.b WHERE inst >= ?3 AND inst < ?4\n"
                "GROUP BY 1, 2\n",
                od->table);
    merge_clause(b, od);
    return sbuf_ok(b) ? 0 : -1;
}

/*
 * The compressed tier of the ticks: one row per span of tick ids (the object tables' spans), one
 * chunk (chunk.h) each of t_ms, interval_ms and missed over the span's tick ids. A regular tick
 * (t_ms on the grid, interval_ms = 1000, missed = 0) codes to a few bytes a span, where a plain
 * tick costs a row and an index entry. min_t_ms and max_t_ms bound the times inside (a wall
 * clock stepped back puts them out of order), and their index finds the spans of a time range.
 */
void schema_ticks_tables(struct sbuf *b)
{
    sbuf_printf(b, "CREATE TABLE IF NOT EXISTS ticks_chunks (\n"
                   "  first_id INTEGER PRIMARY KEY,\n"
                   "  last_id INTEGER NOT NULL,\n"
                   "  min_t_ms INTEGER NOT NULL,\n"
                   "  max_t_ms INTEGER NOT NULL,\n"
                   "  t_ms BLOB NOT NULL,\n"
                   "  interval_ms BLOB NOT NULL,\n"
                   "  missed BLOB NOT NULL\n);\n"
                   "CREATE INDEX IF NOT EXISTS ticks_chunks_t_ms ON ticks_chunks (max_t_ms, "
                   "min_t_ms);\n");
}

void schema_ticks_view(struct sbuf *b, int chunked)
{
    sbuf_printf(b, "DROP VIEW IF EXISTS ticks_all;\n"
                   "CREATE VIEW ticks_all (id, t_ms, interval_ms, missed) AS\n"
                   "SELECT id, t_ms, interval_ms, missed FROM ticks");
    if (chunked)
        sbuf_printf(b, "\nUNION ALL\nSELECT r.tick, r.v0, r.v1, r.v2 FROM ticks_chunks c, "
                       "chunk_rows(c.t_ms, c.interval_ms, c.missed) r");
    sbuf_printf(b, ";\n");
}
