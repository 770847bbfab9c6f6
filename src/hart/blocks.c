/* SPDX-License-Identifier: BSD-2-Clause */
/* Retirement records -> E-Trace ingress blocks (ingressPort.adoc). With one retirement per
 * cycle every instruction is its own block, as the reference post-iss produces. With N-wide
 * retirement, consecutive instructions share a block until one with a non-zero itype ends
 * it; a cycle ends after N instructions, after T such blocks, or at a trap. */
#include <stdlib.h>
#include <string.h>

#include "hart_internal.h"

#define MAX_BLOCKS 64

struct tk_hart_blocks {
    tk_hart_blocks_options o;
    tk_hart_blocks_fn fn;
    void *ctx;
    tk_te_block cyc[MAX_BLOCKS];
    size_t nb;
    unsigned ninsn, nspecial;
    bool open;
    tk_te_block cur;
    bool prev_upper;
    uint8_t prev_rd;
    uint64_t cycle;
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
        o->taken < 1 || o->taken > MAX_BLOCKS / 2)
        return TK_ERR_INVALID;
    b = calloc(1, sizeof(*b));
    if (!b)
        return TK_ERR_NOMEM;
    b->o = *o;
    b->fn = fn;
    b->ctx = ctx;
    *out = b;
    return TK_OK;
}

void tk_hart_blocks_free(tk_hart_blocks *b)
{
    free(b);
}

static bool uninferable(uint8_t it)
{
    return it == TK_ITYPE_UNINF_CALL || it == TK_ITYPE_UNINF_JUMP || it == TK_ITYPE_SWAP ||
           it == TK_ITYPE_RETURN || it == TK_ITYPE_UNINF_OTHER;
}

/* 4-bit jump codes -> 3-bit ones: uninferable jumps become 6, inferable ones 0 (B.1). */
static uint8_t map_itype(const tk_hart_blocks *b, uint8_t it)
{
    if (b->o.itype_width == 4 || it <= TK_ITYPE_TAKEN)
        return it;
    return uninferable(it) ? TK_ITYPE_UNINF_JUMP3 : TK_ITYPE_NONE;
}

static void end_cycle(tk_hart_blocks *b)
{
    if (b->open) {
        b->cyc[b->nb++] = b->cur;
        b->open = false;
    }
    if (b->nb && b->st == TK_OK)
        b->st = b->fn(b->ctx, b->cyc, b->nb);
    if (b->nb)
        b->cycle++;
    b->nb = 0;
    b->ninsn = 0;
    b->nspecial = 0;
}

static void start_block(tk_hart_blocks *b, const tk_hart_retire *r)
{
    memset(&b->cur, 0, sizeof(b->cur));
    b->cur.iaddr = r->pc;
    b->cur.context = r->hart;
    b->cur.priv = r->priv;
    b->cur.time = b->cycle;
    b->open = true;
}

static void one(tk_hart_blocks *b, const tk_hart_retire *r)
{
    uint8_t it = r->itype, sij = 0;
    bool retired = r->flags & TK_HART_F_RETIRED;
    if (b->o.sijump && uninferable(it) && b->prev_upper && b->prev_rd != 0 && b->prev_rd == r->rs1)
        sij = 1; /* spec "sijump": the preceding lui/auipc makes the target inferable */
    b->prev_upper = retired && (r->flags & TK_HART_F_UPPER);
    b->prev_rd = r->rd;
    it = map_itype(b, it);
    if (r->flags & TK_HART_F_EXCEPTION)
        it = TK_ITYPE_EXCEPTION;
    else if (r->flags & TK_HART_F_INTERRUPT)
        it = TK_ITYPE_INTERRUPT;

    if (!retired) {
        /* A faulting instruction (or an interrupt with nothing retired): a block with
         * iretire = 0 whose iaddr is the instruction's address (B.2). */
        if (b->open) {
            b->cyc[b->nb++] = b->cur;
            b->open = false;
        }
        start_block(b, r);
        b->cur.itype = it;
        b->cur.cause = (uint32_t)r->cause;
        b->cur.tval = it == TK_ITYPE_EXCEPTION ? r->tval : 0;
        b->cur.ilastsize = r->len == 4 ? 1 : 0;
        b->cyc[b->nb++] = b->cur;
        b->open = false;
        end_cycle(b);
        return;
    }
    if (!b->open)
        start_block(b, r);
    b->cur.iretire += r->len / 2u;
    b->cur.ilastsize = r->len == 4 ? 1 : 0;
    b->ninsn++;
    if (it != TK_ITYPE_NONE) {
        b->cur.itype = it;
        b->cur.sijump = sij;
        if (it == TK_ITYPE_EXCEPTION || it == TK_ITYPE_INTERRUPT) {
            b->cur.cause = (uint32_t)r->cause;
            b->cur.tval = it == TK_ITYPE_EXCEPTION ? r->tval : 0;
        }
        b->cyc[b->nb++] = b->cur;
        b->open = false;
        b->nspecial++;
    }
    if (b->ninsn >= b->o.retires || b->nspecial >= b->o.taken || it == TK_ITYPE_EXCEPTION ||
        it == TK_ITYPE_INTERRUPT || it == TK_ITYPE_TRAP_RETURN || b->nb + 1 >= MAX_BLOCKS)
        end_cycle(b);
}

tk_status tk_hart_blocks_push(void *ctx, const tk_hart_retire *recs, size_t n)
{
    tk_hart_blocks *b = ctx;
    for (size_t i = 0; i < n && b->st == TK_OK; i++)
        if (b->o.hart < 0 || recs[i].hart == (unsigned)b->o.hart)
            one(b, &recs[i]);
    return b->st;
}

tk_status tk_hart_blocks_finish(tk_hart_blocks *b)
{
    end_cycle(b);
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
