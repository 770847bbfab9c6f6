/* SPDX-License-Identifier: BSD-2-Clause */
/* The example programs (examples/, built by tests/hart when the RISC-V cross compiler is
 * there) run by the hart model, as an mp_prog of ingress blocks: recursion, function
 * pointers, jump tables, setjmp/longjmp, traps, timer interrupts, U/S/M mode changes. */
#ifndef TK_TEST_HART_PROG_H
#define TK_TEST_HART_PROG_H

#include "modes_pipe.h"
#include "tracekit/hart.h"

/* Longest part of a run kept (bench runs 10.9 M instructions). */
#define MP_EXAMPLE_MAX_INSNS 300000u

/* The hart's retirement records become ingress blocks through tk_hart_blocks (single
 * retirement, 2.0 itypes, sijump marks; an interrupt after a branch or jump goes in a block
 * of its own, so the branch keeps its outcome); the expected PCs are the retired ones. */
typedef struct mp_collect {
    mp_prog *g;
    tk_hart_blocks *hb;
    size_t bcap, pcap;
} mp_collect;

static inline tk_status mp_on_blocks(void *ctx, const tk_te_block *blocks, size_t n)
{
    mp_collect *c = ctx;
    mp_prog *g = c->g;
    for (size_t i = 0; i < n; i++) {
        if (g->nblocks == c->bcap) {
            c->bcap *= 2;
            g->blocks = realloc(g->blocks, c->bcap * sizeof(*g->blocks));
            assert_non_null(g->blocks);
        }
        g->blocks[g->nblocks++] = blocks[i];
    }
    return TK_OK;
}

static inline tk_status mp_on_retire(void *ctx, const tk_hart_retire *recs, size_t n)
{
    mp_collect *c = ctx;
    mp_prog *g = c->g;
    for (size_t i = 0; i < n; i++) {
        if (g->npcs == c->pcap) {
            c->pcap *= 2;
            g->pcs = realloc(g->pcs, c->pcap * sizeof(*g->pcs));
            assert_non_null(g->pcs);
        }
        if (recs[i].flags & TK_HART_F_RETIRED)
            g->pcs[g->npcs++] = recs[i].pc;
    }
    return tk_hart_blocks_push(c->hb, recs, n);
}

/* Run example `name` (dir/name.elf) on the hart model; false if it was not built. */
static inline bool mp_load_example(mp_prog *g, const char *dir, const char *name)
{
    memset(g, 0, sizeof(*g));
    g->name = name;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.elf", dir, name);
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_image_open_elf(path, &g->img, &diag) != TK_OK)
        return false;
    tk_sim_config cfg;
    tk_sim_config_init(&cfg);
    tk_sim *sim;
    assert_int_equal(tk_sim_new(&cfg, &sim), TK_OK);
    assert_int_equal(tk_sim_load_image(sim, g->img, &diag), TK_OK);
    mp_collect c = {.g = g, .bcap = 4096, .pcap = 4096};
    g->blocks = malloc(c.bcap * sizeof(*g->blocks));
    g->pcs = malloc(c.pcap * sizeof(*g->pcs));
    tk_hart_blocks_options bo;
    tk_hart_blocks_options_init(&bo);
    bo.itype_width = 4;
    bo.sijump = true;
    bo.retires = 1;
    bo.xret_itype3 = true;
    assert_int_equal(tk_hart_blocks_new(&bo, mp_on_blocks, &c, &c.hb), TK_OK);
    tk_sim_set_retire(sim, mp_on_retire, &c);
    tk_sim_result res;
    tk_status st = tk_sim_run(sim, MP_EXAMPLE_MAX_INSNS, &res, &diag);
    if (st != TK_OK && st != TK_END)
        fail_msg("%s: %s", name, diag.message);
    /* the vectors the program installed (implicit exception mode) */
    static const struct {
        unsigned priv, csr;
    } vec[] = {{3, 0x305}, {1, 0x105}};
    for (size_t i = 0; i < 2; i++) {
        uint64_t v;
        if (tk_sim_get_csr(sim, 0, vec[i].csr, &v) == TK_OK && v) {
            g->tvec[vec[i].priv] = v;
            g->tvec_set |= (uint8_t)(1u << vec[i].priv);
        }
    }
    assert_int_equal(tk_hart_blocks_finish(c.hb), TK_OK);
    tk_hart_blocks_free(c.hb);
    tk_sim_free(sim);
    return true;
}

#endif
