/* SPDX-License-Identifier: BSD-2-Clause */
/* Widths shared by the te_inst codec and CSV modules (spec/VERSIONS.md A.2-A.6). */
#ifndef TK_ETRACE_PACKET_LAYOUT_H
#define TK_ETRACE_PACKET_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

/* The public tk_te_layout is the field-width table used inside the codec. */
typedef tk_te_layout tk_te_widths;

static inline void tk_te_widths_init(tk_te_widths *w, const tk_te_params *p)
{
    w->params = p;
    w->aw = tk_te_addr_bits(p);
    w->a = p->s.iaddress_width;
    w->p = p->s.privilege_width;
    /* the drafts have no time field */
    w->t = p->spec == TK_TE_SPEC_2_0 ? tk_te_time_bits(p) : 0;
    w->c = tk_te_context_bits(p);
    w->e = p->s.ecause_width;
    w->k = p->s.cache_size;
    w->s = p->s.f0s_width;
    w->d = tk_te_irdepth_bits(p);
    w->em = p->encoder_mode_width;
    w->io = p->ioptions_width;
    w->dop = p->doptions_width;
    /* the specialised decoders (packet_fast.h) hold a payload in a 128-bit integer */
#ifdef __SIZEOF_INT128__
    w->fast = p->spec == TK_TE_SPEC_2_0;
#else
    w->fast = false;
#endif
}

/* branch_map length for a branches field value, 0.029 and 2.0 (A.2); 0 means 31 bits. */
static inline unsigned tk_te_map_bits(unsigned branches)
{
    if (branches == 0)
        return 31;
    if (branches == 1)
        return 1;
    if (branches <= 3)
        return 3;
    if (branches <= 7)
        return 7;
    if (branches <= 15)
        return 15;
    return 31;
}

/* 0.026 map lengths (A.2): 1, 9, 17, 25, 31; 0 means 31 bits. */
static inline unsigned tk_te_map_bits_026(unsigned branches)
{
    if (branches == 0)
        return 31;
    if (branches == 1)
        return 1;
    if (branches <= 9)
        return 9;
    if (branches <= 17)
        return 17;
    if (branches <= 25)
        return 25;
    return 31;
}

/* Format 0 subformat implied by the options when f0s_width_p is 0 (payload.adoc "Format 0
 * subformat field"): branch prediction selects the branch count (SF0), otherwise the jump
 * target cache (SF1). -1 if neither extension is enabled. */
static inline int tk_te_f0_inferred_subformat(const tk_te_params *p)
{
    if (p->o.branch_prediction)
        return TK_TE_F0_BRANCH_COUNT;
    if (p->o.jump_target_cache)
        return TK_TE_F0_JTC;
    return -1;
}

/* Whether a format 3 subformat 1 packet carries its address: 2.0 omits it in implicit
 * exception mode when thaddr is 1; 0.029 omits it in implicit exception mode. */
static inline bool tk_te_trap_has_address(const tk_te_params *p, const tk_te_packet *pkt)
{
    if (!p->o.implicit_except)
        return true;
    if (p->spec == TK_TE_SPEC_2_0)
        return !pkt->thaddr;
    return false;
}

#endif
