/* SPDX-License-Identifier: BSD-2-Clause */
/* An independent, deliberately naive model of a te_inst payload for the codec tests: one
 * char per bit, fields appended in the order the spec's payload tables list them, so a
 * test states a layout as (value, width) pairs and compares it bit for bit with the codec. */
#ifndef TK_TEST_BIT_MODEL_H
#define TK_TEST_BIT_MODEL_H

#include <stdint.h>
#include <string.h>

#include "testutil.h"
#include "tracekit/te_packet.h"

typedef struct bitstr {
    char b[1024]; /* b[i] = packet bit i, '0' or '1' */
    unsigned n;
} bitstr;

static inline void bs_add(bitstr *s, uint64_t v, unsigned width)
{
    for (unsigned i = 0; i < width; i++)
        s->b[s->n++] = (char)('0' + (i < 64 ? (v >> i) & 1 : 0));
}

/* Fields given as value, width, value, width, ... */
static inline void bs_fields(bitstr *s, const uint64_t *vw, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        bs_add(s, vw[i], (unsigned)vw[i + 1]);
}
#define BS_FIELDS(s, ...)                                                                          \
    bs_fields((s), (const uint64_t[]){__VA_ARGS__},                                                \
              sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

/* The codec must give exactly these bits (before compression) for packet k, and decoding its
 * compressed bytes must give k back. */
static inline void bs_expect_encoding(const tk_te_params *p, const tk_te_packet *k,
                                      const bitstr *want, uint8_t *got, size_t *len)
{
    size_t nbits = 0;
    memset(got, 0, TK_TE_MAX_PAYLOAD);
    if (tk_te_packet_encode_bits(p, k, got, TK_TE_MAX_PAYLOAD, &nbits) != TK_OK)
        fail_msg("encode: %s", tk_te_packet_encode_error(p, k));
    assert_int_equal(nbits, want->n);
    for (unsigned i = 0; i < nbits; i++)
        if (((got[i / 8] >> (i % 8)) & 1) != (unsigned)(want->b[i] - '0'))
            fail_msg("bit %u differs", i);
    assert_int_equal(tk_te_packet_encode(p, k, got, TK_TE_MAX_PAYLOAD, len), TK_OK);
    tk_te_packet back;
    tk_diag d;
    tk_diag_clear(&d);
    if (tk_te_packet_decode(p, got, *len, &back, &d) != TK_OK)
        fail_msg("%s", d.message);
    assert_memory_equal(&back, k, sizeof(back));
}

#endif
