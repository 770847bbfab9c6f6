/* SPDX-License-Identifier: BSD-2-Clause */
/* The mode matrix on the example programs (examples/), executed by the hart model: recursion
 * (deep returns), function pointers, jump tables, setjmp/longjmp (returns that do not go to
 * their call), traps, timer interrupts (vectored), U/S/M mode changes with delegated traps.
 * Every setting must decode back to exactly the instructions the hart retired. */
#include "hart_prog.h"

#ifndef TK_EXAMPLE_DIR
#error "TK_EXAMPLE_DIR: the folder of the built examples"
#endif

static void setting_for(mp_setting *s, tk_te_spec spec, unsigned ir, unsigned bp, unsigned jtc,
                        bool iexc, bool sijump, unsigned group)
{
    memset(s, 0, sizeof(*s));
    tk_te_params_init(&s->p);
    s->p.spec = spec;
    s->p.s.iaddress_width = 64;
    s->p.s.iaddress_lsb = 1;
    s->p.s.itype_width = 4;
    s->p.s.privilege_width = 2;
    s->p.s.ecause_width = 6;
    s->p.s.return_stack_size = ir == 1 ? 2 : ir == 2 ? 8 : 0;
    s->p.s.call_counter_size = ir == 3 ? 3 : 0;
    s->p.s.bpred_size = bp;
    s->p.s.cache_size = jtc;
    s->p.s.f0s_width = (bp && jtc) ? 1 : 0;
    s->p.s.sijump = sijump;
    s->p.o.implicit_return = ir != 0;
    s->p.o.branch_prediction = bp != 0;
    s->p.o.jump_target_cache = jtc != 0;
    s->p.o.implicit_except = iexc;
    s->p.o.sijump = sijump;
    s->p.o.resync_max = 3;
    s->p.ioptions_width = 6;
    tk_te_encoder_options_init(&s->eo);
    s->eo.reference_quirks = false;
    s->eo.irdepth_ones = false;
    if (group) {
        s->group_insns = group;
        s->group_blocks = 2;
    }
}

static void test_examples(void **state)
{
    (void)state;
    static const char *const names[] = {"recursion", "fnptr", "switch", "setjmp",
                                        "traps",     "timer", "umode",  "bench"};
    /* {ir (0 off, 1 stack 2^2, 2 stack 2^8, 3 counter 2^3), bp, jtc, iexc, sijump, group} */
    static const unsigned combos[][6] = {
        {0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0},  {2, 0, 0, 1, 1, 0}, {3, 0, 0, 0, 0, 4},
        {0, 2, 0, 0, 0, 0}, {0, 12, 0, 1, 0, 3}, {0, 0, 2, 0, 1, 0}, {0, 0, 9, 0, 0, 0},
        {1, 2, 2, 1, 1, 0}, {2, 12, 9, 0, 0, 0}, {3, 6, 5, 1, 0, 8}, {2, 12, 9, 1, 1, 2},
    };
    unsigned programs = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        mp_prog g;
        if (!mp_load_example(&g, TK_EXAMPLE_DIR, names[i])) {
            print_message("%s not built: skipped\n", names[i]);
            continue;
        }
        programs++;
        unsigned n = 0;
        for (int spec = 0; spec < 3; spec++) {
            for (size_t k = 0; k < sizeof(combos) / sizeof(combos[0]); k++) {
                const unsigned *c = combos[k];
                const bool modes = c[0] || c[1] || c[2];
                /* 0.026 has none of the optional modes */
                if (spec == TK_TE_SPEC_0_26 && (modes || c[3]))
                    continue;
                /* A call counter does not check return addresses: longjmp cannot be traced
                 * with it (branchTrace.adoc "Implicit return mode"); a stack can. */
                if (c[0] == 3 && !strcmp(names[i], "setjmp"))
                    continue;
                mp_setting s;
                setting_for(&s, (tk_te_spec)spec, c[0], c[1], c[2], c[3], c[4], c[5]);
                char what[96];
                snprintf(what, sizeof(what), "spec %s ir%u bp%u jtc%u iexc%u sijump%u group%u",
                         tk_te_spec_name((tk_te_spec)spec), c[0], c[1], c[2], c[3], c[4], c[5]);
                mp_result r;
                mp_roundtrip(&g, &s, &r);
                mp_expect_exact(&g, what, &s, &r);
                n++;
            }
        }
        print_message("%-10s %7zu instructions, %u settings exact\n", names[i], g.npcs, n);
        mp_free(&g);
    }
    if (!programs)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
