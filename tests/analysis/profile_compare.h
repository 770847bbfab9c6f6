/* SPDX-License-Identifier: BSD-2-Clause */
/* Test helpers: two finished profiles agree in every accessor of analysis.h, field by field
 * and in the same order, and in the files the writers make of them. */
#ifndef TK_TEST_PROFILE_COMPARE_H
#define TK_TEST_PROFILE_COMPARE_H

#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "tracekit/analysis.h"

/* The totals of the event stream, which both collection levels count (TK_PROFILE_FLAT too). */
static inline void same_event_totals(const tk_profile_totals *x, const tk_profile_totals *y)
{
    assert_int_equal(x->events, y->events);
    assert_int_equal(x->ranges, y->ranges);
    assert_int_equal(x->insns, y->insns);
    assert_int_equal(x->traps, y->traps);
    assert_int_equal(x->interrupts, y->interrupts);
    assert_int_equal(x->lost, y->lost);
    assert_int_equal(x->errors, y->errors);
    assert_int_equal(x->trace_on, y->trace_on);
    assert_int_equal(x->trace_off, y->trace_off);
    assert_int_equal(x->bad_ranges, y->bad_ranges);
}

static inline void same_totals(const tk_profile *a, const tk_profile *b)
{
    tk_profile_totals x, y;
    tk_profile_get_totals(a, &x);
    tk_profile_get_totals(b, &y);
    same_event_totals(&x, &y);
    assert_int_equal(x.unmatched_returns, y.unmatched_returns);
    assert_int_equal(x.stack_resets, y.stack_resets);
    assert_int_equal(x.max_depth, y.max_depth);
    assert_true(x.insns > 0);
}

/* The tables both collection levels report (TK_PROFILE_FLAT too): instructions, blocks and
 * branches. */
static inline void same_code_tables(const tk_profile *a, const tk_profile *b)
{
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
}

static inline void same_tables(const tk_profile *a, const tk_profile *b)
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
    same_code_tables(a, b);
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
static inline void same_output(const tk_profile *a, const tk_profile *b,
                               tk_status (*write)(const tk_profile *, FILE *,
                                                  const tk_write_options *))
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

#endif
