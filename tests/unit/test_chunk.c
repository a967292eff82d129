/*
 * test_chunk.c - the series chunk codec (storage/chunk.c): exact round trips on edge values
 * (64-bit extremes, wraps, gaps, NULLs, a series that appears and vanishes), the code chosen for
 * typical columns and its size, the block codes of version 2 (a width per group of 4: bursts,
 * width jumps of every size, 64-bit widths), the SCALE code of version 3 (values that share a
 * divisor), the Exp-Golomb codes and the presence as runs of version 4, refusal of malformed
 * chunks, and that version-1 chunks (written before the block codes) still decode.
 */
#include "storage/chunk.h"
#include "testlib.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_MAX 4096

static int64_t ticks[N_MAX], vals[N_MAX], dticks[N_MAX], dvals[N_MAX];
static uint8_t pres[N_MAX], dpres[N_MAX];

/* Encode points [0, n), decode them, and compare every point; returns the encoded size, or 0. */
static size_t roundtrip(size_t n, int with_pres)
{
    struct chunk_points in = {
        .n = n, .ticks = ticks, .values = vals, .present = with_pres ? pres : NULL};
    struct chunk_points out = {.ticks = dticks, .values = dvals, .present = dpres};
    uint8_t *buf = NULL;
    size_t len = 0, same = 1;

    if (chunk_encode(&in, &buf, &len) != 0)
        return 0;
    CHECK_INT(chunk_count(buf, len), (long)n);
    CHECK_INT(chunk_decode(buf, len, &out, n), 0);
    CHECK_INT(out.n, n);
    for (size_t i = 0; i < n && i < out.n; i++) {
        int p = with_pres ? pres[i] : 1;

        if (dticks[i] != ticks[i] || dpres[i] != p || (p && dvals[i] != vals[i]) ||
            (!p && dvals[i] != 0))
            same = 0;
        if (!same) {
            fprintf(stderr, "point %zu of %zu: tick %lld/%lld value %lld/%lld present %d/%d\n", i,
                    n, (long long)ticks[i], (long long)dticks[i], (long long)vals[i],
                    (long long)dvals[i], p, dpres[i]);
            break;
        }
    }
    CHECK(same);
    /* one byte short, and one byte more, are both refused */
    CHECK_INT(chunk_decode(buf, len - 1, &out, n), -EINVAL);
    CHECK_INT(out.n, 0);
    {
        uint8_t *longer = malloc(len + 1);

        memcpy(longer, buf, len);
        longer[len] = 0;
        CHECK_INT(chunk_decode(longer, len + 1, &out, n), -EINVAL);
        free(longer);
    }
    if (n > 1)
        CHECK_INT(chunk_decode(buf, len, &out, n - 1), -ENOSPC);
    free(buf);
    return len;
}

static void consecutive(size_t n, int64_t first)
{
    for (size_t i = 0; i < n; i++) {
        ticks[i] = first + (int64_t)i;
        pres[i] = 1;
    }
}

static void test_extremes(void)
{
    static const int64_t edge[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1};
    size_t n = sizeof edge / sizeof edge[0];

    consecutive(n, 1);
    memcpy(vals, edge, sizeof edge);
    CHECK(roundtrip(n, 0) > 0);
    /* only the extremes, alternating: every difference wraps */
    for (size_t i = 0; i < 64; i++)
        vals[i] = i % 2 ? INT64_MAX : INT64_MIN;
    consecutive(64, 1000);
    CHECK(roundtrip(64, 0) > 0);
    /* one point */
    vals[0] = INT64_MIN;
    ticks[0] = INT64_MAX;
    CHECK(roundtrip(1, 0) > 0);
    /* ticks at both ends of int64 (a difference of INT64_MAX is allowed, more is refused) */
    ticks[0] = -1;
    ticks[1] = INT64_MAX - 1;
    vals[0] = vals[1] = 5;
    CHECK(roundtrip(2, 0) > 0);
    {
        struct chunk_points in = {.n = 2, .ticks = ticks, .values = vals};
        uint8_t *buf = NULL;
        size_t len;

        ticks[0] = INT64_MIN;
        ticks[1] = 0;
        CHECK_INT(chunk_encode(&in, &buf, &len), -EINVAL);
        ticks[1] = INT64_MIN;
        CHECK_INT(chunk_encode(&in, &buf, &len), -EINVAL); /* not increasing */
        in.n = 0;
        CHECK_INT(chunk_encode(&in, &buf, &len), -EINVAL);
        in.n = CHUNK_MAX_POINTS + 1;
        CHECK_INT(chunk_encode(&in, &buf, &len), -EINVAL);
    }
}

/* A u32 counter's delta that wrapped is stored as a large value by the sampler's rules; the
 * codec just has to keep it. */
static void test_wraps_and_gaps(void)
{
    consecutive(600, 42);
    for (size_t i = 0; i < 600; i++)
        vals[i] = (int64_t)((i * 7919u) % 4096u);
    vals[300] = (int64_t)UINT32_MAX;
    CHECK(roundtrip(600, 0) > 0);
    /* ticks with gaps: missed ticks and a restart far later */
    for (size_t i = 0; i < 600; i++)
        ticks[i] = 1000 + (int64_t)i + (i > 100 ? 3 : 0) + (i > 400 ? 86400 : 0);
    CHECK(roundtrip(600, 0) > 0);
}

/* NULLs anywhere: first, last, all but one, every other; a series that appears mid-chunk (NULL
 * before) and vanishes (NULL after). */
static void test_nulls(void)
{
    size_t n = 100;

    consecutive(n, 7);
    for (size_t i = 0; i < n; i++)
        vals[i] = (int64_t)i * 1000;
    pres[0] = 0;
    pres[n - 1] = 0;
    CHECK(roundtrip(n, 1) > 0);
    for (size_t i = 0; i < n; i++)
        pres[i] = i == 50;
    CHECK(roundtrip(n, 1) > 0);
    for (size_t i = 0; i < n; i++)
        pres[i] = 0;
    CHECK(roundtrip(n, 1) > 0); /* no value at all */
    for (size_t i = 0; i < n; i++)
        pres[i] = i % 2;
    CHECK(roundtrip(n, 1) > 0);
    for (size_t i = 0; i < n; i++)
        pres[i] = i >= 30 && i < 70;
    CHECK(roundtrip(n, 1) > 0);
    /* 8 points exactly: the bitmap has no padding bits */
    consecutive(8, 1);
    pres[3] = 0;
    CHECK(roundtrip(8, 1) > 0);
}

/* The codes chosen for typical columns, by size: an idle counter (all 0), a steady byte rate,
 * a cumulative-looking column (small steps), noise of 12 bits. */
static void test_sizes(void)
{
    size_t n = 600, len;

    consecutive(n, 5000);
    memset(vals, 0, n * sizeof vals[0]);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 10); /* version, n (2), flags, tick (2), SAME 1, SAME 0 */
    for (size_t i = 0; i < n; i++)
        vals[i] = 1000000000 + (int64_t)i * 3;
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 16); /* DFOR of width 0 */
    srand(7);
    for (size_t i = 0; i < n; i++)
        vals[i] = 100000 + (rand() & 0xfff);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 16 + (n * 12 + 7) / 8); /* FOR of width 12 */
    for (size_t i = 0; i < n; i++)
        vals[i] = (i ? vals[i - 1] : 0) + (int64_t)(rand() % 3) - 1; /* a random walk */
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 12 + (n * 2 + 7) / 8);
}

/* Hand-made malformed chunks. */
static void test_malformed(void)
{
    struct chunk_points out = {.ticks = dticks, .values = dvals, .present = dpres};
    static const uint8_t bad_version[] = {5, 1, 0, 2, 0, 0};
    static const uint8_t zero_n[] = {1, 0, 0};
    static const uint8_t bad_flags[] = {1, 1, 2, 2, 0, 0};
    static const uint8_t width65[] = {1, 2, 0, 2, 0, 2, 1, 0, 65};
    static const uint8_t bad_code[] = {1, 1, 0, 2, 9, 0};
    static const uint8_t long_varint[] = {1,    0x80, 0x80, 0x80, 0x80, 0x80,
                                          0x80, 0x80, 0x80, 0x80, 2};
    static const uint8_t zero_step[] = {1, 2, 0, 2, 0, 0, 0, 0}; /* tick differences of 0 */
    static const uint8_t all_ones_bitmap[] = {1, 1, 1, 1, 2, 0, 0};
    static const uint8_t ok[] = {1, 1, 0, 2, 0, 6}; /* one point: tick 1, value 3 */

    CHECK_INT(chunk_decode(ok, sizeof ok, &out, 1), 0);
    CHECK_INT(out.n, 1);
    CHECK_INT(dticks[0], 1);
    CHECK_INT(dvals[0], 3);
    CHECK_INT(chunk_decode(bad_version, sizeof bad_version, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(zero_n, sizeof zero_n, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(bad_flags, sizeof bad_flags, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(width65, sizeof width65, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(bad_code, sizeof bad_code, &out, 4), -EINVAL);
    CHECK_INT(chunk_count(long_varint, sizeof long_varint), -EINVAL);
    CHECK_INT(chunk_decode(zero_step, sizeof zero_step, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(all_ones_bitmap, sizeof all_ones_bitmap, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(ok, 0, &out, 4), -EINVAL);
    CHECK_INT(chunk_count(ok, 1), -EINVAL);
    CHECK_INT(out.n, 0);
}

/* The code of the quotients of a SCALE at buf[6]: after the divisor's and v0's varints. */
static unsigned inner_code(const uint8_t *buf, size_t len)
{
    size_t at = 7;

    for (int varints = 0; varints < 2 && at < len; at++)
        if (!(buf[at] & 0x80))
            varints++;
    return at < len ? buf[at] : 99;
}

/* The code byte of the values of a chunk of n < 128 consecutive ticks from 1 without NULLs: after
 * version, n, flags, zz(tick 1) and the ticks' SAME (2 bytes). */
static unsigned values_code(size_t n)
{
    struct chunk_points in = {.n = n, .ticks = ticks, .values = vals};
    uint8_t *buf = NULL;
    size_t len = 0;
    unsigned code;

    CHECK_INT(chunk_encode(&in, &buf, &len), 0);
    CHECK(len > 6 && buf[1] == n && buf[3] == 2 && buf[4] == 0);
    code = len > 6 ? buf[6] : 99;
    /* the oldest version that reads the chunk: 4 with an Exp-Golomb code (in a SCALE too), 3
     * with a SCALE, else 2, so a perflogd of version 2 reads every other chunk */
    CHECK_INT(buf[0], (code >= 8 || (code == 7 && inner_code(buf, len) >= 8) ? 4
                       : code == 7                                           ? 3
                                                                             : 2));
    free(buf);
    return code;
}

/* The block codes: an idle counter with bursts (BFOR), a steady rate with bursts (BDFOR), a
 * level with small steps both ways and a jump now and then (BZZ): each chosen, each far smaller
 * than the single-width codes, each exact; and blocks at every width jump, 64 bits included. */
static void test_blocks(void)
{
    size_t n = 100, len;

    consecutive(n, 1);
    /* two bursts of 4 ticks, no common divisor (bursts all of 5000 take SCALE over 0 and 1); with
     * bursts every few groups, Exp-Golomb's bit a 0 costs more than the bursts' widths save */
    for (size_t i = 0; i < n; i++)
        vals[i] = (i >= 20 && i < 24) || (i >= 72 && i < 76) ? 5000 + (int64_t)i : 0;
    CHECK_INT(values_code(n), 4);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 30); /* 29: 6 of them the header; FOR takes 13 bits each, 172 bytes */
    srand(3);
    for (size_t i = 0; i < n; i++)
        vals[i] = (i ? vals[i - 1] : 1000000) + 1000 + (i % 29 == 3 ? 100000 : rand() % 4);
    CHECK_INT(values_code(n), 5);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 90); /* 79: 2 bits a group but for 4 bursts; DFOR 17 bits each, 217 */
    /* steps of exactly 1 up or down, zig-zag 1 or 2: 2 bits in a group of 4, 3 in Exp-Golomb */
    for (size_t i = 0; i < n; i++)
        vals[i] = (i ? vals[i - 1] : -7) + (i == 47 ? -5000 : rand() % 2 ? 1 : -1);
    CHECK_INT(values_code(n), 6);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 45); /* 45 with the header; DFOR takes 13 bits each, 173 bytes */
    /* groups of 4 at widths 0, 64, 0, 1, 4, 2, 3, 63, 59, 64, 60, 61, 0 (every kind of code) */
    {
        static const unsigned widths[] = {0, 64, 0, 1, 4, 2, 3, 63, 59, 64, 60, 61, 0};
        size_t k = 0;

        for (size_t g = 0; g < sizeof widths / sizeof widths[0]; g++)
            for (int j = 0; j < 4; j++, k++) {
                unsigned w = widths[g];
                uint64_t x = w == 0    ? 0
                             : w == 64 ? (j % 2 ? UINT64_MAX : UINT64_C(1) << 63)
                                       : (UINT64_C(1) << (w - 1)) | (uint64_t)j;

                vals[k] = (int64_t)x;
            }
        consecutive(k, 1);
        CHECK(roundtrip(k, 0) > 0);
        for (size_t i = 0; i < k; i++)
            vals[i] = vals[i] ^ INT64_MIN; /* the same widths around the other end */
        CHECK(roundtrip(k, 0) > 0);
        pres[5] = pres[6] = pres[40] = 0;
        CHECK(roundtrip(k, 1) > 0);
    }
}

/* The Exp-Golomb codes (version 4): small noisy counts with spikes (timer interrupts; BEG), a
 * level that mostly stays and now and then moves a little or a lot (BZEG): each chosen, each
 * shorter than the block codes were, each exact; orders up to 63; numbers of 2^63 and more
 * (where the code does not apply) take another code. */
static void test_eg(void)
{
    size_t n = 100, len;

    consecutive(n, 1);
    srand(11);
    for (size_t i = 0; i < n; i++)
        vals[i] = rand() % 16 == 0 ? 1000 + rand() % 4000 : 10 + rand() % 16;
    CHECK_INT(values_code(n), 8);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 85); /* 85 with the header's 6; the block codes 97 */
    srand(13);
    for (size_t i = 0; i < n; i++) {
        int r = rand() % 10;

        vals[i] = (i ? vals[i - 1] : 24000000) + (r < 6   ? 0
                                                  : r < 9 ? rand() % 9 - 4
                                                          : rand() % 2001 - 1000);
    }
    CHECK_INT(values_code(n), 9);
    len = roundtrip(n, 0);
    CHECK(len > 0 && len <= 66); /* 66 with the header's 6; BZZ 110 */
    /* groups of 16 at every order, 0 to 63: numbers of about 2^w, and a spike of 2^63 - 1 */
    for (size_t g = 0; g < 64; g++)
        for (size_t j = 0; j < 16; j++)
            vals[g * 16 + j] = g == 0 ? 0
                                      : (int64_t)((UINT64_C(1) << (g - 1)) |
                                                  (j * 7919 % (1u << (g < 12 ? g - 1 : 11))));
    vals[5] = INT64_MAX;
    consecutive(64 * 16, 1);
    CHECK(roundtrip(64 * 16, 0) > 0);
    pres[3] = pres[500] = 0;
    CHECK(roundtrip(64 * 16, 1) > 0);
    /* differences of 2^63 and more: zig-zag past 2^63, the code does not apply */
    for (size_t i = 0; i < n; i++)
        vals[i] = i % 2 ? INT64_MIN + (int64_t)(i % 7) : INT64_MAX - (int64_t)(i % 5);
    consecutive(n, 1);
    CHECK(values_code(n) < 8);
    CHECK(roundtrip(n, 0) > 0);
}

/* The presence as runs (version 4), where it is shorter than the bitmap: a series that never has
 * a value (an optional file a machine lacks), one whose first tick has none (a rate's first
 * sample), one that appears and vanishes; and the bitmap where runs are longer. */
static void test_runs(void)
{
    size_t n = 600;
    struct chunk_points in = {.ticks = ticks, .values = vals, .present = pres};
    uint8_t *buf = NULL;
    size_t len = 0;

    consecutive(n, 1);
    for (size_t i = 0; i < n; i++) {
        vals[i] = 0;
        pres[i] = 0;
    }
    CHECK(roundtrip(n, 1) > 0);
    in.n = n;
    CHECK_INT(chunk_encode(&in, &buf, &len), 0);
    /* version 4, n (2), flags 3, 2 runs (1): 0 (1) and 600 (2), tick (1), SAME 1 (2): no values */
    CHECK_INT(len, 11);
    CHECK(buf && buf[0] == 4 && buf[3] == 3);
    free(buf);
    for (size_t i = 0; i < n; i++) {
        vals[i] = 7 * (int64_t)i;
        pres[i] = i > 0;
    }
    CHECK(roundtrip(n, 1) > 0);
    CHECK_INT(chunk_encode(&in, &buf, &len), 0);
    CHECK(buf && buf[0] == 4 && buf[3] == 3 && len < 24); /* the bitmap alone is 75 bytes */
    free(buf);
    for (size_t i = 0; i < n; i++)
        pres[i] = i >= 100 && i < 350;
    CHECK(roundtrip(n, 1) > 0);
    /* every other point: runs of 1 take a byte each, the bitmap 1 bit */
    for (size_t i = 0; i < n; i++)
        pres[i] = i % 2;
    CHECK(roundtrip(n, 1) > 0);
    CHECK_INT(chunk_encode(&in, &buf, &len), 0);
    CHECK(buf && buf[3] == 1);
    free(buf);
}

/* Hand-made version-4 chunks: runs and Exp-Golomb streams that the decoder must refuse. */
static void test_v4_malformed(void)
{
    struct chunk_points out = {.ticks = dticks, .values = dvals, .present = dpres};
    /* 3 points, ticks 1..3, runs 1 present, 2 absent; the value: SAME 5 */
    static const uint8_t runs_ok[] = {4, 3, 3, 2, 1, 2, 2, 0, 2, 0, 10};
    static const uint8_t runs_v3[] = {3, 3, 3, 2, 1, 2, 2, 0, 2, 0, 10};
    static const uint8_t runs_flag_only[] = {4, 3, 2, 2, 1, 2, 2, 0, 2, 0, 10};
    static const uint8_t runs_one[] = {4, 3, 3, 1, 3, 2, 0, 2, 0, 10};      /* all present */
    static const uint8_t runs_short[] = {4, 3, 3, 2, 1, 1, 2, 0, 2, 0, 10}; /* 2 of 3 */
    static const uint8_t runs_empty[] = {4, 3, 3, 3, 1, 0, 2, 2, 0, 2, 0, 10};
    /* 2 points, ticks 1 and 2, values BEG min 0: order 0 (code 0), numbers 1 (bits 010), 0 (1) */
    static const uint8_t eg_ok[] = {4, 2, 0, 2, 0, 2, 8, 0, 0x14};
    static const uint8_t eg_v3[] = {3, 2, 0, 2, 0, 2, 8, 0, 0x14};
    static const uint8_t eg_pad[] = {4, 2, 0, 2, 0, 2, 8, 0, 0x34};
    static const uint8_t eg_cut[] = {4, 2, 0, 2, 0, 2, 8, 0};
    /* order 64 (1 1 1 then 64 in 7 bits) */
    static const uint8_t eg_order64[] = {4, 2, 0, 2, 0, 2, 8, 0, 0x07, 0x02, 0, 0, 0, 0, 0, 0,
                                         0, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0, 0, 0, 0, 0};
    /* order 0, then 64 zeros: a number of 2^64 or more */
    static const uint8_t eg_long[] = {4, 2, 0, 2,    0, 2, 8, 0, 0, 0, 0, 0, 0,
                                      0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0xff};

    CHECK_INT(chunk_decode(runs_ok, sizeof runs_ok, &out, 4), 0);
    CHECK_INT(out.n, 3);
    CHECK(dpres[0] == 1 && dpres[1] == 0 && dpres[2] == 0);
    CHECK_INT(dvals[0], 5);
    CHECK_INT(chunk_decode(runs_v3, sizeof runs_v3, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(runs_flag_only, sizeof runs_flag_only, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(runs_one, sizeof runs_one, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(runs_short, sizeof runs_short, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(runs_empty, sizeof runs_empty, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(eg_ok, sizeof eg_ok, &out, 4), 0);
    CHECK_INT(out.n, 2);
    CHECK_INT(dvals[0], 1);
    CHECK_INT(dvals[1], 0);
    CHECK_INT(chunk_decode(eg_v3, sizeof eg_v3, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(eg_pad, sizeof eg_pad, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(eg_cut, sizeof eg_cut, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(eg_order64, sizeof eg_order64, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(eg_long, sizeof eg_long, &out, 4), -EINVAL);
}

/* Hand-made block streams: 4 points, ticks 1..4, values BFOR min 0, then the bit stream. */
static void test_blocks_malformed(void)
{
    struct chunk_points out = {.ticks = dticks, .values = dvals, .present = dpres};
    /* 1 1 0 0 0 (w = 2), then 0 1 2 3 in 2 bits: 13 bits */
    static const uint8_t ok[] = {2, 4, 0, 2, 0, 2, 4, 0, 0x83, 0x1C};
    static const uint8_t padding[] = {2, 4, 0, 2, 0, 2, 4, 0, 0x83, 0x9C};
    static const uint8_t truncated[] = {2, 4, 0, 2, 0, 2, 4, 0, 0x83};
    static const uint8_t in_v1[] = {1, 4, 0, 2, 0, 2, 4, 0, 0x83, 0x1C};
    static const uint8_t w65[] = {2, 4, 0, 2, 0, 2, 4, 0, 0x0F, 0x02};       /* 1 1 1, 65 */
    static const uint8_t long_code[] = {2, 4, 0, 2, 0, 2, 4, 0, 0x17, 0, 0}; /* 1 1 1, 2 */
    static const uint8_t below_0[] = {2, 4, 0, 2, 0, 2, 4, 0, 0x05};         /* 1 0 1: -1 */
    /* version 1, DFOR: v0 5, dmin 1, width 1, differences 1 2 1 (bits 0 1 0) */
    static const uint8_t v1_dfor[] = {1, 4, 0, 2, 0, 2, 2, 10, 2, 1, 0x02};

    CHECK_INT(chunk_decode(ok, sizeof ok, &out, 4), 0);
    CHECK_INT(out.n, 4);
    for (int i = 0; i < 4; i++) {
        CHECK_INT(dticks[i], i + 1);
        CHECK_INT(dvals[i], i);
    }
    CHECK_INT(chunk_decode(padding, sizeof padding, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(truncated, sizeof truncated, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(in_v1, sizeof in_v1, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(w65, sizeof w65, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(long_code, sizeof long_code, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(below_0, sizeof below_0, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(v1_dfor, sizeof v1_dfor, &out, 4), 0);
    CHECK_INT(out.n, 4);
    CHECK_INT(dvals[0], 5);
    CHECK_INT(dvals[1], 6);
    CHECK_INT(dvals[2], 8);
    CHECK_INT(dvals[3], 9);
}

/* Random series of every shape: every encoding decodes to the input. */
/* SCALE (version 3): values that share a divisor are coded as their quotients. */
static void test_scale(void)
{
    size_t n = 120, len, len_plain; /* n < 128: values_code */

    /* a memory level in KiB of 4 KiB pages: a walk in steps of 4, runs of equal values */
    consecutive(n, 1);
    srand(5);
    for (size_t i = 0; i < n; i++)
        vals[i] = (i ? vals[i - 1] : 24281296) + (rand() % 3 ? 0 : 4 * (rand() % 200 - 100));
    CHECK_INT(values_code(n), 7);
    len = roundtrip(n, 0);
    /* the same series but one value off the grid: no divisor, 2 bits a changed value more */
    vals[n / 2] += 1;
    CHECK(values_code(n) != 7);
    len_plain = roundtrip(n, 0);
    CHECK(len > 0 && len + 10 < len_plain);
    /* sectors of 4 KiB writes, NULLs among them (the quotients of the present values) */
    for (size_t i = 0; i < n; i++) {
        vals[i] = (int64_t)(rand() % 50) * 8;
        pres[i] = i % 7 != 3;
    }
    CHECK(roundtrip(n, 1) > 0);
    /* negative multiples, both signs of the differences */
    for (size_t i = 0; i < n; i++)
        vals[i] = (i % 2 ? -1 : 1) * (int64_t)(i * 24);
    CHECK_INT(values_code(n), 7);
    CHECK(roundtrip(n, 0) > 0);
    /* 64-bit extremes: a divisor of 2^60 from INT64_MIN up; differences that overflow an int64_t
     * (INT64_MIN to INT64_MAX), or a divisor of 2^63, take no SCALE and stay exact */
    for (size_t i = 0; i < 16; i++)
        vals[i] = INT64_MIN + (int64_t)((i * 5 + i / 3) % 8) * ((int64_t)1 << 60);
    CHECK_INT(values_code(16), 7);
    CHECK(roundtrip(16, 0) > 0);
    vals[0] = INT64_MIN;
    vals[1] = INT64_MAX;
    vals[2] = INT64_MIN;
    vals[3] = 2;
    CHECK(values_code(4) != 7);
    CHECK(roundtrip(4, 0) > 0);
    vals[0] = 0;
    vals[1] = INT64_MIN;
    vals[2] = 0;
    CHECK(values_code(3) != 7);
    CHECK(roundtrip(3, 0) > 0);
    /* ticks every 10: the tick differences are SAME, not SCALE; values all equal: SAME */
    for (size_t i = 0; i < n; i++) {
        ticks[i] = 10 * (int64_t)i + 10;
        vals[i] = 4096;
    }
    CHECK(roundtrip(n, 0) > 0);
    {
        struct chunk_points in = {.n = n, .ticks = ticks, .values = vals};
        uint8_t *buf = NULL;

        CHECK_INT(chunk_encode(&in, &buf, &len), 0);
        CHECK(buf && buf[0] == 2 && len < 12);
        free(buf);
    }
}

/* Malformed SCALE codes are refused: in a version-2 chunk, a divisor below 2, a SCALE inside a
 * SCALE, a truncated one. */
static void test_scale_malformed(void)
{
    struct chunk_points out = {.ticks = dticks, .values = dvals, .present = dpres};
    /* 2 points, ticks 1 and 2 (SAME 1), values: SCALE g v0 then SAME 0 (quotients 0, 0) */
    static const uint8_t good[] = {3, 2, 0, 2, 0, 2, 7, 4, 6, 0, 0};
    static const uint8_t v2[] = {2, 2, 0, 2, 0, 2, 7, 4, 6, 0, 0};
    static const uint8_t g1[] = {3, 2, 0, 2, 0, 2, 7, 1, 6, 0, 0};
    static const uint8_t g0[] = {3, 2, 0, 2, 0, 2, 7, 0, 6, 0, 0};
    static const uint8_t nested[] = {3, 2, 0, 2, 0, 2, 7, 4, 6, 7, 2, 0, 0, 0};
    static const uint8_t cut[] = {3, 2, 0, 2, 0, 2, 7, 4, 6};

    CHECK_INT(chunk_decode(good, sizeof good, &out, 4), 0);
    CHECK_INT(out.n, 2);
    CHECK_INT(dvals[0], 3);
    CHECK_INT(dvals[1], 3);
    CHECK_INT(chunk_decode(v2, sizeof v2, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(g1, sizeof g1, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(g0, sizeof g0, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(nested, sizeof nested, &out, 4), -EINVAL);
    CHECK_INT(chunk_decode(cut, sizeof cut, &out, 4), -EINVAL);
}

static void test_random(void)
{
    srand(12345);
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + (size_t)(rand() % 700);
        int shift = rand() % 64, nulls = rand() % 3;
        int64_t t = (int64_t)(rand() % 100000) - 50000;

        for (size_t i = 0; i < n; i++) {
            uint64_t r = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand();

            t += 1 + (rand() % 10 == 0 ? rand() % 5 : 0);
            ticks[i] = t;
            vals[i] = (int64_t)(r >> shift) - (rand() % 2 ? (int64_t)(r >> (63 - shift % 63)) : 0);
            /* a third of the rounds on a grid of 2^k (SCALE, when it is shorter) */
            if (round % 3 == 1)
                vals[i] = (int64_t)((uint64_t)vals[i] << (shift % 13 + 1));
            pres[i] = nulls == 0 || rand() % (nulls * 3) != 0;
        }
        if (roundtrip(n, nulls != 0) == 0)
            CHECK(0);
    }
}

int main(void)
{
    test_extremes();
    test_wraps_and_gaps();
    test_nulls();
    test_sizes();
    test_malformed();
    test_blocks();
    test_blocks_malformed();
    test_scale();
    test_scale_malformed();
    test_eg();
    test_runs();
    test_v4_malformed();
    test_random();
    return tl_done();
}
