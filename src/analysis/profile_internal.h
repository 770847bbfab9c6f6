/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector's state, shared by the collector (profile.c), the shadow call stack
 * (call_stack.c), the derived tables (profile_finish.c) and the writers (out_*.c). */
#ifndef TK_ANALYSIS_PROFILE_INTERNAL_H
#define TK_ANALYSIS_PROFILE_INTERNAL_H

#include "tracekit/analysis.h"

#include "pair_map.h"
#include "util/compiler.h"

/* The last call made from a call site (a range ending with a call): entered from
 * calling-context node parent, it went to function func, node child, along call edge call
 * (all TK_PAIR_NONE: none yet). The same call again needs no hashing. The site is the
 * range's last instruction and the call not a trap: only such calls are memoized. */
typedef struct prof_call_memo {
    uint32_t parent, func, child, call;
} prof_call_memo;

/* What on_blocks keeps of a range's successor (prof_range.next). */
typedef struct prof_next {
    /* The TK_EV_BLOCKS block of the successor, set only when its range is simple (NULL:
     * none), so that on_blocks finds the next record without the lookup by block id. */
    const tk_bblock *block;
    struct prof_range *range; /* its record while block is set (moved with the array) */
    /* The taken edge to it (TK_PAIR_NONE: it follows sequentially), and the passes over it
     * that on_blocks counted here and not yet in the edge's count (tk_prof_next_flush). */
    uint64_t hits;
    uint32_t edge;
} prof_next;

/* A distinct range first..last, walked once in the code when first seen. */
typedef struct prof_range {
    uint64_t first, last;
    uint64_t count;
    uint64_t taken, not_taken; /* outcomes of the conditional branch that ends it */
    uint32_t ninsn;
    uint32_t piece;   /* first of npieces entries in tk_profile.pieces */
    uint16_t npieces; /* the range split where it crosses into another function */
    uint16_t ninner;  /* conditional branches inside the range (so not taken) */
    uint32_t inner;   /* first of them in tk_profile.inner_branches */
    uint8_t last_len; /* 0 if the range did not walk (bad) */
    bool last_cond;
    bool entry;    /* first is the first instruction of a function symbol */
    bool simple;   /* walked, and all in one function (npieces 1): the block fast path */
    uint32_t func; /* function of the first piece */
    /* The range that followed this one last time (TK_PAIR_NONE: none yet), one for each
     * outcome of the conditional branch that ends it ([1] taken; [0] for every other end):
     * flow repeats, so the next range is usually found without a lookup. Likewise the last
     * taken edge out of this range and the last run that ended with it: checked before any
     * hashing. */
    uint32_t succ[2], edge, run;
    prof_call_memo call;  /* when the range ends with a call */
    uint64_t fall;        /* last + last_len: where sequential flow goes on */
    uint64_t last_target; /* direct target of the last instruction, 0 if none */
    /* succ[i] for on_blocks, when it is simple. */
    prof_next next[2];
    /* The run that ended with this range last time (run) started at run_from (UINT64_MAX:
     * none yet). Its ends since are counted here, run_hits of them entered by a return in
     * run_ar, and added to runs[run] when another run ends here or at finish. (run_from
     * apart from the two counts: adjacent, GCC bumps them as a vector, in 7 instructions.) */
    uint64_t run_hits, run_from, run_ar;
} prof_range;

/* The range record of a basic block of a TK_EV_BLOCKS producer's image: the block pointer
 * identifies the block (ids of another image's blocks would collide), NULL: none yet. */
typedef struct prof_block_ref {
    const tk_bblock *block;
    uint32_t range;
} prof_block_ref;

/* A direct-mapped cache in front of a tk_pair_map (profile.c): the records the event stream
 * hits again and again are found with one probe and no hashing of both keys. */
/* Flat level (profile_flat.c): the counters of a TK_EV_BLOCKS producer's block, indexed by
 * its id, bumped by the inner loop and added to its range record at finish (or when another
 * image's block takes the id). block NULL: none yet. */
typedef struct prof_flat_blk {
    const tk_bblock *block;
    /* Executions by how they ended: [0] not with TK_END_BRANCH, [1] a branch not taken,
     * [2] a branch taken. */
    uint64_t out[3];
    uint64_t entered; /* executions that entered its function (flat_enter's rules) */
    uint32_t range;   /* its range record */
    uint32_t ninsn;
    uint32_t func;
    uint8_t flags; /* PROF_FLAT_* */
} prof_flat_blk;
#define PROF_FLAT_SLOW 1u  /* spans two functions or did not walk: the general path */
#define PROF_FLAT_ENTRY 2u /* starts a function: flow into it may be an entry */
#define PROF_FLAT_COND 4u  /* ends with a conditional branch */
#define PROF_FLAT_ANY 8u   /* set in every block: after a call or return, the stack moves */

typedef struct prof_pair_cache {
    uint64_t a, b;
    uint32_t value; /* TK_PAIR_NONE: empty */
} prof_pair_cache;
#define PROF_PAIR_CACHE_SLOTS 1024u

typedef struct prof_piece {
    uint64_t first;
    uint32_t func;
    uint32_t ninsn;
} prof_piece;

typedef struct prof_frame {
    uint32_t func;
    uint32_t ctx;  /* calling-context tree node */
    uint32_t call; /* call edge that created it, TK_PAIR_NONE for a root */
    bool trap;
    uint64_t site; /* calling instruction */
    uint64_t ret;  /* expected return address, UINT64_MAX for a root */
    uint64_t snap; /* instruction total when pushed */
} prof_frame;

/* What the previous event asks the call stack to do with the next range. */
typedef enum prof_action {
    ACT_FLOW = 0, /* sequential flow, branch or jump (0: action_after's table) */
    ACT_START,    /* nothing known: start a fresh stack */
    ACT_CALL,
    ACT_RETURN,
    ACT_XRET,
    ACT_TRAP,
} prof_action;

#define TK_PROF_MAX_DEPTH 8192

/* Per calling-context node (parallel to tk_profile.ctxs): the last call out of it, and the
 * last tail transfer that replaced its frame (by a sibling: another function's frame from
 * the same call site). Calls and tail transfers repeat, so the node entered and the call
 * edge are usually found without hashing. The tail transfer is kept by the node replaced,
 * not by the parent, so that two children's tail transfers do not evict each other. */
typedef struct prof_ctx_memo_1 {
    uint32_t child; /* last child node entered, TK_PAIR_NONE: none yet */
    uint32_t call;  /* the call edge of that entry */
} prof_ctx_memo_1;
typedef struct prof_ctx_memo {
    prof_ctx_memo_1 m[2]; /* [0] calls and traps out of the node, [1] tail transfer */
} prof_ctx_memo;

struct tk_profile {
    tk_code_view code;
    bool finished;
    bool flat; /* TK_PROFILE_FLAT: block counters only (profile_flat.c) */
    /* Every range and block through range_step, the general path, and every call stack
     * change through tk_cs_enter with its memos off, hashing (tk_prof_set_general_only:
     * for tests that compare it with the fast paths and memos). */
    bool general_only;
    /* Flat level: the function the previous range ended in (the full level's top of stack),
     * TK_PAIR_NONE after a restart, and how deep the full level's stack would be if every
     * return matched (0 after a restart). */
    uint32_t flat_top, flat_depth;
    prof_flat_blk *flat_blk; /* by tk_bblock.id */
    size_t cap_flat_blk;
    tk_profile_totals totals;

    prof_range *ranges;
    size_t nranges, cap_ranges;
    tk_pair_map range_map;
    prof_pair_cache *range_cache; /* PROF_PAIR_CACHE_SLOTS each, in front of the maps */
    prof_pair_cache *edge_cache;
    prof_pair_cache *run_cache;
    prof_pair_cache *ctx_cache;  /* in front of ctx_map (call_stack.c) */
    prof_pair_cache *call_cache; /* in front of call_map */
    prof_piece *pieces;
    size_t npieces, cap_pieces;
    uint64_t *inner_branches; /* addresses of conditional branches inside ranges */
    size_t ninner, cap_inner;

    tk_prof_func *funcs;
    size_t nfuncs, cap_funcs;
    tk_pair_map func_map; /* (symbol address, 0) -> function */

    tk_prof_call *calls;
    size_t ncalls, cap_calls;
    tk_pair_map call_map; /* (site, callee) */
    /* Per call edge, how many of its calls are on the shadow stack now: only the outermost
     * one's instructions go into the edge's inclusive count, so recursion through the same
     * edge is not counted twice (parallel to calls). */
    uint32_t *call_open;
    size_t cap_call_open;

    tk_prof_ctx *ctxs;
    size_t nctxs, cap_ctxs;
    prof_ctx_memo *ctx_memo; /* parallel to ctxs */
    size_t cap_ctx_memo;
    tk_pair_map ctx_map; /* (parent, func) */

    tk_prof_edge *edges;
    size_t nedges, cap_edges;
    tk_pair_map edge_map; /* (from, to) */

    tk_prof_run *runs;
    size_t nruns, cap_runs;
    tk_pair_map run_map; /* (start, last) */

    /* TK_EV_BLOCKS: the range record of each basic block, indexed by tk_bblock.id. */
    prof_block_ref *block_range;
    size_t cap_block_range;

    prof_frame *stack;
    size_t depth, cap_stack;
    /* Instructions executed so far (every piece of every range goes through the call stack):
     * the base of call edges' inclusive counts and of the context-tree nodes' counts, which
     * are added when a frame is popped (tk_cs_pop). */
    uint64_t cs_total;

    /* Flow state between events. */
    bool have_prev;            /* the previous range connects to the next one */
    uint32_t prev_range;       /* index of the previous range */
    uint8_t prev_end;          /* its tk_range_end */
    bool prev_taken;           /* it ended with a conditional branch taken (for ranges' succ) */
    prof_action action;        /* for the next range */
    uint64_t trap_site;        /* ACT_TRAP: epc */
    uint64_t prev_last_opaque; /* last address of the previous range when it was opaque */
    bool run_open;
    bool run_after_return; /* the open run was entered by a return */
    uint64_t run_start;
    bool have_context;
    uint64_t context;

    /* Derived at finish. */
    tk_prof_insn *insns;
    size_t ninsns;
    tk_prof_block *blocks;
    size_t nblocks;
    tk_prof_branch *branches;
    size_t nbranches;
};

/* call_stack.c: the shadow call stack, driven by the collector. */
/* Enter the range piece starting at first in func: act says how flow got there, site is
 * the instruction that transferred control, ret the address after it; entry tells whether
 * first is the function's first instruction. memo (may be NULL): the call site's memo, for
 * ACT_CALL. */
tk_status tk_cs_enter(tk_profile *p, prof_action act, uint64_t site, uint64_t ret, uint64_t first,
                      uint32_t func, bool entry, prof_call_memo *memo);
void tk_cs_reset(tk_profile *p);
/* At finish, with the stack empty: context nodes' self counts and functions' entries from
 * what the stack counted (tk_cs_pop, tk_cs_store_call). */
void tk_prof_cs_finish(tk_profile *p);

/* The stack operations that tk_cs_enter does most, inline for the collector's loops. */

/* Push f (the stack has room for it). */
static inline void tk_cs_store(tk_profile *p, const prof_frame *f)
{
    p->stack[p->depth++] = *f;
    if (p->depth > p->totals.max_depth)
        p->totals.max_depth = p->depth;
}

/* Push f, entered along call edge f->call (the stack has room for it). The callee's entries
 * are the calls of its edges, added at finish (tk_prof_cs_finish). */
static inline void tk_cs_store_call(tk_profile *p, const prof_frame *f)
{
    p->calls[f->call].calls++;
    tk_cs_store(p, f);
    p->call_open[f->call]++;
}

/* Pop the top frame. Until finish, a context node's self count holds every instruction run
 * while one of its frames was on the stack, its subtree's count: a node is on the stack at
 * most once (its depth is its path's length), and it is cheaper to add this once per frame
 * than to add the top's share at every push and pop. tk_prof_cs_finish takes the children's
 * counts off. */
static inline void tk_cs_pop(tk_profile *p)
{
    const prof_frame *f = &p->stack[--p->depth];
    const uint64_t ran = p->cs_total - f->snap;
    p->ctxs[f->ctx].self += ran;
    if (f->call != TK_PAIR_NONE && --p->call_open[f->call] == 0)
        p->calls[f->call].inclusive += ran;
}

/* tk_cs_enter(p, ACT_CALL, site, ret, first, func, entry, m) when the call site's memo m
 * names this call (the same function from the same context as last time) and the stack
 * has room: most calls. Returns false, having done nothing, otherwise. */
static inline bool tk_cs_call_memo(tk_profile *p, const prof_call_memo *m, uint32_t func,
                                   uint64_t site, uint64_t ret)
{
    const size_t d = p->depth;
    if (!d || d >= TK_PROF_MAX_DEPTH || d == p->cap_stack || m->func != func ||
        m->parent != p->stack[d - 1].ctx)
        return false;
    const prof_frame f = {.func = func,
                          .ctx = m->child,
                          .call = m->call,
                          .trap = false,
                          .site = site,
                          .ret = ret,
                          .snap = p->cs_total};
    tk_cs_store_call(p, &f);
    return true;
}

/* tk_cs_enter(p, ACT_RETURN, ..., first, func, ...) when the top frame expects the return
 * to first and the frame below runs func: most returns. Returns false, having done nothing,
 * otherwise. */
static inline bool tk_cs_return_top(tk_profile *p, uint64_t first, uint32_t func)
{
    const size_t d = p->depth;
    if (d < 2 || p->stack[d - 1].ret != first || p->stack[d - 2].func != func)
        return false;
    tk_cs_pop(p);
    return true;
}

/* Whether context node memo m (prof_ctx_memo_1) has the call edge from site to func. */
static inline bool tk_cs_ctx_memo_hit(const tk_profile *p, const prof_ctx_memo_1 *m, uint32_t func,
                                      uint64_t site, bool trap)
{
    return m->child != TK_PAIR_NONE && p->ctxs[m->child].func == func &&
           p->calls[m->call].site == site && p->calls[m->call].trap == trap;
}

/* Replacing the top frame by one for func (a tail transfer, not from the outermost frame)
 * when the top node's memo has that transfer (the same one as last time): the new frame
 * keeps the call site and return address. Returns false, having done nothing, otherwise. */
static inline bool tk_cs_tail_memo(tk_profile *p, uint32_t func)
{
    const size_t d = p->depth;
    if (d < 2)
        return false;
    const prof_frame *top = &p->stack[d - 1];
    const prof_ctx_memo_1 *m = &p->ctx_memo[top->ctx].m[1];
    if (top->func == func || !tk_cs_ctx_memo_hit(p, m, func, top->site, top->trap))
        return false;
    const prof_frame f = {.func = func,
                          .ctx = m->child,
                          .call = m->call,
                          .trap = top->trap,
                          .site = top->site,
                          .ret = top->ret,
                          .snap = p->cs_total};
    tk_cs_pop(p);
    tk_cs_store_call(p, &f);
    return true;
}

/* tk_cs_enter, with the usual call and return done inline. */
static inline tk_status tk_cs_go(tk_profile *p, prof_action act, uint64_t site, uint64_t ret,
                                 uint64_t first, uint32_t func, bool entry, prof_call_memo *memo)
{
    if (act == ACT_CALL ? memo && tk_cs_call_memo(p, memo, func, site, ret)
                        : act == ACT_RETURN && tk_cs_return_top(p, first, func))
        return TK_OK;
    return tk_cs_enter(p, act, site, ret, first, func, entry, memo);
}

/* profile.c */
/* Adds the passes on_blocks counted in successor slot nx to its edge and empties the slot's
 * count: before the slot changes, and at finish. */
static inline void tk_prof_next_flush(tk_profile *p, prof_next *nx)
{
    if (nx->block && nx->edge != TK_PAIR_NONE)
        p->edges[nx->edge].count += nx->hits;
    nx->hits = 0;
}
/* Adds the run ends counted in r to its run and empties the count: before r's run changes,
 * and at finish. */
static inline void tk_prof_run_flush(tk_profile *p, prof_range *r)
{
    if (r->run != TK_PAIR_NONE) {
        p->runs[r->run].count += r->run_hits;
        p->runs[r->run].after_return += r->run_ar;
    }
    r->run_hits = r->run_ar = 0;
}
tk_status tk_prof_func_of(tk_profile *p, uint64_t addr, uint32_t *func, bool *entry);
/* The record of range first..last (ninsn: the producer's instruction count, used when the
 * range does not walk in the code), made on first sight. */
tk_status tk_prof_range_of(tk_profile *p, uint64_t first, uint64_t last, uint64_t ninsn,
                           uint32_t *out);
/* The range record of block b, found by hashing and remembered under b->id. */
tk_status tk_prof_block_range_slow(tk_profile *p, const tk_bblock *b, uint32_t *out);
/* The flow is interrupted: the next range does not follow the previous one. */
tk_status tk_prof_flow_break(tk_profile *p);

/* For tests: count every range event and block entry with the general path only, and
 * find every call's context node and call edge by hashing, so the fast paths (simple_step,
 * the batch loop of on_blocks, tk_cs_go) and the memos can be checked against it. */
void tk_prof_set_general_only(tk_profile *p, bool on);

/* profile_flat.c: the flat collection level (TK_PROFILE_FLAT). */
tk_status tk_prof_flat_range(tk_profile *p, const tk_event *ev);
tk_status tk_prof_flat_blocks(tk_profile *p, const tk_event *ev);
/* Add the per-block counters to the range records, functions and the instruction total
 * (at finish). */
void tk_prof_flat_fold(tk_profile *p);
/* The instruction total so far (cs_total and what the per-block counters hold). */
uint64_t tk_prof_flat_insns(const tk_profile *p);

/* profile_finish.c */
tk_status tk_prof_derive(tk_profile *p);

/* Shared writer helpers (out_util.c). */
const char *tk_prof_func_name(const tk_profile *p, uint32_t func);
/* False for the pseudo-function that holds code outside every symbol. */
bool tk_prof_func_known(const tk_profile *p, uint32_t func);
extern const char tk_prof_unknown_name[];
/* Write formatted text; returns TK_ERR_IO once any write fails. */
tk_status tk_out_status(FILE *out);

static inline prof_pair_cache *cache_slot(prof_pair_cache *c, uint64_t a, uint64_t b)
{
    const uint64_t h = (a ^ (b << 7) ^ (b >> 9)) * 0x9e3779b97f4a7c15ull;
    return &c[(h >> 40) & (PROF_PAIR_CACHE_SLOTS - 1)];
}

/* The value cached for (a, b), or TK_PAIR_NONE: values never change once stored, so a
 * cached (a, b) is the map's answer. */
static inline uint32_t cache_find(prof_pair_cache *c, uint64_t a, uint64_t b)
{
    const prof_pair_cache *slot = cache_slot(c, a, b);
    return slot->a == a && slot->b == b ? slot->value : TK_PAIR_NONE;
}

/* tk_pair_map_put with a direct-mapped cache in front (cache_find). */
static inline tk_status cached_put(tk_pair_map *m, prof_pair_cache *c, uint64_t a, uint64_t b,
                                   uint32_t *value, int *inserted)
{
    /* (*value is the index to give (a, b) if it is new: not overwritten by a miss) */
    const uint32_t cached = cache_find(c, a, b);
    if (cached != TK_PAIR_NONE) {
        *value = cached;
        *inserted = 0;
        return TK_OK;
    }
    prof_pair_cache *slot = cache_slot(c, a, b);
    tk_status st = tk_pair_map_put(m, a, b, value, inserted);
    if (st == TK_OK)
        *slot = (prof_pair_cache){.a = a, .b = b, .value = *value};
    return st;
}

static inline prof_action action_after(uint8_t end)
{
    /* By tk_range_end: calls, returns and xRET; all else (any other byte too) is flow. A
     * table of every byte needs no bounds check in the collector's loops. */
    static const uint8_t act[256] = {
        [TK_END_CALL] = ACT_CALL, [TK_END_RETURN] = ACT_RETURN, [TK_END_TRAP_RETURN] = ACT_XRET};
    _Static_assert(ACT_FLOW == 0, "unlisted ends are flow");
    return (prof_action)act[end];
}

/* A conditional branch ending the previous range whose outcome the event did not state is
 * resolved by where flow went next (the next range's first instruction, or a trap's epc). */
static inline void resolve_branch(tk_profile *p, uint64_t next)
{
    prof_range *pr = &p->ranges[p->prev_range];
    if (pr->last_cond && p->prev_end != TK_END_BRANCH) {
        if (next == pr->fall)
            pr->not_taken++;
        else if (next == pr->last_target)
            pr->taken++;
    }
}

/* The range record for a range event: the previous record's successor when it matches (a
 * range usually follows the one it followed last time), else a lookup, remembered as that
 * successor. */
static inline tk_status range_for_event(tk_profile *p, const tk_event *ev, uint32_t *out)
{
    if (p->have_prev) {
        const uint32_t h = p->ranges[p->prev_range].succ[p->prev_taken];
        if (h != TK_PAIR_NONE && p->ranges[h].first == ev->first && p->ranges[h].last == ev->last) {
            *out = h;
            return TK_OK;
        }
    }
    tk_status st = tk_prof_range_of(p, ev->first, ev->last, ev->ninsn, out);
    if (st == TK_OK && p->have_prev) {
        tk_prof_next_flush(p, &p->ranges[p->prev_range].next[p->prev_taken]);
        p->ranges[p->prev_range].succ[p->prev_taken] = *out;
        p->ranges[p->prev_range].next[p->prev_taken].block = NULL;
    }
    return st;
}

/* After range record ri (r) was counted: its branch outcome, what the next range's start
 * means (action), and whether the flow goes on from it (bad: a range that did not fit the
 * code breaks the flow). */
static inline void range_done(tk_profile *p, prof_range *r, uint32_t ri, uint8_t end, bool taken,
                              bool bad)
{
    if (end == TK_END_BRANCH && r->last_cond) {
        if (taken)
            r->taken++;
        else
            r->not_taken++;
    }
    p->action = action_after(end);
    p->prev_end = end;
    p->prev_taken = end == TK_END_BRANCH && taken;
    if (bad) {
        p->have_prev = false;
        p->prev_last_opaque = r->last;
    } else {
        p->have_prev = true;
        p->prev_range = ri;
    }
}

#endif
