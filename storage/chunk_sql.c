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

#include "chunk.h"
#include "chunk_sql.h"

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

static int pts_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    struct pts_cursor *c = sqlite3_malloc(sizeof *c);

    (void)vt;
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *out = &c->base;
    return SQLITE_OK;
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

static int pts_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                      sqlite3_value **argv)
{
    struct pts_cursor *c = (struct pts_cursor *)cur;
    const uint8_t *buf;
    size_t len;
    long n;

    (void)idx_str;
    pts_clear(c);
    if (idx_num != 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return SQLITE_OK; /* a NULL chunk has no points */
    if (sqlite3_value_type(argv[0]) != SQLITE_BLOB)
        goto bad;
    buf = sqlite3_value_blob(argv[0]);
    len = (size_t)sqlite3_value_bytes(argv[0]);
    n = chunk_count(buf, len);
    if (n <= 0)
        goto bad;
    c->p.ticks = malloc((size_t)n * sizeof *c->p.ticks);
    c->p.values = malloc((size_t)n * sizeof *c->p.values);
    c->p.present = malloc((size_t)n);
    if (!c->p.ticks || !c->p.values || !c->p.present) {
        pts_clear(c);
        return SQLITE_NOMEM;
    }
    if (chunk_decode(buf, len, &c->p, (size_t)n) != 0) {
        pts_clear(c);
        goto bad;
    }
    return SQLITE_OK;
bad:
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

int chunk_sql_register(sqlite3 *db)
{
    int rc = sqlite3_create_function(db, "chunk_encode", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                     NULL, NULL, enc_step, enc_final);

    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, "chunk_points", &pts_module, NULL);
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
