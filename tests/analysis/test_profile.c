/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector on the hand-made program of fake_code.h: counts from events equal
 * counts taken straight from the executed PC sequence, and the call graph numbers worked out
 * by hand. */
#include "testutil.h"

#include "fake_code.h"

#define run_plain fake_run_plain
#define run_irq fake_run_irq

static tk_profile *profile_of(const uint64_t *pcs, size_t n)
{
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    assert_int_equal(pcev_emit(pcs, n, fake_classify, NULL, tk_profile_event, p), TK_OK);
    assert_int_equal(tk_profile_finish(p), TK_OK);
    return p;
}

/* Every count the profile gives must equal the one counted from the PC sequence. */
static void check_against_pcs(const tk_profile *p, const uint64_t *pcs, size_t n)
{
    pcref_table insn = {0}, func = {0}, br = {0};
    for (size_t i = 0; i < n; i++) {
        pcref_get(&insn, pcs[i])->a++;
        uint64_t off;
        const tk_symbol *s = fake_symbolize(NULL, pcs[i], &off);
        assert_non_null(s);
        pcref_get(&func, s->addr)->a++;
        const fake_insn *f = fake_find(pcs[i]);
        if (f->cond && i + 1 < n) {
            pcref_count *c = pcref_get(&br, pcs[i]);
            if (pcs[i + 1] == f->target)
                c->a++;
            else if (pcs[i + 1] == pcs[i] + f->len)
                c->b++;
        }
    }
    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    assert_int_equal(t.insns, n);
    assert_int_equal(tk_profile_insn_count(p), insn.n);
    for (size_t i = 0; i < tk_profile_insn_count(p); i++) {
        const tk_prof_insn *in = tk_profile_insn(p, i);
        const pcref_count *c = pcref_find(&insn, in->addr);
        assert_non_null(c);
        assert_int_equal(in->count, c->a);
    }
    size_t nfunc = 0;
    for (size_t i = 0; i < tk_profile_func_count(p); i++) {
        const tk_prof_func *f = tk_profile_func(p, i);
        const pcref_count *c = pcref_find(&func, f->addr);
        assert_non_null(c);
        assert_int_equal(f->self, c->a);
        nfunc++;
    }
    assert_int_equal(nfunc, func.n);
    for (size_t i = 0; i < tk_profile_block_count(p); i++) {
        const tk_prof_block *b = tk_profile_block(p, i);
        assert_int_equal(b->count, pcref_find(&insn, b->start)->a);
        /* Every instruction of a block ran as often as its first. */
        for (uint64_t a = b->start; a <= b->last; a += fake_find(a)->len)
            assert_int_equal(pcref_find(&insn, a)->a, b->count);
    }
    assert_int_equal(tk_profile_branch_count(p), br.n);
    for (size_t i = 0; i < tk_profile_branch_count(p); i++) {
        const tk_prof_branch *b = tk_profile_branch(p, i);
        const pcref_count *c = pcref_find(&br, b->addr);
        assert_non_null(c);
        assert_int_equal(b->taken, c->a);
        assert_int_equal(b->not_taken, c->b);
    }
    free(insn.v);
    free(func.v);
    free(br.v);
}

static void test_counts_match_pc_sequence(void **state)
{
    (void)state;
    tk_profile *p = profile_of(run_plain, sizeof(run_plain) / sizeof(run_plain[0]));
    check_against_pcs(p, run_plain, sizeof(run_plain) / sizeof(run_plain[0]));
    tk_profile_free(p);
    p = profile_of(run_irq, sizeof(run_irq) / sizeof(run_irq[0]));
    check_against_pcs(p, run_irq, sizeof(run_irq) / sizeof(run_irq[0]));
    tk_profile_free(p);
}

static void test_call_graph_by_hand(void **state)
{
    (void)state;
    tk_profile *p = profile_of(run_plain, sizeof(run_plain) / sizeof(run_plain[0]));
    const tk_prof_func *m = tk_profile_func(p, fake_func(p, "main"));
    const tk_prof_func *f = tk_profile_func(p, fake_func(p, "foo"));
    /* main: 0x1000 once, 0x1004/0x1008/0x100c twice, 0x1010 once. foo: 3 then 4. */
    assert_int_equal(m->self, 8);
    assert_int_equal(f->self, 7);
    assert_int_equal(m->inclusive, 15);
    assert_int_equal(f->inclusive, 7);
    assert_int_equal(f->entries, 2);
    uint64_t calls, incl;
    fake_call(p, "main", "foo", &calls, &incl);
    assert_int_equal(calls, 2);
    assert_int_equal(incl, 7);
    /* Blocks: 0x1000 (1), 0x1004 (2), 0x1008-0x100c (2), 0x1010 (1), 0x2000-0x2002 (2),
     * 0x2006 (1), 0x2008 (2). */
    assert_int_equal(tk_profile_block_count(p), 7);
    const tk_prof_block *b = tk_profile_block(p, 2);
    assert_int_equal(b->start, 0x1008);
    assert_int_equal(b->last, 0x100c);
    assert_int_equal(b->ninsn, 2);
    assert_int_equal(b->count, 2);
    /* Taken transfers: two calls, two returns, one loop back, one beqz taken. */
    uint64_t sum = 0;
    for (size_t i = 0; i < tk_profile_edge_count(p); i++)
        sum += tk_profile_edge(p, i)->count;
    assert_int_equal(sum, 6);
    tk_profile_free(p);
}

static void test_interrupt_is_a_trap_call(void **state)
{
    (void)state;
    tk_profile *p = profile_of(run_irq, sizeof(run_irq) / sizeof(run_irq[0]));
    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    assert_int_equal(t.traps, 1);
    assert_int_equal(t.interrupts, 1);
    assert_int_equal(t.unmatched_returns, 0);
    uint64_t calls, incl;
    fake_call(p, "foo", "handler", &calls, &incl);
    assert_int_equal(calls, 1);
    assert_int_equal(incl, 2);
    const tk_prof_func *f = tk_profile_func(p, fake_func(p, "foo"));
    assert_int_equal(f->inclusive, 9); /* its own 7 and the handler's 2 */
    /* After mret foo returned normally to main: main -> foo still pairs up. */
    fake_call(p, "main", "foo", &calls, &incl);
    assert_int_equal(calls, 2);
    assert_int_equal(incl, 9);
    bool trap_edge = false;
    for (size_t i = 0; i < tk_profile_call_count(p); i++)
        if (tk_profile_call(p, i)->trap)
            trap_edge = tk_profile_call(p, i)->site == 0x2008;
    assert_true(trap_edge);
    tk_profile_free(p);
}

static void test_runs_join_fall_through(void **state)
{
    (void)state;
    /* The not-taken bnez at 0x100c falls into 0x1010: one run 0x1008..0x1010 at the end. */
    tk_profile *p = profile_of(run_plain, sizeof(run_plain) / sizeof(run_plain[0]));
    bool found = false;
    uint64_t insns = 0;
    for (size_t i = 0; i < tk_profile_run_count(p); i++) {
        const tk_prof_run *r = tk_profile_run(p, i);
        if (r->start == 0x1008 && r->last == 0x1010)
            found = r->count == 1;
        for (uint64_t a = r->start; a <= r->last; a += fake_find(a)->len)
            insns += r->count;
    }
    assert_true(found);
    assert_int_equal(insns, sizeof(run_plain) / sizeof(run_plain[0]));
    tk_profile_free(p);
}

static void test_opaque_range_and_state(void **state)
{
    (void)state;
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    /* 0x1000..0x1006 is not on an instruction boundary: kept opaque with the decoder's
     * count, not walked. */
    tk_event ev = {.kind = TK_EV_RANGE, .first = 0x1000, .last = 0x1006, .ninsn = 2};
    assert_int_equal(tk_profile_event(p, &ev), TK_OK);
    tk_event far = {.kind = TK_EV_RANGE, .first = 0x9000, .last = 0x9004, .ninsn = 2};
    assert_int_equal(tk_profile_event(p, &far), TK_OK);
    assert_int_equal(tk_profile_finish(p), TK_OK);
    assert_int_equal(tk_profile_event(p, &ev), TK_ERR_STATE);
    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    assert_int_equal(t.bad_ranges, 2);
    assert_int_equal(t.insns, 4);
    assert_int_equal(tk_profile_insn_count(p), 0);
    assert_int_equal(tk_profile_func(p, fake_func(p, "main"))->self, 2);
    assert_int_equal(tk_profile_func(p, fake_func(p, "[unknown]"))->self, 2);
    tk_profile_free(p);
}

/* Regression (timer example, hart vs decoded trace): an interrupt right after a branch whose
 * range did not state the outcome; the trap's epc, the next instruction in program order,
 * does. */
static void test_trap_epc_tells_branch_outcome(void **state)
{
    (void)state;
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    const tk_event evs[] = {
        {.kind = TK_EV_RANGE, .first = 0x1008, .last = 0x100c, .end = TK_END_NONE},
        {.kind = TK_EV_TRAP, .first = 0x1004, .interrupt = 1}, /* bnez's target */
        {.kind = TK_EV_RANGE, .first = 0x3000, .last = 0x3004, .end = TK_END_TRAP_RETURN},
        {.kind = TK_EV_RANGE, .first = 0x1004, .last = 0x1004, .end = TK_END_NONE},
        {.kind = TK_EV_RANGE, .first = 0x2002, .last = 0x2002, .end = TK_END_NONE},
        {.kind = TK_EV_TRAP, .first = 0x2006, .interrupt = 1}, /* beqz's fall-through */
        {.kind = TK_EV_RANGE, .first = 0x3000, .last = 0x3004, .end = TK_END_TRAP_RETURN},
        {.kind = TK_EV_RANGE, .first = 0x2000, .last = 0x2002, .end = TK_END_NONE},
        {.kind = TK_EV_TRAP, .first = 0x3000, .interrupt = 1}, /* neither: unknown */
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        assert_int_equal(tk_profile_event(p, &evs[i]), TK_OK);
    assert_int_equal(tk_profile_finish(p), TK_OK);
    assert_int_equal(tk_profile_branch_count(p), 2);
    assert_int_equal(tk_profile_branch(p, 0)->addr, 0x100c);
    assert_int_equal(tk_profile_branch(p, 0)->taken, 1);
    assert_int_equal(tk_profile_branch(p, 0)->not_taken, 0);
    assert_int_equal(tk_profile_branch(p, 1)->addr, 0x2002);
    assert_int_equal(tk_profile_branch(p, 1)->taken, 0);
    assert_int_equal(tk_profile_branch(p, 1)->not_taken, 1);
    tk_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_match_pc_sequence),
        cmocka_unit_test(test_call_graph_by_hand),
        cmocka_unit_test(test_interrupt_is_a_trap_call),
        cmocka_unit_test(test_runs_join_fall_through),
        cmocka_unit_test(test_opaque_range_and_state),
        cmocka_unit_test(test_trap_epc_tells_branch_outcome),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
