/* SPDX-License-Identifier: BSD-2-Clause */
/* Random parameter sets and packets for the codec's round-trip tests. The generator fills
 * exactly the fields each layout carries (payload.adoc tables), so a decoded packet must equal
 * the generated one field for field. */
#ifndef TK_TEST_CODEC_GEN_H
#define TK_TEST_CODEC_GEN_H

#include <stdint.h>
#include <string.h>

#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static inline uint64_t gen_next(uint64_t *s)
{
    /* splitmix64: deterministic, seedable */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t gen_below(uint64_t *s, uint64_t n)
{
    return n ? gen_next(s) % n : 0;
}

/* A value of n bits, biased towards sign-compressible values (small, or all-ones above). */
static inline uint64_t gen_bits(uint64_t *s, unsigned n)
{
    if (n == 0)
        return 0;
    uint64_t mask = n >= 64 ? ~0ull : (1ull << n) - 1;
    uint64_t v = gen_next(s);
    switch (gen_below(s, 4)) {
    case 0:
        v &= 0xff;
        break;
    case 1:
        v |= ~0ull << (gen_below(s, 64));
        break;
    case 2:
        v = gen_below(s, 2) ? ~0ull : 0;
        break;
    default:
        break;
    }
    return v & mask;
}

static inline void gen_params(uint64_t *s, tk_te_params *p, tk_te_spec spec)
{
    tk_te_params_init(p);
    p->spec = spec;
    tk_te_static *st = &p->s;
    st->iaddress_width = 2 + (uint32_t)gen_below(s, 63);
    st->iaddress_lsb = (uint32_t)gen_below(s, st->iaddress_width < 3 ? st->iaddress_width : 3);
    st->nocontext = (uint32_t)gen_below(s, 2);
    st->context_width = (uint32_t)gen_below(s, 65);
    st->notime = (uint32_t)gen_below(s, 2);
    st->time_width = (uint32_t)gen_below(s, 65);
    st->privilege_width = (uint32_t)gen_below(s, 9);
    st->ecause_width = (uint32_t)gen_below(s, 33);
    st->cache_size = (uint32_t)gen_below(s, 32);
    st->f0s_width = (uint32_t)gen_below(s, 4);
    st->return_stack_size = (uint32_t)gen_below(s, 32);
    st->call_counter_size = (uint32_t)gen_below(s, 32);
    st->itype_width = 3 + (uint32_t)gen_below(s, 2);
    p->encoder_mode_width = (uint32_t)gen_below(s, 4);
    p->ioptions_width = (uint32_t)gen_below(s, 9);
    p->doptions_width = (uint32_t)gen_below(s, 9);
    p->o.full_address = gen_below(s, 2);
    p->o.implicit_except = gen_below(s, 2);
    p->o.branch_prediction = gen_below(s, 2);
    p->o.jump_target_cache = gen_below(s, 2);
    if (st->f0s_width == 0 && p->o.branch_prediction && p->o.jump_target_cache)
        st->f0s_width = 1;
    while (tk_te_irdepth_bits(p) > 64)
        st->call_counter_size /= 2;
}

static inline void gen_tail(uint64_t *s, const tk_te_params *p, tk_te_packet *k)
{
    k->has_address = true;
    k->address = gen_bits(s, tk_te_addr_bits(p));
    k->notify = gen_below(s, 2);
    k->updiscon = gen_below(s, 2);
    k->irreport = gen_below(s, 2);
    k->irdepth = gen_bits(s, tk_te_irdepth_bits(p));
}

static inline uint32_t gen_map(uint64_t *s, unsigned branches, unsigned mapbits)
{
    (void)branches;
    return (uint32_t)gen_bits(s, mapbits);
}

/* A random 2.0 packet valid for p. */
static inline void gen_packet_20(uint64_t *s, const tk_te_params *p, tk_te_packet *k)
{
    memset(k, 0, sizeof(*k));
    const tk_te_static *st = &p->s;
    unsigned aw = tk_te_addr_bits(p);
    int f0 = -1;
    if (st->f0s_width)
        f0 = (int)gen_below(s, 2);
    else if (p->o.branch_prediction)
        f0 = TK_TE_F0_BRANCH_COUNT;
    else if (p->o.jump_target_cache)
        f0 = TK_TE_F0_JTC;
    unsigned kind;
    do
        kind = (unsigned)gen_below(s, 8);
    while (kind == 7 && f0 < 0);
    switch (kind) {
    case 0: /* F3 SF0..SF3 */
    case 1:
    case 2:
    case 3:
        k->format = TK_TE_F3;
        k->subformat = (uint8_t)kind;
        if (kind == TK_TE_SF_SUPPORT) {
            k->ienable = (uint8_t)gen_below(s, 2);
            k->encoder_mode = (uint8_t)gen_bits(s, p->encoder_mode_width);
            k->qual_status = (uint8_t)gen_below(s, 4);
            k->ioptions = (uint32_t)gen_bits(s, p->ioptions_width);
            k->denable = (uint8_t)gen_below(s, 2);
            k->dloss = (uint8_t)gen_below(s, 2);
            k->doptions = (uint32_t)gen_bits(s, p->doptions_width);
            break;
        }
        if (kind != TK_TE_SF_CONTEXT)
            k->branch = (uint8_t)gen_below(s, 2);
        k->privilege = (uint8_t)gen_bits(s, st->privilege_width);
        k->time = gen_bits(s, tk_te_time_bits(p));
        k->context = gen_bits(s, tk_te_context_bits(p));
        if (kind == TK_TE_SF_START) {
            k->has_address = true;
            k->address = gen_bits(s, aw);
        } else if (kind == TK_TE_SF_TRAP) {
            k->ecause = (uint32_t)gen_bits(s, st->ecause_width);
            k->interrupt = (uint8_t)gen_below(s, 2);
            k->thaddr = (uint8_t)gen_below(s, 2);
            if (!(p->o.implicit_except && k->thaddr)) {
                k->has_address = true;
                k->address = gen_bits(s, aw);
            }
            if (!k->interrupt)
                k->tval = gen_bits(s, st->iaddress_width);
        }
        break;
    case 4:
        k->format = TK_TE_F2;
        gen_tail(s, p, k);
        break;
    case 5:
    case 6:
        k->format = TK_TE_F1;
        k->branches = (uint8_t)gen_below(s, 32);
        {
            unsigned bm = k->branches ? (k->branches == 1    ? 1
                                         : k->branches <= 3  ? 3
                                         : k->branches <= 7  ? 7
                                         : k->branches <= 15 ? 15
                                                             : 31)
                                      : 31;
            k->branch_map = gen_map(s, k->branches, bm);
        }
        if (k->branches)
            gen_tail(s, p, k);
        break;
    default:
        k->format = TK_TE_F0;
        k->subformat = (uint8_t)f0;
        if (f0 == TK_TE_F0_BRANCH_COUNT) {
            k->branch_count = gen_bits(s, 32);
            k->branch_fmt = (uint8_t)(gen_below(s, 3) ? 2 + gen_below(s, 2) : 0);
            if (k->branch_fmt)
                gen_tail(s, p, k);
        } else {
            k->jtc_index = (uint32_t)gen_bits(s, st->cache_size);
            k->branches = (uint8_t)gen_below(s, 32);
            if (k->branches) {
                unsigned bm = k->branches == 1    ? 1
                              : k->branches <= 3  ? 3
                              : k->branches <= 7  ? 7
                              : k->branches <= 15 ? 15
                                                  : 31;
                k->branch_map = gen_map(s, k->branches, bm);
            }
            k->irreport = gen_below(s, 2);
            k->irdepth = gen_bits(s, tk_te_irdepth_bits(p));
        }
        break;
    }
}

static inline unsigned gen_map_len(unsigned branches)
{
    return branches == 0    ? 31
           : branches == 1  ? 1
           : branches <= 3  ? 3
           : branches <= 7  ? 7
           : branches <= 15 ? 15
                            : 31;
}

/* A random v0.029 packet valid for p (VERSIONS.md A.3-A.6). */
static inline void gen_packet_029(uint64_t *s, const tk_te_params *p, tk_te_packet *k)
{
    memset(k, 0, sizeof(*k));
    const tk_te_static *st = &p->s;
    unsigned aw = tk_te_addr_bits(p);
    unsigned kind = (unsigned)gen_below(s, 10);
    if (kind <= 3) {
        k->format = TK_TE_F3;
        k->subformat = (uint8_t)kind;
        if (kind == TK_TE_SF_SUPPORT) {
            k->ienable = (uint8_t)gen_below(s, 2);
            k->encoder_mode = (uint8_t)gen_bits(s, p->encoder_mode_width);
            k->qual_status = (uint8_t)gen_below(s, 4);
            k->ioptions = (uint32_t)gen_bits(s, p->ioptions_width);
            return;
        }
        k->context = gen_bits(s, tk_te_context_bits(p));
        k->privilege = (uint8_t)gen_bits(s, st->privilege_width);
        if (kind == TK_TE_SF_CONTEXT)
            return;
        k->branch = (uint8_t)gen_below(s, 2);
        if (kind == TK_TE_SF_START || !p->o.implicit_except) {
            k->has_address = true;
            k->address = gen_bits(s, aw);
        }
        if (kind == TK_TE_SF_TRAP) {
            k->ecause = (uint32_t)gen_bits(s, st->ecause_width);
            k->interrupt = (uint8_t)gen_below(s, 2);
            k->tval = gen_bits(s, st->iaddress_width); /* tvalepc: always present */
        }
    } else if (kind == 4) {
        k->format = TK_TE_F2;
        gen_tail(s, p, k);
    } else if (kind <= 7) {
        k->format = TK_TE_F1;
        k->branches = (uint8_t)gen_below(s, 32);
        if (k->branches) {
            k->branch_map = (uint32_t)gen_bits(s, gen_map_len(k->branches));
            gen_tail(s, p, k);
        } else {
            unsigned v = (unsigned)gen_below(s, 3); /* map, count, count + address */
            if (v == 0) {
                k->branch_map = (uint32_t)gen_bits(s, 31);
            } else {
                k->branch_fmt = (uint8_t)v;
                k->branch_count = gen_bits(s, 31);
                if (v == 2) {
                    k->bpsuccess = (uint8_t)gen_below(s, 2);
                    gen_tail(s, p, k);
                }
            }
        }
    } else {
        k->format = TK_TE_F0;
        k->subformat = TK_TE_F0_JTC;
        k->jtc_index = (uint32_t)gen_bits(s, st->cache_size);
        k->branches = (uint8_t)gen_below(s, 32);
        if (k->branches)
            k->branch_map = (uint32_t)gen_bits(s, gen_map_len(k->branches));
        k->irreport = gen_below(s, 2);
        k->irdepth = gen_bits(s, tk_te_irdepth_bits(p));
    }
}

static inline unsigned gen_map_len_026(unsigned branches)
{
    return branches == 0    ? 31
           : branches == 1  ? 1
           : branches <= 9  ? 9
           : branches <= 17 ? 17
           : branches <= 25 ? 25
                            : 31;
}

/* A random v0.026 packet valid for p (VERSIONS.md A.8). */
static inline void gen_packet_026(uint64_t *s, const tk_te_params *p, tk_te_packet *k)
{
    memset(k, 0, sizeof(*k));
    unsigned aw = tk_te_addr_bits(p);
    unsigned kind = (unsigned)gen_below(s, 6);
    if (kind <= 1) {
        k->format = (uint8_t)kind;
        k->branches = (uint8_t)gen_below(s, 32);
        k->branch_map = (uint32_t)gen_bits(s, gen_map_len_026(k->branches));
        if (k->branches) {
            k->has_address = true;
            k->address = gen_bits(s, aw);
        }
    } else if (kind == 2) {
        k->format = TK_TE_F2;
        k->has_address = true;
        k->address = gen_bits(s, aw);
    } else {
        k->format = TK_TE_F3;
        k->subformat = (uint8_t)(kind - 3);
        k->context = gen_bits(s, tk_te_context_bits(p));
        k->privilege = (uint8_t)gen_bits(s, p->s.privilege_width);
        if (k->subformat == TK_TE_SF_CONTEXT)
            return;
        k->branch = (uint8_t)gen_below(s, 2);
        k->has_address = true;
        k->address = gen_bits(s, aw);
        if (k->subformat == TK_TE_SF_TRAP) {
            k->ecause = (uint32_t)gen_bits(s, p->s.ecause_width);
            k->interrupt = (uint8_t)gen_below(s, 2);
            k->tval = gen_bits(s, p->s.iaddress_width);
        }
    }
}

#endif
