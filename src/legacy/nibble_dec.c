/* SPDX-License-Identifier: BSD-2-Clause */
/* Nibble trace decoder: sequences -> trace events (and data accesses).
 *
 * Groups as nibble_enc.c writes them (docs/formats.md):
 *   PC-only trace:  PC(from) PC(to)                       taken branch or jump
 *                   PC(from) Priv PC(to)                  xRET
 *   branch trace:   Taken | Not Taken                     the next branch
 *                   PC(to)                                the next jalr
 *                   Priv PC(to)                           the next xRET
 *   both:           PC(epc) Priv Cause PC(handler)        trap
 *                   PC(end) Trace Disabled                end of trace (end: first PC not run)
 *                   Trace Enabled v Hart PC(x)            resync at a sync point
 * and data sequences between groups. A decoder that is not synchronised skips everything up
 * to the next Trace Enabled; a mismatch with the program becomes an error event and costs
 * synchronisation until then. */
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "nibble_int.h"

#define LOOKAHEAD 4

typedef struct vregs {
    uint64_t pc, la, sa, ts;
} vregs;

struct tk_nibble_decoder {
    tk_nibble_params p;
    tk_image *img;
    tk_access_fn afn;
    void *actx;
    lg_flow f;
    nib_reader rd;
    tk_nibble_seq la[LOOKAHEAD]; /* sequences read ahead (Nops dropped) */
    tk_status la_st[LOOKAHEAD];
    unsigned nla;
    vregs v;
    unsigned shift;
    bool synced, started, have_priv;
    unsigned priv;
    tk_nibble_decoder_stats st;
};

tk_status tk_nibble_decoder_new(const tk_nibble_params *p, tk_image *img, tk_event_fn fn, void *ctx,
                                tk_access_fn afn, void *actx, tk_nibble_decoder **out)
{
    if (!p || !fn || !out)
        return TK_ERR_INVALID;
    if (tk_nibble_params_validate(p, NULL) != TK_OK)
        return TK_ERR_CONFIG;
    if ((p->emit & TK_NIB_BRANCH) && !img)
        return TK_ERR_CONFIG;
    tk_nibble_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return TK_ERR_NOMEM;
    d->p = *p;
    d->img = img;
    d->afn = afn;
    d->actx = actx;
    d->shift = p->compressed ? 1 : 2;
    lg_flow_init(&d->f, img, p->xlen, fn, ctx);
    *out = d;
    return TK_OK;
}

void tk_nibble_decoder_free(tk_nibble_decoder *d)
{
    free(d);
}

/* ---- reading sequences ---- */

static void fill(tk_nibble_decoder *d, unsigned k)
{
    while (d->nla <= k) {
        if (d->nla && d->la_st[d->nla - 1] != TK_OK)
            return; /* nothing is read past the end or a bad sequence */
        tk_nibble_seq s;
        tk_status st;
        do
            st = nib_read(&d->rd, &s);
        while (st == TK_OK && s.header == TK_NIB_H_NOP);
        d->la[d->nla] = s;
        d->la_st[d->nla] = st;
        d->nla++;
    }
}

/* Header of the k-th sequence ahead, or -1 at the end / an unreadable one. */
static int peek(tk_nibble_decoder *d, unsigned k)
{
    fill(d, k);
    if (k >= d->nla || d->la_st[k] != TK_OK)
        return -1;
    return d->la[k].header;
}

static tk_status take(tk_nibble_decoder *d, tk_nibble_seq *s)
{
    fill(d, 0);
    *s = d->la[0];
    tk_status st = d->la_st[0];
    if (st == TK_OK) {
        memmove(d->la, d->la + 1, (d->nla - 1) * sizeof(d->la[0]));
        memmove(d->la_st, d->la_st + 1, (d->nla - 1) * sizeof(d->la_st[0]));
        d->nla--;
        d->st.sequences++;
        d->f.offset = ((d->rd.start + s->offset) % (d->rd.ring ? d->rd.ring : ~0ull)) / 2;
        d->f.index = d->st.sequences - 1;
    }
    return st;
}

/* Value of a PC sequence: "missing bits must be filled in with the last PC value". */
static uint64_t pc_of(tk_nibble_decoder *d, const tk_nibble_seq *s)
{
    d->v.pc = nib_expand_last(s->raw, s->nnibbles, d->v.pc);
    uint64_t a = d->v.pc << d->shift;
    return d->p.xlen == 32 ? a & 0xffffffffu : a;
}

/* ---- errors and events ---- */

static tk_status fail(tk_nibble_decoder *d, tk_status why, const char *msg)
{
    d->st.errors++;
    tk_status st = lg_flow_lose(&d->f);
    if (st != TK_OK)
        return st;
    d->synced = false;
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_ERROR;
    ev.status = why;
    ev.first = d->f.pc;
    ev.message = msg;
    return lg_flow_emit(&d->f, &ev);
}

static tk_status walk_fail(tk_nibble_decoder *d, tk_status st)
{
    if (st == TK_ERR_MISMATCH || st == TK_ERR_NO_CODE || st == TK_ERR_BAD_INSN)
        return fail(d, st, d->f.msg);
    return st; /* the callback's status */
}

static tk_status emit_simple(tk_nibble_decoder *d, uint16_t kind, uint64_t addr)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.first = ev.last = addr;
    ev.priv = (uint8_t)d->priv;
    return lg_flow_emit(&d->f, &ev);
}

static tk_status set_priv(tk_nibble_decoder *d, unsigned arg, uint64_t at)
{
    const unsigned priv = (arg >> 1) & 3u;
    if (d->have_priv && priv == d->priv)
        return TK_OK;
    d->have_priv = true;
    d->priv = priv;
    return emit_simple(d, TK_EV_PRIVILEGE, at);
}

static unsigned walk_flags(const tk_nibble_decoder *d)
{
    return (d->p.emit & TK_NIB_BRANCH) ? LG_FOLLOW_JAL : LG_PASS_NOT_TAKEN;
}

/* Without the program (PC-only trace): a range from pc to last, or up to but excluding
 * stop (last unknown with compressed code: stop - 2 stands for it, ninsn 0). */
static tk_status blind_range(tk_nibble_decoder *d, bool inclusive, uint64_t at, uint8_t end,
                             uint64_t next)
{
    lg_flow *f = &d->f;
    if (!inclusive && at == f->pc) {
        f->pc = next;
        return TK_OK;
    }
    const uint64_t step = d->p.compressed ? 2 : 4;
    const uint64_t last = inclusive ? at : at - step;
    if (last < f->pc || last - f->pc > (1ull << 28))
        return fail(d, TK_ERR_MISMATCH, "a run that ends before it starts, or implausibly far");
    const uint64_t n = d->p.compressed ? 0 : (last - f->pc) / 4 + 1;
    lg_flow_add(f, f->pc, last, 0);
    f->ev.ninsn = n;
    return lg_flow_end(f, end, false, next);
}

/* ---- groups ---- */

static tk_status do_resync(tk_nibble_decoder *d, const tk_nibble_seq *te)
{
    tk_nibble_seq hs, ps;
    tk_status st;
    if (te->arg != 0)
        return fail(d, TK_ERR_UNSUPPORTED, "trace data version is not 0");
    if (peek(d, 0) != TK_NIB_H_HART || peek(d, 1) != TK_NIB_H_PC)
        return fail(d, TK_ERR_BAD_PACKET, "Trace Enabled without Change Hart and PC");
    take(d, &hs);
    take(d, &ps);
    memset(&d->v, 0, sizeof(d->v)); /* every value after a sync point is sent whole */
    const uint64_t x = pc_of(d, &ps);
    d->f.trace_id = (uint32_t)hs.raw;
    d->st.resyncs++;
    if (d->synced)
        return TK_OK; /* in step already: the resync names where the flow is */
    d->synced = true;
    d->f.pc = x;
    d->f.have_pc = true;
    st = emit_simple(d, d->started ? TK_EV_SYNC : TK_EV_TRACE_ON, x);
    d->started = true;
    return st;
}

static bool included(tk_nibble_decoder *d, uint64_t epc, uint32_t cause, bool interrupt)
{
    if (interrupt)
        return false;
    if (d->img) {
        tk_rv_insn in;
        return tk_image_fetch(d->img, epc, &in) == TK_OK &&
               (in.cf == TK_RV_CF_ECALL || in.cf == TK_RV_CF_EBREAK);
    }
    /* breakpoint and environment calls: ebreak/ecall retired and trapped */
    return cause == 3 || (cause >= 8 && cause <= 11);
}

static tk_status do_trap(tk_nibble_decoder *d, uint64_t epc)
{
    tk_nibble_seq pr, cs, hs;
    take(d, &pr);
    if (peek(d, 0) != TK_NIB_H_CAUSE || peek(d, 1) != TK_NIB_H_PC)
        return fail(d, TK_ERR_BAD_PACKET, "trap without cause and handler");
    take(d, &cs);
    take(d, &hs);
    const uint64_t handler = pc_of(d, &hs);
    const bool interrupt = (pr.arg >> 3) & 1u;
    const uint32_t cause = (uint32_t)cs.raw;
    const bool incl = included(d, epc, cause, interrupt);
    lg_flow *f = &d->f;
    tk_status st;
    if (d->img) {
        if ((st = lg_flow_advance(f, epc, walk_flags(d))) != TK_OK)
            return walk_fail(d, st);
        if (incl) {
            lg_flow_add(f, epc, epc, 1);
            st = lg_flow_end(f, TK_END_TRAP, false, epc);
        } else {
            st = lg_flow_close(f, epc);
        }
    } else {
        st = blind_range(d, incl, epc, incl ? TK_END_TRAP : TK_END_NONE, epc);
        if (st != TK_OK || !d->synced)
            return st; /* the range did not fit: wait for the next resync */
    }
    if (st != TK_OK || (st = lg_flow_trap(f, epc, handler, cause, interrupt)) != TK_OK)
        return st;
    d->st.traps++;
    return set_priv(d, pr.arg, handler);
}

/* A transfer at the end of block b (from pc) to next. */
static tk_status transfer(tk_nibble_decoder *d, const tk_bblock *b, uint64_t next)
{
    tk_status st = lg_flow_take(&d->f, b, next);
    return st;
}

/* PC-only trace: PC(from) PC(to), or PC(from) Priv PC(to) for xRET. */
static tk_status do_pair(tk_nibble_decoder *d, uint64_t from, bool xret)
{
    tk_nibble_seq pr, ts;
    lg_flow *f = &d->f;
    if (xret) {
        take(d, &pr);
        if (peek(d, 0) != TK_NIB_H_PC)
            return fail(d, TK_ERR_BAD_PACKET, "xRET without its target");
    }
    take(d, &ts);
    const uint64_t to = pc_of(d, &ts);
    tk_status st;
    if (!d->img) {
        st = blind_range(d, true, from, xret ? TK_END_TRAP_RETURN : TK_END_JUMP, to);
        if (st != TK_OK || !d->synced)
            return st;
    } else {
        const tk_bblock *b;
        if ((st = lg_flow_to_cf(f, LG_PASS_NOT_TAKEN, true, from, &b)) != TK_OK)
            return walk_fail(d, st);
        const tk_rv_insn *t = &b->term;
        bool ok = b->last == from;
        if (ok && xret)
            ok = t->cf == TK_RV_CF_XRET;
        else if (ok && (t->cf == TK_RV_CF_BRANCH || t->cf == TK_RV_CF_JAL))
            ok = lg_target(f, t, from) == to;
        else if (ok)
            ok = t->cf == TK_RV_CF_JALR;
        if (!ok)
            return fail(d, TK_ERR_MISMATCH, "PC pair does not match a transfer in the program");
        st = transfer(d, b, to);
    }
    if (st == TK_OK && xret)
        st = set_priv(d, pr.arg, to);
    return st;
}

/* Branch trace: the next branch / jalr / xRET the program reaches takes this item. */
static tk_status do_branch_item(tk_nibble_decoder *d, int kind, uint64_t to, unsigned priv_arg)
{
    lg_flow *f = &d->f;
    const tk_bblock *b;
    tk_status st = lg_flow_to_cf(f, LG_FOLLOW_JAL, false, 0, &b);
    if (st != TK_OK)
        return walk_fail(d, st);
    const tk_rv_insn *t = &b->term;
    const uint64_t fall = (b->last + t->len) & f->mask;
    switch (kind) {
    case TK_NIB_H_TAKEN:
    case TK_NIB_H_NOT_TAKEN:
        if (t->cf != TK_RV_CF_BRANCH)
            return fail(d, TK_ERR_MISMATCH, "branch outcome but the program reaches no branch");
        return transfer(d, b, kind == TK_NIB_H_TAKEN ? lg_target(f, t, b->last) : fall);
    case TK_NIB_H_PC:
        if (t->cf != TK_RV_CF_JALR)
            return fail(d, TK_ERR_MISMATCH, "jump target but the program reaches no jalr");
        return transfer(d, b, to);
    default:
        if (t->cf != TK_RV_CF_XRET)
            return fail(d, TK_ERR_MISMATCH, "xRET target but the program reaches no xRET");
        if ((st = transfer(d, b, to)) != TK_OK)
            return st;
        return set_priv(d, priv_arg, to);
    }
}

static tk_status do_end(tk_nibble_decoder *d, uint64_t end)
{
    tk_nibble_seq off;
    take(d, &off);
    lg_flow *f = &d->f;
    tk_status st;
    if (d->img) {
        if ((st = lg_flow_advance(f, end, walk_flags(d))) != TK_OK)
            return walk_fail(d, st);
        st = lg_flow_close(f, 0);
    } else {
        st = blind_range(d, false, end, TK_END_NONE, 0);
        if (st == TK_OK && f->open)
            st = lg_flow_close(f, 0);
    }
    if (st == TK_OK)
        st = emit_simple(d, TK_EV_TRACE_OFF, end);
    d->synced = false;
    return st;
}

static tk_status do_access(tk_nibble_decoder *d, const tk_nibble_seq *s)
{
    tk_access a;
    memset(&a, 0, sizeof(a));
    a.hart = (uint16_t)d->f.trace_id;
    const bool load = s->header == TK_NIB_H_LOAD_ADDR || s->header == TK_NIB_H_LOAD_DATA;
    a.kind = load ? TK_ACC_LOAD : TK_ACC_STORE;
    if (s->header == TK_NIB_H_LOAD_ADDR || s->header == TK_NIB_H_STORE_ADDR) {
        uint64_t *last = load ? &d->v.la : &d->v.sa;
        *last = nib_expand_last(s->raw, s->nnibbles, *last);
        a.addr = *last;
        a.flags = TK_ACC_HAVE_ADDR;
        const int want = load ? TK_NIB_H_LOAD_DATA : TK_NIB_H_STORE_DATA;
        if (peek(d, 0) == want) {
            tk_nibble_seq ds;
            take(d, &ds);
            a.data = nib_expand_sext(ds.raw, ds.nnibbles);
            a.flags |= TK_ACC_HAVE_DATA;
        }
    } else {
        a.data = nib_expand_sext(s->raw, s->nnibbles);
        a.flags = TK_ACC_HAVE_DATA;
    }
    d->st.accesses++;
    return d->afn ? d->afn(d->actx, &a) : TK_OK;
}

static tk_status step(tk_nibble_decoder *d, const tk_nibble_seq *s)
{
    const bool branch_mode = (d->p.emit & TK_NIB_BRANCH) != 0;
    if (s->header == TK_NIB_H_TRACE_ON)
        return do_resync(d, s);
    if (!d->synced)
        return TK_OK; /* wait for a resync */
    switch (s->header) {
    case TK_NIB_H_HART:
        d->f.trace_id = (uint32_t)s->raw;
        return TK_OK;
    case TK_NIB_H_LOAD_ADDR:
    case TK_NIB_H_STORE_ADDR:
    case TK_NIB_H_LOAD_DATA:
    case TK_NIB_H_STORE_DATA:
        return do_access(d, s);
    case TK_NIB_H_TIMESTAMP: {
        d->v.ts = nib_expand_last(s->raw, s->nnibbles, d->v.ts);
        tk_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = TK_EV_TIMESTAMP;
        ev.time = d->v.ts;
        ev.first = d->f.pc;
        return lg_flow_emit(&d->f, &ev);
    }
    case TK_NIB_H_TAKEN:
    case TK_NIB_H_NOT_TAKEN:
        if (!branch_mode)
            return fail(d, TK_ERR_BAD_PACKET, "branch outcome in a PC-only trace");
        return do_branch_item(d, s->header, 0, 0);
    case TK_NIB_H_PRIV: {
        /* branch trace: xRET */
        tk_nibble_seq ts;
        if (!branch_mode || peek(d, 0) != TK_NIB_H_PC)
            return fail(d, TK_ERR_BAD_PACKET, "Privilege Level out of place");
        take(d, &ts);
        return do_branch_item(d, TK_NIB_H_PRIV, pc_of(d, &ts), s->arg);
    }
    case TK_NIB_H_PC: {
        const uint64_t a = pc_of(d, s);
        const int nx = peek(d, 0);
        if (nx == TK_NIB_H_PRIV && peek(d, 1) == TK_NIB_H_CAUSE)
            return do_trap(d, a);
        if (nx == TK_NIB_H_TRACE_OFF)
            return do_end(d, a);
        if (!branch_mode && (nx == TK_NIB_H_PC || nx == TK_NIB_H_PRIV))
            return do_pair(d, a, nx == TK_NIB_H_PRIV);
        if (branch_mode)
            return do_branch_item(d, TK_NIB_H_PC, a, 0);
        return fail(d, TK_ERR_BAD_PACKET, "lone PC in a PC-only trace");
    }
    case TK_NIB_H_TRACE_OFF: {
        tk_status st = lg_flow_close(&d->f, 0);
        d->synced = false;
        return st == TK_OK ? emit_simple(d, TK_EV_TRACE_OFF, d->f.pc) : st;
    }
    default:
        return fail(d, TK_ERR_BAD_PACKET, "sequence out of place");
    }
}

tk_status tk_nibble_decoder_run(tk_nibble_decoder *d, const tk_nibble_trace *t)
{
    nib_reader_init(&d->rd, t);
    d->nla = 0;
    d->synced = false;
    d->st.start_nibble = d->rd.start;
    for (;;) {
        tk_nibble_seq s;
        tk_status st = take(d, &s);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            const char *msg =
                st == TK_ERR_TRUNCATED ? "sequence cut by the end of the trace" : "reserved header";
            d->f.offset = ((d->rd.start + s.offset) % (d->rd.ring ? d->rd.ring : ~0ull)) / 2;
            if ((st = fail(d, st == TK_ERR_TRUNCATED ? TK_ERR_TRUNCATED : TK_ERR_BAD_PACKET,
                           msg)) != TK_OK)
                return st;
            /* go on at the next sync point, where a header is guaranteed */
            d->nla = 0;
            const uint64_t seg = d->rd.seg;
            const uint64_t abs = d->rd.start + s.offset;
            d->rd.q = (abs / seg + 1) * seg - d->rd.start;
            continue;
        }
        if ((st = step(d, &s)) != TK_OK)
            return st;
    }
    tk_status st = lg_flow_close(&d->f, 0);
    d->st.instructions = d->f.instructions;
    return st;
}

void tk_nibble_decoder_get_stats(const tk_nibble_decoder *d, tk_nibble_decoder_stats *out)
{
    *out = d->st;
    out->instructions = d->f.instructions;
}
