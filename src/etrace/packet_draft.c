/* SPDX-License-Identifier: BSD-2-Clause */
/* te_inst layouts of the drafts v0.029 (seed 002) and v0.026 (seed 000), VERSIONS.md A.3-A.8
 * (field orders there; 2.0 lives in packet.c). Same conventions: LSB first, whole-packet sign
 * compression, flags relative to the preceding bit in 0.029. */
#include "etrace/packet_codec.h"

/* ---- v0.029 ------------------------------------------------------------------------------ */

/* F3 SF0/SF1 common head: context, privilege, branch (0.029 order). */
static void put_sync_head_029(tk_te_enc *e, const tk_te_packet *pkt)
{
    tk_te_put(e, "context", pkt->context, e->w.c);
    tk_te_put(e, "privilege", pkt->privilege, e->w.p);
    tk_te_put(e, "branch", pkt->branch, 1);
}

tk_status tk_te_encode_029(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e)
{
    const tk_te_widths *w = &e->w;
    tk_bitw_put(&e->b, pkt->format, 2);
    switch (pkt->format) {
    case TK_TE_F3:
        tk_te_put(e, "subformat", pkt->subformat, 2);
        switch (pkt->subformat) {
        case TK_TE_SF_START:
            put_sync_head_029(e, pkt);
            tk_te_put(e, "address", pkt->address, w->aw);
            break;
        case TK_TE_SF_TRAP:
            put_sync_head_029(e, pkt);
            if (!p->o.implicit_except) /* 0.029: omitted in implicit exception mode */
                tk_te_put(e, "address", pkt->address, w->aw);
            tk_te_put(e, "ecause", pkt->ecause, w->e);
            tk_te_put(e, "interrupt", pkt->interrupt, 1);
            tk_te_put(e, "tvalepc", pkt->tval, w->a);
            break;
        case TK_TE_SF_CONTEXT:
            tk_te_put(e, "context", pkt->context, w->c);
            tk_te_put(e, "privilege", pkt->privilege, w->p);
            break;
        default:
            tk_te_put(e, "enable", pkt->ienable, 1);
            tk_te_put(e, "encoder_mode", pkt->encoder_mode, w->em);
            tk_te_put(e, "qual_status", pkt->qual_status, 2);
            tk_te_put(e, "options", pkt->ioptions, w->io);
            break;
        }
        return TK_OK;
    case TK_TE_F2:
        tk_te_put_address_tail(e, pkt);
        return TK_OK;
    case TK_TE_F1: {
        unsigned branches = pkt->branches;
        bool count = branches == 0 && (pkt->branch_fmt == 1 || pkt->branch_fmt == 2);
        if (branches == 31 && !pkt->has_address && !count)
            branches = 0;
        tk_te_put(e, "branches", branches, 5);
        if (branches != 0) {
            tk_te_put(e, "branch_map", pkt->branch_map, tk_te_map_bits(branches));
            tk_te_put_address_tail(e, pkt);
        } else if (!count) {
            if (pkt->branch_fmt != 0 && pkt->branch_fmt != 3) {
                e->why = "branch_fmt";
                return TK_ERR_INVALID;
            }
            /* map: branch_fmt bits are copies of map[30] so that they compress away */
            tk_te_put(e, "branch_map", pkt->branch_map, 31);
            tk_bitw_put(&e->b, (pkt->branch_map >> 30) & 1u ? 3u : 0u, 2);
        } else {
            tk_te_put(e, "branch_count", pkt->branch_count, 31);
            tk_bitw_put(&e->b, pkt->branch_fmt, 2);
            if (pkt->branch_fmt == 2) {
                tk_te_put(e, "bpsuccess", pkt->bpsuccess, 1);
                tk_te_put_address_tail(e, pkt);
            }
        }
        return TK_OK;
    }
    case TK_TE_F0: {
        /* Only the jump target cache exists; its subformat value is 0. */
        if (pkt->subformat != TK_TE_F0_JTC) {
            e->why = "0.029 format 0 is only the jump target cache";
            return TK_ERR_INVALID;
        }
        tk_bitw_put(&e->b, 0, w->s);
        tk_te_put(e, "index", pkt->jtc_index, w->k);
        tk_te_put(e, "branches", pkt->branches, 5);
        unsigned prev = (pkt->branches >> 4) & 1u;
        if (pkt->branches) {
            unsigned bm = tk_te_map_bits(pkt->branches);
            tk_te_put(e, "branch_map", pkt->branch_map, bm);
            prev = (unsigned)(pkt->branch_map >> (bm - 1)) & 1u;
        }
        tk_bitw_put(&e->b, prev ^ (unsigned)pkt->irreport, 1);
        tk_te_put(e, "irdepth", pkt->irdepth, w->d);
        return TK_OK;
    }
    }
    return TK_ERR_INVALID;
}

tk_status tk_te_decode_029(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag)
{
    out->format = (uint8_t)tk_bitr_get(r, 2);
    switch (out->format) {
    case TK_TE_F3:
        out->subformat = (uint8_t)tk_bitr_get(r, 2);
        switch (out->subformat) {
        case TK_TE_SF_START:
        case TK_TE_SF_TRAP:
            out->context = tk_bitr_get(r, w->c);
            out->privilege = (uint8_t)tk_bitr_get(r, w->p);
            out->branch = (uint8_t)tk_bitr_get(r, 1);
            if (out->subformat == TK_TE_SF_START || !p->o.implicit_except) {
                out->address = tk_bitr_get(r, w->aw);
                out->has_address = true;
            }
            if (out->subformat == TK_TE_SF_TRAP) {
                out->ecause = (uint32_t)tk_bitr_get(r, w->e);
                out->interrupt = (uint8_t)tk_bitr_get(r, 1);
                out->tval = tk_bitr_get(r, w->a);
            }
            break;
        case TK_TE_SF_CONTEXT:
            out->context = tk_bitr_get(r, w->c);
            out->privilege = (uint8_t)tk_bitr_get(r, w->p);
            break;
        default:
            out->ienable = (uint8_t)tk_bitr_get(r, 1);
            out->encoder_mode = (uint8_t)tk_bitr_get(r, w->em);
            out->qual_status = (uint8_t)tk_bitr_get(r, 2);
            out->ioptions = (uint32_t)tk_bitr_get(r, w->io);
            break;
        }
        return TK_OK;
    case TK_TE_F2:
        tk_te_get_address_tail(r, w, out);
        return TK_OK;
    case TK_TE_F1:
        out->branches = (uint8_t)tk_bitr_get(r, 5);
        if (out->branches) {
            out->branch_map = (uint32_t)tk_bitr_get(r, tk_te_map_bits(out->branches));
            tk_te_get_address_tail(r, w, out);
            return TK_OK;
        }
        {
            /* 31 bits of map or count, then branch_fmt tells which (A.5) */
            uint64_t v = tk_bitr_get(r, 31);
            unsigned fmt = (unsigned)tk_bitr_get(r, 2);
            if (fmt == 0 || fmt == 3) {
                out->branch_map = (uint32_t)v;
                return TK_OK;
            }
            out->branch_count = v;
            out->branch_fmt = (uint8_t)fmt;
            if (fmt == 2) {
                out->bpsuccess = (uint8_t)tk_bitr_get(r, 1);
                tk_te_get_address_tail(r, w, out);
            }
        }
        return TK_OK;
    case TK_TE_F0: {
        unsigned sf = (unsigned)tk_bitr_get(r, w->s);
        if (sf != 0)
            return tk_diag_set(diag, TK_ERR_BAD_PACKET,
                               "v0.029 format 0 with subformat %u (only 0, the jump target "
                               "cache, is defined)",
                               sf);
        out->subformat = TK_TE_F0_JTC;
        out->jtc_index = (uint32_t)tk_bitr_get(r, w->k);
        out->branches = (uint8_t)tk_bitr_get(r, 5);
        unsigned prev = (out->branches >> 4) & 1u;
        if (out->branches) {
            unsigned bm = tk_te_map_bits(out->branches);
            out->branch_map = (uint32_t)tk_bitr_get(r, bm);
            prev = (out->branch_map >> (bm - 1)) & 1u;
        }
        out->irreport = (unsigned)tk_bitr_get(r, 1) != prev;
        out->irdepth = tk_bitr_get(r, w->d);
        return TK_OK;
    }
    }
    return tk_diag_set(diag, TK_ERR_BAD_PACKET, "impossible format %u", out->format);
}

/* ---- v0.026 ------------------------------------------------------------------------------ */

tk_status tk_te_encode_026(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e)
{
    (void)p;
    const tk_te_widths *w = &e->w;
    tk_bitw_put(&e->b, pkt->format, 2);
    switch (pkt->format) {
    case TK_TE_F0: /* full-delta */
    case TK_TE_F1: /* diff-delta */
        tk_te_put(e, "branches", pkt->branches, 5);
        tk_te_put(e, "branch_map", pkt->branch_map, tk_te_map_bits_026(pkt->branches));
        /* branches = 0: no address; it would be the sign extension of the map */
        if (pkt->branches)
            tk_te_put(e, "address", pkt->address, w->aw);
        return TK_OK;
    case TK_TE_F2:
        tk_te_put(e, "address", pkt->address, w->aw);
        return TK_OK;
    case TK_TE_F3:
        if (pkt->subformat == 3) {
            e->why = "v0.026 has no support te_inst (it used a separate te_support message)";
            return TK_ERR_UNSUPPORTED;
        }
        tk_te_put(e, "subformat", pkt->subformat, 2);
        tk_te_put(e, "context", pkt->context, w->c);
        tk_te_put(e, "privilege", pkt->privilege, w->p);
        if (pkt->subformat == TK_TE_SF_CONTEXT)
            return TK_OK;
        tk_te_put(e, "branch", pkt->branch, 1);
        tk_te_put(e, "address", pkt->address, w->aw);
        if (pkt->subformat == TK_TE_SF_TRAP) {
            tk_te_put(e, "ecause", pkt->ecause, w->e);
            tk_te_put(e, "interrupt", pkt->interrupt, 1);
            tk_te_put(e, "tval", pkt->tval, w->a);
        }
        return TK_OK;
    }
    return TK_ERR_INVALID;
}

tk_status tk_te_decode_026(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag)
{
    (void)p;
    out->format = (uint8_t)tk_bitr_get(r, 2);
    switch (out->format) {
    case TK_TE_F0:
    case TK_TE_F1:
        out->branches = (uint8_t)tk_bitr_get(r, 5);
        out->branch_map = (uint32_t)tk_bitr_get(r, tk_te_map_bits_026(out->branches));
        if (out->branches) {
            out->address = tk_bitr_get(r, w->aw);
            out->has_address = true;
        }
        return TK_OK;
    case TK_TE_F2:
        out->address = tk_bitr_get(r, w->aw);
        out->has_address = true;
        return TK_OK;
    default:
        out->subformat = (uint8_t)tk_bitr_get(r, 2);
        if (out->subformat == 3)
            return tk_diag_set(diag, TK_ERR_BAD_PACKET, "v0.026 sync subformat 3 is reserved");
        out->context = tk_bitr_get(r, w->c);
        out->privilege = (uint8_t)tk_bitr_get(r, w->p);
        if (out->subformat == TK_TE_SF_CONTEXT)
            return TK_OK;
        out->branch = (uint8_t)tk_bitr_get(r, 1);
        out->address = tk_bitr_get(r, w->aw);
        out->has_address = true;
        if (out->subformat == TK_TE_SF_TRAP) {
            out->ecause = (uint32_t)tk_bitr_get(r, w->e);
            out->interrupt = (uint8_t)tk_bitr_get(r, 1);
            out->tval = tk_bitr_get(r, w->a);
        }
        return TK_OK;
    }
}
