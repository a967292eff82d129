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
 */
#define ROWS_MAX_COLS 16

enum { ROWS_COL_TICK = 0, ROWS_COL_D0 = 1 + ROWS_MAX_COLS };

struct rows_cursor {
    sqlite3_vtab_cursor base;
    struct chunk_points p[ROWS_MAX_COLS];
    const int64_t *ticks; /* of the first non-NULL chunk: they are the same in all */
    size_t n, i;
};

static int rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **err)
{
    char decl[1024];
    size_t len;
    sqlite3_vtab *vt;
    int rc;

    (void)aux;
    (void)argc;
    (void)argv;
    (void)err;
    len = (size_t)snprintf(decl, sizeof decl, "CREATE TABLE x(tick INTEGER");
    for (int k = 0; k < ROWS_MAX_COLS; k++)
        len += (size_t)snprintf(decl + len, sizeof decl - len, ", v%d INTEGER", k);
    for (int k = 0; k < ROWS_MAX_COLS; k++)
        len += (size_t)snprintf(decl + len, sizeof decl - len, ", d%d HIDDEN", k);
    snprintf(decl + len, sizeof decl - len, ")");
    rc = sqlite3_declare_vtab(db, decl);
    if (rc != SQLITE_OK)
        return rc;
    vt = sqlite3_malloc(sizeof *vt);
    if (!vt)
        return SQLITE_NOMEM;
    memset(vt, 0, sizeof *vt);
    *out = vt;
    return SQLITE_OK;
}

static int rows_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    int mask = 0, nargs = 0;

    (void)vt;
    /* idxNum: bit k set when argument k is given; xFilter gets them in argument order */
    for (int k = 0; k < ROWS_MAX_COLS; k++) {
        for (int i = 0; i < info->nConstraint; i++) {
            const struct sqlite3_index_constraint *c = &info->aConstraint[i];

            if (c->iColumn != ROWS_COL_D0 + k || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
                continue;
            if (!c->usable)
                return SQLITE_CONSTRAINT; /* wait for the table that supplies it */
            info->aConstraintUsage[i].argvIndex = ++nargs;
            info->aConstraintUsage[i].omit = 1;
            mask |= 1 << k;
            break;
        }
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

static void rows_clear(struct rows_cursor *c)
{
    for (int k = 0; k < ROWS_MAX_COLS; k++) {
        free(c->p[k].ticks);
        free(c->p[k].values);
        free(c->p[k].present);
    }
    memset(c->p, 0, sizeof c->p);
    c->ticks = NULL;
    c->n = c->i = 0;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;

    rows_clear(c);
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

static int rows_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                       sqlite3_value **argv)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;
    int a = 0;

    (void)idx_str;
    rows_clear(c);
    for (int k = 0; k < ROWS_MAX_COLS && a < argc; k++) {
        struct chunk_points *p = &c->p[k];
        int rc;

        if (!(idx_num & (1 << k)))
            continue;
        rc = points_decode(p, argv[a++]);
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
    return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
    ((struct rows_cursor *)cur)->i++;
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
    p = col >= 1 && col < ROWS_COL_D0 ? &c->p[col - 1] : NULL;
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

int chunk_sql_register(sqlite3 *db)
{
    int rc = sqlite3_create_function(db, "chunk_encode", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                     NULL, NULL, enc_step, enc_final);

    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, "chunk_points", &pts_module, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, "chunk_rows", &rows_module, NULL);
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
