/* SPDX-License-Identifier: BSD-2-Clause */
/* The legacy decoders feed the analysis sinks as E-Trace does: one run of a shared program
 * on the hart model is traced as E-Trace, nibble (branch and PC-only) and RLE trace, each
 * trace decoded into a profile, and the profiles must agree instruction by instruction,
 * branch by branch and call by call. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracekit/analysis.h"
#include "tracekit/hart.h"
#include "tracekit/legacy.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_packet.h"

typedef struct etrace {
    tk_te_params p;
    tk_hart_blocks *blocks;
    tk_te_encoder *enc;
    tk_te_decoder *dec;
    uint64_t packets;
} etrace;

typedef struct fan {
    etrace et;
    tk_nibble_encoder *nb, *np;
    tk_rle_encoder *rle;
} fan;

static tk_status on_packet(void *ctx, const tk_te_packet *pkt)
{
    etrace *e = ctx;
    return tk_te_decoder_packet(e->dec, pkt, 0, e->packets++);
}

static tk_status on_blocks(void *ctx, const tk_te_block *b, size_t n)
{
    etrace *e = ctx;
    return tk_te_encoder_push(e->enc, b, n);
}

static tk_status on_retire(void *ctx, const tk_hart_retire *r, size_t n)
{
    fan *f = ctx;
    tk_status st = tk_hart_blocks_push(f->et.blocks, r, n);
    if (st == TK_OK)
        st = tk_nibble_encoder_push(f->nb, r, n, NULL, 0);
    if (st == TK_OK)
        st = tk_nibble_encoder_push(f->np, r, n, NULL, 0);
    if (st == TK_OK)
        st = tk_rle_encoder_push(f->rle, r, n);
    return st;
}

static void same_profile(const tk_profile *a, const tk_profile *b)
{
    tk_profile_totals ta, tb;
    tk_profile_get_totals(a, &ta);
    tk_profile_get_totals(b, &tb);
    assert_true(ta.insns > 10000);
    assert_int_equal(ta.insns, tb.insns);
    assert_int_equal(ta.errors, 0);
    assert_int_equal(tb.errors, 0);
    assert_int_equal(ta.bad_ranges, tb.bad_ranges);
    assert_int_equal(tk_profile_insn_count(a), tk_profile_insn_count(b));
    for (size_t i = 0; i < tk_profile_insn_count(a); i++) {
        assert_int_equal(tk_profile_insn(a, i)->addr, tk_profile_insn(b, i)->addr);
        assert_int_equal(tk_profile_insn(a, i)->count, tk_profile_insn(b, i)->count);
    }
    assert_int_equal(tk_profile_branch_count(a), tk_profile_branch_count(b));
    for (size_t i = 0; i < tk_profile_branch_count(a); i++) {
        assert_int_equal(tk_profile_branch(a, i)->taken, tk_profile_branch(b, i)->taken);
        assert_int_equal(tk_profile_branch(a, i)->not_taken, tk_profile_branch(b, i)->not_taken);
    }
    assert_int_equal(tk_profile_func_count(a), tk_profile_func_count(b));
    for (size_t i = 0; i < tk_profile_func_count(a); i++) {
        assert_int_equal(tk_profile_func(a, i)->self, tk_profile_func(b, i)->self);
        assert_int_equal(tk_profile_func(a, i)->inclusive, tk_profile_func(b, i)->inclusive);
        assert_int_equal(tk_profile_func(a, i)->entries, tk_profile_func(b, i)->entries);
    }
    assert_int_equal(tk_profile_call_count(a), tk_profile_call_count(b));
    for (size_t i = 0; i < tk_profile_call_count(a); i++)
        assert_int_equal(tk_profile_call(a, i)->calls, tk_profile_call(b, i)->calls);
}

static void test_profiles_agree(void **state)
{
    (void)state;
    char *path = tk_test_data_path("riscv-ref/towers.riscv");
    tk_image *img;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_image_open_elf(path, &img, &diag), TK_OK);
    tk_code_view view;
    tk_code_view_from_image(img, &view);
    tk_profile *pe, *pb, *pp, *pr;
    assert_int_equal(tk_profile_new(&view, &pe), TK_OK);
    assert_int_equal(tk_profile_new(&view, &pb), TK_OK);
    assert_int_equal(tk_profile_new(&view, &pp), TK_OK);
    assert_int_equal(tk_profile_new(&view, &pr), TK_OK);

    fan f;
    memset(&f, 0, sizeof(f));
    tk_te_params_init(&f.et.p);
    f.et.p.s.iaddress_width = 64;
    f.et.p.s.iaddress_lsb = 1;
    f.et.p.s.itype_width = 4;
    f.et.p.ioptions_width = 6;
    assert_int_equal(tk_te_params_validate(&f.et.p, &diag), TK_OK);
    tk_te_encoder_options eo;
    tk_te_encoder_options_init(&eo);
    eo.reference_quirks = false;
    eo.irdepth_ones = false;
    tk_hart_blocks_options bo;
    tk_hart_blocks_options_init(&bo);
    bo.xret_itype3 = true;
    assert_int_equal(tk_te_decoder_new(&f.et.p, img, tk_profile_event, pe, &f.et.dec), TK_OK);
    assert_int_equal(tk_te_encoder_new_opts(&f.et.p, &eo, on_packet, &f.et, &f.et.enc), TK_OK);
    assert_int_equal(tk_hart_blocks_new(&bo, on_blocks, &f.et, &f.et.blocks), TK_OK);
    tk_nibble_params np;
    tk_nibble_params_init(&np);
    assert_int_equal(tk_nibble_encoder_new(&np, &f.nb), TK_OK);
    np.emit = TK_NIB_PC;
    assert_int_equal(tk_nibble_encoder_new(&np, &f.np), TK_OK);
    tk_rle_params rp;
    tk_rle_params_init(&rp);
    assert_int_equal(tk_rle_encoder_new(&rp, &f.rle), TK_OK);

    tk_sim_config cfg;
    tk_sim_config_init(&cfg);
    tk_sim *sim;
    assert_int_equal(tk_sim_new(&cfg, &sim), TK_OK);
    assert_int_equal(tk_sim_load_image(sim, img, &diag), TK_OK);
    tk_sim_set_retire(sim, on_retire, &f);
    tk_sim_result res;
    assert_int_equal(tk_sim_run(sim, 0, &res, &diag), TK_OK);
    const uint64_t next = tk_sim_get_pc(sim, 0);
    assert_int_equal(tk_hart_blocks_finish(f.et.blocks), TK_OK);
    assert_int_equal(tk_te_encoder_finish(f.et.enc), TK_OK);
    assert_int_equal(tk_te_decoder_finish(f.et.dec), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(f.nb, true, next), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(f.np, true, next), TK_OK);
    assert_int_equal(tk_rle_encoder_finish(f.rle, true, next), TK_OK);

    tk_nibble_decoder *d;
    np.emit = TK_NIB_BRANCH;
    assert_int_equal(tk_nibble_decoder_new(&np, img, tk_profile_event, pb, NULL, NULL, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, tk_nibble_encoder_trace(f.nb)), TK_OK);
    tk_nibble_decoder_free(d);
    np.emit = TK_NIB_PC;
    assert_int_equal(tk_nibble_decoder_new(&np, img, tk_profile_event, pp, NULL, NULL, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, tk_nibble_encoder_trace(f.np)), TK_OK);
    tk_nibble_decoder_free(d);
    size_t npairs;
    const tk_rle_pair *pairs = tk_rle_encoder_pairs(f.rle, &npairs);
    assert_int_equal(tk_rle_decode(&rp, img, pairs, npairs, tk_profile_event, pr, NULL), TK_OK);

    assert_int_equal(tk_profile_finish(pe), TK_OK);
    assert_int_equal(tk_profile_finish(pb), TK_OK);
    assert_int_equal(tk_profile_finish(pp), TK_OK);
    assert_int_equal(tk_profile_finish(pr), TK_OK);
    same_profile(pe, pb);
    same_profile(pe, pp);
    same_profile(pe, pr);

    tk_profile_free(pe);
    tk_profile_free(pb);
    tk_profile_free(pp);
    tk_profile_free(pr);
    tk_sim_free(sim);
    tk_hart_blocks_free(f.et.blocks);
    tk_te_encoder_free(f.et.enc);
    tk_te_decoder_free(f.et.dec);
    tk_nibble_encoder_free(f.nb);
    tk_nibble_encoder_free(f.np);
    tk_rle_encoder_free(f.rle);
    tk_image_free(img);
    free(path);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiles_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
