/* SPDX-License-Identifier: BSD-2-Clause */
/* Filtering and triggers (filtering.adoc with the Trace Control Interface's filter and
 * comparator units) and the register dump reader: unit checks on hand-made blocks, then
 * traces of the golden programs restricted by address range and by start/stop addresses,
 * which must decode to exactly the qualified instructions, with the qualification-ended
 * support packets (ended_rep, ended_ntr) they call for. */
#include "modes_pipe.h"

static tk_te_block insn_at(uint64_t addr)
{
    tk_te_block b;
    memset(&b, 0, sizeof(b));
    b.iaddr = addr;
    b.iretire = 2;
    b.ilastsize = 1;
    b.priv = 3;
    return b;
}

/* Feed blocks, collect the trigger bits handed to the encoder. */
static void run_filter(const tk_te_filter_config *c, const tk_te_block *in, size_t n, uint8_t *trig)
{
    tk_te_filter *f;
    assert_int_equal(tk_te_filter_new(c, &f), TK_OK);
    size_t k = 0, got;
    tk_te_block out;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(tk_te_filter_push(f, &in[i], &out, &got), TK_OK);
        if (got) {
            assert_int_equal(out.iaddr, in[k].iaddr);
            trig[k++] = out.trigger;
        }
    }
    assert_int_equal(tk_te_filter_finish(f, &out, &got), TK_OK);
    assert_int_equal(got, 1);
    trig[k++] = out.trigger;
    assert_int_equal(k, n);
    tk_te_filter_free(f);
}

/* Address range P >= lo && S < hi: ON on entry, OFF on the last one inside. */
static void test_range_triggers(void **state)
{
    (void)state;
    tk_te_filter_config c;
    tk_te_filter_config_init(&c);
    c.inst_filters = 1u << 2;
    c.filter[2].enable = true;
    c.filter[2].match_comp[0] = true;
    c.filter[2].comp[0] = 5;
    c.comp[5] = (tk_te_comparator){.p_input = TK_CMP_IADDR,
                                   .s_input = TK_CMP_IADDR,
                                   .p_func = TK_CMP_GE,
                                   .s_func = TK_CMP_LT,
                                   .mode = TK_CMP_P_AND_S,
                                   .p_match = 0x100,
                                   .s_match = 0x108};
    const uint64_t addrs[] = {0xf8, 0xfc, 0x100, 0x104, 0x108, 0x104, 0x10c};
    tk_te_block in[7];
    for (int i = 0; i < 7; i++)
        in[i] = insn_at(addrs[i]);
    uint8_t t[7];
    run_filter(&c, in, 7, t);
    const uint8_t want[] = {0, 0, TK_TRIGGER_ON, TK_TRIGGER_OFF, 0, TK_TRIGGER_ON | TK_TRIGGER_OFF,
                            0};
    assert_memory_equal(t, want, 7);
    /* trTeInstTracing 0 and no trigger: nothing qualifies */
    c.inst_tracing = false;
    run_filter(&c, in, 7, t);
    const uint8_t none[7] = {0};
    assert_memory_equal(t, none, 7);
    /* a trace-on trigger starts it; trace-off stops after its instruction */
    in[1].trigger = TK_TRIGGER_ON;
    in[3].trigger = TK_TRIGGER_OFF;
    run_filter(&c, in, 7, t);
    const uint8_t trig[] = {0, 0, TK_TRIGGER_ON, TK_TRIGGER_OFF, 0, 0, 0};
    assert_memory_equal(t, trig, 7);
    /* triggers ignored without trTeInstTrigEnable */
    c.trig_enable = false;
    run_filter(&c, in, 7, t);
    assert_memory_equal(t, none, 7);
}

/* Latch (start/stop), mask, watchpoint notify, privilege and trap-cause windows. */
static void test_comparators_and_windows(void **state)
{
    (void)state;
    tk_te_filter_config c;
    tk_te_filter_config_init(&c);
    c.inst_filters = 1;
    c.filter[0].enable = true;
    c.filter[0].match_comp[1] = true;
    c.filter[0].comp[1] = 0;
    c.comp[0] = (tk_te_comparator){.p_func = TK_CMP_EQ,
                                   .s_func = TK_CMP_EQ,
                                   .mode = TK_CMP_LATCH,
                                   .p_match = 0x104,
                                   .s_match = 0x10c};
    /* watchpoint on a masked address: 0x2?0 */
    c.comp[1] = (tk_te_comparator){.p_func = TK_CMP_EQ,
                                   .s_func = TK_CMP_NEVER,
                                   .mode = TK_CMP_P,
                                   .p_notify = true,
                                   .p_match = 0x200,
                                   .s_match = ~0xf0ull};
    const uint64_t addrs[] = {0x100, 0x104, 0x250, 0x10c, 0x110, 0x104, 0x108};
    tk_te_block in[7];
    for (int i = 0; i < 7; i++)
        in[i] = insn_at(addrs[i]);
    uint8_t t[7];
    run_filter(&c, in, 7, t);
    const uint8_t want[] = {0, TK_TRIGGER_ON, TK_TRIGGER_NOTIFY, TK_TRIGGER_OFF, 0, TK_TRIGGER_ON,
                            0};
    assert_memory_equal(t, want, 7);

    /* privilege: only S mode (bit 1) */
    tk_te_filter_config_init(&c);
    c.inst_filters = 1;
    c.filter[0].enable = true;
    c.filter[0].match_priv = true;
    c.filter[0].priv_choice = 1u << 1;
    for (int i = 0; i < 7; i++)
        in[i].priv = (i >= 2 && i <= 4) ? 1 : 3;
    run_filter(&c, in, 7, t);
    const uint8_t priv[] = {0, 0, TK_TRIGGER_ON, 0, TK_TRIGGER_OFF, 0, 0};
    assert_memory_equal(t, priv, 7);

    /* exception cause 8 (ecall from U): from the handler to its mret, nested trap inside */
    tk_te_filter_config_init(&c);
    c.inst_filters = 1;
    c.filter[0].enable = true;
    c.filter[0].match_ecause = true;
    c.filter[0].ecause_choice = 1u << 8;
    tk_te_block tr[9];
    for (int i = 0; i < 9; i++)
        tr[i] = insn_at(0x100u + 4u * (unsigned)i);
    tr[1].itype = TK_ITYPE_EXCEPTION;
    tr[1].cause = 2; /* not chosen */
    tr[2].itype = TK_ITYPE_EXCEPTION;
    tr[2].cause = 8; /* ecall: the handler is traced from tr[3] */
    tr[4].itype = TK_ITYPE_INTERRUPT;
    tr[4].cause = 7;                    /* nested */
    tr[5].itype = TK_ITYPE_TRAP_RETURN; /* returns from the nested one */
    tr[7].itype = TK_ITYPE_TRAP_RETURN; /* returns from the ecall: last traced */
    uint8_t t9[9];
    run_filter(&c, tr, 9, t9);
    const uint8_t exc[] = {0, 0, 0, TK_TRIGGER_ON, 0, 0, 0, TK_TRIGGER_OFF, 0};
    assert_memory_equal(t9, exc, 9);
    /* interrupt qualification instead: from the interrupt's handler to its return */
    c.filter[0].match_ecause = false;
    c.filter[0].match_interrupt = true;
    c.filter[0].interrupt_value = true;
    run_filter(&c, tr, 9, t9);
    const uint8_t irq[] = {0, 0, 0, 0, 0, TK_TRIGGER_ON | TK_TRIGGER_OFF, 0, 0, 0};
    assert_memory_equal(t9, irq, 9);
}

/* Register dump: registers -> options and filters -> registers gives the same dump. */
static void test_register_dump(void **state)
{
    (void)state;
    static const char dump[] =
        "# read off the chip\n"
        "iaddress_width_p=64\niaddress_lsb_p=1\nreturn_stack_size_p=3\nbpred_size_p=6\n"
        "cache_size_p=4\nf0s_width_p=1\nitype_width_p=4\n"
        "mtvec = 0x80000101\n"
        "trTeControl=0x00510807   # active, enable, tracing, trig, sync 1 / max 5\n"
        "trTeImpl=0x00000101\n"
        "trTeInstFeatures=0x803000fe # and a source field: 8 bits, srcID 0x30\n"
        "trTeInstFilters=0x0002\n"
        "trTeFilter1Control=0x00000013\n"
        "trTeFilter1MatchInst=0x08\n"
        "trTeComp0Control=0x00001250\n"
        "TRTECOMP0PMATCHLOW=0x80001220\ntrTeComp0PMatchHigh=0\n"
        "trTeComp0SMatchLow=0x800012ae\n"
        "trRamControl=0x1\n";
    tk_te_hw_config c;
    tk_te_hw_config_init(&c, NULL);
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_te_regs_parse(&c, dump, sizeof(dump) - 1, &diag), TK_OK);
    const tk_te_params *p = &c.params;
    assert_false(p->o.full_address);
    assert_true(p->o.implicit_except && p->o.sijump && p->o.implicit_return);
    assert_true(p->o.branch_prediction && p->o.jump_target_cache);
    assert_int_equal(p->o.resync_max, 5);
    assert_int_equal(p->s.return_stack_size, 3);
    assert_int_equal(c.tvec[3], 0x80000101);
    assert_int_equal(c.src_bits, 8);
    assert_int_equal(c.src_id, 0x30);
    assert_true(c.filter.inst_tracing && c.filter.trig_enable);
    assert_int_equal(c.filter.inst_filters, 2);
    const tk_te_filter_unit *u = &c.filter.filter[1];
    assert_true(u->enable && u->match_priv && u->match_comp[0]);
    assert_int_equal(u->comp[0], 0);
    assert_int_equal(u->priv_choice, 8);
    const tk_te_comparator *k = &c.filter.comp[0];
    assert_int_equal(k->p_func, TK_CMP_GE);
    assert_int_equal(k->s_func, TK_CMP_LT);
    assert_int_equal(k->mode, TK_CMP_P_AND_S);
    assert_int_equal(k->p_match, 0x80001220);
    assert_int_equal(k->s_match, 0x800012ae);

    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_int_equal(tk_te_regs_write(&c, mem), TK_OK);
    fclose(mem);
    tk_te_hw_config d;
    tk_te_hw_config_init(&d, NULL);
    assert_int_equal(tk_te_regs_parse(&d, text, len, &diag), TK_OK);
    free(text);
    assert_memory_equal(&d.params, &c.params, sizeof(c.params));
    assert_memory_equal(&d.filter, &c.filter, sizeof(c.filter));
    assert_int_equal(d.tvec[3], c.tvec[3]);
    assert_int_equal(d.src_bits, 8);
    assert_int_equal(d.src_id, 0x30);
    /* trTeControl.trTeInhibitSrc: no source field whatever trTeSrcBits says */
    static const char inhibit[] = "trTeControl=0x8007\ntrTeInstFeatures=0x80300000\n";
    tk_te_hw_config_init(&d, NULL);
    assert_int_equal(tk_te_regs_parse(&d, inhibit, sizeof(inhibit) - 1, &diag), TK_OK);
    assert_int_equal(d.src_bits, 0);

    /* errors name the line */
    static const char *const bad[] = {
        "trTeControl=0x1000000\n",          /* trTeFormat 1: N-Trace */
        "trTeControl=0x20000\n",            /* sync counted in cycles */
        "\n\ntrTeBogus=1\n",                /* unknown register, line 3 */
        "trTeInstFeatures=zz\n",            /* not a number */
        "trTeInstFeatures=0x48\n",          /* call counter mode without a counter */
        "trTeFilter0Control=0x10000\n",     /* impdef matching */
        "trTeInstFilters\n",                /* no '=' */
        "trTeComp0PMatchLow=0x100000000\n", /* does not fit the register */
        "trTeInstFeatures=0xd0000000\n",    /* trTeSrcBits 13: over the TCI's 12 */
        "trTeInstFeatures=0x41000000\n",    /* trTeSrcID 0x100 in 4 bits */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tk_te_hw_config_init(&d, NULL);
        tk_diag_clear(&diag);
        assert_int_equal(tk_te_regs_parse(&d, bad[i], strlen(bad[i]), &diag), TK_ERR_CONFIG);
        assert_true(diag.message[0] != 0);
    }
    tk_te_hw_config_init(&d, NULL);
    assert_int_equal(tk_te_regs_parse(&d, bad[2], strlen(bad[2]), &diag), TK_ERR_CONFIG);
    assert_int_equal(diag.line, 3);
}

/* ---- traces restricted by filters ---- */

static tk_te_filter_config range_filter(uint64_t lo, uint64_t hi)
{
    tk_te_filter_config c;
    tk_te_filter_config_init(&c);
    c.inst_filters = 1;
    c.filter[0].enable = true;
    c.filter[0].match_comp[0] = true;
    c.comp[0] = (tk_te_comparator){.p_func = TK_CMP_GE,
                                   .s_func = TK_CMP_LT,
                                   .mode = TK_CMP_P_AND_S,
                                   .p_match = lo,
                                   .s_match = hi};
    return c;
}

static void filtered_setting(mp_setting *s, const tk_te_filter_config *c, bool quirks)
{
    memset(s, 0, sizeof(*s));
    tk_te_params_init(&s->p);
    s->p.s.iaddress_width = 64;
    s->p.s.iaddress_lsb = 1;
    s->p.s.itype_width = 4;
    tk_te_encoder_options_init(&s->eo);
    s->eo.reference_quirks = quirks;
    s->eo.start_qualified = false;
    s->filter = c;
}

static void test_function_range(void **state)
{
    (void)state;
    mp_prog g;
    if (!mp_load(&g, "dhrystone"))
        skip();
    uint64_t lo, hi;
    /* Proc_1: called 500 times, calls Proc_3, Proc_6 and Proc_7 outside the range */
    assert_int_equal(tk_image_lookup(g.img, "Proc_1", &lo, &hi), TK_OK);
    hi += lo;
    uint64_t *want = malloc(g.npcs * sizeof(*want));
    size_t n = 0;
    for (size_t i = 0; i < g.npcs; i++)
        if (g.pcs[i] >= lo && g.pcs[i] < hi)
            want[n++] = g.pcs[i];
    const tk_te_filter_config c = range_filter(lo, hi);
    for (int quirks = 0; quirks < 2; quirks++) {
        mp_setting s;
        filtered_setting(&s, &c, quirks);
        s.want = want;
        s.nwant = n;
        mp_result r;
        mp_roundtrip(&g, &s, &r);
        mp_expect_exact(&g, "range filter", &s, &r);
        print_message("Proc_1 [%llx, %llx): %zu of %zu instructions, %llu packets, "
                      "ended_rep %llu, ended_ntr %llu\n",
                      (unsigned long long)lo, (unsigned long long)hi, n, g.npcs,
                      (unsigned long long)r.packets, (unsigned long long)r.ended_rep,
                      (unsigned long long)r.ended_ntr);
        assert_true(n > 1000 && n < g.npcs / 2);
        assert_true(r.ended_rep >= 500); /* every exit from the range */
    }
    free(want);
    mp_free(&g);
}

/* Start/stop addresses (comparator latch): from the entry of Proc_1 up to and including the
 * instruction a return from a callee lands on. That instruction follows an uninferable jump,
 * so the packet reporting it would have gone out anyway: ended_ntr. A stop on an instruction
 * after a taken branch instead gives ended_rep. */
static void test_start_stop(void **state)
{
    (void)state;
    mp_prog g;
    if (!mp_load(&g, "dhrystone"))
        skip();
    uint64_t start, size;
    assert_int_equal(tk_image_lookup(g.img, "Proc_1", &start, &size), TK_OK);
    uint64_t stop_ntr = 0, stop_rep = 0;
    for (size_t i = 1; i < g.npcs && !(stop_ntr && stop_rep); i++) {
        const uint64_t prev = g.pcs[i - 1], pc = g.pcs[i];
        const bool prev_in = prev >= start && prev < start + size;
        const bool in = pc >= start && pc < start + size;
        tk_rv_insn pi;
        if (!in || tk_image_fetch(g.img, prev, &pi) != TK_OK)
            continue;
        if (!stop_ntr && !prev_in && pi.jclass == TK_RV_J_RETURN)
            stop_ntr = pc;
        if (!stop_rep && prev_in && pi.cf == TK_RV_CF_BRANCH && pc != prev + pi.len)
            stop_rep = pc;
    }
    assert_true(stop_ntr && stop_rep);
    for (int which = 0; which < 2; which++) {
        const uint64_t stop = which ? stop_rep : stop_ntr;
        tk_te_filter_config c;
        tk_te_filter_config_init(&c);
        c.inst_filters = 1;
        c.filter[0].enable = true;
        c.filter[0].match_comp[0] = true;
        c.comp[0] = (tk_te_comparator){.p_func = TK_CMP_EQ,
                                       .s_func = TK_CMP_EQ,
                                       .mode = TK_CMP_LATCH,
                                       .p_match = start,
                                       .s_match = stop};
        /* expected: the same latch, computed here on the PC list */
        uint64_t *want = malloc(g.npcs * sizeof(*want));
        size_t n = 0;
        bool on = false;
        for (size_t i = 0; i < g.npcs; i++) {
            on = on || g.pcs[i] == start;
            if (on)
                want[n++] = g.pcs[i];
            if (g.pcs[i] == stop)
                on = false;
        }
        mp_setting s;
        filtered_setting(&s, &c, false);
        s.want = want;
        s.nwant = n;
        mp_result r;
        mp_roundtrip(&g, &s, &r);
        mp_expect_exact(&g, which ? "start/stop (ended_rep)" : "start/stop (ended_ntr)", &s, &r);
        print_message("start %llx stop %llx: %zu instructions, ended_rep %llu, ended_ntr %llu\n",
                      (unsigned long long)start, (unsigned long long)stop, n,
                      (unsigned long long)r.ended_rep, (unsigned long long)r.ended_ntr);
        if (which == 0)
            assert_true(r.ended_ntr > 0);
        else
            assert_true(r.ended_rep > 0 && r.ended_ntr == 0);
        free(want);
    }
    mp_free(&g);
}

/* A watchpoint (comparator primary notify) on Proc_1's entry, everything traced: every call
 * is reported by a packet with notify set, and the trace still decodes exactly. */
static void test_watchpoint_notify(void **state)
{
    (void)state;
    mp_prog g;
    if (!mp_load(&g, "dhrystone"))
        skip();
    uint64_t entry, size;
    assert_int_equal(tk_image_lookup(g.img, "Proc_1", &entry, &size), TK_OK);
    size_t calls = 0;
    for (size_t i = 0; i < g.npcs; i++)
        calls += g.pcs[i] == entry;
    tk_te_filter_config c;
    tk_te_filter_config_init(&c); /* no filter: everything qualifies */
    c.comp[3] = (tk_te_comparator){.p_func = TK_CMP_EQ,
                                   .s_func = TK_CMP_ALWAYS,
                                   .mode = TK_CMP_P,
                                   .p_notify = true,
                                   .p_match = entry};
    for (int ir = 0; ir < 2; ir++) {
        mp_setting s;
        filtered_setting(&s, &c, false);
        s.eo.start_qualified = true;
        if (ir) { /* with implicit return and branch prediction too */
            s.p.s.return_stack_size = 3;
            s.p.s.bpred_size = 6;
            s.p.o.implicit_return = s.p.o.branch_prediction = true;
        }
        mp_result r;
        mp_roundtrip(&g, &s, &r);
        mp_expect_exact(&g, "watchpoint", &s, &r);
        print_message("watchpoint on Proc_1: %zu calls, %llu packets with notify (of %llu)\n",
                      calls, (unsigned long long)r.notify, (unsigned long long)r.packets);
        assert_int_equal(r.notify, calls);
    }
    mp_free(&g);
}

int main(void)
{
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_range_triggers),
        cmocka_unit_test(test_comparators_and_windows),
        cmocka_unit_test(test_register_dump),
    };
    int fails = cmocka_run_group_tests_name("filter", unit, NULL, NULL);
    if (!tk_test_data_present())
        return fails ? fails : TK_TEST_SKIP;
    const struct CMUnitTest traces[] = {
        cmocka_unit_test(test_function_range),
        cmocka_unit_test(test_start_stop),
        cmocka_unit_test(test_watchpoint_notify),
    };
    return fails + cmocka_run_group_tests_name("filtered traces", traces, NULL, NULL);
}
