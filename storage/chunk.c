/*
 * chunk.c - the series chunk codec; see chunk.h.
 *
 * Layout (all varints are unsigned LEB128, at most 10 bytes; "zz" is zig-zag, so that small
 * negative numbers stay short):
 *
 *   u8      version: the oldest that has every code the chunk uses: 4 with presence runs or
 *           code 8 or 9, else 3 when some seq uses code 7, else 2 (so a perflogd of before
 *           version 3 reads it); 1 is the first format (codes 0-3 only)
 *   varint  n, the number of points (1..CHUNK_MAX_POINTS)
 *   u8      flags: bit 0 = some value is absent (the presence follows); bit 1 = the presence as
 *           runs (version 4, only with bit 0); other bits 0
 *   [bit 0 alone: ceil(n / 8) bytes: bit i set = point i has a value, LSB first; padding bits 0]
 *   [bits 0 and 1: varint r (2..n+1), then r varints: the lengths of the runs of present and
 *    absent points, alternately, present first; only the first may be 0; they add up to n]
 *   varint  zz(tick[0])
 *   seq     the n - 1 tick differences (each >= 1), when n > 1
 *   seq     the m present values, when m > 0
 *
 * A seq of k >= 1 integers starts with a code byte:
 *   0 SAME   varint zz(v)                                  every value equal
 *   1 FOR    varint zz(min), u8 w, ceil(k w / 8) bytes     v - min in w bits each
 *   2 DFOR   varint zz(v0), varint zz(dmin), u8 w, bytes   (v[i] - v[i-1]) - dmin, i >= 1
 *   3 DVAR   varint zz(v0), k - 1 varints zz(v[i] - v[i-1])
 *   4 BFOR   varint zz(min), blocks of v - min                      (version 2)
 *   5 BDFOR  varint zz(v0), varint zz(dmin), blocks of (v[i] - v[i-1]) - dmin, i >= 1
 *   6 BZZ    varint zz(v0), blocks of zz(v[i] - v[i-1]), i >= 1
 *   7 SCALE  varint g (>= 2), varint zz(v0), then a seq of codes 0-6 (version 4: and 8-9) of
 *            the k numbers q[i] = (v[i] - v0) / g                            (version 3)
 *            when every v[i] - v0 is a multiple of g: memory sizes in KiB of 4 KiB pages,
 *            sectors of 4 KiB writes, jiffies of a 250 Hz kernel in ms: 2-3 bits a value less
 *   8 BEG    varint zz(min), Exp-Golomb groups of v - min                    (version 4)
 *   9 BZEG   varint zz(v0), Exp-Golomb groups of zz(v[i] - v[i-1]), i >= 1   (version 4)
 * Blocks: the unsigned numbers in groups of BLOCK (4; the last group may be shorter), each group
 * in its own width w (0..64 bits, the fewest that hold its largest number), so that a burst costs
 * only the groups it touches: an idle counter with a write now and then is zeros but for a few
 * groups. One bit stream from a byte boundary, LSB first, zero padding bits to the next byte: per
 * group a width code against the previous group's width p (0 before the first group), then its
 * numbers in w bits each. The width code, bits in stream order:
 *   0               w = p
 *   1 0 s           w = p + 1 (s = 0) or p - 1 (s = 1)
 *   1 1 0 s m       w = p + (2 + m) (s = 0) or p - (2 + m) (s = 1)
 *   1 1 1 w[7]      w itself, in 7 bits (<= 64)
 * The encoder picks the shortest. Bits are packed LSB first. With consecutive ticks the tick
 * differences are all 1: SAME, two bytes for the whole chunk.
 * Exp-Golomb groups: the numbers (each below 2^63) in groups of EG_BLOCK (16; the last may be
 * shorter), one bit stream as above: per group its order k (0..63) as a width code against the
 * previous group's order, then each number x as q = x >> k in the Exp-Golomb code (z zeros, a
 * one, the z bits of q + 1 below its top bit, LSB first; z the bits of q + 1 less one) followed
 * by the k low bits of x. A small number costs k + 1 bits, a spike about twice its width: where
 * timer interrupts, page faults or pressure stalls sit at a few bits with a burst now and then
 * (on a 1 h file of this VM's counters, 11 % fewer bytes in all than without these codes). The
 * encoder tries the one of the two whose numbers
 * BFOR or BZZ (the same numbers) codes shorter, with the order of each group among the three
 * next to the median width of its numbers.
 */
#include "storage/chunk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    SEQ_SAME = 0,
    SEQ_FOR = 1,
    SEQ_DFOR = 2,
    SEQ_DVAR = 3,
    SEQ_BFOR = 4,
    SEQ_BDFOR = 5,
    SEQ_BZZ = 6,
    SEQ_SCALE = 7,
    SEQ_BEG = 8,
    SEQ_BZEG = 9
};
enum { BLOCK = 4, EG_BLOCK = 16 };
enum { FLAG_ABSENT = 1, FLAG_RUNS = 2 };

struct bytes {
    uint8_t *p;
    size_t len, cap;
    int oom;
};

static void put(struct bytes *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        uint8_t *p;

        while (cap < b->len + n)
            cap *= 2;
        p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u8(struct bytes *b, unsigned v)
{
    uint8_t c = (uint8_t)v;

    put(b, &c, 1);
}

static uint64_t zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v < 0 ? -1 : 0);
}

static int64_t unzz(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

/* The bits of range: 0 for 0, 64 for a number with the top bit set. */
static unsigned width_of(uint64_t range)
{
#if defined(__GNUC__) || defined(__clang__)
    return range ? 64u - (unsigned)__builtin_clzll(range) : 0u;
#else
    unsigned w = 0;

    while (range) {
        w++;
        range >>= 1;
    }
    return w;
#endif
}

/* The zero bits below the lowest one of x, which is not 0. */
static unsigned trailing_zeros(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned t = 0;

    while (!(x & 1)) {
        x >>= 1;
        t++;
    }
    return t;
#endif
}

static size_t varint_size(uint64_t v)
{
    return v < 0x80 ? 1 : (width_of(v) + 6) / 7;
}

static void put_varint(struct bytes *b, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;

    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    put(b, buf, n);
}

static size_t packed_size(size_t k, unsigned w)
{
    return (k * w + 7) / 8;
}

/* The values x[i] - base (mod 2^64) in w bits each, LSB first; x[i] is v[i], or v[i] - v[i-1]
 * for i >= 1 when `diff`. */
static void put_packed(struct bytes *b, const int64_t *v, size_t k, uint64_t base, unsigned w,
                       int diff)
{
    unsigned cur = 0, nbits = 0;

    for (size_t i = diff ? 1 : 0; i < k; i++) {
        uint64_t x = (diff ? (uint64_t)v[i] - (uint64_t)v[i - 1] : (uint64_t)v[i]) - base;

        for (unsigned done = 0; done < w;) {
            unsigned take = 8 - nbits < w - done ? 8 - nbits : w - done;

            cur |= (unsigned)((x >> done) & ((1u << take) - 1)) << nbits;
            nbits += take;
            done += take;
            if (nbits == 8) {
                put_u8(b, cur);
                cur = nbits = 0;
            }
        }
    }
    if (nbits)
        put_u8(b, cur);
}

/* The signed minimum and maximum of v[from..k), in int64_t order, of plain or first-difference
 * values; the range max - min as uint64_t. */
static uint64_t range_of(const int64_t *v, size_t k, int diff, int64_t *min_out)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;

    for (size_t i = diff ? 1 : 0; i < k; i++) {
        int64_t x = diff ? (int64_t)((uint64_t)v[i] - (uint64_t)v[i - 1]) : v[i];

        if (x < lo)
            lo = x;
        if (x > hi)
            hi = x;
    }
    *min_out = lo;
    return (uint64_t)hi - (uint64_t)lo;
}

/* ---- blocks (version 2): a width per group of BLOCK numbers ---- */

static unsigned wcode_bits(unsigned w, unsigned prev)
{
    unsigned d = w > prev ? w - prev : prev - w;

    return d == 0 ? 1 : d == 1 ? 3 : d <= 3 ? 5 : 10;
}

/* The bytes of the block streams of BFOR (base vmin), BDFOR (base dmin) and BZZ over v[0..k), k
 * >= 2, in one pass: size[0], size[1], size[2]. */
static void blk_sizes(const int64_t *v, size_t k, uint64_t vmin, uint64_t dmin, size_t size[3])
{
    size_t bits[3] = {0, 0, 0};
    unsigned prev[3] = {0, 0, 0};

    /* BFOR's groups start at 0, the differences' at 1 */
    for (size_t i = 0; i < k; i += BLOCK) {
        size_t end = i + BLOCK < k ? i + BLOCK : k;
        uint64_t all = 0;
        unsigned w;

        for (size_t j = i; j < end; j++)
            all |= (uint64_t)v[j] - vmin;
        w = width_of(all);
        bits[0] += wcode_bits(w, prev[0]) + (size_t)w * (end - i);
        prev[0] = w;
    }
    for (size_t i = 1; i < k; i += BLOCK) {
        size_t end = i + BLOCK < k ? i + BLOCK : k;
        uint64_t all_d = 0, all_z = 0;
        unsigned w;

        for (size_t j = i; j < end; j++) {
            uint64_t d = (uint64_t)v[j] - (uint64_t)v[j - 1];

            all_d |= d - dmin;
            all_z |= zz((int64_t)d);
        }
        w = width_of(all_d);
        bits[1] += wcode_bits(w, prev[1]) + (size_t)w * (end - i);
        prev[1] = w;
        w = width_of(all_z);
        bits[2] += wcode_bits(w, prev[2]) + (size_t)w * (end - i);
        prev[2] = w;
    }
    for (int m = 0; m < 3; m++)
        size[m] = (bits[m] + 7) / 8;
}

struct bitw {
    struct bytes *b;
    uint64_t acc;
    unsigned n; /* < 32 between calls */
};

/* The low nb bits of x (nb <= 32), LSB first. */
static void bw_put32(struct bitw *bw, uint64_t x, unsigned nb)
{
    bw->acc |= (x & ((UINT64_C(1) << nb) - 1)) << bw->n;
    bw->n += nb;
    if (bw->n >= 32) {
        uint8_t four[4] = {(uint8_t)bw->acc, (uint8_t)(bw->acc >> 8), (uint8_t)(bw->acc >> 16),
                           (uint8_t)(bw->acc >> 24)};

        put(bw->b, four, 4);
        bw->acc >>= 32;
        bw->n -= 32;
    }
}

static void bw_put(struct bitw *bw, uint64_t x, unsigned nb)
{
    if (nb > 32) {
        bw_put32(bw, x, 32);
        x >>= 32;
        nb -= 32;
    }
    bw_put32(bw, x, nb);
}

static void bw_flush(struct bitw *bw)
{
    for (; bw->n > 0; bw->n = bw->n > 8 ? bw->n - 8 : 0) {
        put_u8(bw->b, (unsigned)(bw->acc & 0xff));
        bw->acc >>= 8;
    }
}

static void put_wcode(struct bitw *bw, unsigned w, unsigned prev)
{
    unsigned d = w > prev ? w - prev : prev - w;

    if (d == 0) {
        bw_put32(bw, 0, 1);
    } else if (d == 1) {
        bw_put32(bw, 1u | (unsigned)(w < prev) << 2, 3); /* 1 0 s */
    } else if (d <= 3) {
        bw_put32(bw, 3u | (unsigned)(w < prev) << 3 | (d - 2) << 4, 5); /* 1 1 0 s m */
    } else {
        bw_put32(bw, 7u | w << 3, 10); /* 1 1 1 w[7] */
    }
}

/* The numbers x[from..k) of one block code (see the layout), computed into `x` by the caller. */
static void put_blocks(struct bytes *b, const uint64_t *x, size_t from, size_t k)
{
    struct bitw bw = {.b = b};
    unsigned prev = 0;

    for (size_t i = from; i < k; i += BLOCK) {
        size_t end = i + BLOCK < k ? i + BLOCK : k;
        uint64_t all = 0;
        unsigned w;

        for (size_t j = i; j < end; j++)
            all |= x[j];
        w = width_of(all);
        put_wcode(&bw, w, prev);
        for (size_t j = i; j < end; j++)
            bw_put(&bw, x[j], w);
        prev = w;
    }
    bw_flush(&bw);
}

/* ---- Exp-Golomb groups (version 4) ---- */

/* The bits of x in the Exp-Golomb code of order k: q = x >> k as z zeros, a one and the z low
 * bits of q + 1 (z = bits of q + 1 less one), then the k low bits of x. x < 2^63. */
static size_t eg_bits(uint64_t x, unsigned k)
{
    return 2 * (size_t)width_of((x >> k) + 1) - 1 + k;
}

/* The order of a group of cnt (1..EG_BLOCK) numbers below 2^63: of the orders next to the
 * group's median bit width (one less, it, one more; up to 63), the one that codes it in the fewest
 * bits (the lowest on a tie), which it returns with those bits in *bits. The median is where one
 * more bit of order stops paying: it costs every number a bit and saves two on each number wider
 * than the order. */
static unsigned eg_order(const uint64_t *x, size_t cnt, size_t *bits)
{
    unsigned char hist[65] = {0}; /* numbers by width */
    unsigned k0 = 0, best_k = 0;
    size_t best = SIZE_MAX, below = 0;

    for (size_t i = 0; i < cnt; i++)
        hist[width_of(x[i])]++;
    /* the width of the number at index cnt / 2 in width order */
    while ((below += hist[k0]) <= cnt / 2)
        k0++;
    for (unsigned k = k0 ? k0 - 1 : 0; k <= k0 + 1 && k <= 63; k++) {
        size_t b = 0;

        for (size_t i = 0; i < cnt; i++)
            b += eg_bits(x[i], k);
        if (b < best) {
            best = b;
            best_k = k;
        }
    }
    *bits = best;
    return best_k;
}

/* The numbers of an Exp-Golomb code over v[0..k): x[i] = v[i] - vmin (BEG, i >= 0) or
 * zz(v[i] - v[i-1]) (BZEG, i >= 1), group by group into g; returns how many (at most EG_BLOCK)
 * from index i, or 0 past the end. */
static size_t eg_group(const int64_t *v, size_t k, unsigned code, uint64_t vmin, size_t i,
                       uint64_t g[EG_BLOCK])
{
    size_t cnt = 0;

    for (; i < k && cnt < EG_BLOCK; i++, cnt++)
        g[cnt] = code == SEQ_BEG ? (uint64_t)v[i] - vmin
                                 : zz((int64_t)((uint64_t)v[i] - (uint64_t)v[i - 1]));
    return cnt;
}

/* The bytes of the bit stream of code BEG or BZEG over v[0..k), or SIZE_MAX when a number is not
 * below 2^63 (the code does not apply). */
static size_t eg_size(const int64_t *v, size_t k, unsigned code, uint64_t vmin)
{
    uint64_t g[EG_BLOCK];
    size_t bits = 0, cnt, b;
    unsigned prev = 0;

    for (size_t i = code == SEQ_BEG ? 0 : 1; (cnt = eg_group(v, k, code, vmin, i, g)) > 0;
         i += cnt) {
        unsigned ord;

        for (size_t j = 0; j < cnt; j++)
            if (g[j] >> 63)
                return SIZE_MAX;
        ord = eg_order(g, cnt, &b);
        bits += wcode_bits(ord, prev) + b;
        prev = ord;
    }
    return (bits + 7) / 8;
}

/* The bit stream of code BEG or BZEG over v[0..k) (every number below 2^63): per group of
 * EG_BLOCK numbers its order as a width code against the previous group's (0 before the first),
 * then each number in the Exp-Golomb code of that order (eg_bits). */
static void put_eg(struct bytes *b, const int64_t *v, size_t k, unsigned code, uint64_t vmin)
{
    struct bitw bw = {.b = b};
    uint64_t g[EG_BLOCK];
    size_t cnt, bits;
    unsigned prev = 0;

    for (size_t i = code == SEQ_BEG ? 0 : 1; (cnt = eg_group(v, k, code, vmin, i, g)) > 0;
         i += cnt) {
        unsigned ord = eg_order(g, cnt, &bits);

        put_wcode(&bw, ord, prev);
        for (size_t j = 0; j < cnt; j++) {
            uint64_t q1 = (g[j] >> ord) + 1;
            unsigned z = width_of(q1) - 1;

            bw_put(&bw, UINT64_C(1) << z, z + 1); /* z zeros, then a one */
            bw_put(&bw, q1, z);                   /* the bits of q + 1 below its top one */
            bw_put(&bw, g[j], ord);
        }
        prev = ord;
    }
    bw_flush(&bw);
}

/* The shortest of codes 0-6, 8 and 9 for v[0..k) and its size in bytes, computed without writing
 * it. */
struct seq_plan {
    unsigned code;
    size_t size;
    int64_t vmin, dmin;
    unsigned w, wd;
};

static void seq_plan(const int64_t *v, size_t k, struct seq_plan *p)
{
    uint64_t vrange = range_of(v, k, 0, &p->vmin);
    size_t for_size, dfor_size, dvar_size, bs[3], bfor, bdfor, bzz;

    p->w = width_of(vrange);
    p->wd = 0;
    p->dmin = 0;
    if (vrange == 0) {
        p->code = SEQ_SAME;
        p->size = 1 + varint_size(zz(v[0]));
        return;
    }
    /* k >= 2 here: one value has no range */
    for_size = 2 + varint_size(zz(p->vmin)) + packed_size(k, p->w);
    p->wd = width_of(range_of(v, k, 1, &p->dmin));
    dfor_size = 2 + varint_size(zz(v[0])) + varint_size(zz(p->dmin)) + packed_size(k - 1, p->wd);
    dvar_size = 1 + varint_size(zz(v[0]));
    for (size_t i = 1; i < k; i++)
        dvar_size += varint_size(zz((int64_t)((uint64_t)v[i] - (uint64_t)v[i - 1])));
    blk_sizes(v, k, (uint64_t)p->vmin, (uint64_t)p->dmin, bs);
    bfor = 1 + varint_size(zz(p->vmin)) + bs[0];
    bdfor = 1 + varint_size(zz(v[0])) + varint_size(zz(p->dmin)) + bs[1];
    bzz = 1 + varint_size(zz(v[0])) + bs[2];
    p->size = for_size;
    if (dfor_size < p->size)
        p->size = dfor_size;
    if (dvar_size < p->size)
        p->size = dvar_size;
    if (bfor < p->size || bdfor < p->size || bzz < p->size) {
        /* the first of the shortest block codes, in this order */
        p->code = bfor <= bdfor && bfor <= bzz ? SEQ_BFOR : bdfor <= bzz ? SEQ_BDFOR : SEQ_BZZ;
        p->size = p->code == SEQ_BFOR ? bfor : p->code == SEQ_BDFOR ? bdfor : bzz;
    } else {
        p->code = for_size <= dfor_size && for_size <= dvar_size ? SEQ_FOR
                  : dfor_size <= dvar_size                       ? SEQ_DFOR
                                                                 : SEQ_DVAR;
    }
    /* Exp-Golomb takes at least a bit a number: no use trying where the best is as short. It
     * codes the numbers of the shorter of BFOR and BZZ (the values less their minimum, or their
     * differences' zig-zag): on this machine's 1 h file, trying both saved 10 bytes in 125 000 */
    if (p->size > 2 + (k + 7) / 8) {
        unsigned code = bfor <= bzz ? SEQ_BEG : SEQ_BZEG;
        size_t eg = eg_size(v, k, code, (uint64_t)p->vmin);

        if (eg != SIZE_MAX) {
            eg += 1 + varint_size(zz(code == SEQ_BEG ? p->vmin : v[0]));
            if (eg < p->size) {
                p->code = code;
                p->size = eg;
            }
        }
    }
}

/* Write v[0..k) in the code `p` chose. */
static void seq_write(struct bytes *b, const int64_t *v, size_t k, const struct seq_plan *p)
{
    uint64_t *x;

    put_u8(b, p->code);
    switch (p->code) {
    case SEQ_SAME:
        put_varint(b, zz(v[0]));
        return;
    case SEQ_FOR:
        put_varint(b, zz(p->vmin));
        put_u8(b, p->w);
        put_packed(b, v, k, (uint64_t)p->vmin, p->w, 0);
        return;
    case SEQ_DFOR:
        put_varint(b, zz(v[0]));
        put_varint(b, zz(p->dmin));
        put_u8(b, p->wd);
        put_packed(b, v, k, (uint64_t)p->dmin, p->wd, 1);
        return;
    case SEQ_DVAR:
        put_varint(b, zz(v[0]));
        for (size_t i = 1; i < k; i++)
            put_varint(b, zz((int64_t)((uint64_t)v[i] - (uint64_t)v[i - 1])));
        return;
    default: /* the block codes */
        break;
    }
    if (p->code == SEQ_BEG || p->code == SEQ_BZEG) {
        put_varint(b, zz(p->code == SEQ_BEG ? p->vmin : v[0]));
        put_eg(b, v, k, p->code, (uint64_t)p->vmin);
        return;
    }
    x = malloc(k * sizeof *x);
    if (!x) {
        b->oom = 1;
        return;
    }
    if (p->code == SEQ_BFOR) {
        put_varint(b, zz(p->vmin));
        for (size_t i = 0; i < k; i++)
            x[i] = (uint64_t)v[i] - (uint64_t)p->vmin;
    } else {
        put_varint(b, zz(v[0]));
        if (p->code == SEQ_BDFOR)
            put_varint(b, zz(p->dmin));
        for (size_t i = 1; i < k; i++) {
            uint64_t d = (uint64_t)v[i] - (uint64_t)v[i - 1];

            x[i] = p->code == SEQ_BDFOR ? d - (uint64_t)p->dmin : zz((int64_t)d);
        }
    }
    put_blocks(b, x, p->code == SEQ_BFOR ? 0 : 1, k);
    free(x);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;

        a = b;
        b = t;
    }
    return a;
}

/* The greatest common divisor g of the differences v[i] - v[0] when it is at least 2 and each of
 * them, and g, fit an int64_t (so q[i] = (v[i] - v[0]) / g is exact); else 0. Stops at the first
 * difference that leaves g at 1, so a noisy series costs a few steps. */
static uint64_t scale_of(const int64_t *v, size_t k)
{
    uint64_t g = 0;

    for (size_t i = 1; i < k; i++) {
        int64_t d;

        if ((v[0] < 0 && v[i] > INT64_MAX + v[0]) || (v[0] > 0 && v[i] < INT64_MIN + v[0]))
            return 0; /* v[i] - v[0] does not fit */
        d = v[i] - v[0];
        g = gcd64(g, d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d);
        if (g == 1)
            return 0;
    }
    return g >= 2 && g <= (uint64_t)INT64_MAX ? g : 0;
}

/* The chunk version a seq of code `code` needs: 4 for the Exp-Golomb codes, else 2. */
static unsigned code_version(unsigned code)
{
    return code == SEQ_BEG || code == SEQ_BZEG ? 4 : 2;
}

/* A seq of v[0..k): the shortest of codes 0-6, 8 and 9, or of SCALE over them when the values
 * share a divisor (the plain one on a tie). Raises *version to what the codes written need. */
static void put_seq(struct bytes *b, const int64_t *v, size_t k, unsigned *version)
{
    uint64_t g = k >= 2 ? scale_of(v, k) : 0;
    struct seq_plan plain, sc;
    unsigned need = 0;
    int64_t *q = NULL;

    seq_plan(v, k, &plain);
    if (g) {
        q = malloc(k * sizeof *q);
        if (!q) {
            b->oom = 1;
            return;
        }
        for (size_t i = 0; i < k; i++)
            q[i] = (v[i] - v[0]) / (int64_t)g;
        seq_plan(q, k, &sc);
    }
    if (g && 1 + varint_size(g) + varint_size(zz(v[0])) + sc.size < plain.size) {
        put_u8(b, SEQ_SCALE);
        put_varint(b, g);
        put_varint(b, zz(v[0]));
        seq_write(b, q, k, &sc);
        need = code_version(sc.code) > 3 ? code_version(sc.code) : 3;
    } else {
        seq_write(b, v, k, &plain);
        need = code_version(plain.code);
    }
    free(q);
    if (need > *version)
        *version = need;
}

/* The runs of present and absent points of present[0..n): the first of present ones (it may be
 * empty), then alternately absent and present, each at least one point. Writes their lengths as
 * varints to b when b is not NULL; returns their count, and their bytes in *bytes. */
static size_t put_runs(struct bytes *b, const uint8_t *present, size_t n, size_t *bytes)
{
    size_t count = 0, len = 0;
    uint8_t cur = 1;

    *bytes = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && (present[i] != 0) == cur) {
            len++;
            continue;
        }
        *bytes += varint_size(len);
        count++;
        if (b)
            put_varint(b, len);
        cur = !cur;
        len = 1;
    }
    return count;
}

int chunk_encode(const struct chunk_points *p, uint8_t **out, size_t *out_len)
{
    struct bytes b = {0};
    int64_t *tmp = NULL;
    size_t n = p->n, m = 0, runs = 0, runs_bytes = 0;
    int has_nulls = 0, rc = -ENOMEM;
    unsigned version = 2;

    if (n == 0 || n > CHUNK_MAX_POINTS)
        return -EINVAL;
    for (size_t i = 1; i < n; i++)
        if (p->ticks[i] <= p->ticks[i - 1] ||
            (uint64_t)p->ticks[i] - (uint64_t)p->ticks[i - 1] > (uint64_t)INT64_MAX)
            return -EINVAL;
    tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (p->present && !p->present[i])
            has_nulls = 1;
        else
            tmp[m++] = p->values[i];
    }
    put_u8(&b, 2);
    put_varint(&b, n);
    if (has_nulls)
        runs = put_runs(NULL, p->present, n, &runs_bytes);
    if (has_nulls && varint_size(runs) + runs_bytes < (n + 7) / 8) {
        /* the presence as runs (version 4), where that is shorter than the bitmap */
        put_u8(&b, FLAG_ABSENT | FLAG_RUNS);
        put_varint(&b, runs);
        put_runs(&b, p->present, n, &runs_bytes);
        version = 4;
    } else if (has_nulls) {
        put_u8(&b, FLAG_ABSENT);
        for (size_t i = 0; i < n; i += 8) {
            unsigned byte = 0;

            for (size_t j = i; j < n && j < i + 8; j++)
                if (p->present[j])
                    byte |= 1u << (j - i);
            put_u8(&b, byte);
        }
    } else {
        put_u8(&b, 0);
    }
    put_varint(&b, zz(p->ticks[0]));
    if (n > 1) {
        /* the differences of the ticks, in place of the values' scratch space: values come after */
        int64_t *d = malloc((n - 1) * sizeof *d);

        if (!d)
            goto out;
        for (size_t i = 1; i < n; i++)
            d[i - 1] = p->ticks[i] - p->ticks[i - 1];
        put_seq(&b, d, n - 1, &version);
        free(d);
    }
    if (m > 0)
        put_seq(&b, tmp, m, &version);
    if (b.oom)
        goto out;
    /* the oldest version that has every code written: a perflogd of before version 3 reads a
     * chunk of codes 0-6, one of before version 4 a chunk without runs or Exp-Golomb codes */
    b.p[0] = (uint8_t)version;
    *out = b.p;
    *out_len = b.len;
    b.p = NULL;
    rc = 0;
out:
    free(b.p);
    free(tmp);
    return rc;
}

/* ---- decoding: every read is bounds-checked ---- */

struct reader {
    const uint8_t *p;
    size_t len, pos;
    int bad;
};

static unsigned get_u8(struct reader *r)
{
    if (r->pos >= r->len) {
        r->bad = 1;
        return 0;
    }
    return r->p[r->pos++];
}

static uint64_t get_varint(struct reader *r)
{
    uint64_t v = 0;

    for (unsigned shift = 0; shift < 70; shift += 7) {
        unsigned c = get_u8(r);

        if (r->bad)
            return 0;
        if (shift == 63 && c > 1) { /* the tenth byte holds one bit */
            r->bad = 1;
            return 0;
        }
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

/* k values of w bits (LSB first) + base, or first differences + base summed from v0. */
static void get_packed(struct reader *r, int64_t *v, size_t k, uint64_t base, unsigned w, int diff)
{
    size_t need = packed_size(diff ? k - 1 : k, w), bit = 0;
    const uint8_t *src;

    if (need > r->len - r->pos) {
        r->bad = 1;
        return;
    }
    src = r->p + r->pos;
    for (size_t i = diff ? 1 : 0; i < k; i++) {
        uint64_t x = 0;

        for (unsigned done = 0; done < w;) {
            size_t byte = bit / 8;
            unsigned off = (unsigned)(bit % 8), take = 8 - off < w - done ? 8 - off : w - done;
            uint64_t bits = (uint64_t)((src[byte] >> off) & ((1u << take) - 1));

            x |= bits << done;
            done += take;
            bit += take;
        }
        x += base;
        v[i] = diff ? (int64_t)((uint64_t)v[i - 1] + x) : (int64_t)x;
    }
    /* the padding bits of the last byte must be 0: one encoding per chunk */
    if (bit % 8 && (src[bit / 8] >> (bit % 8)) != 0)
        r->bad = 1;
    r->pos += need;
}

struct bitr {
    const uint8_t *p;
    size_t len, pos;
    uint64_t acc;
    unsigned n; /* < 8 between calls */
    int bad;
};

/* The next nb bits (nb <= 32), LSB first; 0 and bad set past the end. */
static uint64_t br_get32(struct bitr *br, unsigned nb)
{
    uint64_t x;

    while (br->n < nb) {
        if (br->pos >= br->len) {
            br->bad = 1;
            return 0;
        }
        br->acc |= (uint64_t)br->p[br->pos++] << br->n;
        br->n += 8;
    }
    x = br->acc & ((UINT64_C(1) << nb) - 1);
    br->acc >>= nb;
    br->n -= nb;
    return x;
}

static uint64_t br_get(struct bitr *br, unsigned nb)
{
    uint64_t lo;

    if (nb <= 32)
        return br_get32(br, nb);
    lo = br_get32(br, 32);
    return lo | br_get32(br, nb - 32) << 32;
}

/* The width after prev from a width code; 65 (invalid) when the code is malformed. */
static unsigned get_wcode(struct bitr *br, unsigned prev)
{
    unsigned s, d;

    if (!br_get32(br, 1))
        return prev;
    if (!br_get32(br, 1)) {
        s = (unsigned)br_get32(br, 1);
        d = 1;
    } else if (!br_get32(br, 1)) {
        s = (unsigned)br_get32(br, 1);
        d = 2 + (unsigned)br_get32(br, 1);
    } else {
        unsigned w = (unsigned)br_get32(br, 7);

        /* one encoding: a shorter code was possible */
        return w > 64 || (w > prev ? w - prev : prev - w) <= 3 ? 65 : w;
    }
    if (s ? prev < d : prev + d > 64)
        return 65;
    return s ? prev - d : prev + d;
}

/* The bit stream of a block code after the code's varints: k numbers into v, v[0] already set
 * for the differences' codes. */
static void get_blocks(struct reader *r, int64_t *v, size_t k, unsigned code, uint64_t base)
{
    struct bitr br = {.p = r->p, .len = r->len, .pos = r->pos};
    size_t from = code == SEQ_BFOR ? 0 : 1;
    unsigned prev = 0;

    for (size_t i = from; i < k && !br.bad; i += BLOCK) {
        size_t end = i + BLOCK < k ? i + BLOCK : k;
        unsigned w = get_wcode(&br, prev);

        if (w > 64) {
            br.bad = 1;
            break;
        }
        for (size_t j = i; j < end; j++) {
            uint64_t x = br_get(&br, w);

            if (code == SEQ_BFOR)
                v[j] = (int64_t)(x + base);
            else if (code == SEQ_BDFOR)
                v[j] = (int64_t)((uint64_t)v[j - 1] + x + base);
            else
                v[j] = (int64_t)((uint64_t)v[j - 1] + (uint64_t)unzz(x));
        }
        prev = w;
    }
    /* the padding bits of the last byte must be 0 */
    if (br.bad || br.acc != 0) {
        r->bad = 1;
        return;
    }
    r->pos = br.pos;
}

/* The zeros before the next one bit, and that one: their count, at most max (bad beyond). */
static unsigned br_zeros(struct bitr *br, unsigned max)
{
    unsigned z = 0;

    for (;;) {
        if (br->n == 0) {
            if (br->pos >= br->len) {
                br->bad = 1;
                return 0;
            }
            br->acc = br->p[br->pos++];
            br->n = 8;
        }
        if (br->acc) {
            unsigned t = trailing_zeros(br->acc);

            z += t;
            br->acc >>= t + 1;
            br->n -= t + 1;
            break;
        }
        z += br->n;
        br->n = 0;
        if (z > max)
            break;
    }
    if (z > max)
        br->bad = 1;
    return z;
}

/* The bit stream of code BEG (base vmin) or BZEG, v[0] already set for BZEG. */
static void get_eg(struct reader *r, int64_t *v, size_t k, unsigned code, uint64_t base)
{
    struct bitr br = {.p = r->p, .len = r->len, .pos = r->pos};
    unsigned prev = 0;

    for (size_t i = code == SEQ_BEG ? 0 : 1; i < k && !br.bad; i += EG_BLOCK) {
        size_t end = i + EG_BLOCK < k ? i + EG_BLOCK : k;
        unsigned ord = get_wcode(&br, prev);

        if (ord > 63) {
            br.bad = 1;
            break;
        }
        for (size_t j = i; j < end && !br.bad; j++) {
            /* every number is below 2^63: z + ord <= 63, and q < 2^(63 - ord) */
            unsigned z = br_zeros(&br, 63 - ord);
            uint64_t q, x;

            if (br.bad)
                break;
            q = ((UINT64_C(1) << z) | br_get(&br, z)) - 1;
            if (q >> (63 - ord)) {
                br.bad = 1;
                break;
            }
            x = q << ord | br_get(&br, ord);
            v[j] = code == SEQ_BEG ? (int64_t)(x + base)
                                   : (int64_t)((uint64_t)v[j - 1] + (uint64_t)unzz(x));
        }
        prev = ord;
    }
    /* the padding bits of the last byte must be 0 */
    if (br.bad || br.acc != 0) {
        r->bad = 1;
        return;
    }
    r->pos = br.pos;
}

/* A seq of k numbers into v, of the codes `version` has; no SCALE inside a SCALE (`inner`). */
static void get_seq(struct reader *r, int64_t *v, size_t k, unsigned version, int inner)
{
    unsigned code = get_u8(r), w;
    uint64_t base;

    if (r->bad)
        return;
    switch (code) {
    case SEQ_SAME:
        v[0] = unzz(get_varint(r));
        for (size_t i = 1; i < k; i++)
            v[i] = v[0];
        return;
    case SEQ_FOR:
        base = (uint64_t)unzz(get_varint(r));
        w = get_u8(r);
        if (r->bad || w > 64) {
            r->bad = 1;
            return;
        }
        get_packed(r, v, k, base, w, 0);
        return;
    case SEQ_DFOR:
        v[0] = unzz(get_varint(r));
        base = (uint64_t)unzz(get_varint(r));
        w = get_u8(r);
        if (r->bad || w > 64) {
            r->bad = 1;
            return;
        }
        get_packed(r, v, k, base, w, 1);
        return;
    case SEQ_DVAR:
        v[0] = unzz(get_varint(r));
        for (size_t i = 1; i < k && !r->bad; i++)
            v[i] = (int64_t)((uint64_t)v[i - 1] + (uint64_t)unzz(get_varint(r)));
        return;
    case SEQ_SCALE: {
        uint64_t g;
        int64_t v0;

        if (version < 3 || inner)
            break;
        g = get_varint(r);
        v0 = unzz(get_varint(r));
        if (r->bad || g < 2) {
            r->bad = 1;
            return;
        }
        /* the quotients: any code of the version but SCALE */
        get_seq(r, v, k, version, 1);
        for (size_t i = 0; i < k && !r->bad; i++)
            v[i] = (int64_t)((uint64_t)v0 + (uint64_t)v[i] * g);
        return;
    }
    case SEQ_BFOR:
    case SEQ_BDFOR:
    case SEQ_BZZ:
        if (version < 2)
            break;
        base = 0;
        if (code == SEQ_BFOR) {
            base = (uint64_t)unzz(get_varint(r));
        } else {
            v[0] = unzz(get_varint(r));
            if (code == SEQ_BDFOR)
                base = (uint64_t)unzz(get_varint(r));
        }
        if (!r->bad)
            get_blocks(r, v, k, code, base);
        return;
    case SEQ_BEG:
    case SEQ_BZEG:
        if (version < 4)
            break;
        base = 0;
        if (code == SEQ_BEG)
            base = (uint64_t)unzz(get_varint(r));
        else
            v[0] = unzz(get_varint(r));
        if (!r->bad)
            get_eg(r, v, k, code, base);
        return;
    default:
        break;
    }
    r->bad = 1;
}

static long header(struct reader *r, unsigned *flags, unsigned *version)
{
    uint64_t n;

    *version = get_u8(r);
    if (r->bad || *version < 1 || *version > CHUNK_VERSION)
        return -EINVAL;
    n = get_varint(r);
    *flags = get_u8(r);
    /* runs (version 4) only where a point is absent */
    if (r->bad || n == 0 || n > CHUNK_MAX_POINTS ||
        (*flags & ~(unsigned)(FLAG_ABSENT | FLAG_RUNS)) ||
        ((*flags & FLAG_RUNS) && (*version < 4 || !(*flags & FLAG_ABSENT))))
        return -EINVAL;
    return (long)n;
}

long chunk_count(const uint8_t *buf, size_t len)
{
    struct reader r = {.p = buf, .len = len};
    unsigned flags, version;

    return header(&r, &flags, &version);
}

int chunk_decode(const uint8_t *buf, size_t len, struct chunk_points *p, size_t cap)
{
    struct reader r = {.p = buf, .len = len};
    unsigned flags, version;
    long n = header(&r, &flags, &version);
    size_t m = 0;

    p->n = 0;
    if (n < 0)
        return (int)n;
    if ((size_t)n > cap)
        return -ENOSPC;
    if (flags & FLAG_RUNS) {
        uint64_t count = get_varint(&r), at = 0;

        /* the first run of present points may be empty, no other; they add up to n */
        if (r.bad || count < 2 || count > (uint64_t)n + 1)
            return -EINVAL;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t run = get_varint(&r);

            if (r.bad || (i > 0 && run == 0) || run > (uint64_t)n - at)
                return -EINVAL;
            memset(p->present + at, !(i % 2), (size_t)run);
            at += run;
        }
        if (at != (uint64_t)n)
            return -EINVAL;
    } else if (flags & FLAG_ABSENT) {
        size_t nbytes = ((size_t)n + 7) / 8;

        if (nbytes > r.len - r.pos)
            return -EINVAL;
        for (long i = 0; i < n; i++)
            p->present[i] = (r.p[r.pos + (size_t)i / 8] >> (i % 8)) & 1;
        if (n % 8 && (r.p[r.pos + nbytes - 1] >> (n % 8)) != 0)
            return -EINVAL;
        r.pos += nbytes;
    } else {
        memset(p->present, 1, (size_t)n);
    }
    p->ticks[0] = unzz(get_varint(&r));
    if (n > 1) {
        get_seq(&r, p->ticks + 1, (size_t)n - 1, version, 0);
        if (r.bad)
            return -EINVAL;
        for (long i = 1; i < n; i++) {
            int64_t d = p->ticks[i];

            /* the differences are >= 1 and the ticks may not pass INT64_MAX */
            if (d < 1 || p->ticks[i - 1] > INT64_MAX - d)
                return -EINVAL;
            p->ticks[i] = p->ticks[i - 1] + d;
        }
    }
    for (long i = 0; i < n; i++)
        m += p->present[i];
    if (flags & FLAG_ABSENT && m == (size_t)n) /* all present is not how the encoder writes it */
        return -EINVAL;
    if (m > 0) {
        /* the present values, decoded at the front of values[], then spread to their places */
        get_seq(&r, p->values, m, version, 0);
        if (r.bad)
            return -EINVAL;
    }
    for (long i = n - 1, j = (long)m - 1; i >= 0; i--)
        p->values[i] = p->present[i] ? p->values[j--] : 0;
    if (r.bad || r.pos != r.len)
        return -EINVAL;
    p->n = (size_t)n;
    return 0;
}
