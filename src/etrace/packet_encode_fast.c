/* SPDX-License-Identifier: BSD-2-Clause */
/* Encoding of the packets an encoder emits most (2.0 formats 1 and 2, and the format 3 start
 * packet) without the generic codec's bit writer: the fields are laid out in one 128-bit value
 * (payload.adoc field order, LSB first) and sign-compressed with one count of leading
 * zeros. Everything else, and any packet whose fields do not fit their widths, goes to
 * tk_te_packet_encode, which gives the same bytes or the verdict. */
#include <string.h>

#include "etrace/packet_layout.h"
#include "tracekit/te_encoder.h"

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

/* Append the n low bits of v at *pos; *bad collects the bits of v beyond n (a value that does
 * not fit). Zero-width fields are absent and their values ignored, as in the codec. */
static inline void put(u128 *acc, unsigned *pos, uint64_t v, unsigned n, uint64_t *bad)
{
    if (n == 0)
        return;
    if (n < 64) {
        *bad |= v >> n;
        v &= ((uint64_t)1 << n) - 1;
    }
    *acc |= (u128)v << *pos;
    *pos += n;
}

/* address, notify, updiscon, irreport (each relative to the bit before), irdepth. */
static inline void put_tail(const tk_te_layout *l, const tk_te_packet *pkt, u128 *acc,
                            unsigned *pos, uint64_t *bad)
{
    put(acc, pos, pkt->address, l->aw, bad);
    const unsigned msb = l->aw ? (unsigned)(pkt->address >> (l->aw - 1)) & 1u : 0u;
    const unsigned notify = msb ^ (unsigned)pkt->notify;
    const unsigned updiscon = notify ^ (unsigned)pkt->updiscon;
    const unsigned irreport = updiscon ^ (unsigned)pkt->irreport;
    put(acc, pos, notify | updiscon << 1 | irreport << 2, 3, bad);
    put(acc, pos, pkt->irdepth, l->d, bad);
}

/* Sign-based compression (payload.adoc, as tk_bitw_compress): keep the bits up to the
 * highest one that differs from the last, plus one copy of the last, and fill the last byte
 * with copies. Returns the byte count, 0 if cap is too small. */
static size_t compress(u128 v, unsigned pos, uint8_t *buf, size_t cap)
{
    const u128 ones = ~(u128)0;
    const unsigned sign = (unsigned)(v >> (pos - 1)) & 1u;
    /* pos is at most 128: the bits below the last */
    const u128 diff = (v ^ (sign ? ones : 0)) & (((u128)1 << (pos - 1)) - 1);
    int hd = -1;
    const uint64_t hi = (uint64_t)(diff >> 64), lo = (uint64_t)diff;
    if (hi)
        hd = 127 - __builtin_clzll(hi);
    else if (lo)
        hd = 63 - __builtin_clzll(lo);
    const unsigned keep = (unsigned)(hd + 2);
    const size_t nbytes = (keep + 7) / 8;
    if (nbytes > cap)
        return 0;
    if (keep < 128) {
        const u128 high = ones << keep;
        v = sign ? (v | high) : (v & ~high);
    }
    for (size_t i = 0; i < nbytes; i++)
        buf[i] = (uint8_t)(v >> (8 * i));
    return nbytes;
}

tk_status tk_te_packet_encode_layout(const tk_te_layout *l, const tk_te_packet *pkt, uint8_t *buf,
                                     size_t cap, size_t *len)
{
    const tk_te_params *p = l->params;
    if (!l->fast || pkt->format > 3)
        return tk_te_packet_encode(p, pkt, buf, cap, len);
    u128 acc = pkt->format;
    unsigned pos = 2;
    uint64_t bad = 0;
    switch (pkt->format) {
    case TK_TE_F2:
        if (l->aw + 3 + l->d > 126)
            return tk_te_packet_encode(p, pkt, buf, cap, len);
        put_tail(l, pkt, &acc, &pos, &bad);
        break;
    case TK_TE_F1: {
        unsigned branches = pkt->branches;
        if (branches == 31 && !pkt->has_address)
            branches = 0;
        const unsigned mb = tk_te_map_bits(branches);
        if (branches > 31 || (branches && 7 + mb + l->aw + 3 + l->d > 128))
            return tk_te_packet_encode(p, pkt, buf, cap, len);
        put(&acc, &pos, branches, 5, &bad);
        put(&acc, &pos, pkt->branch_map, mb, &bad);
        if (branches)
            put_tail(l, pkt, &acc, &pos, &bad);
        break;
    }
    case TK_TE_F3:
        if (pkt->subformat != TK_TE_SF_START || 5 + l->p + l->t + l->c + l->aw > 128)
            return tk_te_packet_encode(p, pkt, buf, cap, len);
        put(&acc, &pos, TK_TE_SF_START, 2, &bad);
        put(&acc, &pos, pkt->branch, 1, &bad);
        put(&acc, &pos, pkt->privilege, l->p, &bad);
        put(&acc, &pos, pkt->time, l->t, &bad);
        put(&acc, &pos, pkt->context, l->c, &bad);
        put(&acc, &pos, pkt->address, l->aw, &bad);
        break;
    default: /* format 0: its subformat rules are the codec's */
        return tk_te_packet_encode(p, pkt, buf, cap, len);
    }
    if (bad) /* a field does not fit: the codec says which way it fails */
        return tk_te_packet_encode(p, pkt, buf, cap, len);
    const size_t n = compress(acc, pos, buf, cap);
    if (n == 0)
        return TK_ERR_OVERFLOW;
    if (len)
        *len = n;
    return TK_OK;
}

#else /* no 128-bit integers: the generic codec */

tk_status tk_te_packet_encode_layout(const tk_te_layout *l, const tk_te_packet *pkt, uint8_t *buf,
                                     size_t cap, size_t *len)
{
    return tk_te_packet_encode(l->params, pkt, buf, cap, len);
}

#endif
