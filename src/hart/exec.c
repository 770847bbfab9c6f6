/* SPDX-License-Identifier: BSD-2-Clause */
/* The interpreter's helpers and its variants: the loop itself (exec_loop.h) is instantiated
 * once per combination that matters, so that plain runs pay nothing for tracing and the
 * common case (fetches need no PMP check) steps through pre-decoded pages without checks. */
#include <string.h>

#include "hart_internal.h"

/* Direct threading (computed goto) where the compiler has it; a switch elsewhere. */
#if defined(__GNUC__) && !defined(TK_HART_SWITCH_DISPATCH)
#define TK_HART_THREADED 1
#endif

static inline uint64_t sx32(uint64_t v)
{
    return (uint64_t)(int64_t)(int32_t)(uint32_t)v;
}

/* Hand the buffered records to the callback, keeping the last one back when asked: an
 * interrupt taken after it must still be able to flag it. */
static void flush_records(tk_sim *s, hart *h, bool keep_last)
{
    size_t n = h->rn - (keep_last && h->rn ? 1 : 0);
    if (n && s->retire && s->cb_status == TK_OK) {
        tk_status st = s->retire(s->retire_ctx, h->rbuf, n);
        if (st != TK_OK) {
            s->cb_status = st;
            if (s->stop == TK_OK)
                s->stop = st;
        }
    }
    if (n < h->rn)
        h->rbuf[0] = h->rbuf[h->rn - 1];
    h->rn -= n;
}

static void stop_unsupported(tk_sim *s, hart *h, uint64_t pc, uint32_t raw, unsigned len,
                             const char *why)
{
    s->stop = TK_ERR_UNSUPPORTED;
    if (s->diag) {
        tk_diag_set(s->diag, TK_ERR_UNSUPPORTED, "hart %u: %s: instruction 0x%0*x at 0x%llx", h->id,
                    why, len == 2 ? 4 : 8, raw, (unsigned long long)pc);
        s->diag->address = pc;
    }
}

/* Decode the slot for pc (in region r) and fill the interpreter's fields; returns 0 or a
 * fetch fault cause + 1 (tval in *bad), leaving the slot undecoded. */
static int predecode(hart *h, ram *r, uint64_t pc, hinsn *d, uint64_t *bad)
{
    uint64_t off = pc - r->base;
    uint16_t lo, hi = 0;
    memcpy(&lo, r->mem + off, 2);
    if ((lo & 3u) == 3u) {
        if (off + 4 > r->size) {
            *bad = pc + 2;
            return 1 + 1;
        }
        if (((off + 2) & (PAGE_SIZE - 1)) == 0) /* the upper half lies in the next page */
            r->pflags[(off + 2) >> PAGE_SHIFT] |= PF_CODE;
        memcpy(&hi, r->mem + off + 2, 2);
    }
    tk__hart_decode((uint32_t)lo | ((uint32_t)hi << 16), h->xlen, d);
    d->off = (uint16_t)(pc & (PAGE_SIZE - 1));
    d->nextb = (uint8_t)(d->len / 2u * sizeof(hinsn));
    if ((d->op >= OP_BEQ && d->op <= OP_BGEU) || d->op == OP_JAL) {
        uint64_t t = pc + (uint64_t)(int64_t)d->imm;
        if (((t ^ pc) >> PAGE_SHIFT) == 0)
            d->jdelta =
                (int32_t)(((int64_t)(t >> 1) - (int64_t)(pc >> 1)) * (int64_t)sizeof(hinsn));
    }
    /* integer results for x0 go to the scratch x[32] (FP destinations index f[]) */
    if (d->rd == 0 && d->op != OP_FLW && d->op != OP_FLD && d->op != OP_FP)
        d->rd = 32;
    return 0;
}

/* Slot array of the page holding pc (and its region), or NULL on a fetch fault. */
static hinsn *fetch_page(tk_sim *s, uint64_t pc, ram **rp)
{
    ram *r = tk__sim_ram(s, pc, 2);
    if (!r)
        return NULL;
    *rp = r;
    return tk__ram_code_page(r, (pc - r->base) >> PAGE_SHIFT);
}

/* ---- the loop's vocabulary (exec_loop.h) ---- */

#define X(r) h->x[r]
#define PC (cpage + d->off) /* address of the instruction in slot d */
#define SLOT(o) (&slots[(o) >> 1])
/* address of slot p, decoded or not (PC needs a decoded slot but is cheaper) */
#define SLOT_PC(p) (cpage + (uint64_t)((p)-slots) * 2u)
#define STEP(p) ((hinsn *)((char *)(p) + (p)->nextb))
#ifdef TK_HART_THREADED
#define CASE(op) L_##op:
#define DISPATCH() goto *tbl[d->op]
#else
#define CASE(op) case op:
#define DISPATCH() goto dispatch
#endif
/* Count the instruction at d and run it, or stop when the budget is spent. */
#define NEXT()                                                                                     \
    do {                                                                                           \
        if (TK_UNLIKELY(--left < 0))                                                               \
            goto out_d;                                                                            \
        DISPATCH();                                                                                \
    } while (0)
/* The instruction at d completed without jumping. */
#define SEQ()                                                                                      \
    do {                                                                                           \
        if (trace || slowfetch)                                                                    \
            goto retire_seq;                                                                       \
        d = STEP(d);                                                                               \
        NEXT();                                                                                    \
    } while (0)
/* Continue at pc: within the current page without a lookup. */
#define FAST_FETCH()                                                                               \
    do {                                                                                           \
        uint64_t fo_ = pc - cpage;                                                                 \
        if (TK_LIKELY(!slowfetch && fo_ < PAGE_SIZE)) {                                            \
            d = SLOT(fo_);                                                                         \
            NEXT();                                                                                \
        }                                                                                          \
        goto fetch;                                                                                \
    } while (0)
/* A branch or jal at d completed taken: straight to the target's slot when it lies in the
 * same page (jdelta), else through JUMP. */
#define TAKEN()                                                                                    \
    do {                                                                                           \
        if (!trace && !slowfetch && TK_LIKELY(d->jdelta != 0)) {                                   \
            d = (hinsn *)((char *)d + d->jdelta);                                                  \
            NEXT();                                                                                \
        }                                                                                          \
        JUMP((PC + (uint64_t)(int64_t)d->imm) & amask);                                            \
    } while (0)
/* The instruction at d completed and continues at t. */
#define JUMP(t)                                                                                    \
    do {                                                                                           \
        pc = (t);                                                                                  \
        if (trace)                                                                                 \
            goto jumped;                                                                           \
        FAST_FETCH();                                                                              \
    } while (0)
#define SYNC() (h->executed = base_exec + (budget - (uint64_t)left))
#define END_SLICE() (budget -= (uint64_t)left, left = 0)
#define EXC(c, t)                                                                                  \
    do {                                                                                           \
        cause = (c);                                                                               \
        tval = (t);                                                                                \
        goto exception;                                                                            \
    } while (0)
#define EA() ((X(d->rs1) + (uint64_t)(int64_t)d->imm) & amask)
/* Note the instruction's data access for its record (tk_sim_set_mem_trace). */
#define MASKB(nb) ((nb) >= 8 ? ~0ull : (1ull << (8 * (nb))) - 1)
#define MNOTE(fl, a, v, nb)                                                                        \
    do {                                                                                           \
        if (mtrace) {                                                                              \
            h->m_addr = (a);                                                                       \
            h->m_size = (uint8_t)(nb);                                                             \
            h->m_flags |= (fl);                                                                    \
            if ((fl)&TK_HART_M_LOAD)                                                               \
                h->m_rdata = (uint64_t)(v)&MASKB(nb);                                              \
            else                                                                                   \
                h->m_wdata = (uint64_t)(v)&MASKB(nb);                                              \
        }                                                                                          \
    } while (0)
/* RAM data accesses take one bounds check; devices, PMP and faults the slow path. */
#define LOAD(T, nb, dst)                                                                           \
    do {                                                                                           \
        uint64_t a_ = EA(), o_ = a_ - fbase;                                                       \
        T t_;                                                                                      \
        if (TK_LIKELY(o_ < flimit && !(a_ & ((nb)-1u) & align))) {                                 \
            memcpy(&t_, mem + o_, nb);                                                             \
        } else {                                                                                   \
            uint64_t v_ = 0;                                                                       \
            int c_;                                                                                \
            SYNC();                                                                                \
            c_ = tk__mem_load(s, h, a_, nb, &v_);                                                  \
            if (c_)                                                                                \
                EXC((uint64_t)(c_ - 1), a_);                                                       \
            t_ = (T)v_;                                                                            \
        }                                                                                          \
        dst = t_;                                                                                  \
        MNOTE(TK_HART_M_LOAD, a_, t_, nb);                                                         \
    } while (0)
/* A store into a code page drops the decoded slots it overlaps (self-modifying code takes
 * effect at once, as on QEMU); one into the tohost page may end the run. */
#define STORE(nb, val)                                                                             \
    do {                                                                                           \
        uint64_t a_ = EA(), o_ = a_ - fbase, v_ = (val);                                           \
        MNOTE(TK_HART_M_STORE, a_, v_, nb);                                                        \
        if (TK_LIKELY(o_ < flimit && !(a_ & ((nb)-1u) & align))) {                                 \
            memcpy(mem + o_, &v_, nb);                                                             \
            if (TK_UNLIKELY(pflags[o_ >> PAGE_SHIFT])) {                                           \
                if (pflags[o_ >> PAGE_SHIFT] & PF_CODE)                                            \
                    tk__ram_invalidate(r0, a_, nb);                                                \
                if ((pflags[o_ >> PAGE_SHIFT] & PF_WATCH) && a_ < s->tohost + 8 &&                 \
                    a_ + (nb) > s->tohost) {                                                       \
                    SYNC();                                                                        \
                    tk__htif_poke(s);                                                              \
                    END_SLICE();                                                                   \
                }                                                                                  \
            }                                                                                      \
        } else {                                                                                   \
            int c_;                                                                                \
            SYNC();                                                                                \
            c_ = tk__mem_store(s, h, a_, nb, v_);                                                  \
            if (c_)                                                                                \
                EXC((uint64_t)(c_ - 1), a_);                                                       \
            END_SLICE(); /* a device may have raised an interrupt or ended the run */              \
        }                                                                                          \
    } while (0)
/* The retirement record of the instruction at d. */
#define RECORD(it_, pc_)                                                                           \
    do {                                                                                           \
        tk_hart_retire *rr = &h->rbuf[h->rn++];                                                    \
        rr->pc = (pc_);                                                                            \
        rr->cause = 0;                                                                             \
        rr->tval = 0;                                                                              \
        rr->epc = 0;                                                                               \
        rr->insn = d->raw;                                                                         \
        rr->hart = (uint16_t)h->id;                                                                \
        rr->len = d->len;                                                                          \
        rr->itype = (it_);                                                                         \
        rr->priv = ipriv;                                                                          \
        rr->flags = (uint8_t)(TK_HART_F_RETIRED | (d->upper ? TK_HART_F_UPPER : 0));               \
        rr->rd = d->rd & 31u;                                                                      \
        rr->rs1 = d->rs1;                                                                          \
        rr->mflags = 0;                                                                            \
        if (mtrace && h->m_flags) {                                                                \
            rr->maddr = h->m_addr;                                                                 \
            rr->mrdata = h->m_rdata;                                                               \
            rr->mwdata = h->m_wdata;                                                               \
            rr->msize = h->m_size;                                                                 \
            rr->mflags = h->m_flags;                                                               \
            h->m_flags = 0;                                                                        \
        }                                                                                          \
        if (TK_UNLIKELY(h->rn == RBUF_CAP))                                                        \
            flush_records(s, h, true);                                                             \
    } while (0)

/* Plain runs. */
#define RUN_NAME run_plain
#define RUN_ALIGN 0
#define RUN_TRACE false
#define RUN_MTRACE false
#define RUN_SLOWFETCH false
#include "exec_loop.h"
#undef RUN_NAME
#undef RUN_TRACE
#undef RUN_MTRACE
#undef RUN_SLOWFETCH
#undef RUN_ALIGN

/* Retirement records. */
#define RUN_NAME run_trace
#define RUN_ALIGN 0
#define RUN_TRACE true
#define RUN_MTRACE false
#define RUN_SLOWFETCH false
#include "exec_loop.h"
#undef RUN_NAME
#undef RUN_TRACE
#undef RUN_MTRACE
#undef RUN_SLOWFETCH
#undef RUN_ALIGN

/* Retirement records with data accesses. */
#define RUN_NAME run_mtrace
#define RUN_ALIGN 0
#define RUN_TRACE true
#define RUN_MTRACE true
#define RUN_SLOWFETCH false
#include "exec_loop.h"
#undef RUN_NAME
#undef RUN_TRACE
#undef RUN_MTRACE
#undef RUN_SLOWFETCH
#undef RUN_ALIGN

/* Fetches checked against PMP (S/U code under restrictive PMP), or misaligned accesses
 * trapping (spike's behaviour): rarer, so one variant decides at run time. */
#define RUN_NAME run_checked
#define RUN_TRACE (s->retire != NULL)
#define RUN_MTRACE (s->retire != NULL && s->mem_trace)
#define RUN_SLOWFETCH (!h->fast_fetch)
#define RUN_ALIGN (s->cfg.misaligned_trap ? UINT64_MAX : 0)
#include "exec_loop.h"

uint64_t tk__hart_run(tk_sim *s, hart *h, uint64_t budget)
{
    uint64_t done = 0;
    for (;;) {
        bool sw = false;
        if (!h->fast_fetch || s->cfg.misaligned_trap)
            done += run_checked(s, h, budget - done, &sw);
        else if (!s->retire)
            done += run_plain(s, h, budget - done, &sw);
        else if (s->mem_trace)
            done += run_mtrace(s, h, budget - done, &sw);
        else
            done += run_trace(s, h, budget - done, &sw);
        if (!sw || done >= budget)
            return done;
    }
}

void tk__hart_flush_records(tk_sim *s, hart *h, bool keep_last)
{
    flush_records(s, h, keep_last);
}
