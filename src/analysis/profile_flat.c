/* SPDX-License-Identifier: BSD-2-Clause */
/* The flat collection level (TK_PROFILE_FLAT, analysis.h): per range or TK_EV_BLOCKS entry
 * only the counters of its range record are bumped (execution count, branch outcome) and,
 * where the range enters a function, that function's entry count. No call stack, edges,
 * runs or contexts: everything the full level derives at finish from the range records
 * (instructions, blocks, branches, self counts) comes out the same, because the records
 * are the same ones with the same counts. */
#include "tracekit/image.h"

#include "profile_internal.h"

/* Function entries without a stack, only its depth: a call or trap enters the function of
 * the range's first piece at any address and nests one deeper; a return or xRET goes back
 * up one; sequential flow or a jump enters a function at its first instruction from another
 * function, and a range that runs on into the next symbol enters that one, unless the
 * function left is the outermost (the full level replaces a root frame without counting an
 * entry). The first range after a restart is the root. */
static void flat_enter(tk_profile *p, prof_action act, uint32_t ri)
{
    const prof_range *r = &p->ranges[ri];
    for (uint32_t i = 0; i < r->npieces; i++) {
        const uint32_t func = p->pieces[r->piece + i].func;
        const uint32_t top = p->flat_top;
        p->flat_top = func;
        if (top == TK_PAIR_NONE || !p->flat_depth) {
            p->flat_depth = 1;
            continue;
        }
        bool enters;
        if (i || act == ACT_FLOW || act == ACT_START) {
            enters = func != top && p->flat_depth > 1 && (i || r->entry);
        } else if (act == ACT_CALL || act == ACT_TRAP) {
            /* A runaway stack stops growing: the call replaces the top frame. */
            enters = p->flat_depth < TK_PROF_MAX_DEPTH || func != top;
            p->flat_depth += p->flat_depth < TK_PROF_MAX_DEPTH;
        } else { /* return, xRET */
            enters = false;
            p->flat_depth -= p->flat_depth > 1;
        }
        p->funcs[func].entries += enters;
    }
}

/* One execution of range ri that ended as end says: what range_step counts, without the
 * call stack, edges and runs. */
static tk_status flat_step(tk_profile *p, uint32_t ri, uint8_t end, bool taken)
{
    prof_range *r = &p->ranges[ri];
    r->count++;
    p->totals.ranges++;
    const bool bad = r->last_len == 0;
    const prof_action act = p->action;
    if (act != ACT_TRAP && p->have_prev)
        resolve_branch(p, r->first);
    if (bad) {
        p->totals.bad_ranges++;
        tk_status st = tk_prof_flow_break(p);
        if (st != TK_OK)
            return st;
    }
    flat_enter(p, act, ri);
    /* A walked range's ninsn is the sum of its pieces', an opaque one's is its one piece's. */
    p->cs_total += r->ninsn;
    if (end == TK_END_BRANCH && r->last_cond) {
        if (taken)
            r->taken++;
        else
            r->not_taken++;
    }
    p->action = action_after(end);
    p->prev_end = end;
    if (bad) {
        p->have_prev = false;
        p->prev_last_opaque = r->last;
    } else {
        p->have_prev = true;
        p->prev_range = ri;
    }
    return TK_OK;
}

tk_status tk_prof_flat_range(tk_profile *p, const tk_event *ev)
{
    uint32_t ri = TK_PAIR_NONE;
    if (p->have_prev) {
        const uint32_t h = p->ranges[p->prev_range].succ;
        if (h != TK_PAIR_NONE && p->ranges[h].first == ev->first && p->ranges[h].last == ev->last)
            ri = h;
    }
    if (ri == TK_PAIR_NONE) {
        tk_status st = tk_prof_range_of(p, ev->first, ev->last, ev->ninsn, &ri);
        if (st != TK_OK)
            return st;
        if (p->have_prev)
            p->ranges[p->prev_range].succ = ri;
    }
    return flat_step(p, ri, ev->end, ev->taken);
}

static PROF_NOINLINE tk_status flat_block_step(tk_profile *p, const tk_block_exec *e)
{
    const tk_bblock *b = e->block;
    uint32_t ri;
    if (b->id < p->cap_block_range && p->block_range[b->id].block == b) {
        ri = p->block_range[b->id].range;
    } else {
        tk_status st = tk_prof_block_range_slow(p, b, &ri);
        if (st != TK_OK)
            return st;
    }
    return flat_step(p, ri, e->end, e->taken);
}

/* A TK_EV_BLOCKS batch. The inner loop takes the entries whose block's record is known
 * under its id, that walked and lie in one function, after a walked range whose branch
 * outcome is stated (so no trap or restart is pending and the previous function is known):
 * a few counters each, with the flow state in locals. Any other entry goes through
 * flat_block_step after the state is written back. */
tk_status tk_prof_flat_blocks(tk_profile *p, const tk_event *ev)
{
    const tk_block_exec *e = ev->blocks, *const stop = ev->blocks + ev->nblocks;
    tk_status st = TK_OK;
    while (e < stop && st == TK_OK) {
        if (!p->have_prev) {
            st = flat_block_step(p, e++);
            continue;
        }
        prof_range *const ranges = p->ranges;
        const prof_block_ref *const by_id = p->block_range;
        const size_t nid = p->cap_block_range;
        tk_prof_func *const funcs = p->funcs;
        const prof_range *pr = &ranges[p->prev_range];
        uint8_t prev_end = p->prev_end;
        prof_action act = p->action;
        uint32_t top = p->flat_top, depth = p->flat_depth;
        uint64_t total = p->cs_total;
        const tk_block_exec *const from = e;
        for (; e < stop; e++) {
            const tk_bblock *b = e->block;
            if (b->id >= nid || by_id[b->id].block != b)
                break;
            prof_range *r = &ranges[by_id[b->id].range];
            if (!r->simple || (pr->last_cond && prev_end != TK_END_BRANCH))
                break;
            /* have_prev: the action is flow, call, return or xRET, and top and depth are
             * known (flat_enter says why). */
            const uint32_t func = r->func;
            if (act != ACT_FLOW) {
                if (act == ACT_CALL) {
                    if (depth >= TK_PROF_MAX_DEPTH)
                        break;
                    depth++;
                    funcs[func].entries++;
                } else {
                    depth -= depth > 1;
                }
            } else if (r->entry && func != top && depth > 1) {
                funcs[func].entries++;
            }
            top = func;
            r->count++;
            total += r->ninsn;
            const uint8_t end = e->end;
            const bool cond = end == TK_END_BRANCH && r->last_cond;
            const bool taken = e->taken != 0;
            r->taken += cond & taken;
            r->not_taken += cond & !taken;
            act = action_after(end);
            prev_end = end;
            pr = r;
        }
        p->totals.ranges += (uint64_t)(e - from);
        p->prev_range = (uint32_t)(pr - ranges);
        p->prev_end = prev_end;
        p->action = act;
        p->flat_top = top;
        p->flat_depth = depth;
        p->cs_total = total;
        if (e < stop)
            st = flat_block_step(p, e++);
    }
    return st;
}
