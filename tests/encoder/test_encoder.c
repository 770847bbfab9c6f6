/* SPDX-License-Identifier: BSD-2-Clause */
/* The encoder on hand-built block sequences: each test states the packets the algorithm
 * (exampleAlgorithm.adoc chart, reference semantics of VERSIONS.md C.8) must produce. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/te_encoder.h"

#define MAXP 256

typedef struct capture {
    tk_te_packet p[MAXP];
    size_t n;
} capture;

static tk_status grab(void *ctx, const tk_te_packet *pkt)
{
    capture *c = ctx;
    assert_true(c->n < MAXP);
    c->p[c->n++] = *pkt;
    return TK_OK;
}

static void params(tk_te_params *p)
{
    memset(p, 0, sizeof(*p));
    p->size = sizeof(*p);
    p->s.iaddress_width = 32;
    p->s.iaddress_lsb = 0;
    p->s.context_width = 32;
    p->s.privilege_width = 2;
    p->s.ecause_width = 5;
    p->s.itype_width = 4;
    p->s.notime = 1;
    p->o.resync_max = 0;
    p->encoder_mode_width = 1;
    p->ioptions_width = 5;
    p->doptions_width = 4;
}

/* One 4-byte instruction block. */
static tk_te_block insn(uint64_t addr, uint8_t itype)
{
    tk_te_block b;
    memset(&b, 0, sizeof(b));
    b.iaddr = addr;
    b.itype = itype;
    b.ilastsize = 1;
    b.iretire = 2;
    b.priv = 3;
    return b;
}

static tk_te_block trap_only(uint64_t addr, uint32_t cause, uint64_t tval)
{
    tk_te_block b = insn(addr, TK_ITYPE_EXCEPTION);
    b.iretire = 0;
    b.cause = cause;
    b.tval = tval;
    return b;
}

static void run(const tk_te_params *p, const tk_te_encoder_options *o, const tk_te_block *b,
                size_t n, capture *c)
{
    tk_te_encoder *e = NULL;
    c->n = 0;
    assert_int_equal(tk_te_encoder_new_opts(p, o, grab, c, &e), TK_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tk_te_encoder_push(e, &b[i], 1), TK_OK);
    assert_int_equal(tk_te_encoder_finish(e), TK_OK);
    tk_te_encoder_free(e);
}

static void expect_support(const tk_te_packet *k, bool enable, uint8_t qual)
{
    assert_int_equal(k->format, TK_TE_F3);
    assert_int_equal(k->subformat, TK_TE_SF_SUPPORT);
    assert_int_equal(k->ienable, enable);
    assert_int_equal(k->qual_status, qual);
}

static void expect_sync(const tk_te_packet *k, uint8_t sf, uint64_t addr)
{
    assert_int_equal(k->format, TK_TE_F3);
    assert_int_equal(k->subformat, sf);
    assert_int_equal(k->address, addr);
}

static void expect_addr(const tk_te_packet *k, uint8_t fmt, uint64_t addr)
{
    assert_int_equal(k->format, fmt);
    assert_true(k->has_address);
    assert_int_equal(k->address, addr);
}

/* A taken branch, then an ecall: the branch goes out with the ecall's address (er_n), the
 * handler's first instruction in a trap packet with thaddr 1. */
static void test_branch_then_exception(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[5] = {insn(0x100, 0), insn(0x104, TK_ITYPE_TAKEN),
                        insn(0x200, TK_ITYPE_EXCEPTION), insn(0x300, 0), insn(0x304, 0)};
    b[2].cause = 11;
    b[2].tval = 0;
    capture c;
    run(&p, NULL, b, 5, &c);
    assert_int_equal(c.n, 6);
    expect_support(&c.p[0], true, TK_QUAL_NO_CHANGE);
    expect_sync(&c.p[1], TK_TE_SF_START, 0x100);
    assert_int_equal(c.p[1].branch, 1);
    assert_int_equal(c.p[1].privilege, 3);
    expect_addr(&c.p[2], TK_TE_F1, 0x100); /* differential: 0x200 - 0x100 */
    assert_int_equal(c.p[2].branches, 1);
    assert_int_equal(c.p[2].branch_map, 0); /* taken */
    assert_false(c.p[2].updiscon);
    expect_sync(&c.p[3], TK_TE_SF_TRAP, 0x300);
    assert_int_equal(c.p[3].thaddr, 1);
    assert_int_equal(c.p[3].ecause, 11);
    assert_int_equal(c.p[3].interrupt, 0);
    /* reference end: the last instruction, then "disabled, ended_rep" */
    expect_addr(&c.p[4], TK_TE_F2, 4);
    expect_support(&c.p[5], false, TK_QUAL_ENDED_REP);
}

/* A faulting load: the instruction before it is reported (next is exception-only), then the
 * handler in a trap packet carrying the cause and tval. */
static void test_exception_only(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[5] = {insn(0x100, 0), insn(0x104, TK_ITYPE_NOT_TAKEN), insn(0x108, 0),
                        trap_only(0x10c, 5, 0xdead), insn(0x500, 0)};
    capture c;
    run(&p, NULL, b, 5, &c);
    assert_int_equal(c.n, 6);
    expect_sync(&c.p[1], TK_TE_SF_START, 0x100);
    expect_addr(&c.p[2], TK_TE_F1, 8);
    assert_int_equal(c.p[2].branches, 1);
    assert_int_equal(c.p[2].branch_map, 1); /* not taken */
    expect_sync(&c.p[3], TK_TE_SF_TRAP, 0x500);
    assert_int_equal(c.p[3].thaddr, 1);
    assert_int_equal(c.p[3].ecause, 5);
    assert_int_equal(c.p[3].tval, 0xdead);
    expect_addr(&c.p[4], TK_TE_F2, 0);
}

/* A trap at the target of an uninferable jump: reported with thaddr 0 and the EPC; the handler
 * then follows in a start packet (2.0 payload "thaddr"). */
static void test_trap_after_updiscon(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[4] = {insn(0x100, 0), insn(0x104, TK_ITYPE_UNINF_CALL),
                        trap_only(0x800, 1, 0x800), insn(0x900, 0)};
    capture c;
    run(&p, NULL, b, 4, &c);
    assert_int_equal(c.n, 7);
    expect_sync(&c.p[1], TK_TE_SF_START, 0x100);
    expect_addr(&c.p[2], TK_TE_F2, 4); /* the jump, as the next instruction traps */
    expect_sync(&c.p[3], TK_TE_SF_TRAP, 0x800);
    assert_int_equal(c.p[3].thaddr, 0);
    expect_sync(&c.p[4], TK_TE_SF_START, 0x900);
}

/* Resync (reference semantics: packets counted, 2^(0+4) = 16): the packet sent when the count
 * equals the maximum has updiscon set, and a start packet follows. */
static void test_resync_counts_packets(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[80];
    for (size_t i = 0; i < 40; i++) {
        b[2 * i] = insn(0x1000 + 0x100 * i, 0);
        b[2 * i + 1] = insn(0x1004 + 0x100 * i, TK_ITYPE_UNINF_JUMP);
    }
    capture c;
    run(&p, NULL, b, 80, &c);
    /* support, start, then 16 F2 (count 1..16), the 17th F2 with updiscon, start */
    expect_sync(&c.p[1], TK_TE_SF_START, 0x1000);
    for (size_t i = 2; i < 18; i++) {
        assert_int_equal(c.p[i].format, TK_TE_F2);
        assert_false(c.p[i].updiscon);
    }
    assert_int_equal(c.p[18].format, TK_TE_F2);
    assert_true(c.p[18].updiscon);
    assert_int_equal(c.p[19].format, TK_TE_F3);
    assert_int_equal(c.p[19].subformat, TK_TE_SF_START);
}

/* 31 branches fill the map: F1 without address. */
static void test_full_branch_map(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[40];
    b[0] = insn(0x100, 0);
    for (size_t i = 1; i < 40; i++)
        b[i] = insn(0x100 + 4 * i, TK_ITYPE_NOT_TAKEN);
    capture c;
    run(&p, NULL, b, 40, &c);
    assert_int_equal(c.p[2].format, TK_TE_F1);
    assert_false(c.p[2].has_address);
    assert_int_equal(c.p[2].branches, 0);
    assert_int_equal(c.p[2].branch_map, 0x7fffffff);
}

/* Multiple retirement: a three-instruction block ending with an ecall gives the same packets
 * as the three instructions one by one. */
static void test_multi_block_same_packets(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block single[6] = {insn(0x100, 0), insn(0x104, 0),
                             insn(0x106, 0), insn(0x10a, TK_ITYPE_EXCEPTION),
                             insn(0x400, 0), insn(0x404, 0)};
    single[1].ilastsize = 0; /* a compressed instruction */
    single[1].iretire = 1;
    single[3].cause = 8;
    capture c1, c2;
    run(&p, NULL, single, 6, &c1);
    tk_te_block multi[3] = {single[0], single[3], single[4]};
    multi[1].iaddr = 0x104;
    multi[1].iretire = 2 + 1 + 2;
    multi[2].iretire = 4; /* 0x400, 0x404 */
    run(&p, NULL, multi, 3, &c2);
    assert_int_equal(c1.n, c2.n);
    assert_memory_equal(c1.p, c2.p, c1.n * sizeof(c1.p[0]));
    expect_addr(&c2.p[2], TK_TE_F2, 0xa); /* the ecall: last instruction of the block */
}

/* Trace-off then trace-on: the last traced instruction is reported, a support packet says
 * qualification ended, and tracing restarts with a start packet. */
static void test_qualification(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[6] = {insn(0x100, 0), insn(0x104, TK_ITYPE_TAKEN),
                        insn(0x200, 0), insn(0x204, 0),
                        insn(0x208, 0), insn(0x20c, 0)};
    b[1].trigger = TK_TRIGGER_OFF;
    b[4].trigger = TK_TRIGGER_ON;
    capture c;
    tk_te_encoder_options o;
    tk_te_encoder_options_init(&o);
    o.reference_quirks = false;
    run(&p, &o, b, 6, &c);
    assert_int_equal(c.n, 7);
    expect_sync(&c.p[1], TK_TE_SF_START, 0x100);
    expect_addr(&c.p[2], TK_TE_F1, 4);
    expect_support(&c.p[3], true, TK_QUAL_ENDED_REP);
    expect_sync(&c.p[4], TK_TE_SF_START, 0x208);
    /* spec-faithful end: the last instruction once, then disabled */
    expect_addr(&c.p[5], TK_TE_F2, 4);
    expect_support(&c.p[6], false, TK_QUAL_ENDED_REP);
}

/* Trace-notify reports the block's last instruction with notify set. */
static void test_notify(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[4] = {insn(0x100, 0), insn(0x104, 0), insn(0x108, 0), insn(0x10c, 0)};
    b[2].trigger = TK_TRIGGER_NOTIFY;
    capture c;
    run(&p, NULL, b, 4, &c);
    expect_addr(&c.p[2], TK_TE_F2, 8);
    assert_true(c.p[2].notify);
}

/* Lost packets: a trace_lost support packet, then a start packet. */
static void test_trace_lost(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    capture c = {.n = 0};
    tk_te_encoder *e = NULL;
    assert_int_equal(tk_te_encoder_new(&p, grab, &c, &e), TK_OK);
    tk_te_block b[4] = {insn(0x100, 0), insn(0x104, 0), insn(0x108, 0), insn(0x10c, 0)};
    assert_int_equal(tk_te_encoder_push(e, b, 2), TK_OK);
    assert_int_equal(tk_te_encoder_trace_lost(e), TK_OK);
    assert_int_equal(tk_te_encoder_push(e, b + 2, 2), TK_OK);
    assert_int_equal(tk_te_encoder_finish(e), TK_OK);
    tk_te_encoder_free(e);
    expect_sync(&c.p[1], TK_TE_SF_START, 0x100);
    expect_support(&c.p[2], true, TK_QUAL_TRACE_LOST);
    expect_sync(&c.p[3], TK_TE_SF_START, 0x104);
}

/* Privilege change: pending branches are flushed with the last instruction of the old
 * privilege, then a start packet on the new one. */
static void test_privilege_change(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[4] = {insn(0x100, 0), insn(0x104, TK_ITYPE_NOT_TAKEN), insn(0x108, 0),
                        insn(0x10c, 0)};
    b[3].priv = 1;
    capture c;
    run(&p, NULL, b, 4, &c);
    expect_addr(&c.p[2], TK_TE_F1, 8);
    expect_sync(&c.p[3], TK_TE_SF_START, 0x10c);
    assert_int_equal(c.p[3].privilege, 1);
}

/* irdepth when irreport is clear: all ones (reference) or copies of the updiscon bit. */
static void test_irdepth_fill(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    p.s.call_counter_size = 9;
    tk_te_block b[3] = {insn(0x100, 0), insn(0x104, TK_ITYPE_UNINF_JUMP), insn(0x200, 0)};
    capture c;
    run(&p, NULL, b, 3, &c);
    expect_addr(&c.p[2], TK_TE_F2, 0x100);
    assert_int_equal(c.p[2].irdepth, 0x1ff);
    tk_te_encoder_options o;
    tk_te_encoder_options_init(&o);
    o.irdepth_ones = false;
    run(&p, &o, b, 3, &c);
    /* address 0x100 has MSB 0, notify 0, updiscon 0: transmitted updiscon is 0 */
    assert_int_equal(c.p[2].irdepth, 0);
}

static void test_bad_block(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    capture c = {.n = 0};
    tk_te_encoder *e = NULL;
    assert_int_equal(tk_te_encoder_new(&p, grab, &c, &e), TK_OK);
    tk_te_block b = insn(0x100, 0);
    b.iretire = 1; /* less than one 4-byte instruction */
    assert_int_equal(tk_te_encoder_push(e, &b, 1), TK_ERR_INVALID);
    tk_te_encoder_free(e);
}

/* Implicit return (spec-faithful mode), branchTrace.adoc "Implicit return mode". */
static void ir_params(tk_te_params *p, uint32_t stack_log2, uint32_t counter_bits)
{
    params(p);
    p->o.implicit_return = true;
    p->s.return_stack_size = stack_log2;
    p->s.call_counter_size = counter_bits;
}

static void ir_run(const tk_te_params *p, uint64_t ret_target, capture *c)
{
    tk_te_block b[6] = {insn(0x100, 0),      insn(0x104, TK_ITYPE_INF_CALL),
                        insn(0x200, 0),      insn(0x204, TK_ITYPE_RETURN),
                        insn(ret_target, 0), insn(ret_target + 4, 0)};
    tk_te_encoder_options o;
    tk_te_encoder_options_init(&o);
    o.reference_quirks = false;
    o.irdepth_ones = false;
    run(p, &o, b, 6, c);
}

/* A return to the address after its call is not reported. */
static void test_implicit_return_predicted(void **state)
{
    (void)state;
    tk_te_params p;
    ir_params(&p, 2, 0);
    capture c;
    ir_run(&p, 0x108, &c);
    assert_int_equal(c.n, 4);
    expect_sync(&c.p[1], TK_TE_SF_START, 0x100);
    /* the end: a return since the call and no branch since, so the depth (0) is reported */
    expect_addr(&c.p[2], TK_TE_F2, 0x10c - 0x100);
    assert_true(c.p[2].irreport);
    assert_int_equal(c.p[2].irdepth, 0);
    expect_support(&c.p[3], false, TK_QUAL_ENDED_REP);
    /* without implicit return the return's target is reported */
    p.o.implicit_return = false;
    ir_run(&p, 0x108, &c);
    assert_int_equal(c.n, 5);
    expect_addr(&c.p[2], TK_TE_F2, 0x8);
    assert_false(c.p[2].irreport);
}

/* With a stack, a return elsewhere is reported with irreport and the depth. */
static void test_implicit_return_mispredicted(void **state)
{
    (void)state;
    tk_te_params p;
    ir_params(&p, 2, 0);
    capture c;
    ir_run(&p, 0x300, &c);
    expect_addr(&c.p[2], TK_TE_F2, 0x200);
    assert_true(c.p[2].irreport);
    /* "the entry number of the return that failed": the depth before it (payload.adoc), the
     * value the decoder compares at the return (decoder.adoc is_implicit_return) */
    assert_int_equal(c.p[2].irdepth, 1);
    /* a call counter cannot check the target: the return counts as implicit */
    ir_params(&p, 0, 4);
    ir_run(&p, 0x300, &c);
    assert_int_equal(c.n, 4);
    expect_addr(&c.p[2], TK_TE_F2, 0x304 - 0x100);
}

/* Context changes per ctype (ingressPort "ctype"): 1 is reported imprecisely in a format 3
 * context packet, 2 precisely with a start packet at the first instruction of the context. */
static void test_context_types(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[4] = {insn(0x100, 0), insn(0x104, 0), insn(0x108, 0), insn(0x10c, 0)};
    b[2].context = 7;
    b[3].context = 7;
    b[2].ctype = 1;
    capture c;
    run(&p, NULL, b, 4, &c);
    assert_int_equal(c.p[2].format, TK_TE_F3);
    assert_int_equal(c.p[2].subformat, TK_TE_SF_CONTEXT);
    assert_int_equal(c.p[2].context, 7);
    b[2].ctype = 2;
    run(&p, NULL, b, 4, &c);
    expect_sync(&c.p[2], TK_TE_SF_START, 0x108);
    assert_int_equal(c.p[2].context, 7);
    b[2].ctype = 0; /* unreported */
    run(&p, NULL, b, 4, &c);
    expect_addr(&c.p[2], TK_TE_F2, 0xc);
}

/* A halted hart behaves like unqualified instructions: last instruction reported, support
 * packet, then a start packet when it runs again. */
static void test_halted(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    tk_te_block b[5] = {insn(0x100, 0), insn(0x104, 0), insn(0, 0), insn(0x200, 0), insn(0x204, 0)};
    b[2].halted = 1;
    b[2].iretire = 0;
    capture c;
    run(&p, NULL, b, 5, &c);
    assert_int_equal(c.n, 7);
    expect_addr(&c.p[2], TK_TE_F2, 4);
    expect_support(&c.p[3], true, TK_QUAL_ENDED_REP);
    expect_sync(&c.p[4], TK_TE_SF_START, 0x200);
}

/* A push of no block sends the first support packet, and fails after finish (what it did
 * before the one-block fast path, which no block reaches). */
static void test_push_no_block(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p);
    capture c = {0};
    tk_te_encoder *e = NULL;
    assert_int_equal(tk_te_encoder_new(&p, grab, &c, &e), TK_OK);
    assert_int_equal(tk_te_encoder_push(e, NULL, 0), TK_OK);
    assert_int_equal(c.n, 1);
    expect_support(&c.p[0], true, TK_QUAL_NO_CHANGE);
    const tk_te_block b = insn(0x100, 0);
    assert_int_equal(tk_te_encoder_push(e, &b, 1), TK_OK);
    assert_int_equal(tk_te_encoder_finish(e), TK_OK);
    assert_int_equal(tk_te_encoder_push(e, NULL, 0), TK_ERR_STATE);
    assert_int_equal(tk_te_encoder_push(e, &b, 1), TK_ERR_STATE);
    tk_te_encoder_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_then_exception),
        cmocka_unit_test(test_exception_only),
        cmocka_unit_test(test_trap_after_updiscon),
        cmocka_unit_test(test_resync_counts_packets),
        cmocka_unit_test(test_full_branch_map),
        cmocka_unit_test(test_multi_block_same_packets),
        cmocka_unit_test(test_qualification),
        cmocka_unit_test(test_notify),
        cmocka_unit_test(test_trace_lost),
        cmocka_unit_test(test_privilege_change),
        cmocka_unit_test(test_irdepth_fill),
        cmocka_unit_test(test_bad_block),
        cmocka_unit_test(test_context_types),
        cmocka_unit_test(test_halted),
        cmocka_unit_test(test_implicit_return_predicted),
        cmocka_unit_test(test_implicit_return_mispredicted),
        cmocka_unit_test(test_push_no_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
