/* SPDX-License-Identifier: BSD-2-Clause */
/* The mode state machines shared by encoder and decoder (etrace/modes.h), checked against
 * the rules of branchTrace.adoc and payload.adoc one by one. */
#include <string.h>

#include "etrace/modes.h"
#include "testutil.h"
#include "tracekit/te_packet.h"

/* branchTrace.adoc "Branch prediction mode": the four states and their transitions. */
static void test_bpred_transitions(void **state)
{
    (void)state;
    /* {state, outcome taken, next state} straight from the spec's list */
    static const unsigned rules[][3] = {
        {0, 0, 0}, {0, 1, 1}, /* 00: predict not taken, 01 if it fails */
        {1, 0, 0}, {1, 1, 3}, /* 01: 00 if it succeeds, else 11 */
        {3, 1, 3}, {3, 0, 2}, /* 11: predict taken, 10 if it fails */
        {2, 1, 3}, {2, 0, 0}, /* 10: 11 if it succeeds, else 00 */
    };
    tk_te_bpred b;
    assert_int_equal(tk_te_bpred_init(&b, 4, true), TK_OK);
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        const uint64_t pc = 0x80000000u + 2u * 5u; /* entry 5 */
        b.state[5] = (uint8_t)rules[i][0];
        const bool predicted = tk_te_bpred_predict(&b, pc);
        assert_int_equal(predicted, rules[i][0] >> 1);
        const bool ok = tk_te_bpred_update(&b, pc, rules[i][1] != 0);
        assert_int_equal(ok, predicted == (rules[i][1] != 0));
        assert_int_equal(b.state[5], rules[i][2]);
    }
    /* entries are indexed by address bits size:1 and start (and restart) at 01 */
    tk_te_bpred_reset(&b);
    for (unsigned i = 0; i < 16; i++)
        assert_int_equal(b.state[i], 1);
    assert_false(tk_te_bpred_predict(&b, 0x1000));
    tk_te_bpred_update(&b, 0x1000 + 2 * 3, true);
    tk_te_bpred_update(&b, 0x1000 + 2 * 3 + 32, true); /* aliases entry 3 */
    assert_true(tk_te_bpred_predict(&b, 0x1006));
    assert_false(tk_te_bpred_predict(&b, 0x1008));
    tk_te_bpred_free(&b);
    /* without the C extension the index starts at bit 2 */
    assert_int_equal(tk_te_bpred_init(&b, 2, false), TK_OK);
    tk_te_bpred_update(&b, 0x4, true);
    tk_te_bpred_update(&b, 0x4, true);
    assert_true(tk_te_bpred_predict(&b, 0x4));
    assert_true(tk_te_bpred_predict(&b, 0x4 + 16));
    assert_false(tk_te_bpred_predict(&b, 0x8));
    tk_te_bpred_free(&b);
}

static void params_ir(tk_te_params *p, unsigned rss, unsigned ccs)
{
    tk_te_params_init(p);
    p->s.return_stack_size = rss;
    p->s.call_counter_size = ccs;
}

/* Stack mode: 2^n predictions, the oldest lost on overflow, implicit only on a match. */
static void test_return_stack(void **state)
{
    (void)state;
    tk_te_params p;
    params_ir(&p, 2, 0);
    tk_te_irstack s;
    assert_int_equal(tk_te_irstack_init(&s, &p), TK_OK);
    assert_int_equal(s.cap, 4);
    assert_false(s.counter);
    assert_false(tk_te_irstack_predicts(&s, 0x10)); /* empty: explicit */
    for (uint64_t a = 1; a <= 6; a++)
        tk_te_irstack_push(&s, a * 0x10);
    assert_int_equal(s.depth, 4); /* 0x10 and 0x20 were dropped */
    for (uint64_t a = 6; a >= 3; a--) {
        assert_true(tk_te_irstack_predicts(&s, a * 0x10));
        assert_false(tk_te_irstack_predicts(&s, a * 0x10 + 2));
        tk_te_irstack_pop(&s);
    }
    assert_int_equal(s.depth, 0);
    assert_false(tk_te_irstack_predicts(&s, 0x20));
    tk_te_irstack_pop(&s); /* no underflow */
    assert_int_equal(s.depth, 0);
    tk_te_irstack_push(&s, 0x40);
    tk_te_irstack_reset(&s);
    assert_int_equal(s.depth, 0);
    tk_te_irstack_free(&s);
    params_ir(&p, 17, 0);
    assert_int_equal(tk_te_irstack_init(&s, &p), TK_ERR_CONFIG);
}

/* Counter mode: at most 2^n - 1 calls counted, any return implicit while non-zero. */
static void test_call_counter(void **state)
{
    (void)state;
    tk_te_params p;
    params_ir(&p, 0, 2);
    tk_te_irstack s;
    assert_int_equal(tk_te_irstack_init(&s, &p), TK_OK);
    assert_true(s.counter);
    assert_int_equal(s.cap, 3);
    for (uint64_t a = 1; a <= 5; a++)
        tk_te_irstack_push(&s, a * 0x10);
    assert_int_equal(s.depth, 3);                    /* saturated, not wrapped */
    assert_true(tk_te_irstack_predicts(&s, 0x1234)); /* the target is not checked */
    /* the decoder still needs the addresses: the newest three calls are kept, as returns
     * come back newest first */
    assert_int_equal(tk_te_irstack_top(&s), 0x50);
    tk_te_irstack_pop(&s);
    tk_te_irstack_pop(&s);
    tk_te_irstack_pop(&s);
    assert_false(tk_te_irstack_predicts(&s, 0x20)); /* the 4th return is reported */
    tk_te_irstack_free(&s);
    /* neither size: no tracker, every return explicit */
    params_ir(&p, 0, 0);
    assert_int_equal(tk_te_irstack_init(&s, &p), TK_OK);
    tk_te_irstack_push(&s, 0x10);
    assert_false(tk_te_irstack_predicts(&s, 0x10));
    assert_false(tk_te_irstack_must_report(&s, true));
    tk_te_irstack_free(&s);
}

/* payload.adoc "Format 2 irreport and irdepth": when the depth goes with a packet. */
static void test_irreport_rules(void **state)
{
    (void)state;
    tk_te_params p;
    params_ir(&p, 3, 0);
    tk_te_irstack s;
    assert_int_equal(tk_te_irstack_init(&s, &p), TK_OK);
    /* following a predicted return: report if the depth is non-zero */
    tk_te_irstack_push(&s, 0x10);
    tk_te_irstack_push(&s, 0x20);
    tk_te_irstack_pop(&s);
    assert_true(tk_te_irstack_must_report(&s, true));
    tk_te_irstack_pop(&s);
    assert_false(tk_te_irstack_must_report(&s, true));
    /* elsewhere: report unless no return since the last call ... */
    tk_te_irstack_push(&s, 0x10);
    assert_false(tk_te_irstack_must_report(&s, false));
    /* ... or a branch since the last return */
    tk_te_irstack_push(&s, 0x20);
    tk_te_irstack_pop(&s);
    assert_true(tk_te_irstack_must_report(&s, false));
    tk_te_irstack_note_branch(&s);
    assert_false(tk_te_irstack_must_report(&s, false));
    /* irdepth width: 2.0 has one more bit than the stack size, 0.029 does not */
    assert_int_equal(tk_te_irdepth_bits(&p), 4);
    for (int i = 0; i < 8; i++)
        tk_te_irstack_push(&s, 0x100u + (unsigned)i);
    assert_int_equal(s.depth, 8);
    assert_true(tk_te_irdepth_matches(&s, &p, 8));
    p.spec = TK_TE_SPEC_0_29;
    assert_int_equal(tk_te_irdepth_bits(&p), 3);
    assert_true(tk_te_irdepth_matches(&s, &p, 0)); /* 8 modulo 2^3 */
    tk_te_irstack_free(&s);
}

/* branchTrace.adoc "Jump target cache mode": direct mapped on target bits size:1. */
static void test_jtc(void **state)
{
    (void)state;
    tk_te_jtc c;
    uint32_t idx;
    uint64_t t;
    assert_int_equal(tk_te_jtc_init(&c, 3, true), TK_OK);
    assert_false(tk_te_jtc_lookup(&c, 0x8000, &idx)); /* all invalid at start */
    assert_false(tk_te_jtc_get(&c, 0, &t));
    tk_te_jtc_insert(&c, 0x8006);
    assert_true(tk_te_jtc_lookup(&c, 0x8006, &idx));
    assert_int_equal(idx, 3);
    assert_true(tk_te_jtc_get(&c, 3, &t));
    assert_int_equal(t, 0x8006);
    /* same index, other address: a miss, and inserting replaces */
    assert_false(tk_te_jtc_lookup(&c, 0x8016, &idx));
    tk_te_jtc_insert(&c, 0x8016);
    assert_false(tk_te_jtc_lookup(&c, 0x8006, &idx));
    assert_true(tk_te_jtc_get(&c, 3, &t));
    assert_int_equal(t, 0x8016);
    assert_false(tk_te_jtc_get(&c, 8, &t)); /* out of range */
    tk_te_jtc_reset(&c);
    assert_false(tk_te_jtc_get(&c, 3, &t));
    tk_te_jtc_free(&c);
    assert_int_equal(tk_te_jtc_init(&c, 2, false), TK_OK);
    tk_te_jtc_insert(&c, 0x8);
    assert_true(tk_te_jtc_lookup(&c, 0x8, &idx));
    assert_int_equal(idx, 2);
    tk_te_jtc_free(&c);
}

/* A 2.0 packet through a draft's layout and back (bytes in between) is the same packet. */
static void spec_trip(tk_te_params *p, const tk_te_packet *logical, bool full_in_026)
{
    tk_te_packet wire, back, again;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_te_packet_to_spec(p, logical, &wire), TK_OK);
    assert_int_equal(tk_te_packet_encode(p, &wire, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(tk_te_packet_decode(p, buf, len, &back, &diag), TK_OK);
    bool full;
    assert_int_equal(tk_te_packet_from_spec(p, &back, &again, &full), TK_OK);
    assert_int_equal(again.format, logical->format);
    assert_int_equal(again.subformat, logical->subformat);
    assert_int_equal(again.has_address, logical->has_address);
    if (logical->has_address)
        assert_int_equal(again.address, logical->address);
    if (logical->format == TK_TE_F0 && logical->subformat == TK_TE_F0_BRANCH_COUNT) {
        assert_int_equal(again.branch_count, logical->branch_count);
        assert_int_equal(again.branch_fmt, logical->branch_fmt);
    }
    if (logical->format == TK_TE_F1) {
        assert_int_equal(again.branches, logical->branches);
        assert_int_equal(again.branch_map, logical->branch_map);
    }
    if (p->spec == TK_TE_SPEC_0_26)
        assert_int_equal(full, full_in_026);
}

static void test_draft_mapping(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    p.spec = TK_TE_SPEC_0_29;
    p.s.bpred_size = 4;
    p.o.branch_prediction = true;
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    k.format = TK_TE_F0;
    k.subformat = TK_TE_F0_BRANCH_COUNT;
    k.branch_count = 1234;
    for (unsigned fmt = 0; fmt < 4; fmt++) {
        if (fmt == 1)
            continue;
        k.branch_fmt = (uint8_t)fmt;
        k.has_address = fmt != 0;
        k.address = fmt ? 0x40 : 0;
        spec_trip(&p, &k, false);
    }
    /* 0.029 carries the count in format 1 */
    tk_te_packet w;
    k.branch_fmt = 3;
    assert_int_equal(tk_te_packet_to_spec(&p, &k, &w), TK_OK);
    assert_int_equal(w.format, TK_TE_F1);
    assert_int_equal(w.branch_fmt, 2);
    assert_int_equal(w.bpsuccess, 0);
    /* no thaddr=0 trap before 2.0 */
    tk_te_packet t;
    memset(&t, 0, sizeof(t));
    t.format = TK_TE_F3;
    t.subformat = TK_TE_SF_TRAP;
    assert_int_equal(tk_te_packet_to_spec(&p, &t, &w), TK_ERR_UNSUPPORTED);

    /* 0.026: full-delta and diff-delta */
    tk_te_params_init(&p);
    p.spec = TK_TE_SPEC_0_26;
    tk_te_packet m;
    memset(&m, 0, sizeof(m));
    m.format = TK_TE_F1;
    m.branches = 5;
    m.branch_map = 0x15;
    m.has_address = true;
    m.address = 0x1234;
    spec_trip(&p, &m, false);
    p.o.full_address = true;
    assert_int_equal(tk_te_packet_to_spec(&p, &m, &w), TK_OK);
    assert_int_equal(w.format, TK_TE_F0);
    spec_trip(&p, &m, true);
    k.branch_fmt = 2;
    assert_int_equal(tk_te_packet_to_spec(&p, &k, &w), TK_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bpred_transitions),
        cmocka_unit_test(test_return_stack),
        cmocka_unit_test(test_call_counter),
        cmocka_unit_test(test_irreport_rules),
        cmocka_unit_test(test_jtc),
        cmocka_unit_test(test_draft_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
