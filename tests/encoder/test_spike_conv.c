/* SPDX-License-Identifier: BSD-2-Clause */
/* The spike -> ingress converter: post-iss's rules and quirks (VERSIONS.md C.9) in reference
 * mode, the 2.0 ingress meaning in spec-faithful mode. */
#include "testutil.h"

#include <string.h>

#include "tracekit/te_encoder.h"
#include "tracekit/te_ingress.h"

typedef struct row {
    uint64_t addr;
    uint32_t insn;
    uint8_t exc, irq;
    uint64_t cause, tval;
} row;

static tk_te_params params(unsigned itype_width, unsigned sijump)
{
    tk_te_params p;
    memset(&p, 0, sizeof(p));
    p.s.itype_width = itype_width;
    p.s.sijump = sijump;
    return p;
}

static tk_status count_packet(void *ctx, const tk_te_packet *pkt)
{
    (void)pkt;
    ++*(size_t *)ctx;
    return TK_OK;
}

/* Convert rows; returns the status of the first failing call, blocks in out. */
static tk_status convert(const tk_te_params *p, bool quirks, bool rv32, const row *rows, size_t n,
                         tk_te_block *out, size_t *nout)
{
    tk_spike_conv_options o = {.reference_quirks = quirks, .rv32 = rv32};
    tk_spike_conv *c = NULL;
    assert_int_equal(tk_spike_conv_new(p, &o, &c), TK_OK);
    tk_diag d;
    tk_diag_clear(&d);
    *nout = 0;
    bool ready;
    tk_status st = TK_OK;
    for (size_t i = 0; i < n && st == TK_OK; i++) {
        tk_spike_row r = {.address = rows[i].addr,
                          .insn = rows[i].insn,
                          .privilege = 3,
                          .exception = rows[i].exc,
                          .interrupt = rows[i].irq,
                          .ecause = rows[i].cause,
                          .tval = rows[i].tval};
        st = tk_spike_conv_push(c, &r, &out[*nout], &ready, &d);
        for (; st == TK_OK && ready; tk_spike_conv_next(c, &out[*nout], &ready))
            (*nout)++;
    }
    if (st == TK_OK) {
        st = tk_spike_conv_finish(c, &out[*nout], &ready, &d);
        for (; st == TK_OK && ready; tk_spike_conv_next(c, &out[*nout], &ready))
            (*nout)++;
    }
    if (st != TK_OK)
        assert_non_null(strstr(d.message, "post-iss aborts"));
    tk_spike_conv_free(c);
    return st;
}

enum {
    ADDI = 0x00000013,
    BEQ = 0x00b50463, /* beq a0, a1, +8 */
    C_BEQZ = 0xc119,
    RET = 0x00008067,    /* jalr x0, 0(ra) */
    C_JR_T0 = 0x8282,    /* c.jr x5: a return */
    C_JALR_T0 = 0x9282,  /* c.jalr x5: co-routine swap */
    C_JALR_T1 = 0x9302,  /* c.jalr x6: call */
    C_JR_T1 = 0x8302,    /* c.jr x6: jump without linkage */
    JAL_RA = 0x008000ef, /* jal ra, +8 */
    J = 0x0080006f,      /* jal x0, +8 */
    JALR_ABS = 0x00000067,
    MRET = 0x30200073,
    ECALL = 0x00000073,
    LOAD = 0x00052503, /* lw a0, 0(a0) */
    AUIPC_T1 = 0x00000317,
    JR_T1 = 0x00030067, /* jalr x0, 0(t1) */
    C_JAL = 0x2001,     /* c.jal (RV32) / c.addiw (RV64) */
};

static void test_branches(void **state)
{
    (void)state;
    tk_te_params p = params(4, 0);
    row r[] = {{0x100, BEQ, 0, 0, 0, 0},
               {0x104, ADDI, 0, 0, 0, 0},
               {0x108, C_BEQZ, 0, 0, 0, 0},
               {0x200, ADDI, 0, 0, 0, 0},
               {0x204, BEQ, 0, 0, 0, 0}};
    tk_te_block b[8];
    size_t n;
    assert_int_equal(convert(&p, true, false, r, 5, b, &n), TK_OK);
    assert_int_equal(n, 5);
    assert_int_equal(b[0].itype, TK_ITYPE_NOT_TAKEN);
    assert_int_equal(b[0].ilastsize, 1);
    assert_int_equal(b[0].iretire, 2);
    assert_int_equal(b[2].itype, TK_ITYPE_TAKEN);
    assert_int_equal(b[2].ilastsize, 0);
    assert_int_equal(b[2].iretire, 1);
    /* the final row is compared with address 0: taken */
    assert_int_equal(b[4].itype, TK_ITYPE_TAKEN);
}

/* Jump classes on the 32-bit expansion (c.jr x5 is a return, c.jalr x5 a swap). */
static void test_jump_classes(void **state)
{
    (void)state;
    static const struct {
        uint32_t insn;
        uint8_t w4, w3;
    } cases[] = {
        {RET, TK_ITYPE_RETURN, TK_ITYPE_UNINF_JUMP3},
        {C_JR_T0, TK_ITYPE_RETURN, TK_ITYPE_UNINF_JUMP3},
        {C_JALR_T0, TK_ITYPE_SWAP, TK_ITYPE_UNINF_JUMP3},
        {C_JALR_T1, TK_ITYPE_UNINF_CALL, TK_ITYPE_UNINF_JUMP3},
        {C_JR_T1, TK_ITYPE_UNINF_JUMP, TK_ITYPE_UNINF_JUMP3},
        {JAL_RA, TK_ITYPE_INF_CALL, TK_ITYPE_NONE},
        {J, TK_ITYPE_INF_JUMP, TK_ITYPE_NONE},
        {JALR_ABS, TK_ITYPE_INF_JUMP, TK_ITYPE_NONE},
        /* reference quirk: xRET is an "other uninferable jump", never 3 */
        {MRET, TK_ITYPE_UNINF_OTHER, TK_ITYPE_UNINF_JUMP3},
        {ADDI, TK_ITYPE_NONE, TK_ITYPE_NONE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        row r[] = {{0x100, ADDI, 0, 0, 0, 0},
                   {0x104, cases[i].insn, 0, 0, 0, 0},
                   {0x400, ADDI, 0, 0, 0, 0}};
        tk_te_block b[4];
        size_t n;
        tk_te_params p4 = params(4, 0), p3 = params(3, 0);
        assert_int_equal(convert(&p4, true, false, r, 3, b, &n), TK_OK);
        assert_int_equal(b[1].itype, cases[i].w4);
        assert_int_equal(convert(&p3, true, false, r, 3, b, &n), TK_OK);
        assert_int_equal(b[1].itype, cases[i].w3);
    }
}

static void test_xret_spec_faithful(void **state)
{
    (void)state;
    tk_te_params p = params(4, 0);
    row r[] = {{0x100, MRET, 0, 0, 0, 0}, {0x400, ADDI, 0, 0, 0, 0}};
    tk_te_block b[4];
    size_t n;
    assert_int_equal(convert(&p, false, false, r, 2, b, &n), TK_OK);
    assert_int_equal(b[0].itype, TK_ITYPE_TRAP_RETURN);
}

/* ecall retires and traps; a faulting load does not retire; cause and tval are cut to 8 bits
 * in reference mode only. */
static void test_traps(void **state)
{
    (void)state;
    tk_te_params p = params(4, 0);
    row r[] = {{0x100, ECALL, 1, 0, 0x10b, 0x12345},
               {0x800, LOAD, 1, 0, 5, 0xdeadbeef},
               {0x900, ADDI, 0, 1, 0x8000000000000007ull, 0x55}};
    tk_te_block b[4];
    size_t n;
    assert_int_equal(convert(&p, true, false, r, 3, b, &n), TK_OK);
    assert_int_equal(b[0].itype, TK_ITYPE_EXCEPTION);
    assert_int_equal(b[0].iretire, 2);
    assert_int_equal(b[0].cause, 0x0b);
    assert_int_equal(b[0].tval, 0x45);
    assert_int_equal(b[1].itype, TK_ITYPE_EXCEPTION);
    assert_int_equal(b[1].iretire, 0);
    assert_int_equal(b[1].iaddr, 0x800);
    assert_int_equal(b[1].tval, 0xef);
    assert_int_equal(b[2].itype, TK_ITYPE_INTERRUPT);
    assert_int_equal(b[2].iretire, 2);
    assert_int_equal(b[2].cause, 7);
    assert_int_equal(convert(&p, false, false, r, 3, b, &n), TK_OK);
    assert_int_equal(b[0].cause, 0x10b);
    assert_int_equal(b[0].tval, 0x12345);
    assert_int_equal(b[1].tval, 0xdeadbeef);
    assert_int_equal(b[2].tval, 0); /* 2.0: tval only for exceptions */
}

/* auipc t1 then jr t1: post-iss makes it an inferable jump; 2.0 keeps it uninferable and
 * flags sijump. */
static void test_sijump(void **state)
{
    (void)state;
    tk_te_params p = params(4, 1);
    row r[] = {
        {0x100, AUIPC_T1, 0, 0, 0, 0}, {0x104, JR_T1, 0, 0, 0, 0}, {0x100, ADDI, 0, 0, 0, 0}};
    tk_te_block b[4];
    size_t n;
    assert_int_equal(convert(&p, true, false, r, 3, b, &n), TK_OK);
    assert_int_equal(b[1].itype, TK_ITYPE_INF_JUMP);
    assert_int_equal(b[1].sijump, 1);
    assert_int_equal(convert(&p, false, false, r, 3, b, &n), TK_OK);
    assert_int_equal(b[1].itype, TK_ITYPE_UNINF_JUMP);
    assert_int_equal(b[1].sijump, 1);
    tk_te_params off = params(4, 0);
    assert_int_equal(convert(&off, true, false, r, 3, b, &n), TK_OK);
    assert_int_equal(b[1].itype, TK_ITYPE_UNINF_JUMP);
    assert_int_equal(b[1].sijump, 0);
}

/* Inputs on which post-iss stops on an assertion are errors in reference mode only. */
static void test_post_iss_aborts(void **state)
{
    (void)state;
    tk_te_params p = params(4, 0);
    row ret_after_trap[] = {
        {0x100, ADDI, 1, 0, 2, 0}, {0x200, RET, 0, 0, 0, 0}, {0x300, ADDI, 0, 0, 0, 0}};
    row trapping_branch[] = {{0x100, BEQ, 1, 0, 2, 0}, {0x200, ADDI, 0, 0, 0, 0}};
    tk_te_block b[4];
    size_t n;
    assert_int_equal(convert(&p, true, false, ret_after_trap, 3, b, &n), TK_ERR_UNSUPPORTED);
    assert_int_equal(convert(&p, true, false, trapping_branch, 2, b, &n), TK_ERR_UNSUPPORTED);
    assert_int_equal(convert(&p, false, false, ret_after_trap, 3, b, &n), TK_OK);
    assert_int_equal(b[1].itype, TK_ITYPE_RETURN);
    assert_int_equal(convert(&p, false, false, trapping_branch, 2, b, &n), TK_OK);
    assert_int_equal(b[0].itype, TK_ITYPE_EXCEPTION);
}

static void test_rv32_c_jal(void **state)
{
    (void)state;
    tk_te_params p = params(4, 0);
    row r[] = {{0x100, C_JAL, 0, 0, 0, 0}, {0x200, ADDI, 0, 0, 0, 0}};
    tk_te_block b[4];
    size_t n;
    assert_int_equal(convert(&p, true, true, r, 2, b, &n), TK_OK);
    assert_int_equal(b[0].itype, TK_ITYPE_INF_CALL);
    assert_int_equal(convert(&p, true, false, r, 2, b, &n), TK_OK);
    assert_int_equal(b[0].itype, TK_ITYPE_NONE); /* c.addiw on RV64 */
}

static void test_empty_input(void **state)
{
    (void)state;
    tk_te_params p = params(4, 0);
    tk_te_block b[2], zero;
    size_t n;
    memset(&zero, 0, sizeof(zero));
    assert_int_equal(convert(&p, true, false, NULL, 0, b, &n), TK_OK);
    assert_int_equal(n, 1); /* post-iss writes one all-zero row */
    assert_memory_equal(&b[0], &zero, sizeof(zero));
    assert_int_equal(convert(&p, false, false, NULL, 0, b, &n), TK_OK);
    assert_int_equal(n, 0);
}

/* An interrupt taken right after a branch: post-iss reports the interrupt on the branch
 * (itype 2, its outcome lost; in reference mode it asserts); the spec-faithful mode keeps the
 * branch's outcome and puts the interrupt in a block of its own retiring nothing, at the
 * address where the flow resumes after the handler's mret, as the hart model's block
 * splitter does (src/hart/blocks.c). */
static void test_interrupted_branch(void **state)
{
    (void)state;
    const tk_te_params p = params(4, 0);
    const uint32_t addi = 0x00000013, beq8 = 0x00000463 /* beq x0,x0,+8 */, mret = 0x30200073,
                   bne8 = 0x00101463 /* bne x0,x1,+8 */;
    for (int taken = 0; taken < 2; taken++) {
        const uint64_t resume = taken ? 0x8000000c : 0x80000008;
        const row rows[] = {
            {0x80000000, addi, 0, 0, 0, 0},
            {0x80000004, taken ? beq8 : bne8, 0, 1, 7, 0}, /* timer interrupt after it */
            {0x80000100, addi, 0, 0, 0, 0},                /* handler */
            {0x80000104, beq8, 0, 0, 0, 0},                /* a branch in the handler */
            {0x8000010c, mret, 0, 0, 0, 0},
            {resume, addi, 0, 0, 0, 0},
            {resume + 4, addi, 0, 0, 0, 0},
        };
        tk_te_block out[16];
        size_t n;
        assert_int_equal(convert(&p, false, false, rows, 7, out, &n), TK_OK);
        assert_int_equal(n, 8); /* one more block than rows */
        assert_int_equal(out[0].itype, TK_ITYPE_NONE);
        /* the branch with its outcome, retired, no trap */
        assert_int_equal(out[1].iaddr, 0x80000004);
        assert_int_equal(out[1].itype, taken ? TK_ITYPE_TAKEN : TK_ITYPE_NOT_TAKEN);
        assert_int_equal(out[1].iretire, 2);
        assert_int_equal(out[1].cause, 0);
        /* the interrupt: nothing retired, at the resume address */
        assert_int_equal(out[2].itype, TK_ITYPE_INTERRUPT);
        assert_int_equal(out[2].iretire, 0);
        assert_int_equal(out[2].iaddr, resume);
        assert_int_equal(out[2].cause, 7);
        assert_int_equal(out[3].iaddr, 0x80000100);
        assert_int_equal(out[4].itype, TK_ITYPE_TAKEN);
        assert_int_equal(out[5].itype, TK_ITYPE_TRAP_RETURN);
        assert_int_equal(out[6].iaddr, resume);
        assert_int_equal(out[7].iaddr, resume + 4);

        /* the encoder takes it (a branch, then an exception-only cycle) */
        tk_te_encoder_options eo;
        tk_te_encoder_options_init(&eo);
        eo.reference_quirks = false;
        tk_te_params ep;
        tk_te_params_init(&ep);
        ep.s.itype_width = 4;
        tk_te_encoder *e = NULL;
        size_t npk = 0;
        assert_int_equal(tk_te_encoder_new_opts(&ep, &eo, count_packet, &npk, &e), TK_OK);
        assert_int_equal(tk_te_encoder_push_run(e, out, n), TK_OK);
        assert_int_equal(tk_te_encoder_finish(e), TK_OK);
        tk_te_encoder_free(e);
        assert_true(npk > 3);
    }
    /* the trace ends inside the handler: the outcome is unknown, the interrupt stays on the
     * branch (nothing is lost or made up) */
    const row cut[] = {
        {0x80000004, beq8, 0, 1, 7, 0},
        {0x80000100, addi, 0, 0, 0, 0},
    };
    tk_te_block out[4];
    size_t n;
    assert_int_equal(convert(&p, false, false, cut, 2, out, &n), TK_OK);
    assert_int_equal(n, 2);
    assert_int_equal(out[0].itype, TK_ITYPE_INTERRUPT);
    assert_int_equal(out[0].cause, 7);
    assert_int_equal(out[1].iaddr, 0x80000100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branches),
        cmocka_unit_test(test_jump_classes),
        cmocka_unit_test(test_xret_spec_faithful),
        cmocka_unit_test(test_traps),
        cmocka_unit_test(test_sijump),
        cmocka_unit_test(test_post_iss_aborts),
        cmocka_unit_test(test_rv32_c_jal),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_interrupted_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
