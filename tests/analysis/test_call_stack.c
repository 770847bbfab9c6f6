/* SPDX-License-Identifier: BSD-2-Clause */
/* The shadow call stack when calls and returns do not pair up: a trace that starts inside a
 * call, longjmp, tail calls, recursion, lost trace. Events are written by hand over the
 * program of fake_code.h (the end kinds are what a decoder would say). */
#include "testutil.h"

#include "analysis/profile_internal.h"
#include "fake_code.h"
#include "profile_compare.h"

typedef struct script {
    tk_profile *p;
} script;

static tk_profile *start(void)
{
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    return p;
}

static void range(tk_profile *p, uint64_t first, uint64_t last, uint8_t end)
{
    tk_event ev = {.kind = TK_EV_RANGE, .first = first, .last = last, .end = end};
    assert_int_equal(tk_profile_event(p, &ev), TK_OK);
}

static void event(tk_profile *p, uint16_t kind)
{
    tk_event ev = {.kind = kind};
    assert_int_equal(tk_profile_event(p, &ev), TK_OK);
}

static tk_profile_totals finish(tk_profile *p)
{
    assert_int_equal(tk_profile_finish(p), TK_OK);
    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    return t;
}

static void test_trace_starts_inside_a_call(void **state)
{
    (void)state;
    tk_profile *p = start();
    range(p, 0x2006, 0x2008, TK_END_RETURN); /* foo's tail, its call was never seen */
    range(p, 0x1008, 0x100c, TK_END_BRANCH);
    tk_profile_totals t = finish(p);
    assert_int_equal(t.unmatched_returns, 1);
    assert_int_equal(tk_profile_call_count(p), 0);
    assert_int_equal(tk_profile_func(p, fake_func(p, "foo"))->self, 2);
    assert_int_equal(tk_profile_func(p, fake_func(p, "main"))->self, 2);
    /* Two roots in the calling-context tree: foo, then main. */
    assert_int_equal(tk_profile_ctx_count(p), 2);
    tk_profile_free(p);
}

static void test_longjmp_pops_to_the_function_jumped_into(void **state)
{
    (void)state;
    tk_profile *p = start();
    range(p, 0x1000, 0x1004, TK_END_CALL);   /* main calls foo */
    range(p, 0x2000, 0x2002, TK_END_JUMP);   /* foo jumps back into main's middle */
    range(p, 0x1008, 0x100c, TK_END_BRANCH); /* ...which pops foo's frame */
    range(p, 0x1004, 0x1004, TK_END_CALL);   /* and main calls foo again */
    range(p, 0x2000, 0x2008, TK_END_RETURN);
    range(p, 0x1008, 0x100c, TK_END_NONE);
    tk_profile_totals t = finish(p);
    assert_int_equal(t.unmatched_returns, 0);
    assert_int_equal(t.max_depth, 2);
    uint64_t calls, incl;
    fake_call(p, "main", "foo", &calls, &incl);
    assert_int_equal(calls, 2);
    assert_int_equal(incl, 2 + 4);
    /* foo was never a caller of main. */
    fake_call(p, "foo", "main", &calls, &incl);
    assert_int_equal(calls, 0);
    tk_profile_free(p);
}

static void test_tail_call_keeps_the_return_address(void **state)
{
    (void)state;
    tk_profile *p = start();
    range(p, 0x1000, 0x1004, TK_END_CALL);   /* main calls foo */
    range(p, 0x2000, 0x2002, TK_END_JUMP);   /* foo tail-calls handler (at its entry) */
    range(p, 0x3000, 0x3004, TK_END_RETURN); /* which returns straight to main */
    range(p, 0x1008, 0x100c, TK_END_NONE);
    tk_profile_totals t = finish(p);
    assert_int_equal(t.unmatched_returns, 0);
    uint64_t calls, incl;
    fake_call(p, "main", "handler", &calls, &incl);
    assert_int_equal(calls, 1);
    assert_int_equal(incl, 2);
    fake_call(p, "main", "foo", &calls, &incl);
    assert_int_equal(calls, 1);
    assert_int_equal(incl, 2);
    assert_int_equal(tk_profile_func(p, fake_func(p, "main"))->inclusive, 8);
    tk_profile_free(p);
}

static void test_recursion_is_counted_once(void **state)
{
    (void)state;
    tk_profile *p = start();
    range(p, 0x1000, 0x1004, TK_END_CALL);   /* main -> foo            2 */
    range(p, 0x2000, 0x2002, TK_END_CALL);   /* foo -> foo             2 */
    range(p, 0x2000, 0x2002, TK_END_CALL);   /* foo -> foo             2 */
    range(p, 0x2000, 0x2008, TK_END_RETURN); /* innermost foo returns  4 (beqz not taken) */
    range(p, 0x2006, 0x2008, TK_END_RETURN); /*                        2 */
    range(p, 0x2006, 0x2008, TK_END_RETURN); /*                        2 */
    range(p, 0x1008, 0x100c, TK_END_NONE);   /* main                   2 */
    tk_profile_totals t = finish(p);
    assert_int_equal(t.unmatched_returns, 0);
    assert_int_equal(t.max_depth, 4);
    const tk_prof_func *f = tk_profile_func(p, fake_func(p, "foo"));
    assert_int_equal(f->self, 12);
    assert_int_equal(f->inclusive, 12);
    assert_int_equal(tk_profile_func(p, fake_func(p, "main"))->inclusive, 16);
    uint64_t calls, incl;
    fake_call(p, "foo", "foo", &calls, &incl);
    assert_int_equal(calls, 2);
    /* The edge's inclusive count is the instructions executed while any call through it was
     * active: the outer foo -> foo call (2 + 4 + 2); the inner call's 4 lie inside it and
     * are not counted twice, as summing per call would (12). */
    assert_int_equal(incl, 4 + 2 + 2);
    fake_call(p, "main", "foo", &calls, &incl);
    assert_int_equal(calls, 1);
    assert_int_equal(incl, 12);
    /* foo's beqz ran 3 times: twice ending a range that the events say was left by a call
     * to 0x2000 (neither its target nor its fall-through: outcome not counted), once inside
     * a range (not taken). main's bnez ended the trace: executed, outcome unknown. */
    assert_int_equal(tk_profile_branch_count(p), 2);
    assert_int_equal(tk_profile_branch(p, 0)->addr, 0x100c);
    assert_int_equal(tk_profile_branch(p, 0)->taken + tk_profile_branch(p, 0)->not_taken, 0);
    assert_int_equal(tk_profile_branch(p, 1)->addr, 0x2002);
    assert_int_equal(tk_profile_branch(p, 1)->taken, 0);
    assert_int_equal(tk_profile_branch(p, 1)->not_taken, 1);
    tk_profile_free(p);
}

static void test_lost_trace_restarts_the_stack(void **state)
{
    (void)state;
    tk_profile *p = start();
    range(p, 0x1000, 0x1004, TK_END_CALL);
    range(p, 0x2000, 0x2002, TK_END_BRANCH);
    event(p, TK_EV_LOST);
    range(p, 0x1008, 0x100c, TK_END_NONE); /* not a return from foo: a fresh root */
    event(p, TK_EV_TRACE_OFF);
    event(p, TK_EV_TRACE_ON);
    range(p, 0x2006, 0x2008, TK_END_NONE);
    tk_profile_totals t = finish(p);
    assert_int_equal(t.lost, 1);
    assert_int_equal(t.stack_resets, 3); /* lost, trace off, and at the end */
    assert_int_equal(t.unmatched_returns, 0);
    /* The outcome of foo's beqz is unknown (trace lost right after): counted in neither. */
    assert_int_equal(tk_profile_branch(p, 0)->taken + tk_profile_branch(p, 0)->not_taken, 0);
    /* No transfer across the gap. */
    for (size_t i = 0; i < tk_profile_edge_count(p); i++)
        assert_int_not_equal(tk_profile_edge(p, i)->to, 0x1008);
    tk_profile_free(p);
}

static void test_xret_without_trap_frame(void **state)
{
    (void)state;
    tk_profile *p = start();
    range(p, 0x3000, 0x3004, TK_END_TRAP_RETURN); /* handler seen without its trap */
    range(p, 0x2008, 0x2008, TK_END_RETURN);
    range(p, 0x1008, 0x100c, TK_END_NONE);
    tk_profile_totals t = finish(p);
    assert_int_equal(t.unmatched_returns, 2);
    assert_int_equal(t.insns, 5);
    tk_profile_free(p);
}

/* Calls, tail transfers and returns that the call stack's memos and inline paths must tell
 * apart, twice over (the second time finds every memo set): the same call site entered from
 * two contexts, one frame replaced by the same function from two call sites and by two
 * functions; then a return to another function than the caller's. */
static tk_profile *memo_script(bool general)
{
    tk_profile *p = start();
    tk_prof_set_general_only(p, general);
    for (int i = 0; i < 2; i++) {
        range(p, 0x1000, 0x1004, TK_END_CALL);   /* main calls foo from 0x1004 */
        range(p, 0x2000, 0x2000, TK_END_JUMP);   /* foo jumps into handler (tail) */
        range(p, 0x3000, 0x3004, TK_END_RETURN); /* which returns to main */
        range(p, 0x1008, 0x1008, TK_END_CALL);   /* main calls foo from 0x1008 */
        range(p, 0x2000, 0x2000, TK_END_JUMP);   /* the same tail, another site */
        range(p, 0x3000, 0x3004, TK_END_RETURN);
        range(p, 0x100c, 0x100c, TK_END_BRANCH); /* not taken */
        range(p, 0x1010, 0x1010, TK_END_JUMP);   /* back to main's start */
        range(p, 0x1000, 0x1004, TK_END_CALL);   /* foo from 0x1004 again */
        range(p, 0x2000, 0x2000, TK_END_JUMP);   /* the same frame, another tail: never */
        range(p, 0x4000, 0x4008, TK_END_RETURN);
        range(p, 0x1008, 0x1008, TK_END_JUMP);
        range(p, 0x1000, 0x1004, TK_END_CALL);   /* foo from 0x1004 */
        range(p, 0x2000, 0x2000, TK_END_CALL);   /* which calls main */
        range(p, 0x1000, 0x1004, TK_END_CALL);   /* the same call site in another context */
        range(p, 0x2000, 0x2008, TK_END_RETURN); /* foo returns to the inner main */
        range(p, 0x1008, 0x100c, TK_END_BRANCH); /* not taken */
        range(p, 0x1010, 0x1010, TK_END_RETURN); /* which returns to foo */
        range(p, 0x2002, 0x2008, TK_END_RETURN); /* which returns to the outer main */
        range(p, 0x1008, 0x100c, TK_END_BRANCH);
        range(p, 0x1010, 0x1010, TK_END_JUMP); /* and starts over */
    }
    /* A return that the top frame expects, into another function than its caller's. */
    range(p, 0x1010, 0x1010, TK_END_CALL);   /* a call as main's last instruction */
    range(p, 0x2000, 0x2008, TK_END_RETURN); /* returns past main, out of every symbol */
    range(p, 0x1014, 0x1014, TK_END_NONE);
    tk_profile_totals t = finish(p);
    assert_int_equal(t.unmatched_returns, 0);
    assert_int_equal(t.stack_resets, 1); /* at finish, main still running */
    return p;
}

static void test_memos_agree_with_hashing(void **state)
{
    (void)state;
    tk_profile *a = memo_script(false), *g = memo_script(true);
    same_totals(a, g);
    same_tables(a, g);
    same_output(a, g, tk_profile_write_callgrind);
    /* Nodes: main, main>foo, main>handler, main>never, main>foo>main, main>foo>main>foo,
     * and the root the stack restarts with out of every symbol. */
    assert_int_equal(tk_profile_ctx_count(g), 7);
    /* Call edges (site, callee): 0x1004 foo, 0x1004 handler, 0x1008 foo, 0x1008 handler,
     * 0x1004 never, 0x2000 main, 0x1010 foo. */
    assert_int_equal(tk_profile_call_count(g), 7);
    tk_profile_free(a);
    tk_profile_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_starts_inside_a_call),
        cmocka_unit_test(test_longjmp_pops_to_the_function_jumped_into),
        cmocka_unit_test(test_tail_call_keeps_the_return_address),
        cmocka_unit_test(test_recursion_is_counted_once),
        cmocka_unit_test(test_lost_trace_restarts_the_stack),
        cmocka_unit_test(test_xret_without_trap_frame),
        cmocka_unit_test(test_memos_agree_with_hashing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
