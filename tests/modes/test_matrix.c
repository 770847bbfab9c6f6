/* SPDX-License-Identifier: BSD-2-Clause */
/* Round trip of every golden program under a matrix of modes, spec layouts, predictor and
 * cache sizes and retirement widths: the decoded PCs must be exactly the executed ones. */
#include "modes_pipe.h"

/* Walks the block-event runs replayed from the decoder's memo (run_combo). */
typedef struct replays {
    uint64_t all, with_jtc;
} replays;

/* The combination with range events and with block events (where the decoder replays walks
 * it remembers: walk_memo.h): the decoded PCs must be exactly the executed ones both times,
 * from the same packets. */
static void run_combo(const mp_prog *g, const mp_combo *c, replays *rp)
{
    mp_setting s;
    mp_make_setting(&s, c);
    char name[160];
    mp_combo_name(c, name, sizeof(name));
    mp_result r, rb;
    mp_roundtrip(g, &s, &r);
    mp_expect_exact(g, name, &s, &r);
    s.dec_flags = TK_TE_DEC_BLOCK_EVENTS;
    mp_roundtrip(g, &s, &rb);
    strncat(name, " (block events)", sizeof(name) - strlen(name) - 1);
    mp_expect_exact(g, name, &s, &rb);
    assert_int_equal(r.packets, rb.packets);
    assert_int_equal(r.replayed, 0);
    if (rp) {
        rp->all += rb.replayed;
        rp->with_jtc += c->jtc ? rb.replayed : 0;
    }
    if (getenv("TK_MATRIX_VERBOSE"))
        print_message("%-28s %-52s %7llu PCs, %6llu packets, %.3f bits/instr, %llu replayed\n",
                      g->name, name, (unsigned long long)r.pcs, (unsigned long long)r.packets,
                      (double)r.payload_bits / (double)r.pcs, (unsigned long long)rb.replayed);
}

static void test_baseline_specs(void **state)
{
    (void)state;
    static const char *const progs[] = {"test_discon_branch_exception", "towers", "median"};
    replays rp = {0};
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        mp_prog g;
        if (!mp_load(&g, progs[i]))
            fail_msg("%s: program or trace missing", progs[i]);
        for (int spec = 0; spec < 3; spec++)
            for (int full = 0; full < 2; full++)
                for (unsigned grp = 0; grp <= 4; grp += 4) {
                    mp_combo c = {.spec = (tk_te_spec)spec, .full = full, .group = grp};
                    run_combo(&g, &c, &rp);
                }
        mp_free(&g);
    }
    assert_true(rp.all > 0);
}

/* Every combination of the optional modes on the small programs. */
static void test_modes_full_matrix(void **state)
{
    (void)state;
    static const char *const progs[] = {"test_discon_branch_exception", "vvadd", "median",
                                        "towers"};
    static const unsigned irs[][2] = {{0, 0}, {2, 0}, {6, 0}, {0, 3}}; /* stack, counter */
    static const unsigned bps[] = {0, 2, 12};
    static const unsigned jtcs[] = {0, 2, 8};
    replays rp = {0};
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        mp_prog g;
        if (!mp_load(&g, progs[i]))
            fail_msg("%s: program or trace missing", progs[i]);
        unsigned n = 0;
        for (int spec = 0; spec < 2; spec++)
            for (size_t a = 0; a < 4; a++)
                for (size_t b = 0; b < 3; b++)
                    for (size_t j = 0; j < 3; j++)
                        for (unsigned grp = 0; grp <= 3; grp += 3) {
                            mp_combo c = {.spec = (tk_te_spec)spec,
                                          .ir = irs[a][0] || irs[a][1],
                                          .rss = irs[a][0],
                                          .ccs = irs[a][1],
                                          .bp = bps[b] != 0,
                                          .bpred = bps[b],
                                          .jtc = jtcs[j] != 0,
                                          .cache = jtcs[j],
                                          .sijump = (a + b + j) % 2 == 1,
                                          .iexc = (a + j) % 2 == 0,
                                          .full = (a + b) % 3 == 2,
                                          .group = grp};
                            run_combo(&g, &c, &rp);
                            n++;
                        }
        print_message("%-28s %u combinations exact\n", progs[i], n);
        mp_free(&g);
    }
    print_message("block events: %llu walks replayed, %llu of them with the jump target cache\n",
                  (unsigned long long)rp.all, (unsigned long long)rp.with_jtc);
    assert_true(rp.with_jtc > 0);
}

/* The big programs: a sample of the combinations (each one spec, sizes and width). */
static void test_modes_sampled(void **state)
{
    (void)state;
    static const char *const progs[] = {"multiply", "spmv", "dhrystone", "qsort", "mm", "rsort"};
    static const mp_combo sample[] = {
        {.spec = TK_TE_SPEC_2_0,
         .ir = true,
         .rss = 3,
         .bp = true,
         .bpred = 10,
         .jtc = true,
         .cache = 7},
        {.spec = TK_TE_SPEC_0_29,
         .ir = true,
         .ccs = 4,
         .bp = true,
         .bpred = 2,
         .jtc = true,
         .cache = 2,
         .sijump = true,
         .group = 4},
        {.spec = TK_TE_SPEC_2_0,
         .ir = true,
         .rss = 1,
         .bp = true,
         .bpred = 14,
         .iexc = true,
         .full = true,
         .group = 8},
        {.spec = TK_TE_SPEC_0_29, .jtc = true, .cache = 10, .sijump = true},
        {.spec = TK_TE_SPEC_0_26, .full = true, .group = 3},
    };
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        mp_prog g;
        if (!mp_load(&g, progs[i]))
            fail_msg("%s: program or trace missing", progs[i]);
        for (size_t k = 0; k < sizeof(sample) / sizeof(sample[0]); k++)
            run_combo(&g, &sample[k], NULL);
        print_message("%-10s %7zu instructions, %zu combinations exact\n", progs[i], g.npcs,
                      sizeof(sample) / sizeof(sample[0]));
        mp_free(&g);
    }
}

/* Implicit return + branch prediction + jump target cache against the baseline, over all the
 * shared programs: the issue asks for at least 30% fewer bits per instruction. */
static void test_efficiency(void **state)
{
    (void)state;
    static const char *const progs[] = {"test_discon_branch_exception",
                                        "vvadd",
                                        "median",
                                        "towers",
                                        "multiply",
                                        "spmv",
                                        "dhrystone",
                                        "qsort",
                                        "mm",
                                        "rsort"};
    const mp_combo base = {.spec = TK_TE_SPEC_2_0};
    const mp_combo modes = {.spec = TK_TE_SPEC_2_0,
                            .ir = true,
                            .rss = 3,
                            .bp = true,
                            .bpred = 10,
                            .jtc = true,
                            .cache = 3};
    uint64_t bits[2] = {0, 0}, insns = 0;
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        mp_prog g;
        if (!mp_load(&g, progs[i]))
            fail_msg("%s: program or trace missing", progs[i]);
        for (int k = 0; k < 2; k++) {
            mp_setting s;
            mp_make_setting(&s, k ? &modes : &base);
            mp_result r;
            mp_roundtrip(&g, &s, &r);
            mp_expect_exact(&g, k ? "ir+bp+jtc" : "baseline", &s, &r);
            bits[k] += r.payload_bits;
        }
        insns += g.npcs;
        mp_free(&g);
    }
    const double b0 = (double)bits[0] / (double)insns, b1 = (double)bits[1] / (double)insns;
    print_message("%llu instructions: baseline %.4f bits/instr, ir+bp+jtc %.4f (%.1f%% fewer)\n",
                  (unsigned long long)insns, b0, b1, 100.0 * (1.0 - b1 / b0));
    assert_true(b1 <= 0.7 * b0);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_specs),
        cmocka_unit_test(test_modes_full_matrix),
        cmocka_unit_test(test_modes_sampled),
        cmocka_unit_test(test_efficiency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
