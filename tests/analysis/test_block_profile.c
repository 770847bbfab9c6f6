/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector gives the same answers whether it is fed range events or batches of
 * whole blocks (TK_EV_BLOCKS, made here by tk_block_batcher from the same ranges): every
 * accessor of analysis.h, field by field and in the same order, on the reference programs'
 * real traces (etrace-ref: the E-Trace packets through the flow decoder, every setting
 * present, and the executed-PC lists through tk_pc_flow). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "testutil.h"
#include "tracekit/analysis.h"
#include "tracekit/blocks.h"
#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_params.h"

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
 * profile, through the batcher when blocks is set. */
static tk_profile *collect(tk_image *img, const char *dir, const char *prog, const char *pcs,
                           bool blocks, tap *t)
{
    tk_code_view v;
    tk_code_view_from_image(img, &v);
    memset(t, 0, sizeof(*t));
    assert_int_equal(tk_profile_new(&v, &t->p), TK_OK);
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
        char path[1024];
        tk_te_params params;
        tk_te_params_init(&params);
        snprintf(path, sizeof(path), "%s/%s.scf", dir, prog);
        assert_int_equal(tk_te_params_read_scf(&params, path, &d), TK_OK);
        snprintf(path, sizeof(path), "%s/%s.decoder.ucf", dir, prog);
        assert_int_equal(tk_te_params_read_ucf(&params, path, NULL, &d), TK_OK);
        snprintf(path, sizeof(path), "%s/%s.te_inst_raw", dir, prog);
        tk_te_raw *raw = NULL;
        assert_int_equal(tk_te_raw_open(path, &raw, &d), TK_OK);
        tk_te_decoder *dec = NULL;
        assert_int_equal(tk_te_decoder_new(&params, img, fn, ctx, &dec), TK_OK);
        assert_int_equal(tk_te_decoder_run_raw(dec, raw), TK_OK);
        assert_int_equal(tk_te_decoder_finish(dec), TK_OK);
        tk_te_decoder_free(dec);
        tk_te_raw_close(raw);
    }
    if (bb) {
        assert_int_equal(tk_block_batcher_flush(bb), TK_OK);
        tk_block_batcher_free(bb);
    }
    assert_int_equal(tk_profile_finish(t->p), TK_OK);
    return t->p;
}

static void same_totals(const tk_profile *a, const tk_profile *b)
{
    tk_profile_totals x, y;
    tk_profile_get_totals(a, &x);
    tk_profile_get_totals(b, &y);
    assert_int_equal(x.events, y.events);
    assert_int_equal(x.ranges, y.ranges);
    assert_int_equal(x.insns, y.insns);
    assert_int_equal(x.traps, y.traps);
    assert_int_equal(x.interrupts, y.interrupts);
    assert_int_equal(x.lost, y.lost);
    assert_int_equal(x.errors, y.errors);
    assert_int_equal(x.trace_on, y.trace_on);
    assert_int_equal(x.trace_off, y.trace_off);
    assert_int_equal(x.bad_ranges, y.bad_ranges);
    assert_int_equal(x.unmatched_returns, y.unmatched_returns);
    assert_int_equal(x.stack_resets, y.stack_resets);
    assert_int_equal(x.max_depth, y.max_depth);
    assert_true(x.insns > 0);
}

static void same_tables(const tk_profile *a, const tk_profile *b)
{
    assert_int_equal(tk_profile_func_count(a), tk_profile_func_count(b));
    for (size_t i = 0; i < tk_profile_func_count(a); i++) {
        const tk_prof_func *x = tk_profile_func(a, i), *y = tk_profile_func(b, i);
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->addr, y->addr);
        assert_int_equal(x->size, y->size);
        assert_int_equal(x->entries, y->entries);
        assert_int_equal(x->self, y->self);
        assert_int_equal(x->inclusive, y->inclusive);
    }
    assert_int_equal(tk_profile_call_count(a), tk_profile_call_count(b));
    for (size_t i = 0; i < tk_profile_call_count(a); i++) {
        const tk_prof_call *x = tk_profile_call(a, i), *y = tk_profile_call(b, i);
        assert_int_equal(x->caller, y->caller);
        assert_int_equal(x->callee, y->callee);
        assert_int_equal(x->site, y->site);
        assert_int_equal(x->calls, y->calls);
        assert_int_equal(x->inclusive, y->inclusive);
        assert_int_equal(x->trap, y->trap);
    }
    assert_int_equal(tk_profile_insn_count(a), tk_profile_insn_count(b));
    for (size_t i = 0; i < tk_profile_insn_count(a); i++) {
        const tk_prof_insn *x = tk_profile_insn(a, i), *y = tk_profile_insn(b, i);
        assert_int_equal(x->addr, y->addr);
        assert_int_equal(x->count, y->count);
        assert_int_equal(x->func, y->func);
        assert_int_equal(x->len, y->len);
        assert_int_equal(x->cond_branch, y->cond_branch);
        assert_int_equal(tk_profile_find_insn(b, x->addr), i);
    }
    assert_int_equal(tk_profile_block_count(a), tk_profile_block_count(b));
    for (size_t i = 0; i < tk_profile_block_count(a); i++) {
        const tk_prof_block *x = tk_profile_block(a, i), *y = tk_profile_block(b, i);
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->last, y->last);
        assert_int_equal(x->ninsn, y->ninsn);
        assert_int_equal(x->func, y->func);
        assert_int_equal(x->count, y->count);
    }
    assert_int_equal(tk_profile_branch_count(a), tk_profile_branch_count(b));
    for (size_t i = 0; i < tk_profile_branch_count(a); i++) {
        const tk_prof_branch *x = tk_profile_branch(a, i), *y = tk_profile_branch(b, i);
        assert_int_equal(x->addr, y->addr);
        assert_int_equal(x->taken, y->taken);
        assert_int_equal(x->not_taken, y->not_taken);
        assert_int_equal(x->target, y->target);
        assert_int_equal(x->func, y->func);
    }
    assert_int_equal(tk_profile_edge_count(a), tk_profile_edge_count(b));
    for (size_t i = 0; i < tk_profile_edge_count(a); i++) {
        const tk_prof_edge *x = tk_profile_edge(a, i), *y = tk_profile_edge(b, i);
        assert_int_equal(x->from, y->from);
        assert_int_equal(x->to, y->to);
        assert_int_equal(x->count, y->count);
        assert_int_equal(x->end, y->end);
    }
    assert_int_equal(tk_profile_run_count(a), tk_profile_run_count(b));
    for (size_t i = 0; i < tk_profile_run_count(a); i++) {
        const tk_prof_run *x = tk_profile_run(a, i), *y = tk_profile_run(b, i);
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->last, y->last);
        assert_int_equal(x->count, y->count);
        assert_int_equal(x->after_return, y->after_return);
    }
    assert_int_equal(tk_profile_ctx_count(a), tk_profile_ctx_count(b));
    for (size_t i = 0; i < tk_profile_ctx_count(a); i++) {
        const tk_prof_ctx *x = tk_profile_ctx(a, i), *y = tk_profile_ctx(b, i);
        assert_int_equal(x->parent, y->parent);
        assert_int_equal(x->func, y->func);
        assert_int_equal(x->self, y->self);
    }
}

/* The serialised outputs agree too (they read the same tables, but also the order). */
static void same_output(const tk_profile *a, const tk_profile *b,
                        tk_status (*write)(const tk_profile *, FILE *, const tk_write_options *))
{
    char *ta = NULL, *tb = NULL;
    size_t na = 0, nb = 0;
    FILE *fa = open_memstream(&ta, &na), *fb = open_memstream(&tb, &nb);
    assert_non_null(fa);
    assert_non_null(fb);
    tk_write_options o;
    tk_write_options_init(&o);
    o.program = "prog.elf";
    assert_int_equal(write(a, fa, &o), TK_OK);
    assert_int_equal(write(b, fb, &o), TK_OK);
    fclose(fa);
    fclose(fb);
    assert_true(na > 0);
    assert_int_equal(na, nb);
    assert_memory_equal(ta, tb, na);
    free(ta);
    free(tb);
}

static void check(const char *prog, const char *setting, bool pc_list)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "riscv-ref/%s.riscv", prog);
    char *elf = tk_test_data_path(rel);
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", prog, setting);
    char *dir = tk_test_data_path(rel);
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s/%s.decoder.trace.gz", prog, setting, prog);
    char *pcs = pc_list ? tk_test_data_path(rel) : NULL;
    tk_image *img = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_image_open_elf(elf, &img, &d), TK_OK);
    if (!pc_list) /* the reference traces start in spike's reset code at 0x1000 */
        assert_int_equal(tk_te_add_spike_reset_code(img, false), TK_OK);

    tap tr, tb;
    tk_profile *a = collect(img, dir, prog, pcs, false, &tr);
    tk_profile *b = collect(img, dir, prog, pcs, true, &tb);
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
    printf("%-5s %-12s %-28s %8llu ranges, %8llu as blocks in %6llu batches, %5llu other "
           "events\n",
           pc_list ? "pcs" : "trace", setting, prog, (unsigned long long)t.ranges,
           (unsigned long long)tb.entries, (unsigned long long)tb.batches,
           (unsigned long long)tb.others);
    tk_profile_free(a);
    tk_profile_free(b);
    tk_image_free(img);
    free(elf);
    free(dir);
    free(pcs);
}

static const char *const progs[] = {
    "median",    "multiply", "towers", "vvadd", "spmv",
    "dhrystone", "qsort",    "mm",     "rsort", "test_discon_branch_exception"};

/* Every setting of every program, decoded from its packets. */
static void test_decoded_traces(void **state)
{
    (void)state;
    static const char *settings[] = {"itype3_basic", "itype4_basic", "itype3_debug",
                                     "itype4_debug"};
    size_t checked = 0;
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        for (size_t k = 0; k < sizeof(settings) / sizeof(settings[0]); k++) {
            char rel[512];
            snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", progs[i], settings[k]);
            char *dir = tk_test_data_path(rel);
            struct stat st;
            bool present = stat(dir, &st) == 0;
            free(dir);
            if (present) {
                check(progs[i], settings[k], false);
                checked++;
            }
        }
    }
    assert_true(checked >= 20);
}

/* Every program's executed-PC list (traps inferred from the PCs, the boot ROM's PCs an
 * error: flow that is not all whole blocks). */
static void test_pc_lists(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
        check(progs[i], "itype3_basic", true);
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
