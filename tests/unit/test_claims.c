/*
 * test_claims.c - claims_parse on captured tool outputs (tests/fixtures/claims/): robocopy and
 * diskspd from the seeds, dd, fio and smbclient run on a Linux host, rsync --stats, locale
 * variants, and text that claims nothing.
 */
#include "claims.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/claims/%s", FIXTURES_DIR, name);
    f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Parse fixture `name`; returns what claims_parse returned. */
static int parse_fixture(const char *name, struct tool_claim *c)
{
    size_t len = 0;
    char *text = slurp(name, &len);
    int rc;

    memset(c, 0x55, sizeof(*c));
    rc = text ? claims_parse(text, len, c) : -1;
    free(text);
    return rc;
}

static int parse_str(const char *s, struct tool_claim *c)
{
    return claims_parse(s, strlen(s), c);
}

static void test_robocopy(void)
{
    struct tool_claim c;

    CHECK_INT(parse_fixture("robocopy.txt", &c), 1);
    CHECK_STR(c.name, "robocopy");
    CHECK_DBL(c.claimed_bytes_per_s, 1147160068.0, 0);
    CHECK_INT(c.claimed_bytes, 10LL << 30);
    CHECK_DBL(c.claimed_seconds, 9.0, 0);

    /* the seed's copy has its blanks squeezed */
    CHECK_INT(parse_fixture("robocopy-seed.txt", &c), 1);
    CHECK_STR(c.name, "robocopy");
    CHECK_DBL(c.claimed_bytes_per_s, 501959620.0, 0);
    CHECK_INT(c.claimed_bytes, 10LL << 30);
    CHECK_DBL(c.claimed_seconds, 21.0, 0);

    /* only MegaBytes/min: robocopy's mega is 2^20 */
    CHECK_INT(parse_fixture("robocopy-mbmin-only.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 7839.216 * MIB / 60.0, 1e-6);
    CHECK_INT(c.claimed_bytes, (int64_t)(512.5 * MIB));
    CHECK_DBL(c.claimed_seconds, 62.0, 0);

    CHECK_INT(parse_str("   Bytes :   1.5 k   1.5 k  0  0  0  0\n   Speed : 1536 Bytes/sec.\n", &c),
              1);
    CHECK_INT(c.claimed_bytes, 1536);
    CHECK_DBL(c.claimed_seconds, -1.0, 0);
    CHECK_INT(parse_str("   Bytes :   100   40  60  0  0  0\n   Speed : 40 Bytes/sec.\n", &c), 1);
    CHECK_INT(c.claimed_bytes, 40); /* the Copied column */
}

static void test_dd(void)
{
    struct tool_claim c;

    CHECK_INT(parse_fixture("dd.txt", &c), 1); /* GNU dd 9.1 on this host */
    CHECK_STR(c.name, "dd");
    CHECK_INT(c.claimed_bytes, 67108864);
    CHECK(c.claimed_seconds > 0);
    CHECK(c.claimed_bytes_per_s > 1e6);

    CHECK_INT(parse_str("268435456 bytes (268 MB, 256 MiB) copied, 0.5 s, 537 MB/s\n", &c), 1);
    CHECK_INT(c.claimed_bytes, 268435456);
    CHECK_DBL(c.claimed_seconds, 0.5, 0);
    CHECK_DBL(c.claimed_bytes_per_s, 537e6, 1e-3);

    CHECK_INT(parse_fixture("dd-de.txt", &c), 1); /* de_DE: decimal comma, German words */
    CHECK_INT(c.claimed_bytes, 268435456);
    CHECK_DBL(c.claimed_seconds, 0.5, 0);
    CHECK_DBL(c.claimed_bytes_per_s, 537e6, 1e-3);

    CHECK_INT(parse_fixture("dd-progress.txt", &c), 1); /* status=progress: the last one */
    CHECK_DBL(c.claimed_seconds, 2.5, 0);
    CHECK_DBL(c.claimed_bytes_per_s, 429e6, 1e-3);

    CHECK_INT(parse_fixture("dd-small.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 512);
    CHECK_DBL(c.claimed_bytes_per_s, 4.2e6, 1e-3);

    CHECK_INT(parse_str("1 byte copied, 2 s, 0.5 B/s", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 0.5, 0);
    CHECK_INT(parse_str("1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.001 s, 1 kB/s", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 1000.0, 0);
    CHECK_INT(parse_str("10737418240 bytes (11 GB, 10 GiB) copied, 4 s, 2.7 GB/s", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 2.7e9, 1e-3);
    CHECK_INT(c.claimed_bytes, 10737418240LL);
    CHECK_INT(parse_str("1048576 bytes copied, 1 s, 1 MiB/s", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, MIB, 0);
    CHECK_INT(parse_str("1048576 bytes copied, 1 s, 1 XB/s", &c), 0);
}

static void test_rsync(void)
{
    struct tool_claim c;

    CHECK_INT(parse_fixture("rsync-stats.txt", &c), 1);
    CHECK_STR(c.name, "rsync");
    CHECK_DBL(c.claimed_bytes_per_s, 76714616.57, 1e-6);
    CHECK_INT(c.claimed_bytes, 268435456); /* Total transferred file size */
    CHECK_DBL(c.claimed_seconds, (268501123.0 + 35.0) / 76714616.57, 1e-9);

    /* no --stats, a locale with '.' grouping and ',' decimals: sent + received */
    CHECK_INT(parse_fixture("rsync-plain.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 823068.0, 1e-6);
    CHECK_INT(c.claimed_bytes, 1234567 + 1035);
}

static void test_fio(void)
{
    struct tool_claim c;

    /* fio 3.33 --output-format=json, one job writing 32 MiB */
    CHECK_INT(parse_fixture("fio.json", &c), 1);
    CHECK_STR(c.name, "fio");
    CHECK_DBL(c.claimed_bytes_per_s, 4194304000.0, 0);
    CHECK_INT(c.claimed_bytes, 33554432);
    CHECK_DBL(c.claimed_seconds, 0.008, 1e-12);

    /* two randrw jobs: read and write of both summed */
    CHECK_INT(parse_fixture("fio-2jobs.json", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 455302736.0 + 427708631.0 + 380108800.0 + 458752000.0, 0);
    CHECK_INT(c.claimed_bytes, 8650752 + 8126464 + 7602176 + 9175040);
    CHECK_DBL(c.claimed_seconds, 0.020, 1e-12);

    /* a warning before the JSON */
    CHECK_INT(parse_str("fio: note\n{\"jobs\": [{\"read\": {\"bw_bytes\": 10, \"io_bytes\": 20, "
                        "\"runtime\": 2000}}]}\n",
                        &c),
              1);
    CHECK_DBL(c.claimed_bytes_per_s, 10.0, 0);
    CHECK_INT(c.claimed_bytes, 20);
    CHECK_DBL(c.claimed_seconds, 2.0, 0);
}

static void test_smbclient(void)
{
    struct tool_claim c;

    /* smbclient 4.17 put over SMB3: "kb/s" are KiB/s; no byte count or time printed */
    CHECK_INT(parse_fixture("smbclient-put.txt", &c), 1);
    CHECK_STR(c.name, "smbclient");
    CHECK_DBL(c.claimed_bytes_per_s, 555389.8 * 1024.0, 1e-6);
    CHECK_INT(c.claimed_bytes, -1);
    CHECK_DBL(c.claimed_seconds, -1.0, 0);

    /* mget: the session's average on the last line, "KiloBytes/sec" */
    CHECK_INT(parse_fixture("smbclient-mget.txt", &c), 1);
    CHECK_STR(c.name, "smbclient");
    CHECK_DBL(c.claimed_bytes_per_s, 12000.0 * 1024.0, 1e-6);

    /* a file named like the summary; a line cut before its unit claims nothing */
    CHECK_INT(
        parse_str("putting file a (average 1 kb/s) as \\b (2.0 kb/s) (average 3.0 kb/s)\n", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 3.0 * 1024.0, 0);
    CHECK_INT(parse_str("putting file a as \\b (2.0 kb/s) (average 3.0 k\n", &c), 0);
    CHECK_INT(parse_str("copying file a (average 3.0 kb/s)\n", &c), 0);
}

static void test_diskspd(void)
{
    struct tool_claim c;

    CHECK_INT(parse_fixture("diskspd-seed.txt", &c), 1); /* read test, seed 000 */
    CHECK_STR(c.name, "diskspd");
    CHECK_INT(c.claimed_bytes, 452276518912LL);
    CHECK_DBL(c.claimed_bytes_per_s, 3593.91 * MIB, 1e-3);
    CHECK_DBL(c.claimed_seconds, 120.02, 1e-12);

    CHECK_INT(parse_fixture("diskspd-write-seed.txt", &c), 1); /* write test: Read IO total 0 */
    CHECK_INT(c.claimed_bytes, 91473444864LL);
    CHECK_DBL(c.claimed_bytes_per_s, 726.87 * MIB, 1e-3);
}

static void test_nothing(void)
{
    struct tool_claim c, before;

    CHECK_INT(parse_fixture("garbage.txt", &c), 0);
    memset(&c, 0x5a, sizeof(c));
    before = c;
    CHECK_INT(parse_str("", &c), 0);
    CHECK_INT(claims_parse(NULL, 0, &c), 0);
    CHECK_INT(parse_str("Speed : 12 parsecs\nsent 5 bytes\n{\"jobs\": [1, 2]}\n", &c), 0);
    CHECK_INT(parse_str("{\"jobs\": [{\"read\": {}}]", &c), 0);
    CHECK_INT(parse_str("Total IO\ntotal: x | y\n", &c), 0);
    CHECK_INT(parse_str("5 bytes copied\n", &c), 0);
    CHECK(memcmp(&c, &before, sizeof(c)) == 0); /* untouched */
    /* not NUL-terminated: the length is the end */
    CHECK_INT(claims_parse("   Speed : 5 Bytes/sec.", 12, &c), 0);
}

static void test_last_wins(void)
{
    struct tool_claim c;
    const char *two = "1048576 bytes copied, 1 s, 1 MB/s\n"
                      "   Speed : 77 Bytes/sec.\n";

    CHECK_INT(parse_str(two, &c), 1);
    CHECK_STR(c.name, "robocopy");
    CHECK_INT(parse_str("   Speed : 77 Bytes/sec.\n1048576 bytes copied, 1 s, 1 MB/s\n", &c), 1);
    CHECK_STR(c.name, "dd");
}

int main(void)
{
    test_robocopy();
    test_dd();
    test_rsync();
    test_fio();
    test_diskspd();
    test_smbclient();
    test_nothing();
    test_last_wins();
    return tl_done();
}
