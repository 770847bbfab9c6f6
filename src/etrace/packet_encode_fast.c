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

/* Sign-based compression (payload.adoc, as tk_bitw_compress) of the pos (1..128) bits of v:
 * keep the bits up to the highest one that differs from the last, plus one copy of the last,
 * and fill the last byte with copies. Returns the byte count, 0 if cap is too small. */
static size_t compress(u128 v, unsigned pos, uint8_t *buf, size_t cap)
{
    __extension__ typedef __int128 s128;
    /* v sign-extended from bit pos - 1: every byte past the kept bits is sign copies */
    const unsigned sh = 128 - pos;
    v = (u128)((s128)(v << sh) >> sh);
    /* the bits that differ from the sign; the highest is the last to keep but one */
    const uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;
    const uint64_t sign = (uint64_t)((int64_t)hi >> 63);
    const uint64_t dhi = hi ^ sign, dlo = lo ^ sign;
    const unsigned keep = dhi   ? 129 - (unsigned)__builtin_clzll(dhi)
                          : dlo ? 65 - (unsigned)__builtin_clzll(dlo)
                                : 1;
    const size_t nbytes = (keep + 7) / 8;
    if (nbytes > cap)
        return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (cap >= 16) { /* two stores; the bytes past the packet are scratch */
        memcpy(buf, &lo, 8);
        memcpy(buf + 8, &hi, 8);
        return nbytes;
    }
#endif
    for (size_t k = 0; k < nbytes; k++) /* little-endian, whatever the host */
        buf[k] = (uint8_t)((k < 8 ? lo : hi) >> (8 * (k & 7)));
    return nbytes;
}

/* Formats 1 and 2: [branches, branch_map,] address, notify, updiscon, irreport, irdepth.
 * branches is the field as sent (0: a full map without address). Returns false (nothing
 * written) when the codec must decide: a value that does not fit, or more than 128 bits. */
static bool encode_f12(const tk_te_layout *l, const tk_te_packet *pkt, unsigned branches,
                       uint8_t *buf, size_t cap, size_t *len, tk_status *st)
{
    const unsigned aw = l->aw, d = l->d;
    u128 v;
    unsigned pos;
    if (pkt->format == TK_TE_F2) {
        v = TK_TE_F2;
        pos = 2;
    } else {
        const unsigned mb = tk_te_map_bits(branches);
        if (branches > 31 || pkt->branch_map >> mb)
            return false;
        v = TK_TE_F1 | branches << 2 | (uint64_t)pkt->branch_map << 7;
        pos = 7 + mb;
    }
    if (pkt->format == TK_TE_F2 || branches) {
        if (aw == 0 || pos + aw + 3 + d > 128 || 3 + d > 64 || (aw < 64 && pkt->address >> aw) ||
            (d < 64 && pkt->irdepth >> d))
            return false;
        v |= (u128)pkt->address << pos;
        pos += aw;
        const unsigned msb = (unsigned)(pkt->address >> (aw - 1)) & 1u;
        const unsigned notify = msb ^ (unsigned)pkt->notify;
        const unsigned updiscon = notify ^ (unsigned)pkt->updiscon;
        const unsigned irreport = updiscon ^ (unsigned)pkt->irreport;
        const uint64_t tail = notify | updiscon << 1 | irreport << 2 | (d ? pkt->irdepth << 3 : 0);
        v |= (u128)tail << pos;
        pos += 3 + d;
    }
    const size_t n = compress(v, pos, buf, cap);
    *st = n ? TK_OK : TK_ERR_OVERFLOW;
    if (n && len)
        *len = n;
    return true;
}

tk_status tk_te_packet_encode_layout(const tk_te_layout *l, const tk_te_packet *pkt, uint8_t *buf,
                                     size_t cap, size_t *len)
{
    const tk_te_params *p = l->params;
    if (!l->fast || pkt->format > 3)
        return tk_te_packet_encode(p, pkt, buf, cap, len);
    tk_status st = TK_OK;
    if (pkt->format == TK_TE_F2 || pkt->format == TK_TE_F1) {
        /* 31 branches without an address are sent as 0 (payload.adoc) */
        const unsigned branches =
            pkt->branches == 31 && !pkt->has_address ? 0 : (unsigned)pkt->branches;
        if (encode_f12(l, pkt, branches, buf, cap, len, &st))
            return st;
        return tk_te_packet_encode(p, pkt, buf, cap, len);
    }
    if (pkt->format != TK_TE_F3 || pkt->subformat != TK_TE_SF_START ||
        5 + l->p + l->t + l->c + l->aw > 128)
        return tk_te_packet_encode(p, pkt, buf, cap, len);
    u128 acc = TK_TE_F3;
    unsigned pos = 2;
    uint64_t bad = 0;
    put(&acc, &pos, TK_TE_SF_START, 2, &bad);
    put(&acc, &pos, pkt->branch, 1, &bad);
    put(&acc, &pos, pkt->privilege, l->p, &bad);
    put(&acc, &pos, pkt->time, l->t, &bad);
    put(&acc, &pos, pkt->context, l->c, &bad);
    put(&acc, &pos, pkt->address, l->aw, &bad);
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
