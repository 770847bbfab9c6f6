/* SPDX-License-Identifier: BSD-2-Clause */
/* The spike -> ingress converter: post-iss's rules and quirks (VERSIONS.md C.9) in reference
 * mode, the 2.0 ingress meaning in spec-faithful mode. */
#include "testutil.h"

#include <string.h>

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
        if (st == TK_OK && ready)
            (*nout)++;
    }
    if (st == TK_OK) {
        st = tk_spike_conv_finish(c, &out[*nout], &ready, &d);
        if (st == TK_OK && ready)
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
