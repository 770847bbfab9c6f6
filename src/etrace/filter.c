/* SPDX-License-Identifier: BSD-2-Clause */
/* Instruction qualification in front of the encoder: filters and comparators as the Trace
 * Control Interface defines them (trTeFilter<i>*, trTeComp<j>*), trace-on/off/notify
 * triggers (ingressPort.adoc "trigger"), turned into the encoder's per-block trigger bits. */
#include <stdlib.h>
#include <string.h>

#include "tracekit/te_filter.h"

/* Per-filter state of exception cause / interrupt matching (a trap starts it, the return
 * from that trap ends it; nested traps are counted, TCI trTeFilterMatchEcause). */
typedef struct trap_match {
    bool active;
    uint32_t nest;
} trap_match;

struct tk_te_filter {
    tk_te_filter_config c;
    bool tracing; /* trTeInstTracing as the triggers leave it */
    bool latch[TK_TE_MAX_COMPARATORS];
    trap_match tm[TK_TE_MAX_FILTERS];
    tk_te_block held;
    bool have_held;
    bool held_q;
    bool held_notify;
    bool prev_q; /* qualification of the last block handed on */
};

void tk_te_filter_config_init(tk_te_filter_config *c)
{
    memset(c, 0, sizeof(*c));
    c->inst_tracing = true;
    c->trig_enable = true;
}

tk_status tk_te_filter_new(const tk_te_filter_config *c, tk_te_filter **out)
{
    *out = NULL;
    for (unsigned i = 0; i < TK_TE_MAX_FILTERS; i++)
        for (unsigned k = 0; k < 3; k++)
            if (c->filter[i].match_comp[k] && c->filter[i].comp[k] >= TK_TE_MAX_COMPARATORS)
                return TK_ERR_CONFIG;
    tk_te_filter *f = calloc(1, sizeof(*f));
    if (!f)
        return TK_ERR_NOMEM;
    f->c = *c;
    f->tracing = c->inst_tracing;
    /* Function 6 on the primary comparator of a latch "primes the latch to 1". */
    for (unsigned j = 0; j < TK_TE_MAX_COMPARATORS; j++)
        f->latch[j] = c->comp[j].mode == TK_CMP_LATCH && c->comp[j].p_func == TK_CMP_NEVER;
    *out = f;
    return TK_OK;
}

void tk_te_filter_free(tk_te_filter *f)
{
    free(f);
}

static bool input_value(const tk_te_block *b, unsigned input, uint64_t *v)
{
    switch (input) {
    case TK_CMP_IADDR:
        *v = b->iaddr;
        return true;
    case TK_CMP_CONTEXT:
        *v = b->context;
        return true;
    case TK_CMP_TVAL:
        *v = b->itype == TK_ITYPE_EXCEPTION ? b->tval : 0;
        return true;
    default:
        return false; /* daddr: no data trace here */
    }
}

static bool compare(unsigned func, uint64_t v, uint64_t m)
{
    switch (func) {
    case TK_CMP_EQ:
        return v == m;
    case TK_CMP_NE:
        return v != m;
    case TK_CMP_LT:
        return v < m;
    case TK_CMP_LE:
        return v <= m;
    case TK_CMP_GT:
        return v > m;
    case TK_CMP_GE:
        return v >= m;
    default:
        return false;
    }
}

/* One comparator unit on one instruction; *notify is set by a watchpoint hit. */
static bool comparator(tk_te_filter *f, unsigned j, const tk_te_block *b, bool *notify)
{
    const tk_te_comparator *c = &f->c.comp[j];
    uint64_t v;
    bool p, s;
    /* Secondary function 6: always true, and SMatch masks the primary comparison. */
    const uint64_t mask = c->s_func == TK_CMP_NEVER ? c->s_match : ~0ull;
    if (c->p_func == TK_CMP_ALWAYS)
        p = true;
    else if (c->p_func == TK_CMP_NEVER || !input_value(b, c->p_input, &v))
        p = false;
    else
        p = compare(c->p_func, v & mask, c->p_match & mask);
    if (c->s_func >= TK_CMP_NEVER)
        s = true;
    else
        s = input_value(b, c->s_input, &v) && compare(c->s_func, v, c->s_match);
    if ((p && c->p_notify && c->p_input == TK_CMP_IADDR) ||
        (s && c->s_notify && c->s_input == TK_CMP_IADDR && c->s_func < TK_CMP_NEVER))
        *notify = true;
    switch (c->mode) {
    case TK_CMP_P:
        return p;
    case TK_CMP_P_AND_S:
        return p && s;
    case TK_CMP_NOT_P_AND_S:
        return !(p && s);
    default: {
        /* latch: set by P, asserted up to and including the instruction where S holds */
        const bool out = f->latch[j] || p;
        f->latch[j] = out && !s;
        return out;
    }
    }
}

static bool is_trap(const tk_te_block *b)
{
    return b->itype == TK_ITYPE_EXCEPTION || b->itype == TK_ITYPE_INTERRUPT;
}

/* Exception cause / interrupt matching of filter i: true while inside a chosen trap's
 * handler, from its first instruction to the return from it. */
static bool trap_window(tk_te_filter *f, unsigned i, const tk_te_block *b)
{
    const tk_te_filter_unit *u = &f->c.filter[i];
    trap_match *t = &f->tm[i];
    bool in = t->active;
    if (t->active) {
        if (is_trap(b)) {
            t->nest++;
        } else if (b->itype == TK_ITYPE_TRAP_RETURN) {
            if (t->nest == 0)
                t->active = false; /* this return is the last matching instruction */
            else
                t->nest--;
        }
    } else if (is_trap(b)) {
        bool m = true;
        if (u->match_ecause)
            m = b->cause < 64 && ((u->ecause_choice >> b->cause) & 1u);
        if (u->match_interrupt)
            m = m && (b->itype == TK_ITYPE_INTERRUPT) == u->interrupt_value;
        if (m) {
            t->active = true; /* matching starts with the handler */
            t->nest = 0;
        }
    }
    return in;
}

static bool qualified(tk_te_filter *f, const tk_te_block *b, bool *notify)
{
    bool comp_out[TK_TE_MAX_COMPARATORS];
    /* Every comparator and trap window sees every instruction (latches and nesting
     * counters must not miss any), whether or not a filter uses them now. */
    for (unsigned j = 0; j < TK_TE_MAX_COMPARATORS; j++)
        comp_out[j] = comparator(f, j, b, notify);
    bool any = false;
    for (unsigned i = 0; i < TK_TE_MAX_FILTERS; i++) {
        const tk_te_filter_unit *u = &f->c.filter[i];
        const bool window = trap_window(f, i, b);
        if (!((f->c.inst_filters >> i) & 1u) || !u->enable)
            continue;
        bool m = true;
        if (u->match_priv)
            m = b->priv < 8 && ((u->priv_choice >> b->priv) & 1u);
        if (u->match_ecause || u->match_interrupt)
            m = m && window;
        for (unsigned k = 0; k < 3; k++)
            if (u->match_comp[k])
                m = m && comp_out[u->comp[k]];
        any = any || m;
    }
    return f->c.inst_filters == 0 || any;
}

tk_status tk_te_filter_push(tk_te_filter *f, const tk_te_block *in, tk_te_block *out, size_t *n)
{
    *n = 0;
    bool notify = false;
    /* Triggers (TCI trTeInstTrigEnable): trace-on applies to this instruction, trace-off
     * after it. */
    const bool trig = f->c.trig_enable;
    if (trig && (in->trigger & TK_TRIGGER_ON))
        f->tracing = true;
    const bool tracing = f->tracing;
    if (trig && (in->trigger & TK_TRIGGER_OFF))
        f->tracing = false;
    if (in->trigger & TK_TRIGGER_NOTIFY)
        notify = true;
    bool q = qualified(f, in, &notify) && tracing && !in->halted && !in->reset;
    if (f->have_held) {
        *out = f->held;
        out->trigger = 0;
        if (f->held_q) {
            if (!f->prev_q)
                out->trigger |= TK_TRIGGER_ON;
            if (!q)
                out->trigger |= TK_TRIGGER_OFF;
            if (f->held_notify)
                out->trigger |= TK_TRIGGER_NOTIFY;
        }
        f->prev_q = f->held_q;
        *n = 1;
    }
    f->held = *in;
    f->held_q = q;
    f->held_notify = notify;
    f->have_held = true;
    return TK_OK;
}

tk_status tk_te_filter_finish(tk_te_filter *f, tk_te_block *out, size_t *n)
{
    *n = 0;
    if (!f->have_held)
        return TK_OK;
    *out = f->held;
    out->trigger = 0;
    if (f->held_q) {
        /* the end of the input ends qualification too: the encoder's finish reports it */
        if (!f->prev_q)
            out->trigger |= TK_TRIGGER_ON;
        if (f->held_notify)
            out->trigger |= TK_TRIGGER_NOTIFY;
    }
    f->prev_q = f->held_q;
    f->have_held = false;
    *n = 1;
    return TK_OK;
}

bool tk_te_filter_last_qualified(const tk_te_filter *f)
{
    return f->held_q;
}
