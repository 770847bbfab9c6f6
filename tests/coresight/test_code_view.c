/* SPDX-License-Identifier: BSD-2-Clause */
/* The analysis code view over memory images (cs_code.h): instruction facts from the Arm
 * classifier, functions inferred from calls and exceptions, and a profile built on it. */
#include "testutil.h"

#include <string.h>

#include "tracekit/cs_code.h"

/* A64 at 0x1000 (encodings as in test_arm_branch.c):
 *   1000 nop; 1004 bl 0x1024; 1008 b.ne 0x1010; 100c ret; 1010 nop; 1014 ret;
 *   1018 nop; 101c nop; 1020 nop; 1024 ret; 1028..103c nop */
static const uint32_t code[16] = {
    0xd503201f, 0x94000008, 0x54000041, 0xd65f03c0, 0xd503201f, 0xd65f03c0, 0xd503201f, 0xd503201f,
    0xd503201f, 0xd65f03c0, 0xd503201f, 0xd503201f, 0xd503201f, 0xd503201f, 0xd503201f, 0xd503201f};

typedef struct fixture {
    tk_cs_mem *mem;
    tk_cs_code *code;
    tk_code_view view;
} fixture;

static void setup(fixture *f)
{
    uint8_t bytes[sizeof(code)];
    for (size_t i = 0; i < 16; i++) /* little-endian, whatever the host */
        for (size_t k = 0; k < 4; k++)
            bytes[4 * i + k] = (uint8_t)(code[i] >> (8 * k));
    assert_int_equal(tk_cs_mem_new(&f->mem), TK_OK);
    assert_int_equal(tk_cs_mem_add(f->mem, 0x1000, bytes, sizeof(bytes)), TK_OK);
    assert_int_equal(tk_cs_code_new(&f->code), TK_OK);
    assert_int_equal(tk_cs_code_set_mem(f->code, f->mem, 0), TK_OK);
    tk_cs_code_view(f->code, &f->view);
}

static void teardown(fixture *f)
{
    tk_cs_code_free(f->code);
    tk_cs_mem_free(f->mem);
}

static tk_event range(uint64_t first, uint64_t last, uint8_t end, uint8_t taken)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_RANGE;
    ev.first = first;
    ev.last = last;
    ev.ninsn = (last - first) / 4 + 1;
    ev.end = end;
    ev.taken = taken;
    return ev;
}

static tk_event simple(tk_event_kind kind)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    return ev;
}

static void test_insn_facts(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    tk_code_insn in;
    assert_int_equal(f.view.insn(f.view.ctx, 0x1000, &in), TK_OK);
    assert_int_equal(in.len, 4);
    assert_false(in.cond_branch);
    assert_int_equal(in.target, 0);
    assert_int_equal(f.view.insn(f.view.ctx, 0x1004, &in), TK_OK); /* bl: direct, not cond */
    assert_false(in.cond_branch);
    assert_int_equal(in.target, 0x1024);
    assert_int_equal(f.view.insn(f.view.ctx, 0x1008, &in), TK_OK); /* b.ne */
    assert_true(in.cond_branch);
    assert_int_equal(in.target, 0x1010);
    assert_int_equal(f.view.insn(f.view.ctx, 0x100c, &in), TK_OK); /* ret: no static target */
    assert_int_equal(in.target, 0);
    assert_int_equal(f.view.insn(f.view.ctx, 0x1040, &in), TK_ERR_NO_CODE);
    assert_int_equal(f.view.insn(f.view.ctx, 0xffe, &in), TK_ERR_NO_CODE);
    assert_int_equal(tk_cs_code_set_mem(f.code, f.mem, 3), TK_ERR_INVALID);
    teardown(&f);
}

/* Call targets and exception handlers become functions; a range after lost trace does not. */
static void test_learned_functions(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    const tk_event evs[] = {
        range(0x1000, 0x1004, TK_END_CALL, 1),
        range(0x1024, 0x1024, TK_END_RETURN, 1),
        simple(TK_EV_TIMESTAMP),
        range(0x1008, 0x1008, TK_END_BRANCH, 1),
        simple(TK_EV_TRAP),
        range(0x1010, 0x1014, TK_END_RETURN, 1),
        range(0x1000, 0x1004, TK_END_CALL, 1),
        simple(TK_EV_LOST),
        range(0x1018, 0x1024, TK_END_RETURN, 1),
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        assert_int_equal(tk_cs_code_learn(f.code, &evs[i]), TK_OK);
    assert_int_equal(tk_cs_code_entry_count(f.code), 2); /* 0x1024 and 0x1010 */
    assert_int_equal(tk_cs_code_add_entry(f.code, 0x1000), TK_OK);
    assert_int_equal(tk_cs_code_entry_count(f.code), 3);

    uint64_t off = 99;
    const tk_symbol *s = f.view.symbolize(f.view.ctx, 0x1004, &off);
    assert_non_null(s);
    assert_string_equal(s->name, "sub_1000");
    assert_int_equal(off, 4);
    assert_int_equal(s->size, 0x10); /* up to the next entry */
    s = f.view.symbolize(f.view.ctx, 0x1020, &off);
    assert_string_equal(s->name, "sub_1010");
    assert_int_equal(off, 0x10);
    s = f.view.symbolize(f.view.ctx, 0x103c, &off);
    assert_string_equal(s->name, "sub_1024");
    assert_int_equal(s->size, 0x1c); /* the last one: up to the end of its memory */
    assert_null(f.view.symbolize(f.view.ctx, 0x1040, &off));
    assert_null(f.view.symbolize(f.view.ctx, 0xffc, &off));
    /* back to an earlier function after the lookup cache moved on */
    s = f.view.symbolize(f.view.ctx, 0x1000, &off);
    assert_string_equal(s->name, "sub_1000");
    assert_int_equal(off, 0);
    teardown(&f);
}

/* A profile over the view: self counts per inferred function and the call edge. */
static void test_profile_on_view(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    const tk_event evs[] = {
        range(0x1000, 0x1004, TK_END_CALL, 1),
        range(0x1024, 0x1024, TK_END_RETURN, 1),
        range(0x1008, 0x1008, TK_END_BRANCH, 0),
        range(0x100c, 0x100c, TK_END_RETURN, 1),
    };
    const size_t n = sizeof(evs) / sizeof(evs[0]);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tk_cs_code_learn(f.code, &evs[i]), TK_OK);
    assert_int_equal(tk_cs_code_add_entry(f.code, 0x1000), TK_OK);
    tk_profile *p;
    assert_int_equal(tk_profile_new(&f.view, &p), TK_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tk_profile_event(p, &evs[i]), TK_OK);
    assert_int_equal(tk_profile_finish(p), TK_OK);
    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    assert_int_equal(t.insns, 5);
    assert_int_equal(t.bad_ranges, 0);
    uint64_t self_main = 0, self_leaf = 0, entries_leaf = 0;
    for (size_t i = 0; i < tk_profile_func_count(p); i++) {
        const tk_prof_func *fn = tk_profile_func(p, i);
        if (!strcmp(fn->name, "sub_1000"))
            self_main = fn->self;
        if (!strcmp(fn->name, "sub_1024")) {
            self_leaf = fn->self;
            entries_leaf = fn->entries;
        }
    }
    assert_int_equal(self_main, 4);
    assert_int_equal(self_leaf, 1);
    assert_int_equal(entries_leaf, 1);
    assert_int_equal(tk_profile_call_count(p), 1);
    /* the conditional branch at 0x1008 ran once, not taken */
    size_t b = 0;
    for (; b < tk_profile_branch_count(p) && tk_profile_branch(p, b)->addr != 0x1008; b++)
        ;
    assert_true(b < tk_profile_branch_count(p));
    assert_int_equal(tk_profile_branch(p, b)->not_taken, 1);
    assert_int_equal(tk_profile_branch(p, b)->taken, 0);
    tk_profile_free(p);
    teardown(&f);
}

/* A32 and T32 interworking: the code view walks each range in the instruction set the flow
 * ran it in (the first range's outside the others). */
static void test_mixed_instruction_sets(void **state)
{
    (void)state;
    /* 0x2000: A32 nop, nop, bx lr; 0x3000: T32 nop (16-bit), nop, bl (32-bit), bx lr */
    static const uint8_t a32[12] = {0x00, 0xf0, 0x20, 0xe3, 0x00, 0xf0,
                                    0x20, 0xe3, 0x1e, 0xff, 0x2f, 0xe1};
    static const uint8_t t32[10] = {0x00, 0xbf, 0x00, 0xbf, 0x00, 0xf0, 0x00, 0xf8, 0x70, 0x47};
    tk_cs_mem *mem;
    tk_cs_code *view_state;
    assert_int_equal(tk_cs_mem_new(&mem), TK_OK);
    assert_int_equal(tk_cs_mem_add(mem, 0x2000, a32, sizeof(a32)), TK_OK);
    assert_int_equal(tk_cs_mem_add(mem, 0x3000, t32, sizeof(t32)), TK_OK);
    assert_int_equal(tk_cs_code_new(&view_state), TK_OK);
    tk_event ev = range(0x2000, 0x2004, TK_END_CALL, 1);
    ev.isa = 1; /* A32 first: the default */
    assert_int_equal(tk_cs_code_learn(view_state, &ev), TK_OK);
    ev = range(0x3000, 0x3004, TK_END_CALL, 1);
    ev.isa = 2;
    assert_int_equal(tk_cs_code_learn(view_state, &ev), TK_OK);
    ev = range(0x3008, 0x3008, TK_END_RETURN, 1);
    ev.isa = 2;
    assert_int_equal(tk_cs_code_learn(view_state, &ev), TK_OK);
    assert_int_equal(tk_cs_code_set_mem(view_state, mem, 1), TK_OK);
    tk_code_view view;
    tk_cs_code_view(view_state, &view);
    tk_code_insn in;
    assert_int_equal(view.insn(view.ctx, 0x2000, &in), TK_OK);
    assert_int_equal(in.len, 4);
    assert_int_equal(view.insn(view.ctx, 0x3000, &in), TK_OK);
    assert_int_equal(in.len, 2); /* T32 nop */
    assert_int_equal(view.insn(view.ctx, 0x3004, &in), TK_OK);
    assert_int_equal(in.len, 4); /* T32 bl */
    assert_int_equal(view.insn(view.ctx, 0x3008, &in), TK_OK);
    assert_int_equal(in.len, 2); /* T32 bx lr */
    assert_int_equal(view.insn(view.ctx, 0x2008, &in), TK_OK);
    assert_int_equal(in.len, 4); /* A32 bx lr */
    tk_cs_code_free(view_state);
    tk_cs_mem_free(mem);
}

/* Pieces of a trace learned apart and joined in order (tk_cs_code_learn_after) make the
 * functions the whole trace learned at once makes: random streams of calls, branches, traps,
 * lost trace, timestamps and context changes, cut in two at every event and in three at
 * pairs of events, so that a piece starts with every kind of event, or has no range at all. */
static tk_event random_event(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t r = *seed >> 33;
    static const tk_event_kind others[] = {TK_EV_TRAP, TK_EV_LOST, TK_EV_TIMESTAMP, TK_EV_CONTEXT,
                                           TK_EV_SYNC};
    const uint64_t first = 0x1000 + 4 * (r % 64);
    switch ((r >> 8) % 8) {
    case 0:
    case 1:
    case 2:
        return range(first, first + 8, TK_END_CALL, 1);
    case 3:
    case 4:
        return range(first, first + 4, TK_END_BRANCH, (uint8_t)(r >> 12) & 1);
    default:
        return simple(others[(r >> 16) % 5]);
    }
}

/* The entries as a bit per candidate address (every range starts at one of 64). */
static uint64_t entry_set(tk_cs_code *c)
{
    tk_code_view v;
    tk_cs_code_view(c, &v);
    uint64_t set = 0, off;
    for (unsigned k = 0; k < 64; k++)
        if (v.symbolize(v.ctx, 0x1000 + 4 * k, &off))
            set |= 1ull << k;
    return set;
}

static tk_cs_code *learned(const tk_event *evs, size_t from, size_t to)
{
    tk_cs_code *c;
    assert_int_equal(tk_cs_code_new(&c), TK_OK);
    for (size_t i = from; i < to; i++)
        assert_int_equal(tk_cs_code_learn(c, &evs[i]), TK_OK);
    return c;
}

static void test_learned_in_pieces(void **state)
{
    (void)state;
    enum { N = 24 };
    uint64_t seed = 7;
    size_t compared = 0;
    for (unsigned round = 0; round < 300; round++) {
        tk_event evs[N];
        for (size_t i = 0; i < N; i++)
            evs[i] = random_event(&seed);
        tk_cs_code *whole = learned(evs, 0, N);
        const uint64_t want = entry_set(whole);
        tk_cs_code_free(whole);
        for (size_t a = 0; a <= N; a++) {
            for (size_t b = a; b <= N; b += (round % 4 == 0 ? 1 : N + 1)) {
                tk_cs_code *c = learned(evs, 0, a);
                tk_cs_code *p2 = learned(evs, a, b), *p3 = learned(evs, b, N);
                assert_int_equal(tk_cs_code_learn_after(c, p2), TK_OK);
                assert_int_equal(tk_cs_code_learn_after(c, p3), TK_OK);
                if (entry_set(c) != want)
                    fail_msg("round %u, cut at %zu and %zu: entries differ", round, a, b);
                compared++;
                tk_cs_code_free(c);
                tk_cs_code_free(p2);
                tk_cs_code_free(p3);
            }
        }
    }
    assert_true(compared > 10000);
}

/* A piece in another instruction set than the first range's is refused (its code would be a
 * span of its own, learned against the whole trace's): the caller learns it serially. A
 * joined view is not joined into again once looked up in. */
/* A view that learned one call range per instruction set in isas (n of them). */
static tk_cs_code *learned_isas(const uint8_t *isas, size_t n)
{
    tk_cs_code *c;
    assert_int_equal(tk_cs_code_new(&c), TK_OK);
    for (size_t i = 0; i < n; i++) {
        tk_event ev = range(0x2000, 0x2004, TK_END_CALL, 1);
        ev.isa = isas[i];
        assert_int_equal(tk_cs_code_learn(c, &ev), TK_OK);
    }
    return c;
}

static void test_learned_after_refused(void **state)
{
    (void)state;
    static const uint8_t a32[] = {1}, t32[] = {2}, both[] = {1, 2};
    tk_cs_code *a = learned_isas(a32, 1), *b = learned_isas(t32, 1);
    assert_int_equal(tk_cs_code_learn_after(a, b), TK_ERR_UNSUPPORTED);
    tk_cs_code_free(b);
    b = learned_isas(both, 2); /* spans inside the later piece */
    assert_int_equal(tk_cs_code_learn_after(a, b), TK_ERR_UNSUPPORTED);
    tk_cs_code_free(b);
    b = learned_isas(a32, 1);
    (void)entry_set(a);
    assert_int_equal(tk_cs_code_learn_after(a, b), TK_ERR_INVALID);
    assert_int_equal(tk_cs_code_learn_after(NULL, b), TK_ERR_INVALID);
    tk_cs_code_free(a);
    tk_cs_code_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insn_facts),        cmocka_unit_test(test_learned_functions),
        cmocka_unit_test(test_profile_on_view),   cmocka_unit_test(test_mixed_instruction_sets),
        cmocka_unit_test(test_learned_in_pieces), cmocka_unit_test(test_learned_after_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
