/* SPDX-License-Identifier: BSD-2-Clause */
/* The shadow call stack: calls push, returns pop to the frame whose return address matches,
 * traps push a frame that xRET pops. It also builds the calling-context tree (one node per
 * distinct stack) and the call edges with their inclusive instruction counts (a recursive
 * edge counts the instructions under its outermost active call only).
 *
 * Real programs do not always pair calls and returns: longjmp, tail calls, a trace that
 * starts inside a call, handlers that switch context. The rules below keep the stack
 * consistent with the code being executed, in this order:
 *  - a return pops to the nearest frame expecting that address; failing that, to the nearest
 *    frame of the function returned into; failing that the stack restarts there;
 *  - a jump into the middle of a function already on the stack pops to it (longjmp);
 *  - any other arrival in another function replaces the top frame (tail call, fall-through
 *    into the next symbol), keeping its caller and return address. */
#include <string.h>

#include "util/grow.h"
#include "profile_internal.h"

static tk_status ctx_child(tk_profile *p, uint32_t parent, uint32_t func, uint32_t *out)
{
    uint32_t idx = (uint32_t)p->nctxs;
    int inserted = 0;
    tk_status st = cached_put(&p->ctx_map, p->ctx_cache, parent, func, &idx, &inserted);
    if (st != TK_OK)
        return st;
    if (inserted) {
        if ((st = TK_GROW(p->ctxs, p->nctxs, p->cap_ctxs, p->nctxs + 1)) != TK_OK ||
            (st = TK_GROW(p->ctx_memo, p->nctxs, p->cap_ctx_memo, p->nctxs + 1)) != TK_OK)
            return st;
        const prof_ctx_memo_1 none = {.child = TK_PAIR_NONE, .call = TK_PAIR_NONE};
        p->ctx_memo[p->nctxs] = (prof_ctx_memo){.m = {none, none}};
        p->ctxs[p->nctxs++] = (tk_prof_ctx){.parent = parent, .func = func, .self = 0};
    }
    *out = idx;
    return TK_OK;
}

static inline tk_status push_frame(tk_profile *p, const prof_frame *f)
{
    tk_status st = TK_GROW(p->stack, p->depth, p->cap_stack, p->depth + 1);
    if (st != TK_OK)
        return st;
    tk_cs_store(p, f);
    return TK_OK;
}

static tk_status push_root(tk_profile *p, uint32_t func)
{
    prof_frame f = {.func = func, .call = TK_PAIR_NONE, .ret = UINT64_MAX, .snap = p->cs_total};
    tk_status st = ctx_child(p, TK_PAIR_NONE, func, &f.ctx);
    if (st != TK_OK)
        return st;
    return push_frame(p, &f);
}

/* The call edge (site, func) called from function caller; made on first sight. */
static tk_status call_edge(tk_profile *p, uint32_t caller, uint32_t func, uint64_t site, bool trap,
                           uint32_t *out)
{
    uint32_t ci = (uint32_t)p->ncalls;
    int inserted = 0;
    tk_status st = cached_put(&p->call_map, p->call_cache, site, func, &ci, &inserted);
    if (st != TK_OK)
        return st;
    if (inserted) {
        if ((st = TK_GROW(p->calls, p->ncalls, p->cap_calls, p->ncalls + 1)) != TK_OK ||
            (st = TK_GROW(p->call_open, p->ncalls, p->cap_call_open, p->ncalls + 1)) != TK_OK)
            return st;
        p->call_open[p->ncalls] = 0;
        p->calls[p->ncalls++] =
            (tk_prof_call){.caller = caller, .callee = func, .site = site, .trap = trap};
    }
    *out = ci;
    return TK_OK;
}

/* Push a frame called from site (in the current top function). The call site's memo
 * (memo, for ACT_CALL; see tk_cs_call_memo) is checked first, then the context node memo
 * ctx_memo[node].m[kind] (prof_ctx_memo): the same call again needs no hashing. */
static tk_status push_call(tk_profile *p, uint32_t func, uint64_t site, uint64_t ret, bool trap,
                           uint32_t node, int kind, prof_call_memo *memo)
{
    const prof_frame *top = &p->stack[p->depth - 1];
    prof_frame f = {.func = func, .trap = trap, .site = site, .ret = ret, .snap = p->cs_total};
    const uint32_t parent = top->ctx;
    const uint32_t caller = top->func;
    tk_status st;
    if (memo && !p->general_only && memo->parent == parent && memo->func == func) {
        f.ctx = memo->child;
        f.call = memo->call;
    } else {
        const prof_ctx_memo_1 *m = &p->ctx_memo[node].m[kind];
        f.call = m->call;
        if (!p->general_only && tk_cs_ctx_memo_hit(p, m, func, site, trap)) {
            f.ctx = m->child;
        } else {
            if ((st = ctx_child(p, parent, func, &f.ctx)) != TK_OK ||
                (st = call_edge(p, caller, func, site, trap, &f.call)) != TK_OK)
                return st;
            p->ctx_memo[node].m[kind] = (prof_ctx_memo_1){.child = f.ctx, .call = f.call};
        }
        if (memo)
            *memo =
                (prof_call_memo){.parent = parent, .func = func, .child = f.ctx, .call = f.call};
    }
    if ((st = TK_GROW(p->stack, p->depth, p->cap_stack, p->depth + 1)) != TK_OK)
        return st;
    tk_cs_store_call(p, &f);
    return TK_OK;
}

static void pop_to(tk_profile *p, size_t depth)
{
    while (p->depth > depth)
        tk_cs_pop(p);
}

void tk_cs_reset(tk_profile *p)
{
    if (p->depth)
        p->totals.stack_resets++;
    pop_to(p, 0);
}

void tk_prof_cs_finish(tk_profile *p)
{
    /* A node's count is its subtree's (tk_cs_pop): its children's counts come off. Children
     * come after their parent, so a node's count is still its subtree's when it is taken off
     * its parent's. */
    for (size_t i = 0; i < p->nctxs; i++)
        if (p->ctxs[i].parent != TK_PAIR_NONE)
            p->ctxs[p->ctxs[i].parent].self -= p->ctxs[i].self;
    for (size_t i = 0; i < p->ncalls; i++)
        p->funcs[p->calls[i].callee].entries += p->calls[i].calls;
}

/* Replace the top frame by one for func, called from the same place. */
static tk_status switch_top(tk_profile *p, uint32_t func)
{
    if (!p->general_only && tk_cs_tail_memo(p, func))
        return TK_OK;
    prof_frame old = p->stack[p->depth - 1];
    tk_cs_pop(p);
    if (!p->depth)
        return push_root(p, func);
    return push_call(p, func, old.site, old.ret, old.trap, old.ctx, 1, NULL);
}

/* Nearest frame below the top running func, or SIZE_MAX. */
static size_t find_func(const tk_profile *p, uint32_t func)
{
    for (size_t k = p->depth - 1; k-- > 0;)
        if (p->stack[k].func == func)
            return k;
    return SIZE_MAX;
}

/* Returned (by ret or xRET) somewhere no frame expected: go back to a frame of the function
 * returned into, or start over there. */
static void unmatched_return(tk_profile *p, uint32_t func)
{
    p->totals.unmatched_returns++;
    size_t k = find_func(p, func);
    if (k != SIZE_MAX)
        pop_to(p, k + 1);
    else
        tk_cs_reset(p);
}

static void do_return(tk_profile *p, uint64_t target, uint32_t func)
{
    for (size_t k = p->depth; k-- > 0;) {
        if (p->stack[k].ret == target) {
            pop_to(p, k);
            return;
        }
    }
    unmatched_return(p, func);
}

static void do_xret(tk_profile *p, uint32_t func)
{
    /* The handler may have changed xEPC (ecall returns past the ecall, a scheduler returns
     * elsewhere): the nearest trap frame ends whatever the target. */
    for (size_t k = p->depth; k-- > 0;) {
        if (p->stack[k].trap) {
            pop_to(p, k);
            return;
        }
    }
    unmatched_return(p, func);
}

tk_status tk_cs_enter(tk_profile *p, prof_action act, uint64_t site, uint64_t ret, uint64_t first,
                      uint32_t func, bool entry, prof_call_memo *memo)
{
    if (!p->depth)
        return push_root(p, func);
    switch (act) {
    case ACT_START:
        tk_cs_reset(p);
        return push_root(p, func);
    case ACT_CALL:
    case ACT_TRAP:
        if (p->depth >= TK_PROF_MAX_DEPTH)
            break; /* runaway: keep counting, stop growing */
        return push_call(p, func, site, act == ACT_TRAP ? site : ret, act == ACT_TRAP,
                         p->stack[p->depth - 1].ctx, 0, act == ACT_CALL ? memo : NULL);
    case ACT_RETURN:
        if (TK_LIKELY(p->stack[p->depth - 1].ret == first))
            tk_cs_pop(p); /* what do_return does when the top frame matches */
        else
            do_return(p, first, func);
        break;
    case ACT_XRET:
        do_xret(p, func);
        break;
    case ACT_FLOW:
        if (p->stack[p->depth - 1].func != func && !entry) {
            size_t k = find_func(p, func);
            if (k != SIZE_MAX)
                pop_to(p, k + 1);
        }
        break;
    }
    if (!p->depth)
        return push_root(p, func);
    if (p->stack[p->depth - 1].func != func)
        return switch_top(p, func);
    return TK_OK;
}
