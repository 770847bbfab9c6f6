/* SPDX-License-Identifier: BSD-2-Clause */
#include "rank.h"

#include <stdlib.h>

typedef int (*cmp_fn)(const void *, const void *, void *);

static uint32_t *ranked(size_t n, cmp_fn cmp, const tk_profile *p)
{
    if (!n)
        return NULL;
    uint32_t *ord = malloc(n * sizeof(*ord));
    if (!ord)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ord[i] = (uint32_t)i;
    qsort_r(ord, n, sizeof(*ord), cmp, (void *)p);
    return ord;
}

/* Descending by key, then ascending by index, so the order is deterministic. */
static int desc(uint64_t a, uint64_t b, uint32_t ia, uint32_t ib)
{
    if (a != b)
        return a > b ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

static int cmp_func(const void *a, const void *b, void *ctx)
{
    const tk_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (p->funcs[x].self != p->funcs[y].self)
        return desc(p->funcs[x].self, p->funcs[y].self, x, y);
    return desc(p->funcs[x].inclusive, p->funcs[y].inclusive, x, y);
}

static int cmp_call(const void *a, const void *b, void *ctx)
{
    const tk_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return desc(p->calls[x].inclusive, p->calls[y].inclusive, x, y);
}

static int cmp_ctx(const void *a, const void *b, void *ctx)
{
    const tk_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return desc(p->ctxs[x].self, p->ctxs[y].self, x, y);
}

static int cmp_block(const void *a, const void *b, void *ctx)
{
    const tk_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return desc(p->blocks[x].count * p->blocks[x].ninsn, p->blocks[y].count * p->blocks[y].ninsn, x,
                y);
}

static int cmp_branch(const void *a, const void *b, void *ctx)
{
    const tk_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return desc(p->branches[x].taken + p->branches[x].not_taken,
                p->branches[y].taken + p->branches[y].not_taken, x, y);
}

uint32_t *tk_rank_funcs(const tk_profile *p)
{
    return ranked(p->nfuncs, cmp_func, p);
}

uint32_t *tk_rank_calls(const tk_profile *p)
{
    return ranked(p->ncalls, cmp_call, p);
}

uint32_t *tk_rank_ctxs(const tk_profile *p)
{
    return ranked(p->nctxs, cmp_ctx, p);
}

uint32_t *tk_rank_blocks(const tk_profile *p)
{
    return ranked(p->nblocks, cmp_block, p);
}

uint32_t *tk_rank_branches(const tk_profile *p)
{
    return ranked(p->nbranches, cmp_branch, p);
}

size_t tk_rank_path(const tk_profile *p, uint32_t ctx, uint32_t *chain, size_t cap)
{
    size_t n = 0;
    for (uint32_t a = ctx; a != TK_PAIR_NONE && n < cap; a = p->ctxs[a].parent)
        chain[n++] = a;
    return n;
}
