/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand-encoded RISC-V instructions of every control-flow class, checked field by field.
 * Encodings come from riscv64-unknown-elf-as; the expected classes are the 2.0 jump
 * table of spec/VERSIONS.md B.1 (x1/x5 link-register rules). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "tracekit/riscv.h"

typedef struct vec {
    uint32_t raw;
    unsigned xlen;
    uint16_t op;
    uint8_t len, cf, jclass, rd, rs1, rs2;
    int64_t imm;
    uint8_t itype3, itype4; /* itype when retired (branches: taken) without sijump */
} vec;

#define OP(x) TK_RV_OP_##x
#define CF(x) TK_RV_CF_##x
#define J(x) TK_RV_J_##x

static const vec vecs[] = {
    /* jal: link x1/x5 call, x0 jump, other rd "other" */
    {0x100000ef, 64, OP(JAL), 4, CF(JAL), J(CALL), 1, 0, 0, 0x100, 0, 9},
    {0xff5ff2ef, 64, OP(JAL), 4, CF(JAL), J(CALL), 5, 0, 0, -12, 0, 9},
    {0x7f80006f, 64, OP(JAL), 4, CF(JAL), J(TAIL), 0, 0, 0, 0x7f8, 0, 11},
    {0xff9ff56f, 64, OP(JAL), 4, CF(JAL), J(OTHER), 10, 0, 0, -8, 0, 15},
    /* jalr: every rd/rs1 link combination */
    {0x000780e7, 64, OP(JALR), 4, CF(JALR), J(CALL), 1, 15, 0, 0, 6, 8},
    {0x004782e7, 64, OP(JALR), 4, CF(JALR), J(CALL), 5, 15, 0, 4, 6, 8},
    {0xffc78067, 64, OP(JALR), 4, CF(JALR), J(TAIL), 0, 15, 0, -4, 6, 10},
    {0x00008067, 64, OP(JALR), 4, CF(JALR), J(RETURN), 0, 1, 0, 0, 6, 13},
    {0x00028067, 64, OP(JALR), 4, CF(JALR), J(RETURN), 0, 5, 0, 0, 6, 13},
    {0x00008567, 64, OP(JALR), 4, CF(JALR), J(RETURN), 10, 1, 0, 0, 6, 13},
    {0x000280e7, 64, OP(JALR), 4, CF(JALR), J(SWAP), 1, 5, 0, 0, 6, 12},
    {0x000082e7, 64, OP(JALR), 4, CF(JALR), J(SWAP), 5, 1, 0, 0, 6, 12},
    {0x000080e7, 64, OP(JALR), 4, CF(JALR), J(CALL), 1, 1, 0, 0, 6, 8},
    {0x000282e7, 64, OP(JALR), 4, CF(JALR), J(CALL), 5, 5, 0, 0, 6, 8},
    {0x008605e7, 64, OP(JALR), 4, CF(JALR), J(OTHER), 11, 12, 0, 8, 6, 14},
    /* jalr x0-based: inferable */
    {0x01000067, 64, OP(JALR), 4, CF(JALR), J(TAIL), 0, 0, 0, 16, 0, 11},
    /* branches */
    {0xfab508e3, 64, OP(BEQ), 4, CF(BRANCH), J(NONE), 0, 10, 11, -0x50, 5, 5},
    {0x7a051de3, 64, OP(BNE), 4, CF(BRANCH), J(NONE), 0, 10, 0, 0xfba, 5, 5},
    {0xfa62d8e3, 64, OP(BGE), 4, CF(BRANCH), J(NONE), 0, 5, 6, -0x50, 5, 5},
    {0xfa62eae3, 64, OP(BLTU), 4, CF(BRANCH), J(NONE), 0, 5, 6, -0x4c, 5, 5},
    {0xfa62fae3, 64, OP(BGEU), 4, CF(BRANCH), J(NONE), 0, 5, 6, -0x4c, 5, 5},
    /* traps and returns from traps */
    {0x30200073, 64, OP(MRET), 4, CF(XRET), J(NONE), 0, 0, 0, 0, 3, 3},
    {0x10200073, 64, OP(SRET), 4, CF(XRET), J(NONE), 0, 0, 0, 0, 3, 3},
    {0x7b200073, 64, OP(DRET), 4, CF(XRET), J(NONE), 0, 0, 0, 0, 3, 3},
    {0x00000073, 64, OP(ECALL), 4, CF(ECALL), J(NONE), 0, 0, 0, 0, 0, 0},
    {0x00100073, 64, OP(EBREAK), 4, CF(EBREAK), J(NONE), 0, 0, 0, 0, 0, 0},
    {0x10500073, 64, OP(WFI), 4, CF(NONE), J(NONE), 0, 0, 0, 0, 0, 0},
    /* upper immediates */
    {0x12345317, 64, OP(AUIPC), 4, CF(NONE), J(NONE), 6, 0, 0, 0x12345000, 0, 0},
    {0xfffff7b7, 64, OP(LUI), 4, CF(NONE), J(NONE), 15, 0, 0, -4096, 0, 0},
    /* compressed control flow: operands of the expanded form */
    {0xb751, 64, OP(C_J), 2, CF(JAL), J(TAIL), 0, 0, 0, -0x7c, 0, 11},
    {0x8082, 64, OP(C_JR), 2, CF(JALR), J(RETURN), 0, 1, 0, 0, 6, 13},
    {0x8282, 64, OP(C_JR), 2, CF(JALR), J(RETURN), 0, 5, 0, 0, 6, 13},
    {0x8782, 64, OP(C_JR), 2, CF(JALR), J(TAIL), 0, 15, 0, 0, 6, 10},
    {0x9782, 64, OP(C_JALR), 2, CF(JALR), J(CALL), 1, 15, 0, 0, 6, 8},
    {0x9282, 64, OP(C_JALR), 2, CF(JALR), J(SWAP), 1, 5, 0, 0, 6, 12},
    {0x9082, 64, OP(C_JALR), 2, CF(JALR), J(CALL), 1, 1, 0, 0, 6, 8},
    {0xd93d, 64, OP(C_BEQZ), 2, CF(BRANCH), J(NONE), 0, 10, 0, -0x8a, 5, 5},
    {0xe8b5, 64, OP(C_BNEZ), 2, CF(BRANCH), J(NONE), 0, 9, 0, 0x74, 5, 5},
    {0x9002, 64, OP(C_EBREAK), 2, CF(EBREAK), J(NONE), 0, 0, 0, 0, 0, 0},
    {0x7785, 64, OP(C_LUI), 2, CF(NONE), J(NONE), 15, 0, 0, -0x1f000, 0, 0},
    {0x6285, 64, OP(C_LUI), 2, CF(NONE), J(NONE), 5, 0, 0, 0x1000, 0, 0},
    /* c.jal exists on RV32 only; the same bits are c.addiw on RV64 */
    {0x2201, 32, OP(C_JAL), 2, CF(JAL), J(CALL), 1, 0, 0, 0x100, 0, 9},
    {0x3ffd, 32, OP(C_JAL), 2, CF(JAL), J(CALL), 1, 0, 0, -2, 0, 9},
    {0x2201, 64, OP(C_ADDIW), 2, CF(NONE), J(NONE), 4, 4, 0, 0, 0, 0},
    /* RV32 F compressed loads/stores share encodings with RV64 c.ld/c.sd/c.ldsp/c.sdsp */
    {0x61c8, 32, OP(C_FLW), 2, CF(NONE), J(NONE), 10, 11, 0, 4, 0, 0},
    {0xe588, 32, OP(C_FSW), 2, CF(NONE), J(NONE), 0, 11, 10, 8, 0, 0},
    {0x6532, 32, OP(C_FLWSP), 2, CF(NONE), J(NONE), 10, 2, 0, 12, 0, 0},
    {0xe82e, 32, OP(C_FSWSP), 2, CF(NONE), J(NONE), 0, 2, 11, 16, 0, 0},
    {0x61c8, 64, OP(C_LD), 2, CF(NONE), J(NONE), 10, 11, 0, 128, 0, 0},
    {0xe588, 64, OP(C_SD), 2, CF(NONE), J(NONE), 0, 11, 10, 8, 0, 0},
    /* other compressed forms, values from objdump -M no-aliases */
    {0x2b88, 64, OP(C_FLD), 2, CF(NONE), J(NONE), 10, 15, 0, 16, 0, 0},  /* fa0,16(a5) */
    {0xab08, 64, OP(C_FSD), 2, CF(NONE), J(NONE), 0, 14, 10, 16, 0, 0},  /* fa0,16(a4) */
    {0x347e, 64, OP(C_FLDSP), 2, CF(NONE), J(NONE), 8, 2, 0, 504, 0, 0}, /* fs0,504(sp) */
    {0xbfa2, 64, OP(C_FSDSP), 2, CF(NONE), J(NONE), 0, 2, 8, 504, 0, 0}, /* fs0,504(sp) */
    {0x716d, 64, OP(C_ADDI16SP), 2, CF(NONE), J(NONE), 2, 2, 0, -272, 0, 0},
    {0x0884, 64, OP(C_ADDI4SPN), 2, CF(NONE), J(NONE), 9, 2, 0, 80, 0, 0},
    {0x860a, 64, OP(C_MV), 2, CF(NONE), J(NONE), 12, 0, 2, 0, 0, 0},
    {0x9232, 64, OP(C_ADD), 2, CF(NONE), J(NONE), 4, 4, 12, 0, 0, 0},
    {0x0146, 64, OP(C_SLLI), 2, CF(NONE), J(NONE), 2, 2, 0, 0x11, 0, 0},
    {0x977d, 64, OP(C_SRAI), 2, CF(NONE), J(NONE), 14, 14, 0, 0x3f, 0, 0},
    {0x8b85, 64, OP(C_ANDI), 2, CF(NONE), J(NONE), 15, 15, 0, 1, 0, 0},
    {0x9d1d, 64, OP(C_SUBW), 2, CF(NONE), J(NONE), 10, 10, 15, 0, 0, 0},
    {0x60a2, 64, OP(C_LDSP), 2, CF(NONE), J(NONE), 1, 2, 0, 8, 0, 0},
    {0xe406, 64, OP(C_SDSP), 2, CF(NONE), J(NONE), 0, 2, 1, 8, 0, 0},
    {0xcc86, 64, OP(C_SWSP), 2, CF(NONE), J(NONE), 0, 2, 1, 88, 0, 0},
    {0x0001, 64, OP(C_ADDI), 2, CF(NONE), J(NONE), 0, 0, 0, 0, 0, 0},
    /* a few non-control-flow 32-bit forms */
    {0xfef9bc27, 64, OP(FSD), 4, CF(NONE), J(NONE), 0, 19, 15, -8, 0, 0},
    {0x7a42f7c3, 64, OP(FMADD_D), 4, CF(NONE), J(NONE), 15, 5, 4, 0, 0, 0},
    {0x04c6a72f, 64, OP(AMOADD_W), 4, CF(NONE), J(NONE), 14, 13, 12, 0, 0, 0},
    {0x342023f3, 64, OP(CSRRS), 4, CF(NONE), J(NONE), 7, 0, 0, 0x342, 0, 0},
    {0x43ff5f13, 64, OP(SRAI), 4, CF(NONE), J(NONE), 30, 30, 0, 0x3f, 0, 0},
    {0x20c5a533, 64, OP(SH1ADD), 4, CF(NONE), J(NONE), 10, 11, 12, 0, 0, 0},
    {0x6b855513, 64, OP(REV8), 4, CF(NONE), J(NONE), 10, 10, 0, 0, 0, 0},
    {0x0805453b, 64, OP(ZEXT_H), 4, CF(NONE), J(NONE), 10, 10, 0, 0, 0, 0},
    {0x0835951b, 64, OP(SLLI_UW), 4, CF(NONE), J(NONE), 10, 11, 0, 3, 0, 0},
    {0xc2051553, 64, OP(FCVT_W_D), 4, CF(NONE), J(NONE), 10, 10, 0, 0, 0, 0},
    {0x00742423, 32, OP(SW), 4, CF(NONE), J(NONE), 0, 8, 7, 8, 0, 0},
};

static void test_vectors(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(vecs) / sizeof(vecs[0]); k++) {
        const vec *v = &vecs[k];
        tk_rv_insn i;
        tk_status st = tk_rv_decode(v->raw, v->xlen, &i);
        if (st != TK_OK || i.op != v->op || i.len != v->len || i.cf != v->cf ||
            i.jclass != v->jclass || i.rd != v->rd || i.rs1 != v->rs1 || i.rs2 != v->rs2 ||
            i.imm != v->imm) {
            fprintf(stderr,
                    "vector %zu (%08x rv%u): st %d op %s len %u cf %u jclass %u rd %u rs1 %u "
                    "rs2 %u imm %lld; want op %s\n",
                    k, v->raw, v->xlen, st, tk_rv_op_name(i.op), i.len, i.cf, i.jclass, i.rd, i.rs1,
                    i.rs2, (long long)i.imm, tk_rv_op_name(v->op));
            fail();
        }
        assert_int_equal(i.compressed, v->len == 2);
        assert_int_equal(i.is_auipc, v->op == OP(AUIPC));
        assert_int_equal(i.is_lui, v->op == OP(LUI) || v->op == OP(C_LUI));
        assert_int_equal(tk_rv_itype(&i, true, false, 3), v->itype3);
        assert_int_equal(tk_rv_itype(&i, true, false, 4), v->itype4);
        assert_int_equal(tk_rv_length((uint16_t)v->raw), v->len);
        if (i.cf == TK_RV_CF_BRANCH) {
            assert_int_equal(tk_rv_itype(&i, false, false, 3), 4);
            assert_int_equal(tk_rv_itype(&i, false, false, 4), 4);
        }
        /* the top half of a compressed instruction's word is ignored */
        if (v->len == 2) {
            tk_rv_insn j;
            assert_int_equal(tk_rv_decode(v->raw | 0xabcd0000u, v->xlen, &j), TK_OK);
            assert_int_equal(j.op, i.op);
            assert_int_equal(j.raw, v->raw);
        }
    }
}

static void test_bad_encodings(void **state)
{
    tk_rv_insn i;
    (void)state;
    /* 48-bit and longer encodings */
    assert_int_equal(tk_rv_decode(0xffffffff, 64, &i), TK_ERR_UNSUPPORTED);
    assert_int_equal(tk_rv_length(0x001f), 0);
    /* all-zero halfword is the defined illegal instruction */
    assert_int_equal(tk_rv_decode(0x00000000, 64, &i), TK_ERR_BAD_INSN);
    assert_int_equal(i.op, OP(C_UNIMP));
    assert_int_equal(i.len, 2);
    assert_int_equal(i.cf, CF(NONE));
    /* custom-0 opcode */
    assert_int_equal(tk_rv_decode(0x0000000b, 64, &i), TK_ERR_BAD_INSN);
    assert_int_equal(i.op, OP(UNKNOWN));
    assert_int_equal(i.len, 4);
    /* jalr with funct3 != 0 */
    assert_int_equal(tk_rv_decode(0x000790e7, 64, &i), TK_ERR_BAD_INSN);
    assert_int_equal(i.cf, CF(NONE));
    /* RV64-only instructions on RV32: ld, addiw, c.addw, slli with shamt[5] */
    assert_int_equal(tk_rv_decode(0x00853303, 32, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x0010029b, 32, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x9e3d, 32, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x02051513, 32, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x02051513, 64, &i), TK_OK);
    /* reserved compressed: c.jr x0, c.addi16sp 0, c.lwsp x0, c.addi4spn 0 */
    assert_int_equal(tk_rv_decode(0x8002, 64, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x6101, 64, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x4002, 64, &i), TK_ERR_BAD_INSN);
    assert_int_equal(tk_rv_decode(0x0004, 64, &i), TK_ERR_BAD_INSN);
    /* bad arguments */
    assert_int_equal(tk_rv_decode(0x13, 16, &i), TK_ERR_INVALID);
    assert_int_equal(tk_rv_decode(0x13, 64, NULL), TK_ERR_INVALID);
}

static void dec(uint32_t raw, unsigned xlen, tk_rv_insn *i)
{
    assert_int_equal(tk_rv_decode(raw, xlen, i), TK_OK);
}

static void test_sijump(void **state)
{
    tk_rv_insn auipc_t1, lui_a5, clui_t0, clui_a5, jalr_ra_t1, jalr_ra_t0, cjr_a5, cjalr_t0, addi,
        jal;
    (void)state;
    dec(0x12345317, 64, &auipc_t1);   /* auipc t1,0x12345 */
    dec(0xfffff7b7, 64, &lui_a5);     /* lui a5,0xfffff */
    dec(0x6285, 64, &clui_t0);        /* c.lui t0,0x1 */
    dec(0x7785, 64, &clui_a5);        /* c.lui a5,0xfffe1 */
    dec(0x010300e7, 64, &jalr_ra_t1); /* jalr ra,16(t1) */
    dec(0x000280e7, 64, &jalr_ra_t0); /* jalr ra,0(t0) */
    dec(0x8782, 64, &cjr_a5);         /* c.jr a5 */
    dec(0x9282, 64, &cjalr_t0);       /* c.jalr t0 */
    dec(0x00128293, 64, &addi);       /* addi t0,t0,1 */
    dec(0x100000ef, 64, &jal);        /* jal ra,+0x100 */

    assert_true(tk_rv_is_sijump_pair(&auipc_t1, &jalr_ra_t1));
    assert_int_equal(tk_rv_sijump_target(&auipc_t1, 0x80000000, &jalr_ra_t1, 64),
                     0x80000000 + 0x12345000 + 16);
    assert_true(tk_rv_is_sijump_pair(&lui_a5, &cjr_a5));
    assert_int_equal(tk_rv_sijump_target(&lui_a5, 0x80000000, &cjr_a5, 64), 0xfffffffffffff000);
    assert_int_equal(tk_rv_sijump_target(&lui_a5, 0x80000000, &cjr_a5, 32), 0xfffff000);
    assert_true(tk_rv_is_sijump_pair(&clui_t0, &cjalr_t0));
    assert_int_equal(tk_rv_sijump_target(&clui_t0, 0x1234, &cjalr_t0, 64), 0x1000);
    assert_true(tk_rv_is_sijump_pair(&clui_t0, &jalr_ra_t0));
    assert_true(tk_rv_is_sijump_pair(&clui_a5, &cjr_a5));
    assert_int_equal(tk_rv_sijump_target(&clui_a5, 0, &cjr_a5, 64), (uint64_t)-0x1f000);

    /* not pairs: other register, not an upper-immediate, not a jalr */
    assert_false(tk_rv_is_sijump_pair(&auipc_t1, &jalr_ra_t0));
    assert_false(tk_rv_is_sijump_pair(&clui_t0, &cjr_a5));
    assert_false(tk_rv_is_sijump_pair(&addi, &jalr_ra_t0));
    assert_false(tk_rv_is_sijump_pair(&auipc_t1, &jal));
    assert_false(tk_rv_is_sijump_pair(NULL, &jalr_ra_t0));

    /* with sijump the uninferable codes become their inferable ones */
    assert_int_equal(tk_rv_itype(&jalr_ra_t1, true, true, 4), 9);
    assert_int_equal(tk_rv_itype(&jalr_ra_t1, true, true, 3), 0);
    assert_int_equal(tk_rv_itype(&cjr_a5, true, true, 4), 11);
    assert_int_equal(tk_rv_itype(&cjalr_t0, true, true, 4), 12); /* swap has one code */
}

static void test_op_names(void **state)
{
    (void)state;
    assert_string_equal(tk_rv_op_name(OP(C_JALR)), "c.jalr");
    assert_string_equal(tk_rv_op_name(OP(FCVT_LU_D)), "fcvt.lu.d");
    assert_string_equal(tk_rv_op_name(TK_RV_OP_COUNT + 5), "unknown");
    for (unsigned op = 0; op < TK_RV_OP_COUNT; op++)
        assert_non_null(tk_rv_op_name((uint16_t)op));
}

static void test_disasm_buffer(void **state)
{
    tk_rv_insn i;
    char buf[64];
    int n;
    (void)state;

    dec(0x100000ef, 64, &i); /* jal ra,+0x100 */
    n = tk_rv_disasm(&i, 0x80000000, buf, sizeof(buf));
    assert_string_equal(buf, "jal\tra,80000100");
    assert_int_equal(n, (int)strlen(buf));
    /* truncation: snprintf-like count, always terminated */
    assert_int_equal(tk_rv_disasm(&i, 0x80000000, buf, 6), n);
    assert_string_equal(buf, "jal\tr");
    assert_int_equal(tk_rv_disasm(&i, 0x80000000, NULL, 0), n);
    /* RV32 targets wrap at 32 bits */
    dec(0x3ffd, 32, &i); /* c.jal -2 */
    tk_rv_disasm(&i, 0, buf, sizeof(buf));
    assert_string_equal(buf, "c.jal\tfffffffe");
    dec(0x3ffd, 64, &i); /* c.addiw t6,-1 on RV64 */
    tk_rv_disasm(&i, 0, buf, sizeof(buf));
    assert_string_equal(buf, "c.addiw\tt6,-1");
    /* undecodable */
    tk_rv_decode(0x0000000b, 64, &i);
    tk_rv_disasm(&i, 0, buf, sizeof(buf));
    assert_string_equal(buf, ".4byte\t0xb");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),       cmocka_unit_test(test_bad_encodings),
        cmocka_unit_test(test_sijump),        cmocka_unit_test(test_op_names),
        cmocka_unit_test(test_disasm_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
