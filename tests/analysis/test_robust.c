/* SPDX-License-Identifier: BSD-2-Clause */
/* Garbage in: random event streams (ranges that fit the code, that do not, reversed, out of
 * the image; every event kind and end kind in any order) must never crash or hang the
 * collector or the writers, and the profile's books must still balance. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "fake_code.h"

static uint64_t pick_addr(uint64_t *s)
{
    size_t n = sizeof(fake_insns) / sizeof(fake_insns[0]);
    switch (tk_test_xorshift64star(s) % 4) {
    case 0:
        return tk_test_xorshift64star(s) % 0x5000; /* anywhere, mostly no code */
    default:
        return fake_insns[tk_test_xorshift64star(s) % n].addr;
    }
}

static void run_stream(uint64_t seed, size_t nevents)
{
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    uint64_t s = seed;
    for (size_t i = 0; i < nevents; i++) {
        tk_event ev = {0};
        uint64_t k = tk_test_xorshift64star(&s) % 16;
        ev.kind = k < 10 ? TK_EV_RANGE : (uint16_t)(k - 8); /* TRAP..TIMESTAMP, and junk */
        ev.first = pick_addr(&s);
        ev.last = tk_test_xorshift64star(&s) % 8 ? pick_addr(&s) : ev.first;
        ev.ninsn = tk_test_xorshift64star(&s) % 5;
        ev.end = (uint8_t)(tk_test_xorshift64star(&s) % 10);
        ev.taken = tk_test_xorshift64star(&s) & 1;
        ev.interrupt = tk_test_xorshift64star(&s) & 1;
        ev.context = tk_test_xorshift64star(&s) % 3;
        ev.next = pick_addr(&s);
        ev.message = "random";
        assert_int_equal(tk_profile_event(p, &ev), TK_OK);
    }
    assert_int_equal(tk_profile_finish(p), TK_OK);

    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    uint64_t self = 0, ctx = 0, insn = 0;
    for (size_t i = 0; i < tk_profile_func_count(p); i++) {
        const tk_prof_func *f = tk_profile_func(p, i);
        self += f->self;
        assert_true(f->inclusive >= f->self);
        assert_true(f->inclusive <= t.insns);
    }
    for (size_t i = 0; i < tk_profile_ctx_count(p); i++)
        ctx += tk_profile_ctx(p, i)->self;
    for (size_t i = 0; i < tk_profile_insn_count(p); i++)
        insn += tk_profile_insn(p, i)->count;
    assert_int_equal(self, t.insns);
    assert_int_equal(ctx, t.insns);
    assert_true(insn <= t.insns); /* opaque ranges are not per instruction */
    for (size_t i = 0; i < tk_profile_call_count(p); i++)
        assert_true(tk_profile_call(p, i)->inclusive <= t.insns);

    tk_line_table *lt = fake_lines("/nonexistent/prog.c");
    assert_non_null(lt);
    tk_write_options o;
    tk_write_options_init(&o);
    o.lines = lt;
    FILE *null = fopen("/dev/null", "w");
    assert_non_null(null);
    assert_int_equal(tk_profile_write_callgrind(p, null, &o), TK_OK);
    assert_int_equal(tk_profile_write_folded(p, null, &o), TK_OK);
    assert_int_equal(tk_profile_write_llvm_sample(p, null, &o), TK_OK);
    assert_int_equal(tk_profile_write_autofdo(p, null, &o), TK_OK);
    assert_int_equal(tk_profile_write_bolt(p, null, &o), TK_OK);
    assert_int_equal(tk_profile_write_json(p, null, &o), TK_OK);
    assert_int_equal(tk_profile_write_report(p, null, &o), TK_OK);
    assert_int_equal(tk_coverage_write_lcov(p, null, &o), TK_OK);
    fclose(null);
    tk_line_table_free(lt);
    tk_profile_free(p);
}

static void test_random_streams(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++)
        run_stream(seed * 0x9e3779b97f4a7c15ull, 5000);
}

/* Long call chains without returns hit the depth limit instead of growing without bound. */
static void test_runaway_calls(void **state)
{
    (void)state;
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    tk_event ev = {.kind = TK_EV_RANGE, .first = 0x1004, .last = 0x1004, .end = TK_END_CALL};
    for (int i = 0; i < 20000; i++)
        assert_int_equal(tk_profile_event(p, &ev), TK_OK);
    assert_int_equal(tk_profile_finish(p), TK_OK);
    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    assert_true(t.max_depth <= 8192);
    assert_int_equal(t.insns, 20000);
    tk_profile_free(p);
}

/* Line table edge cases: lookups outside every sequence, end rows, empty table. */
static void test_line_table_edges(void **state)
{
    (void)state;
    tk_line_table *lt = fake_lines("a.c");
    const char *file;
    unsigned line;
    assert_int_equal(tk_line_table_lookup(lt, 0x0fff, &file, &line), TK_END);
    assert_int_equal(tk_line_table_lookup(lt, 0x1014, &file, &line), TK_END);
    assert_int_equal(tk_line_table_lookup(lt, 0x100e, &file, &line), TK_OK);
    assert_int_equal(line, 13);
    assert_int_equal(tk_line_table_lookup(lt, 0x5000, &file, &line), TK_END);
    assert_null(tk_line_table_func(lt, 0x1014));
    assert_string_equal(tk_line_table_func(lt, 0x2008)->name, "foo");
    assert_int_equal(tk_line_table_line_count(lt), 11);
    tk_line_table_free(lt);
    assert_int_equal(tk_line_table_new(&lt), TK_OK);
    assert_int_equal(tk_line_table_lookup(lt, 0, &file, &line), TK_END);
    assert_int_equal(tk_line_table_line_count(lt), 0);
    assert_int_equal(tk_line_table_add(lt, 0, NULL, 1, false), TK_ERR_INVALID);
    tk_line_table_free(lt);
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_line_table_open_elf("/nonexistent.elf", &lt, &d), TK_ERR_IO);
    assert_int_equal(tk_line_table_open_elf("/dev/null", &lt, &d), TK_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_streams),
        cmocka_unit_test(test_runaway_calls),
        cmocka_unit_test(test_line_table_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
