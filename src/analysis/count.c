/* SPDX-License-Identifier: BSD-2-Clause */
/* Counting sink: one switch per event (per batch of blocks), no lookup, no allocation. */
#include "tracekit/count.h"

#include <inttypes.h>

#include "tracekit/image.h"

/* Which range ends count as jumps (any control transfer but a branch or a trap). */
static const uint8_t is_jump[16] = {
    [TK_END_JUMP] = 1, [TK_END_CALL] = 1,       [TK_END_RETURN] = 1,
    [TK_END_SWAP] = 1, [TK_END_OTHER_JUMP] = 1, [TK_END_TRAP_RETURN] = 1};

/* A TK_EV_BLOCKS batch: each entry counts as the range it stands for. Per entry only its
 * instructions are added and a histogram of (end, taken) counted, without a branch on the
 * data; the totals come from the histogram once per batch (end is below 16: tk_range_end). */
static void count_blocks(tk_count *c, const tk_event *ev)
{
    uint64_t insns = 0;
    uint32_t hist[32] = {0}; /* [end | taken << 4] */
    for (uint32_t i = 0; i < ev->nblocks; i++) {
        const tk_block_exec *e = &ev->blocks[i];
        insns += e->block->ninsn;
        hist[(e->end & 15u) | (unsigned)(e->taken != 0) << 4]++;
    }
    uint64_t jumps = 0;
    for (unsigned end = 0; end < 16; end++)
        if (is_jump[end])
            jumps += (uint64_t)hist[end] + hist[end | 16];
    c->instructions += insns;
    c->ranges += ev->nblocks;
    c->branches += (uint64_t)hist[TK_END_BRANCH] + hist[TK_END_BRANCH | 16];
    c->taken += hist[TK_END_BRANCH | 16];
    c->jumps += jumps;
}

tk_status tk_count_event(void *ctx, const tk_event *ev)
{
    tk_count *c = ctx;
    switch (ev->kind) {
    case TK_EV_RANGE:
        c->instructions += ev->ninsn;
        c->ranges++;
        if (ev->end == TK_END_BRANCH) {
            c->branches++;
            c->taken += ev->taken != 0;
        } else if (ev->end != TK_END_NONE && ev->end != TK_END_TRAP) {
            c->jumps++;
        }
        break;
    case TK_EV_BLOCKS:
        count_blocks(c, ev);
        break;
    case TK_EV_TRAP:
        c->traps++;
        break;
    case TK_EV_ERROR:
        c->errors++;
        break;
    case TK_EV_LOST:
        c->lost++;
        break;
    default:
        break;
    }
    return TK_OK;
}

void tk_count_add(tk_count *a, const tk_count *b)
{
    a->instructions += b->instructions;
    a->ranges += b->ranges;
    a->branches += b->branches;
    a->taken += b->taken;
    a->jumps += b->jumps;
    a->traps += b->traps;
    a->errors += b->errors;
    a->lost += b->lost;
    a->packets += b->packets;
}

tk_status tk_count_write(const tk_count *c, FILE *out)
{
    int n = fprintf(out,
                    "instructions %" PRIu64 "\nbranches %" PRIu64 "\ntaken %" PRIu64
                    "\njumps %" PRIu64 "\ntraps %" PRIu64 "\npackets %" PRIu64 "\n",
                    c->instructions, c->branches, c->taken, c->jumps, c->traps, c->packets);
    return n < 0 ? TK_ERR_IO : TK_OK;
}
