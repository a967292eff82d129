/*
 * bench_chunk.c - what the series chunk codec (storage/chunk.c) would make of a real database:
 * every raw object table (obj_<name>, one row per tick and instance) is cut into chunks of
 * CHUNK_TICKS tick ids per instance and integer column, each chunk encoded, decoded and compared
 * with the rows, and the bytes counted.
 *
 *   bench_chunk DB [CHUNK_TICKS]      (default 600)
 *
 * Prints, per table and in all: the values (non-NULL cells), the chunk bytes per value, and for
 * scale the file's bytes per value today (the whole file: raw rows, roll-ups, indexes, the lot)
 * and the raw tables' own pages per value where SQLite has the dbstat table. Exits 1 if any chunk
 * failed to round-trip. Read-only on DB.
 */
#include "storage/chunk.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_COLS 64

struct totals {
    long long values, cells, chunks, bytes, mismatches;
    double encode_s, decode_s;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Encode, decode and compare one chunk of `n` points; add to `t`. */
static void one_chunk(struct chunk_points *p, struct chunk_points *back, struct totals *t)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    double t0 = now_s(), t1;

    if (chunk_encode(p, &buf, &len) != 0) {
        t->mismatches++;
        return;
    }
    t1 = now_s();
    if (chunk_decode(buf, len, back, p->n) != 0 || back->n != p->n)
        t->mismatches++;
    else
        for (size_t i = 0; i < p->n; i++)
            if (back->ticks[i] != p->ticks[i] || back->present[i] != p->present[i] ||
                (p->present[i] && back->values[i] != p->values[i])) {
                t->mismatches++;
                break;
            }
    t->decode_s += now_s() - t1;
    t->encode_s += t1 - t0;
    t->chunks++;
    t->bytes += (long long)len;
    for (size_t i = 0; i < p->n; i++)
        t->values += p->present[i];
    t->cells += (long long)p->n;
    free(buf);
}

/* The integer columns of `table` other than tick and inst, into cols; their number. */
static int columns_of(sqlite3 *db, const char *table, char cols[][64])
{
    char sql[256];
    sqlite3_stmt *st;
    int n = 0;

    snprintf(sql, sizeof sql,
             "SELECT name FROM pragma_table_info('%s') WHERE name NOT IN "
             "('tick', 'inst') ORDER BY cid",
             table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    while (n < MAX_COLS && sqlite3_step(st) == SQLITE_ROW)
        snprintf(cols[n++], 64, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return n;
}

/* One table: rows ordered by instance and tick, cut at instance changes and every chunk_ticks
 * tick ids. Buffers hold one chunk per column. */
static int one_table(sqlite3 *db, const char *table, int64_t chunk_ticks, struct totals *t)
{
    char cols[MAX_COLS][64], sql[4096];
    int ncol = columns_of(db, table, cols), rc = -1;
    size_t cap = (size_t)chunk_ticks, n = 0, off;
    int64_t *ticks = malloc(cap * sizeof *ticks), *vals = malloc(cap * MAX_COLS * sizeof *vals);
    int64_t *bt = malloc(cap * sizeof *bt), *bv = malloc(cap * sizeof *bv);
    uint8_t *pres = malloc(cap * MAX_COLS), *bp = malloc(cap);
    int64_t cur_inst = -1, cur_bucket = -1;
    sqlite3_stmt *st = NULL;

    if (ncol == 0 || !ticks || !vals || !bt || !bv || !pres || !bp)
        goto out;
    off = (size_t)snprintf(sql, sizeof sql, "SELECT inst, tick");
    for (int c = 0; c < ncol; c++)
        off += (size_t)snprintf(sql + off, sizeof sql - off, ", \"%s\"", cols[c]);
    snprintf(sql + off, sizeof sql - off, " FROM \"%s\" ORDER BY inst, tick", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto out;
    for (int step;;) {
        int64_t inst = 0, tick = 0;

        step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            inst = sqlite3_column_int64(st, 0);
            tick = sqlite3_column_int64(st, 1);
        }
        if (n > 0 && (step != SQLITE_ROW || inst != cur_inst || tick / chunk_ticks != cur_bucket)) {
            for (int c = 0; c < ncol; c++) {
                struct chunk_points p = {.n = n,
                                         .ticks = ticks,
                                         .values = vals + (size_t)c * cap,
                                         .present = pres + (size_t)c * cap};
                struct chunk_points back = {.ticks = bt, .values = bv, .present = bp};

                one_chunk(&p, &back, t);
            }
            n = 0;
        }
        if (step != SQLITE_ROW)
            break;
        cur_inst = inst;
        cur_bucket = tick / chunk_ticks;
        ticks[n] = tick;
        for (int c = 0; c < ncol; c++) {
            int null = sqlite3_column_type(st, 2 + c) == SQLITE_NULL;

            pres[(size_t)c * cap + n] = !null;
            vals[(size_t)c * cap + n] = null ? 0 : sqlite3_column_int64(st, 2 + c);
        }
        n++;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    free(ticks);
    free(vals);
    free(bt);
    free(bv);
    free(pres);
    free(bp);
    return rc;
}

/* The bytes of the pages of the raw tables (and their indexes), from dbstat; -1 without it. */
static long long raw_pages(sqlite3 *db)
{
    sqlite3_stmt *st;
    long long b = -1;

    if (sqlite3_prepare_v2(db,
                           "SELECT sum(pgsize) FROM dbstat WHERE name GLOB 'obj_*' AND "
                           "name NOT GLOB '*_1[mh]' AND name NOT GLOB '*_chunks*'",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        b = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return b;
}

int main(int argc, char **argv)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    struct totals all = {0};
    int64_t chunk_ticks = argc > 2 ? atoll(argv[2]) : 600;
    struct stat sb;
    long long pages;

    if (argc < 2 || chunk_ticks < 2 || chunk_ticks > CHUNK_MAX_POINTS) {
        fprintf(stderr, "usage: bench_chunk DB [CHUNK_TICKS (2..%d, default 600)]\n",
                CHUNK_MAX_POINTS);
        return 2;
    }
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_chunk: %s: %s\n", argv[1], sqlite3_errmsg(db));
        return 2;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB "
                           "'obj_*' AND name NOT GLOB '*_1[mh]' AND name NOT GLOB '*_chunks' "
                           "ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK)
        return 2;
    printf("%-22s %12s %10s %10s\n", "table", "values", "chunks", "B/value");
    while (sqlite3_step(st) == SQLITE_ROW) {
        struct totals t = {0};
        const char *name = (const char *)sqlite3_column_text(st, 0);

        if (one_table(db, name, chunk_ticks, &t) != 0) {
            fprintf(stderr, "bench_chunk: %s: cannot read\n", name);
            continue;
        }
        printf("%-22s %12lld %10lld %10.3f\n", name, t.values, t.chunks,
               t.values ? (double)t.bytes / (double)t.values : 0.0);
        all.values += t.values;
        all.cells += t.cells;
        all.chunks += t.chunks;
        all.bytes += t.bytes;
        all.mismatches += t.mismatches;
        all.encode_s += t.encode_s;
        all.decode_s += t.decode_s;
    }
    sqlite3_finalize(st);
    printf(
        "\nchunks of %lld ticks: %lld values (%lld cells with NULLs) in %lld chunks, %lld bytes: "
        "%.3f B/value; encode %.1f ns/value, decode %.1f ns/value; %lld chunks did not "
        "round-trip\n",
        (long long)chunk_ticks, all.values, all.cells, all.chunks, all.bytes,
        all.values ? (double)all.bytes / (double)all.values : 0.0,
        all.values ? all.encode_s * 1e9 / (double)all.values : 0.0,
        all.values ? all.decode_s * 1e9 / (double)all.values : 0.0, all.mismatches);
    if (stat(argv[1], &sb) == 0 && all.values)
        printf(
            "for scale: the file today is %lld bytes, %.3f B/value (raw rows, roll-ups, indexes)\n",
            (long long)sb.st_size, (double)sb.st_size / (double)all.values);
    pages = raw_pages(db);
    if (pages >= 0 && all.values)
        printf("the raw tables' pages: %lld bytes, %.3f B/value\n", pages,
               (double)pages / (double)all.values);
    sqlite3_close(db);
    return all.mismatches ? 1 : 0;
}
