/*
 * stmt_cache.c - kept prepared statements keyed by their SQL text; see stmt_cache.h.
 */
#include "storage/stmt_cache.h"

#include <stdlib.h>
#include <string.h>

void stmt_cache_init(struct stmt_cache *c, sqlite3 *conn)
{
    memset(c, 0, sizeof(*c));
    c->conn = conn;
}

sqlite3_stmt *stmt_cache_get(struct stmt_cache *c, const char *sql, int *rc)
{
    size_t victim = 0;
    sqlite3_stmt *st = NULL;
    char *copy;

    c->clock++;
    for (size_t i = 0; i < STMT_CACHE_SLOTS; i++) {
        if (c->slot[i].sql && strcmp(c->slot[i].sql, sql) == 0) {
            c->slot[i].used = c->clock;
            sqlite3_reset(c->slot[i].st);
            sqlite3_clear_bindings(c->slot[i].st);
            *rc = SQLITE_OK;
            return c->slot[i].st;
        }
        /* a free slot first, else the least recently used */
        if (c->slot[victim].sql && (!c->slot[i].sql || c->slot[i].used < c->slot[victim].used))
            victim = i;
    }
    *rc = sqlite3_prepare_v3(c->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (*rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return NULL;
    }
    if (!st) { /* only white space or a comment: nothing to keep or run */
        *rc = SQLITE_MISUSE;
        return NULL;
    }
    if (!(copy = strdup(sql))) {
        sqlite3_finalize(st);
        *rc = SQLITE_NOMEM;
        return NULL;
    }
    c->prepares++;
    sqlite3_finalize(c->slot[victim].st);
    free(c->slot[victim].sql);
    c->slot[victim].sql = copy;
    c->slot[victim].st = st;
    c->slot[victim].used = c->clock;
    return st;
}

int stmt_cache_count(const struct stmt_cache *c)
{
    int n = 0;

    for (size_t i = 0; i < STMT_CACHE_SLOTS; i++)
        n += c->slot[i].sql != NULL;
    return n;
}

void stmt_cache_clear(struct stmt_cache *c)
{
    for (size_t i = 0; i < STMT_CACHE_SLOTS; i++) {
        sqlite3_finalize(c->slot[i].st);
        free(c->slot[i].sql);
        c->slot[i].sql = NULL;
        c->slot[i].st = NULL;
    }
}
