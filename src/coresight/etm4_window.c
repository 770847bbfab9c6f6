/* SPDX-License-Identifier: BSD-2-Clause */
/* The ETMv4 batch walk's arrays (etm4_window.h), a byte, 16 bytes or 32 bytes at a time.
 * Computing them was a fifth of the time of `dump --stats` with 16 bytes at a time; 32 bytes
 * with byte shuffles for the lengths take a third of the instructions (docs/performance.md,
 * session 17). */
#include "coresight/etm4_window.h"

#include <stddef.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define TK_WINDOW_AVX2 1
#else
#define TK_WINDOW_AVX2 0
#endif

void tk_etm4_window_scalar(const uint8_t *b, unsigned nblk, uint8_t *dist, uint8_t *len,
                           uint8_t *rid)
{
    unsigned next = 16 * nblk;
    for (int q = 16 * (int)nblk - 1; q >= 0; q--) {
        const unsigned h = b[q];
        if (h < 0xc0)
            next = (unsigned)q;
        dist[q] = (uint8_t)(next - (unsigned)q < 255 ? next - (unsigned)q : 255);
        unsigned l = 0;
        if (h == 0x95 || h == 0x96)
            l = 2 + (b[q + 1] >> 7);
        else if (h >= 0x90 && h <= 0x92)
            l = 1;
        else if (h == 0x9a || h == 0x9b)
            l = 5;
        else if (h == 0x9d || h == 0x9e)
            l = 9;
        len[q] = (uint8_t)l;
        rid[q] = (uint8_t)((h & 15) * 2 + (b[q + 1] >> 7));
    }
}

#if defined(__SSE2__)
/* One block of 16 positions at q; carry: dist[] of the block after's position 0, in every
 * lane (0 after the last block). Returns the carry for the block before. */
static inline __m128i window_block16(const uint8_t *q, __m128i carry, uint8_t *dist, uint8_t *len,
                                     uint8_t *rid)
{
    const __m128i top = _mm_set1_epi8((char)0xc0), ones = _mm_set1_epi8((char)0xff);
    const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* 0xff in the lanes a shift by 1, 2, 4, 8 brings in */
    const __m128i h1 = _mm_slli_si128(ones, 15), h2 = _mm_slli_si128(ones, 14),
                  h4 = _mm_slli_si128(ones, 12), h8 = _mm_slli_si128(ones, 8);
    const __m128i zero = _mm_setzero_si128();
    const __m128i to_end = _mm_sub_epi8(_mm_set1_epi8(16), lane); /* 16 - lane */
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
    const __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(q + 1));
    /* dist[]: each lane's own index if not an atom, else 0xff; the minimum over the lanes
     * from it on (a suffix minimum in four shifts), less the lane; 0xff lanes (atoms to the
     * block's end) go on by the carry, at most 255 */
    __m128i v = _mm_or_si128(lane, _mm_cmpeq_epi8(_mm_and_si128(x, top), top));
    v = _mm_min_epu8(v, _mm_or_si128(_mm_srli_si128(v, 1), h1));
    v = _mm_min_epu8(v, _mm_or_si128(_mm_srli_si128(v, 2), h2));
    v = _mm_min_epu8(v, _mm_or_si128(_mm_srli_si128(v, 4), h4));
    v = _mm_min_epu8(v, _mm_or_si128(_mm_srli_si128(v, 8), h8));
    const __m128i none = _mm_cmpeq_epi8(v, ones);
    const __m128i dv = _mm_or_si128(_mm_andnot_si128(none, _mm_sub_epi8(v, lane)),
                                    _mm_and_si128(none, _mm_adds_epu8(carry, to_end)));
    _mm_storeu_si128((__m128i *)(void *)dist, dv);
    /* len[]: by header - 0x90 (t); a short address has 2 bytes, 3 when bit 7 of the next
     * byte is set */
    const __m128i t = _mm_xor_si128(x, _mm_set1_epi8((char)0x90));
    const __m128i cont = _mm_and_si128(_mm_cmpgt_epi8(zero, y), _mm_set1_epi8(1));
    const __m128i s =
        _mm_or_si128(_mm_cmpeq_epi8(t, _mm_set1_epi8(5)), _mm_cmpeq_epi8(t, _mm_set1_epi8(6)));
    const __m128i m = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(2)), t);
    const __m128i l32 =
        _mm_or_si128(_mm_cmpeq_epi8(t, _mm_set1_epi8(10)), _mm_cmpeq_epi8(t, _mm_set1_epi8(11)));
    const __m128i l64 =
        _mm_or_si128(_mm_cmpeq_epi8(t, _mm_set1_epi8(13)), _mm_cmpeq_epi8(t, _mm_set1_epi8(14)));
    __m128i l = _mm_and_si128(s, _mm_add_epi8(cont, _mm_set1_epi8(2)));
    l = _mm_or_si128(l, _mm_and_si128(m, _mm_set1_epi8(1)));
    l = _mm_or_si128(l, _mm_and_si128(l32, _mm_set1_epi8(5)));
    l = _mm_or_si128(l, _mm_and_si128(l64, _mm_set1_epi8(9)));
    _mm_storeu_si128((__m128i *)(void *)len, l);
    /* rid[]: header [3:0] * 2 + the continuation bit */
    const __m128i lo4 = _mm_and_si128(x, _mm_set1_epi8(0x0f));
    _mm_storeu_si128((__m128i *)(void *)rid, _mm_add_epi8(_mm_add_epi8(lo4, lo4), cont));
    carry = _mm_unpacklo_epi8(dv, dv);
    return _mm_shuffle_epi32(_mm_shufflelo_epi16(carry, 0), 0);
}

void tk_etm4_window_sse2(const uint8_t *b, unsigned nblk, uint8_t *dist, uint8_t *len, uint8_t *rid)
{
    __m128i carry = _mm_setzero_si128();
    for (int k = (int)nblk - 1; k >= 0; k--)
        carry = window_block16(b + 16 * k, carry, dist + 16 * k, len + 16 * k, rid + 16 * k);
}
#else
void tk_etm4_window_sse2(const uint8_t *b, unsigned nblk, uint8_t *dist, uint8_t *len, uint8_t *rid)
{
    tk_etm4_window_scalar(b, nblk, dist, len, rid);
}
#endif

#if TK_WINDOW_AVX2
/* 32 positions at a time, from the last pair of blocks down; an odd first block by
 * window_block16. dist[] as a suffix maximum of 255 - index over the positions that are not
 * atoms (0 for atoms): a shift that brings in zeros needs no fill, and 255 - maximum - lane
 * is the distance. len[] by a table lookup on header [3:0] where header [7:4] is 9. */
__attribute__((target("avx2"))) static void window_avx2(const uint8_t *b, unsigned nblk,
                                                        uint8_t *dist, uint8_t *len, uint8_t *rid)
{
    const __m256i top = _mm256_set1_epi8((char)0xc0), zero = _mm256_setzero_si256();
    const __m256i rev =
        _mm256_setr_epi8(/* 255 - lane */
                         (char)255, (char)254, (char)253, (char)252, (char)251, (char)250,
                         (char)249, (char)248, (char)247, (char)246, (char)245, (char)244,
                         (char)243, (char)242, (char)241, (char)240, (char)239, (char)238,
                         (char)237, (char)236, (char)235, (char)234, (char)233, (char)232,
                         (char)231, (char)230, (char)229, (char)228, (char)227, (char)226,
                         (char)225, (char)224);
    const __m256i to_end = /* 32 - lane */
        _mm256_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,
                         13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    /* by header [3:0]: 0x90-0x92 exact match, 0x95/0x96 short (+1 with a continuation),
     * 0x9a/0x9b long 32-bit, 0x9d/0x9e long 64-bit */
    const __m256i len_of = _mm256_setr_epi8(1, 1, 1, 0, 0, 2, 2, 0, 0, 0, 5, 5, 0, 9, 9, 0, 1, 1, 1,
                                            0, 0, 2, 2, 0, 0, 0, 5, 5, 0, 9, 9, 0);
    const __m256i short_of = _mm256_setr_epi8(0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                              0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i lo_mask = _mm256_set1_epi8(0x0f), hi_mask = _mm256_set1_epi8((char)0xf0);
    const __m256i hi9 = _mm256_set1_epi8((char)0x90), one = _mm256_set1_epi8(1);
    __m256i carry = zero;
    unsigned k = nblk;
    for (; k >= 2; k -= 2) {
        const size_t at = 16 * (size_t)(k - 2);
        const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(b + at));
        const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(b + at + 1));
        const __m256i atom = _mm256_cmpeq_epi8(_mm256_and_si256(x, top), top);
        __m256i c = _mm256_andnot_si256(atom, rev);
        /* the suffix maximum in each 16-byte half (shifts within the halves, which two ports
         * take), then the high half's first one into the low half (one move across) */
        c = _mm256_max_epu8(c, _mm256_bsrli_epi128(c, 1));
        c = _mm256_max_epu8(c, _mm256_bsrli_epi128(c, 2));
        c = _mm256_max_epu8(c, _mm256_bsrli_epi128(c, 4));
        c = _mm256_max_epu8(c, _mm256_bsrli_epi128(c, 8));
        c = _mm256_max_epu8(c, _mm256_shuffle_epi8(_mm256_permute2x128_si256(c, c, 0x81), zero));
        const __m256i none = _mm256_cmpeq_epi8(c, zero);
        const __m256i dv =
            _mm256_blendv_epi8(_mm256_sub_epi8(rev, c), _mm256_adds_epu8(carry, to_end), none);
        _mm256_storeu_si256((__m256i *)(void *)(dist + at), dv);
        carry = _mm256_broadcastb_epi8(_mm256_castsi256_si128(dv));
        const __m256i lo = _mm256_and_si256(x, lo_mask);
        const __m256i cont = _mm256_and_si256(_mm256_cmpgt_epi8(zero, y), one);
        const __m256i l =
            _mm256_add_epi8(_mm256_shuffle_epi8(len_of, lo),
                            _mm256_and_si256(_mm256_shuffle_epi8(short_of, lo), cont));
        const __m256i is9 = _mm256_cmpeq_epi8(_mm256_and_si256(x, hi_mask), hi9);
        _mm256_storeu_si256((__m256i *)(void *)(len + at), _mm256_and_si256(l, is9));
        _mm256_storeu_si256((__m256i *)(void *)(rid + at),
                            _mm256_add_epi8(_mm256_add_epi8(lo, lo), cont));
    }
    if (k)
        (void)window_block16(b, _mm256_castsi256_si128(carry), dist, len, rid);
}
#endif

tk_etm4_window_fn tk_etm4_window_avx2(void)
{
#if TK_WINDOW_AVX2
    if (__builtin_cpu_supports("avx2"))
        return window_avx2;
#endif
    return NULL;
}

tk_etm4_window_fn tk_etm4_window_best(void)
{
    const tk_etm4_window_fn f = tk_etm4_window_avx2();
    return f ? f : tk_etm4_window_sse2;
}
