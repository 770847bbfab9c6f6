/* SPDX-License-Identifier: BSD-2-Clause */
/* The drafts' packet layouts as seen by the encoder and decoder algorithms, which speak 2.0
 * (VERSIONS.md A.5-A.8; the bit layouts themselves are in packet_draft.c). */
#include <string.h>

#include "etrace/modes.h"
#include "tracekit/te_packet.h"

tk_status tk_te_packet_to_spec(const tk_te_params *p, const tk_te_packet *logical,
                               tk_te_packet *out)
{
    *out = *logical;
    if (p->spec == TK_TE_SPEC_2_0)
        return TK_OK;
    const tk_te_packet *in = logical;
    if (in->format == TK_TE_F3 && in->subformat == TK_TE_SF_TRAP && !in->thaddr)
        return TK_ERR_UNSUPPORTED; /* no EPC-only trap packet before 2.0 */
    out->time = 0;
    if (p->spec == TK_TE_SPEC_0_29) {
        if (in->format == TK_TE_F0 && in->subformat == TK_TE_F0_BRANCH_COUNT) {
            /* A.5: the count moves to format 1 with branches = 0 */
            out->format = TK_TE_F1;
            out->subformat = 0;
            out->branches = 0;
            out->branch_map = 0;
            if (in->branch_fmt == 0) {
                out->branch_fmt = 1;
                out->has_address = false;
            } else {
                out->branch_fmt = 2;
                out->bpsuccess = in->branch_fmt == 2;
            }
        }
        if (in->format == TK_TE_F3 && in->subformat == TK_TE_SF_SUPPORT) {
            out->denable = 0;
            out->dloss = 0;
            out->doptions = 0;
        }
        return TK_OK;
    }
    /* 0.026 */
    out->notify = out->updiscon = out->irreport = false;
    out->irdepth = 0;
    switch (in->format) {
    case TK_TE_F0:
        return TK_ERR_UNSUPPORTED; /* no branch count, no jump target cache */
    case TK_TE_F1:
        if (in->has_address && in->branches) {
            /* full-delta (format 0) or diff-delta (format 1) */
            out->format = p->o.full_address ? TK_TE_F0 : TK_TE_F1;
        } else {
            out->branches = 0; /* 31-bit map, no address */
        }
        return TK_OK;
    case TK_TE_F3:
        return in->subformat == TK_TE_SF_SUPPORT ? TK_ERR_UNSUPPORTED : TK_OK;
    default:
        return TK_OK;
    }
}

tk_status tk_te_packet_from_spec(const tk_te_params *p, const tk_te_packet *in,
                                 tk_te_packet *logical, bool *full_address)
{
    *logical = *in;
    *full_address = p->o.full_address;
    switch (p->spec) {
    case TK_TE_SPEC_2_0:
        return TK_OK;
    case TK_TE_SPEC_0_29:
        if (in->format == TK_TE_F1 && in->branches == 0 &&
            (in->branch_fmt == 1 || in->branch_fmt == 2)) {
            logical->format = TK_TE_F0;
            logical->subformat = TK_TE_F0_BRANCH_COUNT;
            logical->branch_fmt = in->branch_fmt == 1 ? 0 : in->bpsuccess ? 2 : 3;
            logical->has_address = in->branch_fmt == 2;
        } else if (in->format == TK_TE_F1) {
            logical->branch_fmt = 0;
        }
        if (in->format == TK_TE_F3 && in->subformat == TK_TE_SF_TRAP)
            logical->thaddr = 1;
        return TK_OK;
    default:
        break;
    }
    /* 0.026 */
    if (in->format == TK_TE_F0 || in->format == TK_TE_F1) {
        logical->format = TK_TE_F1;
        if (in->branches)
            *full_address = in->format == TK_TE_F0;
    }
    if (in->format == TK_TE_F3 && in->subformat == TK_TE_SF_TRAP)
        logical->thaddr = 1;
    return TK_OK;
}
