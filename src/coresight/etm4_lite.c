/* SPDX-License-Identifier: BSD-2-Clause */
/* The ETMv4 parser's compact records (tk_etm4_pkt_lite), for their consumers: the complete
 * packet a record stands for, and how many packets a batch of records holds. */
#include <string.h>

#include "tracekit/etm4.h"

#if defined(__SSE2__)
#include <emmintrin.h>
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
 * [31:24]. */
_Static_assert(offsetof(tk_etm4_pkt_lite, size) == offsetof(tk_etm4_pkt_lite, type) + 3,
               "type..size are 4 consecutive bytes");

uint64_t tk_etm4_lite_count_packets(const tk_etm4_pkt_lite *l, size_t n)
{
    /* n, plus size - 1 for each atom run. Four records at a time, their type..size words side
     * by side in one vector: a record at a time (about 11 instructions each) was 13% of the
     * time of `dump --stats` (docs/performance.md, session 17). */
    uint64_t k = n;
    size_t i = 0;
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* the 16 bytes from at hold the word as their 32-bit lane 1 */
    const size_t at = offsetof(tk_etm4_pkt_lite, type) - 4;
    _Static_assert(offsetof(tk_etm4_pkt_lite, type) >= 4 &&
                       offsetof(tk_etm4_pkt_lite, type) + 12 <= sizeof(tk_etm4_pkt_lite),
                   "16 bytes of a record around the word");
    const __m128i ff = _mm_set1_epi32(0xff), one = _mm_set1_epi32(1);
    while (n - i >= 4) {
        /* at most 7 a record in a lane: 2^28 records keep the lanes below 2^31 */
        const size_t m = (n - i) & ~(size_t)3,
                     end = i + (m < ((size_t)1 << 28) ? m : (size_t)1 << 28);
        __m128i acc = _mm_setzero_si128();
        for (; i < end; i += 4) {
            const char *b = (const char *)(l + i) + at;
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
