/*
 * chunk_sql.c - chunk_encode() and chunk_points() in SQL; see chunk_sql.h.
 *
 * Built twice from this one file: into perflog_core against the SQLite library, and with
 * PERFLOG_SQLITE_EXTENSION into the loadable extension, where SQLite's API comes through the
 * pointer table that sqlite3ext.h sets up (https://www.sqlite.org/loadext.html). The loadable
 * entry point's name follows from the file name perflog_chunk.so: sqlite3_perflogchunk_init.
 *
 * chunk_points is an eponymous-only virtual table (https://www.sqlite.org/vtab.html, "table-valued
 * functions"): its hidden column `data` is the argument, and a plan without it is refused.
 */
#ifdef PERFLOG_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include "storage/chunk.h"
#include "storage/chunk_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- chunk_encode(tick, value): the aggregate ---- */

struct enc_state {
    size_t n, cap;
    int64_t *ticks, *values;
    uint8_t *present;
    int failed; /* an error was already reported */
};

static int enc_grow(struct enc_state *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    int64_t *t = realloc(s->ticks, cap * sizeof *t), *v;
    uint8_t *p;

    if (!t)
        return -1;
    s->ticks = t;
    v = realloc(s->values, cap * sizeof *v);
    if (!v)
        return -1;
    s->values = v;
    p = realloc(s->present, cap);
    if (!p)
        return -1;
    s->present = p;
    s->cap = cap;
    return 0;
}

static void enc_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct enc_state *s = sqlite3_aggregate_context(ctx, sizeof *s);
    int64_t tick;

    (void)argc;
    if (!s) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (s->failed)
        return;
    if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER ||
        (sqlite3_value_type(argv[1]) != SQLITE_INTEGER &&
         sqlite3_value_type(argv[1]) != SQLITE_NULL)) {
        s->failed = 1;
        sqlite3_result_error(ctx, "chunk_encode: tick must be an integer, value an integer or NULL",
                             -1);
        return;
    }
    tick = sqlite3_value_int64(argv[0]);
    if (s->n > 0 && tick <= s->ticks[s->n - 1]) {
        s->failed = 1;
        sqlite3_result_error(
            ctx, "chunk_encode: ticks must increase (aggregate over rows ordered by tick)", -1);
        return;
    }
    if (s->n == CHUNK_MAX_POINTS) {
        s->failed = 1;
        sqlite3_result_error(ctx, "chunk_encode: more than 65536 points in one chunk", -1);
        return;
    }
    if (s->n == s->cap && enc_grow(s) != 0) {
        s->failed = 1;
        sqlite3_result_error_nomem(ctx);
        return;
    }
    s->ticks[s->n] = tick;
    s->present[s->n] = sqlite3_value_type(argv[1]) != SQLITE_NULL;
    s->values[s->n] = s->present[s->n] ? sqlite3_value_int64(argv[1]) : 0;
    s->n++;
}

static void enc_final(sqlite3_context *ctx)
{
    struct enc_state *s = sqlite3_aggregate_context(ctx, 0);
    struct chunk_points p;
    uint8_t *buf = NULL;
    size_t len = 0;

    if (!s || s->n == 0) {
        if (!(s && s->failed))
            sqlite3_result_null(ctx);
        goto out;
    }
    if (s->failed)
        goto out;
    p = (struct chunk_points){
        .n = s->n, .ticks = s->ticks, .values = s->values, .present = s->present};
    if (chunk_encode(&p, &buf, &len) != 0)
        sqlite3_result_error(ctx, "chunk_encode: cannot encode (ticks more than 2^63 apart?)", -1);
    else
        sqlite3_result_blob64(ctx, buf, len, free);
out:
    if (s) {
        free(s->ticks);
        free(s->values);
        free(s->present);
    }
}

/* ---- chunk_points(data): the table-valued function ---- */

enum { COL_TICK, COL_VALUE, COL_DATA };

struct pts_cursor {
    sqlite3_vtab_cursor base;
    struct chunk_points p;
    size_t i;
};

static int pts_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                       sqlite3_vtab **out, char **err)
{
    sqlite3_vtab *vt;
    int rc;

    (void)aux;
    (void)argc;
    (void)argv;
    (void)err;
    rc = sqlite3_declare_vtab(db, "CREATE TABLE x(tick INTEGER, value INTEGER, data HIDDEN)");
    if (rc != SQLITE_OK)
        return rc;
    vt = sqlite3_malloc(sizeof *vt);
    if (!vt)
        return SQLITE_NOMEM;
    memset(vt, 0, sizeof *vt);
    *out = vt;
    return SQLITE_OK;
}

static int pts_disconnect(sqlite3_vtab *vt)
{
    sqlite3_free(vt);
    return SQLITE_OK;
}

static int pts_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    (void)vt;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];

        if (c->iColumn == COL_DATA && c->op == SQLITE_INDEX_CONSTRAINT_EQ && c->usable) {
            info->aConstraintUsage[i].argvIndex = 1;
            info->aConstraintUsage[i].omit = 1;
            info->estimatedCost = 600;
            info->estimatedRows = 600;
            info->idxNum = 1;
            /* the points come out in tick order */
            if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == COL_TICK &&
                !info->aOrderBy[0].desc)
                info->orderByConsumed = 1;
            return SQLITE_OK;
        }
    }
    /* without its argument there is nothing to list: let the planner put it after the table
     * that supplies `data`, or fail with "no query solution" */
    return SQLITE_CONSTRAINT;
}

/* A zeroed cursor of `size` bytes, for either table-valued function. */
static int cursor_open(sqlite3_vtab *vt, size_t size, sqlite3_vtab_cursor **out)
{
    sqlite3_vtab_cursor *c = sqlite3_malloc64(size);

    (void)vt;
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, size);
    *out = c;
    return SQLITE_OK;
}

static int pts_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    return cursor_open(vt, sizeof(struct pts_cursor), out);
}

static void pts_clear(struct pts_cursor *c)
{
    free(c->p.ticks);
    free(c->p.values);
    free(c->p.present);
    memset(&c->p, 0, sizeof c->p);
    c->i = 0;
}

static int pts_close(sqlite3_vtab_cursor *cur)
{
    struct pts_cursor *c = (struct pts_cursor *)cur;

    pts_clear(c);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* Decode chunk `v` into `p` (arrays malloc'ed, the caller frees them). Returns 0, 1 for a NULL
 * argument (no points), -1 when `v` is no chunk, -2 out of memory. */
static int points_decode(struct chunk_points *p, sqlite3_value *v)
{
    const uint8_t *buf;
    size_t len;
    long n;

    if (sqlite3_value_type(v) == SQLITE_NULL)
        return 1;
    if (sqlite3_value_type(v) != SQLITE_BLOB)
        return -1;
    buf = sqlite3_value_blob(v);
    len = (size_t)sqlite3_value_bytes(v);
    n = chunk_count(buf, len);
    if (n <= 0)
        return -1;
    p->ticks = malloc((size_t)n * sizeof *p->ticks);
    p->values = malloc((size_t)n * sizeof *p->values);
    p->present = malloc((size_t)n);
    if (!p->ticks || !p->values || !p->present)
        return -2;
    return chunk_decode(buf, len, p, (size_t)n) == 0 ? 0 : -1;
}

static int pts_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                      sqlite3_value **argv)
{
    struct pts_cursor *c = (struct pts_cursor *)cur;
    int rc;

    (void)idx_str;
    pts_clear(c);
    if (idx_num != 1 || argc < 1)
        return SQLITE_OK;
    rc = points_decode(&c->p, argv[0]);
    if (rc >= 0)
        return SQLITE_OK; /* a NULL chunk has no points */
    pts_clear(c);
    if (rc == -2)
        return SQLITE_NOMEM;
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg =
        sqlite3_mprintf("chunk_points: not a chunk (a BLOB made by chunk_encode)");
    return SQLITE_ERROR;
}

static int pts_next(sqlite3_vtab_cursor *cur)
{
    ((struct pts_cursor *)cur)->i++;
    return SQLITE_OK;
}

static int pts_eof(sqlite3_vtab_cursor *cur)
{
    struct pts_cursor *c = (struct pts_cursor *)cur;

    return c->i >= c->p.n;
}

static int pts_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    struct pts_cursor *c = (struct pts_cursor *)cur;

    if (col == COL_TICK)
        sqlite3_result_int64(ctx, c->p.ticks[c->i]);
    else if (col == COL_VALUE && c->p.present[c->i])
        sqlite3_result_int64(ctx, c->p.values[c->i]);
    else
        sqlite3_result_null(ctx);
    return SQLITE_OK;
}

static int pts_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
    *rowid = (sqlite_int64)((struct pts_cursor *)cur)->i;
    return SQLITE_OK;
}

static const sqlite3_module pts_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous-only: no CREATE VIRTUAL TABLE */
    .xConnect = pts_connect,
    .xBestIndex = pts_best_index,
    .xDisconnect = pts_disconnect,
    .xDestroy = pts_disconnect,
    .xOpen = pts_open,
    .xClose = pts_close,
    .xFilter = pts_filter,
    .xNext = pts_next,
    .xEof = pts_eof,
    .xColumn = pts_column,
    .xRowid = pts_rowid,
};

/* ---- chunk_rows(d0, d1, ...): the chunks of one chunk-table row, side by side ---- */

/*
 * A chunk table holds one chunk per raw column of an instance, all over the same ticks;
 * chunk_rows gives them back as rows (tick, v0, v1, ...), one per tick, so a view rebuilds the
 * raw table's rows without joining one chunk_points per column on the tick (which would decode
 * every column again for every point). An argument left out or NULL gives a column of NULLs.
 *
 * Its t_ms and interval_ms columns are NULL: chunk_series (below), which shares this cursor,
 * fills them.
 */
#define ROWS_MAX_COLS 16

enum { ROWS_COL_TICK = 0, ROWS_COL_T_MS = 1 + ROWS_MAX_COLS, ROWS_COL_INTERVAL, ROWS_COL_D0 };

/* idxNum: bits 0..15 the chunk arguments given (chunk_rows), then these (chunk_series) */
#define ROWS_SPAN  (1 << ROWS_MAX_COLS)       /* times mode: read the span's ticks */
#define ROWS_T_MIN (1 << (ROWS_MAX_COLS + 1)) /* a lower bound on t_ms given */
#define ROWS_T_MAX (1 << (ROWS_MAX_COLS + 2)) /* an upper bound on t_ms given */

struct rows_vtab {
    sqlite3_vtab base;
    sqlite3 *db; /* for the reads of `ticks` */
};

struct rows_cursor {
    sqlite3_vtab_cursor base;
    struct chunk_points p[ROWS_MAX_COLS];
    const int64_t *ticks; /* of the first non-NULL chunk: they are the same in all */
    size_t n, i;
    /* times mode (ROWS_SPAN): t_ms and interval_ms of point j, and whether its tick exists */
    int64_t *t_ms, *interval_ms;
    uint8_t *has_tick, *has_interval;
    sqlite3_stmt *span_st, *range_st;   /* prepared on first use, kept for the statement */
    sqlite3_stmt *tspan_st, *trange_st; /* the same over ticks_chunks */
    int tchunks;                        /* ticks_chunks: 0 not looked yet, 1 exists, -1 not */
    int64_t range_lo_ms, range_hi_ms;   /* the time range range_lo..range_hi was found for */
    int64_t range_lo, range_hi;         /* tick ids of that time; lo > hi: none */
    int have_range;
    int idx_num; /* of the last xFilter */
    /* The arguments, by hidden column: SQLite can leave out (omit) only its first 16
     * constraints' own checks, so with more arguments it compares the rest with what xColumn
     * gives for these columns on every row. */
    sqlite3_value *arg[ROWS_MAX_COLS];
    sqlite3_stmt *chunks_st; /* chunk_series: the instance's chunk rows in the time */
};

/* Declare the table of chunk_rows or chunk_series: tick, v0..v15, t_ms, interval_ms, then the
 * hidden columns; `series` says which. */
static int rows_declare(sqlite3 *db, int series, sqlite3_vtab **out)
{
    char decl[1024];
    size_t len;
    struct rows_vtab *vt;
    int rc;

    len = (size_t)snprintf(decl, sizeof decl, "CREATE TABLE x(tick INTEGER");
    for (int k = 0; k < ROWS_MAX_COLS; k++)
        len += (size_t)snprintf(decl + len, sizeof decl - len, ", v%d INTEGER", k);
    len += (size_t)snprintf(decl + len, sizeof decl - len, ", t_ms INTEGER, interval_ms INTEGER");
    for (int k = 0; k < ROWS_MAX_COLS && !series; k++)
        len += (size_t)snprintf(decl + len, sizeof decl - len, ", d%d HIDDEN", k);
    snprintf(decl + len, sizeof decl - len, "%s)",
             series ? ", tbl HIDDEN, cols HIDDEN, inst HIDDEN" : "");
    rc = sqlite3_declare_vtab(db, decl);
    if (rc != SQLITE_OK)
        return rc;
    vt = sqlite3_malloc(sizeof *vt);
    if (!vt)
        return SQLITE_NOMEM;
    memset(vt, 0, sizeof *vt);
    vt->db = db;
    *out = &vt->base;
    return SQLITE_OK;
}

static int rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **err)
{
    (void)aux;
    (void)argc;
    (void)argv;
    (void)err;
    return rows_declare(db, 0, out);
}

/* The constraint of column `col` with operator `op` in `info`: its index, -1 when there is
 * none, -2 when there is one that is not usable yet. */
static int rows_find(const sqlite3_index_info *info, int col, int op)
{
    int found = -1;

    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];

        if (c->iColumn != col || c->op != op)
            continue;
        if (c->usable)
            return i;
        found = -2;
    }
    return found;
}

/* A usable bound on t_ms of one of the two operators: its index or -1. */
static int rows_bound(const sqlite3_index_info *info, int op1, int op2)
{
    int i = rows_find(info, ROWS_COL_T_MS, op1);

    if (i < 0)
        i = rows_find(info, ROWS_COL_T_MS, op2);
    if (i < 0)
        i = rows_find(info, ROWS_COL_T_MS, SQLITE_INDEX_CONSTRAINT_EQ);
    return i < 0 ? -1 : i;
}

static int rows_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    int mask = 0, nargs = 0;

    (void)vt;
    /* idxNum: bit k set when argument k is given; xFilter gets them in argument order */
    for (int k = 0; k < ROWS_MAX_COLS; k++) {
        int i = rows_find(info, ROWS_COL_D0 + k, SQLITE_INDEX_CONSTRAINT_EQ);

        if (i == -2)
            return SQLITE_CONSTRAINT; /* wait for the table that supplies it */
        if (i < 0)
            continue;
        info->aConstraintUsage[i].argvIndex = ++nargs;
        info->aConstraintUsage[i].omit = 1;
        mask |= 1 << k;
    }
    if (!mask)
        return SQLITE_CONSTRAINT;
    info->idxNum = mask;
    info->estimatedCost = 600;
    info->estimatedRows = 600;
    if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == ROWS_COL_TICK &&
        !info->aOrderBy[0].desc)
        info->orderByConsumed = 1;
    return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    return cursor_open(vt, sizeof(struct rows_cursor), out);
}

/* Drop the decoded chunk (not the arguments). */
static void rows_clear_points(struct rows_cursor *c)
{
    for (int k = 0; k < ROWS_MAX_COLS; k++) {
        free(c->p[k].ticks);
        free(c->p[k].values);
        free(c->p[k].present);
    }
    memset(c->p, 0, sizeof c->p);
    free(c->t_ms);
    free(c->interval_ms);
    free(c->has_tick);
    free(c->has_interval);
    c->t_ms = c->interval_ms = NULL;
    c->has_tick = c->has_interval = NULL;
    c->ticks = NULL;
    c->n = c->i = 0;
}

static void rows_clear(struct rows_cursor *c)
{
    rows_clear_points(c);
    for (int k = 0; k < ROWS_MAX_COLS; k++) {
        sqlite3_value_free(c->arg[k]);
        c->arg[k] = NULL;
    }
}

/* Keep argument `v` of hidden column `col` for xColumn: 0, or -1 out of memory. */
static int rows_keep(struct rows_cursor *c, int col, sqlite3_value *v)
{
    c->arg[col - ROWS_COL_D0] = sqlite3_value_dup(v);
    return c->arg[col - ROWS_COL_D0] ? 0 : -1;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;

    rows_clear(c);
    sqlite3_finalize(c->span_st);
    sqlite3_finalize(c->range_st);
    sqlite3_finalize(c->tspan_st);
    sqlite3_finalize(c->trange_st);
    sqlite3_finalize(c->chunks_st);
    sqlite3_free(c);
    return SQLITE_OK;
}

static int rows_error(struct rows_cursor *c, const char *msg)
{
    rows_clear(c);
    sqlite3_free(c->base.pVtab->zErrMsg);
    c->base.pVtab->zErrMsg = sqlite3_mprintf("%s", msg);
    return SQLITE_ERROR;
}

static int rows_sql_error(struct rows_cursor *c)
{
    rows_clear(c);
    sqlite3_free(c->base.pVtab->zErrMsg);
    c->base.pVtab->zErrMsg =
        sqlite3_mprintf("chunk_rows: %s", sqlite3_errmsg(((struct rows_vtab *)c->base.pVtab)->db));
    return SQLITE_ERROR;
}

/* A bound on t_ms as an integer, rounded outwards (lower: down, upper: up): 0, or -1 when it
 * is no number (it prunes nothing then). */
static int rows_bound_value(sqlite3_value *v, int upper, int64_t *out)
{
    double d;

    switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_INTEGER:
        *out = sqlite3_value_int64(v);
        return 0;
    case SQLITE_FLOAT:
        d = sqlite3_value_double(v);
        if (d != d)
            return -1;
        if (d <= -9.2e18)
            *out = INT64_MIN;
        else if (d >= 9.2e18)
            *out = INT64_MAX;
        else
            *out = (int64_t)d + (upper ? 1 : -1);
        return 0;
    default:
        return -1;
    }
}

static int rows_prepare(struct rows_cursor *c, sqlite3_stmt **st, const char *sql)
{
    if (*st)
        return sqlite3_reset(*st) == SQLITE_OK ? 0 : -1;
    return sqlite3_prepare_v2(((struct rows_vtab *)c->base.pVtab)->db, sql, -1, st, NULL) ==
                   SQLITE_OK
               ? 0
               : -1;
}

/* 1 when the database has the table ticks_chunks (a file of schema version 5 or older, read
 * with this extension in the shell, has not), 0 when not, -1 on error; looked up once. */
static int rows_have_tchunks(struct rows_cursor *c)
{
    sqlite3_stmt *st;
    int rc;

    if (c->tchunks)
        return c->tchunks > 0;
    if (sqlite3_prepare_v2(((struct rows_vtab *)c->base.pVtab)->db,
                           "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                           "'ticks_chunks'",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return -1;
    c->tchunks = rc == SQLITE_ROW ? 1 : -1;
    return c->tchunks > 0;
}

/*
 * Widen c->range_lo..range_hi to the ids of every ticks chunk that may hold a tick of
 * lo_ms..hi_ms (its min_t_ms..max_t_ms overlaps them): a few ids more than the exact ones at
 * either end, which is enough, since SQLite still checks the bounds on t_ms of every row.
 */
static int rows_range_chunks(struct rows_cursor *c, int64_t lo_ms, int64_t hi_ms)
{
    int have = rows_have_tchunks(c);

    if (have <= 0)
        return have;
    if (rows_prepare(c, &c->trange_st,
                     "SELECT min(first_id), max(last_id) FROM ticks_chunks WHERE max_t_ms >= ?1 "
                     "AND min_t_ms <= ?2") != 0)
        return -1;
    sqlite3_bind_int64(c->trange_st, 1, lo_ms);
    sqlite3_bind_int64(c->trange_st, 2, hi_ms);
    if (sqlite3_step(c->trange_st) != SQLITE_ROW)
        return -1;
    if (sqlite3_column_type(c->trange_st, 0) != SQLITE_NULL) {
        int64_t lo = sqlite3_column_int64(c->trange_st, 0);
        int64_t hi = sqlite3_column_int64(c->trange_st, 1);

        if (c->range_lo > c->range_hi) {
            c->range_lo = lo;
            c->range_hi = hi;
        } else {
            c->range_lo = lo < c->range_lo ? lo : c->range_lo;
            c->range_hi = hi > c->range_hi ? hi : c->range_hi;
        }
    }
    sqlite3_reset(c->trange_st);
    return 0;
}

/* c->range_lo..range_hi: the ids of the ticks of lo_ms..hi_ms, plain or chunked (a few more at
 * the ends), kept while the bounds stay. */
static int rows_range(struct rows_cursor *c, int64_t lo_ms, int64_t hi_ms)
{
    if (c->have_range && c->range_lo_ms == lo_ms && c->range_hi_ms == hi_ms)
        return 0;
    if (rows_prepare(c, &c->range_st,
                     "SELECT min(id), max(id) FROM ticks WHERE t_ms BETWEEN ?1 AND ?2") != 0)
        return -1;
    sqlite3_bind_int64(c->range_st, 1, lo_ms);
    sqlite3_bind_int64(c->range_st, 2, hi_ms);
    if (sqlite3_step(c->range_st) != SQLITE_ROW)
        return -1;
    if (sqlite3_column_type(c->range_st, 0) == SQLITE_NULL) {
        c->range_lo = 1;
        c->range_hi = 0;
    } else {
        c->range_lo = sqlite3_column_int64(c->range_st, 0);
        c->range_hi = sqlite3_column_int64(c->range_st, 1);
    }
    sqlite3_reset(c->range_st);
    if (rows_range_chunks(c, lo_ms, hi_ms) != 0)
        return -1;
    c->range_lo_ms = lo_ms;
    c->range_hi_ms = hi_ms;
    c->have_range = 1;
    return 0;
}

/* c->range_lo..range_hi from the bounds on t_ms in argv[b..argc) that idx_num announces (a
 * missing or non-numeric bound is open; t_ms = X is one argument for both). 0 or -1. */
static int rows_time_range(struct rows_cursor *c, int idx_num, sqlite3_value **argv, int b,
                           int argc)
{
    int64_t lo_ms = INT64_MIN, hi_ms = INT64_MAX;

    if (!(idx_num & (ROWS_T_MIN | ROWS_T_MAX)))
        return 0;
    if ((idx_num & ROWS_T_MIN) && b < argc && rows_bound_value(argv[b++], 0, &lo_ms) != 0)
        lo_ms = INT64_MIN;
    if ((idx_num & ROWS_T_MAX) && (idx_num & ROWS_T_MIN) && b == argc)
        b--;
    if ((idx_num & ROWS_T_MAX) && b < argc && rows_bound_value(argv[b], 1, &hi_ms) != 0)
        hi_ms = INT64_MAX;
    return rows_range(c, lo_ms, hi_ms);
}

/* Decode the t_ms and interval_ms chunks of one ticks_chunks row (columns 2 and 3 of `st`)
 * into `t` and `iv`, whose arrays this allocates. 0, -1 not a chunk or the two differ, -2. */
static int rows_tick_chunk(sqlite3_stmt *st, struct chunk_points *t, struct chunk_points *iv)
{
    int rc = points_decode(t, sqlite3_column_value(st, 2));

    if (rc == 0)
        rc = points_decode(iv, sqlite3_column_value(st, 3));
    if (rc > 0 ||
        (rc == 0 && (t->n != iv->n || memcmp(t->ticks, iv->ticks, t->n * sizeof *t->ticks) != 0)))
        rc = -1;
    return rc;
}

/*
 * The times of the points not found among the plain ticks, from the ticks chunks of ids
 * first..last: the chunk that holds `first` (the last to start at or before it) and those that
 * start up to `last`, in id order, as the points are.
 */
static int rows_times_chunks(struct rows_cursor *c, int64_t first, int64_t last)
{
    size_t j = 0;
    int rc, have = rows_have_tchunks(c);

    if (have <= 0)
        return have;
    if (rows_prepare(c, &c->tspan_st,
                     "SELECT first_id, last_id, t_ms, interval_ms FROM ticks_chunks WHERE "
                     "first_id BETWEEN coalesce((SELECT max(first_id) FROM ticks_chunks WHERE "
                     "first_id <= ?1), ?1) AND ?2 ORDER BY first_id") != 0)
        return -1;
    sqlite3_bind_int64(c->tspan_st, 1, first);
    sqlite3_bind_int64(c->tspan_st, 2, last);
    while (j < c->n && (rc = sqlite3_step(c->tspan_st)) == SQLITE_ROW) {
        struct chunk_points t = {0}, iv = {0};

        if (sqlite3_column_int64(c->tspan_st, 1) < first)
            continue;
        rc = rows_tick_chunk(c->tspan_st, &t, &iv);
        for (size_t k = 0; rc == 0 && k < t.n && j < c->n; k++) {
            while (j < c->n && c->ticks[j] < t.ticks[k])
                j++;
            if (j < c->n && c->ticks[j] == t.ticks[k]) {
                c->has_tick[j] = 1;
                c->t_ms[j] = t.values[k];
                c->has_interval[j] = iv.present[k];
                c->interval_ms[j] = iv.values[k];
            }
        }
        free(t.ticks);
        free(t.values);
        free(t.present);
        free(iv.ticks);
        free(iv.values);
        free(iv.present);
        if (rc < 0) {
            sqlite3_reset(c->tspan_st);
            return rc;
        }
        rc = SQLITE_ROW;
    }
    rc = j < c->n && rc != SQLITE_DONE ? -1 : 0;
    sqlite3_reset(c->tspan_st);
    return rc;
}

/* The times of the decoded points from `ticks` (ids first..last), then from ticks_chunks for
 * those not found there: all are in id order. */
static int rows_times(struct rows_cursor *c, int64_t first, int64_t last)
{
    size_t j = 0;
    int rc;

    c->t_ms = malloc(c->n * sizeof *c->t_ms);
    c->interval_ms = malloc(c->n * sizeof *c->interval_ms);
    c->has_tick = calloc(c->n, 1);
    c->has_interval = calloc(c->n, 1);
    if (!c->t_ms || !c->interval_ms || !c->has_tick || !c->has_interval)
        return -2;
    if (rows_prepare(c, &c->span_st,
                     "SELECT id, t_ms, interval_ms FROM ticks WHERE id BETWEEN ?1 AND ?2 "
                     "ORDER BY id") != 0)
        return -1;
    sqlite3_bind_int64(c->span_st, 1, first);
    sqlite3_bind_int64(c->span_st, 2, last);
    while (j < c->n && (rc = sqlite3_step(c->span_st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(c->span_st, 0);

        while (j < c->n && c->ticks[j] < id)
            j++;
        if (j < c->n && c->ticks[j] == id) {
            c->has_tick[j] = 1;
            c->t_ms[j] = sqlite3_column_int64(c->span_st, 1);
            c->has_interval[j] = sqlite3_column_type(c->span_st, 2) != SQLITE_NULL;
            c->interval_ms[j] = sqlite3_column_int64(c->span_st, 2);
        }
    }
    rc = j < c->n && rc != SQLITE_DONE ? -1 : 0;
    sqlite3_reset(c->span_st);
    if (rc == 0 && memchr(c->has_tick, 0, c->n))
        rc = rows_times_chunks(c, first, last);
    return rc;
}

/* In times mode, a point is shown when its tick exists and lies in the wanted ids. */
static int rows_shown(const struct rows_cursor *c, size_t j)
{
    int idx_num = c->idx_num;

    if (!(idx_num & ROWS_SPAN))
        return 1;
    if (!c->has_tick[j])
        return 0;
    return !(idx_num & (ROWS_T_MIN | ROWS_T_MAX)) ||
           (c->ticks[j] >= c->range_lo && c->ticks[j] <= c->range_hi);
}

/*
 * Decode the chunks `vals` (one per set bit k < ROWS_MAX_COLS of `mask`, in order) of the span
 * first..last, read their ticks' times in times mode (c->idx_num & ROWS_SPAN), and stand on the
 * first point shown. An SQLite result code.
 */
static int rows_load(struct rows_cursor *c, sqlite3_value **vals, int mask, int64_t first,
                     int64_t last)
{
    int a = 0, rc;

    for (int k = 0; k < ROWS_MAX_COLS; k++) {
        struct chunk_points *p = &c->p[k];

        if (!(mask & (1 << k)))
            continue;
        rc = points_decode(p, vals[a++]);
        if (rc == -2) {
            rows_clear(c);
            return SQLITE_NOMEM;
        }
        if (rc < 0)
            return rows_error(c, "chunk_rows: not a chunk (a BLOB made by chunk_encode)");
        if (rc > 0)
            continue;
        if (!c->ticks) {
            c->ticks = p->ticks;
            c->n = p->n;
        } else if (p->n != c->n || memcmp(p->ticks, c->ticks, c->n * sizeof *c->ticks) != 0) {
            return rows_error(c, "chunk_rows: the chunks of one row hold different ticks");
        }
    }
    if ((c->idx_num & ROWS_SPAN) && c->n) {
        rc = rows_times(c, first, last);
        if (rc == -2) {
            rows_clear(c);
            return SQLITE_NOMEM;
        }
        if (rc < 0)
            return rows_sql_error(c);
    }
    while (c->i < c->n && !rows_shown(c, c->i))
        c->i++;
    return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                       sqlite3_value **argv)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;
    int nchunks = 0, a = 0;

    (void)idx_str;
    rows_clear(c);
    for (int k = 0; k < ROWS_MAX_COLS; k++)
        nchunks += (idx_num >> k) & 1;
    if (argc < nchunks)
        return SQLITE_OK;
    for (int k = 0; k < ROWS_MAX_COLS && a < nchunks; k++)
        if ((idx_num & (1 << k)) && rows_keep(c, ROWS_COL_D0 + k, argv[a++]) != 0) {
            rows_clear(c);
            return SQLITE_NOMEM;
        }
    c->idx_num = idx_num & ~ROWS_SPAN;
    return rows_load(c, argv, idx_num, 0, -1);
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;

    do
        c->i++;
    while (c->i < c->n && !rows_shown(c, c->i));
    return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *cur)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;

    return c->i >= c->n;
}

static int rows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;
    const struct chunk_points *p;

    if (col == ROWS_COL_TICK) {
        sqlite3_result_int64(ctx, c->ticks[c->i]);
        return SQLITE_OK;
    }
    if (col == ROWS_COL_T_MS || col == ROWS_COL_INTERVAL) {
        /* only in times mode; NULL otherwise (no tick was read) */
        if (c->has_tick && col == ROWS_COL_T_MS)
            sqlite3_result_int64(ctx, c->t_ms[c->i]);
        else if (c->has_tick && c->has_interval[c->i])
            sqlite3_result_int64(ctx, c->interval_ms[c->i]);
        else
            sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    if (col >= ROWS_COL_D0) {
        if (c->arg[col - ROWS_COL_D0])
            sqlite3_result_value(ctx, c->arg[col - ROWS_COL_D0]);
        else
            sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    p = col >= 1 && col <= ROWS_MAX_COLS ? &c->p[col - 1] : NULL;
    if (p && p->n && p->present[c->i])
        sqlite3_result_int64(ctx, p->values[c->i]);
    else
        sqlite3_result_null(ctx);
    return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
    *rowid = (sqlite_int64)((struct rows_cursor *)cur)->i;
    return SQLITE_OK;
}

static const sqlite3_module rows_module = {
    .iVersion = 0,
    .xCreate = NULL,
    .xConnect = rows_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = pts_disconnect,
    .xDestroy = pts_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

/* ---- chunk_series(tbl, cols, inst): every chunked row of one instance ---- */

/*
 * The rows of chunk_rows (tick, v0.., t_ms, interval_ms; times mode) of all the chunks of
 * instance `inst` in chunk table `tbl`, whose chunk columns `cols` (a comma-separated list) are
 * v0, v1, ... in that order. It reads the chunk table itself, so that a bound on t_ms selects
 * the chunks by their span (the table's index on last_tick) before any of their BLOBs is read:
 * a view that handed each chunk row to chunk_rows would read every chunk of the instance. The
 * chunks of the span the chunk steps have in hand are left out (CHUNK_EDGE_SQL, chunk_sql.h):
 * their points are still read from the raw rows.
 *
 * It reads the span's ticks (the times mode of the shared cursor), from `ticks` and, for those
 * not there, from the span's ticks_chunks row (decoded: the ticks of chunked rows are chunked
 * too, once every object of their span is): t_ms and interval_ms come out beside each point, and
 * a point whose tick is gone from both (retention deletes ticks before the chunk that holds them)
 * is left out, as a join on ticks_all would. The tick ids of the wanted time are looked up once
 * per statement and time range, not per chunk; t_ms may go back with the wall clock, which is
 * why they are the ids' min and max, not a time bound.
 */
enum { SER_COL_TBL = ROWS_COL_D0, SER_COL_COLS, SER_COL_INST };

static int series_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **err)
{
    (void)aux;
    (void)argc;
    (void)argv;
    (void)err;
    return rows_declare(db, 1, out);
}

static int series_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    int nargs = 0, lo, hi;

    (void)vt;
    for (int col = SER_COL_TBL; col <= SER_COL_INST; col++) {
        int i = rows_find(info, col, SQLITE_INDEX_CONSTRAINT_EQ);

        if (i < 0)
            return SQLITE_CONSTRAINT; /* all three are needed, and wait for their tables */
        info->aConstraintUsage[i].argvIndex = ++nargs;
        info->aConstraintUsage[i].omit = 1;
    }
    lo = rows_bound(info, SQLITE_INDEX_CONSTRAINT_GE, SQLITE_INDEX_CONSTRAINT_GT);
    hi = rows_bound(info, SQLITE_INDEX_CONSTRAINT_LE, SQLITE_INDEX_CONSTRAINT_LT);
    info->idxNum = ROWS_SPAN;
    /* as in chunk_rows: the bounds prune, SQLite still checks them */
    if (lo >= 0) {
        info->aConstraintUsage[lo].argvIndex = ++nargs;
        info->idxNum |= ROWS_T_MIN;
    }
    if (hi >= 0 && hi != lo)
        info->aConstraintUsage[hi].argvIndex = ++nargs;
    if (hi >= 0)
        info->idxNum |= ROWS_T_MAX;
    info->estimatedCost = info->idxNum & (ROWS_T_MIN | ROWS_T_MAX) ? 3600 : 604800;
    info->estimatedRows = info->idxNum & (ROWS_T_MIN | ROWS_T_MAX) ? 3600 : 604800;
    return SQLITE_OK;
}

/* A name list of letters, digits, '_', ',' and ' ' only: it becomes SQL text. */
static int series_names_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == ',' || *s == ' '))
            return 0;
    return 1;
}

/* Load the next chunk that shows a point, or leave c->n at 0 at the end. */
static int series_advance(struct rows_cursor *c)
{
    int ncols = sqlite3_column_count(c->chunks_st) - 2, rc;

    for (;;) {
        sqlite3_value *vals[ROWS_MAX_COLS];
        int64_t first, last;

        rows_clear_points(c);
        rc = sqlite3_step(c->chunks_st);
        if (rc == SQLITE_DONE)
            return SQLITE_OK;
        if (rc != SQLITE_ROW)
            return rows_sql_error(c);
        first = sqlite3_column_int64(c->chunks_st, 0);
        last = sqlite3_column_int64(c->chunks_st, 1);
        for (int k = 0; k < ncols; k++)
            vals[k] = sqlite3_column_value(c->chunks_st, 2 + k);
        rc = rows_load(c, vals, (1 << ncols) - 1, first, last);
        if (rc != SQLITE_OK || c->i < c->n)
            return rc;
    }
}

static int series_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                         sqlite3_value **argv)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;
    const char *tbl, *cols;
    char *sql;
    int ncols = 1, rc;

    (void)idx_str;
    rows_clear(c);
    sqlite3_finalize(c->chunks_st);
    c->chunks_st = NULL;
    c->idx_num = idx_num;
    if (argc < 3)
        return SQLITE_OK;
    for (int k = 0; k < 3; k++)
        if (rows_keep(c, SER_COL_TBL + k, argv[k]) != 0) {
            rows_clear(c);
            return SQLITE_NOMEM;
        }
    tbl = (const char *)sqlite3_value_text(argv[0]);
    cols = (const char *)sqlite3_value_text(argv[1]);
    for (const char *p = cols; p && *p; p++)
        ncols += *p == ',';
    if (!series_names_ok(tbl) || strchr(tbl, ',') || !series_names_ok(cols) ||
        ncols > ROWS_MAX_COLS)
        return rows_error(c, "chunk_series: tbl must name a chunk table, cols at most 16 of its "
                             "columns, separated by commas");
    if (rows_time_range(c, idx_num, argv, 3, argc) != 0)
        return rows_sql_error(c);
    if (!(idx_num & (ROWS_T_MIN | ROWS_T_MAX))) {
        c->range_lo = INT64_MIN;
        c->range_hi = INT64_MAX;
    }
    /* Only the chunks below the chunk steps' edge: the span in hand's are read raw. */
    sql = sqlite3_mprintf("SELECT first_tick, last_tick, %s FROM %s WHERE inst = ?1 AND "
                          "last_tick >= ?2 AND first_tick <= ?3 AND last_tick < " CHUNK_EDGE_SQL,
                          cols, tbl);
    if (!sql) {
        rows_clear(c);
        return SQLITE_NOMEM;
    }
    rc = sqlite3_prepare_v2(((struct rows_vtab *)cur->pVtab)->db, sql, -1, &c->chunks_st, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        return rows_sql_error(c);
    sqlite3_bind_value(c->chunks_st, 1, argv[2]);
    sqlite3_bind_int64(c->chunks_st, 2, c->range_lo);
    sqlite3_bind_int64(c->chunks_st, 3, c->range_hi);
    return series_advance(c);
}

static int series_next(sqlite3_vtab_cursor *cur)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;

    do
        c->i++;
    while (c->i < c->n && !rows_shown(c, c->i));
    return c->i < c->n || !c->chunks_st ? SQLITE_OK : series_advance(c);
}

static const sqlite3_module series_module = {
    .iVersion = 0,
    .xCreate = NULL,
    .xConnect = series_connect,
    .xBestIndex = series_best_index,
    .xDisconnect = pts_disconnect,
    .xDestroy = pts_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = series_filter,
    .xNext = series_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

int chunk_sql_register(sqlite3 *db)
{
    int rc = sqlite3_create_function(db, "chunk_encode", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                     NULL, NULL, enc_step, enc_final);

    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, "chunk_points", &pts_module, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, "chunk_rows", &rows_module, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, "chunk_series", &series_module, NULL);
    return rc;
}

#ifdef PERFLOG_SQLITE_EXTENSION
int sqlite3_perflogchunk_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

int sqlite3_perflogchunk_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
    SQLITE_EXTENSION_INIT2(api);
    (void)err;
    return chunk_sql_register(db);
}
#endif
