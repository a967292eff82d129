/*
 * chunk.h - the compressed form of one series over a span of ticks: the codec only.
 *
 * A chunk holds n (tick, value) points of one integer column of one instance, where a value may
 * be absent (SQL NULL). The raw store keeps one row per tick and instance with one 8-byte integer
 * per counter; most of those values are small, repeat, or change by small steps, so a chunk codes:
 *
 *   - the ticks as their first differences, with the same packer as the values: a run of
 *     consecutive ticks is "all 1", two bytes for the chunk; a tick missed here and there makes
 *     the packer code the second differences (delta-of-delta) in a bit or two each;
 *   - the presence of each value, only when some value is absent: as a bitmap, or (version 4)
 *     as the lengths of its runs where those are shorter (a series that never has a value, or
 *     only lacks its first: a rate's first sample);
 *   - the present values with the smallest of nine codes, chosen per chunk: all equal (one
 *     varint), frame of reference (minimum + fixed-width bit packing), bit-packed first
 *     differences (the same on v[i] - v[i-1]), zig-zag varints of the first differences, and
 *     (version 2) frame of reference, first differences or their zig-zag in groups of 4 numbers
 *     with a bit width per group, so that a burst in an idle counter widens only its groups;
 *     (version 3) any of those over (v - v0) / g when the values share a divisor g (KiB of
 *     whole pages, sectors of whole 4 KiB blocks); (version 4) v - min or the differences'
 *     zig-zag in Exp-Golomb codes with an order per group of 16, so that a spike among small
 *     numbers costs about twice its own width rather than widening its group.
 *
 * Differences and ranges are computed in uint64_t arithmetic modulo 2^64, so every int64_t value,
 * INT64_MIN and INT64_MAX included, round-trips exactly.
 *
 * The encoding is versioned by its first byte. Thread-safe: no state.
 */
#ifndef PERFLOG_CHUNK_H
#define PERFLOG_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#define CHUNK_VERSION    4     /* 3 (codes 0-7), 2 (codes 0-6) and 1 (codes 0-3) are read */
#define CHUNK_MAX_POINTS 65536 /* a chunk of more points is refused by both sides */

/* One series span, caller-owned arrays of n entries. `present[i]` is 0 where the value is NULL
 * (then `values[i]` is ignored by the encoder and 0 after decoding). `ticks` strictly increase,
 * by at most INT64_MAX from one to the next. */
struct chunk_points {
    size_t n;
    int64_t *ticks;
    int64_t *values;
    uint8_t *present;
};

/* Encode `p` into a new buffer: *out (caller frees) of *out_len bytes. Returns 0, -EINVAL when n
 * is 0 or above CHUNK_MAX_POINTS or the ticks do not strictly increase, or -ENOMEM. */
int chunk_encode(const struct chunk_points *p, uint8_t **out, size_t *out_len);

/* The number of points in the chunk of `len` bytes at `buf`, or a negative errno (-EINVAL when
 * the header is malformed), without decoding the rest. */
long chunk_count(const uint8_t *buf, size_t len);

/* Decode the chunk at `buf` into `p`, whose arrays the caller provides with room for `cap`
 * points (at least chunk_count()). Sets p->n. Returns 0, or -EINVAL for any malformed input
 * (truncated, trailing bytes, a width over 64, ticks that do not increase, a padding bit set: one
 * encoding per chunk), -ENOSPC when `cap`
 * is too small. On failure p->n is 0 and the arrays hold garbage. Reads no byte outside [buf, buf +
 * len). */
int chunk_decode(const uint8_t *buf, size_t len, struct chunk_points *p, size_t cap);

#endif
