/*
 * test_claims.c - claims_parse on tool outputs (tests/fixtures/claims/, whose README says which
 * were captured from the real tool and which were written from a documented format): robocopy and
 * diskspd, dd, fio (JSON, normal text, terse), rsync (summary, --stats, progress lines), pv and
 * smbclient; locale variants, cut and concatenated outputs, and text that claims nothing. The
 * expected figures are read off the fixtures by hand.
 */
#include "claims.h"
#include "testlib.h"

#include <math.h>
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

/* A fixture's text (NUL-terminated, caller frees), or NULL. */
static char *fixture(const char *name, size_t *len)
{
    return slurp(name, len);
}

static void test_fio_text(void)
{
    struct tool_claim c;
    size_t n, m;
    char *t, *u, *both, *cut;

    /* "WRITE: bw=117MiB/s (123MB/s), ..., io=32.0MiB (33.6MB), run=273-273msec" */
    CHECK_INT(parse_fixture("fio-text-write.txt", &c), 1);
    CHECK_STR(c.name, "fio");
    CHECK_DBL(c.claimed_bytes_per_s, 117 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, 32 << 20);
    CHECK_DBL(c.claimed_seconds, 0.273, 1e-12);

    CHECK_INT(parse_fixture("fio-text-read.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 1778 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, 16 << 20);
    CHECK_DBL(c.claimed_seconds, 0.009, 1e-12);

    /* READ and WRITE of one group run at once: rates add up, the time is the longest job's */
    CHECK_INT(parse_fixture("fio-text-randrw-2jobs.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, (620 + 660) * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, (int64_t)(15.5 * MIB) + (int64_t)(16.5 * MIB));
    CHECK_DBL(c.claimed_seconds, 0.025, 1e-12);

    CHECK_INT(parse_fixture("fio-text-group-reporting.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 1524 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, 32 << 20);

    /* kb_base=1000 prints SI first: "bw=1118MB/s (1067MiB/s)", "io=16.8MB" */
    CHECK_INT(parse_fixture("fio-text-kb1000.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 1118e6, 1e-3);
    CHECK_INT(c.claimed_bytes, 16800000);
    CHECK_DBL(c.claimed_seconds, 0.015, 1e-12);

    /* two groups, one after the other: 16 MiB in 3 ms, then 16 MiB in 4 ms */
    CHECK_INT(parse_fixture("fio-text-2groups.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 32 << 20);
    CHECK_DBL(c.claimed_seconds, 0.007, 1e-12);
    CHECK_DBL(c.claimed_bytes_per_s, 32 * MIB / 0.007, 1e-3);

    /* MIXED repeats READ + WRITE under =both and is not counted twice; alone under =mixed */
    CHECK_INT(parse_fixture("fio-text-unified-both.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, (258 + 242) * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, (8448 + 7936) * 1024);
    CHECK_INT(parse_fixture("fio-text-unified-mixed.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 516 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, 16 << 20);
    CHECK_DBL(c.claimed_seconds, 0.031, 1e-12);

    t = fixture("fio-text-randrw-2jobs.txt", &n);
    u = fixture("fio-text-read.txt", &m);
    if (!t || !u) {
        free(t);
        free(u);
        return;
    }
    /* without the group summary (killed, cut): the jobs' own lines, summed */
    cut = strstr(t, "Run status group");
    CHECK(cut != NULL);
    CHECK_INT(claims_parse(t, (size_t)(cut - t), &c), 1);
    CHECK_STR(c.name, "fio");
    CHECK_DBL(c.claimed_bytes_per_s, (485 + 456 + 290 + 350) * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, (8448 + 7936 + 7424 + 8960) * 1024);
    CHECK_DBL(c.claimed_seconds, 0.025, 1e-12);
    /* only the tail from the summary on, as a long output reaches the daemon */
    CHECK_INT(claims_parse(cut, strlen(cut), &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, (620 + 660) * MIB, 1e-6);
    /* two fio runs in one output: the last one's */
    both = malloc(n + m + 1);
    if (both) {
        memcpy(both, t, n);
        memcpy(both + n, u, m + 1);
        CHECK_INT(claims_parse(both, n + m, &c), 1);
        CHECK_DBL(c.claimed_bytes_per_s, 1778 * MIB, 1e-6);
        CHECK_INT(c.claimed_bytes, 16 << 20);
        free(both);
    }
    free(t);
    free(u);

    /* a group line cut before its io= is not a summary: the job line stands in */
    CHECK_INT(
        parse_str("  write: IOPS=117, BW=117MiB/s (123MB/s)(32.0MiB/273msec)\n"
                  "  WRITE: bw=117MiB/s (123MB/s), 117MiB/s-117MiB/s (123MB/s-123MB/s), io=32",
                  &c),
        1);
    CHECK_DBL(c.claimed_bytes_per_s, 117 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, 32 << 20);
    /* zero and huge */
    CHECK_INT(parse_str("  mixed: IOPS=0, BW=0 (0)(0B/61msec)\n", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 0, 0);
    CHECK_INT(c.claimed_bytes, 0);
    CHECK_INT(
        parse_str("  WRITE: bw=12.5GiB/s (13.4GB/s), 12.5GiB/s-12.5GiB/s (13.4GB/s-13.4GB/s), "
                  "io=7500GiB (8053GB), run=600001-600001msec\n",
                  &c),
        1);
    CHECK_DBL(c.claimed_bytes_per_s, 12.5 * 1024 * MIB, 1e-3);
    CHECK_INT(c.claimed_bytes, 7500LL << 30);
    CHECK_DBL(c.claimed_seconds, 600.001, 1e-9);
    CHECK_INT(
        parse_str("  WRITE: bw=117XiB/s (123MB/s), io=32.0MiB (33.6MB), run=273-273msec\n", &c), 0);
    CHECK_INT(parse_str("  write: IOPS=117, BW=117MiB/s\n", &c), 0);
}

static void test_fio_terse(void)
{
    struct tool_claim c;

    /* version 3, two randrw jobs: KiB/s and KiB of both directions of both lines */
    CHECK_INT(parse_fixture("fio-terse-v3.txt", &c), 1);
    CHECK_STR(c.name, "fio");
    CHECK_DBL(c.claimed_bytes_per_s, (206048.0 + 193560 + 181073 + 218536) * 1024, 1e-6);
    CHECK_INT(c.claimed_bytes, (8448 + 7936 + 7424 + 8960) * 1024);
    CHECK_DBL(c.claimed_seconds, 0.041, 1e-12);

    /* version 4 adds a trim block, 5 adds samples and IOPS fields to each block */
    CHECK_INT(parse_fixture("fio-terse-v4.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, (187733.0 + 176355 + 181073 + 218536) * 1024, 1e-6);
    CHECK_INT(c.claimed_bytes, 32 << 20);
    CHECK_DBL(c.claimed_seconds, 0.045, 1e-12);
    CHECK_INT(parse_fixture("fio-terse-v5.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, (183652.0 + 172521 + 185600 + 224000) * 1024, 1e-6);
    CHECK_INT(c.claimed_bytes, 32 << 20);
    CHECK_DBL(c.claimed_seconds, 0.046, 1e-12);

    /* version 2 has no fio version field */
    CHECK_INT(parse_fixture("fio-terse-v2.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 468114.0 * 1024, 1e-6);
    CHECK_INT(c.claimed_bytes, 16 << 20);
    CHECK_DBL(c.claimed_seconds, 0.035, 1e-12);

    CHECK_INT(parse_fixture("fio-terse-write.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 455111.0 * 1024, 1e-6);
    CHECK_DBL(c.claimed_seconds, 0.036, 1e-12);

    /* =both: the mixed block after read and write is their sum again; =mixed: one block */
    CHECK_INT(parse_fixture("fio-terse-both-v3.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, (291310.0 + 273655) * 1024, 1e-6);
    CHECK_INT(c.claimed_bytes, 16 << 20);
    CHECK_INT(parse_fixture("fio-terse-mixed-v5.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 528516.0 * 1024, 1e-6);
    CHECK_INT(c.claimed_bytes, 16 << 20);
    CHECK_DBL(c.claimed_seconds, 0.031, 1e-12);

    /* a line cut inside its read block claims nothing; a version 6 is unknown */
    CHECK_INT(parse_str("3;fio-3.33;t;0;0;8448;206048;3219;41;0;0;0.000000;0.000000;4;5262\n", &c),
              0);
    CHECK_INT(parse_str("6;fio-9.0;t;0;0;1;2;3;4\n", &c), 0);
    CHECK_INT(parse_str("3;notfio;t;0;0;1;2;3;4\n", &c), 0);
}

static void test_fio_json_mixed(void)
{
    struct tool_claim c;

    /* unified_rw_reporting=mixed: the JSON has a "mixed" direction only */
    CHECK_INT(parse_fixture("fio-mixed.json", &c), 1);
    CHECK_STR(c.name, "fio");
    CHECK_DBL(c.claimed_bytes_per_s, 466033777.0, 0);
    CHECK_INT(c.claimed_bytes, 16 << 20);
    CHECK_DBL(c.claimed_seconds, 0.036, 1e-12);
    /* two groups in JSON: bytes over the summed times */
    CHECK_INT(
        parse_str("{\"jobs\": [{\"groupid\": 0, \"write\": {\"bw_bytes\": 100, \"io_bytes\": 200,"
                  " \"runtime\": 2000}}, {\"groupid\": 1, \"read\": {\"bw_bytes\": 50,"
                  " \"io_bytes\": 100, \"runtime\": 2000}}]}\n",
                  &c),
        1);
    CHECK_INT(c.claimed_bytes, 300);
    CHECK_DBL(c.claimed_seconds, 4.0, 0);
    CHECK_DBL(c.claimed_bytes_per_s, 75.0, 1e-12);
}

static void test_rsync_progress(void)
{
    struct tool_claim c;

    /* --info=progress2 alone: the last '\r' line, "33,554,432 100%  183.73MB/s    0:00:00 (xfr#4,
     * to-chk=0/5)"; rsync's MB are 2^20 */
    CHECK_INT(parse_fixture("rsync-progress2.txt", &c), 1);
    CHECK_STR(c.name, "rsync");
    CHECK_INT(c.claimed_bytes, 33554432);
    CHECK_DBL(c.claimed_bytes_per_s, 183.73 * MIB, 1e-3);
    CHECK_DBL(c.claimed_seconds, 33554432 / (183.73 * MIB), 1e-9);

    /* the 96 MiB copy at --bwlimit=8m took 11.97 s: "8.04MB/s" is 8.04 MiB/s (11.94 s); as
     * 8.04e6 B/s it would be 12.5 s */
    CHECK_INT(parse_fixture("rsync-progress2-stats.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 100663296); /* Total transferred file size */
    /* ...but the summary wins: "8,055,041.44 bytes/sec", (sent + received) / (12 s + 0.5 s) */
    CHECK_DBL(c.claimed_bytes_per_s, 8055041.44, 1e-6);
    CHECK_DBL(c.claimed_seconds, 12.5, 1e-6);
    CHECK_INT(parse_str("    100,663,296 100%    8.04MB/s    0:00:11 (xfr#1, to-chk=0/2)\n", &c),
              1);
    CHECK_DBL(100663296 / c.claimed_bytes_per_s, 11.94, 0.01);

    /* -v: progress lines then the summary; the payload is the progress' file data, not the wire's
     */
    CHECK_INT(parse_fixture("rsync-progress2-v.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 22375342.67, 1e-6);
    CHECK_INT(c.claimed_bytes, 33554432);
    CHECK_DBL(c.claimed_seconds, (33562894.0 + 120) / 22375342.67, 1e-9);

    /* -h: suffixes in units of 1000 ("sent 33.56M bytes ... 67.13M bytes/sec") */
    CHECK_INT(parse_fixture("rsync-progress2-h-stats.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 67.13e6, 1e-3);
    CHECK_INT(c.claimed_bytes, 33550000);
    CHECK_INT(parse_fixture("rsync-v-h.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 67.13e6, 1e-3);
    CHECK_INT(c.claimed_bytes, 33560000 + 120);

    /* nothing to transfer: 0 bytes of data, 123 bytes over the wire in "0.5 s" */
    CHECK_INT(parse_fixture("rsync-nochange.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 0);
    CHECK_DBL(c.claimed_bytes_per_s, 246.0, 1e-9);
    CHECK_DBL(c.claimed_seconds, 0.5, 1e-9);

    /* --progress: per file; the last line is the last file's */
    CHECK_INT(parse_fixture("rsync-progress1.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 8388608);
    CHECK_DBL(c.claimed_bytes_per_s, 69.57 * MIB, 1e-3);

    /* a line cut mid-transfer: bytes and the current rate, no time */
    CHECK_INT(parse_str("     53,182,464  52%    8.00MB/s    0:00:05  \r", &c), 1);
    CHECK_INT(c.claimed_bytes, 53182464);
    CHECK_DBL(c.claimed_bytes_per_s, 8 * MIB, 1e-6);
    CHECK_DBL(c.claimed_seconds, -1.0, 0);
    CHECK_INT(
        parse_str("  1,099,511,627,776 100%    1.23GB/s    0:14:12 (xfr#1, to-chk=0/1)\n", &c), 1);
    CHECK_INT(c.claimed_bytes, 1099511627776LL);
    CHECK_DBL(c.claimed_bytes_per_s, 1.23 * 1024 * MIB, 1e-3);
    CHECK_INT(parse_str("     53,182,464  152%    8.00MB/s    0:00:05\n", &c), 0);
    CHECK_INT(parse_str("     53,182,464  52%    8.00MiB/s    0:00:05\n", &c), 0);
    CHECK_INT(parse_str("sent 5 bytes  received 6 bytes  UNKNOWN bytes/sec\n", &c), 0);
}

static void test_pv(void)
{
    struct tool_claim c;
    const double rate = 4.02 * MIB;

    /* "8.00MiB 0:00:01 [4.02MiB/s] [====>] 100%": bytes, and the last update's average rate */
    CHECK_INT(parse_fixture("pv-default.txt", &c), 1);
    CHECK_STR(c.name, "pv");
    CHECK_INT(c.claimed_bytes, 8 << 20);
    CHECK_DBL(c.claimed_bytes_per_s, rate, 1e-6);
    CHECK_DBL(c.claimed_seconds, 8 * MIB / rate, 1e-9);

    /* 17 MiB over 2.53 s with a pause: the last rate is the average, 6.75 MiB/s */
    CHECK_INT(parse_fixture("pv-stdin-pause.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 17 << 20);
    CHECK_DBL(c.claimed_bytes_per_s, 6.75 * MIB, 1e-6);
    CHECK_DBL(c.claimed_seconds, 17 / 6.75, 1e-9);

    CHECK_INT(parse_fixture("pv-b.txt", &c), 1); /* -b: a size alone, ended by '\r' */
    CHECK_INT(c.claimed_bytes, 8 << 20);
    CHECK_DBL(c.claimed_bytes_per_s, -1.0, 0);
    CHECK_INT(parse_fixture("pv-r.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 4.03 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, -1);
    CHECK_INT(parse_fixture("pv-a.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, rate, 1e-6);
    CHECK_INT(parse_fixture("pv-ra.txt", &c), 1); /* rate, then average: the average */
    CHECK_DBL(c.claimed_bytes_per_s, rate, 1e-6);
    CHECK_INT(parse_fixture("pv-bra.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 8 << 20);
    CHECK_DBL(c.claimed_bytes_per_s, rate, 1e-6);
    CHECK_INT(parse_fixture("pv-bta.txt", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, rate, 1e-6);
    CHECK_INT(parse_fixture("pv-Wb.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 8 << 20);

    /* nothing: "0.00 B 0:00:00 [0.00 B/s]"; 5000 bytes print as "4.88KiB" */
    CHECK_INT(parse_fixture("pv-empty.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, 0);
    CHECK_DBL(c.claimed_bytes_per_s, 0, 0);
    CHECK_DBL(c.claimed_seconds, 0, 0);
    CHECK_INT(parse_fixture("pv-small.txt", &c), 1);
    CHECK_INT(c.claimed_bytes, llround(4.88 * 1024));
    CHECK_DBL(c.claimed_bytes_per_s, 4.93 * MIB, 1e-6);

    /* without -f pv prints nothing when stderr is no terminal */
    CHECK_INT(parse_fixture("pv-nof.txt", &c), 0);

    /* the brief's layout of newer pv, with a padded rate; huge; line mode (-l) is not bytes */
    CHECK_INT(parse_str("1.00GiB 0:00:01 [ 870MiB/s] [=========>] 100%            \r\n", &c), 1);
    CHECK_DBL(c.claimed_bytes_per_s, 870 * MIB, 1e-6);
    CHECK_INT(c.claimed_bytes, 1LL << 30);
    CHECK_INT(parse_str("9.09TiB 2:41:13 [ 985MiB/s] [<=>    ]\r", &c), 1);
    CHECK_INT(c.claimed_bytes, llround(9.09 * 1024 * 1024 * MIB));
    CHECK_INT(parse_str("17.0k 0:00:02 [6.75k/s] [<=>      ]\r", &c), 0);
    CHECK_INT(parse_str("[ 123/s]\r", &c), 0);
    CHECK_INT(parse_str("8.00MiB\n", &c), 0); /* a bare size not ended by '\r' */
    CHECK_INT(parse_str("8.00MiB 0:00:01 [4.02MiB/s] [====> x\r", &c), 0);
}

static void test_robocopy_more(void)
{
    struct tool_claim c;

    /* /MT:16: the same summary; Times' Total column */
    CHECK_INT(parse_fixture("robocopy-mt.txt", &c), 1);
    CHECK_STR(c.name, "robocopy");
    CHECK_DBL(c.claimed_bytes_per_s, 596523235.0, 0);
    CHECK_INT(c.claimed_bytes, 4LL << 30);
    CHECK_DBL(c.claimed_seconds, 31.0, 0);

    /* German labels, decimal commas: read by the rows' order */
    CHECK_INT(parse_fixture("robocopy-de.txt", &c), 1);
    CHECK_STR(c.name, "robocopy");
    CHECK_DBL(c.claimed_bytes_per_s, 536870912.0, 0);
    CHECK_INT(c.claimed_bytes, 1LL << 30);
    CHECK_DBL(c.claimed_seconds, 2.0, 0);

    /* localized, only per minute */
    CHECK_INT(
        parse_str("   Bytes :   3,0 m   3,0 m  0  0  0  0\n      Zeiten:   0:00:02   0:00:02\n"
                  "   Geschwindigkeit:   90,000 MegaBytes/Min.\n",
                  &c),
        1);
    CHECK_DBL(c.claimed_bytes_per_s, 90.0 * MIB / 60.0, 1e-6);
    CHECK_INT(c.claimed_bytes, 3 << 20);
    /* older robocopy's m:ss.fff times */
    CHECK_INT(parse_str("   Bytes :  19.8 m  190.0 k  19.6 m  0  0  12.5 k\n"
                        "   Times :   0:16.914   0:03.504   0:00.000   0:13.410\n"
                        "   Speed :   55525 Bytes/sec.\n",
                        &c),
              1);
    CHECK_DBL(c.claimed_seconds, 16.914, 1e-9);
    CHECK_INT(c.claimed_bytes, 190 * 1024);
    /* a localized-looking "speed" with no Times row before it is not robocopy's */
    CHECK_INT(parse_str("   Tempo:   90 MB/min\n", &c), 0);
}

static void test_diskspd_more(void)
{
    struct tool_claim c;

    CHECK_INT(parse_fixture("diskspd-rw.txt", &c), 1);
    CHECK_STR(c.name, "diskspd");
    CHECK_INT(c.claimed_bytes, 10737418240LL);
    CHECK_DBL(c.claimed_bytes_per_s, 170.64 * MIB, 1e-3);
    CHECK_DBL(c.claimed_seconds, 60.01, 1e-12);

    /* the Total IO table cut off: the read and write tables' totals added */
    CHECK_INT(parse_fixture("diskspd-rw-cut.txt", &c), 1);
    CHECK_STR(c.name, "diskspd");
    CHECK_INT(c.claimed_bytes, 10737418240LL);
    CHECK_DBL(c.claimed_bytes_per_s, 2 * 85.33 * MIB, 1e-3);
    CHECK_DBL(c.claimed_seconds, -1.0, 0);
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
    test_fio_text();
    test_fio_terse();
    test_fio_json_mixed();
    test_rsync_progress();
    test_pv();
    test_robocopy_more();
    test_diskspd_more();
    test_nothing();
    test_last_wins();
    return tl_done();
}
