/* SPDX-License-Identifier: BSD-2-Clause */
/* Specialised te_inst decoders for the 2.0 layout (payload.adoc), used on the hot path by
 * tk_te_packet_decode_layout and the raw-stream scanner (packet_scan.c).
 *
 * A payload of up to 16 bytes is first widened into one signed 128-bit value, sign-extended
 * past its last byte (sign-based compression), so every field is one shift and mask held in
 * registers: no per-bit loop, no bounds check per field. Formats 1 and 2 (nearly all packets of a
 * trace) share one branch-free path: the format bit and the branches field select the map length
 * and where the address tail starts from small tables. Format 3 subformats 0, 1 and 3 have straight
 * paths of their own; format 0 and anything unusual go to the generic decoder, which also
 * words every error message. */
#ifndef TK_ETRACE_PACKET_FAST_H
#define TK_ETRACE_PACKET_FAST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "etrace/packet_clear.h"
#include "etrace/packet_layout.h"
#include "util/compiler.h"
#include "util/le.h"

/* Payloads of up to this many bytes take the specialised paths. */
enum { TK_TE_FAST_MAX_LEN = 16 };

/* The hot path must be one straight piece of code in the scanning loop. */
#define TK_TE_FAST_INLINE static TK_ALWAYS_INLINE

/* Outcome of a specialised decode. */
enum {
    TK_TE_FAST_OK = 0,
    TK_TE_FAST_GENERIC = 1, /* not handled here (format 0, reserved values, too long, errors):
                             * use the generic decoder, which gives the verdict */
};

/* The payload as one signed 128-bit value: payload bits, then copies of the last one. A
 * field read beyond bit 127 is all sign copies, which is what the wire means. */
__extension__ typedef __int128 tk_te_fast_word;

static inline uint64_t tk_te_fast_ld64(const uint8_t *p)
{
    return tk_load_le64(p);
}

/* Sign-extend the low 8 * len (8..128) bits of the two words lo, hi. */
TK_TE_FAST_INLINE tk_te_fast_word tk_te_fast_join(uint64_t lo, uint64_t hi, unsigned len)
{
    __extension__ typedef unsigned __int128 u128;
    const unsigned sh = 128 - 8 * len;
    const u128 v = ((u128)hi << 64 | lo) << sh;
    return (tk_te_fast_word)v >> sh;
}

/* Widen a payload of len (1..16) bytes from a buffer that may be read 16 bytes from p. */
TK_TE_FAST_INLINE tk_te_fast_word tk_te_fast_words_overread(const uint8_t *p, unsigned len)
{
    return tk_te_fast_join(tk_te_fast_ld64(p), tk_te_fast_ld64(p + 8), len);
}

/* Little-endian value of n (1..8) bytes at p, reading only those bytes (overlapping loads). */
static inline uint64_t tk_te_fast_ld_n(const uint8_t *p, unsigned n)
{
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        return (uint64_t)lo | (uint64_t)hi << (8 * (n - 4));
    }
    if (n >= 2)
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[n - 1] << (8 * (n - 1));
    return p[0];
}

/* Widen a payload of len (1..16) bytes reading nothing past it. */
static inline tk_te_fast_word tk_te_fast_words_exact(const uint8_t *p, unsigned len)
{
    if (len <= 8)
        return tk_te_fast_join(tk_te_fast_ld_n(p, len), 0, len);
    return tk_te_fast_join(tk_te_fast_ld64(p), tk_te_fast_ld_n(p + 8, len - 8), len);
}

/* n (0..64) low bits set. */
static inline uint64_t tk_te_fast_mask(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* The n-bit field at bit pos: one shift of the 128-bit value (from bit 127 on, every bit is
 * a sign copy, so a shift by 127 gives the same bits as any larger one). */
TK_TE_FAST_INLINE uint64_t tk_te_fast_get(tk_te_fast_word w, unsigned pos, unsigned n)
{
    return (uint64_t)(w >> (pos < 127 ? pos : 127)) & tk_te_fast_mask(n);
}

/* Map length for a F1 branches value (payload.adoc "Format 1 branch_map field"; 0 = 31). */
static const uint8_t tk_te_fast_map_bits[32] = {31, 1,  3,  3,  7,  7,  7,  7,  15, 15, 15,
                                                15, 15, 15, 15, 15, 31, 31, 31, 31, 31, 31,
                                                31, 31, 31, 31, 31, 31, 31, 31, 31, 31};

/* The packet struct of a format 1 or 2 payload, from the fields the callers extracted
 * (flags already made logical; without an address, only format and map count). */
TK_TE_FAST_INLINE void tk_te_fast_f12_store(uint64_t w0, unsigned br, unsigned mb, bool has,
                                            uint64_t addr, unsigned flags, uint64_t irdepth,
                                            tk_te_packet *out)
{
    const unsigned f1 = (unsigned)w0 & 1u;
    tk_te_packet_clear(out);
    out->format = (uint8_t)(w0 & 3u);
    out->branches = (uint8_t)br;
    out->branch_map = f1 ? (uint32_t)((w0 >> 7) & tk_te_fast_mask(mb)) : 0u;
    out->has_address = has;
    const uint64_t keep = has ? ~0ull : 0;
    out->address = addr & keep;
    out->notify = has && (flags & 1u);
    out->updiscon = has && (flags & 2u);
    out->irreport = has && (flags & 4u);
    out->irdepth = irdepth & keep;
}

/* Formats 1 and 2 without branches on the data: F2 is address + tail; F1 is branches, map
 * and, when branches != 0, the tail. */
TK_TE_FAST_INLINE int tk_te_fast_f12(const tk_te_layout *l, tk_te_fast_word w, unsigned len,
                                     tk_te_packet *out)
{
    const uint64_t w0 = (uint64_t)w;
    const unsigned f1 = (unsigned)w0 & 1u; /* format 1 = 01, format 2 = 10 */
    const unsigned br = f1 ? (unsigned)(w0 >> 2) & 31u : 0u;
    const unsigned mb = f1 ? tk_te_fast_map_bits[br] : 0u;
    const unsigned ap = f1 ? 7u + mb : 2u; /* address position */
    const bool has = !f1 || br != 0;
    const unsigned aw = l->aw, d = l->d;

    const uint64_t addr = tk_te_fast_get(w, ap, aw);
    const unsigned tp = ap + aw; /* notify, updiscon, irreport */
    const unsigned bits = (unsigned)tk_te_fast_get(w, tp, 3);
    const uint64_t irdepth = tk_te_fast_get(w, tp + 3, d);
    const unsigned msb = aw ? (unsigned)(addr >> (aw - 1)) & 1u : 0u;
    /* each flag is transmitted relative to the bit before it (VERSIONS.md A.1) */
    const unsigned flags = bits ^ ((bits << 1 | msb) & 7u);
    const unsigned total = has ? tp + 3 + d : 38u;
    /* A whole byte beyond the packet: parameters do not match (generic path says so). */
    if (8 * len >= total + 8)
        return TK_TE_FAST_GENERIC;

    tk_te_fast_f12_store(w0, br, mb, has, addr, flags, irdepth, out);
    return TK_TE_FAST_OK;
}

/* The n-bit field at bit pos of a payload of up to 8 bytes held in one signed word. */
TK_TE_FAST_INLINE uint64_t tk_te_fast_get64(int64_t w, unsigned pos, unsigned n)
{
    return (uint64_t)(w >> (pos < 63 ? pos : 63)) & tk_te_fast_mask(n);
}

/* The same for payloads of up to 8 bytes, in one 64-bit register. */
TK_TE_FAST_INLINE int tk_te_fast_f12_64(const tk_te_layout *l, int64_t w, unsigned len,
                                        tk_te_packet *out)
{
    const uint64_t w0 = (uint64_t)w;
    const unsigned f1 = (unsigned)w0 & 1u; /* format 1 = 01, format 2 = 10 */
    const unsigned br = f1 ? (unsigned)(w0 >> 2) & 31u : 0u;
    const unsigned mb = f1 ? tk_te_fast_map_bits[br] : 0u;
    const unsigned ap = f1 ? 7u + mb : 2u; /* address position */
    const bool has = !f1 || br != 0;
    const unsigned aw = l->aw, d = l->d;

    const uint64_t addr = tk_te_fast_get64(w, ap, aw);
    const unsigned tp = ap + aw; /* notify, updiscon, irreport */
    /* A whole byte beyond the packet: parameters do not match (generic path says so). */
    if (8 * len >= (has ? tp + 3 + d : 38u) + 8)
        return TK_TE_FAST_GENERIC;
    if (tp >= 8 * len) {
        /* Usual for a compressed packet: the address field reaches past the payload, so its
         * MSB and the whole tail are sign copies. Then the three flags, each relative to the
         * bit before it, are 0, and irdepth is all sign bits. */
        tk_te_fast_f12_store(w0, br, mb, has, addr, 0, (uint64_t)(w >> 63) & tk_te_fast_mask(d),
                             out);
        return TK_TE_FAST_OK;
    }
    const unsigned bits = (unsigned)tk_te_fast_get64(w, tp, 3);
    const uint64_t irdepth = tk_te_fast_get64(w, tp + 3, d);
    const unsigned msb = aw ? (unsigned)(addr >> (aw - 1)) & 1u : 0u;
    /* each flag is transmitted relative to the bit before it (VERSIONS.md A.1) */
    const unsigned flags = bits ^ ((bits << 1 | msb) & 7u);

    tk_te_fast_f12_store(w0, br, mb, has, addr, flags, irdepth, out);
    return TK_TE_FAST_OK;
}

/* Format 3: subformats 0 (start), 1 (trap) and 3 (support); 2 (context) goes generic. */
static inline int tk_te_fast_f3(const tk_te_layout *l, tk_te_fast_word w, unsigned len,
                                tk_te_packet *out)
{
    const uint64_t w0 = (uint64_t)w;
    const unsigned sf = (unsigned)(w0 >> 2) & 3u;
    unsigned pos;
    tk_te_packet_clear(out);
    out->format = TK_TE_F3;
    out->subformat = (uint8_t)sf;
    if (sf == TK_TE_SF_SUPPORT) {
        out->ienable = (uint8_t)((w0 >> 4) & 1u);
        pos = 5;
        out->encoder_mode = (uint8_t)tk_te_fast_get(w, pos, l->em);
        pos += l->em;
        out->qual_status = (uint8_t)tk_te_fast_get(w, pos, 2);
        pos += 2;
        out->ioptions = (uint32_t)tk_te_fast_get(w, pos, l->io);
        pos += l->io;
        out->denable = (uint8_t)tk_te_fast_get(w, pos, 1);
        out->dloss = (uint8_t)tk_te_fast_get(w, pos + 1, 1);
        pos += 2;
        out->doptions = (uint32_t)tk_te_fast_get(w, pos, l->dop);
        pos += l->dop;
    } else if (sf == TK_TE_SF_CONTEXT) {
        return TK_TE_FAST_GENERIC;
    } else {
        out->branch = (uint8_t)((w0 >> 4) & 1u);
        pos = 5;
        out->privilege = (uint8_t)tk_te_fast_get(w, pos, l->p);
        pos += l->p;
        out->time = tk_te_fast_get(w, pos, l->t);
        pos += l->t;
        out->context = tk_te_fast_get(w, pos, l->c);
        pos += l->c;
        if (sf == TK_TE_SF_START) {
            out->address = tk_te_fast_get(w, pos, l->aw);
            out->has_address = true;
            pos += l->aw;
        } else {
            out->ecause = (uint32_t)tk_te_fast_get(w, pos, l->e);
            pos += l->e;
            out->interrupt = (uint8_t)tk_te_fast_get(w, pos, 1);
            out->thaddr = (uint8_t)tk_te_fast_get(w, pos + 1, 1);
            pos += 2;
            if (tk_te_trap_has_address(l->params, out)) {
                out->address = tk_te_fast_get(w, pos, l->aw);
                out->has_address = true;
                pos += l->aw;
            }
            if (!out->interrupt) { /* tval is omitted for interrupts */
                out->tval = tk_te_fast_get(w, pos, l->a);
                pos += l->a;
            }
        }
    }
    if (8 * len >= pos + 8)
        return TK_TE_FAST_GENERIC;
    return TK_TE_FAST_OK;
}

/* Specialised decode of a widened 2.0 payload. */
TK_TE_FAST_INLINE int tk_te_fast_decode(const tk_te_layout *l, tk_te_fast_word w, unsigned len,
                                        tk_te_packet *out)
{
    const unsigned fmt = (unsigned)w & 3u;
    if (fmt - 1u < 2u)
        return tk_te_fast_f12(l, w, len, out);
    if (fmt == TK_TE_F3)
        return tk_te_fast_f3(l, w, len, out);
    return TK_TE_FAST_GENERIC;
}

/* Specialised decode of a payload of len (1..16) bytes read exactly (no over-read). */
static inline int tk_te_fast_decode_bytes(const tk_te_layout *l, const uint8_t *p, unsigned len,
                                          tk_te_packet *out)
{
    if (len <= 8 && (p[0] & 3u) - 1u < 2u) {
        const unsigned sh = 64 - 8 * len;
        return tk_te_fast_f12_64(l, (int64_t)(tk_te_fast_ld_n(p, len) << sh) >> sh, len, out);
    }
    return tk_te_fast_decode(l, tk_te_fast_words_exact(p, len), len, out);
}

/* ---- compact records (tk_te_rec) ------------------------------------------------------- */

/* The record of a packet decoded into the full struct (format 3, long payloads). */
TK_TE_FAST_INLINE void tk_te_fast_rec_of(const tk_te_packet *k, tk_te_rec *r)
{
    r->address = k->address;
    r->irdepth = k->irdepth;
    r->branch_map = k->branch_map;
    r->format = k->format;
    r->branches = k->branches;
    r->flags =
        (uint8_t)((k->notify ? TK_TE_REC_NOTIFY : 0u) | (k->updiscon ? TK_TE_REC_UPDISCON : 0u) |
                  (k->irreport ? TK_TE_REC_IRREPORT : 0u) |
                  (k->has_address ? TK_TE_REC_ADDRESS : 0u));
    r->subformat = k->subformat;
}

/* The packet of a format 1 or 2 record. */
TK_TE_FAST_INLINE void tk_te_fast_rec_expand(const tk_te_rec *r, tk_te_packet *out)
{
    tk_te_packet_clear(out);
    out->format = r->format;
    out->subformat = r->subformat;
    out->branches = r->branches;
    out->branch_map = r->branch_map;
    out->has_address = (r->flags & TK_TE_REC_ADDRESS) != 0;
    out->address = r->address;
    out->notify = (r->flags & TK_TE_REC_NOTIFY) != 0;
    out->updiscon = (r->flags & TK_TE_REC_UPDISCON) != 0;
    out->irreport = (r->flags & TK_TE_REC_IRREPORT) != 0;
    out->irdepth = r->irdepth;
}

#endif
