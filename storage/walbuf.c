/*
 * walbuf.c - gather a commit's WAL writes into one buffer (see walbuf.h for why and the rules).
 *
 * Each file this VFS opens is a struct wb_file followed by the default VFS's own file object
 * (`real`), to which every call is handed on. Only a WAL file paired with its database file by
 * walbuf_attach holds bytes back; the pairing is undone when either file closes. The WAL format
 * (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header, then frames of a 24-byte
 * header and one page; bytes 4-7 of a frame header are non-zero only in a commit's last frame.
 * SQLite 3.40 writes a frame as two xWrite calls, the header first.
 */
#include "storage/walbuf.h"

#include "base/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Bytes held at most; a larger commit goes in several writes. The unix VFS cuts a write to its
 * low 17 bits (seekAndWriteFd: at most 128 KiB - 1), so a write must stay under that. */
#define WALBUF_CAP       (64 * 1024)
#define WAL_FRAME_HEADER 24

struct wb_file {
    sqlite3_file base;
    sqlite3_file *real;   /* the default VFS's file, in the same allocation after this */
    struct wb_file *peer; /* database file: its paired WAL; WAL: its database file */
    unsigned char *buf;   /* WAL: bytes not written yet, for offsets [off, off + len) */
    size_t len;
    sqlite3_int64 off;
    int flush_next;   /* WAL: the last write was a commit frame's header */
    int barrier_lost; /* WAL: bytes were still held at a barrier (logged once) */
    struct walbuf_stats st;
};

#define WB_HEAD (((sizeof(struct wb_file) + 15) / 16) * 16)

static sqlite3_vfs *real_vfs(sqlite3_vfs *v)
{
    return v->pAppData;
}

/* Write out what the WAL holds. The bytes are dropped whether or not the write succeeds: a failed
 * write is reported to the caller, and SQLite rolls the transaction back. */
static int wb_flush(struct wb_file *w)
{
    int rc;

    if (w->len == 0)
        return SQLITE_OK;
    rc = w->real->pMethods->xWrite(w->real, w->buf, (int)w->len, w->off);
    w->st.writes_out++;
    w->st.bytes += w->len;
    w->len = 0;
    return rc;
}

static void wb_unpair(struct wb_file *f)
{
    if (f->peer) {
        f->peer->peer = NULL;
        f->peer = NULL;
    }
}

/* ---- calls common to both kinds: handed on as they are ---- */

static int wb_lock(sqlite3_file *f, int l)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xLock(r, l);
}

static int wb_unlock(sqlite3_file *f, int l)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xUnlock(r, l);
}

static int wb_check_reserved(sqlite3_file *f, int *out)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xCheckReservedLock(r, out);
}

static int wb_sector_size(sqlite3_file *f)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xSectorSize(r);
}

static int wb_device_chars(sqlite3_file *f)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xDeviceCharacteristics(r);
}

static int wb_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    if (r->pMethods->iVersion < 2 || !r->pMethods->xShmMap)
        return SQLITE_IOERR_SHMMAP;
    return r->pMethods->xShmMap(r, pg, pgsz, extend, pp);
}

static int wb_shm_unmap(sqlite3_file *f, int del)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    if (r->pMethods->iVersion < 2 || !r->pMethods->xShmUnmap)
        return SQLITE_OK;
    return r->pMethods->xShmUnmap(r, del);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    if (r->pMethods->iVersion < 3 || !r->pMethods->xFetch) {
        *pp = NULL;
        return SQLITE_OK;
    }
    return r->pMethods->xFetch(r, off, amt, pp);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    if (r->pMethods->iVersion < 3 || !r->pMethods->xUnfetch)
        return SQLITE_OK;
    return r->pMethods->xUnfetch(r, off, p);
}

/* ---- the database file and every other file but the WAL ---- */

static int db_close(sqlite3_file *f)
{
    struct wb_file *w = (struct wb_file *)f;

    wb_unpair(w);
    return w->real->pMethods->xClose(w->real);
}

static int db_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xRead(r, buf, amt, off);
}

static int db_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xWrite(r, buf, amt, off);
}

static int db_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xTruncate(r, size);
}

static int db_sync(sqlite3_file *f, int flags)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xSync(r, flags);
}

static int db_file_size(sqlite3_file *f, sqlite3_int64 *out)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xFileSize(r, out);
}

static int db_file_control(sqlite3_file *f, int op, void *arg)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    return r->pMethods->xFileControl(r, op, arg);
}

/* A wal-index lock released: the paired WAL's bytes go first, so that nothing held outlives the
 * write lock (another connection may write the same offsets next). What is still held here is at
 * most the frames of a transaction rolled back: a failed write of them loses nothing. */
static int db_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    struct wb_file *w = (struct wb_file *)f;

    if ((flags & SQLITE_SHM_UNLOCK) && w->peer)
        (void)wb_flush(w->peer);
    if (w->real->pMethods->iVersion < 2 || !w->real->pMethods->xShmLock)
        return SQLITE_IOERR_SHMLOCK;
    return w->real->pMethods->xShmLock(w->real, offset, n, flags);
}

/* SQLite's barrier before it publishes a new WAL header: every frame must be in the file first.
 * A commit's frames were written at its last page (wal_write), so this finds none in practice. */
static void db_shm_barrier(sqlite3_file *f)
{
    struct wb_file *w = (struct wb_file *)f;

    if (w->peer && w->peer->len) {
        if (wb_flush(w->peer) != SQLITE_OK && !w->peer->barrier_lost) {
            w->peer->barrier_lost = 1;
            log_error("walbuf: a WAL write failed at a barrier, where SQLite cannot be told");
        }
    }
    if (w->real->pMethods->iVersion >= 2 && w->real->pMethods->xShmBarrier)
        w->real->pMethods->xShmBarrier(w->real);
}

static const sqlite3_io_methods db_methods = {
    .iVersion = 3,
    .xClose = db_close,
    .xRead = db_read,
    .xWrite = db_write,
    .xTruncate = db_truncate,
    .xSync = db_sync,
    .xFileSize = db_file_size,
    .xLock = wb_lock,
    .xUnlock = wb_unlock,
    .xCheckReservedLock = wb_check_reserved,
    .xFileControl = db_file_control,
    .xSectorSize = wb_sector_size,
    .xDeviceCharacteristics = wb_device_chars,
    .xShmMap = wb_shm_map,
    .xShmLock = db_shm_lock,
    .xShmBarrier = db_shm_barrier,
    .xShmUnmap = wb_shm_unmap,
    .xFetch = wb_fetch,
    .xUnfetch = wb_unfetch,
};

/* ---- the WAL ---- */

static int wal_close(sqlite3_file *f)
{
    struct wb_file *w = (struct wb_file *)f;
    int rc = wb_flush(w), rc2;

    wb_unpair(w);
    free(w->buf);
    w->buf = NULL;
    rc2 = w->real->pMethods->xClose(w->real);
    return rc != SQLITE_OK ? rc : rc2;
}

static int wal_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
    struct wb_file *w = (struct wb_file *)f;
    int rc = wb_flush(w);

    return rc != SQLITE_OK ? rc : w->real->pMethods->xRead(w->real, buf, amt, off);
}

static int wal_write_through(struct wb_file *w, const void *buf, int amt, sqlite3_int64 off)
{
    w->st.writes_out++;
    w->st.bytes += (uint64_t)amt;
    return w->real->pMethods->xWrite(w->real, buf, amt, off);
}

static int wal_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
    struct wb_file *w = (struct wb_file *)f;
    const unsigned char *b = buf;
    int rc = SQLITE_OK, commit_end;

    w->st.writes_in++;
    if (!w->peer || amt <= 0) {
        /* unpaired: nothing is held from here on, not even what an earlier pairing left */
        rc = wb_flush(w);
        return rc != SQLITE_OK ? rc : wal_write_through(w, buf, amt, off);
    }
    /* Only one contiguous run is held: anything else writes the run out first. */
    if (w->len && (off != w->off + (sqlite3_int64)w->len || w->len + (size_t)amt > WALBUF_CAP))
        rc = wb_flush(w);
    if (rc != SQLITE_OK)
        return rc;
    if ((size_t)amt > WALBUF_CAP)
        return wal_write_through(w, buf, amt, off);
    if (!w->buf && !(w->buf = malloc(WALBUF_CAP)))
        return wal_write_through(w, buf, amt, off);
    if (w->len == 0)
        w->off = off;
    memcpy(w->buf + w->len, buf, (size_t)amt);
    w->len += (size_t)amt;
    /* The page after a commit frame's header ends the commit: write it all now, where a failure
     * still fails the commit. */
    commit_end = w->flush_next;
    w->flush_next = amt == WAL_FRAME_HEADER && (b[4] | b[5] | b[6] | b[7]) != 0;
    return commit_end ? wb_flush(w) : SQLITE_OK;
}

static int wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    struct wb_file *w = (struct wb_file *)f;
    int rc = wb_flush(w);

    return rc != SQLITE_OK ? rc : w->real->pMethods->xTruncate(w->real, size);
}

static int wal_sync(sqlite3_file *f, int flags)
{
    struct wb_file *w = (struct wb_file *)f;
    int rc = wb_flush(w);

    return rc != SQLITE_OK ? rc : w->real->pMethods->xSync(w->real, flags);
}

static int wal_file_size(sqlite3_file *f, sqlite3_int64 *out)
{
    struct wb_file *w = (struct wb_file *)f;
    int rc = wb_flush(w);

    return rc != SQLITE_OK ? rc : w->real->pMethods->xFileSize(w->real, out);
}

static int wal_file_control(sqlite3_file *f, int op, void *arg)
{
    struct wb_file *w = (struct wb_file *)f;
    int rc = wb_flush(w);

    return rc != SQLITE_OK ? rc : w->real->pMethods->xFileControl(w->real, op, arg);
}

static int wal_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    if (r->pMethods->iVersion < 2 || !r->pMethods->xShmLock)
        return SQLITE_IOERR_SHMLOCK;
    return r->pMethods->xShmLock(r, offset, n, flags);
}

static void wal_shm_barrier(sqlite3_file *f)
{
    sqlite3_file *r = ((struct wb_file *)f)->real;
    if (r->pMethods->iVersion >= 2 && r->pMethods->xShmBarrier)
        r->pMethods->xShmBarrier(r);
}

static const sqlite3_io_methods wal_methods = {
    .iVersion = 3,
    .xClose = wal_close,
    .xRead = wal_read,
    .xWrite = wal_write,
    .xTruncate = wal_truncate,
    .xSync = wal_sync,
    .xFileSize = wal_file_size,
    .xLock = wb_lock,
    .xUnlock = wb_unlock,
    .xCheckReservedLock = wb_check_reserved,
    .xFileControl = wal_file_control,
    .xSectorSize = wb_sector_size,
    .xDeviceCharacteristics = wb_device_chars,
    .xShmMap = wb_shm_map,
    .xShmLock = wal_shm_lock,
    .xShmBarrier = wal_shm_barrier,
    .xShmUnmap = wb_shm_unmap,
    .xFetch = wb_fetch,
    .xUnfetch = wb_unfetch,
};

/* ---- the VFS: files are wrapped, everything else is the default VFS's ---- */

static int vfs_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    struct wb_file *w = (struct wb_file *)f;
    sqlite3_vfs *rv = real_vfs(v);
    int rc;

    memset(w, 0, sizeof(*w));
    w->real = (sqlite3_file *)((char *)f + WB_HEAD);
    memset(w->real, 0, (size_t)rv->szOsFile);
    rc = rv->xOpen(rv, name, w->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        if (w->real->pMethods)
            w->real->pMethods->xClose(w->real);
        f->pMethods = NULL;
        return rc;
    }
    f->pMethods = (flags & SQLITE_OPEN_WAL) ? &wal_methods : &db_methods;
    return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *v, const char *name, int sync_dir)
{
    return real_vfs(v)->xDelete(real_vfs(v), name, sync_dir);
}

static int vfs_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    return real_vfs(v)->xAccess(real_vfs(v), name, flags, out);
}

static int vfs_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out)
{
    return real_vfs(v)->xFullPathname(real_vfs(v), name, n, out);
}

static void *vfs_dlopen(sqlite3_vfs *v, const char *name)
{
    return real_vfs(v)->xDlOpen(real_vfs(v), name);
}

static void vfs_dlerror(sqlite3_vfs *v, int n, char *msg)
{
    real_vfs(v)->xDlError(real_vfs(v), n, msg);
}

static void (*vfs_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    return real_vfs(v)->xDlSym(real_vfs(v), h, sym);
}

static void vfs_dlclose(sqlite3_vfs *v, void *h)
{
    real_vfs(v)->xDlClose(real_vfs(v), h);
}

static int vfs_randomness(sqlite3_vfs *v, int n, char *out)
{
    return real_vfs(v)->xRandomness(real_vfs(v), n, out);
}

static int vfs_sleep(sqlite3_vfs *v, int us)
{
    return real_vfs(v)->xSleep(real_vfs(v), us);
}

static int vfs_current_time(sqlite3_vfs *v, double *out)
{
    return real_vfs(v)->xCurrentTime(real_vfs(v), out);
}

static int vfs_last_error(sqlite3_vfs *v, int n, char *out)
{
    return real_vfs(v)->xGetLastError(real_vfs(v), n, out);
}

static int vfs_current_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    sqlite3_vfs *rv = real_vfs(v);
    double d;
    int rc;

    if (rv->iVersion >= 2 && rv->xCurrentTimeInt64)
        return rv->xCurrentTimeInt64(rv, out);
    rc = rv->xCurrentTime(rv, &d);
    *out = (sqlite3_int64)(d * 86400000.0);
    return rc;
}

/* Written once, under pthread_once, before the VFS is registered; read-only afterwards. */
static sqlite3_vfs wb_vfs = {
    .iVersion = 2,
    .zName = WALBUF_VFS_NAME,
    .xOpen = vfs_open,
    .xDelete = vfs_delete,
    .xAccess = vfs_access,
    .xFullPathname = vfs_full_pathname,
    .xDlOpen = vfs_dlopen,
    .xDlError = vfs_dlerror,
    .xDlSym = vfs_dlsym,
    .xDlClose = vfs_dlclose,
    .xRandomness = vfs_randomness,
    .xSleep = vfs_sleep,
    .xCurrentTime = vfs_current_time,
    .xGetLastError = vfs_last_error,
    .xCurrentTimeInt64 = vfs_current_time64,
};
static int wb_register_rc = SQLITE_ERROR;

static void wb_register_once(void)
{
    sqlite3_vfs *rv = sqlite3_vfs_find(NULL);

    if (!rv) {
        wb_register_rc = SQLITE_ERROR;
        return;
    }
    wb_vfs.pAppData = rv;
    wb_vfs.szOsFile = (int)WB_HEAD + rv->szOsFile;
    wb_vfs.mxPathname = rv->mxPathname;
    wb_register_rc = sqlite3_vfs_register(&wb_vfs, 0);
}

int walbuf_register(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, wb_register_once);
    return wb_register_rc;
}

/* The connection's database and WAL files, when both are this VFS's. */
static int wb_files(sqlite3 *conn, struct wb_file **db, struct wb_file **wal)
{
    sqlite3_file *m = NULL, *j = NULL;

    if (sqlite3_file_control(conn, "main", SQLITE_FCNTL_FILE_POINTER, &m) != SQLITE_OK ||
        sqlite3_file_control(conn, "main", SQLITE_FCNTL_JOURNAL_POINTER, &j) != SQLITE_OK)
        return SQLITE_NOTFOUND;
    if (!m || !j || m->pMethods != &db_methods || j->pMethods != &wal_methods)
        return SQLITE_NOTFOUND;
    *db = (struct wb_file *)m;
    *wal = (struct wb_file *)j;
    return SQLITE_OK;
}

int walbuf_attach(sqlite3 *conn)
{
    struct wb_file *db, *wal;
    int rc = wb_files(conn, &db, &wal);

    if (rc != SQLITE_OK)
        return rc;
    wb_unpair(db);
    wb_unpair(wal);
    db->peer = wal;
    wal->peer = db;
    return SQLITE_OK;
}

void walbuf_get_stats(sqlite3 *conn, struct walbuf_stats *out)
{
    struct wb_file *db, *wal;

    memset(out, 0, sizeof(*out));
    if (wb_files(conn, &db, &wal) == SQLITE_OK && wal->peer == db)
        *out = wal->st;
}
