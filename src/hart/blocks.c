/* SPDX-License-Identifier: BSD-2-Clause */
/* Retirement records -> E-Trace ingress blocks (ingressPort.adoc). With one retirement per
 * cycle every instruction is its own block, as the reference post-iss produces. N-wide
 * retirement with up to T blocks per cycle goes through the encoder's grouper (te_ingress.h),
 * which keeps the encoder's packets those of the single-retired stream. */
#include <stdlib.h>
#include <string.h>

#include "hart_internal.h"

#define MAX_BLOCKS 64
#define BATCH 256 /* blocks gathered before a call in batch mode */

struct tk_hart_blocks {
    tk_hart_blocks_options o;
    tk_hart_blocks_fn fn;
    void *ctx;
    tk_te_grouper *grouper; /* multiple retirement (NULL: one block per instruction) */
    tk_te_block cyc[MAX_BLOCKS];
    tk_te_block out[BATCH + MAX_BLOCKS]; /* batch mode: blocks not handed over yet */
    size_t nout;
    uint8_t itype_map[16]; /* map_itype() of every 4-bit code */
    bool prev_upper;
    uint8_t prev_rd;
    uint64_t n;
    tk_status st;
};

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
    for (uint8_t i = 0; i < 16; i++)
        b->itype_map[i] = map_itype(b, i);
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

/* The single-retirement block of one record. A faulting instruction gives iretire = 0 with
 * iaddr the instruction's address (B.2); ecall/ebreak retire with itype 1; the instruction
 * after which an interrupt is taken carries itype 2, unless it has an itype of its own (a
 * branch whose outcome the decoder needs, a jump): then *split is set and the interrupt goes
 * in a second block that retires nothing (ingressPort.adoc: "the number of instructions
 * retired may be zero"), at the address where the flow resumes. */
static void to_block_general(tk_hart_blocks *b, const tk_hart_retire *r, tk_te_block *k,
                             bool *split)
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

/* to_block() for the common record: retired without trap
 * (sijump aside), its itype mapped by table, in a few stores. */
static inline void to_block(tk_hart_blocks *b, const tk_hart_retire *r, tk_te_block *k, bool *split)
{
    const uint8_t it = r->itype;
    if (r->flags & ~(TK_HART_F_RETIRED | TK_HART_F_UPPER) || !(r->flags & TK_HART_F_RETIRED) ||
        it > 15 || (b->o.sijump && b->prev_upper)) {
        to_block_general(b, r, k, split);
        return;
    }
    *k = (tk_te_block){.iaddr = r->pc,
                       .context = r->hart,
                       .iretire = r->len / 2u,
                       .itype = b->itype_map[it],
                       .ilastsize = r->len == 4,
                       .priv = r->priv};
    b->prev_upper = (r->flags & TK_HART_F_UPPER) != 0;
    b->prev_rd = r->rd;
    *split = false;
}

/* Batch mode: hand the gathered blocks over. */
static tk_status flush_out(tk_hart_blocks *b)
{
    tk_status st = b->nout ? b->fn(b->ctx, b->out, b->nout) : TK_OK;
    b->nout = 0;
    return st;
}

static tk_status emit(tk_hart_blocks *b, const tk_te_block *k)
{
    size_t nb = 0;
    tk_status st;
    if (b->o.batch) {
        /* (the grouper writes at most MAX_BLOCKS blocks: there is room after BATCH) */
        if (!b->grouper)
            b->out[b->nout++] = *k;
        else if ((st = tk_te_grouper_push(b->grouper, k, b->out + b->nout, &nb)) != TK_OK)
            return st;
        b->nout += nb;
        return b->nout >= BATCH ? flush_out(b) : TK_OK;
    }
    if (!b->grouper)
        return b->fn(b->ctx, k, 1);
    st = tk_te_grouper_push(b->grouper, k, b->cyc, &nb);
    if (st == TK_OK && nb)
        st = b->fn(b->ctx, b->cyc, nb);
    return st;
}

/* The block of the interrupt taken after record r, whose own block is k (to_block's split). */
static void interrupt_block(const tk_te_block *k, const tk_hart_retire *r, tk_te_block *t)
{
    *t = *k;
    t->iaddr = r->epc;
    t->iretire = 0;
    t->ilastsize = 0;
    t->itype = TK_ITYPE_INTERRUPT;
    t->cause = (uint32_t)r->cause;
    t->tval = 0;
    t->sijump = 0;
}

/* Batch mode with one instruction per block: blocks made in place, handed over in batches
 * (the per-instruction path's copy and call were most of the cost). */
static tk_status push_batch_single(tk_hart_blocks *b, const tk_hart_retire *recs, size_t n)
{
    const int only = b->o.hart;
    size_t nout = b->nout;
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (only >= 0 && recs[i].hart != (unsigned)only)
            continue;
        if (nout + 2 > BATCH) {
            b->nout = nout;
            tk_status st = flush_out(b);
            if (st != TK_OK)
                return st;
            nout = 0;
        }
        tk_te_block *k = &b->out[nout++];
        bool split;
        to_block(b, &recs[i], k, &split);
        count++;
        if (split)
            interrupt_block(k, &recs[i], &b->out[nout++]);
    }
    b->nout = nout;
    b->n += count;
    return flush_out(b);
}

tk_status tk_hart_blocks_push(void *ctx, const tk_hart_retire *recs, size_t n)
{
    tk_hart_blocks *b = ctx;
    if (b->o.batch && !b->grouper && b->st == TK_OK)
        return b->st = push_batch_single(b, recs, n);
    for (size_t i = 0; i < n && b->st == TK_OK; i++) {
        tk_te_block k;
        bool split;
        if (b->o.hart >= 0 && recs[i].hart != (unsigned)b->o.hart)
            continue;
        to_block(b, &recs[i], &k, &split);
        b->n++;
        b->st = emit(b, &k);
        if (split && b->st == TK_OK) {
            tk_te_block t;
            interrupt_block(&k, &recs[i], &t);
            b->st = emit(b, &t);
        }
    }
    if (b->o.batch && b->st == TK_OK)
        b->st = flush_out(b);
    return b->st;
}

tk_status tk_hart_blocks_finish(tk_hart_blocks *b)
{
    size_t nb = 0;
    if (b->st == TK_OK && b->grouper) {
        b->st = tk_te_grouper_finish(b->grouper, b->o.batch ? b->out : b->cyc, &nb);
        if (b->st == TK_OK && nb)
            b->st = b->fn(b->ctx, b->o.batch ? b->out : b->cyc, nb);
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
