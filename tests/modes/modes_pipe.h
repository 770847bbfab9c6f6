/* SPDX-License-Identifier: BSD-2-Clause */
/* The round trip of the mode tests: executed instructions (spike rows of the golden traces)
 * -> ingress blocks -> [filter] -> [multiple-retirement grouper] -> encoder -> the spec's
 * packet layout as bytes -> packet parser -> decoder, whose PCs must equal the expected
 * (executed, or qualified) PCs. Header-only: each test program includes it once. */
#ifndef TK_TEST_MODES_PIPE_H
#define TK_TEST_MODES_PIPE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrace/modes.h"
#include "testutil.h"
#include "tracekit/blocks.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_filter.h"
#include "tracekit/te_ingress.h"

/* A program's execution, loaded once and run through many settings. */
typedef struct mp_prog {
    const char *name;
    tk_image *img;
    tk_spike_row *rows;
    size_t nrows;
    /* or ingress blocks made elsewhere (the hart model's): one instruction each */
    tk_te_block *blocks;
    size_t nblocks;
    uint64_t *pcs; /* retired PCs, as compare_pc_trace.py counts them */
    size_t npcs;
    uint64_t tvec[4]; /* trap vectors per privilege, for implicit exceptions */
    uint8_t tvec_set;
} mp_prog;

/* Returns false (test skipped) if the program's files are absent. */
static inline bool mp_load(mp_prog *g, const char *name)
{
    memset(g, 0, sizeof(*g));
    g->name = name;
    char rel[256];
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s.spike_pc_trace.gz", name, name);
    char *spike = tk_test_data_path(rel);
    snprintf(rel, sizeof(rel), "riscv-ref/%s.riscv", name);
    char *elf = tk_test_data_path(rel);
    tk_diag diag;
    tk_diag_clear(&diag);
    bool ok = tk_image_open_elf(elf, &g->img, &diag) == TK_OK;
    tk_spike_reader *sr = NULL;
    ok = ok && tk_spike_open(spike, &sr, &diag) == TK_OK;
    free(spike);
    free(elf);
    if (!ok) {
        if (g->img)
            tk_image_free(g->img);
        g->img = NULL;
        return false;
    }
    assert_int_equal(tk_te_add_spike_reset_code(g->img, false), TK_OK);
    size_t cap = 1024;
    g->rows = malloc(cap * sizeof(*g->rows));
    g->pcs = malloc(cap * sizeof(*g->pcs));
    tk_spike_row row;
    tk_status st;
    bool after_trap = false;
    while ((st = tk_spike_next(sr, &row, &diag)) == TK_OK) {
        if (g->nrows == cap) {
            cap *= 2;
            g->rows = realloc(g->rows, cap * sizeof(*g->rows));
            g->pcs = realloc(g->pcs, cap * sizeof(*g->pcs));
        }
        g->rows[g->nrows++] = row;
        if (after_trap && !(g->tvec_set & 8u)) {
            g->tvec[3] = row.address; /* the golden programs trap to machine mode only */
            g->tvec_set |= 8u;
        }
        after_trap = row.exception || row.interrupt;
        if (!row.exception || row.insn == 0x73 || row.insn == 0x100073)
            g->pcs[g->npcs++] = row.address;
    }
    assert_int_equal(st, TK_END);
    tk_spike_close(sr);
    return true;
}

static inline void mp_free(mp_prog *g)
{
    if (g->img)
        tk_image_free(g->img);
    free(g->rows);
    free(g->blocks);
    free(g->pcs);
    memset(g, 0, sizeof(*g));
}

/* One setting of the round trip. */
typedef struct mp_setting {
    tk_te_params p;
    tk_te_encoder_options eo;
    const tk_te_filter_config *filter;  /* NULL: trace everything */
    unsigned group_insns, group_blocks; /* multiple retirement (0: one per cycle) */
    const uint64_t *want;               /* expected PCs (NULL: every retired PC) */
    size_t nwant;
    unsigned dec_flags; /* TK_TE_DEC_*: with block events, the walk memo replays walks */
} mp_setting;

typedef struct mp_result {
    uint64_t packets, bytes, payload_bits;
    uint64_t per_format[6]; /* F0SF0, F0SF1, F1, F2, F3, support */
    uint64_t ended_rep, ended_ntr;
    uint64_t notify; /* packets with the notify flag */
    uint64_t pcs;
    uint64_t errors;
    uint64_t replayed; /* walks the decoder replayed from its memo */
    bool differs;
    size_t at;
    uint64_t got, want;
} mp_result;

typedef struct mp_run {
    const mp_setting *s;
    tk_image *img;
    tk_te_decoder *d;
    mp_result *r;
    const uint64_t *want;
    size_t nwant;
    tk_status codec_error;
} mp_run;

static inline tk_status mp_on_event(void *ctx, const tk_event *ev)
{
    mp_run *x = ctx;
    if (ev->kind == TK_EV_ERROR) {
        x->r->errors++;
        if (x->r->errors < 4)
            print_message("  decoder error, packet %llu: %s\n",
                          (unsigned long long)ev->packet_index, ev->message);
    }
    if (ev->kind != TK_EV_RANGE || x->r->differs)
        return TK_OK;
    uint64_t pc = ev->first;
    for (uint64_t i = 0; i < ev->ninsn; i++) {
        const size_t k = (size_t)x->r->pcs;
        if (k >= x->nwant || x->want[k] != pc) {
            x->r->differs = true;
            x->r->at = k;
            x->r->got = pc;
            x->r->want = k < x->nwant ? x->want[k] : 0;
            return TK_OK;
        }
        x->r->pcs++;
        tk_rv_insn insn;
        if (tk_image_fetch(x->img, pc, &insn) != TK_OK) {
            x->r->differs = true;
            return TK_OK;
        }
        pc += insn.len;
    }
    return TK_OK;
}

static inline unsigned mp_format_slot(const tk_te_packet *pkt)
{
    if (pkt->format == TK_TE_F0)
        return pkt->subformat == TK_TE_F0_BRANCH_COUNT ? 0 : 1;
    if (pkt->format == TK_TE_F3)
        return pkt->subformat == TK_TE_SF_SUPPORT ? 5 : 4;
    return pkt->format + 1u;
}

/* Block events, as the ranges they stand for. */
static inline tk_status mp_on_block_events(void *ctx, const tk_event *ev)
{
    return tk_blocks_as_ranges(mp_on_event, ctx, ev);
}

/* Encoder output: the spec's layout, as bytes, parsed back, into the decoder. 0.026's
 * support packets are a separate te_support message (not a te_inst): they go to the decoder
 * as they are and count 2 bytes (msg_type, control_code, support fields: 16 bits). */
static inline tk_status mp_on_packet(void *ctx, const tk_te_packet *pkt)
{
    mp_run *x = ctx;
    const tk_te_params *p = &x->s->p;
    mp_result *r = x->r;
    r->per_format[mp_format_slot(pkt)]++;
    r->notify += pkt->format != TK_TE_F3 && pkt->notify;
    if (pkt->format == TK_TE_F3 && pkt->subformat == TK_TE_SF_SUPPORT) {
        r->ended_rep += pkt->qual_status == TK_QUAL_ENDED_REP;
        r->ended_ntr += pkt->qual_status == TK_QUAL_ENDED_NTR;
    }
    if (getenv("TK_MODES_DEBUG")) {
        char line[256];
        tk_te_packet_format(p, pkt, line, sizeof(line));
        print_message("  packet %llu: %s\n", (unsigned long long)r->packets, line);
    }
    /* The encoder hands over the spec's own layout; 0.026's support packet is not a te_inst */
    if (p->spec == TK_TE_SPEC_0_26 && pkt->format == TK_TE_F3 &&
        pkt->subformat == TK_TE_SF_SUPPORT) {
        r->packets++;
        r->bytes += 2;
        r->payload_bits += 16;
        return tk_te_decoder_packet(x->d, pkt, r->bytes, r->packets - 1);
    }
    const tk_te_packet wire = *pkt;
    tk_te_packet back;
    tk_status st;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    tk_diag diag;
    tk_diag_clear(&diag);
    st = tk_te_packet_encode(p, &wire, buf, sizeof(buf), &len);
    if (st == TK_OK)
        st = tk_te_packet_decode(p, buf, len, &back, &diag);
    if (st != TK_OK) {
        print_message("  codec: %s (%s)\n", tk_strerror(st),
                      tk_te_packet_encode_error(p, &wire) ? tk_te_packet_encode_error(p, &wire)
                                                          : diag.message);
        x->codec_error = st;
        return st;
    }
    r->packets++;
    r->bytes += len + 1; /* one header byte, as the reference .te_inst_raw */
    r->payload_bits += 8 * len;
    return tk_te_decoder_packet(x->d, &back, r->bytes, r->packets - 1);
}

typedef struct mp_stages {
    tk_te_encoder *e;
    tk_te_filter *flt;
    tk_te_grouper *grp;
    tk_te_block *cyc;
} mp_stages;

static inline tk_status mp_to_grouper(mp_stages *sg, const tk_te_block *b)
{
    if (!sg->grp)
        return tk_te_encoder_push(sg->e, b, 1);
    size_t n;
    assert_int_equal(tk_te_grouper_push(sg->grp, b, sg->cyc, &n), TK_OK);
    return n ? tk_te_encoder_push(sg->e, sg->cyc, n) : TK_OK;
}

static inline tk_status mp_to_filter(mp_stages *sg, const tk_te_block *b)
{
    if (!sg->flt)
        return mp_to_grouper(sg, b);
    tk_te_block f;
    size_t n;
    assert_int_equal(tk_te_filter_push(sg->flt, b, &f, &n), TK_OK);
    return n ? mp_to_grouper(sg, &f) : TK_OK;
}

/* A setting of the optional modes: which are on and the sizes of their hardware (2.0
 * spec_params 64-bit addresses, itype 4, sync every 2^(2+4) packets, the spec's behaviour
 * rather than the reference model's quirks). */
typedef struct mp_combo {
    tk_te_spec spec;
    bool full, sijump, iexc, ir, bp, jtc;
    unsigned rss, ccs, bpred, cache, group;
} mp_combo;

static inline void mp_make_setting(mp_setting *s, const mp_combo *c)
{
    memset(s, 0, sizeof(*s));
    tk_te_params_init(&s->p);
    s->p.spec = c->spec;
    s->p.s.iaddress_width = 64;
    s->p.s.iaddress_lsb = 1;
    s->p.s.itype_width = 4;
    s->p.s.sijump = c->sijump;
    s->p.s.return_stack_size = c->rss;
    s->p.s.call_counter_size = c->ccs;
    s->p.s.bpred_size = c->bpred;
    s->p.s.cache_size = c->cache;
    s->p.s.f0s_width = (c->bp && c->jtc) ? 1 : 0;
    s->p.o.full_address = c->full;
    s->p.o.sijump = c->sijump;
    s->p.o.implicit_except = c->iexc;
    s->p.o.implicit_return = c->ir;
    s->p.o.branch_prediction = c->bp;
    s->p.o.jump_target_cache = c->jtc;
    s->p.o.resync_max = 2;
    s->p.ioptions_width = 6;
    tk_te_encoder_options_init(&s->eo);
    s->eo.reference_quirks = false;
    s->eo.irdepth_ones = false;
    if (c->group) {
        s->group_insns = c->group;
        s->group_blocks = 2;
    }
}

static inline void mp_combo_name(const mp_combo *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "spec %s%s%s%s%s%s%s ras%u cc%u bp%u jtc%u grp%u", tk_te_spec_name(c->spec),
             c->full ? " full" : "", c->sijump ? " sijump" : "", c->iexc ? " iexc" : "",
             c->ir ? " ir" : "", c->bp ? " bp" : "", c->jtc ? " jtc" : "", c->rss, c->ccs, c->bpred,
             c->cache, c->group);
}

/* Encode g's execution under setting s: every packet goes to fn, in order. Fails the test
 * on an API error; returns the encoder's status (fn's error stops it). */
static inline tk_status mp_encode(const mp_prog *g, const mp_setting *s, tk_te_packet_fn fn,
                                  void *ctx)
{
    tk_te_encoder *e;
    assert_int_equal(tk_te_encoder_new_opts(&s->p, &s->eo, fn, ctx, &e), TK_OK);
    tk_spike_conv_options co = {.reference_quirks = s->eo.reference_quirks};
    tk_spike_conv *conv;
    assert_int_equal(tk_spike_conv_new(&s->p, &co, &conv), TK_OK);
    tk_te_filter *flt = NULL;
    if (s->filter)
        assert_int_equal(tk_te_filter_new(s->filter, &flt), TK_OK);
    tk_te_grouper *grp = NULL;
    const unsigned mb = s->group_blocks ? s->group_blocks : 1;
    if (s->group_insns)
        assert_int_equal(tk_te_grouper_new(s->group_insns, mb, &grp), TK_OK);
    mp_stages sg = {.e = e, .flt = flt, .grp = grp, .cyc = calloc(mb, sizeof(tk_te_block))};
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = TK_OK;
    tk_te_block b;
    bool ready;
    size_t n;
    for (size_t i = 0; i < g->nblocks && st == TK_OK; i++)
        st = mp_to_filter(&sg, &g->blocks[i]);
    for (size_t i = 0; i < g->nrows && st == TK_OK; i++) {
        assert_int_equal(tk_spike_conv_push(conv, &g->rows[i], &b, &ready, &diag), TK_OK);
        for (; ready && st == TK_OK; assert_int_equal(tk_spike_conv_next(conv, &b, &ready), TK_OK))
            st = mp_to_filter(&sg, &b);
    }
    assert_int_equal(tk_spike_conv_finish(conv, &b, &ready, &diag), TK_OK);
    for (; ready && st == TK_OK; assert_int_equal(tk_spike_conv_next(conv, &b, &ready), TK_OK))
        st = mp_to_filter(&sg, &b);
    if (flt && st == TK_OK) {
        assert_int_equal(tk_te_filter_finish(flt, &b, &n), TK_OK);
        if (n)
            st = mp_to_grouper(&sg, &b);
    }
    if (grp && st == TK_OK) {
        assert_int_equal(tk_te_grouper_finish(grp, sg.cyc, &n), TK_OK);
        if (n)
            st = tk_te_encoder_push(e, sg.cyc, n);
    }
    if (st == TK_OK)
        st = tk_te_encoder_finish(e);
    free(sg.cyc);
    tk_te_grouper_free(grp);
    tk_te_filter_free(flt);
    tk_spike_conv_free(conv);
    tk_te_encoder_free(e);
    return st;
}

/* Run g through setting s. Fails the test on an API error; the caller checks r. */
static inline void mp_roundtrip(const mp_prog *g, const mp_setting *s, mp_result *r)
{
    memset(r, 0, sizeof(*r));
    mp_run x = {.s = s, .img = g->img, .r = r};
    x.want = s->want ? s->want : g->pcs;
    x.nwant = s->want ? s->nwant : g->npcs;
    const bool blocks = (s->dec_flags & TK_TE_DEC_BLOCK_EVENTS) != 0;
    assert_int_equal(
        tk_te_decoder_new(&s->p, g->img, blocks ? mp_on_block_events : mp_on_event, &x, &x.d),
        TK_OK);
    tk_te_decoder_set_flags(x.d, s->dec_flags);
    for (unsigned priv = 0; priv < 4; priv++)
        if ((g->tvec_set >> priv) & 1u)
            tk_te_decoder_set_trap_vector(x.d, priv, g->tvec[priv]);
    const tk_status st = mp_encode(g, s, mp_on_packet, &x);
    if (x.codec_error)
        fail_msg("%s: packet could not be carried (%s)", g->name, tk_strerror(x.codec_error));
    assert_int_equal(st, TK_OK);
    assert_int_equal(tk_te_decoder_finish(x.d), TK_OK);
    tk_te_decoder_stats ds = {.size = sizeof(ds)};
    tk_te_decoder_get_stats(x.d, &ds);
    r->replayed = ds.walks_replayed;
    tk_te_decoder_free(x.d);
}

/* The round trip must give back exactly the expected PCs, without decoder errors. */
static inline void mp_expect_exact(const mp_prog *g, const char *what, const mp_setting *s,
                                   const mp_result *r)
{
    const size_t n = s->want ? s->nwant : g->npcs;
    if (r->differs)
        fail_msg("%s %s: PC %zu: got %llx, want %llx", g->name, what, r->at + 1,
                 (unsigned long long)r->got, (unsigned long long)r->want);
    if (r->pcs != n)
        fail_msg("%s %s: %llu of %zu PCs decoded", g->name, what, (unsigned long long)r->pcs, n);
    if (r->errors)
        fail_msg("%s %s: %llu decoder errors", g->name, what, (unsigned long long)r->errors);
}

#endif
