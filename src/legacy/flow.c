/* SPDX-License-Identifier: BSD-2-Clause */
/* Program walker of the legacy decoders (flow.h). Whole basic blocks are taken from the
 * image's block cache; only a stop in the middle of a block (a trap's epc, the end of the
 * trace, a run that ends early) walks instruction by instruction. */
#include <stdio.h>
#include <string.h>

#include "flow.h"

/* A walk that goes on this long without reaching its stop is a trace that does not fit. */
#define WALK_LIMIT (1ull << 26)

void lg_flow_init(lg_flow *f, tk_image *img, unsigned xlen, tk_event_fn fn, void *ctx)
{
    memset(f, 0, sizeof(*f));
    f->img = img;
    f->xlen = xlen;
    f->mask = xlen == 32 ? 0xffffffffull : ~0ull;
    f->fn = fn;
    f->ctx = ctx;
}

tk_status lg_flow_emit(lg_flow *f, tk_event *ev)
{
    ev->trace_id = f->trace_id;
    ev->byte_offset = f->offset;
    ev->packet_index = f->index;
    if (ev->kind == TK_EV_RANGE)
        f->instructions += ev->ninsn;
    else if (ev->kind == TK_EV_TRAP)
        f->traps++;
    return f->fn(f->ctx, ev);
}

uint64_t lg_target(const lg_flow *f, const tk_rv_insn *in, uint64_t pc)
{
    return (pc + (uint64_t)in->imm) & f->mask;
}

void lg_flow_add(lg_flow *f, uint64_t first, uint64_t last, uint64_t k)
{
    if (!f->open) {
        memset(&f->ev, 0, sizeof(f->ev));
        f->ev.kind = TK_EV_RANGE;
        f->ev.first = first;
        f->open = true;
    }
    f->ev.last = last;
    f->ev.ninsn += k;
}

tk_status lg_flow_end(lg_flow *f, uint8_t end, bool taken, uint64_t next)
{
    f->pc = next;
    if (!f->open)
        return TK_OK;
    f->open = false;
    f->ev.end = end;
    f->ev.taken = taken;
    f->ev.next = next;
    return lg_flow_emit(f, &f->ev);
}

tk_status lg_flow_close(lg_flow *f, uint64_t next)
{
    if (!f->open)
        return TK_OK;
    f->open = false;
    f->ev.end = TK_END_NONE;
    f->ev.next = next;
    return lg_flow_emit(f, &f->ev);
}

tk_status lg_flow_lose(lg_flow *f)
{
    f->have_pc = false;
    return lg_flow_close(f, 0);
}

tk_status lg_flow_trap(lg_flow *f, uint64_t epc, uint64_t handler, uint32_t cause, bool interrupt)
{
    tk_event tr;
    memset(&tr, 0, sizeof(tr));
    tr.kind = TK_EV_TRAP;
    tr.first = tr.last = epc;
    tr.next = handler;
    tr.cause = cause;
    tr.interrupt = interrupt;
    f->pc = handler;
    return lg_flow_emit(f, &tr);
}

static tk_status no_fit(lg_flow *f, tk_status st, const char *what, uint64_t at)
{
    snprintf(f->msg, sizeof(f->msg), "%s at 0x%llx", what, (unsigned long long)at);
    return st;
}

static tk_status block_at(lg_flow *f, const tk_bblock **b)
{
    tk_status st = tk_image_block(f->img, f->pc, b);
    if (st != TK_OK)
        return no_fit(f, st == TK_ERR_NO_CODE ? TK_ERR_NO_CODE : TK_ERR_MISMATCH,
                      "no instruction in the program", f->pc);
    return TK_OK;
}

/* A walk that passes blocks by rule (pass(): not-taken branches, jal) is deterministic: once
 * it comes back to a block it has visited it goes round forever. Brent's cycle detection
 * (compare with the block start saved at the last power of two) notices that within about
 * twice the loop's length, so damaged trace cannot make a walk emit millions of
 * instructions of a loop (fuzz_legacy found a 1.9 KB file that did). */
typedef struct cycle_check {
    uint64_t saved, next_save;
} cycle_check;

static bool cycles(cycle_check *c, uint64_t steps, uint64_t pc)
{
    if (steps > 0 && pc == c->saved)
        return true;
    if (steps == c->next_save) {
        c->saved = pc;
        c->next_save = c->next_save ? 2 * c->next_save : 1;
    }
    return false;
}

/* Walk instruction by instruction inside one straight-line block until pc == stop. */
static tk_status walk_to(lg_flow *f, uint64_t stop, uint64_t limit_addr)
{
    while (f->pc != stop) {
        tk_rv_insn in;
        tk_status st = tk_image_fetch(f->img, f->pc, &in);
        if ((st != TK_OK && !(st == TK_ERR_BAD_INSN && in.len)) || f->pc > limit_addr)
            return no_fit(f, TK_ERR_MISMATCH, "the trace's address is not on the program's path",
                          stop);
        lg_flow_add(f, f->pc, f->pc, 1);
        f->pc = (f->pc + in.len) & f->mask;
    }
    return TK_OK;
}

/* Pass the transfer ending block b when flags allow it; false if they do not. */
static bool pass(lg_flow *f, const tk_bblock *b, unsigned flags, tk_status *st)
{
    const tk_rv_insn *t = &b->term;
    const uint64_t fall = (b->last + t->len) & f->mask;
    if (t->cf == TK_RV_CF_BRANCH && (flags & LG_PASS_NOT_TAKEN)) {
        lg_flow_add(f, b->start, b->last, b->ninsn);
        *st = lg_flow_end(f, TK_END_BRANCH, false, fall);
        return true;
    }
    if (t->cf == TK_RV_CF_JAL && (flags & LG_FOLLOW_JAL)) {
        lg_flow_add(f, b->start, b->last, b->ninsn);
        *st = lg_flow_end(f, tk_rv_range_end(t), false, lg_target(f, t, b->last));
        return true;
    }
    return false;
}

tk_status lg_flow_advance(lg_flow *f, uint64_t stop, unsigned flags)
{
    cycle_check cc = {0, 0};
    for (uint64_t steps = 0; f->pc != stop; steps++) {
        const tk_bblock *b;
        tk_status st;
        if (steps > WALK_LIMIT || cycles(&cc, steps, f->pc))
            return no_fit(f, TK_ERR_MISMATCH, "the program never reaches the trace's address",
                          stop);
        if ((st = block_at(f, &b)) != TK_OK)
            return st;
        if (stop > f->pc && stop <= b->last) {
            if (stop == b->last && b->ninsn > 1) {
                /* the common case: stop on the block's transfer */
                lg_flow_add(f, b->start, b->last - b->prev.len, b->ninsn - 1);
                f->pc = stop;
                return TK_OK;
            }
            return walk_to(f, stop, b->last);
        }
        if (b->status != TK_OK)
            return no_fit(f, b->status == TK_ERR_NO_CODE ? TK_ERR_NO_CODE : TK_ERR_MISMATCH,
                          "the program's code ends before the trace's address", b->last);
        if (!pass(f, b, flags, &st))
            return no_fit(f, TK_ERR_MISMATCH, "a transfer without its trace", b->last);
        if (st != TK_OK)
            return st;
    }
    return TK_OK;
}

tk_status lg_flow_to_cf(lg_flow *f, unsigned flags, bool have_stop, uint64_t stop,
                        const tk_bblock **out)
{
    cycle_check cc = {0, 0};
    for (uint64_t steps = 0;; steps++) {
        const tk_bblock *b;
        tk_status st;
        if (steps > WALK_LIMIT || cycles(&cc, steps, f->pc))
            return no_fit(f, TK_ERR_MISMATCH, "no transfer for the trace item after", f->pc);
        if ((st = block_at(f, &b)) != TK_OK)
            return st;
        if (b->status != TK_OK)
            return no_fit(f, b->status == TK_ERR_NO_CODE ? TK_ERR_NO_CODE : TK_ERR_MISMATCH,
                          "the program's code ends", b->last);
        if (have_stop && stop >= f->pc && stop < b->last)
            return no_fit(f, TK_ERR_MISMATCH, "no transfer at the trace's address", stop);
        if ((have_stop && b->last == stop) || !pass(f, b, flags, &st)) {
            *out = b;
            return TK_OK;
        }
        if (st != TK_OK)
            return st;
    }
}

tk_status lg_flow_take(lg_flow *f, const tk_bblock *b, uint64_t next)
{
    const tk_rv_insn *t = &b->term;
    const uint64_t fall = (b->last + t->len) & f->mask;
    lg_flow_add(f, b->start, b->last, b->ninsn);
    return lg_flow_end(f, tk_rv_range_end(t), t->cf == TK_RV_CF_BRANCH && next != fall, next);
}

tk_status lg_flow_count(lg_flow *f, uint64_t n, tk_rv_insn *last)
{
    for (uint64_t steps = 0; n > 0; steps++) {
        const tk_bblock *b;
        tk_status st;
        if (steps > WALK_LIMIT)
            return no_fit(f, TK_ERR_MISMATCH, "a run longer than the program allows from", f->pc);
        if ((st = block_at(f, &b)) != TK_OK)
            return st;
        if (n < b->ninsn || (n == b->ninsn && b->status != TK_OK)) {
            /* the run ends inside the block: walk to its last instruction */
            for (; n > 1; n--) {
                tk_rv_insn in;
                if ((st = tk_image_fetch(f->img, f->pc, &in)) != TK_OK && !in.len)
                    return no_fit(f, TK_ERR_MISMATCH, "no instruction in the program", f->pc);
                lg_flow_add(f, f->pc, f->pc, 1);
                f->pc = (f->pc + in.len) & f->mask;
            }
            st = tk_image_fetch(f->img, f->pc, last);
            return st == TK_OK || (st == TK_ERR_BAD_INSN && last->len)
                       ? TK_OK
                       : no_fit(f, TK_ERR_MISMATCH, "no instruction in the program", f->pc);
        }
        if (n == b->ninsn) {
            if (b->ninsn > 1)
                lg_flow_add(f, b->start, b->last - b->prev.len, b->ninsn - 1);
            f->pc = b->last;
            *last = b->term;
            return TK_OK;
        }
        if (b->status != TK_OK)
            return no_fit(f, TK_ERR_MISMATCH, "the program's code ends inside a run", b->last);
        /* a transfer inside a run went to its fall-through */
        const tk_rv_insn *t = &b->term;
        /* (an xRET may return to its own fall-through: umode switches do) */
        if (t->cf == TK_RV_CF_ECALL || t->cf == TK_RV_CF_EBREAK)
            return no_fit(f, TK_ERR_MISMATCH, "a trap instruction inside a run", b->last);
        lg_flow_add(f, b->start, b->last, b->ninsn);
        if ((st = lg_flow_end(f, tk_rv_range_end(t), false, (b->last + t->len) & f->mask)) != TK_OK)
            return st;
        n -= b->ninsn;
    }
    return TK_ERR_INVALID;
}
