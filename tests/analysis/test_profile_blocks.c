/* SPDX-License-Identifier: BSD-2-Clause */
/* TK_EV_BLOCKS into the profile, by hand, over the program of fake_code.h: every script of
 * range events below is fed once as it is and once with each range turned into an entry of
 * a block batch (blocks made here, with ids far apart so the profile's table grows, and a
 * second block object reusing an id, as another image's would). Both profiles must agree
 * in every accessor. The scripts cover what the block fast path leaves to the general
 * one: traps and xRET, lost trace, trace off/on, context changes, ranges that do not match
 * the code, branches whose outcome the event does not state, and recursion. A third profile
 * takes the ranges through the general path only (tk_prof_set_general_only), and random
 * flows over the program (test_random_flows) mix all of it, so that the fast path's
 * successor slots and memos change again and again. */
#include <string.h>

#include <stdlib.h>

#include "analysis/profile_internal.h"
#include "fake_code.h"
#include "fake_blocks.h"
#include "profile_compare.h"
#include "testutil.h"

#define MAX_STEPS 64

typedef struct step {
    uint16_t kind; /* TK_EV_RANGE, or another event kind */
    uint64_t first, last;
    uint8_t end;
    bool taken;
    uint32_t ninsn; /* for ranges that do not match the code */
    uint64_t context;
} step;

#define R(f, l, e, t)                                                                              \
    {                                                                                              \
        TK_EV_RANGE, f, l, e, t, 0, 0                                                              \
    }
#define EV(k)                                                                                      \
    {                                                                                              \
        k, 0, 0, 0, false, 0, 0                                                                    \
    }

/* The blocks made for one script: one per distinct range, ids spread out. */
static tk_event event_of(const step *s)
{
    tk_event ev = {.kind = s->kind,
                   .first = s->first,
                   .last = s->last,
                   .end = s->end,
                   .taken = s->taken,
                   .context = s->context};
    if (s->kind == TK_EV_RANGE) {
        ev.ninsn = s->ninsn ? s->ninsn : fake_count_insns(s->first, s->last);
        ev.next = 0;
    }
    if (s->kind == TK_EV_TRAP) {
        ev.first = s->first; /* epc */
        ev.cause = 2;
    }
    return ev;
}

/* Feed the script twice and compare. batch: entries per batch (1 = a batch per range). */
static void run(const step *script, size_t n, size_t batch)
{
    tk_code_view v = fake_view();
    tk_profile *a = NULL, *b = NULL, *g = NULL;
    assert_int_equal(tk_profile_new(&v, &a), TK_OK);
    assert_int_equal(tk_profile_new(&v, &b), TK_OK);
    assert_int_equal(tk_profile_new(&v, &g), TK_OK);
    tk_prof_set_general_only(g, true);
    fake_blockset set = {.n = 0};
    tk_block_exec e[MAX_STEPS];
    tk_event bt = {.kind = TK_EV_BLOCKS, .blocks = e, .nblocks = 0};
    for (size_t i = 0; i < n; i++) {
        tk_event ev = event_of(&script[i]);
        assert_int_equal(tk_profile_event(a, &ev), TK_OK);
        assert_int_equal(tk_profile_event(g, &ev), TK_OK);
        if (ev.kind != TK_EV_RANGE) {
            if (bt.nblocks) {
                assert_int_equal(tk_profile_event(b, &bt), TK_OK);
                bt.nblocks = 0;
            }
            assert_int_equal(tk_profile_event(b, &ev), TK_OK);
            continue;
        }
        step s = script[i];
        s.ninsn = (uint32_t)ev.ninsn;
        /* Every third range goes as the colliding block of "another image". */
        const tk_bblock *blk = fake_block_of(&set, s.first, s.last, s.ninsn, i % 3 == 2);
        assert_non_null(blk);
        e[bt.nblocks++] = (tk_block_exec){
            .block = blk, .next = 0, .end = ev.end, .taken = ev.taken, .indirect = 0};
        if (bt.nblocks == batch) {
            assert_int_equal(tk_profile_event(b, &bt), TK_OK);
            bt.nblocks = 0;
        }
    }
    if (bt.nblocks)
        assert_int_equal(tk_profile_event(b, &bt), TK_OK);
    /* An empty batch changes nothing. */
    bt.nblocks = 0;
    assert_int_equal(tk_profile_event(b, &bt), TK_OK);
    assert_int_equal(tk_profile_finish(a), TK_OK);
    assert_int_equal(tk_profile_finish(b), TK_OK);
    assert_int_equal(tk_profile_finish(g), TK_OK);
    same_totals(a, b);
    same_tables(a, b);
    same_output(a, b, tk_profile_write_json);
    same_output(a, b, tk_profile_write_autofdo);
    same_totals(a, g);
    same_tables(a, g);
    same_output(a, g, tk_profile_write_json);
    /* After finish, batches are refused like ranges. */
    bt.nblocks = 1;
    assert_int_equal(tk_profile_event(b, &bt), TK_ERR_STATE);
    tk_profile_free(a);
    tk_profile_free(b);
    tk_profile_free(g);
}

static void run_all(const step *script, size_t n)
{
    for (size_t batch = 1; batch <= n; batch++)
        run(script, n, batch);
}

/* main calls foo twice (foo's branch once taken, once not), loops, returns. */
static const step calls[] = {
    R(0x1000, 0x1004, TK_END_CALL, false),   R(0x2000, 0x2002, TK_END_BRANCH, true),
    R(0x2008, 0x2008, TK_END_RETURN, false), R(0x1008, 0x100c, TK_END_BRANCH, true),
    R(0x1004, 0x1004, TK_END_CALL, false),   R(0x2000, 0x2002, TK_END_BRANCH, false),
    R(0x2006, 0x2008, TK_END_RETURN, false), R(0x1008, 0x100c, TK_END_BRANCH, true),
    R(0x1004, 0x1004, TK_END_CALL, false),   R(0x2000, 0x2002, TK_END_BRANCH, true),
    R(0x2008, 0x2008, TK_END_RETURN, false), R(0x1008, 0x100c, TK_END_BRANCH, false),
    R(0x1010, 0x1010, TK_END_RETURN, false),
};

/* A trap into the handler and back, a lost stretch, trace off and on, a context change. */
static const step breaks[] = {
    R(0x1000, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2000, TK_END_TRAP, false),
    {TK_EV_TRAP, 0x2002, 0, 0, false, 0, 0},
    R(0x3000, 0x3004, TK_END_TRAP_RETURN, false),
    R(0x2002, 0x2002, TK_END_BRANCH, false),
    R(0x2006, 0x2008, TK_END_RETURN, false),
    R(0x1008, 0x100c, TK_END_BRANCH, true),
    EV(TK_EV_LOST),
    R(0x1004, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2002, TK_END_BRANCH, true),
    EV(TK_EV_TRACE_OFF),
    EV(TK_EV_TRACE_ON),
    R(0x2008, 0x2008, TK_END_RETURN, false),
    {TK_EV_CONTEXT, 0, 0, 0, false, 0, 7},
    R(0x1008, 0x100c, TK_END_BRANCH, true),
    {TK_EV_CONTEXT, 0, 0, 0, false, 0, 8},
    R(0x1004, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2002, TK_END_BRANCH, true),
    R(0x2008, 0x2008, TK_END_RETURN, false),
    R(0x1008, 0x100c, TK_END_BRANCH, false),
    R(0x1010, 0x1010, TK_END_RETURN, false),
};

/* Ranges that do not match the code (opaque), and branches whose outcome the events leave
 * to the next range (end JUMP, as a decoder that does not state it would say). */
static const step odd[] = {
    R(0x1000, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2002, TK_END_JUMP, false),
    R(0x2008, 0x2008, TK_END_RETURN, false),
    R(0x1008, 0x100c, TK_END_JUMP, false),
    R(0x1004, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2002, TK_END_JUMP, false),
    R(0x2006, 0x2008, TK_END_RETURN, false),
    {TK_EV_RANGE, 0x5000, 0x5010, TK_END_JUMP, false, 5, 0}, /* no code there */
    R(0x1008, 0x100c, TK_END_BRANCH, true),
    {TK_EV_RANGE, 0x1006, 0x100c, TK_END_BRANCH, true, 3, 0}, /* not on an instruction */
    R(0x1004, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2002, TK_END_BRANCH, true),
    R(0x2008, 0x2008, TK_END_RETURN, false),
    R(0x1008, 0x100c, TK_END_BRANCH, false),
    R(0x1010, 0x1010, TK_END_RETURN, false),
};

/* foo "calls" itself (recursion through one call edge), and a return nobody expects. */
static const step recursion[] = {
    R(0x2008, 0x2008, TK_END_RETURN, false), /* starts inside a call */
    R(0x1008, 0x100c, TK_END_BRANCH, true),  R(0x1004, 0x1004, TK_END_CALL, false),
    R(0x2000, 0x2000, TK_END_CALL, false),   R(0x2000, 0x2000, TK_END_CALL, false),
    R(0x2000, 0x2002, TK_END_BRANCH, true),  R(0x2008, 0x2008, TK_END_RETURN, false),
    R(0x2002, 0x2002, TK_END_BRANCH, true),  R(0x2008, 0x2008, TK_END_RETURN, false),
    R(0x2002, 0x2002, TK_END_BRANCH, false), R(0x2006, 0x2008, TK_END_RETURN, false),
    R(0x1008, 0x100c, TK_END_BRANCH, false), R(0x1010, 0x1010, TK_END_RETURN, false),
};

/* A random flow over the program, up to n steps: whole ranges that follow the code with
 * random branch outcomes; returns mostly to their caller, else anywhere; interrupts anywhere
 * but at a control transfer, the handler returning to where it was taken (or anywhere); and
 * now and then a branch whose outcome the event leaves open, a range that does not match
 * the code, lost trace, trace off and on, or a change of context. */
static size_t random_flow(uint64_t seed, step *out, size_t n)
{
    static const uint64_t starts[] = {0x1000, 0x1004, 0x1008, 0x100c, 0x1010, 0x2000, 0x2002,
                                      0x2006, 0x2008, 0x3000, 0x3004, 0x4000, 0x4004, 0x4008};
    const size_t nstarts = sizeof(starts) / sizeof(starts[0]);
    uint64_t rng = seed, rets[8], epcs[4];
    size_t nrets = 0, nepcs = 0, k = 0;
    uint64_t pc = 0x1000;
    while (k + 2 < n) {
        const uint64_t r = tk_test_xorshift64star(&rng);
        const uint64_t pick = starts[(r >> 40) % nstarts];
        if (r % 61 == 0) {
            static const uint16_t kinds[] = {TK_EV_LOST, TK_EV_TRACE_OFF, TK_EV_TRACE_ON,
                                             TK_EV_CONTEXT};
            out[k++] = (step){.kind = kinds[(r >> 8) % 4], .context = 1 + (r >> 16) % 3};
            pc = pick;
            nrets = nepcs = 0;
            continue;
        }
        if (r % 89 == 1) {
            out[k++] = (r >> 8) & 1
                           ? (step){TK_EV_RANGE, 0x5000, 0x5010, TK_END_JUMP, false, 5, 0}
                           : (step){TK_EV_RANGE, 0x1006, 0x100c, TK_END_BRANCH, true, 3, 0};
            pc = pick;
            continue;
        }
        const fake_insn *f = fake_find(pc);
        const uint64_t first = pc;
        /* An interrupt after one of the straight-line instructions, if this draw says so. */
        const bool irq = (r >> 32) % 13 == 0;
        while (f->end == TK_END_NONE && !(irq && (tk_test_xorshift64star(&rng) & 1)))
            f = fake_find(f->addr + f->len);
        const uint64_t fall = f->addr + f->len;
        if (f->end == TK_END_NONE) {
            out[k++] = (step){TK_EV_RANGE, first, f->addr, TK_END_TRAP, false, 0, 0};
            out[k++] = (step){TK_EV_TRAP, fall, 0, 0, false, 0, 0};
            if (nepcs < 4)
                epcs[nepcs++] = fall;
            pc = 0x3000;
            continue;
        }
        step st = {TK_EV_RANGE, first, f->addr, f->end, false, 0, 0};
        switch (f->end) {
        case TK_END_BRANCH:
            st.taken = (r >> 8) & 1;
            pc = st.taken ? f->target : fall;
            if ((r >> 12) % 11 == 0) {
                st.end = TK_END_JUMP; /* the outcome left to the next range */
                st.taken = false;
            }
            break;
        case TK_END_CALL:
            if (nrets < 8)
                rets[nrets++] = fall;
            pc = f->target;
            break;
        case TK_END_RETURN:
            pc = nrets && (r >> 8) % 8 ? rets[--nrets] : pick;
            break;
        default: /* TK_END_TRAP_RETURN */
            pc = nepcs && (r >> 8) % 4 ? epcs[--nepcs] : pick;
            break;
        }
        out[k++] = st;
    }
    return k;
}

/* Twelve random flows of about 3000 steps, in batches of 1 to 64 entries. */
static void test_random_flows(void **state)
{
    (void)state;
    enum { STEPS = 3000 };
    step *script = malloc(STEPS * sizeof(*script));
    assert_non_null(script);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        const size_t n = random_flow(seed * 0x9e3779b97f4a7c15ull, script, STEPS);
        run(script, n, 1 + (size_t)(seed * 7) % MAX_STEPS);
    }
    free(script);
}

static void test_calls(void **state)
{
    (void)state;
    run_all(calls, sizeof(calls) / sizeof(calls[0]));
}

static void test_breaks(void **state)
{
    (void)state;
    run_all(breaks, sizeof(breaks) / sizeof(breaks[0]));
}

static void test_odd_ranges(void **state)
{
    (void)state;
    run_all(odd, sizeof(odd) / sizeof(odd[0]));
}

static void test_recursion(void **state)
{
    (void)state;
    run_all(recursion, sizeof(recursion) / sizeof(recursion[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls),        cmocka_unit_test(test_breaks),
        cmocka_unit_test(test_odd_ranges),   cmocka_unit_test(test_recursion),
        cmocka_unit_test(test_random_flows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
