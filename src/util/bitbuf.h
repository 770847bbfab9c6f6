/* SPDX-License-Identifier: BSD-2-Clause */
/* Fixed-size LSB-first bit buffers for packet payloads: a writer that appends fields of up to
 * 64 bits, and a reader that extracts them a word at a time, sign-extending past the end of
 * the received bits (E-Trace payload.adoc, sign-based compression). Both are small enough to
 * live on the stack; no allocation. */
#ifndef TK_UTIL_BITBUF_H
#define TK_UTIL_BITBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 8 words hold the longest packet (512 bits); one spare word lets reads straddle the end. */
enum { TK_BITBUF_WORDS = 9, TK_BITBUF_MAX_BITS = 64 * (TK_BITBUF_WORDS - 1) };

static inline uint64_t tk_bits_mask(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

typedef struct tk_bitw {
    uint64_t w[TK_BITBUF_WORDS];
    unsigned pos;  /* bits written */
    bool overflow; /* more than TK_BITBUF_MAX_BITS were written */
} tk_bitw;

static inline void tk_bitw_init(tk_bitw *b)
{
    memset(b, 0, sizeof(*b));
}

/* Append the n (0..64) low bits of v. Higher bits of v are ignored. */
static inline void tk_bitw_put(tk_bitw *b, uint64_t v, unsigned n)
{
    if (n == 0)
        return;
    if (b->pos + n > TK_BITBUF_MAX_BITS) {
        b->overflow = true;
        return;
    }
    v &= tk_bits_mask(n);
    unsigned i = b->pos >> 6, off = b->pos & 63;
    b->w[i] |= v << off;
    if (off && off + n > 64)
        b->w[i + 1] |= v >> (64 - off);
    b->pos += n;
}

/* Bit i (0-based) of what was written. */
static inline unsigned tk_bitw_bit(const tk_bitw *b, unsigned i)
{
    return (unsigned)(b->w[i >> 6] >> (i & 63)) & 1u;
}

/* Sign-based compression of the whole packet (payload.adoc): drop the most significant bits
 * that equal the MSB, keeping one copy, then pad to whole bytes with MSB copies (at least one
 * byte). Writes the little-endian bytes to out (cap bytes) and returns the byte count, or 0 if
 * cap is too small. The reference encoder_model.py compresses exactly like this. */
size_t tk_bitw_compress(const tk_bitw *b, uint8_t *out, size_t cap);
/* The uncompressed bits, padded with zeros to whole bytes; returns bytes or 0 if cap is too
 * small. */
size_t tk_bitw_bytes(const tk_bitw *b, uint8_t *out, size_t cap);

typedef struct tk_bitr {
    uint64_t w[TK_BITBUF_WORDS];
    unsigned pos;   /* next bit to read */
    unsigned nbits; /* bits actually received (8 * payload length) */
} tk_bitr;

/* Load len (<= 64) payload bytes; the bits past the end are copies of the last received bit.
 * Returns false if len is 0 or too large. */
bool tk_bitr_init(tk_bitr *r, const uint8_t *payload, size_t len);

/* Read n (0..64) bits. Never fails: reads past the received bits return sign copies, and
 * reads past TK_BITBUF_MAX_BITS are clamped (callers bound packet length beforehand). */
static inline uint64_t tk_bitr_get(tk_bitr *r, unsigned n)
{
    if (n == 0)
        return 0;
    unsigned pos = r->pos;
    if (pos + n > TK_BITBUF_MAX_BITS)
        pos = TK_BITBUF_MAX_BITS - n;
    unsigned i = pos >> 6, off = pos & 63;
    /* two-word window without a branch: the double shift is 0 when off is 0 */
    uint64_t v = (r->w[i] >> off) | ((r->w[i + 1] << 1) << (63 - off));
    r->pos += n;
    return v & tk_bits_mask(n);
}

#endif
