/* SPDX-License-Identifier: BSD-2-Clause */
/* The walk memo (walk_memo.h): storing a walk's batch entries and handing them over again. */
#include <stdlib.h>
#include <string.h>

#include "walk_memo.h"

void tk_walk_memo_store(tk_te_decoder *d, tk_walk_memo_slot *s, const tk_walk_memo_key *k,
                        uint32_t first, uint64_t insns)
{
    const uint32_t n = d->nblk - first;
    /* not kept (an older walk in the slot stays valid) */
    if (n > TK_WALK_MEMO_MAX || !d->last_valid)
        return;
    d->memo_used = true;
    s->k = *k;
    s->stop_at_last_branch_after = d->stop_at_last_branch;
    s->walk_uninf = d->walk_uninf;
    s->inferred_address = d->inferred_address;
    s->n = n;
    s->used = (k->branches & ~TK_WALK_MEMO_MARKS) - d->branches;
    s->insns = insns;
    s->stop = d->stop_block;
    s->pc = d->pc;
    s->range_first = d->range_first;
    s->range_ninsn = d->range_ninsn;
    s->last_pc = d->last_pc;
    s->last_insn = d->last_insn;
    memcpy(s->e, d->blk + first, n * sizeof(*s->e));
}

/* The instructions of batch entries e[0..n). */
static uint64_t entry_insns(const tk_block_exec *e, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += e[i].block->ninsn;
    return sum;
}

int tk_walk_memo_replay_filling(tk_te_decoder *d, const tk_walk_memo_slot *s)
{
    const tk_block_exec *e = s->e;
    uint32_t left = s->n;
    /* the walk's instructions, less those already counted before a flush */
    uint64_t insns = s->insns;
    if (d->nblk == 0)
        tk_dec_batch_header(d);
    while (TK_BLOCK_BATCH - d->nblk <= left) {
        /* The batch fills up: the walk handed it over at that entry, with the instruction
         * count exact up to it, and started the next one under this packet's header. */
        const uint32_t k = TK_BLOCK_BATCH - d->nblk;
        memcpy(d->blk + d->nblk, e, k * sizeof(*e));
        const uint64_t part = entry_insns(e, k);
        d->stats.instructions += part;
        insns -= part;
        d->nblk = TK_BLOCK_BATCH;
        e += k;
        left -= k;
        const int r = tk_dec_flush_blocks_now(d);
        tk_dec_batch_header(d);
        if (r != TK_OK)
            return r;
    }
    memcpy(d->blk + d->nblk, e, left * sizeof(*e));
    d->nblk += left;
    d->stats.instructions += insns;
    tk_walk_memo_restore(d, s);
    return TK_OK;
}

void tk_walk_chunk_store(tk_te_decoder *d, tk_walk_chunk *c, const tk_bblock *start, uint64_t bits,
                         const tk_block_exec *e, size_t n, const tk_bblock *final)
{
    if (n == 0 || n > TK_WALK_CHUNK_MAX)
        return;
    d->memo_used = true;
    c->start = start;
    c->final = final;
    c->bits = (uint8_t)bits;
    c->n = (uint8_t)n;
    c->insns = 0;
    c->lo = UINT64_MAX;
    c->hi = 0;
    for (size_t i = 0; i < n; i++) {
        const tk_bblock *b = e[i].block;
        c->e[i] = e[i];
        c->insns += b->ninsn;
        if (i > 0) {
            c->lo = b->start < c->lo ? b->start : c->lo;
            c->hi = b->last > c->hi ? b->last : c->hi;
        }
    }
}

void tk_walk_memo_clear(tk_te_decoder *d)
{
    /* Their pages are touched only as slots are used: a decoder that stored nothing (or a new
     * one, whose flags are set next) leaves them untouched. */
    if (!d->memo_used)
        return;
    d->memo_used = false;
    if (d->memo)
        for (size_t i = 0; i < ((size_t)1 << TK_WALK_MEMO_BITS); i++)
            d->memo[i].k.start = NULL;
    if (d->chunks)
        for (size_t i = 0; i < ((size_t)1 << TK_WALK_CHUNK_SLOT_BITS); i++)
            d->chunks[i].start = NULL;
}

tk_status tk_dec_set_walk_memo(tk_te_decoder *d, bool on)
{
    d->memo_off = !on;
    if (!on || !(d->flags & TK_TE_DEC_BLOCK_EVENTS)) {
        free(d->memo);
        free(d->chunks);
        d->memo = NULL;
        d->chunks = NULL;
        d->memo_used = false;
        return TK_OK;
    }
    if (!d->memo)
        d->memo = calloc((size_t)1 << TK_WALK_MEMO_BITS, sizeof(*d->memo));
    if (!d->chunks)
        d->chunks = calloc((size_t)1 << TK_WALK_CHUNK_SLOT_BITS, sizeof(*d->chunks));
    return d->memo && d->chunks ? TK_OK : TK_ERR_NOMEM;
}

void tk_walk_memo_lend(tk_te_decoder *d, tk_walk_memo_loan *l)
{
    if (!l->memo || !(d->flags & TK_TE_DEC_BLOCK_EVENTS)) {
        /* nothing lent yet: the decoder makes its own, which take_back keeps (if it cannot,
         * its walks all run) */
        (void)tk_dec_set_walk_memo(d, true);
        return;
    }
    d->memo_off = false;
    free(d->memo);
    free(d->chunks);
    d->memo = l->memo;
    d->chunks = l->chunks;
    d->memo_used = l->used;
    *l = (tk_walk_memo_loan){0};
}

void tk_walk_memo_take_back(tk_te_decoder *d, tk_walk_memo_loan *l)
{
    if (!d->memo || !d->chunks)
        return;
    tk_walk_memo_loan_free(l);
    *l = (tk_walk_memo_loan){.memo = d->memo, .chunks = d->chunks, .used = d->memo_used};
    d->memo = NULL;
    d->chunks = NULL;
    d->memo_used = false;
}

void tk_walk_memo_loan_free(tk_walk_memo_loan *l)
{
    free(l->memo);
    free(l->chunks);
    *l = (tk_walk_memo_loan){0};
}
