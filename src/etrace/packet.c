/* SPDX-License-Identifier: BSD-2-Clause */
/* te_inst payload codec (E-Trace 2.0 payload.adoc; draft layouts in packet_draft.c).
 * Fields go LSB first in table order; the whole packet is sign-compressed on output and
 * sign-extended on input. The struct holds the logical notify/updiscon/irreport flags; on
 * the wire each is XORed with the bit before it (VERSIONS.md A.1). */
#include "tracekit/te_packet.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "etrace/packet_codec.h"
#include "etrace/packet_fast.h"
#include "etrace/packet_layout.h"
#include "util/bitbuf.h"

/* ---- encoding helpers ------------------------------------------------------------------- */

/* Append a field after checking that it fits, recording the first field that does not. */
void tk_te_put(tk_te_enc *e, const char *name, uint64_t v, unsigned n)
{
    if (n == 0)
        return;
    if (n < 64 && (v >> n) != 0 && !e->why)
        e->why = name;
    tk_bitw_put(&e->b, v, n);
}

/* address, notify, updiscon, irreport, irdepth: the tail shared by F0SF0, F1 and F2.
 * notify is relative to address[MSB], updiscon to notify, irreport to updiscon. */
void tk_te_put_address_tail(tk_te_enc *e, const tk_te_packet *pkt)
{
    const tk_te_widths *w = &e->w;
    tk_te_put(e, "address", pkt->address, w->aw);
    unsigned msb = w->aw ? (unsigned)(pkt->address >> (w->aw - 1)) & 1u : 0u;
    unsigned notify = msb ^ (unsigned)pkt->notify;
    unsigned updiscon = notify ^ (unsigned)pkt->updiscon;
    unsigned irreport = updiscon ^ (unsigned)pkt->irreport;
    tk_bitw_put(&e->b, notify, 1);
    tk_bitw_put(&e->b, updiscon, 1);
    tk_bitw_put(&e->b, irreport, 1);
    tk_te_put(e, "irdepth", pkt->irdepth, w->d);
}

/* ---- 2.0 layouts ------------------------------------------------------------------------ */

static tk_status f0_subformat(const tk_te_params *p, tk_diag *diag, unsigned *sf, tk_bitr *r,
                              const tk_te_widths *w)
{
    if (w->s) {
        *sf = (unsigned)tk_bitr_get(r, w->s);
        return TK_OK;
    }
    int inferred = tk_te_f0_inferred_subformat(p);
    if (inferred < 0)
        return tk_diag_set(diag, TK_ERR_BAD_PACKET,
                           "format 0 packet, but f0s_width_p is 0 and neither branch prediction "
                           "nor the jump target cache is enabled");
    *sf = (unsigned)inferred;
    return TK_OK;
}

static tk_status encode_20(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e)
{
    const tk_te_widths *w = &e->w;
    tk_bitw_put(&e->b, pkt->format, 2);
    switch (pkt->format) {
    case TK_TE_F3:
        tk_te_put(e, "subformat", pkt->subformat, 2);
        if (pkt->subformat == TK_TE_SF_SUPPORT) {
            tk_te_put(e, "ienable", pkt->ienable, 1);
            tk_te_put(e, "encoder_mode", pkt->encoder_mode, w->em);
            tk_te_put(e, "qual_status", pkt->qual_status, 2);
            tk_te_put(e, "ioptions", pkt->ioptions, w->io);
            tk_te_put(e, "denable", pkt->denable, 1);
            tk_te_put(e, "dloss", pkt->dloss, 1);
            tk_te_put(e, "doptions", pkt->doptions, w->dop);
            return TK_OK;
        }
        if (pkt->subformat != TK_TE_SF_CONTEXT)
            tk_te_put(e, "branch", pkt->branch, 1);
        tk_te_put(e, "privilege", pkt->privilege, w->p);
        tk_te_put(e, "time", pkt->time, w->t);
        tk_te_put(e, "context", pkt->context, w->c);
        if (pkt->subformat == TK_TE_SF_START) {
            tk_te_put(e, "address", pkt->address, w->aw);
        } else if (pkt->subformat == TK_TE_SF_TRAP) {
            tk_te_put(e, "ecause", pkt->ecause, w->e);
            tk_te_put(e, "interrupt", pkt->interrupt, 1);
            tk_te_put(e, "thaddr", pkt->thaddr, 1);
            if (tk_te_trap_has_address(p, pkt))
                tk_te_put(e, "address", pkt->address, w->aw);
            if (!pkt->interrupt) /* tval is omitted for interrupts */
                tk_te_put(e, "tval", pkt->tval, w->a);
        }
        return TK_OK;
    case TK_TE_F2:
        tk_te_put_address_tail(e, pkt);
        return TK_OK;
    case TK_TE_F1: {
        /* branches=0: full 31-bit map, no address. 31 branches without an address are sent
         * as 0 (payload.adoc "Format 1 branch_map field"). */
        unsigned branches = pkt->branches;
        if (branches == 31 && !pkt->has_address)
            branches = 0;
        tk_te_put(e, "branches", branches, 5);
        tk_te_put(e, "branch_map", pkt->branch_map, tk_te_map_bits(branches));
        if (branches != 0)
            tk_te_put_address_tail(e, pkt);
        return TK_OK;
    }
    case TK_TE_F0: {
        if (w->s) {
            tk_te_put(e, "subformat", pkt->subformat, w->s);
        } else if ((int)pkt->subformat != tk_te_f0_inferred_subformat(p)) {
            e->why = "format 0 subformat: f0s_width_p is 0 and the options imply another one";
            return TK_ERR_CONFIG;
        }
        if (pkt->subformat == TK_TE_F0_BRANCH_COUNT) {
            if (pkt->branch_fmt == 1) { /* 01 cannot occur (payload.adoc F0SF0) */
                e->why = "branch_fmt 01 is reserved";
                return TK_ERR_INVALID;
            }
            tk_te_put(e, "branch_count", pkt->branch_count, 32);
            tk_te_put(e, "branch_fmt", pkt->branch_fmt, 2);
            if (pkt->branch_fmt & 2)
                tk_te_put_address_tail(e, pkt);
            return TK_OK;
        }
        if (pkt->subformat != TK_TE_F0_JTC) {
            e->why = "format 0 subformat is reserved";
            return TK_ERR_INVALID;
        }
        tk_te_put(e, "index", pkt->jtc_index, w->k);
        tk_te_put(e, "branches", pkt->branches, 5);
        unsigned prev; /* irreport is relative to branch_map[MSB], or branches[MSB] */
        if (pkt->branches) {
            unsigned bm = tk_te_map_bits(pkt->branches);
            tk_te_put(e, "branch_map", pkt->branch_map, bm);
            prev = (unsigned)(pkt->branch_map >> (bm - 1)) & 1u;
        } else {
            prev = (pkt->branches >> 4) & 1u;
        }
        tk_bitw_put(&e->b, prev ^ (unsigned)pkt->irreport, 1);
        tk_te_put(e, "irdepth", pkt->irdepth, w->d);
        return TK_OK;
    }
    }
    return TK_ERR_INVALID;
}

static tk_status decode_20(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag)
{
    out->format = (uint8_t)tk_bitr_get(r, 2);
    switch (out->format) {
    case TK_TE_F3:
        out->subformat = (uint8_t)tk_bitr_get(r, 2);
        if (out->subformat == TK_TE_SF_SUPPORT) {
            out->ienable = (uint8_t)tk_bitr_get(r, 1);
            out->encoder_mode = (uint8_t)tk_bitr_get(r, w->em);
            out->qual_status = (uint8_t)tk_bitr_get(r, 2);
            out->ioptions = (uint32_t)tk_bitr_get(r, w->io);
            out->denable = (uint8_t)tk_bitr_get(r, 1);
            out->dloss = (uint8_t)tk_bitr_get(r, 1);
            out->doptions = (uint32_t)tk_bitr_get(r, w->dop);
            return TK_OK;
        }
        if (out->subformat != TK_TE_SF_CONTEXT)
            out->branch = (uint8_t)tk_bitr_get(r, 1);
        out->privilege = (uint8_t)tk_bitr_get(r, w->p);
        out->time = tk_bitr_get(r, w->t);
        out->context = tk_bitr_get(r, w->c);
        if (out->subformat == TK_TE_SF_START) {
            out->address = tk_bitr_get(r, w->aw);
            out->has_address = true;
        } else if (out->subformat == TK_TE_SF_TRAP) {
            out->ecause = (uint32_t)tk_bitr_get(r, w->e);
            out->interrupt = (uint8_t)tk_bitr_get(r, 1);
            out->thaddr = (uint8_t)tk_bitr_get(r, 1);
            if (tk_te_trap_has_address(p, out)) {
                out->address = tk_bitr_get(r, w->aw);
                out->has_address = true;
            }
            if (!out->interrupt)
                out->tval = tk_bitr_get(r, w->a);
        }
        return TK_OK;
    case TK_TE_F2:
        tk_te_get_address_tail(r, w, out);
        return TK_OK;
    case TK_TE_F1:
        out->branches = (uint8_t)tk_bitr_get(r, 5);
        out->branch_map = (uint32_t)tk_bitr_get(r, tk_te_map_bits(out->branches));
        if (out->branches != 0)
            tk_te_get_address_tail(r, w, out);
        return TK_OK;
    case TK_TE_F0: {
        unsigned sf = 0;
        tk_status st = f0_subformat(p, diag, &sf, r, w);
        if (st != TK_OK)
            return st;
        out->subformat = (uint8_t)sf;
        if (sf == TK_TE_F0_BRANCH_COUNT) {
            out->branch_count = tk_bitr_get(r, 32);
            out->branch_fmt = (uint8_t)tk_bitr_get(r, 2);
            if (out->branch_fmt == 1)
                return tk_diag_set(diag, TK_ERR_BAD_PACKET,
                                   "format 0 branch count with reserved branch_fmt 01");
            if (out->branch_fmt & 2)
                tk_te_get_address_tail(r, w, out);
            return TK_OK;
        }
        if (sf != TK_TE_F0_JTC)
            return tk_diag_set(diag, TK_ERR_BAD_PACKET, "format 0 with reserved subformat %u", sf);
        out->jtc_index = (uint32_t)tk_bitr_get(r, w->k);
        out->branches = (uint8_t)tk_bitr_get(r, 5);
        unsigned prev;
        if (out->branches) {
            unsigned bm = tk_te_map_bits(out->branches);
            out->branch_map = (uint32_t)tk_bitr_get(r, bm);
            prev = (out->branch_map >> (bm - 1)) & 1u;
        } else {
            prev = (out->branches >> 4) & 1u;
        }
        out->irreport = (unsigned)tk_bitr_get(r, 1) != prev;
        out->irdepth = tk_bitr_get(r, w->d);
        return TK_OK;
    }
    }
    return tk_diag_set(diag, TK_ERR_BAD_PACKET, "impossible format %u", out->format);
}

/* ---- public entry points ---------------------------------------------------------------- */

static tk_status encode_any(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e)
{
    if (!p || !pkt)
        return TK_ERR_INVALID;
    tk_bitw_init(&e->b);
    tk_te_widths_init(&e->w, p);
    e->why = NULL;
    if (pkt->format > 3) {
        e->why = "format is not 0..3";
        return TK_ERR_INVALID;
    }
    tk_status st;
    switch (p->spec) {
    case TK_TE_SPEC_2_0:
        st = encode_20(p, pkt, e);
        break;
    case TK_TE_SPEC_0_29:
        st = tk_te_encode_029(p, pkt, e);
        break;
    case TK_TE_SPEC_0_26:
        st = tk_te_encode_026(p, pkt, e);
        break;
    default:
        e->why = "unknown spec version";
        return TK_ERR_INVALID;
    }
    if (st != TK_OK)
        return st;
    if (e->why)
        return TK_ERR_OVERFLOW;
    if (e->b.overflow) {
        e->why = "packet longer than the codec's maximum";
        return TK_ERR_OVERFLOW;
    }
    return TK_OK;
}

tk_status tk_te_packet_encode(const tk_te_params *p, const tk_te_packet *pkt, uint8_t *buf,
                              size_t cap, size_t *len)
{
    tk_te_enc e;
    tk_status st = encode_any(p, pkt, &e);
    if (st != TK_OK)
        return st;
    size_t n = tk_bitw_compress(&e.b, buf, cap);
    if (n == 0)
        return TK_ERR_OVERFLOW;
    if (len)
        *len = n;
    return TK_OK;
}

tk_status tk_te_packet_encode_bits(const tk_te_params *p, const tk_te_packet *pkt, uint8_t *buf,
                                   size_t cap, size_t *nbits)
{
    tk_te_enc e;
    tk_status st = encode_any(p, pkt, &e);
    if (st != TK_OK)
        return st;
    if (tk_bitw_bytes(&e.b, buf, cap) == 0 && e.b.pos != 0)
        return TK_ERR_OVERFLOW;
    if (nbits)
        *nbits = e.b.pos;
    return TK_OK;
}

const char *tk_te_packet_encode_error(const tk_te_params *p, const tk_te_packet *pkt)
{
    tk_te_enc e;
    tk_status st = encode_any(p, pkt, &e);
    if (st == TK_OK)
        return NULL;
    return e.why ? e.why : tk_strerror(st);
}

void tk_te_layout_init(tk_te_layout *l, const tk_te_params *p)
{
    tk_te_widths_init(l, p);
}

tk_status tk_te_packet_decode_layout(const tk_te_layout *w, const uint8_t *payload, size_t len,
                                     tk_te_packet *out, tk_diag *diag)
{
    if (!w || !w->params || !out || (!payload && len))
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_packet_decode: NULL argument");
    const tk_te_params *p = w->params;
    if (w->fast && len - 1 < TK_TE_FAST_MAX_LEN) {
        /* hot path: the specialised decoders of packet_fast.h */
        if (tk_te_fast_decode_bytes(w, payload, (unsigned)len, out) == TK_TE_FAST_OK)
            return TK_OK;
    }
    memset(out, 0, sizeof(*out));
    if (len == 0)
        return tk_diag_set(diag, TK_ERR_TRUNCATED, "empty te_inst payload");
    if (len > TK_TE_MAX_PAYLOAD)
        return tk_diag_set(diag, TK_ERR_BAD_PACKET,
                           "te_inst payload of %zu bytes exceeds the %d-byte maximum", len,
                           TK_TE_MAX_PAYLOAD);
    tk_bitr r;
    tk_bitr_init(&r, payload, len);
    tk_status st;
    switch (p->spec) {
    case TK_TE_SPEC_2_0:
        st = decode_20(p, &r, w, out, diag);
        break;
    case TK_TE_SPEC_0_29:
        st = tk_te_decode_029(p, &r, w, out, diag);
        break;
    case TK_TE_SPEC_0_26:
        st = tk_te_decode_026(p, &r, w, out, diag);
        break;
    default:
        return tk_diag_set(diag, TK_ERR_INVALID, "unknown spec version %d", (int)p->spec);
    }
    if (st != TK_OK)
        return st;
    /* Compression only removes bits and pads to the next byte, so a payload with a whole
     * byte beyond the packet's bits was not produced with these parameters. */
    if (r.nbits >= r.pos + 8)
        return tk_diag_set(diag, TK_ERR_BAD_PACKET,
                           "payload of %zu bytes is longer than the %u-bit packet it holds "
                           "(parameters do not match the trace?)",
                           len, r.pos);
    return TK_OK;
}

tk_status tk_te_packet_decode(const tk_te_params *p, const uint8_t *payload, size_t len,
                              tk_te_packet *out, tk_diag *diag)
{
    if (!p)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_packet_decode: NULL argument");
    tk_te_layout l;
    tk_te_widths_init(&l, p);
    return tk_te_packet_decode_layout(&l, payload, len, out, diag);
}
