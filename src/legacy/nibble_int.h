/* SPDX-License-Identifier: BSD-2-Clause */
/* What the nibble trace's encoder, decoder and scanner share: value-sequence rules and the
 * reading of sequences out of a (possibly wrapped) buffer. */
#ifndef TK_LEGACY_NIBBLE_INT_H
#define TK_LEGACY_NIBBLE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/legacy.h"

/* Nibbles of a value of `bits` bits sent whole. */
static inline unsigned nib_full(unsigned bits)
{
    return (bits + 3) / 4;
}

static inline uint64_t nib_mask(unsigned n)
{
    return n >= 16 ? ~0ull : (1ull << (4 * n)) - 1;
}

/* Seed 001: "Missing bits must be filled in with the last ... value": the fewest nibbles
 * whose upper remainder equals the last value's. */
static inline unsigned nib_count_last(uint64_t v, uint64_t last, bool have_last, unsigned full)
{
    if (!have_last)
        return full;
    for (unsigned n = 1; n < full; n++)
        if ((v >> (4 * n)) == (last >> (4 * n)))
            return n;
    return full;
}

/* "Missing bits must be filled in by sign extending the value" (load/store data). */
static inline unsigned nib_count_sext(uint64_t v)
{
    for (unsigned n = 1; n < 16; n++) {
        const unsigned s = 64 - 4 * n;
        if ((uint64_t)((int64_t)(v << s) >> s) == v)
            return n;
    }
    return 16;
}

/* "Missing bits must be filled in with 0" (hart id; our trap cause). */
static inline unsigned nib_count_zero(uint64_t v)
{
    unsigned n = 1;
    while (n < 16 && (v >> (4 * n)))
        n++;
    return n;
}

static inline uint64_t nib_expand_last(uint64_t raw, unsigned n, uint64_t last)
{
    const uint64_t m = nib_mask(n);
    return (last & ~m) | (raw & m);
}

static inline uint64_t nib_expand_sext(uint64_t raw, unsigned n)
{
    const unsigned s = 64 - 4 * n;
    return n >= 16 ? raw : (uint64_t)((int64_t)(raw << s) >> s);
}

/* Does a header carry a value sequence / a single argument packet? */
static inline bool nib_has_value(unsigned h)
{
    return h == TK_NIB_H_PC || h == TK_NIB_H_HART ||
           (h >= TK_NIB_H_LOAD_ADDR && h <= TK_NIB_H_TIMESTAMP) || h == TK_NIB_H_CAUSE;
}
static inline bool nib_has_arg(unsigned h)
{
    return h == TK_NIB_H_TRACE_ON || h == TK_NIB_H_PRIV;
}

/* Reads sequences out of a trace: nibble q of the stream is at ring position (start + q). */
typedef struct nib_reader {
    const uint32_t *words;
    uint64_t ring;   /* nibbles in the buffer (wrapped) or 0 (linear) */
    uint64_t start;  /* first nibble to read */
    uint64_t length; /* nibbles to read */
    uint64_t q;      /* next nibble, relative to start */
    uint64_t seg;    /* nibbles between sync points */
} nib_reader;

/* Set up a reader on a trace: a wrapped buffer is read from the first sync point at or
 * after the write pointer up to the write pointer. */
void nib_reader_init(nib_reader *r, const tk_nibble_trace *t);

static inline unsigned nib_at(const nib_reader *r, uint64_t q)
{
    uint64_t i = r->start + q;
    if (r->ring)
        i %= r->ring;
    return (r->words[i >> 3] >> ((i & 7) * 4)) & 15u;
}

/* The next sequence (Nops included). TK_END at the end, TK_ERR_TRUNCATED for a sequence
 * cut by the end, TK_ERR_BAD_PACKET for a reserved header (r->q is then past it). */
tk_status nib_read(nib_reader *r, tk_nibble_seq *s);

/* Stored form of the parameters in the file header's flags word. */
uint32_t nib_flags_pack(const tk_nibble_params *p, bool wrapped);
void nib_flags_unpack(uint32_t flags, tk_nibble_params *p, bool *wrapped);

#endif
