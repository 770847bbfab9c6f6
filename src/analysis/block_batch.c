/* SPDX-License-Identifier: BSD-2-Clause */
/* Ranges to block batches and back (blocks.h). */
#include <stdlib.h>

#include "tracekit/blocks.h"

struct tk_block_batcher {
    tk_image *img;
    tk_event_fn fn;
    void *ctx;
    tk_event batch; /* kind TK_EV_BLOCKS; trace_id, priv, context, offsets of the first entry */
    tk_block_exec e[TK_BLOCK_BATCH];
};

void tk_block_exec_range(const tk_event *batch, const tk_block_exec *e, tk_event *out)
{
    *out = *batch;
    out->kind = TK_EV_RANGE;
    out->blocks = NULL;
    out->nblocks = 0;
    out->first = e->block->start;
    out->last = e->block->last;
    out->ninsn = e->block->ninsn;
    out->end = e->end;
    out->taken = e->taken;
    out->indirect = e->indirect;
    out->next = e->next;
}

tk_status tk_blocks_as_ranges(tk_event_fn fn, void *ctx, const tk_event *ev)
{
    if (ev->kind != TK_EV_BLOCKS)
        return fn(ctx, ev);
    for (uint32_t i = 0; i < ev->nblocks; i++) {
        tk_event r;
        tk_block_exec_range(ev, &ev->blocks[i], &r);
        tk_status st = fn(ctx, &r);
        if (st != TK_OK)
            return st;
    }
    return TK_OK;
}

tk_status tk_block_batcher_new(tk_image *img, tk_event_fn fn, void *ctx, tk_block_batcher **out)
{
    if (!img || !fn || !out)
        return TK_ERR_INVALID;
    tk_block_batcher *b = calloc(1, sizeof(*b));
    if (!b)
        return TK_ERR_NOMEM;
    b->img = img;
    b->fn = fn;
    b->ctx = ctx;
    b->batch.kind = TK_EV_BLOCKS;
    b->batch.blocks = b->e;
    *out = b;
    return TK_OK;
}

void tk_block_batcher_free(tk_block_batcher *b)
{
    free(b);
}

tk_status tk_block_batcher_flush(tk_block_batcher *b)
{
    if (b->batch.nblocks == 0)
        return TK_OK;
    tk_status st = b->fn(b->ctx, &b->batch);
    b->batch.nblocks = 0;
    return st;
}

/* The whole block the range covers, or NULL. A range that begins at a block start covers
 * the whole block exactly when it ends at the block's last instruction: blocks are
 * straight-line, so the instruction count then matches too (checked anyway, since a range
 * produced from another image would not). */
static const tk_bblock *whole_block(tk_block_batcher *b, const tk_event *ev)
{
    const tk_bblock *blk;
    if (tk_image_block(b->img, ev->first, &blk) != TK_OK)
        return NULL;
    if (blk->last != ev->last || blk->ninsn != ev->ninsn)
        return NULL;
    return blk;
}

tk_status tk_block_batcher_event(void *vb, const tk_event *ev)
{
    tk_block_batcher *b = vb;
    const tk_bblock *blk = ev->kind == TK_EV_RANGE ? whole_block(b, ev) : NULL;
    if (!blk) {
        tk_status st = tk_block_batcher_flush(b);
        return st != TK_OK ? st : b->fn(b->ctx, ev);
    }
    tk_event *bt = &b->batch;
    if (bt->nblocks &&
        (bt->trace_id != ev->trace_id || bt->priv != ev->priv || bt->context != ev->context)) {
        tk_status st = tk_block_batcher_flush(b);
        if (st != TK_OK)
            return st;
    }
    if (bt->nblocks == 0) {
        bt->trace_id = ev->trace_id;
        bt->priv = ev->priv;
        bt->context = ev->context;
        bt->byte_offset = ev->byte_offset;
        bt->packet_index = ev->packet_index;
        bt->time = ev->time;
    }
    b->e[bt->nblocks++] = (tk_block_exec){.block = blk,
                                          .next = ev->next,
                                          .end = ev->end,
                                          .taken = ev->taken,
                                          .indirect = ev->indirect};
    return bt->nblocks == TK_BLOCK_BATCH ? tk_block_batcher_flush(b) : TK_OK;
}
