/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: following the execution path (decoder.adoc follow_execution_path and
 * next_pc). The walk goes block by block through the image's block cache: instructions
 * inside a block are sequential, so the only per-instruction question there is whether the
 * reported address lies inside the block, which one range comparison answers. */
#include <string.h>

#include "decoder_int.h"

enum { ARRIVE_GO_ON = 0, ARRIVE_STOP = 1 };

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

static uint8_t end_kind(const tk_rv_insn *i)
{
    switch (i->cf) {
    case TK_RV_CF_BRANCH:
        return TK_END_BRANCH;
    case TK_RV_CF_JAL:
    case TK_RV_CF_JALR:
        switch (i->jclass) {
        case TK_RV_J_CALL:
            return TK_END_CALL;
        case TK_RV_J_RETURN:
            return TK_END_RETURN;
        case TK_RV_J_SWAP:
            return TK_END_SWAP;
        case TK_RV_J_OTHER:
            return TK_END_OTHER_JUMP;
        default:
            return TK_END_JUMP;
        }
    case TK_RV_CF_XRET:
        return TK_END_TRAP_RETURN;
    case TK_RV_CF_ECALL:
    case TK_RV_CF_EBREAK:
        return TK_END_TRAP;
    default:
        return TK_END_NONE;
    }
}

int tk_dec_block(tk_te_decoder *d, uint64_t pc, const tk_bblock **out)
{
    tk_status st = tk_image_block(d->img, pc, out);
    if (st == TK_OK && (*out)->ninsn > 0)
        return TK_OK;
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

/* Implicit return stack (push_return_stack / pop_return_stack). */
static void irstack_push(tk_te_decoder *d, uint64_t link)
{
    if (!d->irstack_max)
        return;
    if (d->irstack_depth == d->irstack_max) {
        /* drop the oldest entry */
        memmove(d->irstack, d->irstack + 1, (d->irstack_max - 1) * sizeof(d->irstack[0]));
        d->irstack_depth--;
    }
    d->irstack[d->irstack_depth++] = link;
}

static bool is_implicit_return(const tk_te_decoder *d, const tk_rv_insn *i, const tk_dec_walk *w)
{
    if (!d->p.o.implicit_return || !d->irstack_max)
        return false;
    /* jalr x0, x1 / c.jr x1 */
    if (!(i->cf == TK_RV_CF_JALR && i->rs1 == 1 && i->rd == 0))
        return false;
    /* The packet reports this return's address explicitly (decoder.adoc is_implicit_return). */
    if (w && w->irreport && w->irdepth == d->irstack_depth)
        return false;
    return d->irstack_depth > 0;
}

int tk_dec_exec(tk_te_decoder *d, const tk_rv_insn *insn, uint64_t this_pc, const tk_rv_insn *prev,
                uint64_t prev_pc, uint64_t uninf_target, const tk_dec_walk *w, bool dry,
                tk_dec_step *out)
{
    memset(out, 0, sizeof(*out));
    out->end = end_kind(insn);
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
    } else if (is_implicit_return(d, insn, w)) {
        next = d->irstack[d->irstack_depth - 1];
        out->popped = true;
        if (!dry)
            d->irstack_depth--;
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
    } else if (insn->cf == TK_RV_CF_BRANCH) {
        if (d->branches == 0) {
            if (dry) {
                out->next = 0;
                return TK_OK;
            }
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "branch at 0x%llx but the branch map is used up (cannot resolve "
                               "branch)",
                               (unsigned long long)this_pc);
        }
        out->taken = !(d->branch_map & 1);
        if (!dry) {
            d->branch_map >>= 1;
            d->branches--;
            out->consumed = true;
        }
        if (out->taken) {
            next = this_pc + (uint64_t)insn->imm;
            out->stop_here = insn->imm == 0; /* as for jumps to themselves */
        }
    }
    if (!dry && (insn->cf == TK_RV_CF_JAL || insn->cf == TK_RV_CF_JALR) && insn->rd == 1 &&
        d->p.o.implicit_return)
        irstack_push(d, this_pc + insn->len); /* is_call(): rd == x1 (c.jal/c.jalr too) */
    out->next = next & d->addr_mask;
    return TK_OK;
}

/* The stop conditions of follow_execution_path() on reaching pc. last is the instruction
 * executed to get there (NULL if it was a sequential one). */
static int arrive(tk_te_decoder *d, const tk_dec_walk *w, uint64_t pc, bool is_branch,
                  const tk_rv_insn *last, bool stop_here)
{
    const unsigned limit = is_branch ? 1 : 0;
    if (d->branches == 1 && is_branch && d->stop_at_last_branch) {
        /* Reached the final branch of a map without address: its outcome is not known
         * yet, nor whether it retires. */
        d->stop_at_last_branch = false;
        return ARRIVE_STOP;
    }
    if (stop_here) {
        if (d->branches > limit)
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "%u unprocessed branches on reaching 0x%llx after an "
                               "uninferable jump",
                               d->branches - limit, (unsigned long long)pc);
        return ARRIVE_STOP;
    }
    if (pc != w->address || d->branches != limit)
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
    if (w->notify)
        return ARRIVE_STOP;
    if ((!last || !tk_dec_is_uninferable_discon(d, last)) && !w->updiscon &&
        (!w->irreport || w->irdepth == d->irstack_depth)) {
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

/* Walk the sequential part of block b (from pc, already reached, to the block's last
 * instruction), stopping early if the reported address is one of them. */
static int walk_inside(tk_te_decoder *d, const tk_dec_walk *w, const tk_bblock *b)
{
    if (w->address > d->pc && w->address < b->last) {
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
        if (a == w->address) {
            int r = arrive(d, w, a, false, NULL, false);
            if (r == ARRIVE_STOP) {
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
            if (r != ARRIVE_GO_ON)
                return r;
        }
    }
    d->range_ninsn += b->ninsn - 1;
    d->pc = b->last;
    d->last_pc = b->last - b->prev.len;
    d->last_insn = b->prev;
    d->last_valid = true;
    return arrive(d, w, d->pc, b->term.cf == TK_RV_CF_BRANCH, NULL, false);
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

int tk_dec_follow(tk_te_decoder *d, const tk_dec_walk *w)
{
    /* While inferred_address is set, uninferable jumps go back to the address the previous
     * packet reported (the "looplabel" case of payload.adoc). */
    const uint64_t previous_address = d->pc;
    const tk_bblock *b = NULL;
    cycle cyc;
    int r;

    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_RANGE;
    cycle_reset(&cyc, d->pc);
    for (;;) {
        if (!b && (r = tk_dec_block(d, d->pc, &b)) != TK_OK)
            return r;
        const bool inferred = d->inferred_address;
        if (b->ninsn > 1) {
            if (!inferred) {
                r = walk_inside(d, w, b);
                if (r == ARRIVE_STOP)
                    return TK_OK;
                if (r != ARRIVE_GO_ON)
                    return r;
            } else {
                d->range_ninsn += b->ninsn - 1;
                d->pc = b->last;
                d->last_pc = b->last - b->prev.len;
                d->last_insn = b->prev;
                d->last_valid = true;
            }
        }

        /* next_pc() for the block's control-flow instruction */
        tk_dec_step s;
        r = tk_dec_exec(d, &b->term, b->last, d->last_valid ? &d->last_insn : NULL, d->last_pc,
                        inferred ? previous_address : w->address, w, false, &s);
        if (r != TK_OK)
            return r;
        /* The event is cleared once per walk, not per block: a zero initialiser of the whole
         * struct here compiled to "rep stosq", the most expensive instruction of the loop.
         * The fields not set below stay zero (callbacks get it const). */
        ev.end = s.end;
        ev.taken = s.taken;
        ev.indirect = s.indirect;
        ev.first = d->range_first;
        ev.last = b->last;
        ev.ninsn = d->range_ninsn;
        ev.next = s.next;
        d->range_ninsn = 0;
        if ((r = tk_dec_emit(d, &ev)) != TK_OK)
            return r;
        d->last_insn = b->term;
        d->last_pc = b->last;
        d->last_valid = true;
        d->pc = s.next;
        d->range_first = s.next;
        d->range_ninsn = 1;
        b = NULL;

        if (inferred) {
            if (s.stop_here) {
                d->inferred_address = false;
                if (w->until_discon)
                    return TK_OK;
            }
        } else {
            if ((r = tk_dec_block(d, d->pc, &b)) != TK_OK)
                return r;
            const bool br = b->ninsn == 1 && b->term.cf == TK_RV_CF_BRANCH;
            r = arrive(d, w, d->pc, br, &d->last_insn, s.stop_here);
            if (r == ARRIVE_STOP)
                return TK_OK;
            if (r != ARRIVE_GO_ON)
                return r;
        }
        if (s.consumed || s.stop_here || s.popped) {
            cycle_reset(&cyc, d->pc);
        } else if (cycle_step(&cyc, d->pc)) {
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "path loops through 0x%llx without reaching the reported "
                               "address 0x%llx",
                               (unsigned long long)d->pc, (unsigned long long)w->address);
        }
    }
}
