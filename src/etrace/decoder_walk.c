/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: following the execution path (decoder.adoc follow_execution_path and
 * next_pc). The walk goes block by block through the image's block cache: instructions
 * inside a block are sequential, so the only per-instruction question there is whether the
 * reported address lies inside the block, which one range comparison answers. */
#include <string.h>

#include "decoder_int.h"
#include "walk_memo.h"
#include "util/compiler.h"

enum { ARRIVE_GO_ON = 0, ARRIVE_STOP = 1 };

/* Bounds of tk_dec_idle_limit(). */
#define TK_DEC_MIN_IDLE_BLOCKS 4096u
#define TK_DEC_MAX_IDLE_BLOCKS (1u << 24)

static bool is_uninferable_jump(const tk_rv_insn *i)
{
    /* JALR with rs1 != 0; c.jr and c.jalr decode as JALR with rs1 != 0. JALR with rs1 == 0
     * jumps to an absolute address known from the code (treated as inferable, as the
     * reference model and post-iss do). */
    return i->cf == TK_RV_CF_JALR && i->rs1 != 0;
}

bool tk_dec_is_uninferable_discon(const tk_te_decoder *d, const tk_rv_insn *i)
{
    if (is_uninferable_jump(i) || i->cf == TK_RV_CF_XRET)
        return true;
    /* decoder.adoc before 2025 (and decoder_model.py) list ecall/ebreak/c.ebreak too. */
    if (i->cf == TK_RV_CF_ECALL || i->cf == TK_RV_CF_EBREAK)
        return !(d->flags & TK_TE_DEC_ECALL_SEQUENTIAL);
    return false;
}

int tk_dec_block(tk_te_decoder *d, uint64_t pc, const tk_bblock **out)
{
    const tk_bblock **near = &d->near[(pc >> 1) & (TK_DEC_NEAR_BLOCKS - 1)];
    if (*near && (*near)->start == pc) {
        *out = *near;
        return TK_OK;
    }
    tk_status st = tk_image_block(d->img, pc, out);
    if (st == TK_OK && (*out)->ninsn > 0) {
        *near = *out;
        return TK_OK;
    }
    if (st == TK_ERR_NOMEM)
        return st;
    /* pc was reached but has no code: it is not a retired instruction, do not report it. */
    if (d->range_ninsn == 1 && d->range_first == pc)
        d->range_ninsn = 0;
    if (st == TK_OK)
        st = (*out)->status != TK_OK ? (*out)->status : TK_ERR_NO_CODE;
    return tk_dec_fail(d, st == TK_ERR_BAD_INSN ? TK_ERR_BAD_INSN : TK_ERR_NO_CODE,
                       "%s at 0x%llx (trace does not fit the program image)",
                       st == TK_ERR_BAD_INSN ? "undecodable instruction" : "no code",
                       (unsigned long long)pc);
}

int tk_dec_insn_at(tk_te_decoder *d, uint64_t pc, tk_rv_insn *out)
{
    tk_status st = tk_image_fetch(d->img, pc, out);
    if (st == TK_OK)
        return TK_OK;
    if (st == TK_ERR_NOMEM)
        return st;
    return tk_dec_fail(d, st == TK_ERR_BAD_INSN ? TK_ERR_BAD_INSN : TK_ERR_NO_CODE,
                       "%s at 0x%llx (trace does not fit the program image)",
                       st == TK_ERR_BAD_INSN ? "undecodable instruction" : "no code",
                       (unsigned long long)pc);
}

/* is_implicit_return(): a return (2.0 jump classes, the same as the ingress itype 13 the
 * encoder sees) while the tracker predicts one, unless the packet being followed reports
 * this very return explicitly (irreport with the current depth, decoder.adoc). */
static bool is_implicit_return(const tk_te_decoder *d, const tk_rv_insn *i, const tk_dec_walk *w)
{
    if (!d->p.o.implicit_return || d->ir.depth == 0)
        return false;
    if (!(i->cf == TK_RV_CF_JALR && i->jclass == TK_RV_J_RETURN))
        return false;
    if (!(w && w->irreport && tk_te_irdepth_matches(&d->ir, &d->p, w->irdepth)))
        return true;
    /* The reported return is the last thing before its target: every branch of the packet
     * but the target's own is behind it. An earlier return at the same depth (with branches
     * still to come) was predicted. */
    return tk_dec_pending(d) != (w->target_branch ? 1u : 0u);
}

/* The outcome of the next branch: a branch-map bit, else a predicted branch, else the one
 * that failed its prediction (format 0 subformat 0). The predictor learns every outcome. */
static bool take_branch(tk_te_decoder *d, uint64_t pc, bool dry)
{
    bool taken;
    if (d->branches) {
        taken = !(d->branch_map & 1);
        if (!dry) {
            d->branch_map >>= 1;
            d->branches--;
        }
    } else {
        taken = tk_te_bpred_predict(&d->bp, pc);
        if (d->pred_pending) {
            if (!dry)
                d->pred_pending--;
        } else {
            taken = !taken;
            if (!dry)
                d->fail_pending = false;
        }
    }
    if (!dry && d->p.o.branch_prediction)
        tk_te_bpred_update(&d->bp, pc, taken);
    return taken;
}

int tk_dec_exec(tk_te_decoder *d, const tk_rv_insn *insn, uint64_t this_pc, const tk_rv_insn *prev,
                uint64_t prev_pc, uint64_t uninf_target, const tk_dec_walk *w, bool dry,
                tk_dec_step *out)
{
    memset(out, 0, sizeof(*out));
    out->end = tk_rv_range_end(insn);
    uint64_t next = this_pc + insn->len;

    if (insn->cf == TK_RV_CF_JAL) {
        next = this_pc + (uint64_t)insn->imm;
        /* Not in the spec: a jump to itself would loop for ever (decoder_model.py stops). */
        out->stop_here = insn->imm == 0;
    } else if (insn->cf == TK_RV_CF_JALR && insn->rs1 == 0) {
        next = (uint64_t)insn->imm;
        out->stop_here = (next & d->addr_mask) == this_pc;
    } else if (is_uninferable_jump(insn) && d->p.o.sijump && prev &&
               tk_rv_is_sijump_pair(prev, insn)) {
        /* sequentially inferable jump: auipc/lui/c.lui then jalr through the same register */
        next = tk_rv_sijump_target(prev, prev_pc, insn, d->xlen);
        out->inferred = true;
    } else if (is_implicit_return(d, insn, w)) {
        next = tk_te_irstack_top(&d->ir);
        out->popped = true;
        out->inferred = true;
        if (!dry)
            tk_te_irstack_pop(&d->ir);
    } else if (tk_dec_is_uninferable_discon(d, insn)) {
        if (d->stop_at_last_branch) {
            if (dry) {
                out->next = 0;
                return TK_OK;
            }
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "uninferable jump at 0x%llx before the last branch of a branch "
                               "map without address (unexpected uninferable discontinuity)",
                               (unsigned long long)this_pc);
        }
        next = uninf_target;
        out->stop_here = true;
        out->indirect = true;
        /* A return the tracker predicted wrongly still uses up its entry, as in the encoder
         * (the irdepth reported was the depth before), and a co-routine swap pops before it
         * pushes (2.0 RAS hints). */
        if (!dry && d->p.o.implicit_return &&
            (insn->jclass == TK_RV_J_RETURN || insn->jclass == TK_RV_J_SWAP) && d->ir.depth)
            tk_te_irstack_pop(&d->ir);
    } else if (insn->cf == TK_RV_CF_BRANCH) {
        if (tk_dec_pending(d) == 0) {
            if (dry) {
                out->next = 0;
                return TK_OK;
            }
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "branch at 0x%llx but the branch map is used up (cannot resolve "
                               "branch)",
                               (unsigned long long)this_pc);
        }
        out->taken = take_branch(d, this_pc, dry);
        out->consumed = !dry;
        if (out->taken) {
            next = this_pc + (uint64_t)insn->imm;
            out->stop_here = insn->imm == 0; /* as for jumps to themselves */
        }
    }
    /* Calls push their link, and so does a co-routine swap (reported explicitly, itype 12),
     * as the encoder does for itypes 8, 9 and 12 (2.0 jump classes: x1 and x5 links). */
    if (!dry && d->p.o.implicit_return && (insn->cf == TK_RV_CF_JAL || insn->cf == TK_RV_CF_JALR) &&
        (insn->jclass == TK_RV_J_CALL || insn->jclass == TK_RV_J_SWAP))
        tk_te_irstack_push(&d->ir, this_pc + insn->len);
    out->next = next & d->addr_mask;
    return TK_OK;
}

/* The stop conditions of follow_execution_path() on reaching pc. last is the instruction
 * executed to get there (NULL if it was a sequential one). */
static int arrive(tk_te_decoder *d, const tk_dec_walk *w, uint64_t pc, bool is_branch,
                  const tk_rv_insn *last, bool stop_here)
{
    const unsigned limit = is_branch ? 1 : 0;
    const uint64_t pending = tk_dec_pending(d);
    if (pending == 1 && is_branch && d->stop_at_last_branch) {
        /* Reached the final branch of a map without address: its outcome is not known
         * yet, nor whether it retires. */
        d->stop_at_last_branch = false;
        return ARRIVE_STOP;
    }
    if (stop_here) {
        if (pending > limit)
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "%llu unprocessed branches on reaching 0x%llx after an "
                               "uninferable jump",
                               (unsigned long long)(pending - limit), (unsigned long long)pc);
        d->walk_uninf = true;
        return ARRIVE_STOP;
    }
    if (pc != w->address || pending != limit)
        return ARRIVE_GO_ON;
    if (w->fmt3) {
        /* 2.0.1: a sync after a trap return may carry a new privilege. */
        if ((d->flags & TK_TE_DEC_NO_PRIV_CHECK) || w->privilege == d->privilege ||
            (last && last->cf == TK_RV_CF_XRET))
            return ARRIVE_STOP;
        return ARRIVE_GO_ON;
    }
    if (d->stop_at_last_branch)
        return ARRIVE_GO_ON;
    const bool depth_ok = !w->irreport || tk_te_irdepth_matches(&d->ir, &d->p, w->irdepth);
    if (w->notify && depth_ok)
        return ARRIVE_STOP;
    if ((!last || !tk_dec_is_uninferable_discon(d, last)) && !w->updiscon && depth_ok) {
        /* Reached the address, but not through an uninferable jump: this may be the first
         * of two visits (payload.adoc, "looplabel"); the next packet tells. */
        d->inferred_address = true;
        return ARRIVE_STOP;
    }
    return ARRIVE_GO_ON;
}

/* Length of the instruction at a, or 0 if it cannot be read. */
static unsigned insn_len_at(const tk_te_decoder *d, uint64_t a)
{
    uint8_t h[2];
    if (tk_image_read(d->img, a, h, 2) != TK_OK)
        return 0;
    return tk_rv_length((uint16_t)(h[0] | h[1] << 8));
}

/* The reported address lies strictly inside the block at pc, after pc (already reached): walk the
 * instructions up to it and check the stop conditions there. ARRIVE_GO_ON leaves d as it was
 * (the caller goes on to the block's end). */
static int walk_to_address(tk_te_decoder *d, const tk_dec_walk *w)
{
    uint64_t a = d->pc, prev = d->pc;
    uint64_t n = 0;
    while (a < w->address) {
        unsigned len = insn_len_at(d, a);
        if (!len)
            break;
        prev = a;
        a += len;
        n++;
    }
    if (a != w->address)
        return ARRIVE_GO_ON;
    int r = arrive(d, w, a, false, NULL, false);
    if (r != ARRIVE_STOP)
        return r;
    tk_rv_insn pi;
    if (tk_image_fetch(d->img, prev, &pi) == TK_OK) {
        d->last_insn = pi;
        d->last_valid = true;
    } else {
        d->last_valid = false;
    }
    d->range_ninsn += n;
    d->pc = a;
    d->last_pc = prev;
    return ARRIVE_STOP;
}

/* Brent's cycle detection over the block starts visited without using a branch-map bit: a
 * walk that comes back to the same place without consuming trace information loops for
 * ever (the reported address is unreachable: wrong image or corrupt trace). */
typedef struct cycle {
    uint64_t mark;
    uint64_t power;
    uint64_t lam;
} cycle;

static void cycle_reset(cycle *c, uint64_t pc)
{
    c->mark = pc;
    c->power = 1;
    c->lam = 0;
}

static bool cycle_step(cycle *c, uint64_t pc)
{
    if (pc == c->mark)
        return true;
    if (++c->lam == c->power) {
        c->mark = pc;
        c->power <<= 1;
        c->lam = 0;
    }
    return false;
}

/* A walk that uses no trace information may visit at most this many blocks (after a branch-map
 * bit, or an uninferable jump whose target the packet gives, it starts again). Without the
 * implicit-return stack such a walk is deterministic in the pc alone, and the cycle search
 * below finds a loop within twice the number of blocks the program has; with it the stack is
 * part of the state, so the bound is what ends those walks: every block holds at least one
 * instruction (two bytes), so a walk longer than code bytes / 2 blocks has come back to some
 * block with no trace to tell the visits apart; twice that leaves room for call/return
 * sequences that revisit blocks with a different stack. */
uint64_t tk_dec_idle_limit(const tk_image *img)
{
    const uint64_t bound = tk_image_code_bytes(img);
    if (bound < TK_DEC_MIN_IDLE_BLOCKS)
        return TK_DEC_MIN_IDLE_BLOCKS;
    return bound > TK_DEC_MAX_IDLE_BLOCKS ? TK_DEC_MAX_IDLE_BLOCKS : bound;
}

/* The block after b, left to `next` through its fall-through (which = 0) or static target
 * (1): the link remembered in b, else a cache lookup (reported as tk_dec_block does). */
static inline int linked_block(tk_te_decoder *d, const tk_bblock *b, unsigned which, uint64_t next,
                               const tk_bblock **out)
{
    if (b->link[which]) {
        *out = b->link[which];
        return TK_OK;
    }
    int r = tk_dec_block(d, next, out);
    if (r == TK_OK)
        tk_image_block_next(d->img, b, which, out);
    return r;
}

/* The block that starts at first and ends at last with n instructions, or NULL: a range
 * that began where a walk stopped inside a block (the reported address) and ends with the
 * block's last instruction is that whole block. */
static const tk_bblock *whole_block(tk_te_decoder *d, uint64_t first, uint64_t last, uint64_t n)
{
    const tk_bblock **near = &d->near[(first >> 1) & (TK_DEC_NEAR_BLOCKS - 1)];
    const tk_bblock *b = *near;
    if (!b || b->start != first) {
        if (tk_image_block(d->img, first, &b) != TK_OK || b->ninsn == 0)
            return NULL;
        *near = b;
    }
    return b->last == last && b->ninsn == n ? b : NULL;
}

/* The range that ends with block b's last instruction is complete (end, taken, indirect,
 * next): into the block batch when it is the whole block and block events are on, else a
 * TK_EV_RANGE through ev (whose walk-wide fields are set). */
static inline int emit_range(tk_te_decoder *d, tk_event *ev, const tk_bblock *b, uint8_t end,
                             bool taken, bool indirect, uint64_t next)
{
    const uint64_t n = d->range_ninsn;
    d->stats.instructions += n;
    d->range_ninsn = 0;
    const tk_bblock *wb = NULL;
    if (d->blocks)
        wb = d->range_first == b->start ? (n == b->ninsn ? b : NULL)
                                        : whole_block(d, d->range_first, b->last, n);
    if (wb) {
        if (d->nblk == 0)
            tk_dec_batch_header(d);
        d->blk[d->nblk++] = (tk_block_exec){
            .block = wb, .next = next, .end = end, .taken = taken, .indirect = indirect};
        return d->nblk == TK_BLOCK_BATCH ? tk_dec_flush_blocks_now(d) : TK_OK;
    }
    int r = tk_dec_flush_blocks(d);
    if (r != TK_OK)
        return r;
    ev->end = end;
    ev->taken = taken;
    ev->indirect = indirect;
    ev->first = d->range_first;
    ev->last = b->last;
    ev->ninsn = n;
    ev->next = next;
    d->ranges++;
    const tk_status st = d->fn(d->ctx, ev);
    if (st != TK_OK) {
        d->stop = st;
        return DEC_STOPPED;
    }
    return TK_OK;
}

static int fail_idle(tk_te_decoder *d, uint64_t from)
{
    return tk_dec_fail(d, TK_ERR_MISMATCH,
                       "followed %llu blocks from 0x%llx without using trace information (more "
                       "than the program's code can hold without looping)",
                       (unsigned long long)d->idle_limit, (unsigned long long)from);
}

static int fail_loop(tk_te_decoder *d, const tk_dec_walk *w)
{
    return tk_dec_fail(d, TK_ERR_MISMATCH,
                       "path loops through 0x%llx without reaching the reported address 0x%llx",
                       (unsigned long long)d->pc, (unsigned long long)w->address);
}

/* The block's range out (its last instruction is the one executed last) and the walk moved on
 * to next: the general walk's step from one block to the next. */
static inline int retire_block(tk_te_decoder *d, tk_event *ev, const tk_bblock *b, uint8_t end,
                               bool taken, bool indirect, uint64_t next)
{
    int r = emit_range(d, ev, b, end, taken, indirect, next);
    if (r != TK_OK)
        return r;
    d->last_pc = b->last;
    d->last_valid = true;
    d->pc = next;
    d->range_first = next;
    d->range_ninsn = 1;
    return TK_OK;
}

/* After a block of the general walk, now at d->pc: a walk that used trace information (a
 * branch outcome, an address) starts its idle count and cycle search again; one that did not
 * must not go on for ever (TK_OK, or the failure). `popped`: an implicit return, which makes
 * the path depend on the stack as well as the pc, restarts the cycle search; the block limit
 * still ends such walks. */
static inline int count_idle(tk_te_decoder *d, const tk_dec_walk *w, uint64_t *idle, cycle *cyc,
                             bool used_trace, bool popped, uint64_t from)
{
    if (used_trace)
        *idle = 0;
    else if (++*idle > d->idle_limit)
        return fail_idle(d, from);
    if (used_trace || popped)
        cycle_reset(cyc, d->pc);
    else if (cycle_step(cyc, d->pc))
        return fail_loop(d, w);
    return TK_OK;
}

/* The common case of follow_execution_path(), block after block while nothing needs a
 * closer look: the reported address is not inside the block (after its start, which was
 * reached already), and the block ends in a branch the map resolves (without being the last
 * one a map without address stops at) or in a direct jump the implicit-return stack need not
 * see. Then the whole block retires, its successor is the linked block, and only arriving
 * at the reported address (or following a map without address) needs the stop conditions.
 * The state the loop changes is kept in locals and written back before anything else can
 * look at it. Starts at *bp with pc = range_first = its start; returns TK_OK to go on with
 * the general path at *bp (*last, *cyc, *idle updated), ARRIVE_STOP when the walk is over,
 * or an error of the walk. Needs: no branch predictor, nothing pending but the map. */
/* State of tight_walk() kept apart from its hot registers (rarely used, or used only for
 * direct jumps). */
typedef struct tight_aside {
    const tk_bblock *done; /* the last block retired, NULL before the first */
    uint64_t idle;
    cycle *cyc;
    const tk_rv_insn **last;
    const tk_bblock **bp;
    unsigned extra; /* 1: a map without address, whose last branch the loop leaves alone */
} tight_aside;

/* A whole block into the batch at *e (block events) or as a TK_EV_RANGE. */
static inline int tight_emit(tk_te_decoder *d, const bool blocks, tk_block_exec **e,
                             tk_block_exec *const e_end, uint64_t *insns, const tk_bblock *b,
                             uint64_t next, unsigned taken, unsigned indirect)
{
    if (blocks) {
        /* counted in a register (tight_body writes it back): the stats are in memory the
         * batch stores might alias; exact again before the batch goes out */
        *insns += b->ninsn;
        tk_block_exec *const x = *e;
        x->block = b;
        x->next = next;
        x->end = b->end;
        x->taken = (uint8_t)taken;
        x->indirect = (uint8_t)indirect;
        if (++*e == e_end) {
            d->stats.instructions += *insns;
            *insns = 0;
            d->nblk = TK_BLOCK_BATCH;
            *e = d->blk;
            int r = tk_dec_flush_blocks_now(d);
            tk_dec_batch_header(d);
            return r;
        }
        return TK_OK;
    }
    d->stats.instructions += b->ninsn;
    /* the callback cannot reach the decoder: the caller's locals stay valid across it */
    tk_event *const ev = &d->range_ev;
    ev->end = b->end;
    ev->taken = (uint8_t)taken;
    ev->indirect = (uint8_t)indirect;
    ev->first = b->start;
    ev->last = b->last;
    ev->ninsn = b->ninsn;
    ev->next = next;
    const tk_status st = d->fn(d->ctx, ev);
    if (st == TK_OK)
        return TK_OK;
    d->stop = st;
    return DEC_STOPPED;
}

/* The decoder state as the general path keeps it, at the start of block b (reached at next
 * from x->done). Inlined: an out-of-line call would take x's address and keep the loop's
 * state (done, idle) in memory for every block. */
static TK_ALWAYS_INLINE void tight_sync(tk_te_decoder *d, tight_aside *x, const tk_bblock *b,
                                        uint64_t next, uint64_t map, unsigned avail,
                                        tk_block_exec *e)
{
    d->branch_map = map;
    d->branches = avail + x->extra;
    if (e)
        d->nblk = (uint32_t)(e - d->blk);
    if (x->done) {
        *x->last = &x->done->term;
        d->last_pc = x->done->last;
        d->last_valid = true;
        d->pc = d->range_first = next;
        d->range_ninsn = 1;
    }
    /* the general path restarts the cycle search eagerly */
    if (!x->idle)
        cycle_reset(x->cyc, next);
    *x->bp = b;
}

/* blocks is a constant in each copy (below): the loop for block events has no callback in
 * it, and so more of its state in registers. */
static TK_ALWAYS_INLINE int tight_loop(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock **bp,
                                       const tk_rv_insn **last, cycle *cyc, uint64_t *idlep,
                                       uint64_t *insns, const bool blocks)
{
    tight_aside x = {.idle = *idlep,
                     .cyc = cyc,
                     .last = last,
                     .bp = bp,
                     .extra = d->stop_at_last_branch ? 1u : 0u};
    const uint64_t addr = w->address;
    /* uninferable jumps go to the reported address (see below) */
    const bool uninf_ok = !d->stop_at_last_branch && !d->p.o.implicit_return && !d->p.o.sijump;
    tk_block_exec *e = NULL; /* next batch entry (block events) */
    tk_block_exec *const e_end = blocks ? d->blk + TK_BLOCK_BATCH : NULL;
    if (blocks) {
        e = d->blk + d->nblk;
        if (d->nblk == 0)
            tk_dec_batch_header(d);
    }
    uint64_t map = d->branch_map;
    /* branches the loop may resolve: arrive() changes stop_at_last_branch only when it stops
     * the walk */
    unsigned avail = d->branches > x.extra ? d->branches - x.extra : 0;
    const unsigned short_of = d->branches > x.extra ? 0 : x.extra - d->branches;
    const tk_bblock *b = *bp;
    uint64_t next = b->start;
    int r;
    /* Chunks of 8 branches (walk_memo.h), with block events and without implicit return
     * (whose calls end the loop). rec: the chunk being walked to be remembered, rec_left of
     * its branches still to come (0: none). */
    const bool chunky = blocks && d->chunks && !d->p.o.implicit_return;
    unsigned rec_left = 0;
    tk_walk_chunk *rec = NULL;
    tk_block_exec *rec_first = NULL;
    const tk_bblock *rec_start = NULL;
    uint64_t rec_bits = 0, rec_flushes = 0;

    if (short_of) /* fewer branches than the map's last: the general path reports it */
        goto leave;
    /* b is always the block starting at next: the address checks use next, not b->start.
     * The walk began at the block's start (already reached): only an address inside it,
     * after its start, matters here. */
    if (addr - next - 1 < b->last - next)
        goto leave;
    for (;;) {
        if (chunky && !rec_left && !x.idle && avail >= TK_WALK_CHUNK_BITS &&
            avail + x.extra > TK_WALK_CHUNK_BITS) {
            /* No jump followed since the last branch (the jumps' idle count and cycle
             * search start afresh in the chunk), its 8 bits are there to resolve, and more
             * branches after them: arriving at the address cannot stop the walk in it. */
            tk_walk_chunk *c = tk_walk_chunk_slot(d, b, map);
            if (tk_walk_chunk_fits(c, b, map, addr) && (size_t)(e_end - e) > c->n) {
                /* room to spare: the batch is not full after it, as after the walk */
                for (unsigned i = 0; i < c->n; i++)
                    e[i] = c->e[i];
                e += c->n;
                *insns += c->insns;
                map >>= TK_WALK_CHUNK_BITS;
                avail -= TK_WALK_CHUNK_BITS;
                x.done = c->e[c->n - 1].block;
                d->stats.chunks_replayed++;
                b = c->final;
                next = b->start;
                goto arrived;
            }
            rec = c;
            rec_left = TK_WALK_CHUNK_BITS;
            rec_first = e;
            rec_start = b;
            rec_bits = map;
            rec_flushes = d->flushes;
        }
        const unsigned cf = b->term.cf;
        const tk_bblock *nb;
        if (cf == TK_RV_CF_BRANCH) {
            if (avail == 0 || b->target == b->last)
                break;
            const unsigned taken = !(map & 1);
            map >>= 1;
            avail--;
            x.idle = 0;
            x.done = b;
            nb = b->link[taken];
            if (nb) {
                next = nb->start; /* the successor, without choosing between target and fall */
                if ((r = tight_emit(d, blocks, &e, e_end, insns, b, next, taken, 0)) != TK_OK)
                    return r;
            } else {
                /* first time through this edge: the lookup may report an error (after the
                 * block, as the general path does) */
                next = taken ? b->target : b->fall;
                if ((r = tight_emit(d, blocks, &e, e_end, insns, b, next, taken, 0)) != TK_OK)
                    return r;
                tight_sync(d, &x, b, next, map, avail, e);
                const tk_bblock *lb;
                if ((r = linked_block(d, x.done, taken, next, &lb)) != TK_OK)
                    return r;
                nb = lb;
            }
            /* the chunk being walked is complete (unless the batch went out meanwhile) */
            if (rec_left && --rec_left == 0 && d->flushes == rec_flushes)
                tk_walk_chunk_store(d, rec, rec_start, rec_bits, rec_first, (size_t)(e - rec_first),
                                    nb);
        } else if (cf == TK_RV_CF_JAL && b->target != b->last &&
                   !(d->p.o.implicit_return &&
                     (b->term.jclass == TK_RV_J_CALL || b->term.jclass == TK_RV_J_SWAP))) {
            /* The cycle search restarted where the last branch bit led, this block's start
             * (idle 0), unless it had started already. */
            if (!x.idle)
                cycle_reset(cyc, b->start);
            if (++x.idle > d->idle_limit || cycle_step(cyc, b->target)) {
                x.idle--;
                break; /* the general path reports it */
            }
            next = b->target;
            if ((r = tight_emit(d, blocks, &e, e_end, insns, b, next, 0, 0)) != TK_OK)
                return r;
            nb = b->link[1];
            x.done = b;
            if (!nb) {
                tight_sync(d, &x, b, next, map, avail, e);
                const tk_bblock *lb;
                if ((r = linked_block(d, x.done, 1, next, &lb)) != TK_OK)
                    return r;
                nb = lb;
            }
        } else if (uninf_ok && cf == TK_RV_CF_JALR && b->term.rs1 != 0) {
            /* An uninferable jump (usually a return) ends the walk at its target, the
             * reported address (next_pc() without sijump or implicit return, and outside a
             * map without address, where it is an error). */
            next = addr & d->addr_mask;
            if ((r = tight_emit(d, blocks, &e, e_end, insns, b, next, 0, 1)) != TK_OK)
                return r;
            x.done = b;
            tight_sync(d, &x, b, next, map, avail, e);
            /* tk_dec_block's front probe, inline: the targets of returns repeat */
            nb = d->near[(next >> 1) & (TK_DEC_NEAR_BLOCKS - 1)];
            if ((!nb || nb->start != next) && (r = tk_dec_block(d, next, &nb)) != TK_OK)
                return r;
            const bool br = nb->ninsn == 1 && nb->term.cf == TK_RV_CF_BRANCH;
            /* arrive() with stop_here, inline for its common outcome: no map without address
             * here (uninf_ok), so the walk stops unless branches are left over (an error
             * arrive() reports). */
            if (avail <= (unsigned)br) {
                d->walk_uninf = true;
                r = ARRIVE_STOP;
            } else {
                r = arrive(d, w, next, br, *last, true);
            }
            if (r == ARRIVE_STOP) {
                d->last_insn = **last;
                d->stop_block = nb;
            }
            return r;
        } else {
            break;
        }
        b = nb;
    arrived:;
        /* One comparison in the common case: the address is neither the block's start nor
         * inside it, and no map without address is at its end. */
        const uint64_t t = addr - next;
        if (TK_UNLIKELY(t <= b->last - next || (avail == 0 && x.extra))) {
            /* arrive() stops only at the address, or with a map without address at its
             * last branch */
            if (t == 0 ||
                (avail == 0 && x.extra && b->ninsn == 1 && b->term.cf == TK_RV_CF_BRANCH)) {
                tight_sync(d, &x, b, next, map, avail, e);
                const bool br = b->ninsn == 1 && b->term.cf == TK_RV_CF_BRANCH;
                r = arrive(d, w, next, br, *last, false);
                if (r == ARRIVE_STOP) {
                    d->last_insn = **last;
                    d->stop_block = b;
                    return ARRIVE_STOP;
                }
                if (r != ARRIVE_GO_ON)
                    return r;
            }
            if (t - 1 < b->last - next)
                break; /* the address is inside the block */
        }
    }
leave:
    tight_sync(d, &x, b, next, map, avail, e);
    *idlep = x.idle;
    return TK_OK;
}

/* tight_loop with its instruction count in a local (kept in a register: its address does not
 * leave the inlined code), added to the stats once. */
static TK_ALWAYS_INLINE int tight_body(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock **bp,
                                       const tk_rv_insn **last, cycle *cyc, uint64_t *idlep,
                                       const bool blocks)
{
    uint64_t insns = 0;
    const int r = tight_loop(d, w, bp, last, cyc, idlep, &insns, blocks);
    d->stats.instructions += insns;
    return r;
}

/* Their own copies, not inlined: the general path's state stays apart from their registers. */
static TK_NOINLINE int tight_blocks(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock **bp,
                                    const tk_rv_insn **last, cycle *cyc, uint64_t *idlep)
{
    return tight_body(d, w, bp, last, cyc, idlep, true);
}

static TK_NOINLINE int tight_ranges(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock **bp,
                                    const tk_rv_insn **last, cycle *cyc, uint64_t *idlep)
{
    return tight_body(d, w, bp, last, cyc, idlep, false);
}

/* follow_execution_path() from block b (NULL: look it up at pc), with last the instruction
 * executed before pc, the cycle search and idle count as they are, and the address pc had
 * when the walk began. */
static int follow_general(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock *b,
                          const tk_rv_insn *last, cycle *cycp, uint64_t idle,
                          uint64_t previous_address)
{
    /* Fast paths: a branch's outcome straight from the map when no predictor is involved,
     * and a direct jump when the implicit-return stack need not see it. Anything else goes
     * through tk_dec_exec (next_pc of decoder.adoc). */
    const bool map_only = !d->p.o.branch_prediction;
    const bool irstack = d->p.o.implicit_return;
    /* The tight loop below takes whole blocks ending in such a branch or jump; it needs the
     * branch map to be all there is to resolve. */
    const bool tight = map_only && !d->pred_pending && !d->fail_pending;
    cycle cyc = *cycp;
    int r;

    /* The range event: what stays the same for the whole walk is set once. */
    tk_event *ev = &d->range_ev;
    ev->kind = TK_EV_RANGE;
    ev->byte_offset = d->byte_offset;
    ev->packet_index = d->packet_index;
    ev->priv = d->privilege;
    ev->context = d->context;
    for (;;) {
        if (!b && (r = tk_dec_block(d, d->pc, &b)) != TK_OK)
            return r;
        const bool inferred = d->inferred_address;
        if (tight && !inferred && d->range_first == b->start) {
            r = d->blocks ? tight_blocks(d, w, &b, &last, &cyc, &idle)
                          : tight_ranges(d, w, &b, &last, &cyc, &idle);
            if (r == ARRIVE_STOP)
                return TK_OK;
            if (r != TK_OK)
                return r;
        }
        /* A run of a branch count's correctly predicted branches: whole blocks ending in a
         * conditional branch (the predictor says which way) or a direct jump, followed by
         * the block links, as the code below would, while more than two predictions are
         * left. Then at least two branches stay pending after each block, so the walk cannot
         * arrive at the reported address (arrive() needs the count down to the last one)
         * and the address checks have nothing to do. A damaged count can ask for 2^32. */
        if (!map_only && !inferred && d->pred_pending > 2 && !d->branches &&
            !d->stop_at_last_branch && d->range_first == b->start) {
            while (d->pred_pending > 2) {
                const unsigned cf = b->term.cf;
                bool taken = false;
                uint64_t next;
                unsigned lk;
                if (cf == TK_RV_CF_BRANCH && b->target != b->last) {
                    taken = tk_te_bpred_follow(&d->bp, b->last);
                    d->pred_pending--;
                    next = taken ? b->target : b->fall;
                    lk = taken;
                } else if (cf == TK_RV_CF_JAL && b->target != b->last &&
                           !(irstack &&
                             (b->term.jclass == TK_RV_J_CALL || b->term.jclass == TK_RV_J_SWAP))) {
                    next = b->target;
                    lk = 1;
                } else {
                    break;
                }
                d->range_ninsn += b->ninsn - 1;
                if ((r = retire_block(d, ev, b, b->end, taken, false, next)) != TK_OK)
                    return r;
                last = &b->term;
                const tk_bblock *nb;
                if ((r = linked_block(d, b, lk, next, &nb)) != TK_OK)
                    return r;
                b = nb;
                r = count_idle(d, w, &idle, &cyc, cf == TK_RV_CF_BRANCH, false, previous_address);
                if (r != TK_OK)
                    return r;
            }
        }
        /* The block's sequential part, from pc (already reached) to its last instruction. */
        const tk_rv_insn *prev = last;
        uint64_t prev_pc = d->last_pc;
        if (b->ninsn > 1) {
            if (!inferred && w->address > d->pc && w->address < b->last) {
                r = walk_to_address(d, w);
                if (r == ARRIVE_STOP)
                    return TK_OK;
                if (r != ARRIVE_GO_ON)
                    return r;
            }
            d->range_ninsn += b->ninsn - 1;
            d->pc = b->last;
            prev = &b->prev;
            prev_pc = b->last - b->prev.len;
            if (!inferred && (d->stop_at_last_branch || b->last == w->address)) {
                d->last_pc = prev_pc;
                d->last_insn = b->prev;
                d->last_valid = true;
                r = arrive(d, w, d->pc, b->term.cf == TK_RV_CF_BRANCH, NULL, false);
                if (r == ARRIVE_STOP)
                    return TK_OK;
                if (r != ARRIVE_GO_ON)
                    return r;
            }
        }

        /* next_pc() for the block's control-flow instruction */
        tk_dec_step s;
        unsigned link = 2; /* which static successor was taken (2: none) */
        if (b->term.cf == TK_RV_CF_BRANCH && b->target != b->last &&
            (d->branches || (!map_only && d->pred_pending))) {
            /* take_branch() for the two common cases: a branch-map bit (the predictor, when
             * there is one, learns it), or a correctly predicted branch of a branch count */
            bool taken;
            if (d->branches) {
                taken = !(d->branch_map & 1);
                d->branch_map >>= 1;
                d->branches--;
                if (!map_only)
                    tk_te_bpred_update(&d->bp, b->last, taken);
            } else {
                taken = tk_te_bpred_follow(&d->bp, b->last);
                d->pred_pending--;
            }
            s = (tk_dec_step){.next = taken ? b->target : b->fall,
                              .taken = taken,
                              .consumed = true,
                              .end = b->end};
            link = taken;
        } else if (b->term.cf == TK_RV_CF_JAL && b->target != b->last &&
                   !(irstack &&
                     (b->term.jclass == TK_RV_J_CALL || b->term.jclass == TK_RV_J_SWAP))) {
            s = (tk_dec_step){.next = b->target, .end = b->end};
            link = 1;
        } else {
            r = tk_dec_exec(d, &b->term, b->last, prev, prev_pc,
                            inferred ? previous_address : w->address, w, false, &s);
            if (r != TK_OK)
                return r;
        }
        if ((r = retire_block(d, ev, b, s.end, s.taken, s.indirect, s.next)) != TK_OK)
            return r;
        last = &b->term;

        if (inferred) {
            b = NULL;
            if (s.stop_here) {
                d->inferred_address = false;
                if (w->until_discon) {
                    d->last_insn = *last;
                    return TK_OK;
                }
            }
        } else {
            const tk_bblock *nb;
            r = link < 2 ? linked_block(d, b, link, s.next, &nb) : tk_dec_block(d, d->pc, &nb);
            if (r != TK_OK)
                return r;
            b = nb;
            if (s.stop_here || d->stop_at_last_branch || d->pc == w->address) {
                const bool br = b->ninsn == 1 && b->term.cf == TK_RV_CF_BRANCH;
                /* A jump resolved without trace (sijump, implicit return) leads to its
                 * target as an inferable one would: the decoder.adoc test "last instruction
                 * not an uninferable discontinuity" is about how the address was reached. */
                r = arrive(d, w, d->pc, br, s.inferred ? NULL : last, s.stop_here);
                if (r == ARRIVE_STOP) {
                    d->last_insn = *last;
                    d->stop_block = b;
                    return TK_OK;
                }
                if (r != ARRIVE_GO_ON)
                    return r;
            }
        }
        r = count_idle(d, w, &idle, &cyc, s.consumed || s.stop_here, s.popped, previous_address);
        if (r != TK_OK)
            return r;
    }
}

/* tk_dec_follow() in general. */
static TK_NOINLINE int follow_any(tk_te_decoder *d, const tk_dec_walk *w)
{
    /* While inferred_address is set, uninferable jumps go back to the address the previous
     * packet reported (the "looplabel" case of payload.adoc). */
    const uint64_t previous_address = d->pc;
    /* The block the last walk stopped at the start of, if pc is still there. */
    const tk_bblock *b = d->stop_block && d->stop_block->start == d->pc ? d->stop_block : NULL;
    /* The instruction executed last is the final instruction of a block while the walk goes
     * on: it is pointed to, and copied to d->last_insn only when the walk stops. */
    const tk_rv_insn *last = d->last_valid ? &d->last_insn : NULL;
    cycle cyc;
    uint64_t idle = 0; /* blocks since the last branch bit or uninferable jump */
    int r;

    /* A batch holds one privilege and context: blocks under others start a new one. */
    if (d->nblk && (d->blk_ev.priv != d->privilege || d->blk_ev.context != d->context) &&
        (r = tk_dec_flush_blocks_now(d)) != TK_OK)
        return r;
    d->walk_uninf = false;
    cycle_reset(&cyc, d->pc);
    /* Most walks start where the last one stopped, on a known block, and need nothing but
     * the tight loop until their end. */
    if (b && d->range_first == d->pc && !d->inferred_address && !d->p.o.branch_prediction &&
        !d->pred_pending && !d->fail_pending) {
        if (d->blocks) {
            r = tight_blocks(d, w, &b, &last, &cyc, &idle);
        } else {
            tk_event *ev = &d->range_ev;
            ev->kind = TK_EV_RANGE;
            ev->byte_offset = d->byte_offset;
            ev->packet_index = d->packet_index;
            ev->priv = d->privilege;
            ev->context = d->context;
            r = tight_ranges(d, w, &b, &last, &cyc, &idle);
        }
        if (r == ARRIVE_STOP)
            return TK_OK;
        if (r != TK_OK)
            return r;
    }
    return follow_general(d, w, b, last, &cyc, idle, previous_address);
}

/* tk_dec_follow()'s common walk when the memo does not have it: the tight loop from block b,
 * then the general path if it does not end there; remembered in slot (if not NULL) under
 * the marks (walk_memo.h). */
static TK_NOINLINE int follow_tight(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock *b,
                                    tk_walk_memo_slot *slot, uint32_t marks)
{
    const tk_walk_memo_key key = {.start = b,
                                  .map = d->branch_map,
                                  .address = w->address,
                                  .branches = d->branches | marks,
                                  .stop_at_last_branch = d->stop_at_last_branch};
    const uint64_t previous_address = d->pc;
    const tk_rv_insn *last = d->last_valid ? &d->last_insn : NULL;
    cycle cyc;
    uint64_t idle = 0;
    d->walk_uninf = false;
    cycle_reset(&cyc, d->pc);
    const uint32_t first = d->nblk;
    const uint64_t flushes = d->flushes, ranges = d->ranges, insns = d->stats.instructions;
    int r = tight_blocks(d, w, &b, &last, &cyc, &idle);
    if (r == ARRIVE_STOP) {
        /* Kept if its entries are still together in the batch. */
        if (slot && d->flushes == flushes)
            tk_walk_memo_store(d, slot, &key, first, d->stats.instructions - insns);
        return TK_OK;
    }
    if (r != TK_OK)
        return r;
    /* The general path finishes it: where the address is inside a block (a walk to the
     * instruction before a format 3 sync's address), or what the tight loop leaves alone.
     * Kept as well if nothing but whole blocks went out: with the modes the memo excludes, the
     * general path too depends on nothing but the walk's inputs. */
    r = follow_general(d, w, b, last, &cyc, idle, previous_address);
    if (r == TK_OK && slot && d->flushes == flushes && d->ranges == ranges)
        tk_walk_memo_store(d, slot, &key, first, d->stats.instructions - insns);
    return r;
}

/* The marks of walk w in the memo's keys (walk_memo.h), or TK_WALK_MEMO_NONE if the memo may
 * not keep it: with the modes that make the path depend on more than the walk's inputs, for
 * an irreport (the implicit-return stack decides) or a support packet's walk, and for a
 * format 3 sync's that changes the privilege (arrive() looks at the instruction before). */
static inline uint32_t memo_marks(const tk_te_decoder *d, const tk_dec_walk *w)
{
    if (d->p.o.implicit_return || d->p.o.sijump)
        return TK_WALK_MEMO_NONE;
    if (w->plain)
        return 0;
    if (w->irreport || w->until_discon || (w->fmt3 && w->privilege != d->privilege))
        return TK_WALK_MEMO_NONE;
    return (w->fmt3 ? TK_WALK_MEMO_FMT3 : 0u) | (w->notify ? TK_WALK_MEMO_NOTIFY : 0u) |
           (w->updiscon ? TK_WALK_MEMO_UPDISCON : 0u);
}

/* What the fast paths (the tight loop from the start, the memo) need: block events, nothing
 * but the map to resolve, and the batch open for this privilege and context (follow_any
 * flushes it first otherwise). */
static inline bool fast_state(const tk_te_decoder *d)
{
    return d->blocks && !d->inferred_address && !d->p.o.branch_prediction && !d->pred_pending &&
           !d->fail_pending &&
           (!d->nblk || (d->blk_ev.priv == d->privilege && d->blk_ev.context == d->context));
}

/* A walk that starts inside a block, where the last one stopped: at the instruction before a
 * format 3 sync's address (often a block's last), at the last branch of a full map without
 * address, or at a sync's address. The general path (follow_any), remembered under the block
 * at range_first and pc's place in it, and replayed the next time it starts there with the
 * same inputs. */
static TK_NOINLINE int follow_inside(tk_te_decoder *d, const tk_dec_walk *w)
{
    /* The block at range_first, from the front of the cache: the range was emitted from it
     * the last time (whole_block), so it is there unless another block took its entry. */
    const tk_bblock *b = d->near[(d->range_first >> 1) & (TK_DEC_NEAR_BLOCKS - 1)];
    uint32_t marks;
    if (!(d->memo && b && b->start == d->range_first && d->pc > b->start && d->pc <= b->last &&
          d->pc - b->start <= UINT32_MAX && d->range_ninsn <= UINT32_MAX && fast_state(d) &&
          (marks = memo_marks(d, w)) != TK_WALK_MEMO_NONE))
        return follow_any(d, w);
    marks |= TK_WALK_MEMO_INSIDE;
    const tk_walk_memo_key key = {.start = b,
                                  .map = d->branch_map,
                                  .address = w->address,
                                  .branches = d->branches | marks,
                                  .stop_at_last_branch = d->stop_at_last_branch,
                                  .from = (d->pc - b->start) << 32 | d->range_ninsn};
    tk_walk_memo_slot *slot = tk_walk_memo_slot_for(d, b, w->address, marks);
    if (tk_walk_memo_hit_inside(d, slot, &key))
        return tk_walk_memo_replay(d, slot);
    const uint32_t first = d->nblk;
    const uint64_t flushes = d->flushes, ranges = d->ranges, insns = d->stats.instructions;
    const int r = follow_any(d, w);
    if (r == TK_OK && d->flushes == flushes && d->ranges == ranges &&
        tk_walk_memo_second_sight(slot, &key))
        tk_walk_memo_store(d, slot, &key, first, d->stats.instructions - insns);
    return r;
}

int tk_dec_follow(tk_te_decoder *d, const tk_dec_walk *w)
{
    /* The common walk, with block events: from the block the last one stopped at the start
     * of, nothing but the map to resolve, and the batch open for this privilege and context
     * (what follow_any checks first, in the order it does). Straight into the tight loop,
     * without the general path's frame. */
    const tk_bblock *b = d->stop_block;
    if (!(b && b->start == d->pc && d->range_first == d->pc && fast_state(d)))
        return d->blocks && d->pc != d->range_first ? follow_inside(d, w) : follow_any(d, w);
    /* The walk may have been done before with the same inputs (walk_memo.h): then its
     * batch entries are handed over again. */
    tk_walk_memo_slot *slot = NULL;
    const uint32_t marks = memo_marks(d, w);
    if (marks != TK_WALK_MEMO_NONE) {
        slot = tk_walk_memo_slot_for(d, b, w->address, marks);
        if (slot && tk_walk_memo_hit(d, slot, b, w->address, marks))
            return tk_walk_memo_replay(d, slot);
    }
    return follow_tight(d, w, b, slot, marks);
}
