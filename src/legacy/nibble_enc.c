/* SPDX-License-Identifier: BSD-2-Clause */
/* Nibble trace encoder (seed 001, "Trace Events" and "Synchronization").
 *
 * Each record becomes at most one group of sequences, written whole between two sync points:
 * its control-flow sequences, the sequences of its data accesses, and its trap. A group
 * needs the PC that follows the record (a jump's target, a trap's handler), so records are
 * processed one behind. Before the first group written at or after a sync point the encoder
 * pads with Nops up to the sync point and writes a resync sequence there: Trace Enabled,
 * Change Hart and the full PC of the record (docs/formats.md); the value registers are reset
 * so that every value after a sync point is sent in full first ("full values soon after
 * each synchronization point"). */
#include <stdlib.h>
#include <string.h>

#include "nibble_int.h"
#include "tracekit/riscv.h"
#include "tracekit/te_ingress.h"

/* Largest group: pair (34) + trap (PC 17, priv 2, cause 6, PC 17) + two data accesses with
 * address and data (68) + resync (2 + 6 + 17). */
#define GROUP_MAX 200

typedef struct regs {
    uint64_t pc, la, sa, ts;
    bool have_pc, have_la, have_sa, have_ts;
} regs;

typedef struct group {
    uint8_t n[GROUP_MAX];
    unsigned len;
    bool overflow; /* more than GROUP_MAX nibbles (too many accesses for one record) */
    uint64_t data_nibbles;
    uint64_t naccess;
} group;

struct tk_nibble_encoder {
    tk_nibble_params p;
    tk_nibble_trace t;
    size_t cap_words;
    uint64_t pos;       /* nibbles written */
    uint64_t next_sync; /* position of the next sync point */
    uint64_t seg, ring; /* nibbles between sync points; in the buffer */
    unsigned shift;     /* PC value = pc >> shift */
    unsigned pc_bits;
    regs r;
    int hart; /* traced hart, -1 until the first record */
    bool have_pend, finished;
    tk_hart_retire pend;
    tk_access *pacc;
    size_t npacc, cap_pacc;
    uint64_t next_ts;
    tk_nibble_stats st;
};

tk_status tk_nibble_encoder_new(const tk_nibble_params *p, tk_nibble_encoder **out)
{
    if (!p || !out || tk_nibble_params_validate(p, NULL) != TK_OK)
        return TK_ERR_INVALID;
    tk_nibble_encoder *e = calloc(1, sizeof(*e));
    if (!e)
        return TK_ERR_NOMEM;
    e->p = *p;
    e->p.size = sizeof(e->p);
    if (!e->p.timestamp_period)
        e->p.timestamp_period = 1000;
    e->t.params = e->p;
    e->seg = p->buffer_words; /* 8 sync points in 8 * buffer_words nibbles */
    e->ring = 8ull * p->buffer_words;
    e->shift = p->compressed ? 1 : 2;
    e->pc_bits = p->xlen - e->shift;
    e->hart = p->hart;
    e->cap_words = p->wrap ? p->buffer_words : 1024;
    e->t.words = calloc(e->cap_words, 4);
    if (!e->t.words) {
        free(e);
        return TK_ERR_NOMEM;
    }
    *out = e;
    return TK_OK;
}

void tk_nibble_encoder_free(tk_nibble_encoder *e)
{
    if (!e)
        return;
    free(e->t.words);
    free(e->pacc);
    free(e);
}

static tk_status put(tk_nibble_encoder *e, unsigned v)
{
    uint64_t i = e->pos;
    if (e->p.wrap) {
        i %= e->ring;
        if (e->pos >= e->ring)
            e->t.wrapped = true;
    } else if ((i >> 3) >= e->cap_words) {
        size_t cap = e->cap_words * 2;
        uint32_t *w = realloc(e->t.words, cap * 4);
        if (!w)
            return TK_ERR_NOMEM;
        memset(w + e->cap_words, 0, (cap - e->cap_words) * 4);
        e->t.words = w;
        e->cap_words = cap;
    }
    uint32_t *w = &e->t.words[i >> 3];
    const unsigned sh = (unsigned)(i & 7) * 4;
    *w = (*w & ~(15u << sh)) | (uint32_t)(v & 15u) << sh;
    e->pos++;
    return TK_OK;
}

static void g_put(group *g, unsigned v)
{
    if (g->len < GROUP_MAX)
        g->n[g->len++] = (uint8_t)(v & 15u);
    else
        g->overflow = true;
}

static void g_seq(group *g, unsigned header, uint64_t v, unsigned n)
{
    g_put(g, header);
    g_put(g, n - 1);
    for (unsigned i = 0; i < n; i++)
        g_put(g, (unsigned)(v >> (4 * i)));
}

static void g_pc(tk_nibble_encoder *e, regs *r, group *g, uint64_t pc)
{
    uint64_t v = (pc >> e->shift) & nib_mask(16);
    if (e->pc_bits < 64)
        v &= (1ull << e->pc_bits) - 1;
    const unsigned n = nib_count_last(v, r->pc, r->have_pc, nib_full(e->pc_bits));
    g_seq(g, TK_NIB_H_PC, v, n);
    r->pc = v;
    r->have_pc = true;
}

static uint64_t addr_value(const tk_nibble_encoder *e, uint64_t a)
{
    return e->p.xlen == 32 ? a & 0xffffffffu : a;
}

/* A trap (docs/formats.md): PC of epc, Privilege Level, the cause (custom header 1110),
 * PC of the handler. */
static void g_trap(tk_nibble_encoder *e, regs *r, group *g, uint64_t epc, bool interrupt,
                   uint64_t cause, unsigned priv, uint64_t handler)
{
    g_pc(e, r, g, epc);
    g_put(g, TK_NIB_H_PRIV);
    g_put(g, (interrupt ? 8u : 0u) | (priv & 3u) << 1);
    g_seq(g, TK_NIB_H_CAUSE, cause, nib_count_zero(cause));
    g_pc(e, r, g, handler);
}

static bool in_region(const tk_nibble_encoder *e, uint64_t a)
{
    return !e->p.region_hi || (a >= e->p.region_lo && a < e->p.region_hi);
}

static void g_access(tk_nibble_encoder *e, regs *r, group *g, const tk_access *a)
{
    const uint32_t em = e->p.emit;
    const unsigned start = g->len;
    const unsigned xb = e->p.xlen;
    switch (a->kind) {
    case TK_ACC_LOAD:
    case TK_ACC_STORE: {
        if (!in_region(e, a->addr))
            return;
        const bool load = a->kind == TK_ACC_LOAD;
        if (em & (load ? TK_NIB_LOAD_ADDR : TK_NIB_STORE_ADDR)) {
            uint64_t v = addr_value(e, a->addr);
            uint64_t *last = load ? &r->la : &r->sa;
            bool *have = load ? &r->have_la : &r->have_sa;
            g_seq(g, load ? TK_NIB_H_LOAD_ADDR : TK_NIB_H_STORE_ADDR, v,
                  nib_count_last(v, *last, *have, nib_full(xb)));
            *last = v;
            *have = true;
        }
        if (em & (load ? TK_NIB_LOAD_DATA : TK_NIB_STORE_DATA))
            g_seq(g, load ? TK_NIB_H_LOAD_DATA : TK_NIB_H_STORE_DATA, a->data,
                  nib_count_sext(a->data));
        break;
    }
    case TK_ACC_CSR_READ:
        if ((em & TK_NIB_CSR) && (em & TK_NIB_LOAD_DATA))
            g_seq(g, TK_NIB_H_LOAD_DATA, a->data, nib_count_sext(a->data));
        break;
    case TK_ACC_CSR_WRITE:
        if ((em & TK_NIB_CSR) && (em & TK_NIB_STORE_DATA))
            g_seq(g, TK_NIB_H_STORE_DATA, a->data, nib_count_sext(a->data));
        break;
    default:
        break;
    }
    g->data_nibbles += g->len - start;
    if (g->len > start)
        g->naccess++;
}

/* What a group is made from. */
typedef enum { SRC_RECORD, SRC_TIMESTAMP, SRC_END } src_kind;
typedef struct src {
    src_kind kind;
    const tk_hart_retire *rec;
    uint64_t next; /* PC after the record / timestamp value / end address */
    unsigned next_priv;
    const tk_access *acc;
    size_t nacc;
} src;

/* Seed 001, "Trace Events", per instruction class. In branch mode (TK_NIB_BRANCH) targets
 * the program cannot tell (jalr, xRET, traps) are sent as PCs; with PC values only, every
 * taken transfer is a (from, to) pair of PCs. */
static void g_record(tk_nibble_encoder *e, regs *r, group *g, const src *s)
{
    const tk_hart_retire *rec = s->rec;
    const bool branch_mode = (e->p.emit & TK_NIB_BRANCH) != 0;
    if (rec->flags & TK_HART_F_EXCEPTION) {
        /* ecall/ebreak (retired) and faulting instructions trap at their own address */
        g_trap(e, r, g, rec->pc, false, rec->cause, s->next_priv, s->next);
        return;
    }
    if (rec->flags & TK_HART_F_RETIRED) {
        if (rec->itype != TK_ITYPE_NONE) {
            tk_rv_insn in;
            tk_rv_decode(rec->insn, e->p.xlen, &in);
            const uint64_t dest = (rec->flags & TK_HART_F_INTERRUPT) ? rec->epc : s->next;
            const uint64_t target = addr_value(e, rec->pc + (uint64_t)in.imm);
            switch (in.cf) {
            case TK_RV_CF_BRANCH: {
                const bool taken = rec->itype == TK_ITYPE_TAKEN;
                if (branch_mode) {
                    g_put(g, taken ? TK_NIB_H_TAKEN : TK_NIB_H_NOT_TAKEN);
                } else if (taken) {
                    g_pc(e, r, g, rec->pc);
                    g_pc(e, r, g, target);
                }
                break;
            }
            case TK_RV_CF_JAL:
                if (!branch_mode) {
                    g_pc(e, r, g, rec->pc);
                    g_pc(e, r, g, target);
                }
                break;
            case TK_RV_CF_JALR:
                /* The seed's "if emitstoredata is enabled emit just the destination PC"
                 * can only mean emitbranch: the program does not tell the target. */
                if (!branch_mode)
                    g_pc(e, r, g, rec->pc);
                g_pc(e, r, g, dest);
                break;
            case TK_RV_CF_XRET:
                if (!branch_mode)
                    g_pc(e, r, g, rec->pc);
                g_put(g, TK_NIB_H_PRIV);
                g_put(g, (s->next_priv & 3u) << 1);
                g_pc(e, r, g, dest);
                break;
            default:
                break;
            }
        }
        if (rec->mflags && (e->p.emit & TK_NIB_DATA_MASK)) {
            /* the access the hart model reported in the record (tk_sim_set_mem_trace) */
            const bool csr = rec->mflags & TK_HART_M_CSR;
            tk_access a = {.addr = rec->maddr, .size = rec->msize, .hart = rec->hart};
            if (rec->mflags & TK_HART_M_LOAD) {
                a.kind = csr ? TK_ACC_CSR_READ : TK_ACC_LOAD;
                a.data = rec->mrdata;
                g_access(e, r, g, &a);
            }
            if (rec->mflags & TK_HART_M_STORE) {
                a.kind = csr ? TK_ACC_CSR_WRITE : TK_ACC_STORE;
                a.data = rec->mwdata;
                g_access(e, r, g, &a);
            }
        }
        for (size_t i = 0; i < s->nacc; i++)
            g_access(e, r, g, &s->acc[i]);
        if (rec->flags & TK_HART_F_INTERRUPT)
            g_trap(e, r, g, rec->epc, true, rec->cause, s->next_priv, s->next);
        return;
    }
    if (rec->flags & TK_HART_F_INTERRUPT)
        g_trap(e, r, g, rec->epc, true, rec->cause, s->next_priv, s->next);
}

static void build(tk_nibble_encoder *e, regs *r, group *g, const src *s)
{
    g->len = 0;
    g->overflow = false;
    g->data_nibbles = 0;
    g->naccess = 0;
    switch (s->kind) {
    case SRC_RECORD:
        g_record(e, r, g, s);
        break;
    case SRC_TIMESTAMP: {
        const unsigned n = nib_count_last(s->next, r->ts, r->have_ts, 16);
        g_seq(g, TK_NIB_H_TIMESTAMP, s->next, n);
        r->ts = s->next;
        r->have_ts = true;
        break;
    }
    case SRC_END:
        g_pc(e, r, g, s->next);
        g_put(g, TK_NIB_H_TRACE_OFF);
        break;
    }
}

static tk_status write_group(tk_nibble_encoder *e, const group *g)
{
    for (unsigned i = 0; i < g->len; i++) {
        tk_status st = put(e, g->n[i]);
        if (st != TK_OK)
            return st;
    }
    e->st.data_nibbles += g->data_nibbles;
    e->st.accesses += g->naccess;
    return TK_OK;
}

/* The resync at a sync point (docs/formats.md): Trace Enabled, version 0, Change Hart, the
 * full PC x; the value registers start over. */
static tk_status resync(tk_nibble_encoder *e, uint64_t x)
{
    group rs;
    memset(&rs, 0, sizeof(rs));
    const uint64_t hart = (uint64_t)(e->hart < 0 ? 0 : e->hart);
    memset(&e->r, 0, sizeof(e->r));
    g_put(&rs, TK_NIB_H_TRACE_ON);
    g_put(&rs, 0); /* version of the trace data */
    g_seq(&rs, TK_NIB_H_HART, hart, nib_count_zero(hart));
    g_pc(e, &e->r, &rs, x);
    tk_status st = write_group(e, &rs);
    e->next_sync += e->seg;
    e->st.syncs++;
    return st;
}

/* Write the group of s; x is the address of the next instruction not yet accounted for
 * when the group starts (what a resync before it names). */
static tk_status commit(tk_nibble_encoder *e, const src *s, uint64_t x)
{
    group g;
    regs w = e->r;
    tk_status st;
    build(e, &w, &g, s);
    if (g.overflow)
        return TK_ERR_OVERFLOW;
    if (g.len == 0)
        return TK_OK;
    if (e->pos + g.len > e->next_sync)
        while (e->pos < e->next_sync) {
            if ((st = put(e, TK_NIB_H_NOP)) != TK_OK)
                return st;
            e->st.nop_nibbles++;
        }
    if (e->pos == e->next_sync) {
        if ((st = resync(e, x)) != TK_OK)
            return st;
        w = e->r;
        build(e, &w, &g, s);
    }
    if ((st = write_group(e, &g)) != TK_OK)
        return st;
    e->r = w;
    return TK_OK;
}

static tk_status process(tk_nibble_encoder *e, uint64_t next, unsigned next_priv)
{
    const tk_hart_retire *rec = &e->pend;
    tk_status st;
    if ((e->p.emit & TK_NIB_TIMESTAMP) && e->st.retired >= e->next_ts) {
        /* time: instructions retired so far (the model has no clock) */
        const src ts = {.kind = SRC_TIMESTAMP, .next = e->st.retired};
        if ((st = commit(e, &ts, rec->pc)) != TK_OK)
            return st;
        e->next_ts = e->st.retired + e->p.timestamp_period;
    }
    const src s = {.kind = SRC_RECORD,
                   .rec = rec,
                   .next = addr_value(e, next),
                   .next_priv = next_priv,
                   .acc = e->pacc,
                   .nacc = e->npacc};
    if (rec->flags & TK_HART_F_RETIRED)
        e->st.retired++;
    return commit(e, &s, rec->pc);
}

static tk_status check_pc(const tk_nibble_encoder *e, uint64_t pc)
{
    return (pc & ((1ull << e->shift) - 1)) ? TK_ERR_INVALID : TK_OK;
}

tk_status tk_nibble_encoder_push(tk_nibble_encoder *e, const tk_hart_retire *recs, size_t n,
                                 const tk_access *acc, size_t nacc)
{
    if (e->finished)
        return TK_ERR_STATE;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const tk_hart_retire *r = &recs[i];
        if (e->hart < 0)
            e->hart = r->hart;
        const bool mine = r->hart == (unsigned)e->hart;
        tk_status st;
        if (mine && e->have_pend && (st = process(e, r->pc, r->priv)) != TK_OK)
            return st;
        if (mine) {
            if ((st = check_pc(e, r->pc)) != TK_OK)
                return st;
            /* the trace starts where the first record is: resync at the first sync point */
            if (!e->have_pend && e->pos == 0 && (st = resync(e, r->pc)) != TK_OK)
                return st;
            e->pend = *r;
            e->have_pend = true;
            e->npacc = 0;
            e->st.records++;
        }
        for (; k < nacc && acc[k].rec == i; k++) {
            if (!mine)
                continue;
            if (e->npacc == e->cap_pacc) {
                size_t cap = e->cap_pacc ? 2 * e->cap_pacc : 8;
                tk_access *a = realloc(e->pacc, cap * sizeof(*a));
                if (!a)
                    return TK_ERR_NOMEM;
                e->pacc = a;
                e->cap_pacc = cap;
            }
            e->pacc[e->npacc++] = acc[k];
        }
        if (k < nacc && acc[k].rec < i)
            return TK_ERR_INVALID; /* accesses out of record order */
    }
    return k == nacc ? TK_OK : TK_ERR_INVALID;
}

tk_status tk_nibble_encoder_retire(void *enc, const tk_hart_retire *recs, size_t n)
{
    return tk_nibble_encoder_push(enc, recs, n, NULL, 0);
}

/* The successor of a retired record when the instruction alone tells it. */
static bool successor(const tk_nibble_encoder *e, const tk_hart_retire *r, uint64_t *next)
{
    if ((r->flags & (TK_HART_F_EXCEPTION | TK_HART_F_INTERRUPT)) || !(r->flags & TK_HART_F_RETIRED))
        return false;
    if (r->itype == TK_ITYPE_NONE) {
        *next = r->pc + r->len;
        return true;
    }
    tk_rv_insn in;
    tk_rv_decode(r->insn, e->p.xlen, &in);
    if (in.cf == TK_RV_CF_BRANCH)
        *next = r->itype == TK_ITYPE_TAKEN ? r->pc + (uint64_t)in.imm : r->pc + r->len;
    else if (in.cf == TK_RV_CF_JAL)
        *next = r->pc + (uint64_t)in.imm;
    else if (in.cf == TK_RV_CF_NONE)
        *next = r->pc + r->len;
    else
        return false;
    *next = addr_value(e, *next);
    return true;
}

tk_status tk_nibble_encoder_finish(tk_nibble_encoder *e, bool have_next, uint64_t next_pc)
{
    if (e->finished)
        return TK_ERR_STATE;
    e->finished = true;
    tk_status st = TK_OK;
    if (e->have_pend) {
        uint64_t end = e->pend.pc;
        if (have_next || successor(e, &e->pend, &next_pc)) {
            /* the privilege after the last record is not known: keep the record's */
            if ((st = process(e, next_pc, e->pend.priv)) != TK_OK)
                return st;
            end = next_pc;
        }
        const src s = {.kind = SRC_END, .next = addr_value(e, end)};
        if ((st = commit(e, &s, end)) != TK_OK)
            return st;
    }
    while (e->pos & 7)
        if ((st = put(e, TK_NIB_H_NOP)) != TK_OK)
            return st;
    e->t.total_nibbles = e->pos;
    e->t.nwords = e->p.wrap && e->t.wrapped ? e->p.buffer_words : (size_t)(e->pos / 8);
    e->st.nibbles = e->pos;
    return TK_OK;
}

const tk_nibble_trace *tk_nibble_encoder_trace(const tk_nibble_encoder *e)
{
    return &e->t;
}

void tk_nibble_encoder_get_stats(const tk_nibble_encoder *e, tk_nibble_stats *out)
{
    *out = e->st;
    out->nibbles = e->pos;
}
