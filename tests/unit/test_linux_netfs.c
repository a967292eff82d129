/*
 * test_linux_netfs.c - the cifs Stats and NFS mountstats parsers (linux_netfs.h) on the fixtures
 * of fixtures/linux (netfs/ and odd/, described in its README). Expected values are computed by
 * hand from the files; the comments show the arithmetic.
 */
#include "collectors/linux/linux_netfs.h"
#include "collectors/model/counters.h"
#include "collectors/model/sample.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX FIXTURES_DIR "/linux/"

typedef int (*netfs_parser)(const char *buf, size_t len, struct raw_object *out,
                            struct linux_parse_status *st);

static char *load(const char *rel, size_t *len)
{
    char path[512];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s%s", FX, rel);
    f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        exit(2);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int parse_file(netfs_parser p, const char *rel, struct raw_object *o,
                      struct linux_parse_status *st)
{
    size_t len;
    char *buf = load(rel, &len);
    int rc;

    memset(st, 0, sizeof(*st));
    o->n = 0;
    rc = p(buf, len, o, st);
    free(buf);
    return rc;
}

static const struct raw_row *row(const struct raw_object *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->rows[i].name, name) == 0)
            return &o->rows[i];
    return NULL;
}

#define HAS(r, f) (((r)->present >> (f)) & 1)

static void test_cifs(void)
{
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;

    /* Three tree connections, two of them to \\fs1\data (SMB3), one SMB1 share, disconnected,
     * whose name has a blank; the STATS2 table and the header lines are not shares. */
    CHECK_INT(parse_file(netfs_parse_cifs_stats, "netfs/proc/fs/cifs/Stats", &o, &st), 3);
    CHECK_INT(o.n, 2);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "\\\\fs1\\data");
    CHECK(r != NULL);
    if (r) {
        CHECK(r->flags & RAW_IN_TOTAL);
        CHECK_INT(r->present, 0xf);
        CHECK_INT(r->v[SMB_RD_BYTES], 104857600 + 1000);
        CHECK_INT(r->v[SMB_WR_BYTES], 52428800 + 2000);
        CHECK_INT(r->v[SMB_RD_REQS], 400 + 5);
        CHECK_INT(r->v[SMB_WR_REQS], 300 + 6);
    }
    r = row(&o, "\\\\nas\\old share");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->present, 0xf);
        CHECK_INT(r->v[SMB_RD_BYTES], 40960);
        CHECK_INT(r->v[SMB_WR_BYTES], 8192);
        CHECK_INT(r->v[SMB_RD_REQS], 10);
        /* %d of an atomic_t past 2^31: -2147483646 is 2^32 - 2147483646 */
        CHECK_INT(r->v[SMB_WR_REQS], 2147483650LL);
    }

    /* The module loaded, nothing mounted: no share, nothing wrong. */
    CHECK_INT(parse_file(netfs_parse_cifs_stats, "odd/cifs-noshares", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 0);
    CHECK_INT(parse_file(netfs_parse_cifs_stats, "odd/empty", &o, &st), 0);

    /* Malformed numbers (lines 2, 4, 9, 10) and a share without a name (line 5, and its Reads
     * line belongs to no share) are skipped; the last line has no '\n'. */
    CHECK_INT(parse_file(netfs_parse_cifs_stats, "odd/cifs-malformed", &o, &st), 3);
    CHECK_INT(o.n, 3);
    CHECK_INT(st.bad_lines, 5);
    CHECK_INT(st.first_bad, 2);
    r = row(&o, "\\\\a\\one");
    CHECK(r && r->present == 1u << SMB_RD_REQS && r->v[SMB_RD_REQS] == 3);
    r = row(&o, "\\\\b\\two");
    CHECK(r && r->present == (1u << SMB_RD_BYTES | 1u << SMB_WR_BYTES));
    CHECK(r && r->v[SMB_RD_BYTES] == 7 && r->v[SMB_WR_BYTES] == 8);
    r = row(&o, "\\\\c\\three");
    CHECK(r && r->present == 1u << SMB_RD_REQS && r->v[SMB_RD_REQS] == 1);
    free(o.rows);
}

static void test_cifs_cut(void)
{
    struct raw_object o = {0};
    struct linux_parse_status st = {0, 0};
    char text[256];
    int n;

    /* A name longer than an instance name is cut; two such names that differ only after the
     * cut are one row, not two rows of one name (the storage keys rows by name). */
    n = snprintf(text, sizeof(text),
                 "1) \\\\server\\%070d1\nBytes read: 1  Bytes written: 2\n"
                 "2) \\\\server\\%070d2\nBytes read: 10  Bytes written: 20\n",
                 0, 0);
    CHECK_INT(netfs_parse_cifs_stats(text, (size_t)n, &o, &st), 2);
    CHECK_INT(o.n, 1);
    CHECK_INT(strlen(o.rows[0].name), COUNTER_NAME_MAX - 1);
    CHECK_INT(o.rows[0].v[SMB_RD_BYTES], 11);
    free(o.rows);
}

static void test_mountstats(void)
{
    struct raw_object o = {0};
    struct linux_parse_status st;
    const struct raw_row *r;

    /* proc, sysfs, ext4 twice and tmpfs are not NFS; nfs4srv:/ is mounted twice (a bind mount,
     * the same counters) and counted once: three NFS mounts, two rows. */
    CHECK_INT(parse_file(netfs_parse_mountstats, "netfs/proc/self/mountstats", &o, &st), 3);
    CHECK_INT(o.n, 2);
    CHECK_INT(st.bad_lines, 0);
    r = row(&o, "nfs3srv:/export/home");
    CHECK(r != NULL);
    if (r) {
        CHECK(r->flags & RAW_IN_TOTAL);
        CHECK_INT(r->present, (1u << NFS_NFIELDS) - 1);
        CHECK_INT(r->v[NFS_RD_BYTES], 3600000);     /* serverreadbytes */
        CHECK_INT(r->v[NFS_WR_BYTES], 2000000);     /* serverwritebytes */
        CHECK_INT(r->v[NFS_APP_RD_BYTES], 3500000); /* 3000000 normal + 500000 direct */
        CHECK_INT(r->v[NFS_APP_WR_BYTES], 2000000);
        CHECK_INT(r->v[NFS_OPS], 1 + 1000 + 60 + 40 + 9);
        CHECK_INT(r->v[NFS_RTT_MS], 0 + 800 + 600 + 1000 + 9);
        CHECK_INT(r->v[NFS_EXE_MS], 0 + 900 + 650 + 1200 + 10);
    }
    r = row(&o, "nfs4srv:/");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->v[NFS_RD_BYTES], 10485760);
        CHECK_INT(r->v[NFS_WR_BYTES], 22020096);
        CHECK_INT(r->v[NFS_APP_WR_BYTES], 20971520 + 1048576);
        CHECK_INT(r->v[NFS_OPS], 1 + 10 + 21 + 2 + 5 + 0);
        CHECK_INT(r->v[NFS_RTT_MS], 100 + 420 + 6 + 10);
        CHECK_INT(r->v[NFS_EXE_MS], 110 + 440 + 7 + 12);
    }

    /* No NFS mount: no row, and 0 tells the collector to stop reading the file. */
    CHECK_INT(parse_file(netfs_parse_mountstats, "odd/mountstats-no-nfs", &o, &st), 0);
    CHECK_INT(o.n, 0);
    CHECK_INT(st.bad_lines, 0);

    /* statvers=1.0: six numbers on bytes:, eight (no errors) on each operation. */
    CHECK_INT(parse_file(netfs_parse_mountstats, "odd/mountstats-statvers1.0", &o, &st), 1);
    r = row(&o, "srv:/old");
    CHECK(r && r->present == (1u << NFS_NFIELDS) - 1);
    CHECK(r && r->v[NFS_RD_BYTES] == 50 && r->v[NFS_WR_BYTES] == 60);
    CHECK(r && r->v[NFS_APP_RD_BYTES] == 40 && r->v[NFS_APP_WR_BYTES] == 60);
    CHECK(r && r->v[NFS_OPS] == 8 && r->v[NFS_RTT_MS] == 11 && r->v[NFS_EXE_MS] == 15);

    /* A short bytes: line (2), a short operation line (4) and a device line of another shape (7)
     * are skipped; a line without "NAME:" among the operations is not an operation. */
    CHECK_INT(parse_file(netfs_parse_mountstats, "odd/mountstats-malformed", &o, &st), 3);
    CHECK_INT(st.bad_lines, 3);
    CHECK_INT(st.first_bad, 2);
    CHECK_INT(o.n, 2);
    r = row(&o, "a:/x");
    CHECK(r && r->present == (1u << NFS_OPS | 1u << NFS_RTT_MS | 1u << NFS_EXE_MS));
    CHECK(r && r->v[NFS_OPS] == 3 && r->v[NFS_RTT_MS] == 4 && r->v[NFS_EXE_MS] == 6);
    r = row(&o, "b:/y"); /* its first mount; the second (all 9s) is the same device */
    CHECK(r && r->v[NFS_RD_BYTES] == 5 && r->v[NFS_WR_BYTES] == 6 && r->v[NFS_APP_RD_BYTES] == 4);
    free(o.rows);
}

/* Every prefix of a file parses without reading past it (ASan watches), with no more rows than
 * the shares or mounts it counts, and those no more than the whole file's three (a prefix may cut
 * a name: then that row has a name of its own). */
static void test_prefixes(netfs_parser p, const char *rel)
{
    size_t len;
    char *buf = load(rel, &len);
    int ok = 1;

    for (size_t n = 0; n <= len; n++) {
        struct raw_object o = {0};
        struct linux_parse_status st = {0, 0};
        char *copy = malloc(n ? n : 1);

        memcpy(copy, buf, n);
        int rc = p(copy, n, &o, &st);

        ok &= rc >= 0 && rc <= 3 && o.n <= (size_t)rc;
        free(copy);
        free(o.rows);
    }
    CHECK(ok);
    free(buf);
}

int main(void)
{
    test_cifs();
    test_cifs_cut();
    test_mountstats();
    test_prefixes(netfs_parse_cifs_stats, "netfs/proc/fs/cifs/Stats");
    test_prefixes(netfs_parse_mountstats, "netfs/proc/self/mountstats");
    return tl_done();
}
