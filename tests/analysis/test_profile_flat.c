/* SPDX-License-Identifier: BSD-2-Clause */
/* The flat collection level (TK_PROFILE_FLAT) against the full profile on the reference
 * programs' real traces (etrace-ref, every setting present, decoded from their packets with
 * the decoder's own block batches, and also as range events): totals, functions (self and
 * entry counts), instructions, blocks and branches identical, no calls, edges, runs or
 * contexts, and the lcov file identical byte for byte. The reference ELFs have no DWARF, so
 * the lcov file is written over a line table made from the full profile's functions: one
 * source line per 8 bytes of code, so that lines hold several instructions and branches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_compare.h"
#include "te_ref.h"
#include "testutil.h"
#include "tracekit/analysis.h"
#include "tracekit/blocks.h"
#include "tracekit/te_decoder.h"

/* Counts the TK_EV_BLOCKS entries reaching the profile, so the test knows which path ran. */
typedef struct tap {
    tk_profile *p;
    uint64_t entries;
} tap;

static tk_status tap_event(void *ctx, const tk_event *ev)
{
    tap *t = ctx;
    if (ev->kind == TK_EV_BLOCKS)
        t->entries += ev->nblocks;
    return tk_profile_event(t->p, ev);
}

/* Decode dir/prog.te_inst_raw into a new, finished profile of the given level. */
static tk_profile *collect(tk_image *img, const char *dir, const char *prog, unsigned flags,
                           unsigned dec_flags, uint64_t *entries)
{
    tk_code_view v;
    tk_code_view_from_image(img, &v);
    tap t = {.p = NULL, .entries = 0};
    assert_int_equal(tk_profile_new_flags(&v, flags, &t.p), TK_OK);
    tk_test_ref_decode(dir, prog, img, dec_flags, tap_event, &t);
    /* The totals are right before finish too (the flat level keeps block counters). */
    tk_profile_totals before, after;
    tk_profile_get_totals(t.p, &before);
    assert_int_equal(tk_profile_finish(t.p), TK_OK);
    tk_profile_get_totals(t.p, &after);
    assert_int_equal(before.insns, after.insns);
    assert_int_equal(before.ranges, after.ranges);
    *entries = t.entries;
    return t.p;
}

/* Read a PC list into a new, finished profile of the given level, as range events or (blocks)
 * through tk_block_batcher. */
static tk_profile *collect_pcs(tk_image *img, const char *pcs, unsigned flags, bool blocks,
                               uint64_t *entries)
{
    tk_code_view v;
    tk_code_view_from_image(img, &v);
    tap t = {.p = NULL, .entries = 0};
    assert_int_equal(tk_profile_new_flags(&v, flags, &t.p), TK_OK);
    tk_block_batcher *bb = NULL;
    tk_event_fn fn = tap_event;
    void *ctx = &t;
    if (blocks) {
        assert_int_equal(tk_block_batcher_new(img, tap_event, &t, &bb), TK_OK);
        fn = tk_block_batcher_event;
        ctx = bb;
    }
    tk_diag d;
    tk_diag_clear(&d);
    tk_pc_flow *flow = NULL;
    assert_int_equal(tk_pc_flow_new(img, fn, ctx, &flow), TK_OK);
    assert_int_equal(tk_pc_flow_read_file(flow, pcs, &d), TK_OK);
    assert_int_equal(tk_pc_flow_finish(flow), TK_OK);
    tk_pc_flow_free(flow);
    if (bb) {
        assert_int_equal(tk_block_batcher_flush(bb), TK_OK);
        tk_block_batcher_free(bb);
    }
    assert_int_equal(tk_profile_finish(t.p), TK_OK);
    *entries = t.entries;
    return t.p;
}

static void same_flat(const tk_profile *full, const tk_profile *flat)
{
    tk_profile_totals x, y;
    tk_profile_get_totals(full, &x);
    tk_profile_get_totals(flat, &y);
    assert_true(x.insns > 0);
    same_event_totals(&x, &y);
    /* No stack in the flat level. */
    assert_int_equal(y.unmatched_returns, 0);
    assert_int_equal(y.stack_resets, 0);
    assert_int_equal(y.max_depth, 0);

    assert_int_equal(tk_profile_func_count(full), tk_profile_func_count(flat));
    for (size_t i = 0; i < tk_profile_func_count(full); i++) {
        const tk_prof_func *a = tk_profile_func(full, i), *b = tk_profile_func(flat, i);
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->addr, b->addr);
        assert_int_equal(a->size, b->size);
        assert_int_equal(a->self, b->self);
        assert_int_equal(a->entries, b->entries);
        assert_int_equal(b->inclusive, 0);
    }
    same_code_tables(full, flat);
    assert_true(tk_profile_call_count(full) > 0 && tk_profile_edge_count(full) > 0);
    assert_int_equal(tk_profile_call_count(flat), 0);
    assert_int_equal(tk_profile_edge_count(flat), 0);
    assert_int_equal(tk_profile_run_count(flat), 0);
    assert_int_equal(tk_profile_ctx_count(flat), 0);
    assert_null(tk_profile_call(flat, 0));
    assert_null(tk_profile_edge(flat, 0));
    assert_null(tk_profile_run(flat, 0));
    assert_null(tk_profile_ctx(flat, 0));
}

/* A line table over the full profile's functions: file "<func>.c", line = offset / 8 + 1,
 * so every function is an lcov function and lines hold 2 to 4 instructions. */
static tk_line_table *fake_lines(const tk_profile *p)
{
    tk_line_table *lt = NULL;
    assert_int_equal(tk_line_table_new(&lt), TK_OK);
    for (size_t i = 0; i < tk_profile_func_count(p); i++) {
        const tk_prof_func *f = tk_profile_func(p, i);
        if (!f->size)
            continue;
        char file[256];
        snprintf(file, sizeof(file), "%s.c", f->name);
        assert_int_equal(tk_line_table_add_func(lt, f->name, f->addr, f->addr + f->size, file, 1),
                         TK_OK);
        for (uint64_t off = 0; off < f->size; off += 8)
            assert_int_equal(
                tk_line_table_add(lt, f->addr + off, file, (unsigned)(off / 8 + 1), false), TK_OK);
        assert_int_equal(tk_line_table_add(lt, f->addr + f->size, file, 0, true), TK_OK);
    }
    return lt;
}

static char *write_lcov(const tk_profile *p, tk_line_table *lt, size_t *n)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, n);
    assert_non_null(f);
    tk_write_options o;
    tk_write_options_init(&o);
    o.lines = lt;
    o.test_name = "flat";
    assert_int_equal(tk_coverage_write_lcov(p, f, &o), TK_OK);
    fclose(f);
    return text;
}

/* True if the lcov file was not empty. */
static bool check(const char *prog, const char *setting)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", prog, setting);
    char *dir = tk_test_data_path(rel);
    tk_image *img = tk_test_ref_image(prog, true);

    uint64_t e_full, e_flat, e_ranges;
    tk_profile *full = collect(img, dir, prog, 0, TK_TE_DEC_BLOCK_EVENTS, &e_full);
    tk_profile *flat = collect(img, dir, prog, TK_PROFILE_FLAT, TK_TE_DEC_BLOCK_EVENTS, &e_flat);
    tk_profile *flat_r = collect(img, dir, prog, TK_PROFILE_FLAT, 0, &e_ranges);
    /* The block path really ran (most flow as blocks), the range path got no blocks. */
    tk_profile_totals t;
    tk_profile_get_totals(full, &t);
    assert_true(e_flat * 2 >= t.ranges);
    assert_int_equal(e_ranges, 0);
    same_flat(full, flat);
    same_flat(full, flat_r);

    tk_line_table *lt = fake_lines(full);
    size_t na, nb;
    char *a = write_lcov(full, lt, &na), *b = write_lcov(flat, lt, &nb);
    /* Empty only for a program without sized symbols (test_discon_branch_exception). */
    const bool written = na > 0;
    if (written)
        assert_true(strstr(a, "BRDA:") && strstr(a, "FNDA:"));
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
    tk_line_table_free(lt);
    tk_profile_free(full);
    tk_profile_free(flat);
    tk_profile_free(flat_r);
    tk_image_free(img);
    free(dir);
    return written;
}

static void check_one(const char *prog, const char *setting, void *ctx)
{
    *(size_t *)ctx += check(prog, setting);
}

static void test_reference_traces(void **state)
{
    (void)state;
    size_t lcov = 0;
    assert_true(tk_test_ref_each(check_one, &lcov) >= 20);
    assert_true(lcov >= 18);
}

/* The executed-PC lists (traps inferred from the PCs): the full profile from range events against
 * the flat one from blocks. */
static void test_pc_lists(void **state)
{
    (void)state;
    static const char *const progs[] = {"median", "towers", "dhrystone", "qsort",
                                        "test_discon_branch_exception"};
    uint64_t breaks = 0;
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        char rel[512];
        snprintf(rel, sizeof(rel), "riscv-ref/%s.riscv", progs[i]);
        char *elf = tk_test_data_path(rel);
        snprintf(rel, sizeof(rel), "etrace-ref/%s/itype3_basic/%s.decoder.trace.gz", progs[i],
                 progs[i]);
        char *pcs = tk_test_data_path(rel);
        tk_image *img = NULL;
        tk_diag d;
        tk_diag_clear(&d);
        assert_int_equal(tk_image_open_elf(elf, &img, &d), TK_OK);
        uint64_t e_full, e_flat;
        tk_profile *full = collect_pcs(img, pcs, 0, false, &e_full);
        tk_profile *flat = collect_pcs(img, pcs, TK_PROFILE_FLAT, true, &e_flat);
        tk_profile_totals t;
        tk_profile_get_totals(full, &t);
        assert_true(e_flat * 2 >= t.ranges);
        breaks += t.errors + t.traps + t.lost;
        same_flat(full, flat);
        tk_profile_free(full);
        tk_profile_free(flat);
        tk_image_free(img);
        free(elf);
        free(pcs);
    }
    assert_true(breaks > 0); /* the flow broke somewhere: the slow paths ran */
}

/* Unknown flags are refused; flags 0 is the full level. */
static void test_flags(void **state)
{
    (void)state;
    tk_image *img = NULL;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    tk_code_view v;
    tk_code_view_from_image(img, &v);
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new_flags(&v, 1u << 7, &p), TK_ERR_INVALID);
    assert_null(p);
    assert_int_equal(tk_profile_new_flags(&v, 0, &p), TK_OK);
    tk_profile_free(p);
    tk_image_free(img);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_reference_traces),
        cmocka_unit_test(test_pc_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
