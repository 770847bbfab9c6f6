/* SPDX-License-Identifier: BSD-2-Clause */
/* Multiple retirement from single retirement: consecutive instructions are merged into blocks
 * (iretire in half-words, ilastsize of the last, itype of the last: ingressPort "multiple
 * retirement per block") and blocks into cycles. See te_ingress.h for the rules. */
#include <stdlib.h>
#include <string.h>

#include "tracekit/te_ingress.h"

struct tk_te_grouper {
    unsigned max_insns, max_blocks;
    tk_te_block open; /* block being built */
    unsigned open_insns;
    unsigned open_limit; /* max instructions for the open block */
    bool have_open;
    bool after_discon; /* the last closed block ended with a trap or uninferable jump */
    tk_te_block *cycle;
    size_t ncycle;
};

tk_status tk_te_grouper_new(unsigned max_insns, unsigned max_blocks, tk_te_grouper **out)
{
    *out = NULL;
    if (max_insns == 0 || max_blocks == 0)
        return TK_ERR_INVALID;
    tk_te_grouper *g = calloc(1, sizeof(*g));
    if (!g)
        return TK_ERR_NOMEM;
    g->cycle = calloc(max_blocks, sizeof(*g->cycle));
    if (!g->cycle) {
        free(g);
        return TK_ERR_NOMEM;
    }
    g->max_insns = max_insns;
    g->max_blocks = max_blocks;
    *out = g;
    return TK_OK;
}

void tk_te_grouper_free(tk_te_grouper *g)
{
    if (!g)
        return;
    free(g->cycle);
    free(g);
}

/* Branches and inferable jumps are followed by an instruction the decoder can infer. */
static bool ends_inferably(uint8_t itype)
{
    return itype == TK_ITYPE_NONE || itype == TK_ITYPE_NOT_TAKEN || itype == TK_ITYPE_TAKEN ||
           itype == TK_ITYPE_INF_CALL || itype == TK_ITYPE_INF_JUMP || itype == TK_ITYPE_INF_OTHER;
}

static bool stands_alone(const tk_te_block *b)
{
    return b->iretire == 0 || b->trigger || b->halted || b->reset;
}

/* Close the open block into the cycle; returns true when the cycle is full. */
static bool close_open(tk_te_grouper *g)
{
    if (!g->have_open)
        return false;
    g->cycle[g->ncycle++] = g->open;
    g->after_discon = !ends_inferably(g->open.itype) || stands_alone(&g->open);
    g->have_open = false;
    return g->ncycle == g->max_blocks;
}

static void take_cycle(tk_te_grouper *g, tk_te_block *out, size_t *n)
{
    memcpy(out, g->cycle, g->ncycle * sizeof(*out));
    *n = g->ncycle;
    g->ncycle = 0;
}

static bool joins(const tk_te_grouper *g, const tk_te_block *b)
{
    const tk_te_block *o = &g->open;
    return g->have_open && g->open_insns < g->open_limit && o->itype == TK_ITYPE_NONE &&
           !stands_alone(o) && !stands_alone(b) && b->priv == o->priv && b->context == o->context &&
           b->ctype == o->ctype && b->time == o->time &&
           b->iaddr == o->iaddr + 2u * (uint64_t)o->iretire;
}

tk_status tk_te_grouper_push(tk_te_grouper *g, const tk_te_block *in, tk_te_block *out, size_t *n)
{
    *n = 0;
    if (in->iretire != 0 && in->iretire != (1u << in->ilastsize))
        return TK_ERR_INVALID; /* input must be single retirement */
    if (joins(g, in)) {
        uint32_t hw = g->open.iretire + in->iretire;
        uint64_t first = g->open.iaddr;
        g->open = *in;
        g->open.iaddr = first;
        g->open.iretire = hw;
        g->open_insns++;
        return TK_OK;
    }
    if (close_open(g))
        take_cycle(g, out, n);
    g->open = *in;
    g->open_insns = 1;
    g->open_limit = g->after_discon && g->max_insns > 2 ? 2 : g->max_insns;
    g->have_open = true; /* a block that stands alone is closed by the next push */
    return TK_OK;
}

tk_status tk_te_grouper_finish(tk_te_grouper *g, tk_te_block *out, size_t *n)
{
    close_open(g);
    take_cycle(g, out, n);
    return TK_OK;
}
