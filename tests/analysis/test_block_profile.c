/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector gives the same answers whether it is fed range events or batches of
 * whole blocks (TK_EV_BLOCKS, made here by tk_block_batcher from the same ranges), and
 * whether its fast paths are used or every range goes through the general one
 * (tk_prof_set_general_only): every accessor of analysis.h, field by field and in the same
 * order, on the reference programs' real traces (etrace-ref: the E-Trace packets through
 * the flow decoder, every setting present, and the executed-PC lists through tk_pc_flow). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile_internal.h"
#include "profile_compare.h"
#include "te_ref.h"
#include "testutil.h"
#include "tracekit/analysis.h"
#include "tracekit/blocks.h"
#include "tracekit/te_decoder.h"

/* Counts what reaches the profile, so the test knows the block path was really taken. */
typedef struct tap {
    tk_profile *p;
    uint64_t batches, entries, others;
} tap;

static tk_status tap_event(void *ctx, const tk_event *ev)
{
    tap *t = ctx;
    if (ev->kind == TK_EV_BLOCKS) {
        t->batches++;
        t->entries += ev->nblocks;
    } else {
        t->others++;
    }
    return tk_profile_event(t->p, ev);
}

/* Decode dir/prog.te_inst_raw (or, with pcs set, read that PC list) into a new, finished
 * profile, through the batcher when blocks is set, with the general path only when general
 * is set. With dec_flags TK_TE_DEC_BLOCK_EVENTS, the decoder's own batches instead (its
 * replayed walks: many returns to several callers, so the edge and run memos of ranges
 * miss and the records come from the caches in front of the maps). */
static tk_profile *collect_flags(tk_image *img, const char *dir, const char *prog, const char *pcs,
                                 bool blocks, bool general, unsigned dec_flags, tap *t)
{
    tk_code_view v;
    tk_code_view_from_image(img, &v);
    memset(t, 0, sizeof(*t));
    assert_int_equal(tk_profile_new(&v, &t->p), TK_OK);
    tk_prof_set_general_only(t->p, general);
    tk_block_batcher *bb = NULL;
    tk_event_fn fn = tap_event;
    void *ctx = t;
    if (blocks) {
        assert_int_equal(tk_block_batcher_new(img, tap_event, t, &bb), TK_OK);
        fn = tk_block_batcher_event;
        ctx = bb;
    }
    tk_diag d;
    tk_diag_clear(&d);
    if (pcs) {
        tk_pc_flow *flow = NULL;
        assert_int_equal(tk_pc_flow_new(img, fn, ctx, &flow), TK_OK);
        assert_int_equal(tk_pc_flow_read_file(flow, pcs, &d), TK_OK);
        assert_int_equal(tk_pc_flow_finish(flow), TK_OK);
        tk_pc_flow_free(flow);
    } else {
        tk_test_ref_decode(dir, prog, img, dec_flags, fn, ctx);
    }
    if (bb) {
        assert_int_equal(tk_block_batcher_flush(bb), TK_OK);
        tk_block_batcher_free(bb);
    }
    assert_int_equal(tk_profile_finish(t->p), TK_OK);
    return t->p;
}

static tk_profile *collect(tk_image *img, const char *dir, const char *prog, const char *pcs,
                           bool blocks, bool general, tap *t)
{
    return collect_flags(img, dir, prog, pcs, blocks, general, 0, t);
}

static void check(const char *prog, const char *setting, bool pc_list)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", prog, setting);
    char *dir = tk_test_data_path(rel);
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s/%s.decoder.trace.gz", prog, setting, prog);
    char *pcs = pc_list ? tk_test_data_path(rel) : NULL;
    tk_image *img = tk_test_ref_image(prog, !pc_list);

    tap tr, tb, tg;
    tk_profile *a = collect(img, dir, prog, pcs, false, false, &tr);
    tk_profile *b = collect(img, dir, prog, pcs, true, false, &tb);
    tk_profile *g = collect(img, dir, prog, pcs, false, true, &tg);
    /* The batcher really made batches, and most of the flow went as blocks (ranges cut by
     * traps are not whole blocks). */
    assert_int_equal(tr.batches, 0);
    assert_true(tb.batches > 0);
    tk_profile_totals t;
    tk_profile_get_totals(a, &t);
    assert_true(tb.entries * 2 >= t.ranges);
    same_totals(a, b);
    same_tables(a, b);
    same_output(a, b, tk_profile_write_json);
    same_output(a, b, tk_profile_write_callgrind);
    same_output(a, b, tk_profile_write_folded);
    same_output(a, b, tk_profile_write_bolt);
    same_totals(a, g);
    same_tables(a, g);
    same_output(a, g, tk_profile_write_json);
    same_output(a, g, tk_profile_write_callgrind);
    if (!pc_list) {
        tap td;
        tk_profile *dp =
            collect_flags(img, dir, prog, NULL, false, false, TK_TE_DEC_BLOCK_EVENTS, &td);
        assert_true(td.batches > 0);
        same_totals(dp, g);
        same_tables(dp, g);
        same_output(dp, g, tk_profile_write_json);
        same_output(dp, g, tk_profile_write_callgrind);
        same_output(dp, g, tk_profile_write_folded);
        tk_profile_free(dp);
    }
    printf("%-5s %-12s %-28s %8llu ranges, %8llu as blocks in %6llu batches, %5llu other "
           "events\n",
           pc_list ? "pcs" : "trace", setting, prog, (unsigned long long)t.ranges,
           (unsigned long long)tb.entries, (unsigned long long)tb.batches,
           (unsigned long long)tb.others);
    tk_profile_free(a);
    tk_profile_free(b);
    tk_profile_free(g);
    tk_image_free(img);
    free(dir);
    free(pcs);
}

static void check_decoded(const char *prog, const char *setting, void *ctx)
{
    (void)ctx;
    check(prog, setting, false);
}

/* Every setting of every program, decoded from its packets. */
static void test_decoded_traces(void **state)
{
    (void)state;
    assert_true(tk_test_ref_each(check_decoded, NULL) >= 20);
}

/* Every program's executed-PC list (traps inferred from the PCs, the boot ROM's PCs an
 * error: flow that is not all whole blocks). */
static void test_pc_lists(void **state)
{
    (void)state;
    for (size_t i = 0; i < tk_test_ref_nprogs; i++)
        check(tk_test_ref_progs[i], "itype3_basic", true);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decoded_traces),
        cmocka_unit_test(test_pc_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
