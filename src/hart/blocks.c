/* SPDX-License-Identifier: BSD-2-Clause */
/* Retirement records -> E-Trace ingress blocks (ingressPort.adoc). With one retirement per
 * cycle every instruction is its own block, as the reference post-iss produces. N-wide
 * retirement with up to T blocks per cycle goes through the encoder's grouper (te_ingress.h),
 * which keeps the encoder's packets those of the single-retired stream. */
#include <stdlib.h>
#include <string.h>

#include "hart_internal.h"

#define MAX_BLOCKS 64

struct tk_hart_blocks {
    tk_hart_blocks_options o;
    tk_hart_blocks_fn fn;
    void *ctx;
    tk_te_grouper *grouper; /* multiple retirement (NULL: one block per instruction) */
    tk_te_block cyc[MAX_BLOCKS];
    bool prev_upper;
    uint8_t prev_rd;
    uint64_t n;
    tk_status st;
};

void tk_hart_blocks_options_init(tk_hart_blocks_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->itype_width = 4;
    o->retires = 1;
    o->taken = 1;
    o->hart = -1;
}

tk_status tk_hart_blocks_new(const tk_hart_blocks_options *o, tk_hart_blocks_fn fn, void *ctx,
                             tk_hart_blocks **out)
{
    tk_hart_blocks *b;
    *out = NULL;
    if (!o || !fn || (o->itype_width != 3 && o->itype_width != 4) || o->retires < 1 ||
        o->taken < 1 || o->taken > MAX_BLOCKS)
        return TK_ERR_INVALID;
    b = calloc(1, sizeof(*b));
    if (!b)
        return TK_ERR_NOMEM;
    b->o = *o;
    b->fn = fn;
    b->ctx = ctx;
    if (o->retires > 1 || o->taken > 1) {
        tk_status st = tk_te_grouper_new(o->retires, o->taken, &b->grouper);
        if (st != TK_OK) {
            free(b);
            return st;
        }
    }
    *out = b;
    return TK_OK;
}

void tk_hart_blocks_free(tk_hart_blocks *b)
{
    if (!b)
        return;
    tk_te_grouper_free(b->grouper);
    free(b);
}

static bool uninferable(uint8_t it)
{
    return it == TK_ITYPE_UNINF_CALL || it == TK_ITYPE_UNINF_JUMP || it == TK_ITYPE_SWAP ||
           it == TK_ITYPE_RETURN || it == TK_ITYPE_UNINF_OTHER || it == TK_ITYPE_TRAP_RETURN;
}

/* 4-bit jump codes -> 3-bit ones: uninferable jumps become 6, inferable ones 0 (B.1). */
static uint8_t map_itype(const tk_hart_blocks *b, uint8_t it)
{
    if (it == TK_ITYPE_TRAP_RETURN && !b->o.xret_itype3)
        it = TK_ITYPE_UNINF_OTHER;
    if (b->o.itype_width == 4 || it <= TK_ITYPE_TAKEN)
        return it;
    return uninferable(it) ? TK_ITYPE_UNINF_JUMP3 : TK_ITYPE_NONE;
}

/* The single-retirement block of one record. A faulting instruction gives iretire = 0 with
 * iaddr the instruction's address (B.2); ecall/ebreak retire with itype 1; the instruction
 * after which an interrupt is taken carries itype 2, unless it has an itype of its own (a
 * branch whose outcome the decoder needs, a jump): then *split is set and the interrupt goes
 * in a second block that retires nothing (ingressPort.adoc: "the number of instructions
 * retired may be zero"), at the address where the flow resumes. */
static void to_block(tk_hart_blocks *b, const tk_hart_retire *r, tk_te_block *k, bool *split)
{
    uint8_t it = r->itype;
    bool retired = r->flags & TK_HART_F_RETIRED;
    memset(k, 0, sizeof(*k));
    if (b->o.sijump && uninferable(it) && b->prev_upper && b->prev_rd != 0 && b->prev_rd == r->rs1)
        k->sijump = 1; /* spec "sijump": the preceding lui/auipc makes the target inferable */
    b->prev_upper = retired && (r->flags & TK_HART_F_UPPER);
    b->prev_rd = r->rd;
    it = map_itype(b, it);
    *split = false;
    if (r->flags & TK_HART_F_EXCEPTION)
        it = TK_ITYPE_EXCEPTION;
    else if ((r->flags & TK_HART_F_INTERRUPT) && it != TK_ITYPE_NONE && retired)
        *split = true;
    else if (r->flags & TK_HART_F_INTERRUPT)
        it = TK_ITYPE_INTERRUPT;
    if (it == TK_ITYPE_EXCEPTION || it == TK_ITYPE_INTERRUPT) {
        k->cause = (uint32_t)r->cause;
        k->tval = it == TK_ITYPE_EXCEPTION ? r->tval : 0;
        k->sijump = 0;
    }
    k->iaddr = r->pc;
    k->itype = it;
    k->iretire = retired ? r->len / 2u : 0;
    k->ilastsize = r->len == 4 ? 1 : 0;
    k->priv = r->priv;
    k->context = r->hart;
}

static tk_status emit(tk_hart_blocks *b, const tk_te_block *k)
{
    size_t nb = 0;
    tk_status st;
    if (!b->grouper)
        return b->fn(b->ctx, k, 1);
    st = tk_te_grouper_push(b->grouper, k, b->cyc, &nb);
    if (st == TK_OK && nb)
        st = b->fn(b->ctx, b->cyc, nb);
    return st;
}

tk_status tk_hart_blocks_push(void *ctx, const tk_hart_retire *recs, size_t n)
{
    tk_hart_blocks *b = ctx;
    for (size_t i = 0; i < n && b->st == TK_OK; i++) {
        tk_te_block k;
        bool split;
        if (b->o.hart >= 0 && recs[i].hart != (unsigned)b->o.hart)
            continue;
        to_block(b, &recs[i], &k, &split);
        b->n++;
        b->st = emit(b, &k);
        if (split && b->st == TK_OK) {
            tk_te_block t = k;
            t.iaddr = recs[i].epc;
            t.iretire = 0;
            t.ilastsize = 0;
            t.itype = TK_ITYPE_INTERRUPT;
            t.cause = (uint32_t)recs[i].cause;
            t.tval = 0;
            t.sijump = 0;
            b->st = emit(b, &t);
        }
    }
    return b->st;
}

tk_status tk_hart_blocks_finish(tk_hart_blocks *b)
{
    size_t nb = 0;
    if (b->st == TK_OK && b->grouper) {
        b->st = tk_te_grouper_finish(b->grouper, b->cyc, &nb);
        if (b->st == TK_OK && nb)
            b->st = b->fn(b->ctx, b->cyc, nb);
    }
    return b->st;
}

void tk_hart_retire_to_spike(const tk_hart_retire *r, tk_spike_row *row)
{
    memset(row, 0, sizeof(*row));
    row->address = r->pc;
    row->insn = r->insn;
    row->privilege = r->priv;
    row->exception = (r->flags & TK_HART_F_EXCEPTION) ? 1 : 0;
    row->interrupt = (r->flags & TK_HART_F_INTERRUPT) ? 1 : 0;
    row->ecause = r->cause;
    row->tval = r->tval;
}
