/* SPDX-License-Identifier: BSD-2-Clause */
/* Counting sink: one switch per event, no lookup, no allocation. */
#include "tracekit/count.h"

#include <inttypes.h>

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
