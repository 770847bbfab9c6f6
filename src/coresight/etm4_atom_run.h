/* SPDX-License-Identifier: BSD-2-Clause */
/* The run of ETMv4 atom headers at the start of 16 bytes: the batch parser's step
 * (etm4_batch.c), and bench/etm4_walk.c, which times the walk of those steps alone. */
#ifndef TK_CORESIGHT_ETM4_ATOM_RUN_H
#define TK_CORESIGHT_ETM4_ATOM_RUN_H

#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Number of atom headers (0xc0-0xff: top two bits set) at the start of b[0..16), 0 to 16.
 * Atoms are three quarters of the packets and come in short runs between address packets:
 * testing one byte at a time mispredicts at nearly every switch between the two kinds. Every
 * header in 0xc0-0xff is a defined atom (F5's four encodings, 0xd5-0xd7 and 0xf5, are all
 * used; pkt_atom() reports none of them bad), so a run needs no further test. */
static inline unsigned tk_etm4_atom_run(const uint8_t *b)
{
#if defined(__SSE2__)
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)b);
    const __m128i top = _mm_set1_epi8((char)0xc0);
    const unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(x, top), top));
    return (unsigned)__builtin_ctz(~m); /* m < 1 << 16: ~m has a zero bit at 16 at the latest */
#else
    unsigned k = 0;
    while (k < 16 && b[k] >= 0xc0)
        k++;
    return k;
#endif
}

#endif
