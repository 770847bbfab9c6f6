/* SPDX-License-Identifier: BSD-2-Clause */
/* Encoding of the packets an encoder emits most (2.0 formats 1 and 2, and the format 3 start
 * packet) without the generic codec's bit writer: the fields are laid out in one 128-bit value
 * (payload.adoc field order, LSB first) and sign-compressed with one count of leading
 * zeros. Everything else, and any packet whose fields do not fit their widths, goes to
 * tk_te_packet_encode, which gives the same bytes or the verdict. */
#include <string.h>

#include "etrace/packet_layout.h"
#include "tracekit/te_encoder.h"
#include "util/compiler.h"

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

/* Sign-based compression (payload.adoc, as tk_bitw_compress) of the pos (1..128) bits of the
 * value lo | hi << 64: keep the bits up to the highest one that differs from the last, plus one
 * copy of the last, and fill the last byte with copies. Returns the byte count, 0 if cap is
 * too small. Two 64-bit halves, not a 128-bit integer: a variable shift of one costs about
 * seven instructions, and every shift here stays within one half. */
static TK_ALWAYS_INLINE size_t compress(uint64_t lo, uint64_t hi, unsigned pos, uint8_t *buf,
                                        size_t cap)
{
    /* sign-extended from bit pos - 1: every byte past the kept bits is sign copies */
    if (pos > 64) {
        const unsigned sh = 128 - pos;
        hi = (uint64_t)((int64_t)(hi << sh) >> sh);
    } else {
        const unsigned sh = 64 - pos;
        lo = (uint64_t)((int64_t)(lo << sh) >> sh);
        hi = (uint64_t)((int64_t)lo >> 63);
    }
    /* the bits that differ from the sign; the highest is the last to keep but one */
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
 * written) when the codec must decide: a value that does not fit, or more than 128 bits.
 * The fields before the address take at most 38 bits, so the address starts in the low
 * half. */
static bool encode_f12(const tk_te_layout *l, const tk_te_packet *pkt, unsigned branches,
                       uint8_t *buf, size_t cap, size_t *len, tk_status *st)
{
    const unsigned aw = l->aw, d = l->d;
    uint64_t lo, hi = 0;
    unsigned pos;
    if (pkt->format == TK_TE_F2) {
        lo = TK_TE_F2;
        pos = 2;
    } else {
        if (branches > 31)
            return false;
        /* tk_te_map_bits() without its chain of compares: 2^k - 1 >= branches, 31 for 0 */
        const unsigned mb = branches ? (2u << (31 - __builtin_clz(branches))) - 1 : 31;
        if (pkt->branch_map >> mb)
            return false;
        lo = TK_TE_F1 | branches << 2 | (uint64_t)pkt->branch_map << 7;
        pos = 7 + mb;
    }
    if (pkt->format == TK_TE_F2 || branches) {
        const unsigned tw = 3 + d; /* notify, updiscon, irreport, irdepth */
        if (aw - 1 >= 64 || d > 61 || pos + aw + tw > 128)
            return false;
        const uint64_t a = pkt->address;
        /* (1 <= aw <= 64, d <= 61: one shift each for the bits that must be clear) */
        const uint64_t top = a >> (aw - 1);
        if ((top >> 1) | (pkt->irdepth >> d))
            return false;
        lo |= a << pos;
        hi = a >> (64 - pos); /* (2 <= pos <= 38) */
        const unsigned msb = (unsigned)top & 1u;
        const unsigned notify = msb ^ (unsigned)pkt->notify;
        const unsigned updiscon = notify ^ (unsigned)pkt->updiscon;
        const unsigned irreport = updiscon ^ (unsigned)pkt->irreport;
        const uint64_t tail = notify | updiscon << 1 | irreport << 2 | pkt->irdepth << 3;
        const unsigned at = pos + aw; /* 3..102; at + tw <= 128 */
        if (at >= 64) {
            hi |= tail << (at - 64);
        } else {
            lo |= tail << at;
            hi |= tail >> (64 - at);
        }
        pos = at + tw;
    }
    const size_t n = compress(lo, hi, pos, buf, cap);
    *st = n ? TK_OK : TK_ERR_OVERFLOW;
    if (n && len)
        *len = n;
    return true;
}

/* Format 3 start (the resync packet); kept out of tk_te_packet_encode_layout() so that the
 * common formats 1 and 2 run without saving registers for it. */
TK_NOINLINE static tk_status encode_start(const tk_te_layout *l, const tk_te_packet *pkt,
                                          uint8_t *buf, size_t cap, size_t *len)
{
    const tk_te_params *p = l->params;
    if (5 + l->p + l->t + l->c + l->aw > 128)
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
    const size_t n = compress((uint64_t)acc, (uint64_t)(acc >> 64), pos, buf, cap);
    if (n == 0)
        return TK_ERR_OVERFLOW;
    if (len)
        *len = n;
    return TK_OK;
}

tk_status tk_te_packet_encode_layout(const tk_te_layout *l, const tk_te_packet *pkt, uint8_t *buf,
                                     size_t cap, size_t *len)
{
    if (l->fast && (pkt->format == TK_TE_F2 || pkt->format == TK_TE_F1)) {
        /* 31 branches without an address are sent as 0 (payload.adoc) */
        const unsigned branches =
            pkt->branches == 31 && !pkt->has_address ? 0 : (unsigned)pkt->branches;
        tk_status st = TK_OK;
        if (encode_f12(l, pkt, branches, buf, cap, len, &st))
            return st;
    } else if (l->fast && pkt->format == TK_TE_F3 && pkt->subformat == TK_TE_SF_START) {
        return encode_start(l, pkt, buf, cap, len);
    }
    return tk_te_packet_encode(l->params, pkt, buf, cap, len);
}

#else /* no 128-bit integers: the generic codec */

tk_status tk_te_packet_encode_layout(const tk_te_layout *l, const tk_te_packet *pkt, uint8_t *buf,
                                     size_t cap, size_t *len)
{
    return tk_te_packet_encode(l->params, pkt, buf, cap, len);
}

#endif
