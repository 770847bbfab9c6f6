/* SPDX-License-Identifier: BSD-2-Clause */
/* The flat collection level (TK_PROFILE_FLAT, analysis.h). A TK_EV_BLOCKS entry bumps one
 * counter of its block (by how it ended: not a branch, branch not taken, taken) in an array
 * indexed by block id; after a call or return, or at a function's first block, it also
 * follows the stack depth and counts the function's entries. Range events, and blocks the
 * inner loop does not take, count on the range records themselves (flat_step). At finish
 * the block counters are added to the range records, from which the same derivation as the
 * full level's gives instructions, blocks, branches and self counts: the records are the
 * same ones with the same counts. No call stack, edges, runs or contexts. */
#include <string.h>

#include "tracekit/image.h"

#include "util/grow.h"
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
    range_done(p, r, ri, end, taken, bad);
    return TK_OK;
}

tk_status tk_prof_flat_range(tk_profile *p, const tk_event *ev)
{
    uint32_t ri;
    tk_status st = range_for_event(p, ev, &ri);
    if (st != TK_OK)
        return st;
    return flat_step(p, ri, ev->end, ev->taken);
}

/* Add a block's counters to its range record and function, and clear them. */
static void flat_fold_one(tk_profile *p, prof_flat_blk *fb)
{
    prof_range *r = &p->ranges[fb->range];
    r->count += fb->out[0] + fb->out[1] + fb->out[2];
    if (r->last_cond) {
        r->not_taken += fb->out[1];
        r->taken += fb->out[2];
    }
    p->cs_total += (fb->out[0] + fb->out[1] + fb->out[2]) * fb->ninsn;
    /* Blocks counted here lie in one function (not PROF_FLAT_SLOW). */
    p->funcs[fb->func].entries += fb->entered;
    fb->out[0] = fb->out[1] = fb->out[2] = fb->entered = 0;
}

uint64_t tk_prof_flat_insns(const tk_profile *p)
{
    uint64_t n = p->cs_total;
    for (size_t i = 0; i < p->cap_flat_blk; i++) {
        const prof_flat_blk *fb = &p->flat_blk[i];
        n += (fb->out[0] + fb->out[1] + fb->out[2]) * fb->ninsn;
    }
    return n;
}

void tk_prof_flat_fold(tk_profile *p)
{
    for (size_t i = 0; i < p->cap_flat_blk; i++)
        if (p->flat_blk[i].block)
            flat_fold_one(p, &p->flat_blk[i]);
}

/* The counters of block b, made (or taken over from another image's block with the same
 * id, whose counts go to its range record first) on first sight. */
static TK_NOINLINE tk_status flat_blk_slow(tk_profile *p, const tk_bblock *b, prof_flat_blk **out)
{
    uint32_t ri;
    tk_status st = tk_prof_block_range_slow(p, b, &ri);
    if (st != TK_OK)
        return st;
    if (b->id >= p->cap_flat_blk) {
        size_t old = p->cap_flat_blk;
        st = TK_GROW(p->flat_blk, old, p->cap_flat_blk, (size_t)b->id + 1);
        if (st != TK_OK)
            return st;
        memset(p->flat_blk + old, 0, (p->cap_flat_blk - old) * sizeof(*p->flat_blk));
    }
    prof_flat_blk *fb = &p->flat_blk[b->id];
    if (fb->block)
        flat_fold_one(p, fb);
    const prof_range *r = &p->ranges[ri];
    *fb = (prof_flat_blk){
        .block = b,
        .range = ri,
        .ninsn = r->ninsn,
        .func = r->func,
        .flags = (uint8_t)(PROF_FLAT_ANY | (r->simple ? 0 : PROF_FLAT_SLOW) |
                           (r->entry ? PROF_FLAT_ENTRY : 0) | (r->last_cond ? PROF_FLAT_COND : 0)),
    };
    *out = fb;
    return TK_OK;
}

static inline prof_flat_blk *flat_blk_of(tk_profile *p, const tk_bblock *b)
{
    return b->id < p->cap_flat_blk && p->flat_blk[b->id].block == b ? &p->flat_blk[b->id] : NULL;
}

/* One entry through the general path (counted on its range record and cs_total). */
static TK_NOINLINE tk_status flat_block_step(tk_profile *p, const tk_block_exec *e)
{
    prof_flat_blk *fb = flat_blk_of(p, e->block);
    if (!fb) {
        tk_status st = flat_blk_slow(p, e->block, &fb);
        if (st != TK_OK)
            return st;
    }
    return flat_step(p, fb->range, e->end, e->taken);
}

/* Per previous end (tk_range_end; ends from 16 on are flow, as action_after says), the
 * flags of the next block that need more than counting: a block that walked badly or spans
 * two functions always (the general path); after sequential flow, a branch or a jump, a
 * function's first block (it enters the function if flow came from another function and
 * not from the outermost frame, as flat_enter says); after a call or a return, every block
 * (the stack depth moves, a call enters). */
#define F_SE (PROF_FLAT_SLOW | PROF_FLAT_ENTRY)
#define F_SA (PROF_FLAT_SLOW | PROF_FLAT_ANY)
#define R8 F_SE, F_SE, F_SE, F_SE, F_SE, F_SE, F_SE, F_SE
#define R32 R8, R8, R8, R8
/* 8 + 3 * 8 + 7 * 32 = 256 */
static const uint8_t special_after[256] = {F_SE, F_SE, F_SE, F_SA, F_SA, F_SE, F_SE, F_SA, R8,
                                           R8,   R8,   R32,  R32,  R32,  R32,  R32,  R32,  R32};
#undef R32
#undef R8
#undef F_SE
#undef F_SA

/* A TK_EV_BLOCKS batch. The inner loop takes the entries whose block has counters under its
 * id, lies in one function and walked, after a walked range whose branch outcome is stated
 * (no trap or restart pending): it bumps one counter of the block by how it ended and adds
 * its instructions; only after a call or a return, or for a function's first block, does it
 * follow the stack depth and count entries. Execution counts, branch outcomes and entries
 * are added to the range records at finish. Any other entry goes through flat_block_step
 * after the state is written back. */
tk_status tk_prof_flat_blocks(tk_profile *p, const tk_event *ev)
{
    _Static_assert(TK_END_BRANCH == 1 && TK_END_CALL == 3 && TK_END_RETURN == 4 &&
                       TK_END_TRAP_RETURN == 7,
                   "tables follow tk_range_end");
    const tk_block_exec *e = ev->blocks, *const stop = ev->blocks + ev->nblocks;
    tk_status st = TK_OK;
    while (e < stop && st == TK_OK) {
        if (!p->have_prev) {
            st = flat_block_step(p, e++);
            continue;
        }
        const prof_range *pr = &p->ranges[p->prev_range];
        if (pr->last_cond && p->prev_end != TK_END_BRANCH) {
            st = flat_block_step(p, e++); /* its outcome is resolved by this block */
            continue;
        }
        prof_flat_blk *const blk = p->flat_blk;
        const size_t nid = p->cap_flat_blk;
        uint8_t pe = p->prev_end;
        uint32_t depth = p->flat_depth;
        const prof_flat_blk *last = NULL;
        const tk_block_exec *const from = e;
        for (; e < stop; e++) {
            const tk_bblock *b = e->block;
            const uint32_t id = b->id;
            if (id >= nid)
                break;
            prof_flat_blk *fb = &blk[id];
            const uint8_t end = e->end;
            if (fb->block != b)
                break;
            if (fb->flags & special_after[pe]) {
                if (fb->flags & PROF_FLAT_SLOW)
                    break;
                if (pe == TK_END_CALL) {
                    if (depth >= TK_PROF_MAX_DEPTH)
                        break; /* flat_enter: the call replaces the top frame */
                    depth++;
                    fb->entered++;
                } else if (pe == TK_END_RETURN || pe == TK_END_TRAP_RETURN) {
                    depth -= depth > 1; /* a return from the outermost frame stays there */
                } else {
                    const uint32_t top = last ? last->func : p->flat_top;
                    fb->entered += fb->func != top && depth > 1;
                }
            }
            fb->out[(unsigned)(end == TK_END_BRANCH) << (e->taken != 0)]++;
            last = fb;
            pe = end;
            if ((fb->flags & PROF_FLAT_COND) && end != TK_END_BRANCH) {
                e++; /* the next block resolves this branch: the general path */
                break;
            }
        }
        if (last) {
            p->totals.ranges += (uint64_t)(e - from);
            p->prev_range = last->range;
            p->prev_end = pe;
            p->action = action_after(pe);
            p->flat_top = last->func;
            p->flat_depth = depth;
        }
        if (e < stop)
            st = flat_block_step(p, e++);
    }
    return st;
}
