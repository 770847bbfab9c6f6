/* SPDX-License-Identifier: BSD-2-Clause */
/* Spike rows to ingress blocks, one block per row, as the reference post-iss computes them
 * (spec/VERSIONS.md C.9). A branch's outcome is known only from the next row's address, so
 * one row is held back. In reference_quirks mode every post-iss quirk is reproduced, and the
 * inputs on which post-iss aborts on an assertion are reported as TK_ERR_UNSUPPORTED; the
 * spec-faithful mode follows the 2.0 ingress port (xRET is itype 3, full cause and tval,
 * sequentially inferable jumps keep their uninferable itype with sijump set). */
#include <stdlib.h>
#include <string.h>

#include "tracekit/riscv.h"
#include "tracekit/te_ingress.h"

typedef struct conv_row {
    tk_te_block blk;
    tk_rv_insn insn;
    uint64_t address;
    uint8_t len;
    bool decoded; /* insn holds a decoded 16/32-bit instruction */
    bool is_branch;
    bool trap; /* EXCEPTION or INTERRUPT row */
    bool valid;
} conv_row;

/* Rows held beyond the one-row delay while an interrupted branch waits for its outcome: the
 * handler's length is not bounded by the trace, this is (then the outcome stays unknown). */
#define TK_SPIKE_CONV_MAX_WAIT (1u << 20)

struct tk_spike_conv {
    tk_te_params p;
    tk_spike_conv_options o;
    conv_row prev;
    uint64_t rows;
    /* Blocks out, in order: q[qhead..qlen). While waiting, q[wait_at] is an interrupted
     * branch whose outcome is not known yet and q[wait_at + 1] the interrupt's block, whose
     * address is the resume address; nothing from wait_at on is handed out. */
    tk_te_block *q;
    size_t qhead, qlen, qcap;
    bool waiting;
    size_t wait_at;
    uint64_t w_fall, w_target; /* the branch's not-taken and taken successors */
    uint32_t w_cause;
    unsigned depth;   /* traps entered minus xRETs since the interrupt */
    bool resume_next; /* the handler returned: the next row's address resumes the flow */
};

tk_status tk_spike_conv_new(const tk_te_params *p, const tk_spike_conv_options *o,
                            tk_spike_conv **out)
{
    *out = NULL;
    if (!p || (p->s.itype_width != 3 && p->s.itype_width != 4))
        return TK_ERR_CONFIG;
    tk_spike_conv *c = calloc(1, sizeof(*c));
    if (!c)
        return TK_ERR_NOMEM;
    c->p = *p;
    if (o)
        c->o = *o;
    else
        c->o.reference_quirks = true;
    *out = c;
    return TK_OK;
}

void tk_spike_conv_free(tk_spike_conv *c)
{
    if (c)
        free(c->q);
    free(c);
}

static tk_status enqueue(tk_spike_conv *c, const tk_te_block *b, tk_diag *diag)
{
    if (c->qhead == c->qlen)
        c->qhead = c->qlen = 0;
    if (c->qlen == c->qcap) {
        if (c->qhead > 0) { /* slide down before growing */
            memmove(c->q, c->q + c->qhead, (c->qlen - c->qhead) * sizeof(*c->q));
            c->wait_at -= c->waiting ? c->qhead : 0;
            c->qlen -= c->qhead;
            c->qhead = 0;
        }
        if (c->qlen == c->qcap) {
            size_t cap = c->qcap ? 2 * c->qcap : 16;
            tk_te_block *nq = realloc(c->q, cap * sizeof(*nq));
            if (!nq)
                return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
            c->q = nq;
            c->qcap = cap;
        }
    }
    c->q[c->qlen++] = *b;
    return TK_OK;
}

/* The interrupted branch's outcome from the address where the flow resumed (ok), or, when
 * that is unknown or neither successor, the trap reported on the branch itself. */
static void resolve_interrupt(tk_spike_conv *c, uint64_t resume, bool ok)
{
    tk_te_block *b = &c->q[c->wait_at];
    if (ok && (resume == c->w_fall || resume == c->w_target)) {
        b->itype = resume == c->w_fall ? TK_ITYPE_NOT_TAKEN : TK_ITYPE_TAKEN;
        c->q[c->wait_at + 1].iaddr = resume;
    } else {
        b->itype = TK_ITYPE_INTERRUPT;
        b->cause = c->w_cause;
        memmove(b + 1, b + 2, (c->qlen - c->wait_at - 2) * sizeof(*b));
        c->qlen--;
    }
    c->waiting = false;
    c->resume_next = false;
}

/* Spec-faithful mode, a branch after which an interrupt is taken (ingressPort: the interrupt
 * follows the instruction, whose own itype the decoder needs): the branch keeps its itype
 * and the interrupt goes in a block of its own that retires nothing, at the address where
 * the flow resumes, as the hart model's block splitter gives it (src/hart/blocks.c). Spike
 * rows do not say where that is: it is the address after the handler's xRET, so the branch
 * waits for it. */
static tk_status start_wait(tk_spike_conv *c, const conv_row *r, tk_diag *diag)
{
    tk_te_block b = r->blk, t = r->blk;
    b.cause = 0;
    b.tval = 0;
    t.iretire = 0;
    t.ilastsize = 0;
    t.itype = TK_ITYPE_INTERRUPT;
    t.tval = 0;
    t.sijump = 0;
    c->w_fall = r->address + r->len;
    c->w_target = r->address + (uint64_t)r->insn.imm;
    c->w_cause = r->blk.cause;
    tk_status st = enqueue(c, &b, diag);
    if (st == TK_OK)
        st = enqueue(c, &t, diag);
    if (st != TK_OK)
        return st;
    c->waiting = true;
    c->wait_at = c->qlen - 2;
    c->depth = 1;
    c->resume_next = false;
    return TK_OK;
}

static bool interrupted_branch(const tk_spike_conv *c, const conv_row *r)
{
    return !c->o.reference_quirks && r->is_branch && r->blk.itype == TK_ITYPE_INTERRUPT &&
           r->blk.iretire != 0;
}

/* Traps and xRETs while a branch waits: the flow resumes after the xRET that leaves the
 * interrupt's handler. */
static void track_handler(tk_spike_conv *c, const conv_row *cur)
{
    if (!c->waiting)
        return;
    if (cur->decoded && cur->insn.cf == TK_RV_CF_XRET && !cur->trap) {
        if (--c->depth == 0)
            c->resume_next = true;
    } else if (cur->trap) {
        c->depth++;
    }
}

/* Hand out the oldest block that is complete. */
static bool dequeue(tk_spike_conv *c, tk_te_block *out)
{
    const size_t end = c->waiting ? c->wait_at : c->qlen;
    if (c->qhead >= end)
        return false;
    *out = c->q[c->qhead++];
    return true;
}

tk_status tk_spike_conv_next(tk_spike_conv *c, tk_te_block *out, bool *ready)
{
    *ready = dequeue(c, out);
    return TK_OK;
}

/* Instruction length from its low bits, as post-iss (riscv-disas inst_length): 0 = unknown. */
static unsigned insn_length(uint64_t insn)
{
    if ((insn & 3) != 3)
        return 2;
    if ((insn & 0x1c) != 0x1c)
        return 4;
    if ((insn & 0x3f) == 0x1f)
        return 6;
    if ((insn & 0x7f) == 0x3f)
        return 8;
    return 0;
}

/* rd of the 32-bit expansion: post-iss classifies expanded instructions, so c.jalr is
 * jalr x1,rs1, c.jal is jal x1, c.jr and c.j link to x0. */
static unsigned link_rd(const tk_rv_insn *i)
{
    if (!i->compressed)
        return i->rd;
    if (i->cf == TK_RV_CF_JAL)
        return ((i->raw >> 13) & 7u) == 1u ? 1u : 0u; /* c.jal is funct3 001 */
    if (i->cf == TK_RV_CF_JALR)
        return (i->raw >> 12) & 1u; /* c.jalr has bit 12 set, c.jr clear */
    return i->rd;
}

static bool is_link(unsigned r)
{
    return r == 1 || r == 5;
}

/* The reference disassembler does not know mnret: it is no discontinuity for post-iss. */
static bool is_quirk_xret(const tk_rv_insn *i)
{
    const char *n = tk_rv_op_name(i->op);
    return !n || strcmp(n, "mnret") != 0;
}

enum jclass { J_NONE, J_CALL, J_TAIL, J_SWAP, J_RETURN, J_OTHER };

/* 2.0 RAS-hint classes on the expanded form (VERSIONS.md C.9 4(e), in post-iss's order). */
static enum jclass jump_class(const tk_rv_insn *i)
{
    unsigned rd = link_rd(i), rs1 = i->rs1;
    if (i->cf == TK_RV_CF_JAL)
        return is_link(rd) ? J_CALL : rd == 0 ? J_TAIL : J_OTHER;
    if (i->cf != TK_RV_CF_JALR)
        return J_OTHER; /* xRET */
    if ((rd == 1 && rs1 != 5) || (rd == 5 && rs1 != 1))
        return J_CALL;
    if (rd == 0 && !is_link(rs1))
        return J_TAIL;
    if ((rd == 1 && rs1 == 5) || (rd == 5 && rs1 == 1))
        return J_SWAP;
    if (is_link(rs1) && !is_link(rd))
        return J_RETURN;
    return J_OTHER;
}

static tk_status quirk_abort(tk_diag *diag, uint64_t addr, const char *why)
{
    tk_status st =
        tk_diag_set(diag, TK_ERR_UNSUPPORTED, "post-iss aborts on this row (address %llx): %s",
                    (unsigned long long)addr, why);
    if (diag)
        diag->address = addr;
    return st;
}

static tk_status classify(tk_spike_conv *c, const tk_spike_row *row, conv_row *cur, tk_diag *diag)
{
    const bool quirks = c->o.reference_quirks;
    const conv_row *prev = &c->prev;
    memset(cur, 0, sizeof(*cur));
    cur->valid = true;
    cur->address = row->address;
    cur->trap = row->exception || row->interrupt;
    unsigned len = insn_length(row->insn);
    if (len == 0 || len == 6)
        return tk_diag_set(diag, TK_ERR_UNSUPPORTED,
                           "instruction %llx at %llx: %s-bit instructions have no ilastsize",
                           (unsigned long long)row->insn, (unsigned long long)row->address,
                           len == 6 ? "48" : "longer than 64");
    cur->len = (uint8_t)len;
    if (len <= 4)
        cur->decoded = tk_rv_decode((uint32_t)row->insn, c->o.rv32 ? 32 : 64, &cur->insn) == TK_OK;
    const tk_rv_insn *in = &cur->insn;
    bool ok = cur->decoded;
    cur->is_branch = ok && in->cf == TK_RV_CF_BRANCH;
    bool ecall_ebreak = ok && (in->cf == TK_RV_CF_ECALL || in->cf == TK_RV_CF_EBREAK);
    bool xret = ok && in->cf == TK_RV_CF_XRET && (!quirks || is_quirk_xret(in));
    bool jal = ok && in->cf == TK_RV_CF_JAL;
    bool jalr = ok && in->cf == TK_RV_CF_JALR;

    tk_te_block *b = &cur->blk;
    b->iaddr = row->address;
    b->priv = row->privilege;
    b->ilastsize = len == 2 ? 0 : len == 4 ? 1 : 2;
    /* ecall and ebreak retire and trap; other faulting instructions do not retire. */
    b->iretire = (row->exception && !ecall_ebreak) ? 0u : (1u << b->ilastsize);

    /* jalr with rs1 = x0 has an absolute, inferable target. */
    bool inferable = jal || (jalr && !in->compressed && in->rs1 == 0);
    bool uninferable = (jalr && !inferable) || xret;
    bool sijump = false;
    if (c->p.s.sijump && uninferable && !xret && prev->valid && prev->decoded &&
        (prev->insn.is_auipc || prev->insn.is_lui) && prev->insn.rd == in->rs1)
        sijump = true;
    if (sijump && quirks) {
        /* post-iss turns the jump into an inferable one */
        inferable = true;
        uninferable = false;
    }
    b->sijump = sijump;
    bool is_jump = inferable || uninferable;
    enum jclass jc = is_jump ? jump_class(in) : J_NONE;
    if (xret)
        jc = J_OTHER;

    int it = -1; /* post-iss's ITYPE_INVALID */
    if (row->interrupt || row->exception) {
        it = row->interrupt ? TK_ITYPE_INTERRUPT : TK_ITYPE_EXCEPTION;
        uint64_t mask = quirks ? 0xffu : UINT64_MAX;
        b->cause = (uint32_t)(row->ecause & mask);
        /* 2.0: tval is valid for exceptions only */
        b->tval = (quirks || !row->interrupt) ? row->tval & mask : 0;
    }
    if (!quirks) {
        if (it < 0) {
            if (xret)
                it = TK_ITYPE_TRAP_RETURN;
            else if (cur->is_branch)
                it = TK_ITYPE_NONE; /* fixed up from the next row */
            else if (is_jump)
                it = tk_rv_itype(in, true, false, c->p.s.itype_width);
            else
                it = TK_ITYPE_NONE;
        }
        b->itype = (uint8_t)it;
        return TK_OK;
    }

    /* Reference mode: post-iss's infer_itype, including the cases where it asserts. */
    bool is_return = jc == J_RETURN;
    if (prev->valid && prev->trap && is_return) {
        if (it >= 0)
            return quirk_abort(diag, row->address, "a trapping return right after a trap row");
        it = TK_ITYPE_TRAP_RETURN;
    }
    if (!cur->trap) {
        if (c->p.s.itype_width == 3) {
            if (it >= 0)
                return quirk_abort(diag, row->address, "a return right after a trap row");
            it = uninferable ? TK_ITYPE_UNINF_JUMP3 : TK_ITYPE_NONE;
        } else if (is_jump) {
            int code = -1;
            if (uninferable)
                code = jc == J_CALL     ? TK_ITYPE_UNINF_CALL
                       : jc == J_TAIL   ? TK_ITYPE_UNINF_JUMP
                       : jc == J_SWAP   ? TK_ITYPE_SWAP
                       : jc == J_RETURN ? TK_ITYPE_RETURN
                                        : TK_ITYPE_UNINF_OTHER;
            else if (jc == J_CALL || jc == J_TAIL || jc == J_OTHER)
                code = jc == J_CALL   ? TK_ITYPE_INF_CALL
                       : jc == J_TAIL ? TK_ITYPE_INF_JUMP
                                      : TK_ITYPE_INF_OTHER;
            if (code >= 0) {
                if (it >= 0)
                    return quirk_abort(diag, row->address, "a return right after a trap row");
                it = code;
            }
        }
    }
    if (it < 0) {
        if (is_jump)
            return quirk_abort(diag, row->address,
                               "a sequentially inferable return or co-routine swap");
        it = TK_ITYPE_NONE;
    }
    b->itype = (uint8_t)it;
    return TK_OK;
}

/* The previous row's branch outcome, from the address that followed it. */
static tk_status resolve_branch(tk_spike_conv *c, uint64_t next_addr, tk_diag *diag)
{
    conv_row *prev = &c->prev;
    if (!prev->is_branch)
        return TK_OK;
    if (prev->blk.itype != TK_ITYPE_NONE) {
        if (c->o.reference_quirks)
            return quirk_abort(diag, prev->address, "a branch that traps");
        return TK_OK; /* the trap is what the ingress reports */
    }
    prev->blk.itype = next_addr == prev->address + prev->len ? TK_ITYPE_NOT_TAKEN : TK_ITYPE_TAKEN;
    return TK_OK;
}

tk_status tk_spike_conv_push(tk_spike_conv *c, const tk_spike_row *row, tk_te_block *out,
                             bool *ready, tk_diag *diag)
{
    *ready = false;
    conv_row cur;
    tk_status st = classify(c, row, &cur, diag);
    if (st != TK_OK)
        return st;
    if (c->waiting && c->resume_next)
        resolve_interrupt(c, row->address, true);
    if (c->prev.valid) {
        st = resolve_branch(c, row->address, diag);
        if (st != TK_OK)
            return st;
        if (interrupted_branch(c, &c->prev) && !c->waiting) {
            st = start_wait(c, &c->prev, diag);
        } else if (c->qhead == c->qlen) {
            *out = c->prev.blk; /* the common case: straight out */
            *ready = true;
        } else {
            st = enqueue(c, &c->prev.blk, diag);
        }
        if (st != TK_OK)
            return st;
    }
    track_handler(c, &cur);
    if (c->waiting && c->qlen - c->wait_at > TK_SPIKE_CONV_MAX_WAIT)
        resolve_interrupt(c, 0, false);
    c->prev = cur;
    c->rows++;
    if (!*ready)
        *ready = dequeue(c, out);
    return TK_OK;
}

tk_status tk_spike_conv_finish(tk_spike_conv *c, tk_te_block *out, bool *ready, tk_diag *diag)
{
    *ready = false;
    if (c->prev.valid) {
        /* post-iss compares the final branch with address 0: it is marked taken. */
        tk_status st = resolve_branch(c, 0, diag);
        if (st == TK_OK)
            st = enqueue(c, &c->prev.blk, diag);
        if (st != TK_OK)
            return st;
        c->prev.valid = false;
    } else if (c->rows == 0 && c->o.reference_quirks) {
        /* post-iss writes one all-zero row for an input without rows */
        memset(out, 0, sizeof(*out));
        *ready = true;
        c->rows = 1;
        return TK_OK;
    }
    if (c->waiting) /* the trace ends inside the handler: the outcome is unknown */
        resolve_interrupt(c, 0, false);
    *ready = dequeue(c, out);
    return TK_OK;
}
