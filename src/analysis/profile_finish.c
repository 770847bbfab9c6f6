/* SPDX-License-Identifier: BSD-2-Clause */
/* Tables derived once the stream has ended: per-instruction counts (each distinct range is
 * walked once and contributes its count to its instructions), basic blocks, branch outcomes,
 * self function counts from the range counts, and inclusive function counts from the
 * calling-context tree. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/sort.h"
#include "profile_internal.h"

static int cmp_insn(const void *a, const void *b)
{
    const tk_prof_insn *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_branch(const void *a, const void *b)
{
    const tk_prof_branch *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static tk_status derive_insns(tk_profile *p, tk_pair_map *leaders)
{
    tk_pair_map map;
    tk_pair_map_init(&map);
    size_t cap = 0;
    tk_status st = TK_OK;
    for (size_t ri = 0; ri < p->nranges && st == TK_OK; ri++) {
        const prof_range *r = &p->ranges[ri];
        uint32_t one = 0;
        if ((st = tk_pair_map_put(leaders, r->first, 0, &one, NULL)) != TK_OK)
            break;
        if (!r->last_len)
            continue; /* opaque: counted in totals and functions only */
        uint64_t addr = r->first;
        for (uint32_t pi = 0; pi < r->npieces && st == TK_OK; pi++) {
            const prof_piece *pc = &p->pieces[r->piece + pi];
            addr = pc->first;
            for (uint32_t k = 0; k < pc->ninsn; k++) {
                tk_code_insn in;
                if ((st = p->code.insn(p->code.ctx, addr, &in)) != TK_OK)
                    break;
                uint32_t idx = (uint32_t)p->ninsns;
                int inserted = 0;
                if ((st = tk_pair_map_put(&map, addr, 0, &idx, &inserted)) != TK_OK)
                    break;
                if (inserted) {
                    if ((st = TK_GROW(p->insns, p->ninsns, cap, p->ninsns + 1)) != TK_OK)
                        break;
                    p->insns[p->ninsns++] = (tk_prof_insn){.addr = addr,
                                                           .func = pc->func,
                                                           .len = in.len,
                                                           .cond_branch = in.cond_branch};
                }
                p->insns[idx].count += r->count;
                addr += in.len;
            }
        }
        /* The instruction after a range's end starts a block whatever ended the range. */
        if (st == TK_OK)
            st = tk_pair_map_put(leaders, r->last + r->last_len, 0, &one, NULL);
    }
    tk_pair_map_fini(&map);
    if (st == TK_OK && p->ninsns &&
        !tk_sort_by_u64(p->insns, p->ninsns, sizeof(*p->insns), offsetof(tk_prof_insn, addr)))
        qsort(p->insns, p->ninsns, sizeof(*p->insns), cmp_insn);
    return st;
}

static tk_status derive_blocks(tk_profile *p, const tk_pair_map *leaders)
{
    size_t cap = 0;
    for (size_t i = 0; i < p->ninsns; i++) {
        const tk_prof_insn *in = &p->insns[i];
        bool start = i == 0 || tk_pair_map_get(leaders, in->addr, 0) != TK_PAIR_NONE;
        if (!start) {
            const tk_prof_insn *pv = &p->insns[i - 1];
            start = pv->addr + pv->len != in->addr || pv->cond_branch || pv->func != in->func;
        }
        if (start) {
            tk_status st = TK_GROW(p->blocks, p->nblocks, cap, p->nblocks + 1);
            if (st != TK_OK)
                return st;
            p->blocks[p->nblocks++] = (tk_prof_block){.start = in->addr,
                                                      .last = in->addr,
                                                      .ninsn = 0,
                                                      .func = in->func,
                                                      .count = in->count};
        }
        tk_prof_block *b = &p->blocks[p->nblocks - 1];
        b->last = in->addr;
        b->ninsn++;
    }
    return TK_OK;
}

static tk_status branch_at(tk_profile *p, tk_pair_map *map, size_t *cap, uint64_t addr,
                           tk_prof_branch **out)
{
    uint32_t idx = (uint32_t)p->nbranches;
    int inserted = 0;
    tk_status st = tk_pair_map_put(map, addr, 0, &idx, &inserted);
    if (st != TK_OK)
        return st;
    if (inserted) {
        if ((st = TK_GROW(p->branches, p->nbranches, *cap, p->nbranches + 1)) != TK_OK)
            return st;
        tk_prof_branch *b = &p->branches[p->nbranches++];
        memset(b, 0, sizeof(*b));
        b->addr = addr;
        tk_code_insn in;
        if (p->code.insn(p->code.ctx, addr, &in) == TK_OK)
            b->target = in.target;
        size_t ii = tk_profile_find_insn(p, addr);
        b->func = ii != SIZE_MAX ? p->insns[ii].func : TK_PAIR_NONE;
    }
    *out = &p->branches[idx];
    return TK_OK;
}

static tk_status derive_branches(tk_profile *p)
{
    tk_pair_map map;
    tk_pair_map_init(&map);
    size_t cap = 0;
    tk_status st = TK_OK;
    for (size_t ri = 0; ri < p->nranges && st == TK_OK; ri++) {
        const prof_range *r = &p->ranges[ri];
        tk_prof_branch *b;
        if (r->last_cond) {
            if ((st = branch_at(p, &map, &cap, r->last, &b)) != TK_OK)
                break;
            b->taken += r->taken;
            b->not_taken += r->not_taken;
        }
        for (uint32_t k = 0; k < r->ninner && st == TK_OK; k++) {
            if ((st = branch_at(p, &map, &cap, p->inner_branches[r->inner + k], &b)) == TK_OK)
                b->not_taken += r->count;
        }
    }
    tk_pair_map_fini(&map);
    if (st == TK_OK && p->nbranches &&
        !tk_sort_by_u64(p->branches, p->nbranches, sizeof(*p->branches),
                        offsetof(tk_prof_branch, addr)))
        qsort(p->branches, p->nbranches, sizeof(*p->branches), cmp_branch);
    return st;
}

/* Self count of each function: every range's pieces, times the range's count (the same sum
 * the call stack would have made range by range, made once). */
static void derive_self(tk_profile *p)
{
    for (size_t ri = 0; ri < p->nranges; ri++) {
        const prof_range *r = &p->ranges[ri];
        for (uint32_t k = 0; k < r->npieces; k++) {
            const prof_piece *pc = &p->pieces[r->piece + k];
            p->funcs[pc->func].self += r->count * pc->ninsn;
        }
    }
}

/* Inclusive count of a function: the instructions under each context-tree node of it that
 * has no ancestor of the same function, so recursion is not counted twice. */
static tk_status derive_inclusive(tk_profile *p)
{
    if (!p->nctxs)
        return TK_OK;
    uint64_t *sub = malloc(p->nctxs * sizeof(*sub));
    if (!sub)
        return TK_ERR_NOMEM;
    for (size_t i = 0; i < p->nctxs; i++)
        sub[i] = p->ctxs[i].self;
    /* A node is created after its parent, so children have larger indexes. */
    for (size_t i = p->nctxs; i-- > 0;)
        if (p->ctxs[i].parent != TK_PAIR_NONE)
            sub[p->ctxs[i].parent] += sub[i];
    for (size_t i = 0; i < p->nctxs; i++) {
        uint32_t f = p->ctxs[i].func;
        bool nested = false;
        for (uint32_t a = p->ctxs[i].parent; a != TK_PAIR_NONE; a = p->ctxs[a].parent) {
            if (p->ctxs[a].func == f) {
                nested = true;
                break;
            }
        }
        if (!nested)
            p->funcs[f].inclusive += sub[i];
    }
    free(sub);
    return TK_OK;
}

tk_status tk_prof_derive(tk_profile *p)
{
    tk_pair_map leaders;
    tk_pair_map_init(&leaders);
    tk_status st = derive_insns(p, &leaders);
    if (st == TK_OK)
        st = derive_blocks(p, &leaders);
    tk_pair_map_fini(&leaders);
    if (st == TK_OK)
        st = derive_branches(p);
    if (st == TK_OK) {
        derive_self(p);
        st = derive_inclusive(p);
    }
    return st;
}

size_t tk_profile_insn_count(const tk_profile *p)
{
    return p->ninsns;
}

const tk_prof_insn *tk_profile_insn(const tk_profile *p, size_t i)
{
    return i < p->ninsns ? &p->insns[i] : NULL;
}

size_t tk_profile_find_insn(const tk_profile *p, uint64_t addr)
{
    size_t lo = tk_count_keys_u64(p->insns, p->ninsns, sizeof(*p->insns),
                                  offsetof(tk_prof_insn, addr), addr, false);
    return lo < p->ninsns && p->insns[lo].addr == addr ? lo : SIZE_MAX;
}

size_t tk_profile_block_count(const tk_profile *p)
{
    return p->nblocks;
}

const tk_prof_block *tk_profile_block(const tk_profile *p, size_t i)
{
    return i < p->nblocks ? &p->blocks[i] : NULL;
}

size_t tk_profile_branch_count(const tk_profile *p)
{
    return p->nbranches;
}

const tk_prof_branch *tk_profile_branch(const tk_profile *p, size_t i)
{
    return i < p->nbranches ? &p->branches[i] : NULL;
}
