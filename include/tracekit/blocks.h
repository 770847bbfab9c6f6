/* SPDX-License-Identifier: BSD-2-Clause */
/* Block-granularity event delivery (TK_EV_BLOCKS, event.h): adapters between producers that
 * emit TK_EV_RANGE events and sinks that count whole basic blocks. */
#ifndef TRACEKIT_BLOCKS_H
#define TRACEKIT_BLOCKS_H

#include <stddef.h>

#include "event.h"
#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entries per TK_EV_BLOCKS batch that producers aim for: enough to make the callback's cost
 * per block small, few enough to stay in L1 (24 bytes each). */
#define TK_BLOCK_BATCH 256

/* The TK_EV_RANGE event one batch entry stands for (kind, first, last, ninsn, end, taken,
 * indirect, next; the other fields copied from batch). */
void tk_block_exec_range(const tk_event *batch, const tk_block_exec *e, tk_event *out);

/* Hand every entry of a TK_EV_BLOCKS event to fn as a TK_EV_RANGE event, in order; any
 * other event is passed on unchanged. Lets a sink that only knows ranges sit behind a
 * producer that emits blocks. */
tk_status tk_blocks_as_ranges(tk_event_fn fn, void *ctx, const tk_event *ev);

/* Adapter from ranges to blocks, for producers that do not emit TK_EV_BLOCKS themselves: a
 * tk_event_fn (tk_block_batcher_event, ctx = the batcher) that collects every TK_EV_RANGE
 * covering exactly one whole block of img (first = block start, last = block last) into a
 * batch, and passes the batch to fn as one TK_EV_BLOCKS event. Everything else, including a
 * range that starts or ends inside a block, flushes the batch and then goes to fn as it
 * came, so fn sees the flow in order. The image's block cache is used (not thread-safe for
 * one image: tk_image_block). fn's non-TK_OK status is returned. */
typedef struct tk_block_batcher tk_block_batcher;
tk_status tk_block_batcher_new(tk_image *img, tk_event_fn fn, void *ctx, tk_block_batcher **out);
tk_status tk_block_batcher_event(void *batcher, const tk_event *ev);
/* Deliver the batch collected so far (call at the end of the flow). */
tk_status tk_block_batcher_flush(tk_block_batcher *b);
void tk_block_batcher_free(tk_block_batcher *b);

#ifdef __cplusplus
}
#endif
#endif
