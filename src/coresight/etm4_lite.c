/* SPDX-License-Identifier: BSD-2-Clause */
/* The ETMv4 parser's compact records (tk_etm4_pkt_lite), for their consumers: the complete
 * packet a record stands for, and how many packets a batch of records holds. */
#include <string.h>

#include "tracekit/etm4.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* Eight records at a time with AVX2, chosen at run time. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <immintrin.h>
#define TK_LITE_AVX2 1
#else
#define TK_LITE_AVX2 0
#endif

void tk_etm4_pkt_from_lite(const tk_etm4_pkt_lite *l, uint8_t trace_id, tk_etm4_packet *pkt)
{
    memset(pkt, 0, sizeof(*pkt));
    pkt->type = l->type;
    pkt->header = l->header;
    pkt->size = l->size;
    pkt->trace_id = trace_id;
    pkt->index = l->index;
    if (l->type >= TK_ETM4_ATOM_F1 && l->type <= TK_ETM4_ATOM_F6) {
        pkt->atom_num = l->atom_num;
        pkt->atoms = l->atoms;
        return;
    }
    pkt->addr = l->addr;
    pkt->addr_is = l->addr_is;
    pkt->addr_64 = l->addr_64;
    pkt->addr_bits = l->addr_bits;
    pkt->match_idx = l->match_idx;
}

void tk_etm4_pkt_from_lite_at(const tk_etm4_pkt_lite *l, unsigned k, uint8_t trace_id,
                              tk_etm4_packet *pkt)
{
    if (l->type != TK_ETM4_LITE_ATOMS) {
        tk_etm4_pkt_from_lite(l, trace_id, pkt);
        return;
    }
    memset(pkt, 0, sizeof(*pkt));
    const uint8_t h = l->atom_headers[k < 8 ? k : 7];
    pkt->type = (uint8_t)tk_etm4_atom_header(h, &pkt->atom_num, &pkt->atoms);
    pkt->header = h;
    pkt->size = 1;
    pkt->trace_id = trace_id;
    pkt->index = tk_etm4_lite_atom_index(l, k);
}

/* The record's bytes from type to size as a little-endian 32-bit word: type in [7:0], size in
 * [31:24]. The 16 bytes from LITE_AT hold it as their 32-bit lane 1. */
_Static_assert(offsetof(tk_etm4_pkt_lite, size) == offsetof(tk_etm4_pkt_lite, type) + 3,
               "type..size are 4 consecutive bytes");
#define LITE_AT (offsetof(tk_etm4_pkt_lite, type) - 4)
_Static_assert(offsetof(tk_etm4_pkt_lite, type) >= 4 &&
                   offsetof(tk_etm4_pkt_lite, type) + 12 <= sizeof(tk_etm4_pkt_lite),
               "16 bytes of a record around the word");
/* Records a counting loop takes before it adds up its 32-bit lanes (each takes at most 7 a
 * record: below 2^31). */
#define LITE_CHUNK ((size_t)1 << 28)

#if TK_LITE_AVX2
/* Size - 1 of the atom runs among l[0..n), n a multiple of 8, at most LITE_CHUNK: records i and
 * i + 4 of each 8 in the two halves of one vector, four words side by side in each. */
__attribute__((target("avx2"))) static uint64_t runs_extra_avx2(const tk_etm4_pkt_lite *l, size_t n)
{
    const __m256i ff = _mm256_set1_epi32(0xff), one = _mm256_set1_epi32(1);
    __m256i acc = _mm256_setzero_si256();
    for (size_t i = 0; i < n; i += 8) {
        const char *b = (const char *)(l + i) + LITE_AT;
#define REC2(j)                                                                                    \
    _mm256_inserti128_si256(                                                                       \
        _mm256_castsi128_si256(                                                                    \
            _mm_loadu_si128((const __m128i *)(const void *)(b + (j) * sizeof(*l)))),               \
        _mm_loadu_si128((const __m128i *)(const void *)(b + ((j) + 4) * sizeof(*l))), 1)
        const __m256i w = _mm256_unpackhi_epi64(_mm256_unpacklo_epi32(REC2(0), REC2(1)),
                                                _mm256_unpacklo_epi32(REC2(2), REC2(3)));
#undef REC2
        const __m256i run = _mm256_cmpeq_epi32(_mm256_and_si256(w, ff), ff);
        acc = _mm256_add_epi32(
            acc, _mm256_and_si256(run, _mm256_sub_epi32(_mm256_srli_epi32(w, 24), one)));
    }
    const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    uint32_t a[4];
    _mm_storeu_si128((__m128i *)(void *)a, s);
    return (uint64_t)a[0] + a[1] + a[2] + a[3];
}
#endif

uint64_t tk_etm4_lite_count_packets(const tk_etm4_pkt_lite *l, size_t n)
{
    /* n, plus size - 1 for each atom run. Four or eight records at a time, their type..size
     * words side by side in one vector: a record at a time (about 11 instructions each) was
     * 13% of the time of `dump --stats` (docs/performance.md, session 17). */
    uint64_t k = n;
    size_t i = 0;
#if TK_LITE_AVX2
    if (__builtin_cpu_supports("avx2"))
        while (n - i >= 8) {
            const size_t m = (n - i) & ~(size_t)7, c = m < LITE_CHUNK ? m : LITE_CHUNK;
            k += runs_extra_avx2(l + i, c);
            i += c;
        }
#endif
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const __m128i ff = _mm_set1_epi32(0xff), one = _mm_set1_epi32(1);
    while (n - i >= 4) {
        const size_t m = (n - i) & ~(size_t)3, end = i + (m < LITE_CHUNK ? m : LITE_CHUNK);
        __m128i acc = _mm_setzero_si128();
        for (; i < end; i += 4) {
            const char *b = (const char *)(l + i) + LITE_AT;
#define REC(j) _mm_loadu_si128((const __m128i *)(const void *)(b + (j) * sizeof(*l)))
            const __m128i w = _mm_unpackhi_epi64(_mm_unpacklo_epi32(REC(0), REC(1)),
                                                 _mm_unpacklo_epi32(REC(2), REC(3)));
#undef REC
            const __m128i run = _mm_cmpeq_epi32(_mm_and_si128(w, ff), ff);
            acc = _mm_add_epi32(acc, _mm_and_si128(run, _mm_sub_epi32(_mm_srli_epi32(w, 24), one)));
        }
        uint32_t a[4];
        _mm_storeu_si128((__m128i *)(void *)a, acc);
        k += (uint64_t)a[0] + a[1] + a[2] + a[3];
    }
#endif
    for (; i < n; i++)
        k += tk_etm4_lite_packets(&l[i]) - 1u;
    return k;
}
