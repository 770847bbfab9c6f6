/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector: consumes trace events at range or block granularity. Each
 * TK_EV_RANGE costs at most one hash lookup (its distinct range record), plus one for a
 * taken transfer (edge and run) not seen from that range last time; a range is walked
 * instruction by instruction only the first time it is seen. A TK_EV_BLOCKS entry finds its
 * range record as the previous record's successor, else by block id; one that stays in the
 * function on top of the call stack after sequential flow, a branch or a jump only bumps
 * counters, and the usual call or return moves the stack inline (the fast path of
 * on_blocks); everything else takes the same path as a range. Per-instruction, block,
 * branch and function self counts are derived once, at tk_profile_finish(). */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "profile_internal.h"

const char tk_prof_unknown_name[] = "[unknown]";

tk_status tk_profile_new(const tk_code_view *code, tk_profile **out)
{
    return tk_profile_new_flags(code, 0, out);
}

tk_status tk_profile_new_flags(const tk_code_view *code, unsigned flags, tk_profile **out)
{
    if (!code || !code->insn || !code->symbolize || !out || (flags & ~(unsigned)TK_PROFILE_FLAT))
        return TK_ERR_INVALID;
    tk_profile *p = calloc(1, sizeof(*p));
    if (!p)
        return TK_ERR_NOMEM;
    p->code = *code;
    p->flat = flags & TK_PROFILE_FLAT;
    p->flat_top = TK_PAIR_NONE;
    p->action = ACT_START;
    p->range_cache = malloc(5 * PROF_PAIR_CACHE_SLOTS * sizeof(*p->range_cache));
    if (!p->range_cache) {
        free(p);
        return TK_ERR_NOMEM;
    }
    for (size_t i = 0; i < 5 * PROF_PAIR_CACHE_SLOTS; i++)
        p->range_cache[i].value = TK_PAIR_NONE;
    p->edge_cache = p->range_cache + PROF_PAIR_CACHE_SLOTS;
    p->run_cache = p->edge_cache + PROF_PAIR_CACHE_SLOTS;
    p->ctx_cache = p->run_cache + PROF_PAIR_CACHE_SLOTS;
    p->call_cache = p->ctx_cache + PROF_PAIR_CACHE_SLOTS;
    tk_pair_map_init(&p->range_map);
    tk_pair_map_init(&p->func_map);
    tk_pair_map_init(&p->call_map);
    tk_pair_map_init(&p->ctx_map);
    tk_pair_map_init(&p->edge_map);
    tk_pair_map_init(&p->run_map);
    *out = p;
    return TK_OK;
}

void tk_profile_free(tk_profile *p)
{
    if (!p)
        return;
    free(p->range_cache); /* the five caches are one allocation */
    free(p->ranges);
    free(p->pieces);
    free(p->inner_branches);
    free(p->funcs);
    free(p->calls);
    free(p->call_open);
    free(p->ctxs);
    free(p->ctx_memo);
    free(p->edges);
    free(p->runs);
    free(p->stack);
    free(p->block_range);
    free(p->flat_blk);
    free(p->insns);
    free(p->blocks);
    free(p->branches);
    tk_pair_map_fini(&p->range_map);
    tk_pair_map_fini(&p->func_map);
    tk_pair_map_fini(&p->call_map);
    tk_pair_map_fini(&p->ctx_map);
    tk_pair_map_fini(&p->edge_map);
    tk_pair_map_fini(&p->run_map);
    free(p);
}

/* The function holding addr; *entry tells whether addr is its first instruction. Code
 * outside every symbol is one pseudo-function. */
tk_status tk_prof_func_of(tk_profile *p, uint64_t addr, uint32_t *func, bool *entry)
{
    uint64_t off = 0;
    const tk_symbol *sym = p->code.symbolize(p->code.ctx, addr, &off);
    uint64_t key = sym ? addr - off : UINT64_MAX;
    uint32_t idx = (uint32_t)p->nfuncs;
    int inserted = 0;
    tk_status st = tk_pair_map_put(&p->func_map, key, 0, &idx, &inserted);
    if (st != TK_OK)
        return st;
    if (inserted) {
        st = TK_GROW(p->funcs, p->nfuncs, p->cap_funcs, p->nfuncs + 1);
        if (st != TK_OK)
            return st;
        tk_prof_func *f = &p->funcs[p->nfuncs++];
        memset(f, 0, sizeof(*f));
        f->name = sym ? sym->name : tk_prof_unknown_name;
        f->addr = sym ? key : 0;
        f->size = sym ? sym->size : 0;
    }
    *func = idx;
    if (entry)
        *entry = sym && off == 0;
    return TK_OK;
}

static tk_status add_piece(tk_profile *p, uint64_t first, uint32_t func)
{
    tk_status st = TK_GROW(p->pieces, p->npieces, p->cap_pieces, p->npieces + 1);
    if (st != TK_OK)
        return st;
    p->pieces[p->npieces++] = (prof_piece){.first = first, .func = func, .ninsn = 0};
    return TK_OK;
}

/* Walk first..last once: count instructions, note inner conditional branches, and split
 * where the range runs from one function into the next. Returns TK_ERR_NO_CODE/BAD_INSN/
 * MISMATCH when the range does not fit the code; the caller then keeps it opaque. */
static tk_status walk_range(tk_profile *p, prof_range *r)
{
    uint64_t addr = r->first;
    uint32_t func;
    tk_status st = tk_prof_func_of(p, addr, &func, NULL);
    if (st != TK_OK)
        return st;
    const tk_prof_func *f = &p->funcs[func];
    uint64_t fend = f->size ? f->addr + f->size : 0;
    if ((st = add_piece(p, addr, func)) != TK_OK)
        return st;
    r->npieces = 1;
    uint64_t n = 0;
    for (;;) {
        tk_code_insn in;
        if ((st = p->code.insn(p->code.ctx, addr, &in)) != TK_OK)
            return st;
        if (in.len == 0)
            return TK_ERR_BAD_INSN;
        /* Re-symbolize only when leaving the current symbol (or when it has no size). */
        if (addr != r->first && (!fend || addr >= fend || addr < f->addr)) {
            uint32_t nf;
            if ((st = tk_prof_func_of(p, addr, &nf, NULL)) != TK_OK)
                return st;
            f = &p->funcs[nf];
            fend = f->size ? f->addr + f->size : 0;
            if (nf != func) {
                if (r->npieces == UINT16_MAX)
                    return TK_ERR_OVERFLOW;
                if ((st = add_piece(p, addr, nf)) != TK_OK)
                    return st;
                r->npieces++;
                func = nf;
            }
        }
        p->pieces[p->npieces - 1].ninsn++;
        n++;
        if (addr == r->last) {
            r->last_len = in.len;
            r->last_cond = in.cond_branch;
            r->last_target = in.target;
            break;
        }
        if (in.cond_branch) {
            if (r->ninner == UINT16_MAX)
                return TK_ERR_OVERFLOW;
            if ((st = TK_GROW(p->inner_branches, p->ninner, p->cap_inner, p->ninner + 1)))
                return st;
            p->inner_branches[p->ninner++] = addr;
            r->ninner++;
        }
        addr += in.len;
        /* A last address not on an instruction boundary, or absurdly far, is a mismatch
         * between trace and code, not something to walk forever. */
        if (addr > r->last || n >= (1u << 24))
            return TK_ERR_MISMATCH;
    }
    r->ninsn = (uint32_t)n;
    return TK_OK;
}

/* The range records moved (the array grew): on_blocks' successor pointers follow. Growth
 * doubles the array, so this costs O(1) per record made. */
static void moved_ranges(tk_profile *p)
{
    for (size_t k = 0; k < p->nranges; k++)
        for (unsigned i = 0; i < 2; i++)
            if (p->ranges[k].next[i].block)
                p->ranges[k].next[i].range = &p->ranges[p->ranges[k].succ[i]];
}

/* The record of range first..last (ninsn: the producer's instruction count, used when the
 * range does not walk in the code), made on first sight. */
tk_status tk_prof_range_of(tk_profile *p, uint64_t first, uint64_t last, uint64_t ninsn,
                           uint32_t *out)
{
    uint32_t idx = (uint32_t)p->nranges;
    int inserted = 0;
    tk_status st = cached_put(&p->range_map, p->range_cache, first, last, &idx, &inserted);
    if (st != TK_OK)
        return st;
    *out = idx;
    if (!inserted)
        return TK_OK;
    const size_t cap0 = p->cap_ranges;
    if ((st = TK_GROW(p->ranges, p->nranges, p->cap_ranges, p->nranges + 1)) != TK_OK)
        return st;
    if (p->cap_ranges != cap0)
        moved_ranges(p);
    prof_range *r = &p->ranges[p->nranges++];
    memset(r, 0, sizeof(*r));
    r->succ[0] = r->succ[1] = r->edge = r->run = TK_PAIR_NONE;
    r->next[0].edge = r->next[1].edge = TK_PAIR_NONE;
    r->run_from = UINT64_MAX;
    r->call = (prof_call_memo){TK_PAIR_NONE, TK_PAIR_NONE, TK_PAIR_NONE, TK_PAIR_NONE};
    r->first = first;
    r->last = last;
    r->piece = (uint32_t)p->npieces;
    r->inner = (uint32_t)p->ninner;
    uint64_t off = 0;
    const tk_symbol *sym = p->code.symbolize(p->code.ctx, first, &off);
    r->entry = sym && off == 0;
    size_t npieces0 = p->npieces, ninner0 = p->ninner;
    /* (A range at UINT64_MAX cannot hold an instruction; run_from's "none" relies on it.) */
    st = last >= first && first != UINT64_MAX ? walk_range(p, r) : TK_ERR_MISMATCH;
    if (st == TK_ERR_NOMEM)
        return st;
    if (st != TK_OK) {
        /* Opaque range: one piece, the decoder's instruction count, no known end. */
        p->npieces = npieces0;
        p->ninner = ninner0;
        r->ninner = 0;
        r->last_len = 0;
        r->last_cond = false;
        uint32_t func;
        if ((st = tk_prof_func_of(p, first, &func, NULL)) != TK_OK)
            return st;
        if ((st = add_piece(p, first, func)) != TK_OK)
            return st;
        r = &p->ranges[idx];
        r->npieces = 1;
        r->ninsn = ninsn > UINT32_MAX ? UINT32_MAX : (uint32_t)ninsn;
        p->pieces[p->npieces - 1].ninsn = r->ninsn;
    }
    r = &p->ranges[idx];
    r->func = p->pieces[r->piece].func;
    r->fall = r->last + r->last_len;
    r->simple = r->npieces == 1 && r->last_len != 0;
    return TK_OK;
}

/* The element of pair (a, b) in the array *arr (*n used of *cap, elem bytes each), made on
 * first sight, zeroed (*made, if given, says whether it was). */
static tk_status count_pair(tk_pair_map *m, prof_pair_cache *c, void **arr, size_t *n, size_t *cap,
                            size_t elem, uint64_t a, uint64_t b, uint32_t *idx_out, bool *made)
{
    uint32_t idx = (uint32_t)*n;
    int inserted = 0;
    tk_status st = cached_put(m, c, a, b, &idx, &inserted);
    if (st != TK_OK)
        return st;
    if (inserted) {
        if ((st = tk_grow(arr, cap, *n + 1, elem)) != TK_OK)
            return st;
        memset((char *)*arr + *n * elem, 0, elem);
        (*n)++;
    }
    *idx_out = idx;
    if (made)
        *made = inserted;
    return TK_OK;
}

/* The edge from..to, made on first sight with its end (an edge keeps the end it was first
 * taken with: on_blocks does not look at edges when it counts them). */
static tk_status edge_of(tk_profile *p, uint64_t from, uint64_t to, uint8_t end, uint32_t *out)
{
    bool made;
    tk_status st = count_pair(&p->edge_map, p->edge_cache, (void **)&p->edges, &p->nedges,
                              &p->cap_edges, sizeof(*p->edges), from, to, out, &made);
    if (st == TK_OK && made)
        p->edges[*out] = (tk_prof_edge){.from = from, .to = to, .end = end};
    return st;
}

static tk_status add_edge(tk_profile *p, uint64_t from, uint64_t to, uint8_t end, uint32_t *out)
{
    uint32_t i;
    tk_status st = edge_of(p, from, to, end, &i);
    if (st != TK_OK)
        return st;
    p->edges[i].count++;
    if (out)
        *out = i;
    return TK_OK;
}

/* The open run ends with range pri's last instruction: the general case. A run seen before
 * is usually in the cache in front of the map (flow that returns to several callers ends
 * its runs at the same instruction from several starts, so the range's memo misses): found
 * there without the map's call (cache_find, as cached_put looks; not with general_only, whose
 * path the tests compare this with). */
static TK_NOINLINE tk_status close_run_slow(tk_profile *p, uint32_t pri)
{
    p->run_open = false;
    prof_range *r = &p->ranges[pri];
    tk_prof_run_flush(p, r);
    const uint64_t last = r->last;
    uint32_t i = p->general_only ? TK_PAIR_NONE : cache_find(p->run_cache, p->run_start, last);
    if (i == TK_PAIR_NONE) {
        tk_status st = count_pair(&p->run_map, p->run_cache, (void **)&p->runs, &p->nruns,
                                  &p->cap_runs, sizeof(*p->runs), p->run_start, last, &i, NULL);
        if (st != TK_OK)
            return st;
        p->runs[i].start = p->run_start;
        p->runs[i].last = last;
    }
    p->runs[i].count++;
    p->runs[i].after_return += p->run_after_return;
    r->run = i;
    r->run_from = p->run_start;
    return TK_OK;
}

/* The open run ends with range pri's last instruction. The run that ended there last time
 * is checked before any hashing, and counted in the range (tk_prof_run_flush). */
static inline tk_status close_run(tk_profile *p, uint32_t pri)
{
    if (!p->run_open)
        return TK_OK;
    prof_range *r = &p->ranges[pri];
    if (TK_LIKELY(r->run_from == p->run_start)) {
        p->run_open = false;
        r->run_hits++;
        r->run_ar += p->run_after_return;
        return TK_OK;
    }
    return close_run_slow(p, pri);
}

/* A taken transfer from range pri's last instruction to to that its memo does not have.
 * Returns go to several callers, so the memo of a range ending with a return misses often;
 * the edge is then usually in the cache in front of the map, and found there without the
 * map's call (as in close_run_slow, not with general_only). */
static TK_NOINLINE tk_status count_edge_slow(tk_profile *p, uint32_t pri, uint64_t to, uint8_t end)
{
    const uint64_t from = p->ranges[pri].last;
    const uint32_t ei = p->general_only ? TK_PAIR_NONE : cache_find(p->edge_cache, from, to);
    if (ei != TK_PAIR_NONE) {
        p->edges[ei].count++;
        p->ranges[pri].edge = ei;
        return TK_OK;
    }
    uint32_t out;
    tk_status st = add_edge(p, from, to, end, &out);
    if (st == TK_OK)
        p->ranges[pri].edge = out;
    return st;
}

/* A taken transfer from range pri's last instruction to to. The edge taken from there last
 * time is checked before any hashing. */
static inline tk_status count_edge(tk_profile *p, uint32_t pri, uint64_t to, uint8_t end)
{
    const uint32_t ei = p->ranges[pri].edge;
    if (TK_LIKELY(ei != TK_PAIR_NONE && p->edges[ei].to == to)) {
        p->edges[ei].count++;
        return TK_OK;
    }
    return count_edge_slow(p, pri, to, end);
}

/* The flow is interrupted (trap, lost trace, trace off, error): the next range does not
 * follow the previous one sequentially. */
tk_status tk_prof_flow_break(tk_profile *p)
{
    tk_status st = TK_OK;
    if (p->have_prev)
        st = close_run(p, p->prev_range);
    p->run_open = false;
    p->have_prev = false;
    return st;
}

/* One execution of range ri that ended as end says (taken: a conditional branch's outcome):
 * the general path, for every range event or block that simple_step does not take (after a
 * trap, a restart or an opaque range; a range that did not walk or spans two functions). */
static TK_NOINLINE tk_status range_step(tk_profile *p, uint32_t ri, uint8_t end, bool taken)
{
    tk_status st;
    prof_range *r = &p->ranges[ri];
    r->count++;
    p->totals.ranges++;
    bool bad = r->last_len == 0;
    if (bad)
        p->totals.bad_ranges++;

    prof_action act = p->action;
    uint64_t site = 0, ret = UINT64_MAX;
    if (act == ACT_TRAP) {
        site = ret = p->trap_site;
        if ((st = add_edge(p, p->trap_site, r->first, TK_END_TRAP, NULL)) != TK_OK)
            return st;
    } else if (p->have_prev) {
        resolve_branch(p, r->first);
        if (r->first != p->ranges[p->prev_range].fall) {
            if ((st = count_edge(p, p->prev_range, r->first, p->prev_end)) != TK_OK ||
                (st = close_run(p, p->prev_range)) != TK_OK)
                return st;
        }
        site = p->ranges[p->prev_range].last;
        ret = p->ranges[p->prev_range].fall;
    } else if (act != ACT_START) {
        /* Previous range was opaque: its last instruction is known, its length is not. */
        site = p->prev_last_opaque;
    }
    if (bad) {
        if ((st = tk_prof_flow_break(p)) != TK_OK)
            return st;
    } else if (!p->run_open) {
        p->run_open = true;
        p->run_start = r->first;
        p->run_after_return =
            p->have_prev && (p->prev_end == TK_END_RETURN || p->prev_end == TK_END_TRAP_RETURN);
    }

    for (uint32_t i = 0; i < r->npieces; i++) {
        /* r may move when the stack code adds functions: re-read through the index. */
        prof_piece pc = p->pieces[p->ranges[ri].piece + i];
        const prof_action piece_act = i == 0 ? act : ACT_FLOW;
        /* Flow that stays in the function on top of the stack leaves the stack as it is
         * (what tk_cs_enter would find): most ranges, so the call is skipped. */
        if (piece_act != ACT_FLOW || !p->depth || p->stack[p->depth - 1].func != pc.func) {
            /* Pieces after the first start where a function starts. */
            const bool entry = i == 0 ? p->ranges[ri].entry : true;
            prof_call_memo *memo =
                i == 0 && act == ACT_CALL && p->have_prev ? &p->ranges[p->prev_range].call : NULL;
            st = p->general_only
                     ? tk_cs_enter(p, piece_act, site, ret, pc.first, pc.func, entry, memo)
                     : tk_cs_go(p, piece_act, site, ret, pc.first, pc.func, entry, memo);
            if (st != TK_OK)
                return st;
        }
        p->cs_total += pc.ninsn;
    }

    r = &p->ranges[ri];
    range_done(p, r, ri, end, taken, bad);
    return TK_OK;
}

/* The range record of block b, found by hashing and remembered under b->id. A record found
 * under b->id is checked against b's addresses, so blocks of another image (ids reused)
 * are still counted right, only slower. */
TK_NOINLINE tk_status tk_prof_block_range_slow(tk_profile *p, const tk_bblock *b, uint32_t *out)
{
    uint32_t ri;
    tk_status st = tk_prof_range_of(p, b->start, b->last, b->ninsn, &ri);
    if (st != TK_OK)
        return st;
    if (b->id >= p->cap_block_range) {
        size_t old = p->cap_block_range;
        st = TK_GROW(p->block_range, old, p->cap_block_range, (size_t)b->id + 1);
        if (st != TK_OK)
            return st;
        memset(p->block_range + old, 0, (p->cap_block_range - old) * sizeof(*p->block_range));
    }
    p->block_range[b->id] = (prof_block_ref){.block = b, .range = ri};
    *out = ri;
    return TK_OK;
}

/* One execution of range ri that walked and lies in one function (r->simple), when flow
 * goes on from a range that walked (p->have_prev), counted exactly as range_step would count
 * it: a taken transfer finds its edge and run through the previous range's memos, and the
 * call stack is entered only when the previous range called, returned or left the function
 * on top of the stack. Most range events and TK_EV_BLOCKS entries that the batch loop of
 * on_blocks leaves come this way. */
static TK_ALWAYS_INLINE tk_status simple_step(tk_profile *p, uint32_t ri, uint8_t end, bool taken)
{
    tk_status st;
    prof_range *r = &p->ranges[ri];
    const uint32_t pri = p->prev_range;
    const prof_range *pr = &p->ranges[pri];
    const uint64_t first = r->first;
    r->count++;
    p->totals.ranges++;
    if (pr->last_cond && p->prev_end != TK_END_BRANCH)
        resolve_branch(p, first);
    if (first != pr->fall) {
        if ((st = count_edge(p, pri, first, p->prev_end)) != TK_OK ||
            (st = close_run(p, pri)) != TK_OK)
            return st;
    }
    if (!p->run_open) {
        p->run_open = true;
        p->run_start = first;
        p->run_after_return = p->prev_end == TK_END_RETURN || p->prev_end == TK_END_TRAP_RETURN;
    }
    if (p->action != ACT_FLOW || !p->depth || p->stack[p->depth - 1].func != r->func) {
        st = tk_cs_go(p, p->action, pr->last, pr->fall, first, r->func, r->entry,
                      &p->ranges[pri].call);
        if (st != TK_OK)
            return st;
    }
    p->cs_total += r->ninsn;
    range_done(p, r, ri, end, taken, false);
    return TK_OK;
}

static tk_status on_range(tk_profile *p, const tk_event *ev)
{
    uint32_t ri;
    tk_status st = range_for_event(p, ev, &ri);
    if (st != TK_OK)
        return st;
    if (p->have_prev && p->ranges[ri].simple && !p->general_only)
        return simple_step(p, ri, ev->end, ev->taken);
    return range_step(p, ri, ev->end, ev->taken);
}

/* One TK_EV_BLOCKS entry, counted exactly as range_step would count its range event: the
 * range record is found by block id, then simple ranges after a walked range take
 * simple_step. Everything else (a block after a trap, a restart or an opaque range, or one
 * that spans two functions) goes through range_step. */
static TK_NOINLINE tk_status block_step(tk_profile *p, const tk_block_exec *e)
{
    tk_status st;
    const tk_bblock *b = e->block;
    uint32_t ri;
    if (b->id < p->cap_block_range && p->block_range[b->id].block == b)
        ri = p->block_range[b->id].range;
    else if ((st = tk_prof_block_range_slow(p, b, &ri)) != TK_OK)
        return st;
    if (!p->have_prev || !p->ranges[ri].simple || p->general_only)
        return range_step(p, ri, e->end, e->taken);
    return simple_step(p, ri, e->end, e->taken);
}

/* Successor slot nx of range pr is now block b (range ri), reached after pr ended as end
 * says: the old slot's passes go to their edge, and the new slot gets the taken edge from pr
 * to ri (made on first sight), or none if ri follows sequentially. */
static TK_NOINLINE tk_status next_set(tk_profile *p, prof_range *pr, prof_next *nx, uint32_t ri,
                                      const tk_bblock *b, uint8_t end)
{
    tk_prof_next_flush(p, nx);
    uint32_t ei = TK_PAIR_NONE;
    const uint64_t first = p->ranges[ri].first;
    if (first != pr->fall && (ei = cache_find(p->edge_cache, pr->last, first)) == TK_PAIR_NONE) {
        tk_status st = edge_of(p, pr->last, first, end, &ei);
        if (st != TK_OK)
            return st;
    }
    pr->succ[nx - pr->next] = ri;
    *nx = (prof_next){.block = b, .range = &p->ranges[ri], .edge = ei};
    return TK_OK;
}

/* Range pr, which has no conditional branch, gets a new successor in slot 0: the one there
 * moves to slot 1, whose successor is dropped (its passes go to its edge). */
static TK_NOINLINE void next_demote(tk_profile *p, prof_range *pr)
{
    tk_prof_next_flush(p, &pr->next[1]);
    pr->next[1] = pr->next[0];
    pr->succ[1] = pr->succ[0];
    pr->next[0].hits = 0; /* they moved with the slot */
}

/* A TK_EV_BLOCKS batch. The inner loop counts the entries whose block is the one that
 * followed the previous range last time (else found under its id), that walked and lie in
 * one function, after a walked range whose branch outcome is stated, with the flow state in
 * locals. A taken transfer is counted in the previous range's successor slot (its edge) and
 * run memo (else hashed, out of line); the call stack is entered only when the previous
 * block called, returned or left the function on top of the stack, the usual call, return
 * and tail call inline (tk_cs_call_memo, tk_cs_return_top, tk_cs_tail_memo). The first
 * entry that is not of that kind goes through block_step, after the state is written back;
 * then the inner loop resumes. The loop keeps few values live, so that GCC keeps them in
 * registers: the previous range's successor slot (nx) stands for its branch outcome, and
 * the previous entry (e[-1]) for its end. */
static tk_status on_blocks(tk_profile *p, const tk_event *ev)
{
    const tk_block_exec *e = ev->blocks, *const stop = ev->blocks + ev->nblocks;
    tk_status st = TK_OK;
    while (e < stop && st == TK_OK) {
        /* A conditional branch whose outcome was not stated is resolved by block_step. A
         * run is open whenever the flow goes on from a walked range (range_step,
         * simple_step): the loop takes that for granted. */
        if (!p->have_prev || p->general_only || !p->run_open ||
            (p->ranges[p->prev_range].last_cond && p->prev_end != TK_END_BRANCH)) {
            st = block_step(p, e++);
            continue;
        }
        uint32_t top = p->depth ? p->stack[p->depth - 1].func : TK_PAIR_NONE;
        prof_range *pr = &p->ranges[p->prev_range];
        prof_next *nx = &pr->next[p->prev_taken];
        prof_action act = p->action;
        bool run_after_return = p->run_after_return;
        uint64_t run_start = p->run_start, total = p->cs_total;
        const tk_block_exec *const from = e;
        while (e < stop) {
            const tk_bblock *b = e->block;
            if (nx->block != b) {
                if (!pr->last_cond && pr->next[1].block == b) {
                    /* A range without a conditional branch keeps two successors (a return
                     * to two callers): the other one. */
                    nx = &pr->next[1];
                } else {
                    /* Not a block that followed last time: found by its id, and remembered
                     * only if simple, so that a remembered block needs no check. */
                    if (b->id >= p->cap_block_range || p->block_range[b->id].block != b)
                        break;
                    const uint32_t ri = p->block_range[b->id].range;
                    if (!p->ranges[ri].simple)
                        break;
                    if (!pr->last_cond)
                        next_demote(p, pr);
                    const uint8_t prev_end = e == from ? p->prev_end : e[-1].end;
                    if ((st = next_set(p, pr, nx, ri, b, prev_end)) != TK_OK)
                        break;
                }
            }
            prof_range *const r = nx->range;
            if (nx->edge != TK_PAIR_NONE) {
                /* A taken transfer: its edge is the slot's, counted there. The run open
                 * since run_start ends; the next one starts here. */
                nx->hits++;
                if (TK_LIKELY(pr->run_from == run_start)) {
                    pr->run_hits++;
                    pr->run_ar += run_after_return;
                } else {
                    p->run_start = run_start;
                    p->run_after_return = run_after_return;
                    if ((st = close_run_slow(p, (uint32_t)(pr - p->ranges))) != TK_OK)
                        break;
                    p->run_open = true;
                }
                run_start = r->first;
                run_after_return = act == ACT_RETURN || act == ACT_XRET;
            }
            if (act != ACT_FLOW || r->func != top) {
                /* The call stack reads only the instruction total of the flow state. The
                 * usual call, return and tail call are done inline. */
                p->cs_total = total;
                if (act == ACT_CALL ? !tk_cs_call_memo(p, &pr->call, r->func, pr->last, pr->fall)
                    : act == ACT_RETURN
                        ? !tk_cs_return_top(p, r->first, r->func)
                        : act != ACT_FLOW || !r->entry || !tk_cs_tail_memo(p, r->func)) {
                    /* tk_cs_go spelled out: st is then set only here, and GCC keeps more of
                     * the flow state in registers (1.9 M Ir less on dhrystone x10). */
                    st = tk_cs_enter(p, act, pr->last, pr->fall, r->first, r->func, r->entry,
                                     &pr->call);
                    if (st != TK_OK)
                        break;
                }
                /* tk_cs_enter leaves func on top. */
                top = r->func;
            }
            r->count++;
            total += r->ninsn;
            const uint8_t end = e->end;
            const bool taken = e->taken;
            e++;
            act = action_after(end);
            pr = r;
            nx = &r->next[0];
            if (r->last_cond) {
                /* Without a stated outcome, where the flow goes next tells (block_step). */
                if (end != TK_END_BRANCH)
                    break;
                nx += taken;
                if (taken)
                    r->taken++;
                else
                    r->not_taken++;
            }
        }
        p->totals.ranges += (uint64_t)(e - from);
        p->prev_range = (uint32_t)(pr - p->ranges);
        if (e != from)
            p->prev_end = e[-1].end;
        p->prev_taken = pr->last_cond && nx != pr->next;
        p->action = act;
        p->run_after_return = run_after_return;
        p->run_start = run_start;
        p->cs_total = total;
        if (st == TK_OK && e < stop)
            st = block_step(p, e++);
    }
    return st;
}

void tk_prof_set_general_only(tk_profile *p, bool on)
{
    p->general_only = on;
}

/* Lost trace, trace off/on, decode errors: the flow and the call stack start anew. */
static tk_status restart(tk_profile *p)
{
    tk_status st = tk_prof_flow_break(p);
    tk_cs_reset(p);
    p->flat_top = TK_PAIR_NONE;
    p->flat_depth = 0;
    p->action = ACT_START;
    return st;
}

tk_status tk_profile_event(void *vp, const tk_event *ev)
{
    tk_profile *p = vp;
    if (!p || !ev)
        return TK_ERR_INVALID;
    if (p->finished)
        return TK_ERR_STATE;
    tk_status st;
    if (ev->kind == TK_EV_BLOCKS) {
        if (ev->nblocks && !ev->blocks)
            return TK_ERR_INVALID;
        /* Each entry is one range event. */
        p->totals.events += ev->nblocks;
        return p->flat ? tk_prof_flat_blocks(p, ev) : on_blocks(p, ev);
    }
    p->totals.events++;
    switch (ev->kind) {
    case TK_EV_RANGE:
        return p->flat ? tk_prof_flat_range(p, ev) : on_range(p, ev);
    case TK_EV_TRAP:
        p->totals.traps++;
        if (ev->interrupt)
            p->totals.interrupts++;
        /* E-Trace: an exception's epc is the trapping instruction; an interrupt's is the
         * next instruction that would have run. Either way the handler is "called" from
         * there and xRET returns to it (or past it, for ecall). Being the next instruction
         * in program order, epc also tells which way a branch just before went. */
        if (p->have_prev)
            resolve_branch(p, ev->first);
        if ((st = tk_prof_flow_break(p)) != TK_OK)
            return st;
        p->action = ACT_TRAP;
        p->trap_site = ev->first;
        return TK_OK;
    case TK_EV_LOST:
        p->totals.lost++;
        return restart(p);
    case TK_EV_ERROR:
        p->totals.errors++;
        return restart(p);
    case TK_EV_TRACE_OFF:
        p->totals.trace_off++;
        return restart(p);
    case TK_EV_TRACE_ON:
        p->totals.trace_on++;
        return restart(p);
    case TK_EV_CONTEXT:
        /* A change of context (process, address space) makes the shadow stack stale. Only
         * a real change counts: decoders may repeat the context at each sync. */
        if (p->have_context && ev->context != p->context)
            st = restart(p);
        else
            st = TK_OK;
        p->have_context = true;
        p->context = ev->context;
        return st;
    default:
        return TK_OK;
    }
}

tk_status tk_profile_finish(tk_profile *p)
{
    if (!p)
        return TK_ERR_INVALID;
    if (p->finished)
        return TK_ERR_STATE;
    tk_status st = tk_prof_flow_break(p);
    if (st != TK_OK)
        return st;
    tk_cs_reset(p);
    if (!p->flat)
        tk_prof_cs_finish(p);
    /* The edges and runs that on_blocks counted in the range records. */
    for (size_t i = 0; i < p->nranges; i++) {
        tk_prof_next_flush(p, &p->ranges[i].next[0]);
        tk_prof_next_flush(p, &p->ranges[i].next[1]);
        tk_prof_run_flush(p, &p->ranges[i]);
    }
    p->finished = true;
    if (p->flat)
        tk_prof_flat_fold(p);
    p->totals.insns = p->cs_total;
    return tk_prof_derive(p);
}

void tk_profile_get_totals(const tk_profile *p, tk_profile_totals *out)
{
    *out = p->totals;
    /* Every instruction of every range is counted through the call stack (the flat level:
     * in cs_total or, until finish, in the per-block counters). */
    out->insns = p->flat && !p->finished ? tk_prof_flat_insns(p) : p->cs_total;
}

size_t tk_profile_func_count(const tk_profile *p)
{
    return p->nfuncs;
}

const tk_prof_func *tk_profile_func(const tk_profile *p, size_t i)
{
    return i < p->nfuncs ? &p->funcs[i] : NULL;
}

size_t tk_profile_call_count(const tk_profile *p)
{
    return p->ncalls;
}

const tk_prof_call *tk_profile_call(const tk_profile *p, size_t i)
{
    return i < p->ncalls ? &p->calls[i] : NULL;
}

size_t tk_profile_edge_count(const tk_profile *p)
{
    return p->nedges;
}

const tk_prof_edge *tk_profile_edge(const tk_profile *p, size_t i)
{
    return i < p->nedges ? &p->edges[i] : NULL;
}

size_t tk_profile_run_count(const tk_profile *p)
{
    return p->nruns;
}

const tk_prof_run *tk_profile_run(const tk_profile *p, size_t i)
{
    return i < p->nruns ? &p->runs[i] : NULL;
}

size_t tk_profile_ctx_count(const tk_profile *p)
{
    return p->nctxs;
}

const tk_prof_ctx *tk_profile_ctx(const tk_profile *p, size_t i)
{
    return i < p->nctxs ? &p->ctxs[i] : NULL;
}
